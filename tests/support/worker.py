"""OCR workers on a test stack, and the real indexer run that queues their jobs (test_worker*.py share these)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from devkit.messages import s3_notification, sqs_event
from docindex.core.observability import metrics
from docindex.worker.config import WorkerSettings
from docindex.worker.pool import OcrPool
from docindex.worker.service import Worker
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke

SEQ = ["0062A1B2C3D4E5F6%02d" % i for i in range(10)]  # noqa: UP031 - sequencer-shaped


WorkerFactory = Callable[..., Worker]


@contextmanager
def worker_factory(default_pool: OcrPool, **module_env: str) -> Iterator[WorkerFactory]:
    """Builds workers on a stack's clients (closed at the end), on ``default_pool`` unless given one;
    ``module_env`` are settings every worker of the caller gets unless a test gives its own."""
    workers: list[Worker] = []

    def make(stack: Stack, *, pool: OcrPool | None = None, **env: str) -> Worker:
        defaults = {
            "WORKER_CONCURRENCY": "2",
            "WORKER_HEARTBEAT_SECONDS": "5",
            "WORKER_RETRY_DELAY_SECONDS": "0",
            **module_env,
        }
        settings = WorkerSettings.from_env(stack.settings_env(**{**defaults, **env}))
        worker = Worker(
            settings,
            s3=stack.aws.s3,
            sqs=stack.aws.sqs,
            dynamodb=stack.aws.dynamodb,
            opensearch=stack.opensearch,
            pool=pool or default_pool,
            flush_metrics=False,
        )
        workers.append(worker)
        return worker

    try:
        yield make
    finally:
        for worker in workers:
            worker.close()


def upload_and_index(stack: Stack, key: str, body: bytes, *, sequencer: str = SEQ[1], **indexer_env: str) -> None:
    """Put the object and let the real indexer handle its notification (pending document + OCR job)."""
    etag = stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body)["ETag"].strip('"')
    indexer = build_indexer(stack, **indexer_env)
    failed = invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=sequencer, etag=etag)))
    assert failed == set()


def ocr_queue_depth(stack: Stack) -> dict[str, int]:
    attrs = stack.aws.sqs.get_queue_attributes(
        QueueUrl=stack.env["OCR_QUEUE_URL"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return {
        "visible": int(attrs["ApproximateNumberOfMessages"]),
        "in_flight": int(attrs["ApproximateNumberOfMessagesNotVisible"]),
    }


def metric_total(name: str) -> float:
    metric = metrics.metric_set.get(name)
    return float(sum(metric["Value"])) if metric else 0.0


def source_of(stack: Stack, key: str) -> dict[str, Any]:
    """The indexed document of ``key`` (it must exist)."""
    doc = stack.doc(key)
    assert doc is not None, key
    source: dict[str, Any] = doc["_source"]
    return source
