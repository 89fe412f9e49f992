"""Drive the handlers the way AWS does, against the local queues.

Like Lambda's SQS event source mapping: receive up to ``batch_size``
messages, invoke the indexer with a Lambda-shaped SQS event, delete the
messages that succeeded and leave the failures in the queue, where they
reappear after the visibility timeout and reach the DLQ after
``maxReceiveCount`` receives. The OCR worker (when given) is polled in turn.

The pieces of that event source mapping (``receive_batch``, ``lambda_event``,
``reported_failures``, ``delete_succeeded``, ``collect_emf``) are public: the
soak drives its Lambda sandboxes (processes it can kill) with the same ones.
"""

from __future__ import annotations

import io
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from typing import Any, Protocol

from devkit.local.context import LocalLambdaContext
from docindex.core.aws import queue_depth
from docindex.core.observability import flush, logger

_LAMBDA_ATTRIBUTES = ("ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp")


Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class Worker(Protocol):
    # The queues it takes jobs from (the OCR queue, the embed queue): the runner waits for them to drain.
    queue_urls: list[str]

    def poll_once(self, wait_seconds: int = ...) -> int: ...


@dataclass
class RunStats:
    batches: int = 0
    records: int = 0
    failures: int = 0
    ocr_jobs: int = 0
    drained: bool = False
    # Why the run ended: "drained" (--once), "time limit" (max_seconds), "interrupted" (Ctrl-C).
    stopped: str = ""
    # Messages still in the served queues when it ended (None: could not be read).
    left: int | None = None
    seconds: float = 0.0
    failed_message_ids: list[str] = field(default_factory=list)
    metrics: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))


def collect_emf(output: str, into: defaultdict[str, float]) -> str:
    """Add the CloudWatch EMF metrics printed by Powertools to ``into``; return the other lines."""
    passthrough = []
    for line in output.splitlines():
        try:
            blob = json.loads(line)
        except ValueError:
            passthrough.append(line)
            continue
        if not isinstance(blob, dict) or "_aws" not in blob:
            passthrough.append(line)
            continue
        for directive in blob["_aws"].get("CloudWatchMetrics", []):
            for metric in directive.get("Metrics", []):
                value = blob.get(metric["Name"])
                values = value if isinstance(value, list) else [value]
                into[metric["Name"]] += sum(float(v) for v in values if v is not None)
    return "\n".join(passthrough)


def receive_batch(sqs: Any, queue_url: str, batch_size: int, *, wait_seconds: int) -> list[dict[str, Any]]:
    """Up to ``batch_size`` messages, as the event source mapping gathers a batch (10 per receive at most).

    Only the first receive waits (long polling); the others take what is there.
    """
    messages: list[dict[str, Any]] = []
    while len(messages) < batch_size:
        response = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=min(10, batch_size - len(messages)),
            WaitTimeSeconds=wait_seconds if not messages else 0,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        got = response.get("Messages", [])
        if not got:
            break
        messages.extend(got)
    return messages


def to_lambda_record(message: dict[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
    """One SQS ReceiveMessage entry in the shape Lambda hands to the function."""
    attributes = message.get("Attributes", {})
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {k: attributes[k] for k in _LAMBDA_ATTRIBUTES if k in attributes},
        "messageAttributes": {
            name: {
                "stringValue": value.get("StringValue"),
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": value.get("DataType", "String"),
            }
            for name, value in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def lambda_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    """The SQS event Lambda invokes the function with for ``messages``."""
    return {"Records": [to_lambda_record(m, queue_arn, region) for m in messages]}


def reported_failures(response: dict[str, Any] | None) -> set[str]:
    """The message ids a function reported as failed (``ReportBatchItemFailures``)."""
    return {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}


def delete_succeeded(sqs: Any, queue_url: str, messages: list[dict[str, Any]], failed: set[str]) -> None:
    """Delete the messages of a batch that did not fail; the failed ones reappear after the visibility timeout."""
    done = [m for m in messages if m["MessageId"] not in failed]
    for start in range(0, len(done), 10):
        chunk = done[start : start + 10]
        sqs.delete_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)],
        )


