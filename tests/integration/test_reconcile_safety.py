"""``reconcile --fix`` never removes what exists: live traffic, whole-second EventBridge times, a skewed clock.

Orphans are removed only after a ``HeadObject`` confirms the object is gone,
dated by S3's clock at that confirmation minus a margin, and through the
ingest queue and the ordering ledger like every change
(``docindex/ops/reconcile.py``). Each test below removed a live document
with the previous dating (this machine's clock when the listing page was
requested).
"""

from __future__ import annotations

import json
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from devkit.local.runner import LocalRunner
from devkit.messages import eventbridge
from docindex.ops.backfill import sources
from docindex.ops.reconcile import REMOVAL_MARGIN
from tests.conftest import REGION, Stack
from tests.integration.conftest import build_indexer
from tests.integration.test_reconcile import drain, put, reconcile

pytestmark = pytest.mark.integration


def apply_for(stack: Stack, *, seconds: float) -> None:
    """Run the real indexer on the ingest queue for a while (it never drains while traffic flows)."""
    runner = LocalRunner(
        sqs=stack.aws.sqs,
        handler=build_indexer(stack).handle,
        queue_url=stack.env["INGEST_QUEUE_URL"],
        queue_arn=stack.env["INGEST_QUEUE_ARN"],
        region=REGION,
        function_timeout=30,
    )
    assert runner.run(once=True, max_seconds=seconds).failures == 0


def orphan(stack: Stack, key: str) -> None:
    """``key`` indexed, then deleted with its delete event lost, long enough ago to be removable."""
    put(stack, key, f"最初の版 {key}")
    drain(stack)
    time.sleep(REMOVAL_MARGIN.total_seconds() + 0.5)
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
    stack.messages("INGEST_QUEUE_URL", delete=True)
    assert stack.doc(key) is not None


def test_a_skewed_local_clock_does_not_date_a_removal_after_a_real_create(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "営業部/見積書.txt"
    orphan(stack, key)

    # Given the operator's machine runs an hour ahead of S3
    class AheadClock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return datetime.now(tz) + timedelta(hours=1)

    monkeypatch.setattr(sources, "datetime", AheadClock)
    # When reconcile --fix finds the orphan and enqueues its removal
    report = reconcile(stack, fix=True)
    assert (report.orphaned, report.enqueued_removed) == (1, 1)
    [queued] = stack.messages("INGEST_QUEUE_URL")
    removal_time = datetime.fromisoformat(json.loads(queued["Body"])["event_time"].replace("Z", "+00:00"))
    # Then the removal is dated by S3's clock, not an hour ahead
    assert removal_time < datetime.now(UTC)
    # ... and the file uploaded again right after (its event stamped by S3) wins over it
    new_etag = put(stack, key, "再アップロードされた版")
    drain(stack)
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["etag"] == new_etag
    assert reconcile(stack).in_step


def test_a_create_announced_in_whole_seconds_wins_over_a_removal_confirmed_in_the_same_second(
    stack: Stack,
) -> None:
    key = "総務部/議事録.txt"
    orphan(stack, key)
    # When reconcile --fix confirms the orphan gone and enqueues its removal
    report = reconcile(stack, fix=True)
    assert report.enqueued_removed == 1
    confirmed = datetime.now(UTC)
    # and the file is uploaded again at once, announced by EventBridge in whole seconds (here stamped
    # with the second of the confirmation: the earliest stamp a later upload can get)
    etag = put(stack, key, "同じ秒に作り直した版")
    # (a stack in EventBridge mode: the S3 notification moto sent is not what announces it)
    for message in stack.messages("INGEST_QUEUE_URL", delete=True):
        if json.loads(message["Body"]).get("docindex") == "change":  # the removal stays queued
            stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=message["Body"])
    size = stack.aws.s3.head_object(Bucket=stack.bucket, Key=key)["ContentLength"]
    event = eventbridge(
        stack.bucket, key, etag=etag, size=size, time=confirmed.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=json.dumps(event))
    drain(stack)
    # Then the file stays searchable
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["etag"] == etag


def test_an_orphan_uploaded_again_before_the_confirmation_is_kept(stack: Stack) -> None:
    key = "経理/請求書.txt"
    orphan(stack, key)
    # Given the listing saw the orphan but the file is back before its removal is confirmed
    original = stack.aws.s3.head_object

    def head_after_reupload(**params: Any) -> Any:
        put(stack, key, "戻ってきた版")
        stack.aws.s3.head_object = original  # type: ignore[method-assign]
        return original(**params)

    stack.aws.s3.head_object = head_after_reupload  # type: ignore[method-assign]
    report = reconcile(stack, fix=True)
    # Then no removal is enqueued: the report says the object exists again
    assert (report.orphaned, report.enqueued_removed, report.orphans_reappeared) == (1, 0, 1)
    drain(stack)
    assert stack.doc(key) is not None


def test_fix_while_files_are_created_and_deleted_removes_nothing_live(stack: Stack) -> None:
    # Given files created, overwritten and deleted continuously, their events applied as they come
    keys = [f"共有/{n:02d} 週報.txt" for n in range(12)]
    stop = threading.Event()
    rng = random.Random(14)  # test traffic, not crypto

    def traffic() -> None:
        while not stop.is_set():
            key = rng.choice(keys)
            if rng.random() < 0.35:
                stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
            else:
                put(stack, key, f"版 {rng.random()}")
            time.sleep(0.1)

    worker = threading.Thread(target=traffic, daemon=True)
    worker.start()
    try:
        # When reconcile --fix runs again and again meanwhile, the indexer draining between runs
        for _ in range(4):
            reconcile(stack, fix=True, page_size=5)
            apply_for(stack, seconds=3)
    finally:
        stop.set()
        worker.join()
    drain(stack)
    # Then, once the traffic stops and its events are applied, the index holds exactly the bucket
    final = reconcile(stack)
    assert (final.missing, final.stale, final.orphaned) == (0, 0, 0)
    listed = {o["Key"] for o in stack.aws.s3.list_objects_v2(Bucket=stack.bucket).get("Contents", [])}
    assert listed
    assert all(stack.doc(key) is not None for key in listed)
