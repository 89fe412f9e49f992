"""The OCR worker against moto server, a real OpenSearch node and real Tesseract: jobs queued by the real indexer."""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections.abc import Callable

import pytest

from devkit import samples
from docindex.index.search import search
from docindex.ingest.handoff import OcrJob
from tests.conftest import Stack
from tests.support.scans import CARD_INCHES, LAYOUT, REPORT_LINES
from tests.support.worker import WorkerFactory, metric_total, ocr_queue_depth, upload_and_index


def test_png_scan_becomes_searchable(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a scanned PNG the indexer has handed to the OCR queue
    key = "スキャン/業績報告書.png"
    upload_and_index(stack, key, samples.make_scan_png(REPORT_LINES, dpi=300, page=(8.27, 3.0), **LAYOUT))
    pending = stack.doc(key)
    assert pending is not None
    assert pending["_source"]["ocr_status"] == "pending"
    # When the worker runs
    worker = make_worker(stack)
    assert worker.poll_once(wait_seconds=1) == 1
    # Then the document holds the text, is marked done, and can be found by its words
    doc = stack.doc(key)
    assert doc is not None
    source = doc["_source"]
    assert source["ocr_status"] == "done"
    assert source["page_count"] == 1
    assert source["filename"] == "業績報告書.png"
    assert "extraction_error" not in source
    assert samples.char_accuracy("".join(REPORT_LINES), source["content"]) >= 0.95
    assert doc["_version"] == pending["_version"] + 1
    hits = search(stack.opensearch, stack.index, "経費削減")
    assert [h["key"] for h in hits] == [key]
    # And the job's message is gone (not waiting, not in the DLQ)
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []
    assert metric_total("OcrJobsCompleted") == 1
    assert metric_total("OcrPagesProcessed") == 1


def test_pdf_scan_pages_are_all_read(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a two-page scanned PDF, large enough that
    # the indexer does not read it and hands it over whole (reason too_large)
    key = "scans/議事録.pdf"
    pdf = samples.make_scan_pdf(
        [["第3回 経営会議 議事録", "売上目標を確認した"], ["次回は大阪支店で開催"]],
        dpi=200,
        page=(4.0, 4.0),
        **LAYOUT,
    )
    upload_and_index(stack, key, pdf, MAX_OBJECT_BYTES="1000")
    assert stack.doc(key)["_source"]["ocr_reason"] == "too_large"
    # When the worker runs
    worker = make_worker(stack)
    assert worker.poll_once(wait_seconds=1) == 1
    # Then both pages' words are in the document
    source = stack.doc(key)["_source"]
    assert source["ocr_status"] == "done"
    assert source["page_count"] == 2
    assert source["content_type"] == "application/pdf"
    assert "経営会議" in source["content"]
    assert "大阪支店" in source["content"]
    assert [h["key"] for h in search(stack.opensearch, stack.index, "議事録 大阪支店")] == [key]


def test_a_text_file_too_large_for_the_lambda_is_indexed_from_its_start(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given a Shift_JIS CSV the indexer hands over whole (above its MAX_OBJECT_BYTES), longer than
    # MAX_CONTENT_CHARS can hold
    key = "exports/売上明細.csv"
    body = "".join(f"{n},東京支店,売上明細の行\n" for n in range(20_000)).encode("cp932")
    upload_and_index(stack, key, body, MAX_OBJECT_BYTES="1000")
    pending = stack.doc(key)
    assert pending is not None
    assert pending["_source"]["ocr_reason"] == "too_large"
    # When a worker with the default WORKER_MAX_OBJECT_BYTES runs
    worker = make_worker(stack, MAX_CONTENT_CHARS="5000")
    assert worker.settings.max_object_bytes == 20 * 1024**3
    assert worker.poll_once(wait_seconds=1) == 1
    # Then the document holds the file's start, marked truncated, and the job is over
    doc = stack.doc(key)
    assert doc is not None
    source = doc["_source"]
    assert source["ocr_status"] == "done"
    assert source["content_type"] == "text/csv"
    # (a CSV reads as a table: a row without a header row above it is its cells, tab-separated)
    assert source["content"].startswith("0\t東京支店\t売上明細の行\n1\t東京支店")
    assert len(source["content"]) <= 5000
    assert "19999\t" not in source["content"]
    assert source["content_truncated"] is True
    assert "extraction_error" not in source
    assert [h["key"] for h in search(stack.opensearch, stack.index, "東京支店")] == [key]
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []


def test_an_office_file_above_the_in_memory_bound_is_failed_too_large(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a 2 MiB DOCX handed over whole, and a worker that reads at most 1 MiB of a file into memory
    key = "docs/大きな報告書.docx"
    package = io.BytesIO(samples.make_docx(["年次報告"]))
    with zipfile.ZipFile(package, "a", zipfile.ZIP_STORED) as zf:
        zf.writestr("word/media/padding.bin", random.Random(3).randbytes(2 * 1024 * 1024))
    upload_and_index(stack, key, package.getvalue(), MAX_OBJECT_BYTES="1000")
    worker = make_worker(stack, WORKER_MAX_IN_MEMORY_BYTES=str(1024 * 1024))
    # When the worker runs
    assert worker.poll_once(wait_seconds=1) == 1
    # Then the job ends (not retried, not dead-lettered): failed, too_large, typed, findable by name
    doc = stack.doc(key)
    assert doc is not None
    source = doc["_source"]
    assert source["ocr_status"] == "failed"
    assert source["extraction_error"] == "too_large"
    assert source["content_type"].endswith("wordprocessingml.document")
    assert "content" not in source
    assert [h["key"] for h in search(stack.opensearch, stack.index, "大きな報告書")] == [key]
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []


def test_corrupt_image_is_marked_failed_and_its_message_deleted(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a "PNG" that is not one
    key = "scans/壊れた画像.png"
    upload_and_index(stack, key, b"\x89PNG\r\n\x1a\n" + b"not really an image" * 20)
    # When the worker runs
    worker = make_worker(stack)
    assert worker.poll_once(wait_seconds=1) == 1
    # Then the file is still findable by name, marked failed with the reason; the message is gone
    source = stack.doc(key)["_source"]
    assert source["ocr_status"] == "failed"
    assert source["extraction_error"] == "corrupt"
    assert "content" not in source
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []
    assert metric_total("OcrJobsFailed") == 1


def test_transient_failure_leaves_the_message_for_the_redrive_policy(
    make_stack: Callable[..., Stack], make_worker: WorkerFactory
) -> None:
    # Given an OCR queue that dead-letters after 2 receives, and a worker whose ledger table is unreachable
    stack = make_stack(ocr_max_receive_count=2)
    key = "scans/retry.png"
    upload_and_index(stack, key, samples.make_scan_png(["再試行"], dpi=150, page=CARD_INCHES, **LAYOUT))
    worker = make_worker(stack, LEDGER_TABLE="no-such-table")
    # When it fails on every receive
    assert worker.poll_once(wait_seconds=1) == 1
    assert ocr_queue_depth(stack)["visible"] == 1  # not deleted: back at once (retry delay 0 here)
    assert worker.poll_once(wait_seconds=1) == 1
    assert worker.poll_once(wait_seconds=1) == 0  # the third receive finds it moved
    # Then SQS's redrive policy moved it to the DLQ, untouched, and the document still says pending
    dead = stack.messages("OCR_DLQ_URL")
    assert [OcrJob.from_json(m["Body"]).key for m in dead] == [key]
    assert stack.doc(key)["_source"]["ocr_status"] == "pending"
    assert metric_total("OcrJobsRetried") == 2


def test_poison_message_on_the_ocr_queue_is_not_deleted(
    make_stack: Callable[..., Stack], make_worker: WorkerFactory
) -> None:
    stack = make_stack(ocr_max_receive_count=1)
    stack.aws.sqs.send_message(QueueUrl=stack.env["OCR_QUEUE_URL"], MessageBody=json.dumps({"hello": "world"}))
    worker = make_worker(stack)
    assert worker.poll_once(wait_seconds=1) == 1
    assert worker.poll_once(wait_seconds=1) == 0
    assert [m["Body"] for m in stack.messages("OCR_DLQ_URL")] == ['{"hello": "world"}']


def test_worker_refuses_to_start_on_a_missing_queue(stack: Stack, make_worker: WorkerFactory) -> None:
    missing = stack.env["OCR_QUEUE_URL"] + "-missing"
    worker = make_worker(stack, OCR_QUEUE_URL=missing)
    with pytest.raises(RuntimeError, match="not usable"):
        worker.start()
