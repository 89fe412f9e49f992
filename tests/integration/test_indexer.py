"""The indexer against moto server and a real OpenSearch node: what ends up in the index and the queues."""

from __future__ import annotations

import json

import pytest

from devkit.messages import eventbridge, s3_notification, sns, sqs_event
from docindex.ingest.handoff import OcrJob
from tests.conftest import Stack, load_event
from tests.integration.conftest import build_indexer, invoke

SEQ1, SEQ2, SEQ3 = "0062A1B2C3D4E5F601", "0062A1B2C3D4E5F701", "0062A1B2C3D4E5F80100"


def put(stack: Stack, key: str, body: bytes) -> str:
    response = stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body)
    return str(response["ETag"]).strip('"')


@pytest.mark.parametrize("shape", ["s3", "eventbridge", "sns", "docindex"])
def test_every_message_shape_is_indexed(stack: Stack, indexer, shape: str) -> None:
    # Given an object whose key needs URL-decoding ('+' is a space, %2B a plus, Japanese escapes)
    key = f"{shape}/議事録 2026+Q1 (確定版).txt"
    put(stack, key, "第3回 経営会議 議事録: 売上目標を確認した".encode())
    body = {
        "s3": s3_notification(stack.bucket, key, sequencer=SEQ1),
        "eventbridge": eventbridge(stack.bucket, key, sequencer=SEQ1),
        "sns": sns(s3_notification(stack.bucket, key, sequencer=SEQ1)),
        "docindex": {"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"},
    }[shape]
    # When the indexer receives it
    failed = invoke(indexer, sqs_event(body))
    # Then the document is in the index under the decoded key, with its content
    assert failed == set()
    doc = stack.doc(key)
    assert doc is not None
    source = doc["_source"]
    assert source["key"] == key
    assert source["filename"] == "議事録 2026+Q1 (確定版).txt"
    assert source["extension"] == "txt"
    assert "経営会議" in source["content"]
    assert source["ocr_status"] == "none"


def test_s3_test_event_is_acknowledged_and_ignored(stack: Stack, indexer) -> None:
    event = load_event("sqs-s3-test-event.json")
    failed = invoke(indexer, event)
    assert failed == set()
    assert stack.count() == 0


def test_poison_message_fails_alone(stack: Stack, indexer) -> None:
    # Given a batch with two good records around three poison ones
    put(stack, "a.txt", b"alpha report")
    put(stack, "b.txt", b"bravo report")
    event = sqs_event(
        s3_notification(stack.bucket, "a.txt", sequencer=SEQ1),
        "not json at all",
        {"hello": "world"},
        {"Records": [{"eventSource": "aws:dynamodb"}]},
        s3_notification(stack.bucket, "b.txt", sequencer=SEQ1),
    )
    poison_ids = {r["messageId"] for r in event["Records"][1:4]}
    # When the batch is processed
    failed = invoke(indexer, event)
    # Then exactly the poison records are reported, and the good ones are indexed
    assert failed == poison_ids
    assert stack.doc("a.txt") is not None
    assert stack.doc("b.txt") is not None


def test_duplicate_notifications_in_both_shapes_are_written_once(stack: Stack, indexer) -> None:
    # Given one upload announced by an S3 notification AND by EventBridge (the incident)
    key = "dup/見積書.txt"
    etag = put(stack, key, "見積書 合計金額 120,000円".encode())
    s3_shape = s3_notification(stack.bucket, key, sequencer=SEQ1, etag=etag)
    eb_shape = eventbridge(stack.bucket, key, sequencer=SEQ1, etag=etag)
    # When both arrive in one batch, and the S3 shape again later (redrive: new messageId)
    assert invoke(indexer, sqs_event(s3_shape, eb_shape)) == set()
    first = stack.doc(key)
    assert invoke(indexer, sqs_event(s3_shape)) == set()
    # Then the document was written exactly once: same version, same sequence number
    again = stack.doc(key)
    assert first is not None
    assert again is not None
    assert first["_version"] == 1
    assert (again["_version"], again["_seq_no"]) == (first["_version"], first["_seq_no"])


def test_stale_delete_does_not_remove_newer_file(stack: Stack, indexer) -> None:
    # Given the newest create (SEQ2) is applied first
    key = "order/report.txt"
    put(stack, key, b"version two")
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ2))) == set()
    # When an older delete (SEQ1) arrives late
    stale_delete = s3_notification(stack.bucket, key, event="ObjectRemoved:Delete", sequencer=SEQ1)
    assert invoke(indexer, sqs_event(stale_delete)) == set()
    # Then the document stays
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["content"] == "version two"


