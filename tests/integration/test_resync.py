"""A file server's S3 traffic: re-syncs, renames, copies, lifecycle deletes, archived objects (issue 14).

Real indexer and OCR worker against moto server and a real OpenSearch node. Reads of the documents bucket are
counted by a thin wrapper around the real boto3 client: what it counts is what S3 would bill.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from devkit import samples
from devkit.messages import eventbridge, s3_notification, sqs_event
from docindex.index.search import search
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke
from tests.support.scans import CARD_INCHES, LAYOUT, REPORT_LINES
from tests.support.worker import WorkerFactory, metric_total, ocr_queue_depth

SEQ = ["0062A1B2C3D4E5F6%02d" % i for i in range(10)]  # noqa: UP031 - sequencer-shaped


class CountingS3:
    """The real S3 client, counting GetObject calls and body bytes per bucket."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.gets: Counter[str] = Counter()
        self.keys: Counter[str] = Counter()

    def get_object(self, **params: Any) -> Any:
        self.gets[params["Bucket"]] += 1
        self.keys[params["Key"]] += 1
        return self._client.get_object(**params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def counting_indexer(stack: Stack) -> tuple[Any, CountingS3]:
    indexer = build_indexer(stack)
    counting = CountingS3(stack.aws.s3)
    indexer.store._s3 = counting  # the ObjectStore reads the documents bucket through it
    return indexer, counting


def upload(stack: Stack, key: str, body: bytes, *, sequencer: str, **extra: Any) -> dict[str, Any]:
    """Put the object and return its S3 notification (with ETag and size, as S3 sends them)."""
    etag = stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body, **extra)["ETag"].strip('"')
    return s3_notification(stack.bucket, key, sequencer=sequencer, etag=etag, size=len(body))


def test_an_unchanged_reupload_refreshes_the_identity_without_reading_the_body(stack: Stack) -> None:
    # Given a file indexed once
    key = "経理/2026/請求書一覧.txt"
    body = "請求書一覧 株式会社サンプル 合計 1,200,000円".encode()
    indexer, counting = counting_indexer(stack)
    assert invoke(indexer, sqs_event(upload(stack, key, body, sequencer=SEQ[1]))) == set()
    first = stack.doc(key)
    assert first is not None
    assert counting.gets[stack.bucket] == 1
    # When a sync task re-runs and rewrites the very same bytes (a new event, a newer sequencer)
    again = upload(stack, key, body, sequencer=SEQ[2])
    assert invoke(indexer, sqs_event(again)) == set()
    # Then the body was not read again, and the document is the same content at the new identity
    assert counting.gets[stack.bucket] == 1
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_version"] == first["_version"] + 1
    assert doc["_source"]["sequencer"].startswith(SEQ[2])
    assert doc["_source"]["content"] == first["_source"]["content"]
    assert doc["_source"]["content_sha256"] == first["_source"]["content_sha256"]
    assert metric_total("UnchangedContentSkipped") == 1
    # And a real change of content is read, extracted and indexed as usual
    changed = upload(stack, key, "請求書一覧 訂正版 合計 1,250,000円".encode(), sequencer=SEQ[3])
    assert invoke(indexer, sqs_event(changed)) == set()
    assert counting.gets[stack.bucket] == 2
    doc = stack.doc(key)
    assert doc is not None
    assert "訂正版" in doc["_source"]["content"]
    assert doc["_source"]["content_sha256"] != first["_source"]["content_sha256"]


