"""The message shapes AWS sends for one object change: S3 notification, EventBridge event, SNS envelope.

Built the way AWS builds them: keys URL-encoded with spaces as ``+``; an S3
notification's ``eventTime`` has milliseconds, an EventBridge event's ``time``
only seconds; both carry the same ``sequencer`` for the same change.

Two ways in, one shape out:

- ``s3_notification`` / ``eventbridge`` / ``sns`` take keywords and default
  every id and time to a fixed value, so a test's message is the same on
  every run (the tests use these);
- ``Change`` describes what S3 did to one object; its methods build the same
  shapes with fresh request and message ids and the change's own time, as a
  stream of real notifications would carry them (the soak uses these).

Also here: the SQS event Lambda hands the indexer for a batch of bodies, the S3 test event and the
bodies no consumer can process (poison).
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
_REQUEST_ID = "C3D13FE58DE4C810"
_EVENT_ID = "17793124-05d4-b198-2fde-7ededc63b103"
_SNS_MESSAGE_ID = "95df01b4-ee98-5cb9-9903-4c221d41eb5e"


def encode_key(key: str) -> str:
    """S3's key encoding in notifications: URL-encoded, spaces as ``+``."""
    return quote_plus(key, safe="/")


def s3_record(
    bucket: str,
    key: str,
    *,
    event: str = "ObjectCreated:Put",
    sequencer: str | None = None,
    etag: str | None = None,
    size: int | None = None,
    version_id: str | None = None,
    time: str = "2026-11-20T09:00:00.000Z",
    request_id: str = _REQUEST_ID,
) -> dict[str, Any]:
    """One record of an S3 event notification (``event`` is its ``eventName``)."""
    obj: dict[str, Any] = {"key": encode_key(key)}
    if size is not None:
        obj["size"] = size
    if etag:
        obj["eTag"] = etag
    if version_id:
        obj["versionId"] = version_id
    if sequencer:
        obj["sequencer"] = sequencer
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": REGION,
        "eventTime": time,
        "eventName": event,
        "userIdentity": {"principalId": f"AWS:{ACCOUNT}"},
        "requestParameters": {"sourceIPAddress": "127.0.0.1"},
        "responseElements": {"x-amz-request-id": request_id},
        "s3": {
            "s3SchemaVersion": "1.0",
            "configurationId": "docindex-ingest",
            "bucket": {"name": bucket, "arn": f"arn:aws:s3:::{bucket}"},
            "object": obj,
        },
    }


def s3_notification(bucket: str, key: str, **record: Any) -> dict[str, Any]:
    """An S3 event notification with one record (keywords: those of ``s3_record``)."""
    return {"Records": [s3_record(bucket, key, **record)]}


def sqs_event(*bodies: Any, queue_arn: str = f"arn:aws:sqs:{REGION}:{ACCOUNT}:docindex-ingest") -> dict[str, Any]:
    """A Lambda SQS event with one record per body (dicts are JSON-encoded), each received once."""
    records = []
    for body in bodies:
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        records.append(
            {
                "messageId": str(uuid.uuid4()),
                "receiptHandle": "rh-" + uuid.uuid4().hex,
                "body": text,
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": REGION,
            }
        )
    return {"Records": records}


def eventbridge(
    bucket: str,
    key: str,
    *,
    detail_type: str = "Object Created",
    sequencer: str | None = None,
    etag: str | None = None,
    size: int | None = None,
    version_id: str | None = None,
    deletion_type: str | None = None,
    reason: str | None = None,
    time: str = "2026-11-20T09:00:00Z",
    event_id: str = _EVENT_ID,
    request_id: str = _REQUEST_ID,
) -> dict[str, Any]:
    """An S3 event as EventBridge delivers it; ``reason`` defaults to PutObject (DeleteObject for a deletion)."""
    obj: dict[str, Any] = {"key": encode_key(key)}
    if size is not None:
        obj["size"] = size
    if etag:
        obj["etag"] = etag
    if version_id:
        obj["version-id"] = version_id
    if sequencer:
        obj["sequencer"] = sequencer
    detail: dict[str, Any] = {
        "version": "0",
        "bucket": {"name": bucket},
        "object": obj,
        "request-id": request_id,
        "requester": ACCOUNT,
        "source-ip-address": "127.0.0.1",
        "reason": reason or ("DeleteObject" if deletion_type else "PutObject"),
    }
    if deletion_type:
        detail["deletion-type"] = deletion_type
    return {
        "version": "0",
        "id": event_id,
        "detail-type": detail_type,
        "source": "aws.s3",
        "account": ACCOUNT,
        "time": time,
        "region": REGION,
        "resources": [f"arn:aws:s3:::{bucket}"],
        "detail": detail,
    }


def sns(
    inner: dict[str, Any],
    *,
    message_id: str = _SNS_MESSAGE_ID,
    timestamp: str = "2026-11-20T09:00:01.000Z",
) -> dict[str, Any]:
    """``inner`` (usually an S3 notification) in the envelope SNS puts around it on the way to SQS."""
    return {
        "Type": "Notification",
        "MessageId": message_id,
        "TopicArn": f"arn:aws:sns:{REGION}:{ACCOUNT}:docindex",
        "Subject": "Amazon S3 Notification",
        "Message": json.dumps(inner, ensure_ascii=False),
        "Timestamp": timestamp,
        "SignatureVersion": "1",
    }


def _millis(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _request_id() -> str:
    return uuid.uuid4().hex[:16].upper()


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

    def s3_notification(self) -> dict[str, Any]:
        """The S3 event notification S3 sends for this change (a fresh request id)."""
        return s3_notification(
            self.bucket,
            self.key,
            event=f"ObjectCreated:{self.how}" if self.created else "ObjectRemoved:Delete",
            sequencer=self.sequencer,
            etag=self.etag if self.created else None,
            size=(self.size or 0) if self.created else None,
            time=_millis(self.when),
            request_id=_request_id(),
        )

    def eventbridge(self) -> dict[str, Any]:
        """The EventBridge event S3 sends for this change (fresh event and request ids)."""
        return eventbridge(
            self.bucket,
            self.key,
            detail_type="Object Created" if self.created else "Object Deleted",
            sequencer=self.sequencer,
            etag=self.etag if self.created else None,
            size=(self.size or 0) if self.created else None,
            deletion_type=None if self.created else "Permanently Deleted",
            reason=f"{self.how}Object" if self.created else "DeleteObject",
            time=self.when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            event_id=str(uuid.uuid4()),
            request_id=_request_id(),
        )

    def sns_notification(self) -> dict[str, Any]:
        """The S3 event notification for this change as it arrives through an SNS topic, sent now."""
        return sns(self.s3_notification(), message_id=str(uuid.uuid4()), timestamp=_millis(datetime.now(UTC)))


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
                # a detail type the pipeline does not act on (a restore completion it does)
                "detail-type": "Object Tags Added",
                "time": "2026-11-20T09:00:00Z",
                "detail": {"bucket": {"name": bucket}, "object": {"key": "x"}},
            }
        ),
        json.dumps({"Type": "Notification", "Message": "not JSON inside SNS"}),
    ]


def ocr_poison_bodies() -> list[str]:
    """Bodies on the OCR queue that are not OCR jobs: they must end in the OCR DLQ."""
    return [json.dumps({"docindex": "ocr_job", "bucket": "only-a-bucket"}), "garbage on the OCR queue"]
