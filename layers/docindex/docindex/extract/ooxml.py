"""Shared OOXML machinery: the locked-down XML parser, relationships, core properties, text walking.

Every XML part is parsed with entity resolution, DTD loading and network
access off and libxml2's size limits on (``huge_tree=False``). OOXML never
contains a DOCTYPE, so a part that has one is rejected as ``corrupt``: it
can only be an XXE or entity-expansion attempt. Large parts (the body of a
2000-page document) are streamed with ``iterparse`` and cleared paragraph by
paragraph, so memory stays flat.
"""

from __future__ import annotations

import io
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from docindex.core.exceptions import ExtractionError
from docindex.extract.context import ExtractionContext
from docindex.extract.safezip import SafeZip

# Passed to both XMLParser and iterparse.
PARSER_OPTIONS: dict[str, Any] = {
    "resolve_entities": False,
    "no_network": True,
    "huge_tree": False,
    "load_dtd": False,
    "dtd_validation": False,
    "remove_comments": True,
    "remove_pis": True,
}
# Small parts (rels, core.xml, presentation.xml) are read whole, up to this.
SMALL_PART_BYTES = 8 * 1024 * 1024

_REL_NS = (
    "http://schemas.openxmlformats.org/package/2006/relationships",
    "http://purl.oclc.org/ooxml/package/relationships",  # unlikely, but Strict mirrors every namespace
)
_DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"
# Text is flushed to the buffer (and the deadline checked) every this many
# paragraphs, or when this many pieces are pending (one giant paragraph).
_FLUSH_EVERY = 256
_MAX_PENDING = 4096


def _ns(*pairs: tuple[str, str]) -> frozenset[str]:
    return frozenset(f"{{{ns}}}{local}" for ns, local in pairs)


def _both(transitional: str, strict: str, *locals_: str) -> frozenset[str]:
    return _ns(*((ns, local) for ns in (transitional, strict) for local in locals_))


_W = (
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main",
)
_A = ("http://schemas.openxmlformats.org/drawingml/2006/main", "http://purl.oclc.org/ooxml/drawingml/main")
_MC_FALLBACK = _ns(("http://schemas.openxmlformats.org/markup-compatibility/2006", "Fallback"))


@dataclass(frozen=True)
class Vocabulary:
    """Which elements of a markup language carry text and structure."""

    text: frozenset[str]
    paragraph: frozenset[str]
    line_break: frozenset[str]
    tab: frozenset[str]  # a tab character only when its parent is a run
    run: frozenset[str]
    cell: frozenset[str]
    row: frozenset[str]
    # Subtrees whose text must not be read: mc:Fallback repeats the text of
    # mc:Choice (text boxes would appear twice).
    skip: frozenset[str]
    # Fields whose text is noise (slide numbers): tag -> skipped type values.
    field: frozenset[str] = frozenset()
    skip_field_types: frozenset[str] = frozenset()
    # Text boxes and shapes: their text is a passage of its own (a blank line before and after it), not a run
    # glued to the paragraph the box is anchored in. Inside a table cell a shape's text is the cell's.
    block: frozenset[str] = frozenset()

    @property
    def tags(self) -> list[str]:
        return sorted(
            self.text
            | self.paragraph
            | self.line_break
            | self.tab
            | self.cell
            | self.row
            | self.skip
            | self.field
            | self.block
        )


WORDPROCESSINGML = Vocabulary(
    # w:t only: w:delText is deleted text, w:instrText is field code.
    text=_both(*_W, "t"),
    paragraph=_both(*_W, "p"),
    line_break=_both(*_W, "br", "cr"),
    tab=_both(*_W, "tab"),
    run=_both(*_W, "r"),
    cell=_both(*_W, "tc"),
    row=_both(*_W, "tr"),
    skip=_MC_FALLBACK,
    block=_both(*_W, "txbxContent"),
)

DRAWINGML = Vocabulary(
    text=_both(*_A, "t"),
    paragraph=_both(*_A, "p"),
    line_break=_both(*_A, "br"),
    tab=frozenset(),
    run=_both(*_A, "r"),
    cell=_both(*_A, "tc"),
    row=_both(*_A, "tr"),
    skip=_MC_FALLBACK,
    field=_both(*_A, "fld"),
    skip_field_types=frozenset({"slidenum"}),
)


def _reject_doctype(element: Any, part: str) -> None:
    docinfo = element.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None:
        raise ExtractionError("corrupt", f"{part} has a DOCTYPE (not valid OOXML; XXE or entity expansion)")


