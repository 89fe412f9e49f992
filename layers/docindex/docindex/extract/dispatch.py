"""Route bytes to the extractor for their type; never raise for a bad document."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import Deadline, ExtractedDocument, ExtractionLimits, FileType, PageText
from docindex.extract.context import ExtractionContext, PageMark
from docindex.extract.detect import detect_type
from docindex.extract.structure import rows_with_header

if TYPE_CHECKING:
    from docindex.extract.isolation import ExtractionPool

Extractor = Callable[[bytes, FileType, ExtractionContext], None]

# Kinds whose text comes from the OCR worker, not from here.
_OCR_KINDS = {"image": "image"}
# C0 controls other than tab and newline, DEL, and lone surrogates: noise in
# a search index, and surrogates cannot even be encoded as UTF-8 JSON.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
_BLANK_LINES = re.compile(r"\n[ \t\u3000]*(?:\n[ \t\u3000]*){2,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


# kind -> (module, function). Modules are imported on first use: each pulls
# its heavy library, which a Lambda that never sees that format never loads.
_EXTRACTORS: dict[str, tuple[str, str]] = {
    "pdf": ("docindex.extract.pdf", "extract_pdf"),
    "docx": ("docindex.extract.docx", "extract_docx"),
    "pptx": ("docindex.extract.pptx", "extract_pptx"),
    "xlsx": ("docindex.extract.spreadsheet", "extract_spreadsheet"),
    "xls": ("docindex.extract.spreadsheet", "extract_spreadsheet"),
    "xlsb": ("docindex.extract.xlsb", "extract_xlsb"),
    "html": ("docindex.extract.html", "extract_html"),
    "text": ("docindex.extract.text", "extract_text"),
    "doc": ("docindex.extract.doc", "extract_doc"),
    "ppt": ("docindex.extract.ppt", "extract_ppt"),
    "msg": ("docindex.extract.msg", "extract_msg"),
    "eml": ("docindex.extract.mail", "extract_mail"),
    "rtf": ("docindex.extract.rtf", "extract_rtf"),
    "odt": ("docindex.extract.odf", "extract_odf"),
    "ods": ("docindex.extract.odf", "extract_odf"),
    "odp": ("docindex.extract.odf", "extract_odf"),
    "zip": ("docindex.extract.archive", "extract_archive"),
}


def _extractor(kind: str) -> Extractor | None:
    target = _EXTRACTORS.get(kind)
    if target is None:
        return None
    module, function = target
    return cast(Extractor, getattr(importlib.import_module(module), function))


def has_extractor(kind: str) -> bool:
    """Whether files of ``kind`` have a text extractor (the others are ``unsupported``, ``empty`` or OCR's)."""
    return kind in _EXTRACTORS


def prefix_budget(kind: str, limits: ExtractionLimits) -> int | None:
    """How many leading bytes the extractor for ``kind`` reads at most, when it reads only the start of a file.

    Text and HTML: ``max_chars`` worth of bytes (a longer file is cut at a line
    end and marked truncated). None for every other kind: its extractor needs
    the whole file (or it has none).
    """
    if kind == "text":
        from docindex.extract.text import byte_budget as text_budget

        return text_budget(limits)
    if kind == "html":
        from docindex.extract.html import byte_budget as html_budget

        return html_budget(limits)
    return None


# Archives in archives, attachments of attached mails: members this deep are listed by name only.
MAX_NESTING = 3


def extract(
    data: bytes,
    filename: str,
    limits: ExtractionLimits,
    *,
    deadline: Deadline | None = None,
    pool: ExtractionPool | None = None,
    depth: int = 0,
) -> ExtractedDocument:
    """Extract text and metadata from one file's bytes.

    Problems with the document itself are reported in
    ``ExtractedDocument.error`` (see :mod:`docindex.extract` for the codes);
    this function does not raise for any input. ``deadline`` defaults to
    ``limits.timeout_seconds`` from now; pass one to share a budget with the
    caller (e.g. the Lambda's remaining time). With a ``pool``, the formats
    it isolates (native parsers: PDF, spreadsheets) are extracted in one of
    its child processes, inside memory, time and output bounds
    (:mod:`docindex.extract.isolation`).
    """
    ftype = detect_type(data, filename)
    ctx = ExtractionContext(limits, deadline or Deadline(limits.timeout_seconds), depth=depth)
    error: str | None = None
    detail: str | None = None
    extractor = _extractor(ftype.kind)
    if not data:
        error, detail = "empty", "the file has 0 bytes"
    elif ftype.encrypted:
        error, detail = "encrypted", "password-protected Office file"
    elif ftype.kind in _OCR_KINDS:
        ctx.ocr_reason = _OCR_KINDS[ftype.kind]
    elif extractor is None:
        error, detail = "unsupported", f"no text extractor for {ftype.mime}"
    elif pool is not None and pool.isolates(ftype.kind):
        error, detail = pool.run(data, ftype, ctx)
    else:
        error, detail = _run(extractor, data, ftype, ctx)

    raw = ctx.text.getvalue()
    text = rows_with_header(clean_text(raw))
    title = clean_text(ctx.title or "") or None
    if ctx.text.truncated:
        ctx.drop(f"text after {ctx.text.max_chars:,} characters", "MAX_CONTENT_CHARS")
    elif error == "timeout" and text:
        ctx.drop("the rest of the document", "the extraction's time ran out")
    truncated = ctx.text.truncated or ctx.incomplete or error == "timeout"
    if error is None and not text and ctx.ocr_reason is None:
        error, detail = "empty", "no text in the document"
    return ExtractedDocument(
        kind=ftype.kind,
        content_type=ftype.mime,
        text=text,
        title=title,
        page_count=ctx.page_count,
        truncated=truncated,
        error=error,
        ocr_reason=ctx.ocr_reason,
        encoding=ctx.encoding,
        error_detail=detail,
        dropped=tuple(ctx.dropped),
        author=_person(ctx.author),
        last_saved_by=_person(ctx.last_saved_by),
        created=_iso(ctx.created),
        modified=_iso(ctx.modified),
        pages=split_pages(raw, ctx.page_marks),
    )


def split_pages(raw: str, marks: list[PageMark]) -> tuple[PageText, ...]:
    """Each marked page's text, cleaned like the whole; pages without text are left out (nothing matches them)."""
    pages: list[PageText] = []
    for index, (offset, kind, number, name) in enumerate(marks):
        end = marks[index + 1][0] if index + 1 < len(marks) else len(raw)
        text = rows_with_header(clean_text(raw[offset:end]))
        if text:
            pages.append(PageText(number=number, kind=kind, text=text, name=clean_text(name or "") or None))
    return tuple(pages)


def _person(value: str | None) -> str | None:
    text = clean_text(value or "")[:256].strip()
    return text or None


def _iso(value: Any) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def extract_nested(data: bytes, name: str, ctx: ExtractionContext) -> ExtractedDocument | None:
    """The text of a member or attachment, within what is left of the parent's budget.

    None when it is nested too deeply, or no room is left. The parent's
    deadline is shared; the child's errors stay the child's (the caller
    decides whether to mention them).
    """
    room = ctx.limits.max_chars - len(ctx.text)
    if ctx.depth + 1 > MAX_NESTING or room <= 0:
        return None
    ctx.check_deadline()
    limits = replace(ctx.limits, max_chars=room)
    child = extract(data, name, limits, deadline=ctx.deadline, depth=ctx.depth + 1)
    if child.error == "timeout":
        ctx.check_deadline()
    return child


def _run(extractor: Extractor, data: bytes, ftype: FileType, ctx: ExtractionContext) -> tuple[str | None, str | None]:
    try:
        extractor(data, ftype, ctx)
    except ExtractionError as exc:
        return exc.code, exc.detail or None
    except MemoryError:
        return "memory", "ran out of memory"
    except RecursionError:
        return "corrupt", "structure nested too deeply"
    except Exception as exc:  # noqa: BLE001 - any library failure: logged with its traceback, indexed by name
        # The Powertools logger, not a stdlib logger of this module: deployed, its name is
        # POWERTOOLS_SERVICE_NAME (docindex-<stage>), so a "docindex.*" stdlib logger would
        # not reach its JSON handler and would lose message_id, bucket and key. Imported
        # here: an extraction process (extract/isolation.py) starts without Powertools.
        from docindex.core.observability import logger

        logger.warning("extractor for %s failed", ftype.kind, exc_info=True)
        return "extractor_failed", f"{type(exc).__name__}: {exc}"[:500]
    except BaseException as exc:
        # A Rust library's panic (calamine) arrives as pyo3's PanicException, a BaseException:
        # the document is at fault, not the process. Anything else (KeyboardInterrupt...) propagates.
        if type(exc).__name__ != "PanicException":
            raise
        from docindex.core.observability import logger

        logger.warning("extractor for %s panicked", ftype.kind, exc_info=True)
        return "extractor_failed", f"PanicException: {exc}"[:500]
    return None, None


def clean_text(text: str) -> str:
    """Normalise line ends, drop control characters, squeeze blank lines, trim."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")
    text = _CONTROL_CHARS.sub("", text)
    text = _TRAILING_SPACE.sub("\n", text)
    text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()
