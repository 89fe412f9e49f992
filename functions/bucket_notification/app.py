"""CloudFormation custom resource: the ingest queue's notification on an existing bucket.

CloudFormation cannot add a notification to a bucket the stack does not own, so this function
reads the bucket's notification configuration, adds (Create/Update) or removes (Delete) exactly
the queue configuration with our Id, and writes it back: every other configuration of the bucket
(other queues, topics, Lambda functions, EventBridge) stays as it was.

Self-contained on purpose: it runs without the docindex layer, on the Lambda runtime's boto3.
``cfnresponse`` exists only for inline ZipFile code, so the answer to CloudFormation is a plain
PUT to the presigned ResponseURL. Every failure is answered FAILED with its reason, so a deploy
fails fast instead of waiting for the resource's ServiceTimeout.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

S3Client = Any  # botocore's S3 client (boto3-stubs are not part of the deployed code)

SUCCESS = "SUCCESS"
FAILED = "FAILED"
DELETE = "Delete"
REASON_LIMIT = 900  # CloudFormation rejects a response body over 4 KB; the reason is the only long part
RESPONSE_TIMEOUT_SECONDS = 30
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

LOGGER = logging.getLogger(__name__)
LOGGER.setLevel(logging.INFO)


class NotificationClash(ValueError):
    """Another configuration already sends the bucket's changes to the ingest queue."""


@dataclass(frozen=True)
class QueueNotification:
    """The custom resource's properties: which bucket notifies which queue of which events."""

    bucket: str
    account_id: str
    configuration_id: str
    queue_arn: str
    events: tuple[str, ...]

    @classmethod
    def from_properties(cls, properties: Mapping[str, Any]) -> QueueNotification:
        return cls(
            bucket=str(properties["Bucket"]),
            account_id=str(properties["AccountId"]),
            configuration_id=str(properties["ConfigurationId"]),
            queue_arn=str(properties["QueueArn"]),
            events=tuple(properties["Events"]),
        )

    @property
    def physical_resource_id(self) -> str:
        return f"{self.bucket}/{self.configuration_id}"


@dataclass(frozen=True)
class Outcome:
    """What CloudFormation is told about one request."""

    status: str
    reason: str
    physical_resource_id: str


def new_configuration(current: Mapping[str, Any], notification: QueueNotification, request_type: str) -> dict[str, Any]:
    """The bucket's notification configuration with our queue configuration (re)placed or removed.

    Create and Update replace the configuration with our Id (so repeating a request changes
    nothing); Delete removes it. Everything else in ``current`` is kept, except the API's
    ResponseMetadata. Raises NotificationClash on Create/Update when a configuration with another
    Id already sends to our queue: a second path would deliver every change twice.
    """
    config = {key: value for key, value in current.items() if key not in {"ResponseMetadata", "QueueConfigurations"}}
    queues = [q for q in current.get("QueueConfigurations", []) if q.get("Id") != notification.configuration_id]
    if request_type != DELETE:
        clash = [q.get("Id") for q in queues if q["QueueArn"] == notification.queue_arn]
        if clash:
            raise NotificationClash(f"the bucket already notifies the ingest queue ({clash}); one path only")
        ours = {"Id": notification.configuration_id, "QueueArn": notification.queue_arn}
        queues.append({**ours, "Events": list(notification.events)})
    if queues:
        config["QueueConfigurations"] = queues
    return config


def apply_request(event: Mapping[str, Any], get_s3: Callable[[], S3Client]) -> Outcome:
    """Apply one CloudFormation request to the bucket; never raises, a failure is a FAILED outcome.

    A Delete whose bucket no longer exists succeeds: there is nothing left to remove, and
    failing would leave the stack stuck in DELETE_FAILED.
    """
    physical_id = str(event.get("PhysicalResourceId") or event.get("LogicalResourceId", "bucket-notification"))
    request_type = event.get("RequestType", "")
    try:
        notification = QueueNotification.from_properties(event["ResourceProperties"])
        physical_id = notification.physical_resource_id
        s3 = get_s3()
        owner = {"ExpectedBucketOwner": notification.account_id}
        current = s3.get_bucket_notification_configuration(Bucket=notification.bucket, **owner)
        config = new_configuration(current, notification, request_type)
        s3.put_bucket_notification_configuration(Bucket=notification.bucket, NotificationConfiguration=config, **owner)
    except Exception as exc:  # noqa: BLE001 - every failure must reach CloudFormation as FAILED, not hang the stack
        reason = f"{type(exc).__name__}: {exc}"[:REASON_LIMIT]
        if request_type == DELETE and _error_code(exc) == "NoSuchBucket":
            LOGGER.warning("%s %s: bucket gone, nothing to remove: %s", request_type, physical_id, reason)
            return Outcome(SUCCESS, reason, physical_id)
        LOGGER.error("%s %s failed: %s", request_type, physical_id, reason)
        return Outcome(FAILED, reason, physical_id)
    LOGGER.info("%s %s: %s", request_type, physical_id, config.get("QueueConfigurations", []))
    return Outcome(SUCCESS, "ok", physical_id)


def _error_code(exc: Exception) -> str:
    return str(exc.response.get("Error", {}).get("Code", "")) if isinstance(exc, ClientError) else ""


def response_body(event: Mapping[str, Any], outcome: Outcome) -> bytes:
    """The JSON document CloudFormation expects at the ResponseURL."""
    return json.dumps(
        {
            "Status": outcome.status,
            "Reason": outcome.reason,
            "PhysicalResourceId": outcome.physical_resource_id,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
        }
    ).encode()


def send_response(url: str, body: bytes) -> None:
    """PUT the answer to CloudFormation's presigned URL; raises if it cannot be delivered.

    Raising makes Lambda retry the (asynchronous) invocation, which is safe: applying a
    request twice leaves the bucket as applying it once. The URL is signed without a
    Content-Type, so the header must be present and empty.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOOPBACK):
        raise ValueError(f"ResponseURL is not an https URL: {url[:80]!r}")
    # scheme checked above: CloudFormation's presigned https URL (plain http only to a local test server)
    request = urllib.request.Request(url, data=body, method="PUT", headers={"Content-Type": ""})  # noqa: S310
    with urllib.request.urlopen(request, timeout=RESPONSE_TIMEOUT_SECONDS) as answer:  # noqa: S310  # nosec B310
        answer.read()


@cache
def s3_client() -> S3Client:
    """One S3 client per container, created on first use (importing needs no credentials)."""
    config = Config(connect_timeout=5, read_timeout=15, retries={"mode": "standard", "max_attempts": 3})
    return boto3.client("s3", config=config)


def process(event: Mapping[str, Any], get_s3: Callable[[], S3Client]) -> Outcome:
    """Apply the request and answer CloudFormation; returns the outcome it was told."""
    outcome = apply_request(event, get_s3)
    send_response(event["ResponseURL"], response_body(event, outcome))
    return outcome


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    """Entry point for CloudFormation's Create/Update/Delete requests (invoked asynchronously)."""
    process(event, s3_client)
