"""Bulk requests hold many documents: records waiting for their write give their work slot up."""

from __future__ import annotations

from opensearchpy import OpenSearch

from devkit.faults import OpenSearchFaults, Proxy
from devkit.messages import s3_notification
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke, sqs_event


def test_one_bulk_request_carries_every_record_of_the_batch(stack: Stack) -> None:
    faults = OpenSearchFaults()
    bodies = []
    for i in range(30):
        key = f"sizing/doc-{i:02d}.txt"
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=f"文書 {i} の本文".encode())
        bodies.append(s3_notification(stack.bucket, key, sequencer=f"00B{i:02d}"))
    with Proxy(stack.osmem_url, faults) as proxy:
        indexer = build_indexer(
            stack,
            OPENSEARCH_ENDPOINT=proxy.url,
            opensearch=OpenSearch(hosts=[proxy.url], timeout=10),
            # Two records work at once; a long linger, so only "every record is waiting" sends.
            INDEXER_CONCURRENCY="2",
            BULK_LINGER_SECONDS="10",
        )
        assert invoke(indexer, sqs_event(*bodies)) == set()
    assert stack.count() == 30
    # Before, a record held its slot while it waited: requests of at most 2 documents, 15 or more.
    assert faults.bulk_requests == 1
