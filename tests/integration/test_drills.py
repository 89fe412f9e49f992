"""Disaster drills (issue 29): each runs the steps of its runbook in docs/operations.md as commands.

The pipeline is the real indexer (fed from the ingest queue as Lambda feeds it) and the real OCR
worker on moto server and a real OpenSearch node; the operator's steps are ``docindex`` commands run as a
user runs them (``main([...])`` with the stack's env file). Every write OpenSearch accepts goes
through a recording proxy, so "written once" is counted, not assumed.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from devkit import samples
from devkit.messages import s3_notification
from docindex.ingest.handoff import OcrJob, OcrQueue
from docindex.ops.envfile import write_env_file
from docindex.ops.reconcile import REMOVAL_MARGIN
from docindex.worker.pool import OcrPool
from tests.conftest import Stack
from tests.support.drills import SCAN, TEXTS, Pipeline, documents, drill_pipeline, load
from tests.support.scans import CARD_INCHES, LAYOUT

pytestmark = pytest.mark.integration


@pytest.fixture
def pipeline(stack: Stack, tmp_path: Path, ocr_pool: OcrPool) -> Iterator[Pipeline]:
    with drill_pipeline(stack, tmp_path, ocr_pool) as found:
        yield found


# ---------------------------------------------------------------- (d) the idempotency table is lost


def test_with_the_idempotency_table_lost_duplicates_still_write_once(pipeline: Pipeline) -> None:
    # Given documents indexed and a scan OCR'd, and the messages that announced them
    stack = pipeline.stack
    messages = load(pipeline)
    before = documents(pipeline)
    assert before[SCAN][1]["ocr_status"] == "done"
    assert len([w for w in pipeline.writes.snapshot() if w.writer == "doc"]) == 1
    written = pipeline.index_writes()
    pages = pipeline.metrics["OcrPagesProcessed"]
    assert pages == 1
    # When the idempotency table is lost: deleted, then created again empty (`docindex local up`
    # here, `sam deploy` for a stack)
    stack.aws.dynamodb.delete_table(TableName=stack.env["IDEMPOTENCY_TABLE"])
    prefix = stack.env["IDEMPOTENCY_TABLE"].removesuffix("-idempotency")
    env = dict(line.split("=", 1) for line in pipeline.env_file.read_text().splitlines() if "=" in line)
    up = pipeline.command(
        "local", "up", "--aws-endpoint", env["AWS_ENDPOINT_URL"], "--opensearch-endpoint", stack.engine_url,
        "--prefix", prefix, "--state-dir", str(pipeline.env_file.parent / "state"),
    )  # fmt: skip
    assert up["IDEMPOTENCY_TABLE"] == stack.env["IDEMPOTENCY_TABLE"]
    write_env_file(pipeline.env_file, env)  # local up rewrote it with the proxy-less endpoint
    # ... and every change is announced again (a redrive, a duplicate notification), the OCR job too
    for body in messages:
        stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=body)
    version, source = before[SCAN]
    job = OcrJob(bucket=stack.bucket, key=SCAN, reason="image", generation=version - 1, etag=source["etag"])
    OcrQueue(stack.aws.sqs, stack.env["OCR_QUEUE_URL"]).send(job)
    pipeline.drain()
    # Then nothing was written again and no page read again: the ledger and the index recognised
    # every duplicate
    assert pipeline.index_writes() == written
    assert documents(pipeline) == before
    assert pipeline.metrics["DuplicatesSkipped"] >= len(TEXTS) + 1
    assert (pipeline.metrics["OcrJobsCompleted"], pipeline.metrics["OcrJobsDuplicate"]) == (1, 1)
    assert pipeline.metrics["OcrPagesProcessed"] == pages


# ---------------------------------------------------------------- (b) the index restored from an older snapshot


def snapshot(pipeline: Pipeline) -> str:
    """A snapshot of the index (an ``fs`` repository under the node's ``path.repo``); the repository's name."""
    client, index = pipeline.stack.opensearch, pipeline.stack.index
    concrete = next(iter(client.indices.get_alias(name=index)))
    settings = next(iter(client.nodes.info(metric="settings")["nodes"].values()))["settings"]
    repository = f"drill-{uuid.uuid4().hex[:8]}"
    location = str(Path(settings["path"]["repo"][0]) / repository)
    client.snapshot.create_repository(repository=repository, body={"type": "fs", "settings": {"location": location}})
    body = {"indices": concrete, "include_global_state": False}
    done = client.snapshot.create(repository=repository, snapshot="before", body=body, wait_for_completion=True)
    assert done["snapshot"]["state"] == "SUCCESS", done
    return repository


def restore(pipeline: Pipeline, repository: str) -> None:
    """The index replaced by the snapshot: deleted, then restored with its alias, documents at their versions."""
    client, index = pipeline.stack.opensearch, pipeline.stack.index
    concrete = next(iter(client.indices.get_alias(name=index)))
    client.indices.delete(index=concrete)
    restored = client.snapshot.restore(
        repository=repository,
        snapshot="before",
        body={"indices": concrete, "include_aliases": True},
        wait_for_completion=True,
    )
    assert restored["snapshot"]["shards"]["failed"] == 0, restored
    client.cluster.health(index=concrete, wait_for_status="yellow")


def test_an_index_restored_from_an_older_snapshot_is_repaired_exactly_where_it_is_behind(
    pipeline: Pipeline,
) -> None:
    stack, s3 = pipeline.stack, pipeline.stack.aws.s3
    # Given an index in step, and a scan whose OCR has not run yet when the snapshot is taken
    load(pipeline)
    weekly = "営業部/週報.txt"
    s3.put_object(Bucket=stack.bucket, Key=weekly, Body="週報 第1週".encode())
    late_scan = "スキャン/契約書.png"
    s3.put_object(
        Bucket=stack.bucket,
        Key=late_scan,
        Body=samples.make_scan_png(["業務委託契約書", "契約番号 K-2231"], dpi=300, page=CARD_INCHES, **LAYOUT),
    )
    pipeline.drain(ocr=False)
    snap = snapshot(pipeline)
    # ... then an hour of changes: the scan read, a file edited, one deleted, one created, one re-uploaded
    # unchanged (a new version, the same bytes)
    edited, deleted, unchanged = "営業部/見積書 No.1.txt", "経理部/請求書 2026-04.txt", "総務部/議事録.txt"
    s3.put_object(Bucket=stack.bucket, Key=edited, Body="見積書 訂正版 合計 150,000円".encode())
    s3.delete_object(Bucket=stack.bucket, Key=deleted)
    deleted_at = time.monotonic()
    s3.put_object(Bucket=stack.bucket, Key="営業部/提案書.txt", Body="提案書 新規".encode())
    s3.put_object(Bucket=stack.bucket, Key=unchanged, Body=TEXTS[unchanged].encode())
    s3.put_object(Bucket=stack.bucket, Key=weekly, Body="週報 第2週".encode())
    pipeline.drain()
    pages = pipeline.metrics["OcrPagesProcessed"]
    # When the index is restored from the snapshot, and changes keep arriving (one re-edits a file
    # the restore set back, one is new)
    restore(pipeline, snap)
    s3.put_object(Bucket=stack.bucket, Key="人事部/規程.txt", Body="就業規則 改定".encode())
    s3.put_object(Bucket=stack.bucket, Key=weekly, Body="週報 第3週".encode())
    pipeline.drain()
    # Then reconcile against the ledger finds exactly what the restore undid and nothing else
    found = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0", ok=(1,))
    keys = {
        kind: {d["key"] for d in found["samples"].get(kind, [])} for kind in ("missing", "stale", "orphaned", "behind")
    }
    assert keys == {
        "missing": {"営業部/提案書.txt"},
        "stale": {edited},
        "orphaned": {deleted},
        "behind": {late_scan, unchanged},  # the ETag alone cannot see these two
    }
    # When --fix repairs it and the pipeline drains (a restore comes minutes after the deletion it
    # undid: reconcile dates an orphan's removal REMOVAL_MARGIN before S3's whole-second Date, and a
    # removal dated before the deletion the ledger holds is rightly older than it)
    time.sleep(max(0.0, deleted_at + REMOVAL_MARGIN.total_seconds() + 1 - time.monotonic()))
    fixed = pipeline.command("reconcile", "--against-ledger", "--fix", "--pending-after", "0", ok=(1,))
    assert (fixed["enqueued_created"], fixed["enqueued_removed"]) == (4, 1)
    pipeline.drain()
    # Then the index is in step again, the scan's text came from the content cache (no page read)
    again = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0")
    assert (again["coverage_percent"], again["behind"]) == (100.0, 0)
    docs = documents(pipeline)
    assert docs[late_scan][1]["ocr_status"] == "done"
    assert "K-2231" in docs[late_scan][1]["content"]
    assert "訂正版" in docs[edited][1]["content"]
    assert deleted not in docs
    assert "第3週" in docs[weekly][1]["content"]
    assert pipeline.metrics["OcrPagesProcessed"] == pages


# ---------------------------------------------------------------- (c) the ledger restored to an earlier point in time


def ledger_items(stack: Stack) -> list[dict[str, Any]]:
    """The ledger's object entries as they are now (what a point-in-time restore brings back)."""
    table = stack.env["LEDGER_TABLE"]
    items, request = [], {"TableName": table}
    while True:
        page = stack.aws.dynamodb.scan(**request)
        items += [i for i in page["Items"] if i["id"]["S"].startswith("object#")]
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def restore_ledger(stack: Stack, at_r: list[dict[str, Any]]) -> None:
    """The ledger table as a PITR restore to R leaves it (moto's restore copies the table as it is now)."""
    table = stack.env["LEDGER_TABLE"]
    for item in ledger_items(stack):
        stack.aws.dynamodb.delete_item(TableName=table, Key={"id": item["id"]})
    for item in at_r:
        stack.aws.dynamodb.put_item(TableName=table, Item=item)


def versioned(stack: Stack) -> None:
    """A file server's bucket keeps versions: a late event then names a version S3 can still serve."""
    stack.aws.s3.put_bucket_versioning(Bucket=stack.bucket, VersioningConfiguration={"Status": "Enabled"})


def after_r(pipeline: Pipeline) -> tuple[list[str], str, str]:
    """Changes after the restore point R, drained: a file edited twice, one deleted. Their notifications."""
    stack, s3 = pipeline.stack, pipeline.stack.aws.s3
    edited, deleted = "営業部/見積書 No.1.txt", "経理部/請求書 2026-04.txt"
    s3.put_object(Bucket=stack.bucket, Key=edited, Body="見積書 第2版".encode())
    s3.put_object(Bucket=stack.bucket, Key=edited, Body="見積書 第3版".encode())
    marker = s3.delete_object(Bucket=stack.bucket, Key=deleted).get("VersionId")
    if marker:
        # moto announces no delete marker; S3 does (ObjectRemoved:DeleteMarkerCreated)
        when = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        removal = s3_notification(
            stack.bucket, deleted, event="ObjectRemoved:DeleteMarkerCreated", version_id=marker, time=when
        )
        stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=json.dumps(removal))
    announced = [m["Body"] for m in stack.messages("INGEST_QUEUE_URL")]
    pipeline.drain()
    assert deleted not in documents(pipeline)
    return announced, edited, deleted