def parse_part(zf: SafeZip, name: str) -> Any:
    """Parse a small XML part whole with the locked-down parser."""
    from lxml import etree

    data = zf.read(name, SMALL_PART_BYTES)
    parser = etree.XMLParser(**PARSER_OPTIONS)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ExtractionError("corrupt", f"{name}: {exc}") from None
    if root is None:
        raise ExtractionError("corrupt", f"{name} is empty")
    _reject_doctype(root, name)
    return root


def rels_name(part: str) -> str:
    """The relationships part of ``part`` ("" is the package itself)."""
    folder, base = posixpath.split(part)
    return posixpath.join(folder, "_rels", f"{base}.rels")


def relationships(zf: SafeZip, part: str) -> list[tuple[str, str, str]]:
    """(id, type suffix, target part name) of ``part``'s internal relationships; [] if none."""
    name = rels_name(part)
    if not zf.has(name):
        return []
    root = parse_part(zf, name)
    folder = posixpath.dirname(part)
    out = []
    for rel in root:
        if not isinstance(rel.tag, str) or rel.tag.rpartition("}")[2] != "Relationship":
            continue
        if rel.get("TargetMode") == "External":
            continue
        target = unquote(rel.get("Target") or "")
        if not target:
            continue
        resolved = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        kind = (rel.get("Type") or "").rpartition("/")[2]
        out.append((rel.get("Id") or "", kind, resolved))
    return out


def main_part(zf: SafeZip, default: str) -> str:
    """The package's main document part (from ``_rels/.rels``), or ``default``."""
    for _, kind, target in relationships(zf, ""):
        if kind == "officeDocument" and zf.has(target):
            return target
    return default


def core_title(zf: SafeZip) -> str | None:
    """``dc:title`` from the core properties, if set."""
    return core_properties(zf).get("title")


_CORE_FIELDS = {
    "title": "{http://purl.org/dc/elements/1.1/}title",
    "author": "{http://purl.org/dc/elements/1.1/}creator",
    "last_saved_by": "{http://schemas.openxmlformats.org/package/2006/metadata/core-properties}lastModifiedBy",
    "created": "{http://purl.org/dc/terms/}created",
    "modified": "{http://purl.org/dc/terms/}modified",
}


def core_properties(zf: SafeZip) -> dict[str, str]:
    """Title, author, last saved by, created and modified from ``docProps/core.xml`` (what is set)."""
    name = next((t for _, k, t in relationships(zf, "") if k == "core-properties"), "docProps/core.xml")
    if not zf.has(name):
        return {}
    try:
        root = parse_part(zf, name)
    except ExtractionError as exc:
        if exc.code != "corrupt":
            raise
        return {}  # broken metadata must not cost us the content
    found = {}
    for key, tag in _CORE_FIELDS.items():
        node = root.find(tag)
        text = (node.text or "").strip() if node is not None else ""
        if text:
            found[key] = text
    return found


def read_core(zf: SafeZip, ctx: ExtractionContext) -> None:
    """The core properties into ``ctx``: title, author, last saved by, created, modified."""
    from datetime import datetime

    props = core_properties(zf)
    ctx.title = props.get("title")
    ctx.author = props.get("author")
    ctx.last_saved_by = props.get("last_saved_by")

    def when(key: str) -> datetime | None:
        try:
            return datetime.fromisoformat(props[key].replace("Z", "+00:00")) if key in props else None
        except ValueError:
            return None

    ctx.set_dates(when("created"), when("modified"))


def numbered(names: Iterable[str], pattern: str) -> list[str]:
    """Names matching ``pattern`` (one numeric group, may be empty), in numeric order."""
    regex = re.compile(pattern)
    found = []
    for name in names:
        match = regex.fullmatch(name)
        if match:
            found.append((int(match.group(1) or 0), name))
    return [name for _, name in sorted(found)]


def walk_text(stream: io.RawIOBase, vocab: Vocabulary, ctx: ExtractionContext, part: str) -> bool:
    """Stream one XML part's text into ``ctx.text``; False once the buffer is full.

    Paragraphs end with a newline, table cells with a tab, rows with a
    newline. Raises ``ExtractionError('corrupt')`` for malformed XML, keeping
    the text read before the error.
    """
    from lxml import etree

    walker = _Walker(vocab, ctx)
    try:
        with stream:
            events = etree.iterparse(stream, events=("start", "end"), tag=vocab.tags, **PARSER_OPTIONS)
            for event, element in events:
                if walker.first:
                    _reject_doctype(element, part)
                    walker.first = False
                if event == "start":
                    walker.start(element)
                elif not walker.end(element):
                    return False
                if len(walker.parts) >= _MAX_PENDING:
                    if not walker.flush():
                        return False
                    ctx.check_deadline()
    except etree.XMLSyntaxError as exc:
        walker.flush()
        raise ExtractionError("corrupt", f"{part}: {exc}") from None
    return walker.flush()


