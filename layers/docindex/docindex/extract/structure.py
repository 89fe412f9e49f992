"""The structure reading needs, kept in the text: a table's rows read with their header.

Every extractor writes a table (a Word or PowerPoint table, a sheet, an OpenDocument table, a legacy Word
table, an HTML table, a CSV file) as one line per row with its cells separated by tabs. Read so, a row is a run
of values: 「ノートPC 10 128000」 says nothing of which number is the price. :func:`rows_with_header` rewrites
each row of a table that has a header row as its cells named by their column — 「品名 ノートPC・数量 10・単価
128000」 — so the row alone (a snippet, a passage, an answer) says what each value is. The header row itself is
written with its labels separated by ・; a table without one (a key/value list: 「納期 ご注文後 2 週間」)
keeps its rows as they are.

A header row is the first row of a run of at least two tabbed lines whose first cell and at least one other are
filled and whose filled cells are all short labels without digits (品名, 数量, 単価; 部署, 氏名, 内線): a row
holding a figure or a long text is data.
"""

from __future__ import annotations

import re

# A header cell is a label: at most this many characters, no digit, not blank.
HEADER_CELL_CHARS = 16
_DIGIT = re.compile(r"[0-9０-９]")
# a cell of kanji numerals only (十, 二十) is a figure too; kanji numerals inside a label (一覧, 単価) are not
_NUMERALS = re.compile(r"[〇一二三四五六七八九十百千万億]+")
# The last character of a label that names a column: 品名, 数量, 金額, 単価, 所在地, 担当者, 期限, 備考 ...
_COLUMN_NOUNS = frozenset("名数量額価費日先地所者号類目考時間限率計額容種別況格付順")
_FIGURE = re.compile(r"[-+−¥￥$]?[0-9０-９][0-9０-９,，.．]*\s*[%％円万億千個台本件名人日月年]*")
# Separates one named cell from the next in a row read with its header.
CELL_SEPARATOR = "・"


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split("\t")]


def _is_header(table: list[list[str]]) -> bool:
    cells = table[0]
    filled = [c for c in cells if c]
    if len(filled) < 2 or not cells[0]:
        return False
    if not all(len(c) <= HEADER_CELL_CHARS and not _DIGIT.search(c) and not _NUMERALS.fullmatch(c) for c in filled):
        return False
    if len(cells) > 2:
        return True
    # Two columns may be a key/value list (担当 髙橋 / 確認済み TRUE): a header only when its second label names
    # a column (金額, 所在地, 氏名) or the column under it holds figures only.
    column = [row[1] for row in table[1:] if len(row) > 1 and row[1]]
    return cells[1][-1] in _COLUMN_NOUNS or (bool(column) and all(_FIGURE.fullmatch(c) for c in column))


def named_row(header: list[str], cells: list[str]) -> str:
    """A row's cells each named by its column: 品名 ノートPC・数量 10・単価 128000 (empty cells left out)."""
    named = []
    for i, cell in enumerate(cells):
        if not cell:
            continue
        label = header[i] if i < len(header) else ""
        named.append(f"{label} {cell}" if label else cell)
    return CELL_SEPARATOR.join(named)


def rows_with_header(text: str) -> str:
    """``text`` with each row of a tabbed table that has a header row read with its header (see the module)."""
    if "\t" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "\t" not in line.strip("\t "):
            out.append(line)
            i += 1
            continue
        # a run of tabbed lines: one table
        end = i
        while end < len(lines) and "\t" in lines[end].strip("\t "):
            end += 1
        table = [_cells(row) for row in lines[i:end]]
        if end - i >= 2 and _is_header(table):
            header = table[0]
            out.append(CELL_SEPARATOR.join(header))
            out.extend(named_row(header, cells) for cells in table[1:])
        else:
            out.extend(lines[i:end])
        i = end
    return "\n".join(out)


def csv_rows(text: str) -> str:
    """A CSV file's text as tabbed rows (the table form every extractor writes), quoting and all; the text as it
    is when it does not read as CSV (one column, or ragged beyond recognition)."""
    import csv
    import io

    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return text
    if not rows or max(len(r) for r in rows) < 2:
        return text
    return "\n".join("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in row) for row in rows)
