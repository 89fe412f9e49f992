"""Spreadsheets with python-calamine: XLSX/XLSM/XLTX and legacy XLS.

calamine reads 3 sheets x 20k rows ten times faster than openpyxl and also
reads ``.xls`` (docs/extraction.md). Every sheet becomes a line with its name
followed by one line per non-empty row, cells separated by tabs (trailing
empty cells dropped). ``page_count`` stays None: sheets are not pages.

calamine builds each sheet as a dense rectangle in Rust, and a failed
allocation aborts the whole process (no Python exception): a 2 KB XLSX with
cells in A1 and XFD1048576 asks for 512 GiB. So before calamine sees an
XLSX, each worksheet's extent is bounded from its row and cell references
(regular expressions, ~15 ms per MB of sheet XML; an exact lxml pass only
when that bound is too big) and a sheet spanning more than
``MAX_SHEET_CELLS`` cells is left out (``content_dropped`` names it and
why), as is a sheet carrying a DOCTYPE (not valid OOXML: XXE or entity
expansion) or one calamine cannot read; the other sheets are read. Only
when no sheet is left is the workbook refused (``too_large``, ``corrupt``).
Legacy XLS is
bounded by the format itself (65536 x 256 cells, ~0.5 GB at worst). XLSB
and ODS are not accepted for the same reason: their extents cannot be
checked cheaply.
"""

from __future__ import annotations

import io
import re
from datetime import date, datetime, time, timedelta
from typing import Any

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ooxml import main_part, parse_part, read_core, relationships, release
from docindex.extract.safezip import SafeZip

# ~32 bytes per cell in calamine: 10M cells is ~320 MB, the most a Lambda
# with room for everything else can spare. Real sheets are far smaller
# (3 x 20k rows x 10 columns = 600k).
MAX_SHEET_CELLS = 10_000_000
_ROWS_PER_FLUSH = 1000

# Loose patterns for an upper bound: they may also match inside comments or
# text (which only raises the bound), and accept what calamine accepts:
# single quotes, spaces around "=", lowercase column letters, prefixes.
_ROW_TAG = re.compile(rb"<(?:[\w.-]+:)?row[\s/>]")
_CELL_TAG = re.compile(rb"<(?:[\w.-]+:)?c[\s/>]")
_PREFIXED_CELL_TAG = re.compile(rb"<[\w.-]+:c[\s/>]")
_REF_ROW = re.compile(rb"""r\s*=\s*["']\s*[A-Za-z]*(\d+)""")
_REF_COLUMN = re.compile(rb"""r\s*=\s*["']\s*([A-Za-z]+)\d""")
_CELL_REF = re.compile(r"([A-Za-z]+)(\d+)")


