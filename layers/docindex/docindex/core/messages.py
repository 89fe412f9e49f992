"""docindex's own queue messages: their schema versions, and a message from a newer release.

docindex sends two kinds of message: ``change`` (``{"docindex": "change", ...}`` on the ingest
queue: backfill, reconcile ``--fix``, reprocess) and ``ocr_job`` (``{"docindex": "ocr_job", ...}``
on the OCR queue: the indexer's hand-offs, the worker's page ranges, reconcile's re-queued jobs).
Each is sent with its schema version in the SQS message attribute ``docindex-schema``
(``SCHEMAS``: the newest version of each kind this release reads and writes).

Why an attribute and not a body field: a consumer from before versions existed (the worker
builds ``OcrJob(**body)``) would refuse a body with a field it does not know, while it never
asks for message attributes. So a version-1 body is byte for byte what that release sent and
reads, and a message without the attribute (that release's, or S3's, EventBridge's, SNS's) is
version 1.

A consumer that receives a kind or a version newer than it knows (a rolling deployment: old and
new workers on one queue, a new indexer in front of old workers) leaves the message to a newer
consumer: ``Deferral`` sends a copy with a delay and the original is then deleted. Leaving it in
the queue instead would spend one of its ``maxReceiveCount`` receives on every old consumer that
saw it, and dead-letter it during a long deployment; a copy starts from zero receives. The delay
(``MESSAGE_DEFER_SECONDS``) keeps old consumers from spinning on it. At least once still holds:
the copy is sent before the original is deleted, so a crash in between leaves two, and the
consumer's idempotency (on the change, or on the job's object, generation and range) applies it
once. Deferral is bounded: a message that no consumer understood for ``MESSAGE_DEFER_MAX_SECONDS``
since its first deferral (kept in ``docindex-deferred-since``) is failed like a poison message and
reaches the DLQ, from which the redrive brings it back once the newer consumers run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.exceptions import TransientError

SCHEMA_ATTRIBUTE = "docindex-schema"
DEFERRED_SINCE_ATTRIBUTE = "docindex-deferred-since"
# SQS's own limit on DelaySeconds.
MAX_DELAY_SECONDS = 900


class MessageKind(StrEnum):
    CHANGE = "change"
    OCR_JOB = "ocr_job"


# The newest schema of each kind this release reads and writes. A release that changes a body
# (a new field, a new meaning) bumps its kind here: consumers of the releases before it then
# defer those messages instead of failing them, and this release must keep reading every
# version below (tests/unit/test_messages.py holds one body of each).
# A message is sent with the lowest version its body needs, so that older consumers keep taking
# what they can read: ocr_job 2 is a meaning-search job (reason "embed": vectors for a document
# already indexed, no OCR), which a worker of version 1 would take for a job to OCR.
SCHEMAS: Mapping[MessageKind, int] = {MessageKind.CHANGE: 1, MessageKind.OCR_JOB: 2}


def message_attributes(kind: MessageKind, version: int = 1) -> dict[str, dict[str, str]]:
    """The SQS ``MessageAttributes`` a docindex message of ``kind`` and schema ``version`` is sent with."""
    if not 1 <= version <= SCHEMAS[kind]:
        raise ValueError(f"{kind} schema {version} is not one this release writes")
    return {SCHEMA_ATTRIBUTE: {"DataType": "Number", "StringValue": str(version)}}


def _attribute_value(raw: Mapping[str, Any]) -> str | None:
    # ReceiveMessage says StringValue; Lambda's SQS event says stringValue.
    value = raw.get("StringValue", raw.get("stringValue"))
    return str(value) if value is not None else None


def _send_shape(attributes: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """String and number attributes in ``SendMessage``'s shape (binary ones are not docindex's)."""
    shaped = {}
    for name, raw in attributes.items():
        value = _attribute_value(raw) if isinstance(raw, Mapping) else None
        kind = raw.get("DataType", raw.get("dataType", "String")) if isinstance(raw, Mapping) else "String"
        if value is not None:
            shaped[name] = {"DataType": str(kind), "StringValue": value}
    return shaped


@dataclass(frozen=True)
class Received:
    """A message as received: its body and what its attributes say about its schema."""

    body: str
    attributes: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def from_sqs(cls, message: Mapping[str, Any]) -> Received:
        """A ``ReceiveMessage`` entry (received with ``MessageAttributeNames=["All"]``)."""
        return cls(str(message.get("Body") or ""), _send_shape(message.get("MessageAttributes") or {}))

    @classmethod
    def from_lambda(cls, record: Mapping[str, Any]) -> Received:
        """A record of Lambda's SQS event."""
        return cls(str(record.get("body") or ""), _send_shape(record.get("messageAttributes") or {}))

    def _number(self, name: str) -> float | None:
        value = self.attributes.get(name, {}).get("StringValue")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None

    @property
    def schema(self) -> int | None:
        """The ``docindex-schema`` attribute; None when absent (version 1, or not docindex's)."""
        value = self._number(SCHEMA_ATTRIBUTE)
        return int(value) if value is not None else None

    @property
    def deferred_since(self) -> float | None:
        """When (epoch seconds) a consumer first left this message for a newer one."""
        return self._number(DEFERRED_SINCE_ATTRIBUTE)

    def kind(self) -> str | None:
        """The body's ``docindex`` kind, when the body is a JSON object that names one."""
        try:
            payload = json.loads(self.body)
        except ValueError:
            return None
        kind = payload.get("docindex") if isinstance(payload, dict) else None
        return str(kind) if kind is not None else None

    def newer_than_understood(self) -> str | None:
        """Why this message comes from a newer release than this one (None: this release reads it).

        Only a message carrying ``docindex-schema`` can be newer: without it the message is
        version 1 (or S3's, EventBridge's, SNS's), and a body this release cannot read is
        poison as before.
        """
        schema = self.schema
        if schema is None:
            return None
        kind = self.kind()
        try:
            known = SCHEMAS.get(MessageKind(kind)) if kind is not None else None
        except ValueError:
            known = None
        if known is None:
            return f"message kind {kind!r} (schema {schema}) is unknown to this release"
        if schema > known:
            return f"{kind} schema {schema} is newer than this release's {known}"
        return None


