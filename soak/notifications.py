"""The message shapes AWS sends for one object change: S3 notification, EventBridge, SNS.

Built the way AWS builds them: keys URL-encoded with spaces as ``+``; an S3
notification's ``eventTime`` has milliseconds, an EventBridge event's ``time``
only seconds; both carry the same ``sequencer`` for the same change.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote_plus

REGION = "us-east-1"
ACCOUNT = "123456789012"


@dataclass(frozen=True)
class Change:
    """One change S3 made to one object, as its notifications describe it."""

    bucket: str
    key: str
    created: bool  # ObjectCreated (Put, Copy) or ObjectRemoved (Delete)
    when: datetime  # when S3 finished the request
    sequencer: str | None = None
    etag: str | None = None
    size: int | None = None
    how: str = "Put"  # Put, Copy, Delete


def encode_key(key: str) -> str:
    """S3's key encoding in notifications: URL-encoded, spaces as ``+``."""
    return quote_plus(key, safe="/")


def _millis(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def s3_notification(change: Change) -> dict[str, Any]:
    obj: dict[str, Any] = {"key": encode_key(change.key)}
    if change.created:
        obj["size"] = change.size or 0
        if change.etag:
            obj["eTag"] = change.etag
    if change.sequencer:
        obj["sequencer"] = change.sequencer
    event = f"ObjectCreated:{change.how}" if change.created else "ObjectRemoved:Delete"
    return {
        "Records": [
            {
                "eventVersion": "2.1",
                "eventSource": "aws:s3",
                "awsRegion": REGION,
                "eventTime": _millis(change.when),
                "eventName": event,
                "userIdentity": {"principalId": "AWS:SOAK"},
                "requestParameters": {"sourceIPAddress": "127.0.0.1"},
                "responseElements": {"x-amz-request-id": uuid.uuid4().hex[:16].upper()},
                "s3": {
                    "s3SchemaVersion": "1.0",
                    "configurationId": "docindex-ingest",
                    "bucket": {"name": change.bucket, "arn": f"arn:aws:s3:::{change.bucket}"},
                    "object": obj,
                },
            }
        ]
    }


def eventbridge_event(change: Change) -> dict[str, Any]:
    obj: dict[str, Any] = {"key": encode_key(change.key)}
    if change.created:
        obj["size"] = change.size or 0
        if change.etag:
            obj["etag"] = change.etag
    if change.sequencer:
        obj["sequencer"] = change.sequencer
    detail: dict[str, Any] = {
        "version": "0",
        "bucket": {"name": change.bucket},
        "object": obj,
        "request-id": uuid.uuid4().hex[:16].upper(),
        "requester": ACCOUNT,
        "source-ip-address": "127.0.0.1",
        "reason": f"{change.how}Object" if change.created else "DeleteObject",
    }
    if not change.created:
        detail["deletion-type"] = "Permanently Deleted"
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Object Created" if change.created else "Object Deleted",
        "source": "aws.s3",
        "account": ACCOUNT,
        "time": change.when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": REGION,
        "resources": [f"arn:aws:s3:::{change.bucket}"],
        "detail": detail,
    }


def sns_wrapped(inner: dict[str, Any]) -> dict[str, Any]:
    return {
        "Type": "Notification",
        "MessageId": str(uuid.uuid4()),
        "TopicArn": f"arn:aws:sns:{REGION}:{ACCOUNT}:docindex",
        "Subject": "Amazon S3 Notification",
        "Message": json.dumps(inner, ensure_ascii=False),
        "Timestamp": _millis(datetime.now(UTC)),
        "SignatureVersion": "1",
    }


S3_TEST_EVENT: dict[str, Any] = {
    "Service": "Amazon S3",
    "Event": "s3:TestEvent",
    "Time": "2026-11-20T09:00:00.000Z",
    "Bucket": "docindex-soak",
    "RequestId": "SOAKTEST",
    "HostId": "soak",
}


def poison_bodies(bucket: str) -> list[str]:
    """Message bodies no consumer can ever process: they must end in the ingest DLQ, and only they."""
    return [
        "this is not JSON",
        json.dumps(["a", "JSON", "array"]),
        json.dumps({"hello": "world"}),
        json.dumps({"Records": [{"eventSource": "aws:sqs", "body": "not an S3 record"}]}),
        json.dumps(
            {
                "source": "aws.s3",
                "detail-type": "Object Restore Completed",
                "time": "2026-11-20T09:00:00Z",
                "detail": {"bucket": {"name": bucket}, "object": {"key": "x"}},
            }
        ),
        json.dumps({"Type": "Notification", "Message": "not JSON inside SNS"}),
    ]


def ocr_poison_bodies() -> list[str]:
    """Bodies on the OCR queue that are not OCR jobs: they must end in the OCR DLQ."""
    return [json.dumps({"docindex": "ocr_job", "bucket": "only-a-bucket"}), "garbage on the OCR queue"]
