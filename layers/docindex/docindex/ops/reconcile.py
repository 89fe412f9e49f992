"""Reconcile: prove the index holds exactly the bucket's objects, and repair it.

Two streams, both sorted by key, are merge-joined in constant memory:

- the bucket's listing (``ListObjectsV2``: UTF-8 binary key order), and
- the index documents of that bucket (``term bucket``), sorted by the ``key``
  keyword field and paged with ``search_after`` (keyword sort order is the
  order of the terms' UTF-8 bytes).

Both orders are the order of Unicode code points, which is how Python compares
``str``; each stream is checked to be strictly increasing as it is read, so a
backend that sorted differently would stop the run instead of producing wrong
counts.

An object is *missing* (no document), *stale* (the document's ``etag`` is not
the object's) or in sync; a document without an object is *orphaned*. With the
ledger (``--against-ledger``), an object whose document carries the object's
ETag but a version (ledger generation) older than the one the ledger holds is
*behind*: the index lost a write the pipeline made — what an index restored
from a snapshot looks like (an OCR result, an unchanged re-upload, a change
undone and redone). The ETag alone cannot see those.

``fix`` repairs through the ingest queue, never behind the indexer's back:
missing and stale objects are announced as ``created`` changes dated by S3's
clock when it listed them (a created change reads the object when applied, so
whatever happened since, the document ends with what S3 holds); orphans as
``removed`` changes, but only once a ``HeadObject`` confirms the object is gone,
dated by S3's clock at that confirmation minus ``REMOVAL_MARGIN`` — never this
machine's clock. The indexer's ledger then decides as for any change: a real
event newer than that observation wins (an object uploaded just after the
listing passed its key is not deleted, even when EventBridge announces it in
whole seconds; a file changed again is not overwritten by an older view), and
the document version (the ledger generation) keeps a concurrent write from
being lost. Deleting orphans directly in OpenSearch would bypass both.

Why the margin is enough: S3 reads are strongly consistent, so an object
absent at the HEAD was created, if ever, after the HEAD reached S3. The HEAD
is accepted only when its round trip took under ``HEAD_CONFIRM_SECONDS``
(0.5 s), so it reached S3 less than half a second before S3 answered, whose
``Date`` is that answer's second; any creation after it carries an S3 time (in
milliseconds, or truncated to the second by EventBridge) of at least
``Date - 1 s``, a second later than the removal's ``Date - 2 s`` (the slack is
for clock differences inside S3). A slower confirmation is not trusted: the
orphan is left for a later run. The price: an orphan whose object was created
less than 2 s before the confirmation loses to its own create and waits for the
next run.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import IO, Any, Protocol, TypeVar

from botocore.exceptions import ClientError

from docindex.core.aws import http_status
from docindex.core.changes import Action, ObjectChange, doc_id, is_excluded, normalize_time
from docindex.core.exceptions import ReconcileError
from docindex.ingest.ledger import Ledger
from docindex.ops.backfill.sources import ListingPage, list_pages, s3_clock
from docindex.ops.enqueue import BATCH_SIZE, BacklogGuard, ChangeSender, RateLimiter

T = TypeVar("T")


class Kind(StrEnum):
    MISSING = "missing"
    STALE = "stale"
    ORPHANED = "orphaned"
    BEHIND = "behind"  # the document's version is older than the ledger's generation (--against-ledger)


@dataclass(frozen=True)
class IndexedDoc:
    key: str
    etag: str | None
    version: int | None = None  # the document's external version: the ledger generation it was written at


@dataclass(frozen=True)
class Matched:
    """An object whose document carries its ETag (in sync, unless the ledger says the index is behind)."""

    key: str
    observed_at: str
    etag: str | None
    size: int | None
    version: int | None


@dataclass(frozen=True)
class Difference:
    """One object or document that is not in step."""

    kind: Kind
    key: str
    observed_at: str
    s3_etag: str | None = None
    index_etag: str | None = None
    size: int | None = None
    index_version: int | None = None
    ledger_generation: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind.value, "key": self.key}
        for name in ("s3_etag", "index_etag", "size", "index_version", "ledger_generation"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        return data


def index_pages(
    client: Any, index: str, bucket: str, *, prefix: str = "", page_size: int = 1000
) -> Iterator[list[IndexedDoc]]:
    """The bucket's documents in key order, one ``search_after`` page at a time.

    Keys are unique per bucket (the ``_id`` is derived from bucket and key), so
    the key alone is a complete sort and ``search_after`` cursor: no point in
    time is needed, and documents written meanwhile simply appear or not.
    """
    filters: list[dict[str, Any]] = [{"term": {"bucket": bucket}}]
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    body: dict[str, Any] = {
        "size": page_size,
        "query": {"bool": {"filter": filters}},
        "sort": [{"key": {"order": "asc"}}],
        "_source": ["key", "etag"],
        "version": True,
        "track_total_hits": False,
    }
    while True:
        response = client.search(index=index, body=body)
        hits = response["hits"]["hits"]
        if not hits:
            return
        yield [
            IndexedDoc(h["_source"]["key"], h["_source"].get("etag"), int(h["_version"]) if "_version" in h else None)
            for h in hits
        ]
        if len(hits) < page_size:
            return
        body["search_after"] = hits[-1]["sort"]


def count_documents(client: Any, index: str, bucket: str, *, prefix: str = "") -> int:
    filters: list[dict[str, Any]] = [{"term": {"bucket": bucket}}]
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    return int(client.count(index=index, body={"query": {"bool": {"filter": filters}}})["count"])


_DONE = object()


def prefetched(items: Iterable[T], *, buffer: int = 2) -> Generator[T, None, None]:
    """Iterate ``items`` in a background thread, ``buffer`` items ahead.

    Listing S3 and paging the index are both network-bound; reading each a
    page ahead overlaps their round trips with the merge.
    """
    slots: queue.Queue[Any] = queue.Queue(maxsize=buffer)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
            except queue.Full:
                continue
            return True
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(_DONE)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            put(exc)

    thread = threading.Thread(target=produce, name="prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = slots.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


def _ordered(pairs: Iterator[T], key: Callable[[T], str], what: str) -> Iterator[T]:
    previous: str | None = None
    for item in pairs:
        current = key(item)
        if previous is not None and not previous < current:
            raise ReconcileError(
                f"{what} is not in strictly increasing key order ({previous!r} then {current!r}); "
                "the merge would be wrong, so reconcile stops"
            )
        previous = current
        yield item


class _Tally(Protocol):
    objects: int
    documents: int


@contextmanager
def bucket_and_index(
    s3: Any, opensearch: Any, index: str, bucket: str, *, prefix: str, page_size: int, tally: _Tally
) -> Iterator[tuple[Iterator[ListingPage], Iterator[IndexedDoc]]]:
    """The bucket's listing pages and the index's documents, both read ahead, for :func:`merge`
    (the readers stop when the block ends); ``tally`` counts objects and documents as they pass."""
    pages = prefetched(list_pages(s3, bucket, prefix=prefix, page_size=page_size))
    doc_pages = prefetched(index_pages(opensearch, index, bucket, prefix=prefix, page_size=page_size))

    def docs() -> Iterator[IndexedDoc]:
        for page in doc_pages:
            tally.documents += len(page)
            yield from page

    def counted_pages() -> Iterator[ListingPage]:
        for page in pages:
            tally.objects += len(page.objects)
            yield page

    try:
        yield counted_pages(), docs()
    finally:
        pages.close()
        doc_pages.close()


def merge(
    pages: Iterable[ListingPage], docs: Iterable[IndexedDoc], *, matched: bool = False
) -> Iterator[Difference | Matched | None]:
    """Merge-join the listing and the documents; yields a ``Difference``, or per object in sync ``None``
    (a ``Matched`` with ``matched``, for a check of its version)."""
    end_time = ""

    def objects() -> Iterator[tuple[Any, str]]:
        nonlocal end_time
        for page in pages:
            end_time = page.observed_at
            for obj in page.objects:
                yield obj, page.observed_at

    s3 = _ordered(objects(), lambda pair: pair[0].key, "the bucket listing")
    index = _ordered(iter(docs), lambda d: d.key, "the index (sorted by key)")
    doc = next(index, None)
    for obj, observed_at in s3:
        while doc is not None and doc.key < obj.key:
            yield Difference(Kind.ORPHANED, doc.key, observed_at, index_etag=doc.etag, index_version=doc.version)
            doc = next(index, None)
        if doc is not None and doc.key == obj.key:
            if doc.etag and doc.etag == obj.etag:
                yield Matched(obj.key, observed_at, obj.etag, obj.size, doc.version) if matched else None
            else:
                yield Difference(
                    Kind.STALE,
                    obj.key,
                    observed_at,
                    s3_etag=obj.etag,
                    index_etag=doc.etag,
                    size=obj.size,
                    index_version=doc.version,
                )
            doc = next(index, None)
        else:
            yield Difference(Kind.MISSING, obj.key, observed_at, s3_etag=obj.etag, size=obj.size)
    # Past the last object: the final page (requested at end_time) saw none of these keys.
    while doc is not None:
        yield Difference(Kind.ORPHANED, doc.key, end_time, index_etag=doc.etag, index_version=doc.version)
        doc = next(index, None)


@dataclass
class ReconcileReport:
    bucket: str
    prefix: str
    index: str
    objects: int = 0
    documents: int = 0
    in_sync: int = 0
    missing: int = 0
    stale: int = 0
    orphaned: int = 0
    behind: int = 0
    against_ledger: bool = False
    fixed: bool = False
    enqueued_created: int = 0
    enqueued_removed: int = 0
    # Orphans --fix did not remove: the object exists again (HEAD found it), or S3 could not
    # confirm its absence quickly enough (no Date header, a HEAD slower than HEAD_CONFIRM_SECONDS).
    orphans_reappeared: int = 0
    orphans_unconfirmed: int = 0
    # Keys matching EXCLUDE_KEYS (lock files, thumbnails, folder markers): never indexed, so neither
    # missing nor counted as objects; a document of one (indexed before the rule) is not orphaned.
    excluded: int = 0
    seconds: float = 0.0
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    queue_url: str | None = None

    @property
    def coverage(self) -> float:
        """Objects whose document is current, in percent of the bucket's objects."""
        return 100.0 if self.objects == 0 else 100.0 * self.in_sync / self.objects

    @property
    def differences(self) -> int:
        return self.missing + self.stale + self.orphaned + self.behind

    @property
    def in_step(self) -> bool:
        return self.differences == 0

    @property
    def rate(self) -> float:
        return (self.objects + self.documents) / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "bucket": self.bucket,
            "prefix": self.prefix,
            "index": self.index,
            "objects": self.objects,
            "documents": self.documents,
            "in_sync": self.in_sync,
            "missing": self.missing,
            "stale": self.stale,
            "orphaned": self.orphaned,
            "behind": self.behind if self.against_ledger else None,
            "coverage_percent": round(self.coverage, 4),
            "in_step": self.in_step,
            "fixed": self.fixed,
            "enqueued_created": self.enqueued_created,
            "enqueued_removed": self.enqueued_removed,
            "orphans_reappeared": self.orphans_reappeared,
            "orphans_unconfirmed": self.orphans_unconfirmed,
            "excluded": self.excluded,
            "queue_url": self.queue_url,
            "seconds": round(self.seconds, 3),
            "keys_per_second": round(self.rate, 1),
            "samples": self.samples,
        }


