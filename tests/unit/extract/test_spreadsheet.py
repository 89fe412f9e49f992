"""XLSX and legacy XLS through calamine: every sheet, cells as a person would type them."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from datetime import date, datetime

import pytest

from devkit.samples import make_xls, make_xlsx
from docindex.core.exceptions import ExtractionError
from docindex.extract import Deadline, ExtractionLimits, extract
from docindex.extract.spreadsheet import MAX_SHEET_CELLS, _exact_area, _loose_bound, sheet_area

SHEETS = {
    "見積書": [
        ["品名", "数量", "単価", "納期"],
        ["ノートPC", 10, 128000.0, date(2024, 12, 31)],
        ["値引き", None, -0.5],
    ],
    "備考": [["担当", "髙橋"], ["確認済み", True], ["更新", datetime(2024, 4, 1, 9, 30)]],
    "空": [],
}


@pytest.mark.parametrize("shared_strings", [True, False])
def test_all_sheets(limits: ExtractionLimits, shared_strings: bool) -> None:
    doc = extract(make_xlsx(SHEETS, title="見積書 No.123", shared_strings=shared_strings), "見積.xlsx", limits)
    assert (doc.kind, doc.error, doc.title, doc.page_count) == ("xlsx", None, "見積書 No.123", None)
    assert doc.text == (
        # a row with its header (品名 ノートPC・数量 10 ...); a key/value list without one as it is
        "見積書\n品名・数量・単価・納期\n品名 ノートPC・数量 10・単価 128000・納期 2024-12-31\n"
        "品名 値引き・単価 -0.5\n\n"
        "備考\n担当\t髙橋\n確認済み\tTRUE\n更新\t2024-04-01 09:30:00\n\n空"
    )


def test_legacy_xls(limits: ExtractionLimits) -> None:
    data = make_xls({"シート1": [["東京都", 1, 2.5], ["髙橋", None, "①"]], "Sheet2": [["四半期売上報告"]]})
    doc = extract(data, "古い.xls", limits)
    assert (doc.kind, doc.content_type, doc.error) == ("xls", "application/vnd.ms-excel", None)
    assert doc.text == "シート1\n東京都\t1\t2.5\n髙橋\t\t①\n\nSheet2\n四半期売上報告"


def test_max_chars(limits: ExtractionLimits) -> None:
    doc = extract(make_xlsx(SHEETS), "a.xlsx", dataclasses.replace(limits, max_chars=12))
    assert (doc.text, doc.truncated, doc.error) == ("見積書\n品名\t数量\t単価", True, None)


def test_deadline_between_sheets(limits: ExtractionLimits) -> None:
    doc = extract(make_xlsx(SHEETS), "a.xlsx", limits, deadline=Deadline(0))
    assert (doc.error, doc.truncated) == ("timeout", True)
    assert doc.text.startswith("見積書\n品名")
    assert "備考" not in doc.text


def test_deadline_within_a_long_sheet(limits: ExtractionLimits) -> None:
    rows = [[f"行{i}", i] for i in range(2500)]
    doc = extract(make_xlsx({"長い": rows}), "a.xlsx", limits, deadline=Deadline(0))
    assert (doc.error, doc.truncated) == ("timeout", True)
    assert len(doc.text.splitlines()) == 1 + 1000  # checked every 1000 rows


def _sheet(rows: bytes) -> bytes:
    return (
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        + rows
        + (b"</sheetData></worksheet>")
    )


def test_sheet_area() -> None:
    assert sheet_area(_sheet(b'<row r="2"><c r="B2"/><c r="D2"/></row><row r="20"><c r="C20"/></row>')) == 19 * 3
    far = _sheet(b'<row r="1"><c r="A1"/></row><row r="1048576"><c r="XFD1048576"/></row>')
    assert sheet_area(far) == 1048576 * 16384
    # A cell's own reference counts even when its row says otherwise.
    assert sheet_area(_sheet(b'<row r="1"><c r="A1"/><c r="XFD1048576"/></row>')) == 1048576 * 16384
    assert sheet_area(_sheet(b"")) == 0


def test_cells_without_references_are_placed_after_the_previous_one() -> None:
    rows = b"".join(b"<row>" + b"<c><v>1</v></c>" * 3 + b"</row>" for _ in range(4))
    assert sheet_area(_sheet(rows)) == 4 * 3
    wide = b'<row r="1"><c r="A1"/></row><row>' + b"<c/>" * 500 + b"</row>"
    assert sheet_area(_sheet(wide)) == 2 * 500
    assert sheet_area(_sheet(b'<row r="10"><c r="C10"/><c/></row>')) == 2


def test_fake_references_in_text_do_not_hide_positional_cells() -> None:
    # Text that looks like r="A1" must not stand in for the missing
    # references of 16384 positional cells in a sheet that also reaches row 1048576.
    rows = (
        b'<row r="1">'
        + b'<c t="inlineStr"><is><t> r="A1"</t></is></c>' * 16384
        + b'</row><row r="1048576"><c r="A1048576"/></row>'
    )
    assert sheet_area(_sheet(rows)) > MAX_SHEET_CELLS


def test_malformed_sheet_is_corrupt() -> None:
    with pytest.raises(ExtractionError) as caught:
        sheet_area(b'<row r="1"><c r="A1"/></row><row r="2">')
    assert caught.value.code == "corrupt"


@pytest.mark.parametrize("rows", [200, 3000])
def test_loose_bound_is_an_upper_bound(rows: int) -> None:
    body = _sheet(
        b"".join(
            f'<row r="{r}"><c r="B{r}"/><c/><c r="E{r}"/></row><row><c/></row>'.encode() for r in range(1, rows * 2, 2)
        )
    )
    assert _loose_bound(body) >= _exact_area(body) == rows * 2 * 5


@pytest.mark.parametrize(
    "reference",
    # Spellings calamine accepts for the same cell.
    ['r="XFD1048576"', "r='XFD1048576'", 'r = "xfd1048576"', '\tr="XFD1048576"'],
)
def test_sparse_sheet_is_refused_before_calamine_allocates_it(reference: str) -> None:
    # calamine would allocate A1:XFD1048576 densely (512 GiB) and abort the
    # process; run in a child so a regression fails this test, not the suite.
    script = textwrap.dedent(
        f"""
        import io, zipfile
        from docindex.extract import ExtractionLimits, extract
        from devkit.samples import make_xlsx
        data = make_xlsx({{"S": [["東京都"]]}}, cells={{"S": {{"XFD1048576": "far"}}}})
        src, buf = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
        with zipfile.ZipFile(buf, "w") as out:
            for name in src.namelist():
                part = src.read(name)
                if name == "xl/worksheets/sheet1.xml":
                    part = part.replace(b' r="XFD1048576"', {(" " + reference).encode()!r})
                out.writestr(name, part)
        doc = extract(buf.getvalue(), "sparse.xlsx", ExtractionLimits())
        print(doc.error)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "too_large"


