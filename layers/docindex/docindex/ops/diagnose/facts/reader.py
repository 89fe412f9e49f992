"""The one reader of a deployment every fact-gatherer shares: clients, caches and queue sampling.

Read-only, except ``peek``: it receives a few messages and makes them visible
again at once (their receive count goes up by one).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.aws import error_code, http_status, queue_depth
from docindex.core.clients import AwsClients
from docindex.ops.deployment import Deployment
from docindex.ops.pause import PauseState, PauseStore


def is_unsupported(exc: Exception) -> bool:
    """Does this error mean the endpoint has no such API (a local emulator), rather than a failure?"""
    if isinstance(exc, ClientError):
        status = http_status(exc)
        code = error_code(exc)
        return (status in (404, 501) and code in ("", "404", "501", "NotImplemented")) or code in (
            "NotImplemented",
            "InvalidAction",
            "UnknownOperationException",
        )
    # An emulator without the API answers with something botocore cannot parse.
    return type(exc).__name__ in ("ResponseParserError", "UnknownServiceError")


class Reader:
    """Reads one deployment through AWS and OpenSearch; caches what several checks read.

    ``sample``, ``sample_seconds`` and ``window_minutes`` say how much to read:
    messages to peek at per queue, how long to watch a queue's depth when
    CloudWatch has no data, and the CloudWatch throughput window.
    """

    def __init__(
        self,
        deployment: Deployment,
        clients: AwsClients,
        *,
        opensearch: Any = None,
        sample: int = 10,
        sample_seconds: float = 10.0,
        window_minutes: int = 15,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.deployment = deployment
        self.clients = clients
        self.opensearch = opensearch
        self.sample = sample
        self.sample_seconds = sample_seconds
        self.window_minutes = window_minutes
        self.clock = clock
        self.sleep = sleep
        self.paused: PauseState | None = None
        self._attrs: dict[str, dict[str, str]] = {}
        self._mappings: list[dict[str, Any]] | None = None

    def client(self, service: str) -> Any:
        """The boto3 client of one AWS service."""
        return self.clients.client(service)

    @property
    def sqs(self) -> Any:
        """The SQS client (every queue read goes through it)."""
        return self.client("sqs")

    def attrs(self, url: str) -> dict[str, str]:
        """Every attribute of a queue, read once per run."""
        if url not in self._attrs:
            self._attrs[url] = dict(self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"])
        return self._attrs[url]

    def dlq_url(self, source_url: str) -> str | None:
        """The URL of the queue's dead-letter queue (None without a redrive policy or when it is gone)."""
        raw = self.attrs(source_url).get("RedrivePolicy")
        if not raw:
            return None
        arn = json.loads(raw)["deadLetterTargetArn"]
        parts = arn.split(":")
        try:
            return str(self.sqs.get_queue_url(QueueName=parts[5], QueueOwnerAWSAccountId=parts[4])["QueueUrl"])
        except ClientError as exc:
            if "NonExistent" in error_code(exc) or "QueueDoesNotExist" in error_code(exc):
                return None
            raise

    def depth(self, url: str) -> int:
        """Messages in the queue now: visible + in flight + delayed."""
        return queue_depth(self.sqs, url)

    def peek(self, url: str, count: int) -> list[dict[str, Any]]:
        """Receive up to ``count`` messages and make them visible again at once."""
        found: list[dict[str, Any]] = []
        try:
            while len(found) < count:
                got = self.sqs.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=min(10, count - len(found)),
                    VisibilityTimeout=30,
                    WaitTimeSeconds=1 if not found else 0,
                    AttributeNames=["All"],
                ).get("Messages", [])
                if not got:
                    break
                found.extend(got)
        finally:
            for start in range(0, len(found), 10):
                chunk = found[start : start + 10]
                self.sqs.change_message_visibility_batch(
                    QueueUrl=url,
                    Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                        for i, m in enumerate(chunk)
                    ],
                )
        return found

    def load_pause(self) -> None:
        """Read whether ``docindex pause`` is in effect (``paused``); unknown counts as not paused."""
        if not self.deployment.ledger_table:
            return
        try:
            self.paused = PauseStore(self.client("dynamodb"), self.deployment.ledger_table).load()
        except (ClientError, BotoCoreError):
            self.paused = None

    def mappings(self) -> list[dict[str, Any]]:
        """Every Lambda event source mapping on the ingest queue, read once per run."""
        if self._mappings is None:
            lam = self.client("lambda")
            arn = self.attrs(str(self.deployment.ingest_queue_url))["QueueArn"]
            found: list[dict[str, Any]] = []
            for page in lam.get_paginator("list_event_source_mappings").paginate(EventSourceArn=arn):
                found.extend(page.get("EventSourceMappings", []))
            self._mappings = found
        return self._mappings
