"""Excel binary workbooks (``.xlsb``) with pyxlsb2: every sheet's cell text, as for XLSX.

python-calamine panics on workbooks Excel itself writes (Apache Tika's
``testEXCEL.xlsb``: "no entry found for key"), so XLSB is read by pyxlsb2
(Apache-2.0, pure Python, a reader of the [MS-XLSB] BIFF12 records). Like
every zip-based format the package goes through :class:`SafeZip` first (the
bomb checks on the zip directory) before pyxlsb2 opens it. pyxlsb2 streams
rows (no dense rectangle), so memory follows the cells actually present; it
runs in an isolated extraction process (``extract/isolation.py``) bounded in
memory and time like the other spreadsheets, and the text stops at
``max_chars``. Sheet names come from the workbook when pyxlsb2 reads them
(some Excel versions' records it does not: then ``Sheet N``).
"""

from __future__ import annotations

import io
from typing import Any

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ooxml import read_core
from docindex.extract.safezip import SafeZip

_ROWS_PER_CHECK = 1000


def extract_xlsb(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Every sheet's name and non-empty rows (cells tab-separated) into ``ctx``."""
    with SafeZip(data, ctx.limits) as zf:  # refuses bombs from the directory before anything inflates
        read_core(zf, ctx)
    from pyxlsb2 import open_workbook

    try:
        workbook = open_workbook(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - pyxlsb2 raises whatever its parser meets: the file is damaged
        raise ExtractionError("corrupt", f"xlsb: {type(exc).__name__}: {exc}") from None
    with workbook:
        for index, record in enumerate(workbook.sheets):
            if index:
                ctx.check_deadline()
                if not ctx.text.append("\n"):
                    return
            name = getattr(record, "name", None) or f"Sheet {index + 1}"
            ctx.start_page("sheet", index + 1, name)
            if not ctx.text.append(f"{name}\n"):
                return
            try:
                sheet = workbook.get_sheet_by_index(index)
            except Exception as exc:  # noqa: BLE001 - one unreadable sheet must not cost the others
                ctx.drop(f"sheet '{name}'", f"unreadable: {type(exc).__name__}")
                continue
            with sheet:
                if not _read_rows(sheet, ctx):
                    return


def _read_rows(sheet: Any, ctx: ExtractionContext) -> bool:
    lines: list[str] = []
    for count, row in enumerate(sheet.rows(), start=1):
        cells = ["" if cell.value is None else _text(cell.value) for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            lines.append("\t".join(cells))
        if count % _ROWS_PER_CHECK == 0:
            if not ctx.text.append("\n".join(lines) + "\n"):
                return False
            lines.clear()
            ctx.check_deadline()
    return ctx.text.append("\n".join(lines) + "\n") if lines else True


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and -1e15 < value < 1e15 else f"{value:.15g}"
    return str(value)