def test_without_repair_a_restored_ledger_loses_the_next_edit(pipeline: Pipeline) -> None:
    # The hazard the repair is for, shown: the ledger restored to R, nothing else done. (The other
    # one, a deleted file brought back by a late create naming its version, needs S3's version ids
    # in the notifications, which moto leaves out.)
    stack = pipeline.stack
    load(pipeline)
    at_r = ledger_items(stack)
    _late, edited, _deleted = after_r(pipeline)
    restore_ledger(stack, at_r)
    # When the file edited twice after R is edited once more
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=edited, Body="見積書 第4版".encode())
    pipeline.drain()
    # Then the index refused the edit as an older version (its generation was handed out before): lost
    docs = documents(pipeline)
    assert "第3版" in docs[edited][1]["content"]


def test_a_ledger_restored_to_an_earlier_point_is_repaired_and_nothing_older_wins(pipeline: Pipeline) -> None:
    stack = pipeline.stack
    # Given an index in step, the ledger as it was at R, then changes after R
    versioned(stack)
    early = load(pipeline)
    at_r = ledger_items(stack)
    late, edited, deleted = after_r(pipeline)
    created = "営業部/提案書.txt"
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=created, Body="提案書 新規".encode())
    late += [m["Body"] for m in stack.messages("INGEST_QUEUE_URL")]
    pipeline.drain()
    before = documents(pipeline)
    # When the ledger table is restored to R, and the runbook is followed: pause, repair, resume
    restore_ledger(stack, at_r)
    pipeline.command("pause", ok=(0, 1))  # nothing to pause locally: the drill runs no consumer meanwhile
    repaired = pipeline.command("ledger", "repair")
    assert (repaired["raised"], repaired["created"], repaired["marked_removed"]) == (1, 1, 1)
    assert (repaired["changed_meanwhile"], repaired["unconfirmed"]) == (0, 0)
    pipeline.command("resume", ok=(0, 1))
    written = pipeline.index_writes()
    # ... and every change from before the repair is announced again, late (duplicates, a redrive)
    for body in early + late:
        stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=body)
    pipeline.drain()
    # Then none of them wrote anything: nothing older replaced what the index holds, nothing came back
    assert pipeline.index_writes() == written
    assert documents(pipeline) == before
    assert deleted not in before
    # ... and a new change is written over the newest version (its generation is above the index's)
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=edited, Body="見積書 第4版".encode())
    pipeline.drain()
    assert "第4版" in documents(pipeline)[edited][1]["content"]
    # ... and reconcile against the ledger finds nothing left to repair
    final = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0")
    assert (final["coverage_percent"], final["behind"], final["missing"], final["orphaned"]) == (100.0, 0, 0, 0)


