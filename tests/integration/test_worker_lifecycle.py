"""Long jobs: heartbeat visibility, duplicates, graceful shutdown, a killed worker, stale jobs.

The jobs are real: multi-page 300 dpi Japanese scans OCR'd by Tesseract
(``OCR_ENGINE=tesseract``) in a one-process pool, so each takes seconds, several times the OCR
queue's visibility timeout. Visibility is extended with the real ChangeMessageVisibility against
moto server.

These tests are about the queue, not the reading: the job lengths were chosen for Tesseract's
~1.5 s per dense page. PP-OCR, the default engine, takes 2-3x that on these pages (up to
120 s for an 8-page job under load, the runner's join timeout); what it reads is tested in
test_ocr_real_pages.py, test_ocr_defects.py and test_worker.py.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from devkit.samples import make_scan_pdf
from docindex.core.changes import doc_id
from docindex.ingest.ledger import Ledger, OcrCommit
from docindex.worker.pool import OcrPool
from tests.conftest import Stack
from tests.support.scans import CARD_INCHES, DENSE_PAGE, LAYOUT
from tests.support.worker import (
    SEQ,
    WorkerFactory,
    metric_total,
    ocr_queue_depth,
    upload_and_index,
    worker_factory,
)

# The indexer hands anything above this to the worker whole (reason too_large).
HAND_OVER = {"MAX_OBJECT_BYTES": "1000"}


@functools.cache
def long_scan(pages: int) -> bytes:
    """``pages`` dense A4 pages at 300 dpi: about 1 s of OCR each on this machine.

    Two lengths serve every test (rendered once each): 6 pages where the job must outlast two
    leases (3 s each), 3 where it only has to be running when something happens to it.
    """
    return make_scan_pdf([DENSE_PAGE] * pages, dpi=300, **LAYOUT)


@pytest.fixture(scope="module")
def ocr_pool() -> Iterator[OcrPool]:
    """One OCR process: a job's pages run one after another, so its duration is predictable."""
    pool = OcrPool(1)
    yield pool
    pool.close()


# The engine whose seconds per page the job lengths below were chosen for (module docstring).
ENGINE = {"OCR_ENGINE": "tesseract"}


@pytest.fixture
def make_worker(ocr_pool: OcrPool) -> Iterator[WorkerFactory]:
    """Workers on the module's one-process pool, reading with Tesseract."""
    with worker_factory(ocr_pool, **ENGINE) as make:
        yield make


def wait_until(condition: Callable[[], bool], timeout: float = 30.0, step: float = 0.05) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError("condition not met in time")
        time.sleep(step)


def in_flight(stack: Stack) -> bool:
    return ocr_queue_depth(stack)["in_flight"] == 1


def test_heartbeat_keeps_a_long_job_from_any_other_consumer(
    make_stack: Callable[..., Stack], make_worker: WorkerFactory
) -> None:
    # Given an OCR queue whose visibility timeout is 2 s, and a job of 6 dense pages
    stack = make_stack(ocr_visibility_timeout=2)
    key = "scans/長い報告書.pdf"
    upload_and_index(stack, key, long_scan(6), **HAND_OVER)
    pending_version = stack.doc(key)["_version"]
    worker = make_worker(stack, WORKER_CONCURRENCY="1", WORKER_HEARTBEAT_SECONDS="1")
    worker.start()
    # When the worker runs it while a second consumer polls the queue the whole time
    done = threading.Event()
    seen: list[dict[str, Any]] = []

    def other_consumer() -> None:
        while not done.is_set():
            got = stack.aws.sqs.receive_message(
                QueueUrl=stack.env["OCR_QUEUE_URL"], MaxNumberOfMessages=10, WaitTimeSeconds=1
            )
            seen.extend(got.get("Messages", []))

    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(worker.poll_once(wait_seconds=1)))
    started = time.monotonic()
    runner.start()
    wait_until(lambda: in_flight(stack))
    consumer = threading.Thread(target=other_consumer)
    consumer.start()
    runner.join(timeout=120)
    elapsed = time.monotonic() - started
    done.set()
    consumer.join(timeout=10)
    # Then the job took several visibility timeouts, was extended on every beat,
    # and the other consumer never received it
    assert result == [1]
    assert elapsed > 3 * 2, f"the job took only {elapsed:.1f} s: not a test of the heartbeat"
    assert worker.keeper.beats >= 3
    assert seen == []
    # And it was processed exactly once: one completion, one write, message deleted
    doc = stack.doc(key)
    assert doc["_source"]["ocr_status"] == "done"
    assert doc["_source"]["page_count"] == 6
    assert doc["_version"] == pending_version + 1
    assert metric_total("OcrJobsCompleted") == 1
    assert metric_total("OcrPagesProcessed") == 6
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []


