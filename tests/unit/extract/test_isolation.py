"""Extraction in bounded child processes: bombs inside a format end in an error, only their child dies.

The hostile files are built here (devkit.samples.bombs), a few MB each. The
memory assertions are on the child's peak as the kernel measured it
(``wait4``'s rusage for a child that was stopped, the child's own
``getrusage`` otherwise), never on time.
"""

from __future__ import annotations

import resource
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.samples import make_pdf, make_xlsx
from devkit.samples.bombs import (
    make_many_fonts_pdf,
    make_pdf_stream_bomb,
    make_xlsx_many_cells,
    make_xlsx_shared_strings_bomb,
)
from docindex.extract import Deadline, ExtractionLimits, extract
from docindex.extract.isolation import GRANT_FLOOR_BYTES, ExtractionPool

MiB = 1024 * 1024
LIMITS = ExtractionLimits()


@pytest.fixture
def pool() -> Iterator[ExtractionPool]:
    # What a 1,536 MB function with 8 records at once gets: half of its memory.
    pool = ExtractionPool.for_function(1536, 8, share=0.5)
    yield pool
    pool.close()


def test_pdf_and_workbook_give_the_same_result_in_a_child_as_in_process(pool: ExtractionPool) -> None:
    pdf = make_pdf(["第一章 契約の目的", "第二章 支払条件"], "業務委託契約書")
    book = make_xlsx({"売上": [["品名", "数量"], ["りんご", 3]]}, title="売上表")
    for data, name in ((pdf, "c.pdf"), (book, "s.xlsx"), (pdf, "again.pdf")):
        isolated = extract(data, name, LIMITS, pool=pool)
        in_process = extract(data, name, LIMITS)
        assert isolated == in_process
        assert isolated.error is None
    assert "支払条件" in extract(pdf, "c.pdf", LIMITS, pool=pool).text


def test_a_content_stream_inflating_to_1_2_gib_ends_memory_and_only_its_child_dies(pool: ExtractionPool) -> None:
    bomb = make_pdf_stream_bomb(1200)  # ~1.3 MB; 2.3 GiB in process before isolation
    assert len(bomb) < 4 * MiB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    result = extract(bomb, "bomb.pdf", LIMITS, pool=pool)

    assert result.error == "memory"
    assert result.kind == "pdf"
    # None of it landed in this process (the child's own peak is measured in a fresh
    # process by tests/integration/test_bounded_extraction.py).
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 < before + 64 * MiB
    # The pool goes on with a fresh child.
    good = extract(make_pdf(["爆弾の次の文書"], "次"), "next.pdf", LIMITS, pool=pool)
    assert good.error is None
    assert "爆弾の次の文書" in good.text


def test_a_sheet_of_10_million_cells_is_refused_before_calamine_builds_it(pool: ExtractionPool) -> None:
    book = make_xlsx_many_cells(10_000_000)

    result = extract(book, "cells.xlsx", LIMITS, pool=pool)

    assert result.error == "too_large"
    assert "cells" in (result.error_detail or "")
    # Counted while streaming the sheet XML: nowhere near the ~1.3 GiB calamine would need.
    assert pool.max_child_rss < 200 * MiB


def test_a_1_gib_shared_strings_part_never_reaches_the_parser(pool: ExtractionPool) -> None:
    honest = extract(make_xlsx_shared_strings_bomb(1024), "sst.xlsx", LIMITS, pool=pool)
    lying = extract(make_xlsx_shared_strings_bomb(1024, honest=False), "sst2.xlsx", LIMITS, pool=pool)

    assert honest.error == "zip_bomb"
    assert lying.error in {"corrupt", "memory", "too_large"}
    assert pool.max_child_rss < 300 * MiB