# --------------------------------------------------------------------------- parts left out are named


def _with_sheets_rewritten(data: bytes, rewrites: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    src, buf = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name in src.namelist():
            out.writestr(name, rewrites.get(name, src.read(name)))
    return buf.getvalue()


def _three_sheets() -> bytes:
    """売上 (ordinary), 危険 (a DOCTYPE with an entity), 巨大 (cells at A1 and XFD1048576)."""
    data = make_xlsx({"売上": [["商品", "金額"], ["ノートPC", 150000]], "危険": [["x"]], "巨大": [["y"]]})
    doctype = b'<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE worksheet [<!ENTITY boom "boom">]>' + _sheet(
        b'<row r="1"><c r="A1" t="inlineStr"><is><t>&boom;</t></is></c></row>'
    )
    huge = _sheet(
        b'<row r="1"><c r="A1" t="inlineStr"><is><t>far</t></is></c></row>'
        b'<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    )
    return _with_sheets_rewritten(data, {"xl/worksheets/sheet2.xml": doctype, "xl/worksheets/sheet3.xml": huge})


def test_a_sheet_that_cannot_be_read_safely_is_left_out_and_named(limits: ExtractionLimits) -> None:
    doc = extract(_three_sheets(), "売上集計.xlsx", limits)
    # The ordinary sheet is read, the workbook is not refused
    assert doc.error is None
    assert "商品 ノートPC・金額 150000" in doc.text
    assert "boom" not in doc.text
    assert "far" not in doc.text
    # and what was left out is on the document, with why
    assert doc.truncated
    assert len(doc.dropped) == 2
    assert doc.dropped[0].startswith("sheet '危険': has a DOCTYPE")
    assert doc.dropped[1].startswith("sheet '巨大': spans")


def test_a_workbook_whose_every_sheet_is_refused_is_refused() -> None:
    data = _with_sheets_rewritten(
        make_xlsx({"only": [["x"]]}),
        {"xl/worksheets/sheet1.xml": b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "b">]>' + _sheet(b"")},
    )
    doc = extract(data, "dtd.xlsx", ExtractionLimits())
    assert doc.error == "corrupt"