class LocalRunner:
    """Polls the ingest queue into ``handler`` (and the OCR queue into ``worker``)."""

    def __init__(
        self,
        *,
        sqs: Any,
        handler: Handler,
        queue_url: str,
        queue_arn: str,
        region: str = "us-east-1",
        batch_size: int = 10,
        function_timeout: float = 10.0,
        worker: Worker | None = None,
        context_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.sqs = sqs
        self.handler = handler
        self.queue_url = queue_url
        self.queue_arn = queue_arn
        self.region = region
        self.batch_size = max(1, min(batch_size, 10_000))
        self.function_timeout = function_timeout
        self.worker = worker
        self.context_factory = context_factory or (lambda: LocalLambdaContext(timeout_seconds=self.function_timeout))
        self.stats = RunStats()

    def poll_once(self, wait_seconds: int = 1) -> int:
        """One event-source-mapping round: receive, invoke, delete successes."""
        messages = receive_batch(self.sqs, self.queue_url, self.batch_size, wait_seconds=wait_seconds)
        if not messages:
            return 0
        event = lambda_event(messages, self.queue_arn, self.region)
        try:
            with self._collecting_metrics():
                response = self.handler(event, self.context_factory())
            failed = reported_failures(response)
        except Exception as exc:  # noqa: BLE001 - a crashed invocation fails the whole batch, as in Lambda
            logger.exception("handler raised; the whole batch will be retried", extra={"error": str(exc)})
            failed = {m["MessageId"] for m in messages}
        delete_succeeded(self.sqs, self.queue_url, messages, failed)
        self.stats.batches += 1
        self.stats.records += len(messages)
        self.stats.failures += len(failed)
        self.stats.failed_message_ids.extend(sorted(failed))
        return len(messages)

    @contextmanager
    def _collecting_metrics(self, *, flush_after: bool = False) -> Iterator[None]:
        """Total the metrics (EMF) printed inside the block instead of echoing every blob.

        Powertools prints them to stdout, as CloudWatch expects: the indexer
        handler at the end of each invocation; the worker, which outside a
        handler has no invocation end, when ``flush_after`` asks for it.
        """
        captured = io.StringIO()
        try:
            with redirect_stdout(captured):
                try:
                    yield
                finally:
                    if flush_after:
                        flush()
        finally:
            rest = collect_emf(captured.getvalue(), self.stats.metrics)
            if rest:
                print(rest, file=sys.stdout)

    def drained(self) -> bool:
        """Nothing visible, in flight or delayed in the queues this runner serves."""
        return all(queue_depth(self.sqs, url) == 0 for url in self._served())

    def depths(self) -> dict[str, int]:
        """Messages in each served queue (visible, in flight and delayed), by queue URL."""
        return {url: queue_depth(self.sqs, url) for url in self._served()}

    def _served(self) -> list[str]:
        """The ingest queue, and the worker's queues (OCR, embed) when there is a worker."""
        urls = [self.queue_url]
        if self.worker is not None:
            urls.extend(self.worker.queue_urls)
        return urls

    def run(
        self,
        *,
        once: bool = False,
        max_seconds: float | None = None,
        on_progress: Callable[[RunStats, float], None] | None = None,
        progress_every: float = 2.0,
    ) -> RunStats:
        """Poll until stopped; with ``once``, until every served queue is drained.

        ``on_progress(stats, elapsed)`` is called at most every ``progress_every`` seconds. Ctrl-C ends
        the run (``stats.stopped == "interrupted"``) instead of raising: the caller still gets the totals.
        """
        started = time.monotonic()
        last_progress = started
        # --once: a round after one that did work receives without waiting, and the run ends as soon as
        # a round finds nothing and the queues are drained; only while something is in flight or
        # delayed (a retry, a deferred job) do the receives long-poll for it. (Waiting first cost every
        # run two idle long polls, 2 s, at its end.)
        waiting = False
        try:
            while True:
                wait = (1 if waiting else 0) if once else 10
                handled = self.poll_once(wait_seconds=wait)
                if self.worker is not None:
                    with self._collecting_metrics(flush_after=True):
                        jobs = self.worker.poll_once(wait_seconds=0 if handled else min(wait, 1))
                    self.stats.ocr_jobs += jobs
                    handled += jobs
                if once and not handled and self.drained():
                    self.stats.drained = True
                    self.stats.stopped = "drained"
                    break
                waiting = once and not handled
                if max_seconds is not None and time.monotonic() - started > max_seconds:
                    self.stats.stopped = "time limit"
                    break
                now = time.monotonic()
                if on_progress is not None and now - last_progress >= progress_every:
                    last_progress = now
                    on_progress(self.stats, now - started)
                if not handled:
                    time.sleep(0.2)
        except KeyboardInterrupt:
            self.stats.stopped = "interrupted"
        finally:
            self.stats.seconds = time.monotonic() - started
        try:
            self.stats.left = 0 if self.stats.drained else sum(self.depths().values())
        except Exception:  # noqa: BLE001 - the emulator may be gone (that is what stopped us): unknown
            self.stats.left = None
        return self.stats