class Deferral:
    """Leaves a message from a newer release to a newer consumer, without spending its receives."""

    def __init__(
        self,
        sqs: Any,
        *,
        delay_seconds: int,
        max_seconds: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sqs = sqs
        self.delay_seconds = max(0, min(MAX_DELAY_SECONDS, delay_seconds))
        self.max_seconds = max_seconds
        self._clock = clock

    def defer(self, queue_url: str, message: Received, *, delay_seconds: int | None = None) -> bool:
        """Send a copy of ``message`` to ``queue_url``, delayed ``delay_seconds`` (default: the
        deferral's); the caller then deletes the original.

        False (nothing sent) once the message has been deferred for ``max_seconds``: the caller
        fails it like a poison message, so it reaches the DLQ instead of circling forever.
        Raises ``TransientError`` when the copy could not be sent (the original stays).
        """
        now = self._clock()
        delay = self.delay_seconds if delay_seconds is None else max(0, min(MAX_DELAY_SECONDS, delay_seconds))
        since = message.deferred_since or now
        if now - since > self.max_seconds:
            return False
        attributes = {
            **message.attributes,
            DEFERRED_SINCE_ATTRIBUTE: {"DataType": "Number", "StringValue": f"{since:.3f}"},
        }
        try:
            self.sqs.send_message(
                QueueUrl=queue_url,
                MessageBody=message.body,
                DelaySeconds=delay,
                MessageAttributes=attributes,
            )
        except (ClientError, BotoCoreError) as exc:
            raise TransientError(f"could not defer the message to a newer consumer: {exc}") from exc
        return True