def test_stale_create_does_not_resurrect_deleted_object(stack: Stack, indexer) -> None:
    key = "order/gone.txt"
    put(stack, key, b"still here in S3 for the stale create to read")
    newer_delete = s3_notification(stack.bucket, key, event="ObjectRemoved:Delete", sequencer=SEQ3)
    older_create = s3_notification(stack.bucket, key, sequencer=SEQ2)
    # The delete (newest) is applied, then the older create arrives
    assert invoke(indexer, sqs_event(newer_delete)) == set()
    assert invoke(indexer, sqs_event(older_create)) == set()
    assert stack.doc(key) is None


def test_newer_delete_removes_document(stack: Stack, indexer) -> None:
    key = "order/removed.txt"
    put(stack, key, b"soon gone")
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    assert stack.doc(key) is not None
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
    delete = eventbridge(
        stack.bucket, key, detail_type="Object Deleted", sequencer=SEQ2, deletion_type="Permanently Deleted"
    )
    assert invoke(indexer, sqs_event(delete)) == set()
    assert stack.doc(key) is None


def test_object_deleted_before_processing_is_skipped(stack: Stack, indexer) -> None:
    # Given a create event for an object that no longer exists
    event = sqs_event(s3_notification(stack.bucket, "vanished.txt", sequencer=SEQ1))
    # Then the record succeeds (NoSuchKey is a skip, not a failure) and nothing is indexed
    assert invoke(indexer, event) == set()
    assert stack.doc("vanished.txt") is None


