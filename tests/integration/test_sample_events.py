"""Every sample in events/ drives the real Lambda handler (so the samples can't rot).

These are the files `sam local invoke IndexerFunction -e events/<file>` uses.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout, suppress
from typing import Any

import pytest

from devkit.local.context import LocalLambdaContext
from devkit.local.handlers import load_handler
from devkit.local.runner import collect_emf
from docindex.core.changes import doc_id
from tests.conftest import Stack, load_event

SAMPLE_BUCKET = "docindex-sample-bucket"
K1 = "資料/四半期 売上報告.txt"
K2 = "reports/Q1+Q2 summary (final).txt"


@pytest.fixture
def handler(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """functions/indexer/app.py:lambda_handler configured through its environment, as in Lambda."""
    import docindex.ingest.indexer
    from docindex.core.settings import get_settings

    for name, value in stack.settings_env().items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    monkeypatch.setattr(docindex.ingest.indexer, "_indexer", None)
    with suppress(stack.aws.s3.exceptions.BucketAlreadyOwnedByYou):
        stack.aws.s3.create_bucket(Bucket=SAMPLE_BUCKET)
    stack.aws.s3.put_object(Bucket=SAMPLE_BUCKET, Key=K1, Body="四半期売上報告: 東京都 前年比 112%".encode())
    stack.aws.s3.put_object(Bucket=SAMPLE_BUCKET, Key=K2, Body=b"Quarterly revenue summary, final figures")
    yield load_handler("indexer")
    get_settings.cache_clear()


def run(handler: Any, name: str) -> tuple[set[str], dict[str, float]]:
    """Invoke with events/<name>; the failed messageIds and the emitted metrics."""
    out = io.StringIO()
    with redirect_stdout(out):
        response = handler(load_event(name), LocalLambdaContext(timeout_seconds=30))
    metrics: dict[str, float] = {}
    from collections import defaultdict

    totals: defaultdict[str, float] = defaultdict(float)
    collect_emf(out.getvalue(), totals)
    metrics.update(totals)
    return {f["itemIdentifier"] for f in response["batchItemFailures"]}, metrics


def source(stack: Stack, key: str) -> dict[str, Any] | None:
    stack.opensearch.indices.refresh(index=stack.index)
    got = stack.opensearch.get(index=stack.index, id=doc_id(SAMPLE_BUCKET, key), ignore=[404])
    return got["_source"] if got.get("found") else None


def test_s3_created_then_removed(stack: Stack, handler: Any) -> None:
    failed, metrics = run(handler, "sqs-s3-object-created.json")
    assert failed == set()
    assert metrics["DocumentsIndexed"] == 1
    doc = source(stack, K1)
    assert doc is not None
    assert "四半期売上報告" in doc["content"]
    failed, metrics = run(handler, "sqs-s3-object-removed.json")
    assert failed == set()
    assert metrics["DocumentsDeleted"] == 1
    assert source(stack, K1) is None


def test_eventbridge_created_then_deleted(stack: Stack, handler: Any) -> None:
    assert run(handler, "sqs-eventbridge-object-created.json")[0] == set()
    doc = source(stack, K2)
    assert doc is not None
    assert doc["filename"] == "Q1+Q2 summary (final).txt"
    assert run(handler, "sqs-eventbridge-object-deleted.json")[0] == set()
    assert source(stack, K2) is None


def test_sns_wrapped_notification(stack: Stack, handler: Any) -> None:
    failed, metrics = run(handler, "sqs-sns-s3-object-created.json")
    assert failed == set()
    assert metrics["DocumentsIndexed"] == 1
    assert source(stack, K1) is not None


def test_s3_test_event(stack: Stack, handler: Any) -> None:
    failed, metrics = run(handler, "sqs-s3-test-event.json")
    assert failed == set()
    assert metrics.get("DocumentsIndexed", 0) == 0
    assert metrics["TestEventsIgnored"] == 1


def test_duplicate_notifications_and_poison(stack: Stack, handler: Any) -> None:
    event = load_event("sqs-duplicate-notifications.json")
    poison_id = event["Records"][2]["messageId"]
    failed, metrics = run(handler, "sqs-duplicate-notifications.json")
    assert failed == {poison_id}
    assert metrics["DocumentsIndexed"] == 1
    assert metrics["DuplicatesSkipped"] == 1
    assert metrics["RecordsFailed"] == 1
    stack.opensearch.indices.refresh(index=stack.index)
    got = stack.opensearch.get(index=stack.index, id=doc_id(SAMPLE_BUCKET, K1))
    assert got["_version"] == 1


def test_emitted_metrics_use_the_docindex_namespace(stack: Stack, handler: Any) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        handler(load_event("sqs-s3-object-created.json"), LocalLambdaContext())
    blobs = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    emf = [b for b in blobs if "_aws" in b]
    assert emf
    assert {d["Namespace"] for b in emf for d in b["_aws"]["CloudWatchMetrics"]} == {"DocIndex"}
