"""Heartbeats: a received job's message stays invisible for as long as the job runs.

This is what makes "visibility timeout shorter than the work" impossible: the
queue's own VisibilityTimeout is never relied on. Every message is received
with ``VisibilityTimeout`` = one *lease* (three heartbeat intervals), and one
thread extends every running job's message by a lease on each beat with
``ChangeMessageVisibilityBatch``. A job therefore always has two spare beats
before its message could reappear.

A job whose extension is refused (the receipt handle is no longer valid) or
which has not been extended in time is *lost*: it stops and never commits,
since another worker may be running it. The same beat renews the job's
Powertools idempotency record (see ``job.py``), so a crashed worker's lock
expires one lease after its last beat, not hours later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from enum import StrEnum
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.observability import Metric, count, logger


class LeaseState(StrEnum):
    ACTIVE = "active"
    COMMITTING = "committing"  # the job is writing its result: nobody may take the message from it now
    LOST = "lost"  # the heartbeat failed: another worker may hold the message
    RELEASED = "released"  # handed back to the queue (shutdown)
    DONE = "done"


class Lease:
    """One received message and how long it is known to stay invisible."""

    def __init__(self, message: dict[str, Any], lease_seconds: int, received_at: float, queue_url: str = "") -> None:
        self.message_id: str = message["MessageId"]
        # The queue it came from (the OCR queue or the embed queue): extended, released and deleted there.
        self.queue_url = queue_url
        self.receipt_handle: str = message["ReceiptHandle"]
        self.body: str = message.get("Body", "")
        # The schema version lives here (docindex/core/messages.py); received with MessageAttributeNames=All.
        self.message_attributes: dict[str, Any] = dict(message.get("MessageAttributes") or {})
        self.receive_count = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
        self.lease_seconds = lease_seconds
        # Counted from *before* the receive call: the message may have been
        # made invisible at any moment during it.
        self.visible_at = received_at + lease_seconds
        self.state = LeaseState.ACTIVE
        self.reason = ""
        self.idempotency_key: str | None = None
        self._lock = threading.Lock()
        self.ended = threading.Event()

    def usable(self, margin: float) -> bool:
        """Still ours, with at least ``margin`` seconds before the message could reappear."""
        with self._lock:
            return self.state is LeaseState.ACTIVE and time.monotonic() < self.visible_at - margin

    def begin_commit(self, margin: float) -> bool:
        """Claim the right to write the result; False when the lease was lost or released."""
        with self._lock:
            if self.state is not LeaseState.ACTIVE or time.monotonic() >= self.visible_at - margin:
                return False
            self.state = LeaseState.COMMITTING
            return True

    def extended(self, until: float) -> None:
        with self._lock:
            if self.state in (LeaseState.ACTIVE, LeaseState.COMMITTING):
                self.visible_at = max(self.visible_at, until)

    def lose(self, reason: str) -> bool:
        with self._lock:
            if self.state is not LeaseState.ACTIVE:
                return False
            self.state = LeaseState.LOST
            self.reason = reason
            return True

    def release(self) -> bool:
        """Take the message away from its job (shutdown); False if the job is already committing or over."""
        with self._lock:
            if self.state is not LeaseState.ACTIVE:
                return False
            self.state = LeaseState.RELEASED
            self.reason = "shutdown"
            return True

    def finish(self) -> None:
        with self._lock:
            if self.state in (LeaseState.ACTIVE, LeaseState.COMMITTING):
                self.state = LeaseState.DONE
        self.ended.set()

    @property
    def active(self) -> bool:
        return self.state in (LeaseState.ACTIVE, LeaseState.COMMITTING)


class LeaseKeeper:
    """The heartbeat thread: extends every active lease each ``interval`` seconds."""

    def __init__(
        self,
        sqs: Any,
        *,
        interval: float,
        lease_seconds: int,
        renew_locks: Callable[[list[Lease]], None] | None = None,
    ) -> None:
        self._sqs = sqs
        self.interval = interval
        self.lease_seconds = lease_seconds
        self._renew_locks = renew_locks
        self._leases: dict[str, Lease] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.beats = 0

    @property
    def margin(self) -> float:
        """A lease closer than this to its end is not trusted for a commit."""
        return min(self.interval, 5.0)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="ocr-heartbeat", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def add(self, message: dict[str, Any], received_at: float, queue_url: str) -> Lease:
        lease = Lease(message, self.lease_seconds, received_at, queue_url)
        with self._lock:
            self._leases[lease.receipt_handle] = lease
        return lease

    def remove(self, lease: Lease) -> None:
        with self._lock:
            self._leases.pop(lease.receipt_handle, None)

    def active(self) -> list[Lease]:
        with self._lock:
            return [lease for lease in self._leases.values() if lease.active]

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.beat()
            except Exception:  # noqa: BLE001 - the heartbeat thread must outlive any single failure
                logger.exception("heartbeat failed")

    def beat(self) -> None:
        """Extend every active lease once; mark the ones that cannot be extended as lost."""
        leases = self.active()
        for queue_url, chunk in _batches(leases):
            self._extend(queue_url, chunk)
        now = time.monotonic()
        for lease in leases:
            if now >= lease.visible_at - self.margin and lease.lose("heartbeat overdue"):
                count(Metric.OCR_LEASES_LOST)
                logger.warning("lease lost: not extended in time", extra={"message_id": lease.message_id})
        if self._renew_locks is not None:
            try:
                self._renew_locks([lease for lease in leases if lease.active])
            except Exception:  # noqa: BLE001 - a failed renewal only risks duplicate work, never a wrong result
                logger.exception("renewing idempotency locks failed")
        self.beats += 1

    def _extend(self, queue_url: str, leases: list[Lease]) -> None:
        started = time.monotonic()
        entries = [
            {"Id": str(i), "ReceiptHandle": lease.receipt_handle, "VisibilityTimeout": self.lease_seconds}
            for i, lease in enumerate(leases)
        ]
        try:
            response = self._sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)
        except (ClientError, BotoCoreError) as exc:
            # Transient: the lease still has two beats to go; ``beat`` marks it
            # lost only when it is actually about to run out.
            logger.warning("ChangeMessageVisibilityBatch failed", extra={"error": str(exc), "jobs": len(leases)})
            return
        for ok in response.get("Successful", []):
            leases[int(ok["Id"])].extended(started + self.lease_seconds)
        for failed in response.get("Failed", []):
            lease = leases[int(failed["Id"])]
            code = failed.get("Code", "")
            refused = failed.get("SenderFault", True) or code in ("ReceiptHandleIsInvalid", "MessageNotInflight")
            if refused and lease.lose(f"{code}: {failed.get('Message', '')}".strip(": ")):
                count(Metric.OCR_LEASES_LOST)
                logger.warning(
                    "lease lost: visibility extension refused", extra={"message_id": lease.message_id, "code": code}
                )

    def set_visibility(self, leases: Iterable[Lease], seconds: int) -> list[Lease]:
        """Make messages visible again after ``seconds`` (0: at once); returns the ones that failed."""
        failed_leases: list[Lease] = []
        for queue_url, chunk in _batches(list(leases)):
            entries = [
                {"Id": str(i), "ReceiptHandle": lease.receipt_handle, "VisibilityTimeout": seconds}
                for i, lease in enumerate(chunk)
            ]
            try:
                response = self._sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                logger.warning("could not change message visibility", extra={"error": str(exc)})
                failed_leases.extend(chunk)
                continue
            failed_leases.extend(chunk[int(f["Id"])] for f in response.get("Failed", []))
        return failed_leases


def _batches(leases: list[Lease]) -> Iterator[tuple[str, list[Lease]]]:
    """The leases by queue, at most ten at a time (one ChangeMessageVisibilityBatch request)."""
    by_queue: dict[str, list[Lease]] = {}
    for lease in leases:
        by_queue.setdefault(lease.queue_url, []).append(lease)
    for queue_url, queued in by_queue.items():
        for start in range(0, len(queued), 10):
            yield queue_url, queued[start : start + 10]
