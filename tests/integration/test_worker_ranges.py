"""Long scans as page-range jobs: any worker takes a range, the last one to land writes the document once.

Real parts: the indexer queues the job, two workers (moto's SQS, DynamoDB and S3, a real OpenSearch node,
real Tesseract) split it, read the ranges and assemble the document.

These tests are about the ranges, not the reading: the workers read with Tesseract
(``OCR_ENGINE=tesseract``), 0.2 s of CPU for one of these pages where PP-OCR, the default engine,
takes 0.6 s; what PP-OCR reads is tested in test_ocr_real_pages.py and test_ocr_defects.py.
"""

from __future__ import annotations

import json

from devkit.samples import make_scan_pdf
from docindex.core.changes import doc_id
from docindex.ingest.ledger import Ledger
from tests.conftest import Stack
from tests.support.scans import LAYOUT
from tests.support.worker import (
    SEQ,
    WorkerFactory,
    metric_total,
    ocr_queue_depth,
    source_of,
    upload_and_index,
)

# One word a page, so the document shows whether the pages came back in order.
WORDS = ["請求書", "見積書", "契約書", "議事録", "報告書", "申請書"]
RANGES = {"WORKER_RANGE_PAGES": "2", "WORKER_CONCURRENCY": "1", "OCR_ENGINE": "tesseract"}


def six_page_scan() -> bytes:
    return make_scan_pdf([[f"{word}の内容を確認しました。"] for word in WORDS], dpi=300, **LAYOUT)


def range_parts(stack: Stack) -> list[str]:
    listed = stack.aws.s3.list_objects_v2(Bucket=stack.env["CONTENT_CACHE_BUCKET"], Prefix="ocr-ranges/")
    return [item["Key"] for item in listed.get("Contents", [])]


def test_a_long_scan_is_read_in_page_ranges_by_several_workers_and_written_once_in_order(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given a six-page scan queued for OCR, and two workers that split above two pages
    key = "スキャン/契約書一式.pdf"
    upload_and_index(stack, key, six_page_scan())
    pending = stack.doc(key)
    assert pending is not None
    first, second = make_worker(stack, **RANGES), make_worker(stack, **RANGES)
    # When the first worker takes the job, it queues three page-range jobs instead of reading
    assert first.poll_once(wait_seconds=1) == 1
    assert ocr_queue_depth(stack) == {"visible": 3, "in_flight": 0}
    assert source_of(stack, key)["ocr_status"] == "pending"
    # and the two workers take the ranges as they come
    finished = {"first": 0, "second": 0}
    for _ in range(6):
        finished["second"] += second.poll_once(wait_seconds=1)
        finished["first"] += first.poll_once(wait_seconds=1)
        if ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}:
            break
    assert finished["first"] >= 1
    assert finished["second"] >= 1
    assert finished["first"] + finished["second"] == 3
    # Then the document holds every page, in page order, written once after the last range landed
    doc = stack.doc(key)
    assert doc is not None
    source = doc["_source"]
    assert source["ocr_status"] == "done"
    assert source["page_count"] == 6
    assert "extraction_error" not in source
    positions = [source["content"].find(word) for word in WORDS]
    assert all(position >= 0 for position in positions), source["content"]
    assert positions == sorted(positions)
    assert doc["_version"] == pending["_version"] + 1
    # and nothing is left: no message, no DLQ entry, no stored part
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []
    assert range_parts(stack) == []
    assert metric_total("OcrJobsSplit") == 1
    assert metric_total("OcrRangesCompleted") == 3
    # every page counted once, by the range that read it
    assert metric_total("OcrPagesProcessed") == 6


def test_a_range_delivered_again_after_the_document_was_written_changes_nothing(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given a scan read in ranges to the end, with a copy of the last range's message kept
    key = "スキャン/重複.pdf"
    upload_and_index(stack, key, six_page_scan())
    worker = make_worker(stack, **RANGES)
    assert worker.poll_once(wait_seconds=1) == 1
    bodies = [message["Body"] for message in stack.messages("OCR_QUEUE_URL")]
    assert sorted(json.loads(body)["first_page"] for body in bodies) == [0, 2, 4]
    for _ in range(3):
        worker.poll_once(wait_seconds=1)
    written = stack.doc(key)
    assert written is not None
    assert written["_source"]["ocr_status"] == "done"
    # When every range is delivered once more (SQS delivers at least once)
    for body in bodies:
        stack.aws.sqs.send_message(QueueUrl=stack.env["OCR_QUEUE_URL"], MessageBody=body)
    for _ in range(3):
        worker.poll_once(wait_seconds=1)
    # Then the document is untouched and the messages are gone
    again = stack.doc(key)
    assert again is not None
    assert again["_version"] == written["_version"]
    assert again["_source"]["content"] == written["_source"]["content"]
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []


def test_ranges_of_a_file_replaced_meanwhile_are_dropped(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a scan split into ranges, one of them already read and stored
    key = "スキャン/差し替え.pdf"
    upload_and_index(stack, key, six_page_scan())
    worker = make_worker(stack, **RANGES)
    assert worker.poll_once(wait_seconds=1) == 1
    assert worker.poll_once(wait_seconds=1) == 1
    ledger = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    split_generation = ledger.get(doc_id(stack.bucket, key))
    assert split_generation is not None
    # When the file is replaced by a text file before the other ranges run (a newer change)
    upload_and_index(stack, key, "差し替え後の本文です".encode(), sequencer=SEQ[5])
    replaced = stack.doc(key)
    assert replaced is not None
    for _ in range(3):
        worker.poll_once(wait_seconds=1)
    # Then the old scan's ranges wrote nothing: the newer change's document stands
    after = stack.doc(key)
    assert after is not None
    assert after["_version"] == replaced["_version"]
    assert "差し替え後" in after["_source"]["content"]
    assert not any(word in after["_source"]["content"] for word in WORDS)
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert metric_total("OcrJobsStale") == 2