def test_duplicate_delivery_during_a_long_job_is_deferred_then_recognized(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given a long job running on one worker, past its first lease (3 s)
    key = "scans/重複.pdf"
    upload_and_index(stack, key, long_scan(6), **HAND_OVER)
    job_body = stack.messages("OCR_QUEUE_URL")[0]["Body"]
    first = make_worker(stack, WORKER_CONCURRENCY="1", WORKER_HEARTBEAT_SECONDS="1")
    second = make_worker(stack, WORKER_CONCURRENCY="1", WORKER_HEARTBEAT_SECONDS="1")
    first.start()
    second.start()
    runner = threading.Thread(target=first.poll_once, kwargs={"wait_seconds": 1})
    runner.start()
    wait_until(lambda: in_flight(stack))
    time.sleep(first.settings.lease_seconds + 0.5)
    # When the same job arrives again (a second message) and another worker takes it
    stack.aws.sqs.send_message(QueueUrl=stack.env["OCR_QUEUE_URL"], MessageBody=job_body)
    assert second.poll_once(wait_seconds=1) == 1
    # Then it is deferred, not run: the first worker's lock was renewed by its heartbeats
    assert metric_total("OcrJobsDeferred") == 1
    # ... as a delayed copy, not a delivery put back: waiting spends none of its receives (maxReceiveCount)
    assert ocr_queue_depth(stack)["in_flight"] == 1
    runner.join(timeout=120)
    assert metric_total("OcrJobsCompleted") == 1
    # And once the first finished, the duplicate is recognized and deleted without OCR
    wait_until(lambda: ocr_queue_depth(stack)["visible"] == 1, timeout=10)
    assert second.poll_once(wait_seconds=1) == 1
    assert metric_total("OcrJobsDuplicate") == 1
    assert metric_total("OcrJobsCompleted") == 1
    assert metric_total("OcrPagesProcessed") == 6
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}


def test_stop_lets_a_running_job_finish_within_the_grace_period(stack: Stack, make_worker: WorkerFactory) -> None:
    key = "scans/猶予.pdf"
    upload_and_index(stack, key, make_scan_pdf([DENSE_PAGE] * 2, dpi=200, **LAYOUT), **HAND_OVER)
    worker = make_worker(stack, WORKER_CONCURRENCY="1", WORKER_WAIT_SECONDS="1")
    runner = threading.Thread(target=worker.run)
    runner.start()
    wait_until(lambda: in_flight(stack))
    worker.stop()
    runner.join(timeout=60)
    assert not runner.is_alive()
    assert stack.doc(key)["_source"]["ocr_status"] == "done"
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}