def test_corrupt_pdf_is_indexed_by_name_with_extraction_error(stack: Stack, indexer) -> None:
    key = "壊れた/請求書.pdf"
    put(stack, key, b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref")
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["filename"] == "請求書.pdf"
    assert doc["_source"]["extraction_error"] == "corrupt"
    assert doc["_source"]["content_type"] == "application/pdf"
    assert "content" not in doc["_source"]


def test_image_only_pdf_is_queued_for_ocr(stack: Stack, indexer) -> None:
    from devkit.samples import make_scan_pdf

    key = "スキャン/契約書.pdf"
    put(stack, key, make_scan_pdf([["業務委託契約書"], ["署名欄"]], dpi=100))
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["ocr_status"] == "pending"
    assert doc["_source"]["ocr_reason"] == "scanned_pdf"
    assert doc["_source"]["page_count"] == 2
    jobs = [OcrJob.from_json(m["Body"]) for m in stack.messages("OCR_QUEUE_URL")]
    assert [(j.key, j.reason) for j in jobs] == [(key, "scanned_pdf")]


def test_office_documents_are_indexed_with_japanese_content(stack: Stack, indexer) -> None:
    from devkit.samples import make_docx, make_pdf, make_pptx, make_xlsx

    files = {
        "a/議事録.docx": make_docx(["本文"], textbox="テキストボックスの決定事項", footer="社外秘"),
        "a/見積.xlsx": make_xlsx({"見積": [["品名", "単価"], ["ノートPC", 128000]], "備考": [["納期", "二週間"]]}),
        "a/計画.pptx": make_pptx(["事業計画"], notes=["発表者ノートの補足"]),
        "a/報告.pdf": make_pdf(["四半期売上報告", "二ページ目"], "報告書タイトル"),
    }
    for key, data in files.items():
        put(stack, key, data)
    event = sqs_event(*(s3_notification(stack.bucket, k, sequencer=SEQ1) for k in files))
    assert invoke(indexer, event) == set()
    docs = {k: stack.doc(k)["_source"] for k in files}  # type: ignore[index]
    assert "テキストボックスの決定事項" in docs["a/議事録.docx"]["content"]
    assert "社外秘" in docs["a/議事録.docx"]["content"]
    assert "二週間" in docs["a/見積.xlsx"]["content"]
    assert "発表者ノートの補足" in docs["a/計画.pptx"]["content"]
    assert docs["a/報告.pdf"]["title"] == "報告書タイトル"
    assert docs["a/報告.pdf"]["page_count"] == 2
    assert docs["a/見積.xlsx"]["content_type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def test_image_is_handed_to_the_ocr_queue(stack: Stack, indexer) -> None:
    # A PNG header is enough: images are never decoded in the Lambda
    key = "scans/名刺.png"
    put(stack, key, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["ocr_status"] == "pending"
    jobs = [OcrJob.from_json(m["Body"]) for m in stack.messages("OCR_QUEUE_URL")]
    assert [(j.key, j.reason, j.generation) for j in jobs] == [(key, "image", 1)]


def test_large_object_is_handed_off_without_being_read(stack: Stack) -> None:
    indexer = build_indexer(stack, MAX_OBJECT_BYTES="1024")
    key = "big/archive.txt"
    put(stack, key, b"x" * 4096)
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["ocr_status"] == "pending"
    assert doc["_source"]["size"] == 4096
    jobs = [json.loads(m["Body"]) for m in stack.messages("OCR_QUEUE_URL")]
    assert [(j["key"], j["reason"]) for j in jobs] == [(key, "too_large")]


def test_opensearch_unreachable_fails_every_record(stack: Stack) -> None:
    from opensearchpy import OpenSearch

    from devkit.local.servers import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    indexer = build_indexer(stack, OPENSEARCH_ENDPOINT=dead, opensearch=OpenSearch(hosts=[dead], timeout=1))
    put(stack, "a.txt", b"alpha")
    event = sqs_event(
        s3_notification(stack.bucket, "a.txt", sequencer=SEQ1),
        s3_notification(stack.bucket, "a.txt", sequencer=SEQ2),
    )
    failed = invoke(indexer, event, timeout=5)
    assert failed == {r["messageId"] for r in event["Records"]}


def test_a_file_deleted_right_after_the_backfill_listed_it_leaves_no_document(stack: Stack, indexer) -> None:
    # Given an indexed file
    key = "backfill/消える.txt"
    put(stack, key, "まもなく削除".encode())
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    # ... listed by a backfill at 09:00:05.4, then deleted at 09:00:05.7. EventBridge
    # times have whole seconds: its event says 09:00:05, before the listing.
    backfill = {"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"}
    backfill["event_time"] = "2026-11-20T09:00:05.400000Z"
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
    delete = eventbridge(stack.bucket, key, detail_type="Object Deleted", sequencer=SEQ2, time="2026-11-20T09:00:05Z")
    delete["detail"]["deletion-type"] = "Permanently Deleted"
    # When the backfill's change is processed first (it finds the file gone), then the delete
    assert invoke(indexer, sqs_event(backfill)) == set()
    assert invoke(indexer, sqs_event(delete)) == set()
    # Then no document is left for the deleted file
    assert stack.doc(key) is None


def test_a_file_changed_right_after_the_backfill_read_it_gets_its_new_content(stack: Stack, indexer) -> None:
    # Given a file indexed from its S3 notification
    key = "backfill/更新される.txt"
    put(stack, key, "第1版".encode())
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    # ... then listed by a backfill at 09:00:05.4 and re-read (still the first version)
    backfill = {"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"}
    backfill["event_time"] = "2026-11-20T09:00:05.400000Z"
    assert invoke(indexer, sqs_event(backfill)) == set()
    # When the file is overwritten at 09:00:05.7, announced by EventBridge (whole seconds: 09:00:05)
    etag = put(stack, key, "第2版".encode())
    update = eventbridge(stack.bucket, key, sequencer=SEQ2, etag=etag, time="2026-11-20T09:00:05Z")
    assert invoke(indexer, sqs_event(update)) == set()
    # Then the index holds the second version: the event may be later than the listing, so it is applied
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["etag"] == etag
    assert "第2版" in doc["_source"]["content"]


def test_parts_left_out_are_on_the_document_and_counted(stack: Stack, indexer) -> None:
    from docindex.core.observability import metrics
    from tests.unit.extract.test_spreadsheet import _three_sheets

    metrics.clear_metrics()
    # Given a workbook with an ordinary sheet, a sheet carrying a DOCTYPE and a sheet too large to read
    key = "経理/売上集計.xlsx"
    put(stack, key, _three_sheets())
    # When the indexer indexes it
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer=SEQ1))) == set()
    # Then the ordinary sheet is searchable and the document says what was left out, and why
    doc = stack.doc(key)
    assert doc is not None
    source = doc["_source"]
    assert "ノートPC" in source["content"]
    assert source.get("extraction_error") is None
    assert source["content_truncated"] is True
    assert [entry.split(":")[0] for entry in source["content_dropped"]] == ["sheet '危険'", "sheet '巨大'"]
    # ... and the metric counts the two parts
    assert sum(metrics.metric_set.get("ContentPartsDropped", {}).get("Value", [])) == 2


def test_the_idempotency_store_is_configured_before_any_record_runs(stack: Stack) -> None:
    # Powertools configures its store on each call, marking it configured before it compiles the
    # key expression: records of a cold start running at once (INDEXER_CONCURRENCY threads) could
    # find it half-done and fail with "'NoneType' object has no attribute 'search'" (seen under
    # load in `make demo`). The indexer configures it once, before any thread starts.
    indexer = build_indexer(stack)
    store = indexer.idempotency_store
    assert store.configured
    assert store.event_key_compiled_jmespath is not None
    assert store._get_hashed_idempotency_key({"dedupe_key": "docs\x1fa.txt"})  # keyed by the change
