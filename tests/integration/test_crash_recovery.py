"""An invocation killed after its writes landed, before Powertools recorded the changes as done.

Lambda kills a timed-out invocation outright: the batch is not acknowledged,
its messages come back after the visibility timeout, and each change's
idempotency record is left ``INPROGRESS`` until its expiry (the invocation's
timeout). The redelivered change must not be written a second time, and a
document the OCR worker has finished must not fall back to ``pending``.
"""

from __future__ import annotations

import time
from typing import Any

from devkit.messages import s3_notification, sqs_event
from devkit.samples import make_scan_png
from docindex.core.changes import doc_id
from docindex.ingest.ledger import Ledger
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke


def crash_before_completion(stack: Stack) -> int:
    """Leave every completed change as a crash would: INPROGRESS, its lock expired."""
    ddb, table = stack.aws.dynamodb, stack.env["IDEMPOTENCY_TABLE"]
    past = str(int((time.time() - 60) * 1000))
    items = ddb.scan(TableName=table).get("Items", [])
    done = [i for i in items if i.get("status", {}).get("S") == "COMPLETED"]
    for item in done:
        ddb.update_item(
            TableName=table,
            Key={"id": item["id"]},
            UpdateExpression="SET #s = :p, in_progress_expiration = :past REMOVE #d",
            ExpressionAttributeNames={"#s": "status", "#d": "data"},
            ExpressionAttributeValues={":p": {"S": "INPROGRESS"}, ":past": {"N": past}},
        )
    return len(done)


def indexed(stack: Stack, key: str) -> dict[str, Any]:
    doc = stack.doc(key)
    assert doc is not None
    return doc


def ocr_jobs(stack: Stack) -> list[dict[str, Any]]:
    return stack.messages("OCR_QUEUE_URL", delete=True)


def test_a_change_written_before_the_crash_is_not_written_again(stack: Stack) -> None:
    indexer = build_indexer(stack)
    stack.aws.s3.put_object(Bucket=stack.bucket, Key="crash/議事録.txt", Body="第1回 議事録".encode())
    backfill = {
        "docindex": "change",
        "bucket": stack.bucket,
        "key": "crash/議事録.txt",
        "action": "created",
        "event_time": "2026-11-20T09:00:05.123456Z",
    }
    event = sqs_event(s3_notification(stack.bucket, "crash/議事録.txt", sequencer="00F1"), backfill)
    # Given an invocation that wrote both changes and died before recording them
    assert invoke(indexer, event) == set()
    before = indexed(stack, "crash/議事録.txt")
    assert crash_before_completion(stack) == 2
    # When the batch comes back after the visibility timeout
    assert invoke(indexer, event) == set()
    # Then nothing is written again: same version, same sequence number
    after = indexed(stack, "crash/議事録.txt")
    assert (after["_version"], after["_seq_no"]) == (before["_version"], before["_seq_no"])


def test_a_finished_ocr_result_is_not_replaced_by_pending(stack: Stack) -> None:
    indexer = build_indexer(stack)
    key = "crash/請求書.png"
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=make_scan_png(["請求書"], dpi=100))
    event = sqs_event(s3_notification(stack.bucket, key, sequencer="00F2"))
    # Given the change was handed to OCR (pending at generation g) ...
    assert invoke(indexer, event) == set()
    pending = indexed(stack, key)
    assert pending["_source"]["ocr_status"] == "pending"
    assert len(ocr_jobs(stack)) == 1
    # ... the worker committed and wrote its result at g + 1 ...
    generation = pending["_version"]
    ledger = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    assert ledger.commit_ocr(doc_id(stack.bucket, key), generation, when="2026-11-20T09:01:00Z").value == "committed"
    done = {**pending["_source"], "ocr_status": "done", "content": "請求書"}
    stack.opensearch.index(
        index=stack.index, id=doc_id(stack.bucket, key), body=done, version=generation + 1, version_type="external_gte"
    )
    # ... and the indexer's invocation had died before recording the change as done
    crash_before_completion(stack)
    # When the change is delivered again
    assert invoke(indexer, event) == set()
    # Then the OCR text stays, and no second OCR job is queued
    after = indexed(stack, key)
    assert after["_source"]["ocr_status"] == "done"
    assert after["_version"] == generation + 1
    assert ocr_jobs(stack) == []


def test_an_ocr_job_lost_in_the_crash_is_queued_again_without_rewriting(stack: Stack) -> None:
    indexer = build_indexer(stack)
    key = "crash/領収書.png"
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=make_scan_png(["領収書"], dpi=100))
    event = sqs_event(s3_notification(stack.bucket, key, sequencer="00F3"))
    # Given the pending document was written but the invocation died before its OCR job was sent
    assert invoke(indexer, event) == set()
    before = indexed(stack, key)
    ocr_jobs(stack)  # (the job never made it)
    crash_before_completion(stack)
    # When the change is delivered again
    assert invoke(indexer, event) == set()
    # Then the job for the same generation is queued, and the document is not written again
    jobs = ocr_jobs(stack)
    assert len(jobs) == 1
    assert f'"generation": {before["_version"]}' in jobs[0]["Body"]
    after = indexed(stack, key)
    assert (after["_version"], after["_seq_no"]) == (before["_version"], before["_seq_no"])