def worker_process(stack: Stack, **env: str) -> subprocess.Popen[str]:
    """``python -m docindex.worker`` as ECS runs it, in its own process group."""
    environment = {
        **os.environ,
        **stack.settings_env(),
        "POWERTOOLS_LOG_LEVEL": "INFO",
        "WORKER_CONCURRENCY": "1",
        "WORKER_WAIT_SECONDS": "1",
        **ENGINE,
        **env,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "docindex.worker"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_sigterm_releases_an_unfinished_job_for_immediate_redelivery(stack: Stack) -> None:
    # Given the worker process running a long job, with a 1 s grace period
    key = "scans/停止.pdf"
    upload_and_index(stack, key, long_scan(6), **HAND_OVER)
    process = worker_process(stack, WORKER_SHUTDOWN_GRACE_SECONDS="1")
    try:
        wait_until(lambda: in_flight(stack) or process.poll() is not None)
        time.sleep(1.0)  # into the OCR
        # When ECS stops the task
        stopped_at = time.monotonic()
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=60)
        exit_seconds = time.monotonic() - stopped_at
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    # Then it exits cleanly soon after the grace period...
    assert process.returncode == 0, output
    assert exit_seconds < 20, output
    assert "released jobs for immediate redelivery" in output
    # ...and another consumer receives the job at once (visibility 0, not the 120 s queue default)
    got = stack.aws.sqs.receive_message(
        QueueUrl=stack.env["OCR_QUEUE_URL"], WaitTimeSeconds=0, AttributeNames=["ApproximateReceiveCount"]
    ).get("Messages", [])
    assert len(got) == 1
    assert got[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert stack.doc(key)["_source"]["ocr_status"] == "pending"


def test_a_killed_worker_does_not_block_its_job(make_stack: Callable[..., Stack], make_worker: WorkerFactory) -> None:
    # Given a worker process (heartbeat 1 s: lease 3 s) in the middle of a job
    stack = make_stack(ocr_visibility_timeout=120)
    key = "scans/強制終了.pdf"
    upload_and_index(stack, key, long_scan(3), **HAND_OVER)
    process = worker_process(stack, WORKER_HEARTBEAT_SECONDS="1")
    try:
        wait_until(lambda: in_flight(stack) or process.poll() is not None)
        time.sleep(1.0)
    finally:
        # When it is killed outright (OOM, instance lost): no shutdown, no release
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
    killed_at = time.monotonic()
    # Then within one lease the message is back and the idempotency lock has expired,
    # so another worker runs the job to the end
    worker = make_worker(stack, WORKER_CONCURRENCY="1", WORKER_HEARTBEAT_SECONDS="1")
    finished = 0
    while not finished and time.monotonic() - killed_at < 60:
        finished = worker.poll_once(wait_seconds=1)
    assert finished == 1
    assert stack.doc(key)["_source"]["ocr_status"] == "done"
    # Never deferred: the dead worker's lock had expired when its message came back
    assert metric_total("OcrJobsDeferred") == 0
    assert metric_total("OcrJobsCompleted") == 1


def test_job_for_an_object_replaced_while_it_ran_does_not_overwrite_the_new_content(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given a job running for the first version of a scan
    key = "scans/差し替え.pdf"
    upload_and_index(stack, key, long_scan(3), sequencer=SEQ[1], **HAND_OVER)
    worker = make_worker(stack, WORKER_CONCURRENCY="1")
    worker.start()
    runner = threading.Thread(target=worker.poll_once, kwargs={"wait_seconds": 1})
    runner.start()
    wait_until(lambda: in_flight(stack))
    time.sleep(0.5)
    # When the object is replaced by a different scan meanwhile (the indexer queues a new job)
    replacement = make_scan_pdf([["差し替え後の請求書 株式会社テスト"]], dpi=200, page=CARD_INCHES, **LAYOUT)
    upload_and_index(stack, key, replacement, sequencer=SEQ[2], **HAND_OVER)
    runner.join(timeout=120)
    # Then the first job is dropped as stale at its commit, and the document is the new version's, pending
    assert metric_total("OcrJobsStale") == 1
    assert metric_total("OcrJobsCompleted") == 0
    current = stack.doc(key)["_source"]
    assert current["ocr_status"] == "pending"
    assert "content" not in current
    # And the new version's own job fills it in
    assert worker.poll_once(wait_seconds=1) == 1
    current = stack.doc(key)["_source"]
    assert current["ocr_status"] == "done"
    assert "請求書" in current["content"]
    assert "経費削減" not in current["content"]


def test_job_for_a_deleted_object_is_dropped_and_resurrects_nothing(stack: Stack, make_worker: WorkerFactory) -> None:
    from devkit.messages import s3_notification, sqs_event
    from tests.integration.conftest import build_indexer, invoke

    # Given a queued job whose object is then deleted (and the delete indexed)
    key = "scans/削除済み.pdf"
    upload_and_index(stack, key, make_scan_pdf([["削除される書類"]], dpi=150, page=CARD_INCHES, **LAYOUT), **HAND_OVER)
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
    removed = s3_notification(stack.bucket, key, event="ObjectRemoved:Delete", sequencer=SEQ[2])
    assert invoke(build_indexer(stack), sqs_event(removed)) == set()
    assert stack.doc(key) is None
    # When the worker gets the job
    assert make_worker(stack).poll_once(wait_seconds=1) == 1
    # Then it is dropped: no document comes back, the message is gone
    assert stack.doc(key) is None
    assert metric_total("OcrJobsStale") == 1
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}


def test_a_job_whose_commit_was_not_followed_by_its_write_is_completed(
    stack: Stack, make_worker: WorkerFactory
) -> None:
    # Given a job whose first attempt moved the ledger and then died before writing the document
    key = "scans/再開.pdf"
    upload_and_index(stack, key, make_scan_pdf([["再開された処理"]], dpi=200, page=CARD_INCHES, **LAYOUT), **HAND_OVER)
    pending = stack.doc(key)
    generation = pending["_version"]
    ledger = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    assert ledger.commit_ocr(doc_id(stack.bucket, key), generation, when="2026-11-22T00:00:00Z") is OcrCommit.COMMITTED
    # When the message comes back to a worker
    assert make_worker(stack).poll_once(wait_seconds=1) == 1
    # Then the retry recognizes its own commit and writes the document at the next generation
    doc = stack.doc(key)
    assert doc["_source"]["ocr_status"] == "done"
    assert "再開" in doc["_source"]["content"]
    assert doc["_version"] == generation + 1
    assert ledger.commit_ocr(doc_id(stack.bucket, key), generation, when="x") is OcrCommit.ALREADY


def test_a_job_whose_heartbeat_is_refused_stops_without_writing(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a long job running with a 1 s heartbeat
    key = "scans/横取り.pdf"
    upload_and_index(stack, key, long_scan(3), **HAND_OVER)
    worker = make_worker(stack, WORKER_CONCURRENCY="1", WORKER_HEARTBEAT_SECONDS="1")
    worker.start()
    runner = threading.Thread(target=worker.poll_once, kwargs={"wait_seconds": 1})
    runner.start()
    wait_until(lambda: len(worker.keeper.active()) == 1)
    # When its message stops being its own (here: deleted under it, so SQS refuses the extension)
    lease = worker.keeper.active()[0]
    stack.aws.sqs.delete_message(QueueUrl=stack.env["OCR_QUEUE_URL"], ReceiptHandle=lease.receipt_handle)
    runner.join(timeout=120)
    # Then the job is given up at the next beat: nothing is written, nothing completed
    assert metric_total("OcrLeasesLost") == 1
    assert metric_total("OcrJobsCompleted") == 0
    assert stack.doc(key)["_source"]["ocr_status"] == "pending"