# ---------------------------------------------------------------- (a) the index is deleted


def test_a_deleted_index_is_rebuilt_from_the_bucket_and_the_content_cache_without_ocr(pipeline: Pipeline) -> None:
    stack = pipeline.stack
    # Given an index in step with the bucket (a scan among the files, its pages OCR'd once)
    load(pipeline)
    before = documents(pipeline)
    assert pipeline.metrics["OcrPagesProcessed"] == 1
    pages, misses = pipeline.metrics["OcrPagesProcessed"], pipeline.metrics["ContentCacheMisses"]
    # When the index is deleted by mistake
    concrete = next(iter(stack.opensearch.indices.get_alias(name=stack.index)))
    stack.opensearch.indices.delete(index=concrete)
    # ... and the runbook is followed: backfill the whole bucket, let the pipeline drain, reconcile
    checkpoint = pipeline.env_file.parent / "rebuild.json"
    sent = pipeline.command("backfill", "--restart", "--checkpoint", str(checkpoint), "--no-progress")
    assert sent["enqueued"] == len(before)
    pipeline.drain()
    report = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0")
    # Then every document is back as it was — content, OCR text, who may read it — at a newer version
    assert (report["coverage_percent"], report["behind"]) == (100.0, 0)
    after = documents(pipeline)
    assert set(after) == set(before)
    kept = ("content", "ocr_status", "allow_principals", "etag", "content_sha256", "extraction_error")
    for key, (version, source) in after.items():
        assert version > before[key][0]
        assert {f: source.get(f) for f in kept} == {f: before[key][1].get(f) for f in kept}
    # ... and it cost bucket reads and cluster writes, not OCR: every content came from the cache
    assert pipeline.metrics["OcrPagesProcessed"] == pages
    assert pipeline.metrics["ContentCacheMisses"] == misses
    assert pipeline.metrics["ContentCacheHits"] >= len(before)


