"""Hostile scans and poison jobs on the OCR worker: refused before decoding, quarantined after K deaths.

Real parts: the indexer queues the jobs, the worker runs them in a real spawned pool with real
PDFium, Pillow and Tesseract. The bombs are built at test time (``devkit.samples.bombs``): each
is 13 KB - 2 MB on disk and gigabytes decoded. The task's memory is set to the template's
default (4,096 MiB) so the bounds are the ones a deployed worker uses, whatever this machine has.
"""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devkit.samples import make_scan_pdf, make_scan_png
from devkit.samples.bombs import make_ccitt_bomb_pdf, make_image_bomb_pdf, make_png_bomb
from docindex.core.changes import doc_id
from docindex.ingest.ledger import Ledger
from docindex.worker.pool import OcrPool
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

TASK = {"WORKER_TASK_MEMORY_MIB": "4096", "WORKER_CONCURRENCY": "2"}
MiB = 1024 * 1024


@pytest.fixture
def ocr_pool() -> Iterator[OcrPool]:
    """A pool for each test: these tests kill its processes or read their peak memory."""
    pool = OcrPool(2)
    yield pool
    pool.close()


def pool_processes() -> list[int]:
    """This process's spawned pool processes (not multiprocessing's resource tracker)."""
    found = []
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = stat.rsplit(")", 1)[1].split()[1]
        if ppid == me and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return found


def peak_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    raise AssertionError(f"no VmHWM for {pid}")


@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("2,400 dpi RGB scan (PDF)", make_image_bomb_pdf),
        ("CCITT G4 image, 100,000 x 100,000 px (PDF)", make_ccitt_bomb_pdf),
        ("RGBA PNG under Pillow's bomb guard", make_png_bomb),
    ],
)
def test_an_image_bomb_ends_failed_without_being_decoded(
    stack: Stack, make_worker: WorkerFactory, name: str, build: Callable[[], bytes]
) -> None:
    # Given a scan whose one page is gigabytes decoded (without the bounds: 5.7-5.9 GiB, 16 s)
    key = "スキャン/巨大.png" if build is make_png_bomb else "スキャン/巨大.pdf"
    upload_and_index(stack, key, build())
    # When the worker runs its job
    worker = make_worker(stack, **TASK)
    started = time.monotonic()
    assert worker.poll_once(wait_seconds=1) == 1
    seconds = time.monotonic() - started
    # Then the document is failed with the reason, findable by name, and the job is gone
    source = source_of(stack, key)
    assert source["ocr_status"] == "failed", name
    assert source["extraction_error"] == "too_large"
    assert source["filename"] == Path(key).name
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []
    # measured from the file's header, never decoded: the pool processes stayed small
    assert seconds < 60
    peaks = [peak_mib(pid) for pid in pool_processes()]
    assert peaks
    assert max(peaks) < 512, peaks


def test_a_page_over_the_bound_is_one_failed_page_not_a_dead_process(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a two-page scan whose first page fits and whose second does not, with a small task
    from PIL import Image

    good = Image.open(io.BytesIO(make_scan_png(["第一頁 請求書"], dpi=200, page=(4.0, 2.0), **LAYOUT)))
    big = Image.new("RGB", (9000, 9000), "white")  # 310 MiB decoded in Pillow
    out = io.BytesIO()
    good.convert("RGB").save(out, "TIFF", save_all=True, append_images=[big], compression="tiff_deflate")
    key = "スキャン/二頁.tiff"
    upload_and_index(stack, key, out.getvalue())
    # When a worker whose task has 1,024 MiB for 2 processes runs it
    worker = make_worker(stack, WORKER_TASK_MEMORY_MIB="1024", WORKER_CONCURRENCY="2")
    assert worker.poll_once(wait_seconds=1) == 1
    # Then the first page is read, the second reported, and the job finished (done, with the error)
    source = source_of(stack, key)
    assert source["ocr_status"] == "done"
    assert "請求書" in source["content"]
    assert source["extraction_error"] == "too_large"
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}


