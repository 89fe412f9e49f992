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

Resuming. A checkpoint file records, after each batch, the position up to
which every object has been sent (the *watermark*: a key for a listing, a
file/row for an inventory), the batches completed beyond it (batches are sent
concurrently and may finish out of order) and the batches in flight. An
interrupted run (exception, Ctrl-C) waits for its in-flight batches and
records them; the next run resumes after the watermark and skips the completed
batches, so no object is enqueued twice in one run. Only after a hard kill can
a batch be in doubt: it is sent again with the very same message bodies (same
event time), which the indexer's idempotency recognises as duplicates.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import io
import json
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote_plus, urlparse

from docindex.core.changes import Action, ObjectChange, normalize_time
from docindex.ops.enqueue import BATCH_SIZE, BacklogGuard, ChangeSender, EnqueueError, RateLimiter

CHECKPOINT_VERSION = 1
# A listing position is a key; an inventory position is (file index, row index).
Position = str | tuple[int, int]


class BackfillError(RuntimeError):
    """The backfill cannot start or continue (bad inventory, mismatched checkpoint...)."""


@dataclass(frozen=True)
class ListedObject:
    """One object as a listing (or an inventory report) saw it."""

    key: str
    etag: str | None
    size: int | None
    position: Position
    observed_at: str


def now_iso() -> str:
    return normalize_time(datetime.now(UTC))


def _etag(value: str | None) -> str | None:
    return (value or "").strip().strip('"') or None


@dataclass(frozen=True)
class ListingPage:
    """One ``ListObjectsV2`` page and the time just before it was requested."""

    observed_at: str
    objects: tuple[ListedObject, ...]


def list_pages(
    s3: Any,
    bucket: str,
    *,
    prefix: str = "",
    start_after: str | None = None,
    page_size: int = 1000,
    clock: Callable[[], str] = now_iso,
) -> Iterator[ListingPage]:
    """Stream a bucket's listing page by page, in S3's key order (UTF-8 binary).

    ``observed_at`` is taken *before* each request: an object written before
    that moment is in the page (S3 lists strongly consistently), so the time
    is a safe lower bound for "the object was there" and for "it was not".
    """
    params: dict[str, Any] = {"Bucket": bucket, "MaxKeys": page_size}
    if prefix:
        params["Prefix"] = prefix
    if start_after:
        params["StartAfter"] = start_after
    while True:
        observed_at = clock()
        response = s3.list_objects_v2(**params)
        objects = tuple(
            ListedObject(
                key=item["Key"],
                etag=_etag(item.get("ETag")),
                size=item.get("Size"),
                position=item["Key"],
                observed_at=observed_at,
            )
            for item in response.get("Contents", [])
        )
        yield ListingPage(observed_at, objects)
        token = response.get("NextContinuationToken")
        if not response.get("IsTruncated") or not token:
            return
        params["ContinuationToken"] = token
        params.pop("StartAfter", None)


class ObjectSource(Protocol):
    """Where the objects to backfill come from."""

    @property
    def bucket(self) -> str: ...

    def describe(self) -> str: ...

    def identity(self) -> dict[str, Any]: ...

    def objects(self, after: Position | None) -> Iterator[ListedObject]: ...


@dataclass
class BucketListing:
    """The bucket's own listing (``ListObjectsV2``), resumable by key."""

    s3: Any
    source_bucket: str
    prefix: str = ""
    page_size: int = 1000

    @property
    def bucket(self) -> str:
        return self.source_bucket

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def identity(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "prefix": self.prefix, "source": "list"}

    def objects(self, after: Position | None) -> Iterator[ListedObject]:
        if after is not None and not isinstance(after, str):
            raise BackfillError("checkpoint position is not a key; was it written for an inventory?")
        for page in list_pages(self.s3, self.bucket, prefix=self.prefix, start_after=after, page_size=self.page_size):
            yield from page.objects


