"""OpenDocument text, spreadsheets and presentations (.odt/.ods/.odp): zip + the locked-down XML parser.

``content.xml`` holds the text of every paragraph, heading, table cell,
frame, note, comment and (for presentations) speaker note; it is streamed
with ``iterparse`` and each top-level paragraph released once read, so
memory stays flat. ODF text is mixed content (``<text:p>ab<text:span>c</text:span>d</text:p>``):
a paragraph's text is its own text, its children's and their tails, with
``text:s`` (spaces), ``text:tab`` and ``text:line-break`` expanded. The
title and author come from ``meta.xml``. The zip is opened through
:class:`SafeZip` (bomb checks first); a DOCTYPE is ``corrupt`` as in OOXML.
"""

from __future__ import annotations

from typing import Any

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ooxml import PARSER_OPTIONS, parse_part, release
from docindex.extract.safezip import SafeZip

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
_PARAGRAPHS = (f"{{{_TEXT}}}p", f"{{{_TEXT}}}h")
_SPACE = f"{{{_TEXT}}}s"
_TAB = f"{{{_TEXT}}}tab"
_LINE_BREAK = f"{{{_TEXT}}}line-break"
_PAGE = f"{{{_DRAW}}}page"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_ROW = f"{{{_TABLE}}}table-row"
_SHEET = f"{{{_TABLE}}}table"
_SHEET_NAME = f"{{{_TABLE}}}name"
_CELLS = (f"{{{_TABLE}}}table-cell", f"{{{_TABLE}}}covered-table-cell")
_DC = "http://purl.org/dc/elements/1.1/"
_META = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
_FLUSH_EVERY = 256
_ANNOTATION_META = frozenset({f"{{{_DC}}}creator", f"{{{_DC}}}date"})


def extract_odf(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Text of content.xml (then headers and footers), title and author of meta.xml, into ``ctx``."""
    with SafeZip(data, ctx.limits) as zf:
        if not zf.has("content.xml"):
            raise ExtractionError("corrupt", "no content.xml in the OpenDocument package")
        _meta(zf, ctx)
        pages = _walk(zf, "content.xml", ctx, paged=ftype.kind)
        if ftype.kind == "odp":
            ctx.page_count = pages
        # Headers and footers live in the master pages of styles.xml (a text document's; a
        # spreadsheet's or presentation's are LibreOffice's defaults: "???", "Page 1").
        if ftype.kind == "odt" and pages is not None and zf.has("styles.xml") and not ctx.text.full:
            _walk(zf, "styles.xml", ctx)


def _walk(zf: SafeZip, part: str, ctx: ExtractionContext, *, paged: str = "") -> int | None:
    """Stream one part's paragraphs into ``ctx``; the number of pages (slides) seen, None once full.

    ``paged``: ``odp`` marks where each slide starts, ``ods`` where each sheet (a top-level table) does.
    """
    from lxml import etree

    pending: list[str] = []
    depth = 0
    seen = {_PAGE: 0, _SHEET: 0}
    try:
        with zf.open(part) as stream:
            tags = (*_PARAGRAPHS, _PAGE, _ROW, *((_SHEET,) if paged == "ods" else ()))
            events = etree.iterparse(stream, events=("start", "end"), tag=tags, **PARSER_OPTIONS)
            for event, element in events:
                if element.tag in seen:
                    if event == "start" and not depth and not _new_page(element, seen, pending, ctx, paged):
                        return None
                    continue
                if event == "start":
                    depth += 1
                    continue
                depth -= 1
                if depth:
                    continue  # inside a frame, note, cell or row of an outer element: read with it
                line = row_text(element) if element.tag == _ROW else paragraph_text(element)
                pending.append(line + "\n")
                release(element)
                if len(pending) >= _FLUSH_EVERY:
                    if not ctx.text.append("".join(pending)):
                        return None
                    pending.clear()
                    ctx.check_deadline()
    except etree.XMLSyntaxError as exc:
        ctx.text.append("".join(pending))
        raise ExtractionError("corrupt", f"{part}: {exc}") from None
    if not ctx.text.append("".join(pending)):
        return None
    return seen[_PAGE]


def _new_page(element: Any, seen: dict[str, int], pending: list[str], ctx: ExtractionContext, paged: str) -> bool:
    """Count a slide or sheet starting and mark it in ``ctx``; False once the text is full."""
    # The text read so far belongs to the page before: it goes in first.
    if pending and not ctx.text.append("".join(pending)):
        return False
    pending.clear()
    seen[element.tag] += 1
    if element.tag == _SHEET:
        ctx.start_page("sheet", seen[_SHEET], element.get(_SHEET_NAME))
    elif paged == "odp":
        ctx.start_page("slide", seen[_PAGE])
    return True


def row_text(row: Any) -> str:
    """A table row as one line: its cells' text separated by tabs (trailing empty cells dropped)."""
    cells = []
    for cell in row:
        if cell.tag not in _CELLS:
            continue
        lines = [paragraph_text(p) for p in cell.iter(*_PARAGRAPHS) if p.getparent() is cell]
        cells.append(" ".join(line.strip() for line in lines if line.strip()))
    while cells and not cells[-1]:
        cells.pop()
    return "\t".join(cells)


def paragraph_text(element: Any) -> str:
    """The text of an ODF paragraph and everything inside it (nested paragraphs on their own lines)."""
    parts: list[str] = []
    _collect(element, parts)
    return "".join(parts)


def _collect(element: Any, parts: list[str], depth: int = 0) -> None:
    if depth > 100:
        raise ExtractionError("corrupt", "content.xml nested too deeply")
    if element.text:
        parts.append(element.text)
    for child in element:
        tag = child.tag
        if tag == _SPACE:
            parts.append(" " * min(int(child.get(f"{{{_TEXT}}}c", "1") or 1), 100))
        elif tag == _TAB:
            parts.append("\t")
        elif tag == _LINE_BREAK:
            parts.append("\n")
        elif tag in _ANNOTATION_META:
            pass  # a comment's author and date
        elif isinstance(tag, str):
            if tag in _PARAGRAPHS:
                parts.append("\n")
            _collect(child, parts, depth + 1)
            if tag in _PARAGRAPHS:
                parts.append("\n")
        if child.tail:
            parts.append(child.tail)


def _meta(zf: SafeZip, ctx: ExtractionContext) -> None:
    if not zf.has("meta.xml"):
        return
    try:
        root = parse_part(zf, "meta.xml")
    except ExtractionError as exc:
        if exc.code != "corrupt":
            raise
        return  # broken metadata must not cost the content
    title = root.find(f".//{{{_DC}}}title")
    author = root.find(f".//{{{_META}}}initial-creator")
    if author is None:
        author = root.find(f".//{{{_DC}}}creator")
    ctx.title = (title.text or "").strip() or None if title is not None else None
    ctx.author = (author.text or "").strip() or None if author is not None else None
    saver = root.find(f".//{{{_DC}}}creator")
    ctx.last_saved_by = (saver.text or "").strip() or None if saver is not None else None
    ctx.set_dates(_odf_time(root.find(f".//{{{_META}}}creation-date")), _odf_time(root.find(f".//{{{_DC}}}date")))


def _odf_time(node: Any) -> Any:
    from datetime import datetime

    try:
        return datetime.fromisoformat((node.text or "").strip().replace("Z", "+00:00")) if node is not None else None
    except ValueError:
        return None
