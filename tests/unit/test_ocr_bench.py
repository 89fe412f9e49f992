"""OCR speed, accuracy and memory on generated Japanese scans: opt-in measurements, not part of the normal run.

    DOCINDEX_OCR_BENCH=1 .venv/bin/pytest -s -p no:xdist tests/unit/test_ocr_bench.py
    DOCINDEX_OCR_BENCH=1 DOCINDEX_OCR_BENCH_PAGES=300 ... (pages of the memory run; default 300)

Prints seconds per page at the default settings (300 dpi, jpn+eng), accuracy
(1 - character error rate after NFKC), and the peak memory of the main
process and of each OCR process while a many-page scanned PDF goes through
the pool page by page, as the worker's jobs do.
"""

from __future__ import annotations

import io
import os
import statistics
import threading
import time
from collections import deque
from concurrent.futures import Future
from pathlib import Path

import pytest

from docindex import ocr
from docindex.worker.pool import OcrPool
from tests.unit.test_ocr_samples import DENSE_PAGE, accuracy, make_scan_image, make_scan_png

pytestmark = pytest.mark.skipif(not os.environ.get("DOCINDEX_OCR_BENCH"), reason="set DOCINDEX_OCR_BENCH=1 to measure")


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_seconds_per_page_and_accuracy_at_the_defaults(tmp_path: Path) -> None:
    os.environ["OMP_THREAD_LIMIT"] = "1"
    path = tmp_path / "a4.png"
    path.write_bytes(make_scan_png(DENSE_PAGE, dpi=300))
    options = ocr.OcrOptions()
    ocr.process_page(str(path), "image", 0, options)  # loads the models once, as a pool process does
    pages = [ocr.process_page(str(path), "image", 0, options) for _ in range(5)]
    seconds = statistics.median(p.seconds for p in pages)
    score = statistics.median(accuracy("".join(DENSE_PAGE), p.text) for p in pages)
    chars = len("".join(DENSE_PAGE))
    print(f"\nA4 300 dpi, {chars} chars, {options.languages}: {seconds:.2f} s/page, accuracy {score:.3f}")
    assert score >= 0.95


def test_memory_stays_flat_over_a_many_page_scan(tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    count = int(os.environ.get("DOCINDEX_OCR_BENCH_PAGES", "300"))
    one = io.BytesIO()
    make_scan_image(DENSE_PAGE, dpi=300).save(one, format="PDF", resolution=300.0)
    source = pdfium.PdfDocument(one.getvalue())
    document = pdfium.PdfDocument.new()
    for _ in range(count):
        document.import_pages(source, [0])
    path = str(tmp_path / "many.pdf")
    document.save(path)

    peaks = {"main": 0.0, "process": 0.0}
    done = threading.Event()

    def sample() -> None:
        me = os.getpid()
        while not done.wait(0.2):
            peaks["main"] = max(peaks["main"], rss_mib(me))
            peaks["process"] = max([peaks["process"], *(rss_mib(c) for c in children(me))])

    threading.Thread(target=sample, daemon=True).start()
    pool = OcrPool(2)
    options = ocr.OcrOptions()
    try:
        pool.submit(ocr.check_setup, options).result()
        info = pool.submit(ocr.probe, path, "pdf", options).result()
        started = time.monotonic()
        in_flight: deque[Future[ocr.PageResult]] = deque()
        next_page = read = 0
        at_first_fifth = 0.0
        while next_page < info.page_count or in_flight:
            while next_page < info.page_count and len(in_flight) < pool.processes:
                in_flight.append(pool.submit(ocr.process_page, path, "pdf", next_page, options))
                next_page += 1
            in_flight.popleft().result()
            read += 1
            if read == max(1, count // 5):
                at_first_fifth = peaks["process"]
        wall = time.monotonic() - started
    finally:
        done.set()
        pool.close()
    print(
        f"\n{count} pages, 2 processes: {wall / count:.2f} s/page wall; peak RSS main {peaks['main']:.0f} MiB, "
        f"OCR process {peaks['process']:.0f} MiB (after {count // 5} pages: {at_first_fifth:.0f} MiB)"
    )
    assert peaks["process"] < at_first_fifth + 50  # no growth with the number of pages