class OomKiller:
    """What the kernel does to a pool process that outgrows the task: SIGKILL, again and again.

    It kills a process while it works for ``owner`` (the job whose page is in it; any job's
    when None), as the OOM killer picks the process that is allocating.
    """

    def __init__(self, pool: OcrPool, owner: str | None = None) -> None:
        self.pool = pool
        self.owner = owner
        self.kills = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        # The pool's own marks (one file per process, naming the job it works for) are the list to
        # watch: a scan of /proc took long enough on a busy machine to miss a short page every time.
        while not self._stop.is_set():
            for mark in Path(self.pool.marks).iterdir():
                try:
                    owner = mark.read_text(encoding="utf-8")
                except OSError:
                    continue
                if owner and (self.owner is None or owner == self.owner):
                    try:
                        os.kill(int(mark.name), signal.SIGKILL)
                        self.kills += 1
                    except ProcessLookupError:
                        pass
            time.sleep(0.002)

    def __enter__(self) -> OomKiller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_a_job_that_keeps_killing_its_ocr_process_is_quarantined(
    stack: Stack, make_worker: WorkerFactory, ocr_pool: OcrPool
) -> None:
    # Given a scan whose OCR process is killed every time it runs (the OOM killer), K = 2
    key = "スキャン/毒.png"
    upload_and_index(stack, key, make_scan_png(["領収書"], dpi=200, page=(4.0, 2.0), **LAYOUT))
    worker = make_worker(stack, WORKER_QUARANTINE_AFTER_FAILURES="2", WORKER_RETRY_DELAY_SECONDS="0")
    ledger = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    worker.start()  # its processes checked the OCR set-up before any job
    with OomKiller(ocr_pool) as killer:
        # When the job is delivered twice: each attempt loses its process and is retried
        for attempt in (1, 2):
            assert worker.poll_once(wait_seconds=2) == 1
            entry = ledger.get(doc_id(stack.bucket, key))
            assert entry is not None
            assert entry.ocr_failures == attempt
            assert source_of(stack, key)["ocr_status"] == "pending"
        # and a third time
        assert worker.poll_once(wait_seconds=2) == 1
    assert killer.kills >= 2
    # Then it is not tried again: failed with the reason, findable by name, the message gone
    source = source_of(stack, key)
    assert source["ocr_status"] == "failed"
    assert source["extraction_error"] == "quarantined"
    assert source["filename"] == "毒.png"
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    assert stack.messages("OCR_DLQ_URL") == []
    assert metric_total("OcrProcessesLost") == 2
    assert metric_total("OcrJobsQuarantined") == 1


def test_a_new_version_of_a_quarantined_file_is_tried_afresh(
    stack: Stack, make_worker: WorkerFactory, ocr_pool: OcrPool
) -> None:
    # Given a scan that killed its OCR process once (K = 1: the next delivery quarantines it)
    key = "スキャン/再送.png"
    upload_and_index(stack, key, make_scan_png(["見積書"], dpi=200, page=(4.0, 2.0), **LAYOUT))
    worker = make_worker(stack, WORKER_QUARANTINE_AFTER_FAILURES="1", WORKER_RETRY_DELAY_SECONDS="0")
    worker.start()
    with OomKiller(ocr_pool):
        assert worker.poll_once(wait_seconds=2) == 1
    assert worker.poll_once(wait_seconds=2) == 1
    assert source_of(stack, key)["extraction_error"] == "quarantined"
    # When a new version is uploaded (a newer change: a new generation, a new count)
    upload_and_index(stack, key, make_scan_png(["見積書 改訂版"], dpi=200, page=(4.0, 2.0), **LAYOUT), sequencer=SEQ[2])
    assert worker.poll_once(wait_seconds=2) == 1
    # Then it is OCR'd normally
    source = source_of(stack, key)
    assert source["ocr_status"] == "done"
    assert "見積書" in source["content"]
    assert "extraction_error" not in source


def test_only_the_job_whose_page_died_counts_it_not_the_jobs_beside_it(
    stack: Stack, make_worker: WorkerFactory, ocr_pool: OcrPool
) -> None:
    # Given two jobs on one task at once: a poison scan whose process is killed whenever it
    # works for it, and an innocent 4-page scan whose pages share the pool
    poison, innocent = "スキャン/毒入り.png", "スキャン/無実.pdf"
    upload_and_index(stack, poison, make_scan_png(["領収書"], dpi=200, page=(4.0, 2.0), **LAYOUT))
    pages = [["会議の議事録です。"], ["売上の報告です。"], ["契約の確認です。"], ["出張の報告です。"]]
    upload_and_index(stack, innocent, make_scan_pdf(pages, dpi=300, **LAYOUT), sequencer=SEQ[2])
    worker = make_worker(stack, WORKER_QUARANTINE_AFTER_FAILURES="2", WORKER_RETRY_DELAY_SECONDS="0")
    worker.start()
    ledger = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    owner = f"{doc_id(stack.bucket, poison)}#1"
    # When the worker runs them until the queue is empty
    with OomKiller(ocr_pool, owner=owner) as killer:
        for _ in range(12):
            worker.poll_once(wait_seconds=1)
            if ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}:
                break
    # Then the poison job is quarantined after its own two deaths
    assert killer.kills >= 2
    assert source_of(stack, poison)["extraction_error"] == "quarantined"
    poisoned = ledger.get(doc_id(stack.bucket, poison))
    assert poisoned is not None
    assert poisoned.ocr_failures_for(1) == 2
    # and the innocent scan was never broken: read once, nothing counted, done
    innocent_entry = ledger.get(doc_id(stack.bucket, innocent))
    assert innocent_entry is not None
    assert innocent_entry.ocr_failures == 0
    assert source_of(stack, innocent)["ocr_status"] == "done"
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}
    # only the poison's two deaths were counted, only the poison was retried, and no page was
    # read twice (with one executor for the whole task, a death broke the innocent job too
    # whenever SQS handed both over in one receive, and its pages were read again)
    assert metric_total("OcrProcessesLost") == 2
    assert metric_total("OcrJobsRetried") == 2
    assert metric_total("OcrPagesRedone") == 0
    assert metric_total("OcrPagesProcessed") == 4
