"""S3's notification system, misbehaving the way the incident's did.

Every change is announced 1 to 3 times; for changes with a sequencer a share
of the copies come in the EventBridge shape (S3 notifications *and*
EventBridge enabled on one bucket) and a share wrapped in SNS; copies are
sent in shuffled order, and a share of them late (``DelaySeconds``), so the
messages of one object arrive out of order, within and across batches.
Changes without a sequencer (emulator-style) come only as S3 notifications.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from devkit.faults import SendLog, SentMessage
from devkit.messages import Change
from docindex.core.aws import queue_depth


@dataclass
class DeliveryFaults:
    copies: tuple[float, float, float] = (0.55, 0.30, 0.15)  # odds of 1, 2, 3 copies
    eventbridge_share: float = 0.4  # of the copies of a change with a sequencer
    sns_share: float = 0.1
    late_share: float = 0.25  # sent with a delay of 1..max_delay seconds
    max_delay: int = 6


@dataclass
class DeliveryStats:
    changes: int = 0
    messages: int = 0
    duplicates: int = 0
    eventbridge: int = 0
    sns: int = 0
    late: int = 0
    test_events: int = 0
    poison: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Outgoing:
    body: str
    delay: int


@dataclass
class Delivery:
    """Collects notifications and sends them, shuffled, from a background thread."""

    sqs: Any
    queue_url: str
    seed: int
    sends: SendLog
    faults: DeliveryFaults = field(default_factory=DeliveryFaults)
    flush_seconds: float = 0.25
    # At most this many messages in the queue (moto's SQS slows down with depth); the
    # rest wait here and leave in random order, which shuffles them across batches too.
    max_in_queue: int = 300
    stats: DeliveryStats = field(default_factory=DeliveryStats)

    def __post_init__(self) -> None:
        self._rng = random.Random(f"{self.seed}:delivery")  # noqa: S311  # fault injection, not crypto  # nosec B311
        self._lock = threading.Lock()
        self._buffer: list[_Outgoing] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-delivery", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> Delivery:
        self._thread.start()
        return self

    @property
    def pending(self) -> int:
        """Messages announced but not sent yet."""
        with self._lock:
            return len(self._buffer)

    def close(self) -> None:
        """Stop sending (what is still buffered is dropped: call after ``pending`` reached 0)."""
        self._stop.set()
        self._thread.join()

    # -- producing

    def announce(self, change: Change) -> None:
        faults, rng = self.faults, self._rng
        with self._lock:
            copies = rng.choices((1, 2, 3), faults.copies)[0]
            self.stats.changes += 1
            self.stats.duplicates += copies - 1
            for _ in range(copies):
                if change.sequencer and rng.random() < faults.eventbridge_share:
                    payload = change.eventbridge()
                    self.stats.eventbridge += 1
                elif rng.random() < faults.sns_share:
                    payload = change.sns_notification()
                    self.stats.sns += 1
                else:
                    payload = change.s3_notification()
                delay = rng.randint(1, faults.max_delay) if rng.random() < faults.late_share else 0
                self.stats.late += int(delay > 0)
                self._buffer.append(_Outgoing(json.dumps(payload, ensure_ascii=False), delay))

    def send_raw(self, body: str, *, poison: bool = False, test_event: bool = False) -> None:
        """A body as is (poison messages, the S3 test event)."""
        with self._lock:
            self.stats.poison += int(poison)
            self.stats.test_events += int(test_event)
            self._buffer.append(_Outgoing(body, 0))

    # -- sending

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.flush_seconds):
                self._flush()
        except BaseException as exc:  # noqa: BLE001 - surfaced by the soak's run loop
            self.error = exc

    def _flush(self) -> None:
        with self._lock:
            if not self._buffer:
                return
        room = self.max_in_queue - queue_depth(self.sqs, self.queue_url)
        if room <= 0:
            return
        with self._lock:
            self._rng.shuffle(self._buffer)
            batch, self._buffer = self._buffer[:room], self._buffer[room:]
        for start in range(0, len(batch), 10):
            chunk = batch[start : start + 10]
            entries = [{"Id": str(i), "MessageBody": m.body, "DelaySeconds": m.delay} for i, m in enumerate(chunk)]
            response = self.sqs.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            failed = {f["Id"] for f in response.get("Failed", [])}
            if failed:
                raise RuntimeError(f"the local queue refused {len(failed)} notification(s): {response['Failed']}")
            for message in chunk:
                self.sends.add(SentMessage(self.queue_url, message.body, "notifications"))
            self.stats.messages += len(chunk)
