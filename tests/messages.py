"""Builders for the message shapes the indexer accepts (as S3/EventBridge/SNS send them)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote_plus

REGION = "us-east-1"


def encode_key(key: str) -> str:
    """S3 notification key encoding: URL-encoded, spaces as '+'."""
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
) -> dict[str, Any]:
    obj: dict[str, Any] = {"key": encode_key(key)}
    if sequencer:
        obj["sequencer"] = sequencer
    if etag:
        obj["eTag"] = etag
    if size is not None:
        obj["size"] = size
    if version_id:
        obj["versionId"] = version_id
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": REGION,
        "eventTime": time,
        "eventName": event,
        "s3": {
            "s3SchemaVersion": "1.0",
            "configurationId": "docindex-ingest",
            "bucket": {"name": bucket, "arn": f"arn:aws:s3:::{bucket}"},
            "object": obj,
        },
    }


def s3_notification(bucket: str, key: str, **kwargs: Any) -> dict[str, Any]:
    return {"Records": [s3_record(bucket, key, **kwargs)]}


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
    time: str = "2026-11-20T09:00:00Z",
) -> dict[str, Any]:
    obj: dict[str, Any] = {"key": encode_key(key)}
    if sequencer:
        obj["sequencer"] = sequencer
    if etag:
        obj["etag"] = etag
    if size is not None:
        obj["size"] = size
    if version_id:
        obj["version-id"] = version_id
    detail: dict[str, Any] = {"version": "0", "bucket": {"name": bucket}, "object": obj, "reason": "PutObject"}
    if deletion_type:
        detail["deletion-type"] = deletion_type
        detail["reason"] = "DeleteObject"
    return {
        "version": "0",
        "id": "17793124-05d4-b198-2fde-7ededc63b103",
        "detail-type": detail_type,
        "source": "aws.s3",
        "account": "123456789012",
        "time": time,
        "region": REGION,
        "resources": [f"arn:aws:s3:::{bucket}"],
        "detail": detail,
    }


def sns(inner: dict[str, Any]) -> dict[str, Any]:
    return {
        "Type": "Notification",
        "MessageId": "95df01b4-ee98-5cb9-9903-4c221d41eb5e",
        "TopicArn": f"arn:aws:sns:{REGION}:123456789012:docindex",
        "Message": json.dumps(inner),
        "Timestamp": "2026-11-20T09:00:01.000Z",
    }
