"""reconcile against moto server and a real OpenSearch node: planted differences found, --fix repairs them."""

from __future__ import annotations

import time
from typing import Any

import pytest

from devkit.local.runner import LocalRunner
from docindex.core.changes import doc_id
from docindex.ops.enqueue import ChangeSender
from docindex.ops.reconcile import REMOVAL_MARGIN, Reconciler, count_documents
from tests.conftest import REGION, Stack
from tests.integration.conftest import build_indexer

pytestmark = pytest.mark.integration

# Mixed case, Japanese, spaces and '+', and the pair where UTF-16 order (Java's String) and UTF-8 order
# (S3's listing, OpenSearch's keyword sort) disagree: half-width ｶ (U+FF76) sorts before 𝄞 (U+1D11E) in
# UTF-8, after it in UTF-16. The merge checks both streams are strictly increasing in one order.
KEYS = [
    "営業部/週報 第1週.txt",
    "営業部/週報 第2週.txt",
    "営業部/見積 (最終).txt",
    "Eng/Readme.md",
    "eng/readme.md",
    "a.txt",
    "B.txt",
    "b.txt",
    "ｶﾀｶﾅ/半角.txt",
    "カタカナ/全角.txt",
    "z/最後.txt",
    "𝄞/music.txt",
    "space name/file +plus.txt",
]


def drain(stack: Stack) -> None:
    """Apply everything waiting in the ingest queue with the real indexer, as Lambda would."""
    indexer = build_indexer(stack)
    runner = LocalRunner(
        sqs=stack.aws.sqs,
        handler=indexer.handle,
        queue_url=stack.env["INGEST_QUEUE_URL"],
        queue_arn=stack.env["INGEST_QUEUE_ARN"],
        region=REGION,
        function_timeout=30,
    )
    stats = runner.run(once=True, max_seconds=60)
    assert stats.drained
    # what was written becomes visible at the index's next refresh (1 s); a person reconciling runs later
    stack.opensearch.indices.refresh(index=stack.index)
    assert stats.failures == 0


def reconcile(stack: Stack, *, fix: bool = False, prefix: str = "", page_size: int = 4) -> Any:
    return Reconciler(
        s3=stack.aws.s3,
        opensearch=stack.opensearch,
        bucket=stack.bucket,
        index=stack.index,
        prefix=prefix,
        sender=ChangeSender(stack.aws.sqs, stack.env["INGEST_QUEUE_URL"]) if fix else None,
        page_size=page_size,
    ).run()


def put(stack: Stack, key: str, body: str) -> str:
    return str(stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body.encode())["ETag"]).strip('"')


def test_finds_missing_stale_and_orphaned_documents_and_fix_repairs_them(stack: Stack) -> None:
    # Given a bucket whose every object was indexed by the pipeline
    for key in KEYS:
        put(stack, key, f"内容 {key}")
    drain(stack)
    stack.opensearch.indices.refresh(index=stack.index)
    assert reconcile(stack).in_step
    # and changes whose events were lost (the messages are dropped before the indexer sees them), more
    # than REMOVAL_MARGIN after the objects were created (a removal is dated 2 s before S3 confirmed the
    # object gone, so it would lose to a create of the last 2 s and wait for the next run)
    time.sleep(REMOVAL_MARGIN.total_seconds() + 0.5)
    put(stack, "経理/請求書.txt", "請求書")  # missing
    put(stack, "0-first.txt", "sorts before everything")  # missing
    new_etag = put(stack, "a.txt", "changed content")  # stale
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key="B.txt")  # orphaned
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key="𝄞/music.txt")  # orphaned, sorts last
    stack.messages("INGEST_QUEUE_URL", delete=True)

    # When reconciled (pages of 4 keys on both sides, across Japanese and mixed-case keys)
    report = reconcile(stack)
    # Then every planted difference is found, and nothing else
    assert (report.objects, report.documents) == (len(KEYS), len(KEYS))
    assert (report.missing, report.stale, report.orphaned) == (2, 1, 2)
    assert report.in_sync == len(KEYS) - 3
    assert report.coverage == pytest.approx(100 * (len(KEYS) - 3) / len(KEYS))
    assert {s["key"] for s in report.samples["missing"]} == {"経理/請求書.txt", "0-first.txt"}
    [stale] = report.samples["stale"]
    assert (stale["key"], stale["s3_etag"]) == ("a.txt", new_etag)
    assert stale["index_etag"] not in (None, new_etag)
    assert {s["key"] for s in report.samples["orphaned"]} == {"B.txt", "𝄞/music.txt"}

    # When --fix enqueues the repairs and the indexer drains the queue
    fixed = reconcile(stack, fix=True)
    assert (fixed.enqueued_created, fixed.enqueued_removed) == (3, 2)
    drain(stack)
    # Then a second run reports 100 %
    again = reconcile(stack)
    assert again.in_step
    assert again.coverage == 100.0
    assert stack.doc("B.txt") is None
    doc = stack.doc("a.txt")
    assert doc is not None
    assert doc["_source"]["etag"] == new_etag
    assert stack.doc("経理/請求書.txt") is not None


def test_only_the_buckets_documents_and_prefix_count(stack: Stack) -> None:
    for key in ("営業部/a.txt", "営業部/b.txt", "経理/c.txt"):
        put(stack, key, "x")
    drain(stack)
    # A document of another bucket in the same index is not an orphan of this one
    stack.opensearch.index(
        index=stack.index,
        id=doc_id("other-bucket", "営業部/zz.txt"),
        body={"bucket": "other-bucket", "key": "営業部/zz.txt", "etag": "e"},
        refresh=True,
    )
    assert count_documents(stack.opensearch, stack.index, stack.bucket) == 3
    report = reconcile(stack, prefix="営業部/")
    assert (report.objects, report.documents, report.in_sync) == (2, 2, 2)
    assert report.in_step
