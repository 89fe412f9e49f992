"""Sending object changes to the ingest queue: batches of 10, a bounded rate, backpressure.

``backfill`` and ``reconcile --fix`` both announce changes the way S3 would, in
docindex's own message shape (``ObjectChange.to_message()``), so the indexer
applies them through the same ledger and idempotency as real events.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.changes import ObjectChange
from docindex.core.exceptions import EnqueueError
from docindex.core.messages import MessageKind, message_attributes

# SendMessageBatch takes at most 10 entries.
BATCH_SIZE = 10


def message_body(change: ObjectChange, reason: str) -> str:
    """The SQS body for one change: docindex's message shape plus why it was sent."""
    body = change.to_message()
    body["reason"] = reason
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


class ChangeSender:
    """``SendMessageBatch`` with retries of the entries SQS reports as failed."""

    def __init__(
        self,
        sqs: Any,
        queue_url: str,
        *,
        max_attempts: int = 5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.sqs = sqs
        self.queue_url = queue_url
        self.max_attempts = max_attempts
        self._sleep = sleep

    def send(self, changes: Sequence[ObjectChange], *, reason: str) -> int:
        """Send up to 10 changes; returns how many were sent, raises ``EnqueueError`` otherwise."""
        if len(changes) > BATCH_SIZE:
            raise ValueError(f"at most {BATCH_SIZE} changes per batch, got {len(changes)}")
        pending = {str(i): message_body(change, reason) for i, change in enumerate(changes)}
        sent = 0
        last_error = ""
        for attempt in range(self.max_attempts):
            if not pending:
                break
            if attempt:
                self._sleep(min(0.2 * 2**attempt, 5.0))
            try:
                response = self.sqs.send_message_batch(
                    QueueUrl=self.queue_url,
                    Entries=[
                        {"Id": i, "MessageBody": body, "MessageAttributes": message_attributes(MessageKind.CHANGE)}
                        for i, body in pending.items()
                    ],
                )
            except (ClientError, BotoCoreError) as exc:
                # botocore already retried throttling, 5xx and dropped connections (core/clients.py's
                # retry config); what reaches here is final. Only the entries SQS answers as failed
                # inside a successful call are retried below: botocore cannot see those.
                raise EnqueueError(
                    f"SendMessageBatch failed: {exc}", sent=sent, failed=sorted(pending, key=int)
                ) from exc
            for ok in response.get("Successful", []):
                if pending.pop(ok["Id"], None) is not None:
                    sent += 1
            failures = response.get("Failed", [])
            sender_faults = [f for f in failures if f.get("SenderFault")]
            if sender_faults:
                detail = "; ".join(f"{f.get('Code')}: {f.get('Message')}" for f in sender_faults)
                raise EnqueueError(
                    f"SQS refused {len(sender_faults)} message(s): {detail}",
                    sent=sent,
                    failed=sorted(pending, key=int),
                )
            if failures:
                last_error = "; ".join(f"{f.get('Code')}: {f.get('Message')}" for f in failures)
        if pending:
            raise EnqueueError(
                f"{len(pending)} message(s) not sent after {self.max_attempts} attempts: {last_error}",
                sent=sent,
                failed=sorted(pending, key=int),
            )
        return sent


class RateLimiter:
    """A token bucket: at most ``rate`` units per second on average, bursts of one second."""

    def __init__(
        self,
        rate: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rate = rate if rate and rate > 0 else None
        self._clock = clock
        self._sleep = sleep
        self._capacity = max(float(BATCH_SIZE), self.rate or 0.0)
        self._tokens = self._capacity
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self, units: int = 1) -> float:
        """Wait until ``units`` may go; returns the seconds waited."""
        if self.rate is None:
            return 0.0
        waited = 0.0
        with self._lock:
            while True:
                now = self._clock()
                self._tokens = min(self._capacity, self._tokens + (now - self._last) * self.rate)
                self._last = now
                # (a hair of tolerance: float refills must not leave 9.999999 of 10 tokens forever)
                if self._tokens >= units - 1e-6:
                    self._tokens = max(0.0, self._tokens - units)
                    return waited
                pause = (units - self._tokens) / self.rate
                self._sleep(pause)
                waited += pause


@dataclass
class BacklogGuard:
    """Holds the sender while the queue already holds more than ``max_backlog`` messages.

    A backfill of millions must not bury the queue: messages older than the
    queue's retention period expire unprocessed.
    """

    sqs: Any
    queue_url: str
    max_backlog: int | None
    check_every: float = 5.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    on_wait: Callable[[int], None] | None = None
    waited_seconds: float = 0.0
    _last_check: float = field(default=float("-inf"))

    def depth(self) -> int:
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return sum(int(v) for v in attrs.values())

    def wait(self) -> None:
        """Return at once unless a (rate-limited) depth check finds the queue too deep."""
        if not self.max_backlog:
            return
        now = self.clock()
        if now - self._last_check < self.check_every:
            return
        self._last_check = now
        while (depth := self.depth()) > self.max_backlog:
            if self.on_wait:
                self.on_wait(depth)
            self.sleep(self.check_every)
            self.waited_seconds += self.check_every
        self._last_check = self.clock()