@dataclass(frozen=True)
class InventoryManifest:
    """An S3 Inventory ``manifest.json`` (CSV format)."""

    source_bucket: str
    destination_bucket: str
    created_at: str
    columns: tuple[str, ...]
    files: tuple[str, ...]
    location: str

    @classmethod
    def parse(cls, text: str, location: str) -> InventoryManifest:
        try:
            data = json.loads(text)
            destination = str(data["destinationBucket"])
            created_ms = int(data["creationTimestamp"])
            columns = tuple(c.strip() for c in str(data["fileSchema"]).split(","))
            files = tuple(str(f["key"]) for f in data["files"])
            source_bucket = str(data["sourceBucket"])
            file_format = str(data.get("fileFormat", ""))
        except (KeyError, TypeError, ValueError) as exc:
            raise BackfillError(f"inventory {location}: not an S3 Inventory manifest ({exc!r})") from None
        if file_format.upper() != "CSV":
            raise BackfillError(
                f"inventory {location}: fileFormat {file_format!r} is not supported (CSV only); "
                "configure a CSV inventory or backfill from the listing (omit --inventory)"
            )
        if "Key" not in columns:
            raise BackfillError(f"inventory {location}: fileSchema has no Key column")
        return cls(
            source_bucket=source_bucket,
            # arn:aws:s3:::bucket → bucket
            destination_bucket=destination.rsplit(":", 1)[-1],
            created_at=normalize_time(datetime.fromtimestamp(created_ms / 1000, UTC)),
            columns=columns,
            files=files,
            location=location,
        )


def read_manifest(s3: Any, location: str) -> InventoryManifest:
    """Read ``manifest.json`` from ``s3://bucket/key`` or a local path."""
    if location.startswith("s3://"):
        parsed = urlparse(location)
        body = s3.get_object(Bucket=parsed.netloc, Key=parsed.path.lstrip("/"))["Body"]
        try:
            text = body.read().decode("utf-8")
        finally:
            body.close()
    else:
        text = Path(location).read_text(encoding="utf-8")
    return InventoryManifest.parse(text, location)


@dataclass
class InventorySource:
    """The objects of an S3 Inventory report, resumable by (file, row).

    An inventory is a snapshot: every object in it was observed at the
    report's creation time, which becomes the changes' ``event_time``.
    Keys in CSV inventories are URL-encoded (spaces as ``+``).
    """

    s3: Any
    manifest: InventoryManifest
    prefix: str = ""

    @property
    def bucket(self) -> str:
        return self.manifest.source_bucket

    def describe(self) -> str:
        return (
            f"inventory {self.manifest.location} (s3://{self.bucket}/{self.prefix}, {len(self.manifest.files)} files)"
        )

    def identity(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "prefix": self.prefix, "source": f"inventory {self.manifest.location}"}

    def objects(self, after: Position | None) -> Iterator[ListedObject]:
        if after is not None and not isinstance(after, tuple):
            raise BackfillError("checkpoint position is a key; was it written for a listing?")
        start_file, start_row = after if after is not None else (0, -1)
        column = {name: i for i, name in enumerate(self.manifest.columns)}

        def value(row: list[str], name: str) -> str | None:
            i = column.get(name)
            return row[i] if i is not None and i < len(row) else None

        for file_index in range(start_file, len(self.manifest.files)):
            first_row = start_row + 1 if file_index == start_file else 0
            for row_index, row in enumerate(self._rows(self.manifest.files[file_index])):
                if row_index < first_row:
                    continue
                if value(row, "IsLatest") == "false" or value(row, "IsDeleteMarker") == "true":
                    continue
                bucket = value(row, "Bucket")
                if bucket and bucket != self.bucket:
                    continue
                key = unquote_plus(value(row, "Key") or "")
                if not key or not key.startswith(self.prefix):
                    continue
                size = value(row, "Size")
                yield ListedObject(
                    key=key,
                    etag=_etag(value(row, "ETag")),
                    size=int(size) if size and size.isdigit() else None,
                    position=(file_index, row_index),
                    observed_at=self.manifest.created_at,
                )

    def _rows(self, key: str) -> Iterator[list[str]]:
        body = self.s3.get_object(Bucket=self.manifest.destination_bucket, Key=key)["Body"]
        try:
            with gzip.GzipFile(fileobj=body) as raw, io.TextIOWrapper(raw, encoding="utf-8", newline="") as text:
                yield from csv.reader(text)
        finally:
            body.close()


# --------------------------------------------------------------------------- checkpoint


def _position_from_json(value: Any) -> Position | None:
    if value is None:
        return None
    if isinstance(value, list):
        return (int(value[0]), int(value[1]))
    return str(value)


def _position_to_json(value: Position | None) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _less(a: Position, b: Position) -> bool:
    # Keys compare by code point, which is UTF-8 byte order: S3's listing order.
    return a < b  # type: ignore[operator]


