"""A local stand-in for SQS's message-move API (moto has no ``StartMessageMoveTask``).

The soak's redrive runs the real ``RedriveService`` (every guard: empty DLQ,
running task, source backlog, OpenSearch health, no-progress state in
DynamoDB) with this object as its ``move_tasks`` client. It does what SQS
documents for a move task, with the ordinary queue API: receive from the DLQ,
send each body to the source queue (a *new* message: new MessageId, receive
count zero), delete it from the DLQ, at most ``MaxNumberOfMessagesPerSecond``;
one task per DLQ at a time, cancellable, reporting ``RUNNING`` then
``COMPLETED`` with the approximate counts. SQS does not filter or modify
messages during a move, and neither does this.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from devkit.faults import SendLog, SentMessage


@dataclass
class _Task:
    handle: str
    source_arn: str
    destination_url: str
    destination_arn: str
    velocity: int
    to_move: int
    started_ms: int
    status: str = "RUNNING"
    moved: int = 0
    failure: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def describe(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "TaskHandle": self.handle,
            "Status": self.status,
            "SourceArn": self.source_arn,
            "DestinationArn": self.destination_arn,
            "MaxNumberOfMessagesPerSecond": self.velocity,
            "ApproximateNumberOfMessagesMoved": self.moved,
            "ApproximateNumberOfMessagesToMove": self.to_move,
            "StartedTimestamp": self.started_ms,
        }
        if self.failure:
            data["FailureReason"] = self.failure
        return data


def _attributes(message: dict[str, Any]) -> dict[str, Any]:
    attributes = message.get("MessageAttributes")
    return {"MessageAttributes": attributes} if attributes else {}


class LocalMessageMover:
    """``start_message_move_task`` / ``list_message_move_tasks`` / ``cancel_message_move_task`` over moto."""

    def __init__(self, sqs: Any, *, sends: SendLog | None = None) -> None:
        self.sqs = sqs
        self.sends = sends
        self._tasks: dict[str, list[_Task]] = {}
        self._lock = threading.Lock()
        self.moved_total = 0

    def _url_of(self, arn: str) -> str:
        name = arn.rsplit(":", 1)[-1]
        account = arn.split(":")[4]
        return str(self.sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"])

    def _arn_of(self, url: str) -> str:
        attrs = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
        return str(attrs["QueueArn"])

    def start_message_move_task(self, **kwargs: Any) -> dict[str, Any]:
        source_arn = str(kwargs["SourceArn"])
        velocity = int(kwargs.get("MaxNumberOfMessagesPerSecond") or 500)
        dlq_url = self._url_of(source_arn)
        destination_arn = kwargs.get("DestinationArn")
        if destination_arn:
            destination_url = self._url_of(str(destination_arn))
        else:
            # No destination: back to the queue that dead-lettered the messages.
            sources = self.sqs.list_dead_letter_source_queues(QueueUrl=dlq_url).get("queueUrls", [])
            if len(sources) != 1:
                raise RuntimeError(f"{source_arn}: {len(sources)} source queues; give DestinationArn")
            destination_url = sources[0]
            destination_arn = self._arn_of(destination_url)
        attrs = self.sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["ApproximateNumberOfMessages"])
        with self._lock:
            running = [t for t in self._tasks.get(source_arn, []) if t.status == "RUNNING"]
            if running:
                raise RuntimeError(f"a move task is already running for {source_arn}")
            task = _Task(
                handle=uuid.uuid4().hex,
                source_arn=source_arn,
                destination_url=destination_url,
                destination_arn=str(destination_arn),
                velocity=velocity,
                to_move=int(attrs["Attributes"]["ApproximateNumberOfMessages"]),
                started_ms=int(time.time() * 1000),
            )
            self._tasks.setdefault(source_arn, []).insert(0, task)
        task.thread = threading.Thread(target=self._move, args=(task, dlq_url), name="soak-move-task", daemon=True)
        task.thread.start()
        return {"TaskHandle": task.handle}

    def _move(self, task: _Task, dlq_url: str) -> None:
        try:
            while not task.cancel.is_set():
                started = time.monotonic()
                got = self.sqs.receive_message(
                    QueueUrl=dlq_url,
                    MaxNumberOfMessages=min(10, task.velocity),
                    WaitTimeSeconds=0,
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
                if not got:
                    break
                # SQS moves a message with its attributes (docindex-schema among them).
                entries = [{"Id": str(i), "MessageBody": m["Body"], **_attributes(m)} for i, m in enumerate(got)]
                sent = self.sqs.send_message_batch(QueueUrl=task.destination_url, Entries=entries)
                ok = {s["Id"] for s in sent.get("Successful", [])}
                done = [m for i, m in enumerate(got) if str(i) in ok]
                for message in done:
                    if self.sends is not None:
                        self.sends.add(SentMessage(task.destination_url, message["Body"], "redrive"))
                if done:
                    self.sqs.delete_message_batch(
                        QueueUrl=dlq_url,
                        Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
                    )
                with self._lock:
                    task.moved += len(done)
                    self.moved_total += len(done)
                # MaxNumberOfMessagesPerSecond
                pause = len(got) / task.velocity - (time.monotonic() - started)
                if pause > 0:
                    time.sleep(pause)
            task.status = "CANCELLED" if task.cancel.is_set() else "COMPLETED"
        except Exception as exc:  # noqa: BLE001 - reported like SQS reports a failed task
            task.failure = f"{type(exc).__name__}: {exc}"
            task.status = "FAILED"

    def wait(self, timeout: float = 120.0) -> None:
        """Until every task has ended (the soak waits for its redrive)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = [t.thread for tasks in self._tasks.values() for t in tasks if t.thread is not None]
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def list_message_move_tasks(self, **kwargs: Any) -> dict[str, Any]:
        with self._lock:
            tasks = self._tasks.get(str(kwargs["SourceArn"]), [])
            limit = int(kwargs.get("MaxResults") or 10)
            return {"Results": [t.describe() for t in tasks[:limit]]}

    def cancel_message_move_task(self, **kwargs: Any) -> dict[str, Any]:
        handle = str(kwargs["TaskHandle"])
        with self._lock:
            for tasks in self._tasks.values():
                for task in tasks:
                    if task.handle == handle and task.status == "RUNNING":
                        task.status = "CANCELLING"
                        task.cancel.set()
                        return {"ApproximateNumberOfMessagesMoved": task.moved}
        raise RuntimeError(f"no running task {handle}")
