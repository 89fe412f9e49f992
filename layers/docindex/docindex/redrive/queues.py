"""The queues of a redrive as SQS describes them: URL from ARN, attributes, dead-letter sources."""

from __future__ import annotations

import json
from typing import Any

from docindex.core.aws import DEPTH_ATTRIBUTES, queue_arn_parts
from docindex.core.exceptions import DlqError
from docindex.redrive.models import QueueInfo

_QUEUE_ATTRIBUTES = ["QueueArn", *DEPTH_ATTRIBUTES, "VisibilityTimeout", "RedrivePolicy"]


def queue_url_from_arn(arn: str, sqs: Any) -> str:
    """The queue URL of an SQS queue ARN, without an API call (so no ``sqs:GetQueueUrl``).

    A queue URL is the client's endpoint + ``/<account>/<name>``: on AWS
    ``https://sqs.<region>.amazonaws.com/<account>/<name>``; against a local endpoint
    (``AWS_ENDPOINT_URL``, e.g. moto server) ``http://host:port/<account>/<name>``, which
    is the URL the emulator itself hands out. A queue in another region than the client's
    cannot be reached by it (and cannot be this region's DLQ or source either).
    """
    try:
        region, account, name = queue_arn_parts(arn)
    except ValueError:
        raise DlqError("invalid_request", f"not an SQS queue ARN or URL: {arn!r}") from None
    meta = getattr(sqs, "meta", None)
    client_region = getattr(meta, "region_name", None) or region
    if region != client_region:
        raise DlqError(
            "queue_not_found",
            f"{arn} is in region {region}, this SQS client in {client_region}: a DLQ, its sources and "
            "the redrive must be in one region",
        )
    endpoint = getattr(meta, "endpoint_url", None) or f"https://sqs.{region}.amazonaws.com"
    return f"{endpoint.rstrip('/')}/{account}/{name}"


def describe_queue(sqs: Any, ref: str) -> QueueInfo:
    """One ``GetQueueAttributes`` call on a queue named by ARN or URL."""
    url = ref if ref.startswith(("http://", "https://")) else queue_url_from_arn(ref, sqs)
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=_QUEUE_ATTRIBUTES)["Attributes"]
    policy = json.loads(attrs.get("RedrivePolicy") or "{}")
    return QueueInfo(
        arn=attrs["QueueArn"],
        url=url,
        visible=int(attrs.get("ApproximateNumberOfMessages", 0)),
        in_flight=int(attrs.get("ApproximateNumberOfMessagesNotVisible", 0)),
        delayed=int(attrs.get("ApproximateNumberOfMessagesDelayed", 0)),
        visibility_timeout=int(attrs.get("VisibilityTimeout", 30)),
        max_receive_count=int(policy.get("maxReceiveCount", 1)),
    )


def source_queues(sqs: Any, dlq: QueueInfo) -> list[QueueInfo]:
    """The queues that name ``dlq`` as their dead-letter queue, sorted by ARN; ``not_a_dlq`` if none."""
    urls: list[str] = []
    for page in sqs.get_paginator("list_dead_letter_source_queues").paginate(QueueUrl=dlq.url):
        urls.extend(page.get("queueUrls", []))
    if not urls:
        raise DlqError(
            "not_a_dlq",
            f"no queue names {dlq.arn} as its dead-letter queue (ListDeadLetterSourceQueues is empty)",
        )
    return sorted((describe_queue(sqs, u) for u in urls), key=lambda q: q.arn)