@dataclass
class BatchRange:
    """The positions of one batch's first and last object (inclusive)."""

    first: Position
    last: Position
    observed_at: str = ""

    def covers(self, position: Position) -> bool:
        return not _less(position, self.first) and not _less(self.last, position)

    def to_json(self) -> list[Any]:
        return [_position_to_json(self.first), _position_to_json(self.last), self.observed_at]

    @classmethod
    def from_json(cls, value: list[Any]) -> BatchRange:
        first, last = _position_from_json(value[0]), _position_from_json(value[1])
        if first is None or last is None:
            raise ValueError("empty batch range")
        return cls(first, last, str(value[2]) if len(value) > 2 else "")


def default_checkpoint_path(state_dir: Path, identity: dict[str, Any]) -> Path:
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    return state_dir / "backfill" / f"{identity['bucket']}-{digest}.json"


@dataclass
class Checkpoint:
    """Where a backfill run stands; saved atomically after every batch."""

    path: Path | None
    identity: dict[str, Any]
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started_at: str = field(default_factory=now_iso)
    updated_at: str = ""
    completed_at: str | None = None
    # Every object up to and including this position has been sent.
    position: Position | None = None
    # Batches sent beyond the watermark (they finished before an earlier one).
    sent_ahead: list[BatchRange] = field(default_factory=list)
    # Batches handed to SQS whose outcome is unknown (a hard kill mid-send).
    in_doubt: list[BatchRange] = field(default_factory=list)
    enqueued: int = 0
    batches: int = 0
    invocations: int = 0

    @classmethod
    def load(cls, path: Path, identity: dict[str, Any]) -> Checkpoint:
        """The checkpoint at ``path`` (a fresh one when the file does not exist)."""
        if not path.exists():
            return cls(path=path, identity=identity)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != CHECKPOINT_VERSION:
                raise BackfillError(f"{path}: checkpoint version {data.get('version')!r} is not supported")
            if data.get("identity") != identity:
                raise BackfillError(
                    f"{path} belongs to another backfill ({data.get('identity')}); "
                    "use --restart to start over, or another --checkpoint"
                )
            return cls(
                path=path,
                identity=identity,
                run_id=str(data["run_id"]),
                started_at=str(data["started_at"]),
                updated_at=str(data.get("updated_at", "")),
                completed_at=data.get("completed_at"),
                position=_position_from_json(data.get("position")),
                sent_ahead=[BatchRange.from_json(r) for r in data.get("sent_ahead", [])],
                in_doubt=[BatchRange.from_json(r) for r in data.get("in_doubt", [])],
                enqueued=int(data.get("enqueued", 0)),
                batches=int(data.get("batches", 0)),
                invocations=int(data.get("invocations", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, BackfillError):
                raise
            raise BackfillError(f"{path}: unreadable checkpoint ({exc}); use --restart to start over") from None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": CHECKPOINT_VERSION,
            "identity": self.identity,
            "run_id": self.run_id,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "completed_at": self.completed_at,
            "position": _position_to_json(self.position),
            "sent_ahead": [r.to_json() for r in self.sent_ahead],
            "in_doubt": [r.to_json() for r in self.in_doubt],
            "enqueued": self.enqueued,
            "batches": self.batches,
            "invocations": self.invocations,
        }

    def save(self) -> None:
        if self.path is None:
            return
        self.updated_at = now_iso()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    def already_sent(self, position: Position) -> bool:
        if self.position is not None and not _less(self.position, position):
            return True
        return any(r.covers(position) for r in self.sent_ahead)

    def doubtful_time(self, position: Position) -> str | None:
        """The event time a batch in doubt used for this position (to resend identical bodies)."""
        for r in self.in_doubt:
            if r.covers(position):
                return r.observed_at or None
        return None

    def prune(self) -> None:
        """Forget ranges at or below the watermark."""
        if self.position is None:
            return
        watermark = self.position
        self.sent_ahead = [r for r in self.sent_ahead if _less(watermark, r.last)]
        self.in_doubt = [r for r in self.in_doubt if _less(watermark, r.last)]


# --------------------------------------------------------------------------- the run


@dataclass
class BackfillResult:
    """What one invocation did (and the run's totals so far)."""

    source: str
    queue_url: str | None
    dry_run: bool
    completed: bool
    stopped: str | None  # why the run stopped before the end: "limit", "error", "interrupted"
    listed: int  # objects read from the source in this invocation
    enqueued: int  # messages sent in this invocation
    skipped: int  # objects already sent by an earlier invocation of this run
    total_enqueued: int
    seconds: float
    backlog_wait_seconds: float = 0.0
    error: str | None = None
    checkpoint: str | None = None
    run_id: str | None = None
    samples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.listed / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if v is not None and v != []}
        data["objects_per_second"] = round(self.rate, 1)
        data["seconds"] = round(self.seconds, 3)
        return data


