"""Provision, locally, the resources template.yaml defines.

Run twice, it finds and reuses what exists (and re-applies the attributes).
The local defaults are shorter than the deployed ones so failures show up in
seconds, but they keep the template's invariants: the ingest queue's
visibility timeout is at least six times the (simulated) function timeout and
every queue has a DLQ with ``maxReceiveCount`` and a longer retention.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from docindex.core.aws import error_code
from docindex.core.settings import EmbeddingSettings
from docindex.embed.settings import vector_spec
from docindex.index.mapping import ensure_index

DAY = 24 * 3600


@dataclass(frozen=True)
class StackNames:
    """Resource names; ``prefix`` keeps several local stacks apart on one server."""

    prefix: str = "docindex"

    @property
    def bucket(self) -> str:
        return f"{self.prefix}-documents"

    @property
    def cache_bucket(self) -> str:
        return f"{self.prefix}-cache"

    @property
    def ingest_queue(self) -> str:
        return f"{self.prefix}-ingest"

    @property
    def ingest_dlq(self) -> str:
        return f"{self.prefix}-ingest-dlq"

    @property
    def ocr_queue(self) -> str:
        return f"{self.prefix}-ocr"

    @property
    def ocr_dlq(self) -> str:
        return f"{self.prefix}-ocr-dlq"

    @property
    def embed_queue(self) -> str:
        return f"{self.prefix}-embed"

    @property
    def embed_dlq(self) -> str:
        return f"{self.prefix}-embed-dlq"

    @property
    def idempotency_table(self) -> str:
        return f"{self.prefix}-idempotency"

    @property
    def ledger_table(self) -> str:
        return f"{self.prefix}-ledger"

    @property
    def index(self) -> str:
        return f"{self.prefix}-documents"


@dataclass(frozen=True)
class StackOptions:
    function_timeout: int = 10
    max_receive_count: int = 5
    ocr_visibility_timeout: int = 120
    ocr_max_receive_count: int = 5
    # The ingest queue's visibility timeout; 0 = six times the function timeout.
    visibility_timeout: int = 0
    # Meaning search (EMBEDDINGS): local (the model in process), bedrock or off. The local run turns it
    # on (docindex local up); a test or a harness that provisions a stack asks for it where it wants it.
    embeddings: str = "off"
    # VECTOR_ENCODING for the index's vectors (None: the product's default). A real local node takes only
    # Lucene's encodings (devkit.local.session.LOCAL_NODE_VECTOR_ENCODING).
    vector_encoding: str | None = None

    @property
    def ingest_visibility_timeout(self) -> int:
        return self.visibility_timeout or 6 * self.function_timeout


def _queue(sqs: Any, name: str, attributes: dict[str, str]) -> tuple[str, str]:
    try:
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    except ClientError as exc:
        if error_code(exc) not in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"):
            raise
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def _table(dynamodb: Any, name: str, *, ttl_attribute: str | None) -> None:
    try:
        dynamodb.create_table(
            TableName=name,
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
            SSESpecification={"Enabled": True},
        )
    except ClientError as exc:
        if error_code(exc) != "ResourceInUseException":
            raise
    if ttl_attribute:
        dynamodb.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl_attribute}
        )


def _queue_pair(
    sqs: Any, name: str, dlq_name: str, *, visibility: int, max_receive: int, retention: int
) -> dict[str, str]:
    dlq_url, dlq_arn = _queue(
        sqs,
        dlq_name,
        # Expiry counts from the original enqueue time: the DLQ keeps messages longer.
        {"MessageRetentionPeriod": str(14 * DAY), "SqsManagedSseEnabled": "true"},
    )
    url, arn = _queue(
        sqs,
        name,
        {
            "VisibilityTimeout": str(visibility),
            "MessageRetentionPeriod": str(retention),
            "ReceiveMessageWaitTimeSeconds": "20",
            "SqsManagedSseEnabled": "true",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receive}),
        },
    )
    sqs.set_queue_attributes(
        QueueUrl=dlq_url,
        Attributes={"RedriveAllowPolicy": json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": [arn]})},
    )
    return {"url": url, "arn": arn, "dlq_url": dlq_url, "dlq_arn": dlq_arn}


def _bucket(s3: Any, name: str, region: str) -> None:
    try:
        if region == "us-east-1":
            s3.create_bucket(Bucket=name)
        else:
            s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})
    except ClientError as exc:
        if error_code(exc) not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise


def provision(
    *,
    s3: Any,
    sqs: Any,
    dynamodb: Any,
    opensearch: Any,
    names: StackNames,
    options: StackOptions,
    region: str,
) -> dict[str, str]:
    """Create or update the local stack; returns the environment the handlers need."""
    ingest = _queue_pair(
        sqs,
        names.ingest_queue,
        names.ingest_dlq,
        visibility=options.ingest_visibility_timeout,
        max_receive=options.max_receive_count,
        retention=4 * DAY,
    )
    # The worker's queues; as in template.yaml, meaning search's embed jobs have one of their own.
    ocr, embed = (
        _queue_pair(
            sqs,
            queue,
            dlq,
            visibility=options.ocr_visibility_timeout,
            max_receive=options.ocr_max_receive_count,
            retention=4 * DAY,
        )
        for queue, dlq in ((names.ocr_queue, names.ocr_dlq), (names.embed_queue, names.embed_dlq))
    )
    for bucket in (names.bucket, names.cache_bucket):
        _bucket(s3, bucket, region)
    # Exactly one notification path: the bucket's queue configuration.
    s3.put_bucket_notification_configuration(
        Bucket=names.bucket,
        NotificationConfiguration={
            "QueueConfigurations": [
                {
                    "Id": "docindex-ingest",
                    "QueueArn": ingest["arn"],
                    "Events": [
                        "s3:ObjectCreated:*",
                        "s3:ObjectRemoved:*",
                        "s3:LifecycleExpiration:*",
                        "s3:ObjectRestore:Completed",
                    ],
                }
            ]
        },
    )
    _table(dynamodb, names.idempotency_table, ttl_attribute="expiration")
    _table(dynamodb, names.ledger_table, ttl_attribute=None)
    chosen = {"EMBEDDINGS": options.embeddings}
    if options.vector_encoding:
        chosen["VECTOR_ENCODING"] = options.vector_encoding
    vectors = vector_spec(EmbeddingSettings.from_env(chosen))
    ensure_index(opensearch, names.index, vectors=vectors)
    return {
        **chosen,
        "DOCINDEX_BUCKET": names.bucket,
        "CONTENT_CACHE_BUCKET": names.cache_bucket,
        "INGEST_QUEUE_URL": ingest["url"],
        "INGEST_QUEUE_ARN": ingest["arn"],
        "INGEST_DLQ_URL": ingest["dlq_url"],
        "INGEST_DLQ_ARN": ingest["dlq_arn"],
        "OCR_QUEUE_URL": ocr["url"],
        "OCR_QUEUE_ARN": ocr["arn"],
        "OCR_DLQ_URL": ocr["dlq_url"],
        "OCR_DLQ_ARN": ocr["dlq_arn"],
        "EMBED_QUEUE_URL": embed["url"],
        "EMBED_QUEUE_ARN": embed["arn"],
        "EMBED_DLQ_URL": embed["dlq_url"],
        "EMBED_DLQ_ARN": embed["dlq_arn"],
        "IDEMPOTENCY_TABLE": names.idempotency_table,
        "LEDGER_TABLE": names.ledger_table,
        # As in template.yaml: the redrive's no-progress state shares the ledger table (ids redrive#...).
        "REDRIVE_STATE_TABLE": names.ledger_table,
        "OPENSEARCH_INDEX": names.index,
        "LOCAL_FUNCTION_TIMEOUT": str(options.function_timeout),
    }