def test_a_worker_that_has_not_written_yet_never_creates_a_deleted_index(stack: Stack) -> None:
    """The short soak's drill failed once in a local CI run: a worker process started before the index was deleted
    wrote first, and its write made an index of the alias's name without the mapping (extraction_error as text,
    every document written there, the rebuilt index empty)."""

    from docindex.core.exceptions import TransientError
    from docindex.index.documents import IndexDocument
    from docindex.index.store import DocumentStore

    client = OpenSearch(hosts=[stack.engine_url], timeout=30)
    indexer = DocumentStore(client, stack.index)
    indexer.ensure()
    # Given a worker's store, ready (the index was there when it started) and not written through yet
    worker = DocumentStore(client, stack.index)
    worker.ensure(create=False)
    # When the index is deleted by mistake
    concrete = next(iter(client.indices.get_alias(name=stack.index)))
    client.indices.delete(index=concrete)
    # Then the worker's read says so and its write does not create an index of that name
    with pytest.raises(TransientError, match="does not exist"):
        worker.current("a" * 64)
    document = IndexDocument.for_object(bucket=stack.bucket, key="営業部/見積.txt", size=3)
    with pytest.raises(TransientError):
        worker.write("a" * 64, 1, document)
    assert not client.indices.exists(index=stack.index)
    # ... and the indexer's next read creates it again, with the mapping, behind the alias
    assert indexer.current("a" * 64) is None
    (mapping,) = client.indices.get_mapping(index=stack.index).values()
    assert mapping["mappings"]["properties"]["extraction_error"]["type"] == "keyword"
    assert next(iter(client.indices.get_alias(name=stack.index))) != stack.index
