"""Backfill: announce every existing object of a bucket to the indexer, once, resumably.

The initial load of an existing bucket (millions of objects) lists it with
``ListObjectsV2`` (or reads an S3 Inventory report) and sends one docindex
change message per object to the ingest queue, in ``SendMessageBatch`` batches
of 10, at a bounded rate and holding back while the queue is already deep.

Ordering. A backfill change carries as ``event_time`` the moment the object
was *observed* (just before the listing page that returned it was requested;
for an inventory, the report's creation time), not its LastModified. The
indexer's ledger compares changes without an S3 sequencer by that time, so a
real event that happens after the observation always wins, and a backfill
processed late never overrides a newer change or resurrects a deleted object.
S3 dates a listing page in whole seconds (rounded down), so a listing waits one
second before its first page: every change applied before the run began is then
older than every page (``BucketListing``), and a rebuild after a lost index
misses none.

Resuming. A checkpoint file records, after each batch, the position up to
which every object has been sent (the *watermark*: a key for a listing, a
file/row for an inventory), the batches completed beyond it (batches are sent
concurrently and may finish out of order) and the batches in flight. An
interrupted run (exception, Ctrl-C) waits for its in-flight batches and
records them; the next run resumes after the watermark and skips the completed
batches, so no object is enqueued twice in one run. Only after a hard kill can
a batch be in doubt: it is sent again with the very same message bodies (same
event time), which the indexer's idempotency recognises as duplicates.

Modules: ``sources`` (what to announce: the bucket's listing or an S3 Inventory
report), ``checkpoint`` (where a run stands, saved after every batch), ``run``
(the ``Backfill`` runner and the object-count estimate).
"""