@pytest.mark.parametrize("ordered_by", ["sequencer", "event_time"])
@pytest.mark.parametrize("delete_first", [True, False], ids=["delete-delivered-first", "in-order"])
def test_a_reupload_then_renamed_ends_as_s3_ordered_it_whichever_arrives_first(
    stack: Stack, ordered_by: str, delete_first: bool
) -> None:
    # The soak's re-sync phase once failed here (docs/reliability.md): a file re-uploaded unchanged
    # and then renamed, whose delete was delivered before the re-upload. By S3's order the re-upload
    # is older than the delete: skipped as stale, it reads nothing and cannot bring the file back.
    key = "経理部/請求書+見積書/a&b (copy) 00020.txt"
    moved = "経理部/請求書+見積書/移動済み moved/a&b (copy) 00020.txt"
    body = "請求書 a&b 合計 88,000円".encode()
    indexer, counting = counting_indexer(stack)

    def announce(name: str, step: int, *, event: str = "ObjectCreated:Put", etag: str | None = None) -> Any:
        order: dict[str, Any] = (
            {"sequencer": SEQ[step]} if ordered_by == "sequencer" else {"time": f"2026-11-20T09:00:0{step}.000Z"}
        )
        size = len(body) if etag else None
        return s3_notification(stack.bucket, name, event=event, etag=etag, size=size, **order)

    # Given a file indexed once
    etag = stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body)["ETag"].strip('"')
    assert invoke(indexer, sqs_event(announce(key, 1, etag=etag))) == set()
    assert counting.keys[key] == 1
    # When a sync task re-uploads the same bytes, then the file is renamed (a copy, then a delete)
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body)
    stack.aws.s3.copy_object(Bucket=stack.bucket, Key=moved, CopySource={"Bucket": stack.bucket, "Key": key})
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
    reupload = announce(key, 2, etag=etag)
    copy = announce(moved, 3, event="ObjectCreated:Copy", etag=etag)
    delete = announce(key, 4, event="ObjectRemoved:Delete")
    # ... and the notifications arrive in S3's order, or the delete before the re-upload
    for message in [delete, reupload, copy] if delete_first else [reupload, copy, delete]:
        assert invoke(indexer, sqs_event(message)) == set()
    # Then the renamed file is gone under its old name and found under its new one, from the cache
    assert stack.doc(key) is None
    doc = stack.doc(moved)
    assert doc is not None
    assert "合計 88,000円" in doc["_source"]["content"]
    assert metric_total("ContentCacheHits") == 1
    # ... and the re-upload read no body: unchanged when it came first, stale when the delete did
    assert counting.keys[key] == 1
    assert metric_total("UnchangedContentSkipped") == (0 if delete_first else 1)
    assert metric_total("StaleEventsSkipped") == (1 if delete_first else 0)