ProgressCallback = Callable[[int, int, int], None]  # objects, documents, differences

# Matched objects checked against the ledger per request (BatchGetItem reads 100 items).
LEDGER_BATCH = 100

# An orphan's removal is dated this long before S3's answer to the HEAD that confirmed it gone,
# and only a HEAD answered within HEAD_CONFIRM_SECONDS is trusted (module docstring).
REMOVAL_MARGIN = timedelta(seconds=2)
HEAD_CONFIRM_SECONDS = 0.5


class Removal(StrEnum):
    """What a ``HeadObject`` said about an object the listing did not show."""

    GONE = "gone"
    REAPPEARED = "reappeared"  # it exists (again): keep its document
    UNCONFIRMED = "unconfirmed"  # no Date, or a HEAD too slow to date a removal safely


def confirm_gone(s3: Any, bucket: str, key: str) -> tuple[str | None, Removal]:
    """Whether ``key`` is gone, and the time its removal may be dated (module docstring: S3's clock)."""
    started = time.monotonic()
    try:
        s3.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if http_status(exc) != 404:
            raise
        answered = s3_clock(exc.response)
    else:
        return None, Removal.REAPPEARED
    if answered is None or time.monotonic() - started > HEAD_CONFIRM_SECONDS:
        return None, Removal.UNCONFIRMED
    return normalize_time(answered - REMOVAL_MARGIN), Removal.GONE


