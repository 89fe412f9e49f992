"""PPTX (and PPTM/PPSX/POTX) with zip + lxml: slides in presentation order, tables, groups, notes.

Slides are read in the order of ``p:sldIdLst`` in the presentation part
(the order the audience sees), falling back to the numbers in the part
names. Every ``a:t`` of a slide is read in document order, which covers
grouped shapes and table cells; each slide's SmartArt data and its notes
page follow the slide. Slide-number fields are skipped (noise).
``page_count`` is the number of slides.
"""

from __future__ import annotations

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ooxml import (
    DRAWINGML,
    main_part,
    numbered,
    parse_part,
    read_core,
    relationships,
    walk_text,
)
from docindex.extract.safezip import SafeZip

_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_R_ID_STRICT = "{http://purl.oclc.org/ooxml/officeDocument/relationships}id"


def extract_pptx(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Text of every slide and notes page, title and slide count into ``ctx``."""
    with SafeZip(data, ctx.limits) as zf:
        read_core(zf, ctx)
        presentation = main_part(zf, "ppt/presentation.xml")
        slides = slide_order(zf, presentation)
        ctx.page_count = len(slides)
        if len(slides) > ctx.limits.max_pages:
            limit = ctx.limits.max_pages
            ctx.drop(f"slides {limit + 1:,}-{len(slides):,}", f"more than MAX_PAGES ({limit:,})")
            slides = slides[: ctx.limits.max_pages]
        for index, slide in enumerate(slides):
            if index:
                ctx.check_deadline()
                if not ctx.text.append("\n"):
                    return
            ctx.start_page("slide", index + 1)
            for number, part in enumerate([slide, *_attached(zf, slide)]):
                # the notes (and SmartArt) after the slide's text: a passage of their own
                if number and not ctx.text.append("\n\n"):
                    return
                try:
                    if not walk_text(zf.open(part), DRAWINGML, ctx, part):
                        return
                except ExtractionError as exc:
                    # One broken slide must not cost the others; a broken
                    # slide still raises if nothing at all can be read.
                    if exc.code != "corrupt" or len(slides) == 1:
                        raise


def slide_order(zf: SafeZip, presentation: str) -> list[str]:
    """Slide part names in presentation order."""
    order: list[str] = []
    try:
        if zf.has(presentation):
            targets = {rid: target for rid, kind, target in relationships(zf, presentation) if kind == "slide"}
            root = parse_part(zf, presentation)
            for element in root.iter():
                if isinstance(element.tag, str) and element.tag.endswith("}sldId"):
                    rid = element.get(_R_ID) or element.get(_R_ID_STRICT)
                    target = targets.get(rid or "")
                    if target and zf.has(target):
                        order.append(target)
    except ExtractionError as exc:
        if exc.code != "corrupt":
            raise
        order = []
    return list(dict.fromkeys(order)) or numbered(zf.names(), r"ppt/slides/slide(\d+)\.xml")


def _attached(zf: SafeZip, slide: str) -> list[str]:
    """The slide's SmartArt data parts, then its notes page."""
    try:
        rels = relationships(zf, slide)
    except ExtractionError as exc:
        if exc.code != "corrupt":
            raise
        return []
    diagrams = [target for _, kind, target in rels if kind == "diagramData" and zf.has(target)]
    notes = [target for _, kind, target in rels if kind == "notesSlide" and zf.has(target)]
    return diagrams + notes[:1]