def test_a_parser_that_does_not_return_is_stopped_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A parser stuck in native code, whatever the machine's speed: the child's PDF extractor is replaced
    # (a sitecustomize on the child's path, which it inherits) by one that never returns nor checks time.
    (tmp_path / "sitecustomize.py").write_text(
        "import time\nimport docindex.extract.pdf as pdf\n"
        "def stuck(*args, **kwargs):\n    time.sleep(3600)\n"
        "pdf.extract_pdf = stuck\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pool = ExtractionPool.for_function(1536, 8, share=0.5)
    try:
        result = extract(make_pdf(["止まらない"], "t"), "stuck.pdf", LIMITS, deadline=Deadline(0.5), pool=pool)
    finally:
        pool.close()

    assert result.error == "timeout"
    assert result.truncated is True


def test_10_000_fonts_within_bounds_are_read(pool: ExtractionPool) -> None:
    result = extract(make_many_fonts_pdf(10_000), "fonts.pdf", LIMITS, pool=pool)

    assert result.error is None
    assert "font 9999" in result.text
    assert pool.max_child_rss < pool.memory_budget


def test_jobs_wait_for_memory_so_their_grants_never_exceed_the_budget() -> None:
    # A budget for two of these jobs: six threads at once must take turns.
    pdf = make_pdf(["同時に六件"], "t")
    grant = ExtractionPool(1 << 40, 8).grant_for("pdf", len(pdf))
    assert grant >= GRANT_FLOOR_BYTES
    pool = ExtractionPool(2 * grant, 8)
    results: list[str | None] = []
    try:
        threads = [
            threading.Thread(target=lambda: results.append(extract(pdf, "t.pdf", LIMITS, pool=pool).error))
            for _ in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        pool.close()
    assert results == [None] * 6
    assert pool.max_running == 2


def test_parts_left_out_in_a_child_are_named_as_in_process(pool: ExtractionPool) -> None:
    from tests.unit.extract.test_spreadsheet import _three_sheets

    data = _three_sheets()
    in_process = extract(data, "売上集計.xlsx", LIMITS)
    isolated = extract(data, "売上集計.xlsx", LIMITS, pool=pool)
    assert isolated.dropped == in_process.dropped
    assert len(isolated.dropped) == 2
    assert isolated.truncated


REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"
LEGACY = [
    "ringi.doc",
    "gijiroku.ppt",
    "apache-tika/testMSG_att_doc.msg",
    "ringi.rtf",
    "uchiawase.eml",
    "shiryou_cp932.zip",
]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_and_container_formats_are_read_in_a_child_as_in_process(pool: ExtractionPool, name: str) -> None:
    data = (REAL / name).read_bytes()
    assert pool.isolates(extract(data, name, LIMITS).kind)
    in_process = extract(data, name, LIMITS)
    isolated = extract(data, name, LIMITS, pool=pool)
    assert (isolated.error, isolated.text, isolated.title) == (in_process.error, in_process.text, in_process.title)
    assert isolated.text


def test_a_legacy_reader_that_exhausts_its_memory_costs_only_its_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reader that keeps allocating (what a file declaring huge nested structures does to a
    # pure-Python parser): the child's RTF reader is replaced by one that never stops growing.
    (tmp_path / "sitecustomize.py").write_text(
        "import docindex.extract.rtf as rtf\n"
        "def greedy(*args, **kwargs):\n    held = []\n    while True:\n        held.append(bytearray(64 << 20))\n"
        "rtf.extract_rtf = greedy\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    pool = ExtractionPool.for_function(1536, 2, share=0.5)
    try:
        greedy = extract((REAL / "ringi.rtf").read_bytes(), "稟議書.rtf", LIMITS, pool=pool)
        after = extract((REAL / "ringi.doc").read_bytes(), "稟議書.doc", LIMITS, pool=pool)
    finally:
        pool.close()
    # Then that document ends with `memory` (its child died at its grant), and the next is read
    assert greedy.error == "memory"
    assert after.error is None
    assert "会議室用プロジェクター" in after.text
