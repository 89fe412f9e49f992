"""The backfill runner: batches of changes sent concurrently, checkpointed, at a bounded rate."""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from docindex.core.changes import Action, ObjectChange, is_excluded
from docindex.core.exceptions import EnqueueError
from docindex.ops.backfill.checkpoint import BatchRange, Checkpoint
from docindex.ops.backfill.sources import ListedObject, ObjectSource, now_iso
from docindex.ops.enqueue import BATCH_SIZE, BacklogGuard, ChangeSender, RateLimiter


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
    excluded: int  # objects whose key matches EXCLUDE_KEYS: never sent (the indexer would skip them)
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
    """Sends one ``created`` change per listed object; ordering and resuming: ``docindex.ops.backfill``."""

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
        exclude_globs: tuple[str, ...] | None = None,
    ) -> None:
        self.source = source
        self.exclude_globs = exclude_globs
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
        self._excluded = 0
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
            if is_excluded(obj.key, globs=self.exclude_globs):
                self._excluded += 1
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
            excluded=self._excluded,
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
