"""OpenSearch answering 429/503 or rejecting single documents, through a fault-injecting proxy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch

from devkit.faults import OpenSearchFaults, Proxy
from devkit.messages import s3_notification, sqs_event
from docindex.core.changes import doc_id
from docindex.core.observability import metrics
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke


@pytest.fixture
def proxied(stack: Stack) -> Iterator[tuple[Any, OpenSearchFaults]]:
    faults = OpenSearchFaults()
    with Proxy(stack.engine_url, faults) as proxy:
        client = OpenSearch(hosts=[proxy.url], timeout=10)
        yield build_indexer(stack, OPENSEARCH_ENDPOINT=proxy.url, opensearch=client), faults


def upload(stack: Stack, n: int) -> list[dict[str, Any]]:
    bodies = []
    for i in range(n):
        key = f"fault/doc-{i}.txt"
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=f"document number {i} 文書".encode())
        bodies.append(s3_notification(stack.bucket, key, sequencer=f"00A{i:02d}"))
    return bodies


def emitted(name: str) -> float:
    values = metrics.metric_set.get(name, {}).get("Value", [])
    return float(sum(values))


def test_whole_bulk_429_and_503_are_retried(stack: Stack, proxied) -> None:
    indexer, faults = proxied
    faults.bulk_statuses = [429, 503]
    event = sqs_event(*upload(stack, 4))
    assert invoke(indexer, event) == set()
    assert stack.count() == 4
    assert faults.bulk_requests >= 3
    assert emitted("BulkRetries") >= 2


def test_item_level_429_is_retried_for_that_item(stack: Stack, proxied) -> None:
    indexer, faults = proxied
    bodies = upload(stack, 3)
    faults.item_errors = {doc_id(stack.bucket, "fault/doc-1.txt"): [429, 429]}
    assert invoke(indexer, sqs_event(*bodies)) == set()
    assert stack.count() == 3


def test_rejected_document_is_indexed_by_name(stack: Stack, proxied) -> None:
    indexer, faults = proxied
    bodies = upload(stack, 3)
    faults.item_errors = {doc_id(stack.bucket, "fault/doc-2.txt"): [400]}
    assert invoke(indexer, sqs_event(*bodies)) == set()
    doc = stack.doc("fault/doc-2.txt")
    assert doc is not None
    assert doc["_source"]["extraction_error"] == "index_rejected"
    assert "content" not in doc["_source"]


def test_a_document_rejected_twice_fails_only_its_own_record(stack: Stack, proxied) -> None:
    indexer, faults = proxied
    bodies = upload(stack, 3)
    faults.item_errors = {doc_id(stack.bucket, "fault/doc-1.txt"): [400, 400]}
    event = sqs_event(*bodies)
    assert invoke(indexer, event) == {event["Records"][1]["messageId"]}
    assert stack.doc("fault/doc-0.txt") is not None
    assert stack.doc("fault/doc-1.txt") is None
    assert stack.doc("fault/doc-2.txt") is not None


def test_bulk_failing_past_the_deadline_fails_the_records(stack: Stack, proxied) -> None:
    indexer, faults = proxied
    faults.bulk_statuses = [503] * 100
    bodies = upload(stack, 2)
    event = sqs_event(*bodies)
    assert invoke(indexer, event, timeout=4) == {r["messageId"] for r in event["Records"]}
    # ...and nothing is remembered as done: the redelivery indexes them
    faults.bulk_statuses = []
    assert invoke(indexer, event) == set()
    assert stack.count() == 2


def test_change_failing_across_redrives_is_quarantined(stack: Stack) -> None:
    # Given a document OpenSearch rejects every time (full and metadata-only writes)
    faults = OpenSearchFaults()
    with Proxy(stack.engine_url, faults) as proxy:
        indexer = build_indexer(
            stack,
            OPENSEARCH_ENDPOINT=proxy.url,
            opensearch=OpenSearch(hosts=[proxy.url], timeout=10),
            QUARANTINE_AFTER_FAILURES="3",
        )
        (body,) = upload(stack, 1)
        faults.item_errors = {doc_id(stack.bucket, "fault/doc-0.txt"): [400] * 6}
        # When the same change keeps coming back (receives, then DLQ redrives: new messageIds)
        results = [invoke(indexer, sqs_event(body)) for _ in range(4)]
    # Then it fails three times, and the fourth attempt indexes it by name as quarantined
    assert [len(r) for r in results] == [1, 1, 1, 0]
    doc = stack.doc("fault/doc-0.txt")
    assert doc is not None
    assert doc["_source"]["extraction_error"] == "quarantined"
    assert doc["_source"]["filename"] == "doc-0.txt"
    assert emitted("ChangesQuarantined") == 1
