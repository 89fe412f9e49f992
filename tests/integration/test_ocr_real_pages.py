"""Real Japanese pages through the real pipeline: indexer → OCR queue → worker (PP-OCR) → index → search.

One page of every class of ``tests/fixtures/ocr_real`` (typewriting, a page faxed, old print, a
photographed report, a form, vertical writing, handwriting, modern print, a sign) and the demo's
fax and sideways notice are uploaded once, indexed by the real indexer and read by a real worker
on the module's pool; then every listed word of every page must find its file. The whole corpus,
with both engines and the error rates, is ``bench.ocr_engines`` (``make bench``): the OCR is the
cost, so the test reads one page a class.
"""

from __future__ import annotations

import pytest

from devkit.ocr_defects import FIXTURES, REAL_PAGES, DefectFile, load_manifest
from docindex.index.search import search
from tests.conftest import Stack
from tests.support.worker import WorkerFactory, ocr_queue_depth, source_of, upload_and_index

PREFIX = "real/"
# One page a class: the cheapest that has its text written down (the form has words only).
SUBSET = {
    "typewriting": "ndl-typewritten-manual-4.png",
    "fax": "ndl-typewritten-manual-1-fax.tif",
    "old_print": "ndl-kindai-1029114-6-b.jpg",
    "photo": "ndl-report-1955-c.jpg",
    "form": "ndl-report-1955-table.jpg",
    "vertical": "ndl-geppo-2018-1.jpg",
    "handwriting": "ndl-handwritten-yokogaki.jpg",
    "modern_print": "rapidocr-japan.jpg",
    "sign": "easyocr-japanese-sign.jpg",
}
# Words PP-OCR still reads wrong on these pages (docs/performance.md, "What still fails"): the fax of the
# typewritten page (死送子: its 98 dpi lines have lost the strokes), the handwritten よしなし事
# (としなし事), a magazine column's 検索 (検素). A table's letter-spaced cell labels (分娩費, 埋葬料), once
# read a character a box (理 for 埋), are read as one line each since issue 44.
KNOWN_MISSES = {
    ("fax", "ndl-typewritten-manual-1-fax.tif", "気送子"),
    ("handwriting", "ndl-handwritten-yokogaki.jpg", "よしなし事"),
    ("vertical", "ndl-geppo-2018-1.jpg", "検索"),
}
# The demo's fax (two pages at 200 x 100 dpi) and its notice fed sideways through a copier.
DEMO_FAX = "fax-200x100-report-2pages.tif"
DEMO_SIDEWAYS = "rotated90-notice.tif"


def subset() -> list[DefectFile]:
    files = {entry.name: entry for entry in load_manifest(REAL_PAGES)}
    return [files[name] for name in SUBSET.values()]


def test_every_class_of_real_page_and_the_demos_scans_are_read_right(stack: Stack, make_worker: WorkerFactory) -> None:
    # Given a page of every class of real Japanese pages and the demo's fax and sideways notice
    pages = subset()
    assert {entry.defect for entry in pages} == set(SUBSET)
    for entry in pages:
        upload_and_index(stack, PREFIX + entry.name, entry.path.read_bytes())
    for name in (DEMO_FAX, DEMO_SIDEWAYS):
        upload_and_index(stack, PREFIX + name, (FIXTURES / name).read_bytes())
    # When one worker has read them all
    worker = make_worker(stack)
    for _ in range(100):
        if worker.poll_once(wait_seconds=1) == 0 and ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}:
            break
    else:
        pytest.fail("the OCR queue did not drain")
    # Then every page was read, and every word of every page finds its file (but the known misses)
    missed = []
    for entry in pages:
        source = source_of(stack, PREFIX + entry.name)
        assert source["ocr_status"] == "done", entry.name
        for word in entry.pages[0].words:
            found = search(stack.opensearch, stack.index, word, prefix=PREFIX + entry.name)
            if [hit["key"] for hit in found] != [PREFIX + entry.name]:
                missed.append((entry.defect, entry.name, word))
    assert set(missed) <= KNOWN_MISSES, sorted(set(missed) - KNOWN_MISSES)
    assert len(missed) < sum(len(entry.pages[0].words) for entry in pages) // 4
    # And the demo's fax reads right where Tesseract read 広告家伝 and 二ニ
    fax = source_of(stack, PREFIX + DEMO_FAX)["content"].replace(" ", "")
    for phrase in ("広告宣伝費", "一二パーセント", "物流倉庫の自動化"):
        assert phrase in fax
    assert search(stack.opensearch, stack.index, "広告宣伝費", prefix=PREFIX)[0]["key"] == PREFIX + DEMO_FAX
    # And the sideways notice is read upright, every line once (Tesseract repeated 場所本社三階大会議室)
    notice = source_of(stack, PREFIX + DEMO_SIDEWAYS)
    lines = [line.replace(" ", "").replace("\u3000", "") for line in notice["content"].splitlines() if line.strip()]
    assert len(lines) == len(set(lines)) == 7
    assert "場所本社三階大会議室" in lines
    assert notice["ocr_pages"][0]["rotation"] in (90, 270)