@dataclass
class _Batch:
    seq: int
    changes: list[ObjectChange]
    span: BatchRange


ProgressCallback = Callable[[int, int, int], None]  # listed, enqueued, skipped (this invocation)


class Backfill:
    """Sends one ``created`` change per listed object; see the module docstring."""

    def __init__(
        self,
        source: ObjectSource,
        *,
        sender: ChangeSender | None,
        checkpoint: Checkpoint,
        rate: RateLimiter | None = None,
        backlog: BacklogGuard | None = None,
        concurrency: int = 4,
        limit: int | None = None,
        reason: str = "backfill",
        on_progress: ProgressCallback | None = None,
        sample_size: int = 3,
    ) -> None:
        self.source = source
        self.sender = sender
        self.checkpoint = checkpoint
        self.rate = rate or RateLimiter(None)
        self.backlog = backlog
        self.concurrency = max(1, concurrency)
        self.limit = limit
        self.reason = reason
        self.on_progress = on_progress
        self.sample_size = sample_size
        self._listed = 0
        self._enqueued = 0
        self._skipped = 0
        self._open: OrderedDict[int, _Batch] = OrderedDict()
        self._done: set[int] = set()
        self._failure: BaseException | None = None

    @property
    def dry_run(self) -> bool:
        return self.sender is None

    def _batches(self) -> Iterator[_Batch]:
        seq = 0
        pending: list[ListedObject] = []
        for obj in self.source.objects(self.checkpoint.position):
            self._listed += 1
            if self.checkpoint.already_sent(obj.position):
                self._skipped += 1
                continue
            pending.append(obj)
            if len(pending) == BATCH_SIZE:
                yield self._make_batch(seq, pending)
                seq += 1
                pending = []
        if pending:
            yield self._make_batch(seq, pending)

    def _make_batch(self, seq: int, objects: Sequence[ListedObject]) -> _Batch:
        # One event time per batch, the earliest observation in it (earlier is the
        # conservative side: a real event after it wins), so a batch in doubt can be
        # resent with identical bodies; objects of a batch in doubt keep its time.
        batch_time = min(o.observed_at for o in objects)
        changes = [
            ObjectChange(
                bucket=self.source.bucket,
                key=o.key,
                action=Action.CREATED,
                event_time=self.checkpoint.doubtful_time(o.position) or batch_time,
                etag=o.etag,
                size=o.size,
            )
            for o in objects
        ]
        return _Batch(seq, changes, BatchRange(objects[0].position, objects[-1].position, batch_time))

    def run(self) -> BackfillResult:
        """List and send until the source is exhausted, the limit is reached, or an error or Ctrl-C stops it."""
        started = time.monotonic()
        samples: list[dict[str, Any]] = []
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="backfill") if self.sender else None
        futures: dict[Future[int], _Batch] = {}
        if pool is not None:
            self.checkpoint.invocations += 1
        try:
            stopped = self._loop(pool, futures, samples)
        except KeyboardInterrupt:
            stopped = "interrupted"
        except Exception as exc:  # noqa: BLE001 - a listing failure ends the run; the checkpoint is kept
            self._failure = exc
            stopped = "error"
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                while futures:
                    self._collect(futures, block=True)
            if pool is not None:
                pool.shutdown(wait=True)
        if self._failure is not None:
            stopped = "error"
        if pool is not None:
            if stopped is None:
                # Listed to the end and every batch confirmed: ranges left from an earlier
                # invocation (objects deleted since) no longer matter.
                self.checkpoint.completed_at = now_iso()
                self.checkpoint.in_doubt.clear()
                self.checkpoint.sent_ahead.clear()
            self.checkpoint.save()
        return BackfillResult(
            source=self.source.describe(),
            queue_url=self.sender.queue_url if self.sender else None,
            dry_run=self.dry_run,
            completed=stopped is None,
            stopped=stopped,
            listed=self._listed,
            enqueued=self._enqueued,
            skipped=self._skipped,
            total_enqueued=self.checkpoint.enqueued if self.sender else self._enqueued,
            seconds=time.monotonic() - started,
            backlog_wait_seconds=self.backlog.waited_seconds if self.backlog else 0.0,
            error=f"{type(self._failure).__name__}: {self._failure}" if self._failure else None,
            checkpoint=str(self.checkpoint.path) if self.checkpoint.path and self.sender else None,
            run_id=self.checkpoint.run_id if self.sender else None,
            samples=samples,
        )

    def _loop(
        self, pool: ThreadPoolExecutor | None, futures: dict[Future[int], _Batch], samples: list[dict[str, Any]]
    ) -> str | None:
        """Feed batches to the pool; returns why it stopped early (None: the source is exhausted)."""
        for batch in self._batches():
            if len(samples) < self.sample_size:
                samples.extend(c.to_message() for c in batch.changes[: self.sample_size - len(samples)])
            if self.limit is not None and self._enqueued + self._pending(futures) >= self.limit:
                return "limit"
            if pool is None:
                self._enqueued += len(batch.changes)
                self._report()
                continue
            self.rate.acquire(len(batch.changes))
            if self.backlog:
                self.backlog.wait()
            # At most `concurrency` batches in flight, and a bounded window beyond the watermark:
            # one slow batch must not let the checkpoint's list of batches sent ahead grow without end.
            while futures and (len(futures) >= self.concurrency or self._window_full(batch.seq)):
                self._collect(futures, block=True)
            self._collect(futures, block=False)
            if self._failure is not None:
                return "error"
            self._open[batch.seq] = batch
            # Write-ahead: the batch is recorded as in doubt before SQS sees it.
            self.checkpoint.in_doubt.append(batch.span)
            self.checkpoint.save()
            futures[pool.submit(self._send, batch)] = batch
        return None

    def _window_full(self, seq: int) -> bool:
        return bool(self._open) and seq - next(iter(self._open)) >= 4 * self.concurrency

    @staticmethod
    def _pending(futures: dict[Future[int], _Batch]) -> int:
        return sum(len(b.changes) for b in futures.values())

    def _send(self, batch: _Batch) -> int:
        if self.sender is None:
            raise RuntimeError("backfill has no sender (a dry run sends nothing)")
        return self.sender.send(batch.changes, reason=self.reason)

    def _collect(self, futures: dict[Future[int], _Batch], *, block: bool) -> None:
        if not futures:
            return
        done, _ = wait(list(futures), timeout=None if block else 0, return_when=FIRST_COMPLETED)
        for future in done:
            batch = futures.pop(future)
            exc = future.exception()
            if exc is not None:
                # The batch stays in doubt: the next run resends it with identical bodies.
                if self._failure is None:
                    self._failure = exc
                if isinstance(exc, EnqueueError):
                    self._enqueued += exc.sent
                continue
            self._enqueued += len(batch.changes)
            self.checkpoint.enqueued += len(batch.changes)
            self.checkpoint.batches += 1
            self._complete(batch)
        if done:
            # Completions are saved with the next batch's write-ahead (or at the end of the run):
            # one checkpoint write per batch. A hard kill in between leaves them in doubt, which
            # only means they are resent with identical bodies.
            self._report()

    def _complete(self, batch: _Batch) -> None:
        cp = self.checkpoint
        with contextlib.suppress(ValueError):
            cp.in_doubt.remove(batch.span)
        self._done.add(batch.seq)
        cp.sent_ahead.append(batch.span)
        # Advance the watermark over every leading batch that is done.
        while self._open:
            seq, first = next(iter(self._open.items()))
            if seq not in self._done:
                break
            self._open.popitem(last=False)
            self._done.discard(seq)
            cp.position = first.span.last
        cp.prune()

    def _report(self) -> None:
        if self.on_progress:
            self.on_progress(self._listed, self._enqueued, self._skipped)


def estimate_object_count(cloudwatch: Any, bucket: str) -> int | None:
    """The bucket's object count from the daily S3 storage metric (None without data)."""
    end = datetime.now(UTC)
    try:
        response = cloudwatch.get_metric_statistics(
            Namespace="AWS/S3",
            MetricName="NumberOfObjects",
            Dimensions=[
                {"Name": "BucketName", "Value": bucket},
                {"Name": "StorageType", "Value": "AllStorageTypes"},
            ],
            StartTime=end - timedelta(days=3),
            EndTime=end,
            Period=86400,
            Statistics=["Average"],
        )
    except Exception:  # noqa: BLE001 - an estimate only; no data is fine
        return None
    points = sorted(response.get("Datapoints", []), key=lambda p: p["Timestamp"])
    return int(points[-1]["Average"]) if points else None
