"""Spreadsheets with python-calamine: XLSX/XLSM/XLTX and legacy XLS.

calamine reads 3 sheets x 20k rows ten times faster than openpyxl and also
reads ``.xls`` (EXTRACTION.md). Every sheet becomes a line with its name
followed by one line per non-empty row, cells separated by tabs (trailing
empty cells dropped). ``page_count`` stays None: sheets are not pages.

calamine builds each sheet as a dense rectangle in Rust, and a failed
allocation aborts the whole process (no Python exception): a 2 KB XLSX with
cells in A1 and XFD1048576 asks for 512 GiB. So before calamine sees an
XLSX, each worksheet's row and cell references are scanned (regular
expressions over the XML, ~10 ms per MB) and a sheet spanning more than
``MAX_SHEET_CELLS`` cells is refused as ``too_large``. Legacy XLS
is bounded by the format itself (65536 x 256 cells). XLSB and ODS are not
accepted for the same reason: their extents cannot be checked cheaply.
"""

from __future__ import annotations

import io
import re
from datetime import date, datetime, time, timedelta
from typing import Any

from docindex.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ooxml import core_title, main_part, relationships
from docindex.extract.safezip import SafeZip

# ~32 bytes per cell in calamine: 10M cells is ~320 MB, the most a Lambda
# with room for everything else can spare. Real sheets are far smaller
# (3 x 20k rows x 10 columns = 600k).
MAX_SHEET_CELLS = 10_000_000
_ROWS_PER_FLUSH = 1000

# calamine accepts single quotes, spaces around "=", lowercase column letters
# and namespace prefixes (it rejects character references), so these do too.
_ROW_TAG = re.compile(rb"<(?:[\w.-]+:)?row[\s/>]")
_CELL_TAG = re.compile(rb"<(?:[\w.-]+:)?c[\s/>]")
_ROW_REF = re.compile(rb"""<(?:[\w.-]+:)?row\b[^>]*?\sr\s*=\s*["']\s*(\d+)""")
# Only cell references have letters after r= (row numbers are digits only).
_CELL_COLUMN = re.compile(rb"""\sr\s*=\s*["']\s*([A-Za-z]+)\d""")
_CELL_ROW = re.compile(rb"""\sr\s*=\s*["']\s*[A-Za-z]+(\d+)""")


def extract_spreadsheet(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """All sheets' cell text (and the XLSX title) into ``ctx``."""
    if ftype.kind == "xlsx":
        with SafeZip(data, ctx.limits) as zf:
            ctx.title = core_title(zf)
            for part in _worksheet_parts(zf):
                area = sheet_area(zf.read(part))
                if area > MAX_SHEET_CELLS:
                    raise ExtractionError("too_large", f"{part} spans {area} cells (limit {MAX_SHEET_CELLS})")
    elif ftype.kind != "xls":
        raise ExtractionError("unsupported", f"{ftype.kind} workbooks are not read")
    _read_workbook(data, ctx)


def _worksheet_parts(zf: SafeZip) -> list[str]:
    workbook = main_part(zf, "xl/workbook.xml")
    parts = {
        target for _, kind, target in relationships(zf, workbook) if kind == "worksheet" and zf.has(target)
    }
    parts.update(n for n in zf.names() if n.startswith("xl/worksheets/") and n.endswith(".xml"))
    return sorted(parts)


def _column_number(letters: bytes) -> int:
    number = 0
    for ch in letters.upper():
        number = number * 26 + (ch - 64)
    return number


def sheet_area(xml: bytes) -> int:
    """How many cells calamine will allocate for a worksheet (exact, or an upper bound).

    With every row and cell carrying its ``r`` reference the rectangle is
    exact. Rows and cells without one are placed after the previous one, so
    they extend the bound by their count (rows) or by the longest row (cells).
    """
    cell_tags = len(_CELL_TAG.findall(xml))
    if not cell_tags:
        return 0
    row_tags = len(_ROW_TAG.findall(xml))
    row_refs = _ROW_REF.findall(xml)
    cell_rows = _CELL_ROW.findall(xml)
    rows = {int(r) for r in set(row_refs) | set(cell_rows)}
    columns = {_column_number(letters) for letters in set(_CELL_COLUMN.findall(xml))}
    if len(row_refs) == row_tags and len(cell_rows) == cell_tags:
        return (max(rows) - min(rows) + 1) * (max(columns) - min(columns) + 1)
    height = max(rows, default=0) + max(row_tags - len(row_refs), 0)
    width = max(columns, default=0)
    if len(cell_rows) < cell_tags:
        width += max(len(_CELL_TAG.findall(row)) for row in _ROW_TAG.split(xml))
    return max(height, 1) * max(width, 1)


def _read_workbook(data: bytes, ctx: ExtractionContext) -> None:
    from python_calamine import CalamineError, CalamineWorkbook, PasswordError

    try:
        workbook = CalamineWorkbook.from_filelike(io.BytesIO(data))
    except PasswordError:
        raise ExtractionError("encrypted", "the workbook is password-protected") from None
    except (CalamineError, ValueError, OSError) as exc:
        raise ExtractionError("corrupt", str(exc)) from None
    with workbook:
        for index, name in enumerate(workbook.sheet_names):
            if index:
                ctx.check_deadline()
                if not ctx.text.append("\n"):
                    return
            if not ctx.text.append(f"{name}\n"):
                return
            try:
                sheet = workbook.get_sheet_by_index(index)
            except PasswordError:
                raise ExtractionError("encrypted", "the workbook is password-protected") from None
            except (CalamineError, ValueError) as exc:
                # Chart and macro sheets have no cells; a damaged sheet
                # should not cost the others.
                if "password" in str(exc).lower():
                    raise ExtractionError("encrypted", str(exc)) from None
                continue
            if not _read_rows(sheet, ctx):
                return


def _read_rows(sheet: Any, ctx: ExtractionContext) -> bool:
    lines: list[str] = []
    for row in sheet.iter_rows():
        cells = [value if type(value) is str else _cell_text(value) for value in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            lines.append("\t".join(cells))
        if len(lines) >= _ROWS_PER_FLUSH:
            if not ctx.text.append("\n".join(lines) + "\n"):
                return False
            lines.clear()
            ctx.check_deadline()
    return ctx.text.append("\n".join(lines) + "\n") if lines else True


def _cell_text(value: Any) -> str:  # noqa: PLR0911 - one return per cell type
    """A cell as a person would type it into a search box."""
    if type(value) is float:  # the common case first: calamine gives numbers as floats
        return str(int(value)) if value.is_integer() and -1e15 < value < 1e15 else f"{value:.15g}"
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return f"{value:.15g}"
    if isinstance(value, datetime):
        return (
            value.isoformat(sep=" ")
            if (value.hour, value.minute, value.second) != (0, 0, 0)
            else value.date().isoformat()
        )
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    return str(value)
