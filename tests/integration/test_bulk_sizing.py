"""Bulk requests hold many documents: records waiting for their write give their work slot up."""

from __future__ import annotations

from opensearchpy import OpenSearch

from devkit.faults import OpenSearchFaults, Proxy
from devkit.local.context import LocalLambdaContext
from devkit.messages import s3_notification, sqs_event
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke


def test_one_bulk_request_carries_every_record_of_the_batch(stack: Stack) -> None:
    faults = OpenSearchFaults()
    bodies = []
    for i in range(30):
        key = f"sizing/doc-{i:02d}.txt"
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=f"文書 {i} の本文".encode())
        bodies.append(s3_notification(stack.bucket, key, sequencer=f"00B{i:02d}"))
    with Proxy(stack.engine_url, faults) as proxy:
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


class RunningOut(LocalLambdaContext):
    """An invocation that started with 100 s and has 5 s left by the time its records get a slot."""

    calls = 0

    def get_remaining_time_in_millis(self) -> int:
        self.calls += 1
        return 100_000 if self.calls == 1 else 5_000


def test_records_that_would_start_too_late_are_left_to_sqs_not_indexed_in_a_hurry(stack: Stack) -> None:
    bodies = []
    for i in range(3):
        key = f"late/doc-{i}.txt"
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=f"遅い {i}".encode())
        bodies.append(s3_notification(stack.bucket, key, sequencer=f"00C{i:02d}"))
    event = sqs_event(*bodies)
    indexer = build_indexer(stack)
    response = indexer.handle(event, RunningOut())
    failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
    assert failed == {record["messageId"] for record in event["Records"]}
    assert stack.count() == 0
    # Delivered again to an invocation with time to spare, they are indexed in full.
    assert invoke(indexer, event) == set()
    assert stack.count() == 3