class CountingGets:
    """The real OpenSearch client, counting real-time GETs of single documents (not the once-per-process read
    that learns whether the index name is an alias: ``DocumentStore.ensure``)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.gets = 0

    def get(self, **params: Any) -> Any:
        from docindex.index.store import PROBE_ID

        self.gets += params.get("id") != PROBE_ID
        return self._client.get(**params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_first_seen_object_is_indexed_without_asking_the_index_whether_it_changed(stack: Stack) -> None:
    # A backfill of millions of new files: the ledger has never seen them, so the unchanged check
    # (a real-time GET per create) has nothing to find and is not made.
    indexer, counting = counting_indexer(stack)
    gets = CountingGets(indexer.documents.client)
    indexer.documents.client = gets
    key, body = "総務/2026/備品台帳.txt", "備品台帳 ノートPC 12台".encode()
    assert invoke(indexer, sqs_event(upload(stack, key, body, sequencer=SEQ[1]))) == set()
    assert gets.gets == 0
    doc = stack.doc(key)
    assert doc is not None
    assert "備品台帳" in doc["_source"]["content"]
    # A second announcement of the same bytes asks, and skips the body.
    assert invoke(indexer, sqs_event(upload(stack, key, body, sequencer=SEQ[2]))) == set()
    assert gets.gets >= 1
    assert counting.gets[stack.bucket] == 1
    assert metric_total("UnchangedContentSkipped") == 1


def test_a_renamed_scan_is_indexed_from_the_cache_with_its_text_and_no_ocr_job(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given a scan indexed and OCR'd under its first name
    old, new = "スキャン/契約書.png", "スキャン/2026年度/契約書.png"
    scan = samples.make_scan_png(REPORT_LINES[:2], dpi=300, page=CARD_INCHES, **LAYOUT)
    indexer, _counting = counting_indexer(stack)
    assert invoke(indexer, sqs_event(upload(stack, old, scan, sequencer=SEQ[1]))) == set()
    assert make_worker(stack).poll_once(wait_seconds=1) == 1
    recognised = stack.doc(old)
    assert recognised is not None
    assert recognised["_source"]["ocr_status"] == "done"
    assert metric_total("OcrPagesProcessed") == 1
    queued_before = metric_total("OcrJobsQueued")
    # When the folder is renamed: a delete of the old key and a create of the new one
    stack.aws.s3.copy_object(Bucket=stack.bucket, Key=new, CopySource={"Bucket": stack.bucket, "Key": old})
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=old)
    etag = stack.aws.s3.head_object(Bucket=stack.bucket, Key=new)["ETag"].strip('"')
    renamed = sqs_event(
        s3_notification(stack.bucket, old, event="ObjectRemoved:Delete", sequencer=SEQ[2]),
        s3_notification(stack.bucket, new, event="ObjectCreated:Copy", sequencer=SEQ[2], etag=etag, size=len(scan)),
    )
    assert invoke(indexer, renamed) == set()
    # Then the new key holds the OCR text, done, and no OCR job was queued (nor any page OCR'd)
    assert stack.doc(old) is None
    doc = stack.doc(new)
    assert doc is not None
    source = doc["_source"]
    assert source["ocr_status"] == "done"
    assert source["content"] == recognised["_source"]["content"]
    assert source["content_sha256"] == recognised["_source"]["content_sha256"]
    assert metric_total("OcrJobsQueued") == queued_before
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert metric_total("OcrPagesProcessed") == 1
    assert metric_total("ContentCacheHits") >= 1
    hits = search(stack.opensearch, stack.index, "株式会社サンプル")
    assert [h["key"] for h in hits] == [new]


def test_a_worker_given_a_scan_it_recognised_before_runs_no_page(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a scan recognised once, and the same bytes queued again under another key (as a
    # too-large file is: the indexer does not read it, the worker does)
    scan = samples.make_scan_png(REPORT_LINES[2:3], dpi=300, page=CARD_INCHES, **LAYOUT)
    indexer = build_indexer(stack)
    assert invoke(indexer, sqs_event(upload(stack, "a/scan.png", scan, sequencer=SEQ[1]))) == set()
    worker = make_worker(stack)
    assert worker.poll_once(wait_seconds=1) == 1
    small = build_indexer(stack, MAX_OBJECT_BYTES="100")
    assert invoke(small, sqs_event(upload(stack, "b/scan.png", scan, sequencer=SEQ[1]))) == set()
    pending = stack.doc("b/scan.png")
    assert pending is not None
    assert pending["_source"]["ocr_status"] == "pending"
    # When the worker takes its job
    assert worker.poll_once(wait_seconds=1) == 1
    # Then the text comes from the cache: done, searchable, and still one page OCR'd in all
    doc = stack.doc("b/scan.png")
    assert doc is not None
    assert doc["_source"]["ocr_status"] == "done"
    assert doc["_source"]["content"] == stack.doc("a/scan.png")["_source"]["content"]  # type: ignore[index]
    assert metric_total("OcrPagesProcessed") == 1


def test_copies_are_collapsed_in_search_with_where_else_they_are(stack: Stack) -> None:
    # Given the same quotation copied into three folders, and a different document
    quote = "御見積書 ノートパソコン 10台 合計 1,500,000円".encode()
    keys = ["営業部/見積.txt", "経理/見積 (コピー).txt", "総務/2026/見積.txt"]
    indexer = build_indexer(stack)
    for key in keys:  # one after another, as copies are made
        assert invoke(indexer, sqs_event(upload(stack, key, quote, sequencer=SEQ[1]))) == set()
    other_body = upload(stack, "営業部/別件見積.txt", "御見積書 プリンター 2台".encode(), sequencer=SEQ[1])
    assert invoke(indexer, sqs_event(other_body)) == set()
    # When searching with and without collapsing (once the index has refreshed, as a person searches later)
    stack.opensearch.indices.refresh(index=stack.index)
    plain = search(stack.opensearch, stack.index, "御見積書")
    collapsed = search(stack.opensearch, stack.index, "御見積書", collapse=True)
    # Then every copy is a hit without it, and one hit naming the other two copies with it
    assert len(plain) == 4
    assert len(collapsed) == 2
    (copy,) = [h for h in collapsed if h["key"] in keys]
    assert sorted([copy["key"], *(where.split("/", 3)[3] for where in copy["also_in"])]) == sorted(keys)
    (other,) = [h for h in collapsed if h["key"] not in keys]
    assert other["also_in"] == []
    # And only the first copy was extracted: the other two came from the cache
    assert metric_total("ContentCacheHits") == 2


def test_collapse_keeps_documents_without_a_content_hash_apart(stack: Stack) -> None:
    # Given two different documents indexed before content_sha256 existed (no hash)
    for name in ("a", "b"):
        stack.opensearch.index(
            index=stack.index,
            id=name,
            body={"bucket": stack.bucket, "key": f"{name}.txt", "filename": f"{name}.txt", "content": "議事録 旧"},
        )
    stack.opensearch.indices.refresh(index=stack.index)
    # Then collapsing does not merge them
    assert sorted(h["key"] for h in search(stack.opensearch, stack.index, "議事録", collapse=True)) == [
        "a.txt",
        "b.txt",
    ]


@pytest.mark.parametrize("shape", ["s3", "s3-delete-marker", "eventbridge"])
def test_a_lifecycle_expiration_removes_the_document(stack: Stack, shape: str) -> None:
    # Given an indexed file
    key = "一時/古い報告.txt"
    indexer = build_indexer(stack)
    assert invoke(indexer, sqs_event(upload(stack, key, "古い報告書".encode(), sequencer=SEQ[1]))) == set()
    assert stack.doc(key) is not None
    # When a lifecycle rule expires it (S3 deletes it and announces it in the bucket's notification shape)
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
    expiration = {
        "s3": s3_notification(stack.bucket, key, event="LifecycleExpiration:Delete", sequencer=SEQ[2]),
        "s3-delete-marker": s3_notification(
            stack.bucket, key, event="LifecycleExpiration:DeleteMarkerCreated", sequencer=SEQ[2]
        ),
        "eventbridge": eventbridge(
            stack.bucket,
            key,
            detail_type="Object Deleted",
            deletion_type="Permanently Deleted",
            reason="Lifecycle Expiration",
            sequencer=SEQ[2],
            time="2026-11-20T09:10:00Z",
        ),
    }[shape]
    # Then it is applied (not poison) and the document is gone
    assert invoke(indexer, sqs_event(expiration)) == set()
    assert stack.doc(key) is None
    assert metric_total("PoisonMessages") == 0


@pytest.mark.parametrize("shape", ["s3", "eventbridge"])
def test_an_archived_object_is_indexed_by_name_once_and_reindexed_on_restore(stack: Stack, shape: str) -> None:
    # Given an object in Glacier Flexible Retrieval
    key = "アーカイブ/2019/決算報告.txt"
    body = "2019年度 決算報告 売上高".encode()
    indexer, counting = counting_indexer(stack)
    created = upload(stack, key, body, sequencer=SEQ[1], StorageClass="GLACIER")
    # When its create arrives
    assert invoke(indexer, sqs_event(created)) == set()
    # Then one attempt indexed it by name with extraction_error archived (the record succeeded: no retries)
    assert counting.gets[stack.bucket] == 1
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["extraction_error"] == "archived"
    assert "content" not in doc["_source"]
    assert [h["key"] for h in search(stack.opensearch, stack.index, "決算報告")] == [key]
    assert metric_total("ObjectsArchived") == 1
    # When it is restored and S3 says so
    stack.aws.s3.restore_object(Bucket=stack.bucket, Key=key, RestoreRequest={"Days": 1})
    restored = {
        "s3": s3_notification(
            stack.bucket, key, event="ObjectRestore:Completed", time="2026-11-21T10:00:00.000Z", size=len(body)
        ),
        "eventbridge": eventbridge(
            stack.bucket,
            key,
            detail_type="Object Restore Completed",
            reason="",
            time="2026-11-21T10:00:00Z",
            size=len(body),
        ),
    }[shape]
    assert invoke(indexer, sqs_event(restored)) == set()
    # Then its content is indexed
    doc = stack.doc(key)
    assert doc is not None
    assert "extraction_error" not in doc["_source"]
    assert "売上高" in doc["_source"]["content"]


def test_a_stuck_pending_document_is_found_and_repaired_by_reconcile(
    stack: Stack, make_worker: WorkerFactory, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import time

    from docindex.cli import main
    from docindex.ops.envfile import write_env_file

    # Given a scan whose OCR job died (gone from the OCR queue: dead-lettered and expired)
    key = "スキャン/止まった.png"
    scan = samples.make_scan_png(REPORT_LINES[3:4], dpi=300, page=CARD_INCHES, **LAYOUT)
    assert invoke(build_indexer(stack), sqs_event(upload(stack, key, scan, sequencer=SEQ[1]))) == set()
    assert len(stack.messages("OCR_QUEUE_URL", delete=True)) == 1
    env_file = tmp_path / "docindex.env"
    write_env_file(env_file, stack.settings_env())
    time.sleep(1.2)  # older than the threshold below

    def reconcile(*extra: str) -> tuple[int, dict[str, Any]]:
        code = main(["reconcile", "--env-file", str(env_file), "--json", "--pending-after", "1", *extra])
        return code, json.loads(capsys.readouterr().out)

    # When reconcile runs, it reports it (the bucket/index merge alone counts it in sync)
    code, report = reconcile()
    assert report["in_step"] is True
    assert report["pending_ocr"]["stuck"] == 1
    assert report["pending_ocr"]["samples"][0]["key"] == key
    assert code == 1
    # When reconcile --fix runs, the object is announced again on the ingest queue (the OCR queue admits
    # only the stack's roles), the indexer hands it to OCR and the worker completes the document
    code, report = reconcile("--fix")
    assert report["pending_ocr"]["requeued"] == 1
    assert stack.messages("OCR_QUEUE_URL") == []
    bodies = [json.loads(m["Body"]) for m in stack.messages("INGEST_QUEUE_URL", delete=True)]
    (announced,) = [body for body in bodies if body.get("reason") == "reconcile"]  # besides S3's own events
    assert (announced["key"], announced["action"]) == (key, "created")
    assert invoke(build_indexer(stack), sqs_event(announced)) == set()
    assert make_worker(stack).poll_once(wait_seconds=1) == 1
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["ocr_status"] == "done"
    # Then the next reconcile finds nothing pending
    code, report = reconcile()
    assert report["pending_ocr"]["stuck"] == 0
    assert report["distinct_contents"] == 1
    assert code == 0
