"""``docindex reprocess``: send documents already in the index through the ingest queue again.

After an upgrade teaches docindex a new format, the documents indexed as
``unsupported`` (or any filtered set) are re-extracted by announcing each
as a change in docindex's own message shape, so they get every guarantee a
real S3 event gets: idempotency, ordering, partial batch failures, OCR
hand-off, quarantine.

Why a re-announced document is applied and not taken for a duplicate or a
stale change: the message carries no sequencer, version or etag, and the
time it is sent (``event_time``) as an observation: "re-read whatever this
object is now". Its idempotency key (bucket, key, action, time) is new, so
it is not a duplicate of the event that first indexed the object. In the
ledger it is an observation newer than every change applied so far, so it is
claimed with the next generation; the indexer then reads the object's current
version (no version id), so it can never write older content than S3 holds.
A real upload after the send has a later time and wins; a real event from
before it that arrives late is judged older than the observation, and the
re-read already covered it. A deleted object is removed (the re-read finds
nothing).

``--dates`` sends the same change with the reason ``dates``: the indexer reads only the object's
metadata (one ``HeadObject``) and, when its ETag and size are those of the indexed content, writes
the document again with the file server's date (docindex.core.filedates) without reading the
body; a changed object is read in full as above. Without another filter it selects the documents
indexed before dates were read from metadata (no ``last_modified_source``).

The index is paged with ``search_after`` on (bucket, key); ``--after`` resumes
after the last key a previous run reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any, TypeVar

from docindex.core.changes import Action, ObjectChange, normalize_time
from docindex.ops.enqueue import BATCH_SIZE, ChangeSender, EnqueueError, RateLimiter

REASON = "reprocess"
# docindex reprocess --dates: the date from the object's metadata, its content only if it changed.
DATES_REASON = "dates"
PAGE_SIZE = 500

T = TypeVar("T")


@dataclass(frozen=True)
class ReprocessFilter:
    """Which indexed documents to send again (every given condition must hold)."""

    extraction_error: str | None = None
    extension: str | None = None
    prefix: str | None = None
    before: datetime | None = None  # indexed before this moment
    bucket: str | None = None
    # OCR'd documents with a page read at a mean word confidence below this.
    ocr_confidence_below: int | None = None
    # OCR'd documents read by an older OCR pipeline (ocr_version below OCR_VERSION, or none recorded).
    ocr_outdated: bool = False
    # Documents whose OCR ended so (``failed``: what `docindex failures` lists as ocr_failed).
    ocr_status: str | None = None
    # Documents read in part (content_truncated: a limit cut their text).
    truncated: bool = False
    # Documents whose date was never read from the object's metadata (indexed before issue 49).
    undated: bool = False

    def query(self) -> dict[str, Any]:
        """The OpenSearch query of this filter."""
        from docindex.extract.version import OCR_VERSION

        clauses: list[dict[str, Any]] = []
        if self.ocr_confidence_below is not None:
            clauses.append({"range": {"ocr_confidence": {"lt": self.ocr_confidence_below}}})
        if self.ocr_outdated:
            clauses.append({"term": {"ocr_status": "done"}})
            clauses.append(
                {
                    "bool": {
                        "should": [
                            {"bool": {"must_not": {"exists": {"field": "ocr_version"}}}},
                            {"range": {"ocr_version": {"lt": OCR_VERSION}}},
                        ],
                        "minimum_should_match": 1,
                    }
                }
            )
        if self.extraction_error:
            clauses.append({"term": {"extraction_error": self.extraction_error}})
        if self.ocr_status:
            clauses.append({"term": {"ocr_status": self.ocr_status}})
        if self.truncated:
            clauses.append({"term": {"content_truncated": True}})
        if self.undated:
            clauses.append({"bool": {"must_not": {"exists": {"field": "last_modified_source"}}}})
        if self.extension:
            clauses.append({"term": {"extension": self.extension.lower().lstrip(".")}})
        if self.prefix:
            clauses.append({"prefix": {"key": self.prefix}})
        if self.bucket:
            clauses.append({"term": {"bucket": self.bucket}})
        if self.before:
            clauses.append({"range": {"indexed_at": {"lt": normalize_time(self.before)}}})
        return {"bool": {"filter": clauses}} if clauses else {"match_all": {}}


def by_key(
    opensearch: Any,
    index: str,
    query: dict[str, Any],
    *,
    source: list[str],
    after: tuple[str, str] | None = None,
    version: bool = False,
) -> Iterator[dict[str, Any]]:
    """Every hit of ``query`` in (bucket, key) order after ``after``, a page at a time (``search_after``):
    millions of documents in constant memory, resumable at a key."""
    search_after = list(after) if after else None
    while True:
        body: dict[str, Any] = {
            "query": query,
            "sort": [{"bucket": "asc"}, {"key": "asc"}],
            "_source": source,
            "size": PAGE_SIZE,
        }
        if version:
            body["version"] = True
        if search_after:
            body["search_after"] = search_after
        hits = opensearch.search(index=index, body=body)["hits"]["hits"]
        yield from hits
        if len(hits) < PAGE_SIZE:
            return
        search_after = list(hits[-1]["sort"])


def matching(
    opensearch: Any, index: str, selection: ReprocessFilter, *, after: tuple[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """(bucket, key) of every matching document, in (bucket, key) order, after ``after``."""
    for hit in by_key(opensearch, index, selection.query(), source=["bucket", "key"], after=after):
        source = hit.get("_source") or {}
        yield str(source["bucket"]), str(source["key"])


def count_matching(opensearch: Any, index: str, selection: ReprocessFilter) -> int:
    """How many documents match (for the progress bar)."""
    return int(opensearch.count(index=index, body={"query": selection.query()})["count"])


def reprocess_change(bucket: str, key: str, *, now: datetime | None = None) -> ObjectChange:
    """The change that makes the indexer re-read ``key`` now (see the module docstring for why it is safe)."""
    return ObjectChange(bucket=bucket, key=key, action=Action.CREATED, event_time=normalize_time(now))


@dataclass
class ReprocessResult:
    matched: int = 0
    sent: int = 0
    dry_run: bool = False
    last: tuple[str, str] | None = None
    seconds: float = 0.0
    error: str | None = None
    samples: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "matched": self.matched,
            "sent": self.sent,
            "dry_run": self.dry_run,
            "last_bucket": self.last[0] if self.last else None,
            "last_key": self.last[1] if self.last else None,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "samples": self.samples,
        }


def send_in_batches(
    items: Iterable[T],
    result: ReprocessResult,
    *,
    send: Callable[[list[T]], object] | None,
    rate: RateLimiter,
    where: Callable[[T], tuple[str, str]],
    sample: Callable[[T], dict[str, Any]],
    limit: int | None = None,
    on_progress: Callable[[ReprocessResult], None] | None = None,
) -> None:
    """Send ``items`` ten at a time at ``rate`` (``send`` None: a dry run that only counts), into ``result``.

    ``result.last`` is the (bucket, key) of the last batch sent, where a run stopped by an error
    resumes (``--after``); whatever ``send`` raises ends the run, with ``result`` as far as it got.
    """
    batch: list[T] = []

    def flush() -> None:
        if not batch:
            return
        rate.acquire(len(batch))
        if send is not None:
            send(batch)
            result.sent += len(batch)
        result.last = where(batch[-1])
        batch.clear()
        if on_progress:
            on_progress(result)

    for item in items if limit is None else islice(items, max(0, limit - result.matched)):
        result.matched += 1
        if len(result.samples) < 3:
            result.samples.append(sample(item))
        batch.append(item)
        if len(batch) == BATCH_SIZE:
            flush()
    flush()


def reprocess(
    documents: Iterator[tuple[str, str]],
    *,
    sender: ChangeSender | None,
    rate: RateLimiter,
    limit: int | None = None,
    on_progress: Callable[[ReprocessResult], None] | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    reason: str = REASON,
) -> ReprocessResult:
    """Send one change per document (``sender`` None: a dry run that only counts); ``reason``
    ``DATES_REASON``: their dates only, where their content is unchanged."""
    result = ReprocessResult(dry_run=sender is None)
    started = time.monotonic()
    changes = (reprocess_change(bucket, key, now=clock()) for bucket, key in documents)
    try:
        send_in_batches(
            changes,
            result,
            send=None if sender is None else lambda batch: sender.send(batch, reason=reason),
            rate=rate,
            where=lambda change: (change.bucket, change.key),
            sample=lambda change: {**change.to_message(), "reason": reason},
            limit=limit,
            on_progress=on_progress,
        )
    except EnqueueError as exc:
        result.error = str(exc)
        result.sent += exc.sent
    result.seconds = time.monotonic() - started
    return result
