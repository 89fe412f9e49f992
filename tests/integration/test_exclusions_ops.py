"""backfill and reconcile apply EXCLUDE_KEYS as the indexer does: lock files are neither sent nor missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docindex.ops.backfill.checkpoint import Checkpoint
from docindex.ops.backfill.run import Backfill
from docindex.ops.backfill.sources import BucketListing
from docindex.ops.enqueue import ChangeSender
from tests.conftest import Stack
from tests.integration.test_reconcile import drain, put, reconcile

pytestmark = pytest.mark.integration

SKIPPED = ["営業部/~$見積書.xlsx", "営業部/Thumbs.db", "総務部/.DS_Store", "空のフォルダ/"]
KEPT = ["営業部/見積書.xlsx", "総務部/議事録.txt"]


def test_reconcile_does_not_report_excluded_keys_missing(stack: Stack) -> None:
    # Given a bucket with files and the debris a file server syncs along (the indexer skips it)
    for key in KEPT + SKIPPED:
        put(stack, key, f"内容 {key}" if not key.endswith("/") else "")
    drain(stack)
    assert all(stack.doc(key) is None for key in SKIPPED)
    # When reconciled
    report = reconcile(stack)
    # Then the skipped keys are neither missing nor objects the index must hold
    assert (report.missing, report.stale, report.orphaned) == (0, 0, 0)
    assert report.excluded == len(SKIPPED)
    assert report.objects == len(KEPT)
    assert report.in_step
    assert report.coverage == 100.0


def test_backfill_does_not_send_excluded_keys(stack: Stack, tmp_path: Path) -> None:
    for key in KEPT + SKIPPED:
        put(stack, key, "x" if not key.endswith("/") else "")
    stack.messages("INGEST_QUEUE_URL", delete=True)  # the uploads' own notifications
    source = BucketListing(stack.aws.s3, stack.bucket)
    result = Backfill(
        source,
        sender=ChangeSender(stack.aws.sqs, stack.env["INGEST_QUEUE_URL"]),
        checkpoint=Checkpoint.load(tmp_path / "backfill.json", source.identity()),
    ).run()
    sent = sorted(json.loads(m["Body"])["key"] for m in stack.messages("INGEST_QUEUE_URL", delete=True))
    assert sent == sorted(KEPT)
    assert (result.enqueued, result.excluded) == (len(KEPT), len(SKIPPED))
