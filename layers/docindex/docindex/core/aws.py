"""AWS facts every component reads the same way: error codes, queue names/ARNs/URLs, queue depth.

No boto3 import at module level: callers pass their clients and exceptions in.
"""

from __future__ import annotations

from typing import Any

DEPTH_ATTRIBUTES = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)

CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailedException"


def error_code(exc: BaseException) -> str:
    """The service error code of a botocore ``ClientError`` (``""`` for anything else).

    SQS's JSON protocol reports some codes with an ``AWS.SimpleQueueService.`` prefix; it is kept,
    so callers compare against the code they document.
    """
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code", "") or "")


def error_message(exc: BaseException) -> str:
    """The service's error message of a ``ClientError``, else ``str(exc)``."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        message = response.get("Error", {}).get("Message")
        if message:
            return str(message)
    return str(exc)


def http_status(exc: BaseException) -> int:
    """The HTTP status of a ``ClientError`` (0 when unknown)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return 0
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)


def is_conditional_check_failure(exc: BaseException) -> bool:
    """A DynamoDB conditional write lost its race (not an error of the dependency)."""
    return error_code(exc) == CONDITIONAL_CHECK_FAILED


def queue_name(url_or_arn: str) -> str:
    """The queue name in a queue URL or ARN."""
    return url_or_arn.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]


def queue_arn_parts(arn: str) -> tuple[str, str, str]:
    """(region, account, queue name) of an SQS queue ARN; ``ValueError`` for anything else."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs":
        raise ValueError(f"not an SQS queue ARN: {arn!r}")
    return parts[3], parts[4], parts[5]


def queue_url_from_arn(arn: str) -> str:
    """The queue's URL in the form SQS gives it (boto3 sends it to the client's endpoint, moto's too)."""
    region, account, name = queue_arn_parts(arn)
    return f"https://sqs.{region}.amazonaws.com/{account}/{name}"


def queue_depth(sqs: Any, url: str) -> int:
    """Messages in the queue: visible + in flight + delayed (approximate, as SQS counts them)."""
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(DEPTH_ATTRIBUTES))["Attributes"]
    return depth_of(attrs)


def depth_of(attributes: dict[str, Any]) -> int:
    """Queue depth from ``GetQueueAttributes`` output already in hand."""
    return sum(int(attributes.get(name, 0)) for name in DEPTH_ATTRIBUTES)