class _Walker:
    """The state of one ``walk_text`` pass: pending text pieces and skip depth."""

    def __init__(self, vocab: Vocabulary, ctx: ExtractionContext) -> None:
        self.vocab = vocab
        self.ctx = ctx
        self.parts: list[str] = []
        self.skip = 0
        self.paragraphs = 0
        self.first = True
        # Whether text was added since the last line end, and where the last
        # paragraph's newline and cell's tab sit (so a cell end can turn its
        # paragraph's newline into a tab, and a row end its last tab into a newline).
        self.line_open = False
        self.paragraph_newline = -1
        self.cell_tab = -1
        self.cells = 0  # table cells open around the element read

    def flush(self) -> bool:
        chunk = "".join(self.parts)
        self.parts.clear()
        self.paragraph_newline = self.cell_tab = -1
        return self.ctx.text.append(chunk)

    def _skipped(self, element: Any) -> bool:
        tag = element.tag
        vocab = self.vocab
        return tag in vocab.skip or (tag in vocab.field and element.get("type") in vocab.skip_field_types)

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.line_open = True

    def start(self, element: Any) -> None:
        if self._skipped(element):
            self.skip += 1
        elif self.skip:
            return
        elif element.tag in self.vocab.cell:
            self.cells += 1
        elif element.tag in self.vocab.block and not self.cells:
            self._blank_line()
        elif element.tag in self.vocab.line_break:
            self._add("\n")
        elif element.tag in self.vocab.tab:
            # w:tab is a tab character inside a run, a tab stop inside w:tabs.
            parent = element.getparent()
            if parent is not None and parent.tag in self.vocab.run:
                self._add("\t")

    def end(self, element: Any) -> bool:
        """Handle an end tag; False when the text buffer is full."""
        if self._skipped(element):
            self.skip -= 1
            return True
        if self.skip:
            return True
        tag = element.tag
        vocab = self.vocab
        if tag in vocab.text:
            if element.text:
                self._add(element.text)
            _release_text(element)
        elif tag in vocab.paragraph:
            # Empty paragraphs (spacing, a skipped slide-number field) add no blank line.
            if self.line_open:
                self.parts.append("\n")
                self.paragraph_newline = len(self.parts) - 1
                self.line_open = False
            release(element)
            self.paragraphs += 1
            if self.paragraphs % _FLUSH_EVERY == 0:
                if not self.flush():
                    return False
                self.ctx.check_deadline()
        elif tag in vocab.block and not self.cells:
            self._blank_line()
        elif tag in vocab.cell:
            self.cells = max(0, self.cells - 1)
            self._close(self.paragraph_newline, "\t")
            self.cell_tab = len(self.parts) - 1
            self.line_open = True
        elif tag in vocab.row:
            self._close(self.cell_tab, "\n")
            self.line_open = False
        return True

    def _blank_line(self) -> None:
        """End the line and leave a blank one: what follows is a passage of its own."""
        if self.parts:
            self.parts.append("\n\n")
        self.line_open = False
        self.paragraph_newline = self.cell_tab = -1

    def _close(self, replaceable: int, separator: str) -> None:
        """End a cell or row: reuse the separator just before it, or add one."""
        if replaceable == len(self.parts) - 1 >= 0:
            self.parts[-1] = separator
        else:
            self.parts.append(separator)
        self.paragraph_newline = -1


def _release_text(element: Any) -> None:
    """Free a finished text element and the finished runs before its run.

    Paragraphs are released when they end; this keeps one huge paragraph
    (millions of runs) from holding the whole part in memory meanwhile.
    Only finished elements are touched: the run and paragraph are still open.
    """
    element.clear(keep_tail=False)
    run = element.getparent()
    if run is None:
        return
    while element.getprevious() is not None:
        del run[0]
    holder = run.getparent()
    if holder is not None:
        while run.getprevious() is not None:
            del holder[0]


def release(element: Any) -> None:
    """Free a finished paragraph and the finished siblings before it."""
    element.clear(keep_tail=False)
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]
