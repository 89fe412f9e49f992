"""DOCX (and DOCM/DOTX) with zip + lxml: body, text boxes, tables, headers, footers, notes, comments.

python-docx misses text boxes (docs/extraction.md) and is 10x slower; walking the
WordprocessingML parts directly reads every ``w:t`` in document order,
including text boxes (``w:txbxContent``; the VML fallback copy inside
``mc:Fallback`` is skipped so the text appears once) and SmartArt data.
``page_count`` stays None: Word paginates at render time, and the page count
in ``docProps/app.xml`` is whatever the last application to save it guessed.
"""

from __future__ import annotations

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ooxml import (
    DRAWINGML,
    WORDPROCESSINGML,
    main_part,
    numbered,
    read_core,
    relationships,
    walk_text,
)
from docindex.extract.safezip import SafeZip

# Secondary parts in the order their text is appended after the body.
_SECONDARY = ("header", "footer", "footnotes", "endnotes", "comments", "diagramData")
_FALLBACK_PATTERNS = {
    "header": r"word/header(\d*)\.xml",
    "footer": r"word/footer(\d*)\.xml",
    "footnotes": r"word/footnotes(\d*)\.xml",
    "endnotes": r"word/endnotes(\d*)\.xml",
    "comments": r"word/comments(\d*)\.xml",
    "diagramData": r"word/diagrams/data(\d*)\.xml",
}


def extract_docx(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Text and title of a WordprocessingML package into ``ctx``."""
    with SafeZip(data, ctx.limits) as zf:
        read_core(zf, ctx)
        body = main_part(zf, "word/document.xml")
        if not walk_text(zf.open(body), WORDPROCESSINGML, ctx, body):
            return
        for part in _secondary_parts(zf, body):
            ctx.check_deadline()
            if not ctx.text.append("\n"):
                return
            vocab = DRAWINGML if "/diagrams/" in part else WORDPROCESSINGML
            try:
                if not walk_text(zf.open(part), vocab, ctx, part):
                    return
            except ExtractionError as exc:
                # A broken header must not cost the body that was already read.
                if exc.code != "corrupt":
                    raise


def _secondary_parts(zf: SafeZip, body: str) -> list[str]:
    try:
        rels = relationships(zf, body)
    except ExtractionError as exc:
        if exc.code != "corrupt":
            raise
        rels = []
    order = {kind: i for i, kind in enumerate(_SECONDARY)}
    if rels:
        found = sorted(
            ((order[kind], target) for _, kind, target in rels if kind in order and zf.has(target)),
        )
        return list(dict.fromkeys(target for _, target in found))
    # No relationships part (hand-made or damaged file): fall back to names.
    names = zf.names()
    return [part for kind in _SECONDARY for part in numbered(names, _FALLBACK_PATTERNS[kind])]