def extract_spreadsheet(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """All sheets' cell text (and the XLSX title) into ``ctx``."""
    left_out: set[str] = set()
    if ftype.kind == "xlsx":
        with SafeZip(data, ctx.limits) as zf:
            read_core(zf, ctx)
            sheets = _sheet_parts(zf)
            refusals: list[ExtractionError] = []
            for name, part in sheets:
                try:
                    _check_sheet(zf, part, ctx)
                except ExtractionError as exc:
                    if exc.code not in ("too_large", "corrupt"):
                        raise
                    refusals.append(exc)
                    left_out.add(name)
                    ctx.drop(f"sheet '{name}'", exc.detail or exc.code)
            if sheets and len(left_out) == len(sheets):
                raise refusals[0]
    elif ftype.kind != "xls":
        raise ExtractionError("unsupported", f"{ftype.kind} workbooks are not read")
    _read_workbook(data, ctx, left_out)


def _check_sheet(zf: SafeZip, part: str, ctx: ExtractionContext) -> None:
    """Raise ``corrupt`` or ``too_large`` for a worksheet calamine must not be given."""
    with zf.open(part) as stream:
        head = stream.read(4096)
    if b"<!DOCTYPE" in head.upper():
        raise ExtractionError("corrupt", "has a DOCTYPE (not valid OOXML; XXE or entity expansion)")
    _count_cells(zf, part, ctx)
    area = sheet_area(zf.read(part))
    if area > MAX_SHEET_CELLS:
        raise ExtractionError("too_large", f"spans {area:,} cells (limit {MAX_SHEET_CELLS:,})")
    _check_fits(part, area, ctx)


def _sheet_parts(zf: SafeZip) -> list[tuple[str, str]]:
    """(sheet name, worksheet part) in workbook order, for the sheets calamine reads."""
    workbook = main_part(zf, "xl/workbook.xml")
    targets = {rid: target for rid, kind, target in relationships(zf, workbook) if kind == "worksheet"}
    sheets = []
    for element in parse_part(zf, workbook).iter():
        if isinstance(element.tag, str) and element.tag.rpartition("}")[2] == "sheet":
            rid = next((value for key, value in element.attrib.items() if key.endswith("}id")), None)
            target = targets.get(rid or "")
            if target and zf.has(target):
                sheets.append((element.get("name") or target, target))
    return sheets


def _count_cells(zf: SafeZip, part: str, ctx: ExtractionContext) -> None:
    """Refuse a sheet with more cell tags than fit this extraction's memory, reading it a MiB at a time.

    Every ``<c>`` is at least one cell calamine allocates, so the count is a
    lower bound and the refusal comes as soon as it is reached, before the
    sheet is read whole (a 10 M-cell sheet is ~150 MB of XML). The sheet's
    ``<dimension ref>`` is not used: calamine does not allocate from it
    (a 1-cell sheet declaring A1:XFD1048576 costs nothing), so it is no cost.
    """
    from docindex.extract.isolation import BYTES_PER_CELL

    if ctx.bounds is None:
        return
    limit = ctx.bounds.memory_bytes // BYTES_PER_CELL
    cells = 0
    carry = b""
    with zf.open(part) as stream:
        while chunk := stream.read(1 << 20):
            window = carry + chunk
            # Tags start with "<" and hold no other: up to the last "<" none is cut in two.
            cut = window.rfind(b"<")
            if cut <= 0:
                cut = len(window)
            # "<c" also matches the few <col>/<cfRule> tags of a sheet: thousands at
            # most against a limit of millions. Prefixed tags (<x:c>) are rare.
            cells += window.count(b"<c", 0, cut)
            if window.find(b":c", 0, cut) >= 0:
                cells += len(_PREFIXED_CELL_TAG.findall(window, 0, cut))
            carry = window[cut:]
            if cells > limit:
                raise ExtractionError(
                    "too_large",
                    f"{part} has more than {cells} cells: more than the"
                    f" {ctx.bounds.memory_bytes >> 20} MiB this extraction may use can hold",
                )


def _check_fits(part: str, area: int, ctx: ExtractionContext) -> None:
    """Refuse a sheet whose cells cannot fit the memory this extraction may use, before calamine allocates them."""
    from docindex.extract.isolation import BYTES_PER_CELL

    if ctx.bounds is not None and area * BYTES_PER_CELL > ctx.bounds.memory_bytes:
        raise ExtractionError(
            "too_large",
            f"{part} spans {area} cells: ~{area * BYTES_PER_CELL >> 20} MiB, more than the"
            f" {ctx.bounds.memory_bytes >> 20} MiB this extraction may use",
        )


def _column_number(letters: bytes | str) -> int:
    number = 0
    for ch in letters.upper():
        number = number * 26 + ((ch if isinstance(ch, int) else ord(ch)) - 64)
    return number


def sheet_area(xml: bytes) -> int:
    """How many cells calamine will allocate for a worksheet: a cheap upper bound, exact when that is too big.

    calamine places a row or cell without an ``r`` reference right after the
    previous one, so the bound is the largest explicit row plus the number of
    rows, times the largest explicit column plus the most cells in one row.
    For fully referenced sheets that is at most 4x the real area; only when
    it exceeds ``MAX_SHEET_CELLS`` is the sheet parsed to get the exact area.
    """
    if len(xml) < 64 * 1024:
        return _exact_area(xml)
    bound = _loose_bound(xml)
    return _exact_area(xml) if bound > MAX_SHEET_CELLS else bound


def _loose_bound(xml: bytes) -> int:
    row_digits = set(_REF_ROW.findall(xml))
    if any(len(d) > 9 for d in row_digits):
        return 1 << 62
    max_row = max((int(d) for d in row_digits), default=0)
    max_column = max((_column_number(c) for c in set(_REF_COLUMN.findall(xml))), default=0)
    rows = _ROW_TAG.split(xml)
    widest = max(len(_CELL_TAG.findall(row)) for row in rows)
    return (max_row + len(rows)) * (max_column + widest)


def _exact_area(xml: bytes) -> int:
    """The rectangle calamine will build, following its placement rules (lxml, ~2 µs per cell)."""
    from lxml import etree

    from docindex.extract.ooxml import PARSER_OPTIONS

    row = column = 0
    top = left = 1 << 62
    bottom = right = 0
    try:
        for event, element in etree.iterparse(
            io.BytesIO(xml), events=("start", "end"), tag=("{*}row", "{*}c"), **PARSER_OPTIONS
        ):
            if event == "end":
                # Only finished elements may be cleared (clearing at "start"
                # frees what the parser is still filling in).
                release(element)
                continue
            ref = element.get("r")
            if element.tag.endswith("row"):
                row = int(ref) if ref and ref.strip().isdigit() else row + 1
                column = 0
                continue
            match = _CELL_REF.fullmatch(ref.strip()) if ref else None
            if match:
                column, cell_row = _column_number(match.group(1)), int(match.group(2))
            else:
                column, cell_row = column + 1, row
            top, bottom = min(top, cell_row), max(bottom, cell_row)
            left, right = min(left, column), max(right, column)
    except etree.XMLSyntaxError as exc:
        raise ExtractionError("corrupt", f"worksheet: {exc}") from None
    return (bottom - top + 1) * (right - left + 1) if bottom else 0


def _read_workbook(data: bytes, ctx: ExtractionContext, left_out: set[str] | frozenset[str] = frozenset()) -> None:
    from python_calamine import CalamineError, CalamineWorkbook, PasswordError, SheetTypeEnum

    try:
        workbook = CalamineWorkbook.from_filelike(io.BytesIO(data))
    except PasswordError:
        raise ExtractionError("encrypted", "the workbook is password-protected") from None
    except (CalamineError, ValueError, OSError) as exc:
        raise ExtractionError("corrupt", str(exc)) from None
    with workbook:
        # Chart, dialog and macro sheets hold no cells: not reading them leaves nothing out.
        worksheets = {m.name for m in workbook.sheets_metadata if m.typ == SheetTypeEnum.WorkSheet}
        for index, name in enumerate(workbook.sheet_names):
            if name in left_out:
                continue
            if index:
                ctx.check_deadline()
                if not ctx.text.append("\n"):
                    return
            ctx.start_page("sheet", index + 1, name)
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
                if name in worksheets:
                    ctx.drop(f"sheet '{name}'", f"unreadable: {exc}")
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