class Reconciler:
    """Runs the merge; with a sender, enqueues the repairs as it goes."""

    def __init__(
        self,
        *,
        s3: Any,
        opensearch: Any,
        bucket: str,
        index: str,
        prefix: str = "",
        sender: ChangeSender | None = None,
        rate: RateLimiter | None = None,
        backlog: BacklogGuard | None = None,
        page_size: int = 1000,
        sample_size: int = 10,
        report_file: IO[str] | None = None,
        on_progress: ProgressCallback | None = None,
        exclude_globs: tuple[str, ...] | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.exclude_globs = exclude_globs
        self.ledger = ledger
        self._matched: list[Matched] = []
        self.s3 = s3
        self.opensearch = opensearch
        self.bucket = bucket
        self.index = index
        self.prefix = prefix
        self.sender = sender
        self.rate = rate or RateLimiter(None)
        self.backlog = backlog
        self.page_size = page_size
        self.sample_size = sample_size
        self.report_file = report_file
        self.on_progress = on_progress
        self._fixes: list[ObjectChange] = []

    def run(self) -> ReconcileReport:
        started = time.monotonic()
        report = ReconcileReport(
            bucket=self.bucket,
            prefix=self.prefix,
            index=self.index,
            fixed=self.sender is not None,
            queue_url=self.sender.queue_url if self.sender else None,
            against_ledger=self.ledger is not None,
        )
        walk = bucket_and_index(
            self.s3,
            self.opensearch,
            self.index,
            self.bucket,
            prefix=self.prefix,
            page_size=self.page_size,
            tally=report,
        )
        try:
            with walk as (counted_pages, docs):
                merged = merge(counted_pages, docs, matched=self.ledger is not None)
                for n, difference in enumerate(merged, start=1):
                    if difference is None:
                        report.in_sync += 1
                    elif isinstance(difference, Matched):
                        self._matched.append(difference)
                        if len(self._matched) == LEDGER_BATCH:
                            self._check_versions(report)
                    else:
                        self._record(report, difference)
                    if self.on_progress and n % 500 == 0:
                        self.on_progress(report.objects, report.documents, report.differences)
                self._check_versions(report)
                self._flush(report)
        finally:
            report.seconds = time.monotonic() - started
        if self.on_progress:
            self.on_progress(report.objects, report.documents, report.differences)
        return report

    def _record(self, report: ReconcileReport, difference: Difference) -> None:
        kind = difference.kind
        if is_excluded(difference.key, globs=self.exclude_globs):
            report.excluded += 1
            if kind is Kind.MISSING:
                report.objects -= 1  # not an object the index is to hold
            return
        setattr(report, kind.value, getattr(report, kind.value) + 1)
        samples = report.samples.setdefault(kind.value, [])
        if len(samples) < self.sample_size:
            samples.append(difference.to_dict())
        if self.report_file is not None:
            self.report_file.write(json.dumps(difference.to_dict(), ensure_ascii=False) + "\n")
        if self.sender is None:
            return
        event_time = difference.observed_at
        if kind is Kind.ORPHANED:
            gone_at = self._confirm_gone(report, difference.key)
            if gone_at is None:
                return
            event_time = gone_at
        self._fixes.append(
            ObjectChange(
                bucket=self.bucket,
                key=difference.key,
                action=Action.REMOVED if kind is Kind.ORPHANED else Action.CREATED,
                event_time=event_time,
                etag=difference.s3_etag,
                size=difference.size,
            )
        )
        if len(self._fixes) == BATCH_SIZE:
            self._flush(report)

    def _check_versions(self, report: ReconcileReport) -> None:
        """Objects in sync by ETag whose document is older than the ledger's generation are behind."""
        if not self._matched or self.ledger is None:
            return
        batch, self._matched = self._matched, []
        entries = self.ledger.entries(doc_id(self.bucket, m.key) for m in batch)
        for m in batch:
            entry = entries.get(doc_id(self.bucket, m.key))
            if entry is None or entry.state != "present" or m.version is None or entry.generation <= m.version:
                report.in_sync += 1
                continue
            self._record(
                report,
                Difference(
                    Kind.BEHIND,
                    m.key,
                    m.observed_at,
                    s3_etag=m.etag,
                    index_etag=m.etag,
                    size=m.size,
                    index_version=m.version,
                    ledger_generation=entry.generation,
                ),
            )

    def _confirm_gone(self, report: ReconcileReport, key: str) -> str | None:
        """When the removal of an orphan may be dated (see the module docstring), or None: keep it."""
        gone_at, outcome = confirm_gone(self.s3, self.bucket, key)
        if outcome is Removal.REAPPEARED:
            report.orphans_reappeared += 1
        elif outcome is Removal.UNCONFIRMED:
            report.orphans_unconfirmed += 1
        return gone_at

    def _flush(self, report: ReconcileReport) -> None:
        if not self._fixes or self.sender is None:
            return
        batch, self._fixes = self._fixes, []
        self.rate.acquire(len(batch))
        if self.backlog:
            self.backlog.wait()
        self.sender.send(batch, reason="reconcile")
        for change in batch:
            if change.action is Action.REMOVED:
                report.enqueued_removed += 1
            else:
                report.enqueued_created += 1
