"""SQS queue depth, as the local run, the operator CLI and the harnesses read it."""

from __future__ import annotations

from typing import Any

DEPTH_ATTRIBUTES = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


def queue_depth(sqs: Any, url: str) -> int:
    """Messages in the queue: visible + in flight + delayed (approximate, as SQS counts them)."""
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(DEPTH_ATTRIBUTES))["Attributes"]
    return sum(int(attrs.get(name, 0)) for name in DEPTH_ATTRIBUTES)
