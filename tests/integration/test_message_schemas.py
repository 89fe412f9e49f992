"""A message from a newer release is left to a newer consumer, without spending its receives (issue 29).

Real indexer and OCR worker on moto server (SQS with its delays, attributes and receive counts)
and a real OpenSearch node. A "newer release" is played by a message carrying a schema this release does
not know: what a rolling deployment puts in front of the consumers still on the old code.
"""

from __future__ import annotations

import json
import time
from typing import Any

from devkit.messages import sqs_event
from docindex.core.messages import DEFERRED_SINCE_ATTRIBUTE, SCHEMA_ATTRIBUTE, SCHEMAS, MessageKind
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke
from tests.support.worker import WorkerFactory, metric_total

NEWER = str(max(SCHEMAS.values()) + 1)


def _in_queue(stack: Stack, queue_env: str, *, wait: int) -> list[dict[str, Any]]:
    """docindex's messages in the queue once their delay has passed, with attributes and receive counts.

    Every message received is deleted (the S3 test event of the bucket's notification too).
    """
    url = stack.env[queue_env]
    deadline, found = time.monotonic() + wait, []
    while time.monotonic() < deadline and not found:
        got = stack.aws.sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=1,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        for message in got:
            stack.aws.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        found = [m for m in got if SCHEMA_ATTRIBUTE in m.get("MessageAttributes", {})]
    return found


def _delayed(stack: Stack, queue_env: str) -> int:
    attrs = stack.aws.sqs.get_queue_attributes(
        QueueUrl=stack.env[queue_env], AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]
    return int(attrs["ApproximateNumberOfMessagesDelayed"])


def _lambda_record_attributes(**values: str) -> dict[str, Any]:
    return {
        name: {"stringValue": value, "stringListValues": [], "binaryListValues": [], "dataType": "Number"}
        for name, value in values.items()
    }


def test_the_indexer_leaves_a_change_from_a_newer_release_to_a_newer_indexer(stack: Stack) -> None:
    # Given a change message of a schema this release does not know (a new field with a new meaning)
    key = "総務部/新しい形式.txt"
    body = json.dumps({"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created", "mode": "x"})
    event = sqs_event(body)
    event["Records"][0]["messageAttributes"] = _lambda_record_attributes(**{SCHEMA_ATTRIBUTE: NEWER})
    indexer = build_indexer(stack, MESSAGE_DEFER_SECONDS="2")
    # When this release's indexer receives it
    assert invoke(indexer, event) == set()
    # Then it is neither applied nor failed: a delayed copy waits in the ingest queue, not yet visible
    assert stack.doc(key) is None
    assert metric_total("MessagesDeferred") == 1
    assert metric_total("RecordsFailed") == 0
    assert _delayed(stack, "INGEST_QUEUE_URL") == 1
    # ... with the same body, its schema, the time of its first deferral, and none of its receives spent
    (copy,) = _in_queue(stack, "INGEST_QUEUE_URL", wait=10)
    assert copy["Body"] == body
    assert copy["MessageAttributes"][SCHEMA_ATTRIBUTE]["StringValue"] == NEWER
    since = float(copy["MessageAttributes"][DEFERRED_SINCE_ATTRIBUTE]["StringValue"])
    assert abs(since - time.time()) < 60
    assert copy["Attributes"]["ApproximateReceiveCount"] == "1"


def test_a_message_no_newer_consumer_took_in_time_goes_the_poison_way(stack: Stack) -> None:
    # Given a newer release's change deferred for longer than MESSAGE_DEFER_MAX_SECONDS
    body = json.dumps({"docindex": "change", "bucket": stack.bucket, "key": "a.txt", "action": "created"})
    event = sqs_event(body)
    long_ago = f"{time.time() - 3600:.3f}"
    event["Records"][0]["messageAttributes"] = _lambda_record_attributes(
        **{SCHEMA_ATTRIBUTE: NEWER, DEFERRED_SINCE_ATTRIBUTE: long_ago}
    )
    indexer = build_indexer(stack, MESSAGE_DEFER_MAX_SECONDS="600")
    # When it comes back once more to an indexer that still does not know it
    failed = invoke(indexer, event)
    # Then it fails like a poison message (its receives now count: the DLQ, and the redrive later)
    assert failed == {event["Records"][0]["messageId"]}
    assert metric_total("PoisonMessages") == 1
    assert metric_total("MessagesDeferred") == 0
    assert _delayed(stack, "INGEST_QUEUE_URL") == 0


def test_a_known_schema_and_the_release_before_versions_are_applied(stack: Stack) -> None:
    # Messages with this release's schema, and without any (the previous release's), are plain changes
    indexer = build_indexer(stack)
    for n, attributes in enumerate(
        [_lambda_record_attributes(**{SCHEMA_ATTRIBUTE: str(SCHEMAS[MessageKind.CHANGE])}), {}]
    ):
        key = f"営業部/報告 {n}.txt"
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=f"報告書 {n}".encode())
        event = sqs_event({"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"})
        event["Records"][0]["messageAttributes"] = attributes
        assert invoke(indexer, event) == set()
        doc = stack.doc(key)
        assert doc is not None
        assert f"報告書 {n}" in doc["_source"]["content"]
    assert metric_total("MessagesDeferred") == 0


def test_the_worker_leaves_a_job_from_a_newer_release_to_a_newer_worker(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given an OCR job of a schema this release does not know, on the OCR queue
    body = json.dumps({"docindex": "ocr_job", "bucket": stack.bucket, "key": "s.png", "generation": 1, "dpi": 600})
    stack.aws.sqs.send_message(
        QueueUrl=stack.env["OCR_QUEUE_URL"],
        MessageBody=body,
        MessageAttributes={SCHEMA_ATTRIBUTE: {"DataType": "Number", "StringValue": NEWER}},
    )
    worker = make_worker(stack, MESSAGE_DEFER_SECONDS="2")
    # When this release's worker receives it
    assert worker.poll_once(wait_seconds=2) == 1
    # Then the original is gone and a delayed copy waits for a newer worker, its receives unspent
    assert metric_total("MessagesDeferred") == 1
    assert metric_total("PoisonMessages") == 0
    assert _delayed(stack, "OCR_QUEUE_URL") == 1
    (copy,) = _in_queue(stack, "OCR_QUEUE_URL", wait=10)
    assert copy["Body"] == body
    assert copy["MessageAttributes"][SCHEMA_ATTRIBUTE]["StringValue"] == NEWER
    assert DEFERRED_SINCE_ATTRIBUTE in copy["MessageAttributes"]
    assert copy["Attributes"]["ApproximateReceiveCount"] == "1"
