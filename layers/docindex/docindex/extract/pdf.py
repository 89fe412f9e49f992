"""PDF with pypdfium2: text per page, title from the Info dictionary, scan detection.

pypdfium2 was exact on embedded TrueType, non-embedded CID and Type0 Japanese
fonts at ~600-1700 pages/s (docs/extraction.md) and gives 0 characters for a
scanned page, which makes the OCR trigger simple.

- PDFium is not thread-safe, not even across different documents, so every
  call runs under one process-wide lock (the indexer may extract several
  records at once in threads).
- Pages, text pages and the document are closed explicitly inside the lock:
  left to the garbage collector they would be freed later, from whichever
  thread, outside it.
- A PDF with only an owner password (print/copy restrictions, common on
  Japanese business PDFs) opens without a password and is extracted normally;
  only a user password (needed to open it at all) gives ``encrypted``.
- More than ``max_pages`` pages: the first ``max_pages`` are extracted and the
  document is marked ``truncated`` (no error); ``page_count`` is the real count.
- Refused before PDFium inflates anything (``zip_bomb``), from what the
  file declares: a stream whose filter chain decompresses more than once
  (``/Filter [/FlateDecode /FlateDecode]``: each Flate stage multiplies the
  size by up to ~1,000, and no producer needs two), or a stream declaring a
  decoded length (``/DL``) above ``max_zip_uncompressed_bytes``. A single
  Flate stage that inflates too far is stopped by the memory bound of the
  isolated child process instead (``memory``).
- Scanned: when the pages read average fewer than ``ocr_min_chars_per_page``
  non-blank characters, or more than half of them have fewer than that
  (typed cover page + scanned body), ``ocr_reason`` is ``scanned_pdf``.
- Each page's text layer is judged (``extract/textlayer.py``, the judge the OCR worker uses
  too): a page whose layer lies (no Unicode mapping, U+25A0 for every glyph, a Type3 font...)
  adds nothing to the content and sends the document to the worker
  (``untrusted_text_layer``), which OCRs that page and keeps the others' text layers; so does a
  page with too little text that draws an image (``scanned_pages``: a text PDF whose last page
  is a scan).
"""

from __future__ import annotations

import re
import threading
from typing import Any

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.textlayer import TextLayer, judge, read_text_layer

_PDFIUM_LOCK = threading.Lock()

# Why a PDF with text goes to the OCR worker (``ocr_reason``) besides being a scan (``scanned_pdf``).
UNTRUSTED = "untrusted_text_layer"  # a page's text layer lies (extract/textlayer.py)
SCANNED_PAGES = "scanned_pages"  # a page with too little text draws an image

# Filters that decompress (ISO 32000-1 7.4, with the abbreviations of inline images).
_INFLATING = frozenset({b"FlateDecode", b"Fl", b"LZWDecode", b"LZW", b"RunLengthDecode", b"RL"})
_FILTER = re.compile(rb"/Filter\s*(\[[^\]]{0,1024}\]|/[A-Za-z0-9]+)")
_FILTER_NAME = re.compile(rb"/([A-Za-z0-9]+)")
_DECODED_LENGTH = re.compile(rb"/DL\s+(\d{1,20})")


def refuse_declared_bombs(data: bytes, max_inflated: int) -> None:
    """Raise ``zip_bomb`` for a PDF whose stream dictionaries declare a decompression bomb.

    A scan of the raw bytes (stream dictionaries are never inside compressed
    object streams, ISO 32000-1 7.5.7), linear in the file's size.
    """
    for match in _FILTER.finditer(data):
        names = _FILTER_NAME.findall(match.group(1))
        inflating = sum(name in _INFLATING for name in names)
        if inflating > 1:
            chain = " ".join(name.decode("ascii") for name in names)
            raise ExtractionError("zip_bomb", f"a stream is decompressed {inflating} times over (/Filter [{chain}])")
    for match in _DECODED_LENGTH.finditer(data):
        if int(match.group(1)) > max_inflated:
            raise ExtractionError("zip_bomb", f"a stream declares {int(match.group(1)):,} decoded bytes (/DL)")


def extract_pdf(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Text, title and page count of a PDF into ``ctx``."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    refuse_declared_bombs(data, ctx.limits.max_zip_uncompressed_bytes)
    with _PDFIUM_LOCK:
        try:
            pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            if exc.err_code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY):
                raise ExtractionError("encrypted", "the PDF needs a password to open") from None
            raise ExtractionError("corrupt", str(exc)) from None
        try:
            _read_pages(pdf, ctx)
        finally:
            pdf.close()


def _read_pages(pdf: Any, ctx: ExtractionContext) -> None:
    import pypdfium2 as pdfium

    page_count = len(pdf)
    ctx.page_count = page_count
    ctx.title = _clean_title(pdf.get_metadata_value("Title"))
    ctx.author = _clean_title(pdf.get_metadata_value("Author"))
    ctx.set_dates(pdf_date(pdf.get_metadata_value("CreationDate")), pdf_date(pdf.get_metadata_value("ModDate")))
    to_read = min(page_count, ctx.limits.max_pages)
    if page_count > to_read:
        ctx.drop(f"pages {to_read + 1:,}-{page_count:,}", f"more than MAX_PAGES ({to_read:,})")

    threshold = ctx.limits.ocr_min_chars_per_page
    seen = sparse = chars = broken = 0
    reasons: set[str] = set()
    try:
        for index in range(to_read):
            if index:
                ctx.check_deadline()
            try:
                layer = _page_layer(pdf, index, threshold)
            except pdfium.PdfiumError:
                broken += 1
                continue
            seen += 1
            verdict = judge(layer, min_chars=threshold)
            chars += layer.chars
            if verdict.lies:
                # Garbage is not content: the worker OCRs the page and indexes what it reads.
                reasons.add(UNTRUSTED)
                continue
            if not verdict.trusted:
                sparse += 1
                if layer.has_images:
                    reasons.add(SCANNED_PAGES)  # a scanned page among text pages (a contract's signed last page)
            if not ctx.text.append(layer.text.strip() + "\n\n"):
                break
    finally:
        # Also on timeout: decide from the pages that were read.
        if seen and (chars / seen < threshold or sparse * 2 > seen):
            ctx.ocr_reason = "scanned_pdf"
        elif reasons:
            ctx.ocr_reason = UNTRUSTED if UNTRUSTED in reasons else SCANNED_PAGES
    if to_read and broken == to_read:
        raise ExtractionError("corrupt", "no page of the PDF could be loaded")


def _page_layer(pdf: Any, index: int, min_chars: int) -> TextLayer:
    page = pdf[index]
    try:
        return read_text_layer(page, min_chars=min_chars)
    finally:
        page.close()


def _clean_title(value: str | None) -> str | None:
    if not value:
        return None
    title = value.replace("\x00", "").strip()
    return title or None


_PDF_DATE = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?")


def pdf_date(value: str | None) -> Any:
    """A PDF date string (``D:YYYYMMDDHHmmSSOHH'mm'``, ISO 32000-1 7.9.4) as an aware datetime, or None."""
    from datetime import UTC, datetime, timedelta, timezone

    match = _PDF_DATE.match((value or "").strip())
    if not match:
        return None
    year, month, day, hour, minute, second, sign, off_h, off_m = match.groups()
    try:
        zone = UTC
        if sign in ("+", "-"):
            offset = timedelta(hours=int(off_h or 0), minutes=int(off_m or 0))
            zone = timezone(offset if sign == "+" else -offset)
        return datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0), int(second or 0), tzinfo=zone
        )
    except ValueError:
        return None
