"""The types every extractor shares."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docindex.core.settings import Settings


@dataclass(frozen=True)
class ExtractionLimits:
    """Bounds that keep one hostile or huge file from hurting the batch."""

    max_chars: int = 2_000_000
    max_zip_uncompressed_bytes: int = 512 * 1024 * 1024
    max_zip_ratio: int = 100
    max_pages: int = 5000
    timeout_seconds: float = 120.0
    ocr_min_chars_per_page: int = 16

    @classmethod
    def from_settings(cls, settings: Settings) -> ExtractionLimits:
        return cls(
            max_chars=settings.max_content_chars,
            max_zip_uncompressed_bytes=settings.max_zip_uncompressed_bytes,
            max_zip_ratio=settings.max_zip_ratio,
            max_pages=settings.max_pages,
            timeout_seconds=settings.extraction_timeout_seconds,
            ocr_min_chars_per_page=settings.ocr_min_chars_per_page,
        )


class Deadline:
    """Cooperative time bound: extractors check it between pages, parts and rows."""

    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds

    def expired(self) -> bool:
        return time.monotonic() >= self._end

    def remaining(self) -> float:
        """Seconds left (0 when expired)."""
        return max(0.0, self._end - time.monotonic())


@dataclass(frozen=True)
class JobBounds:
    """What one isolated extraction may use (read by extractors through ``ExtractionContext.bounds``)."""

    memory_bytes: int
    seconds: float


@dataclass(frozen=True)
class FileType:
    """What the bytes are, detected from content first and the name second.

    ``encrypted`` is set when the container itself says the content is
    password-protected (an encrypted OOXML file is an OLE2 file holding an
    ``EncryptedPackage`` stream), so no extractor needs to be tried.
    """

    kind: str  # pdf, docx, xlsx, xlsb, xls, ods, pptx, html, text, image, empty, unknown, ...
    mime: str
    encrypted: bool = False


# What a page of each kind is called on the search page (``PageText.label``).
PAGE_KINDS = ("page", "slide", "sheet", "part")


@dataclass(frozen=True)
class PageText:
    """One page of a paged document: a PDF or scan page, a slide, a sheet, a mail's body or attachment.

    ``number`` counts from 1 in the document's own order (the PDF page number, the slide
    number, the sheet's position in the workbook, the part's position in the mail) and names
    the page in the search API (``/documents/{id}/pages/{number}/preview``). ``name`` is the
    sheet's or attachment's own name, where it has one.
    """

    number: int
    kind: str
    text: str
    name: str | None = None

    @property
    def label(self) -> str:
        """How a person names the page: ``p. 87``, ``スライド 12``, ``シート 売上``, ``添付 見積.pdf``."""
        if self.kind == "slide":
            return f"スライド {self.number}"
        if self.kind == "sheet":
            return f"シート {self.name}" if self.name else f"シート {self.number}"
        if self.kind == "part":
            return f"添付 {self.name}" if self.name else ("本文" if self.number == 1 else f"添付 {self.number - 1}")
        return f"p. {self.number}"


@dataclass
class ExtractedDocument:
    """The text and metadata of one file, or why there is none.

    ``error`` is the document's ``extraction_error`` (``corrupt``, ``encrypted``,
    ``unsupported``, ``zip_bomb``, ``timeout``, ...). ``ocr_reason`` is set when
    the content must come from the OCR worker (``image``, ``scanned_pdf``).
    """

    kind: str
    content_type: str
    text: str = ""
    title: str | None = None
    page_count: int | None = None
    truncated: bool = False
    error: str | None = None
    ocr_reason: str | None = None
    # The character encoding the text was decoded from (text and HTML only).
    encoding: str | None = None
    # A short human-readable explanation of ``error`` for logs; never indexed.
    error_detail: str | None = None
    # What was left out of ``text`` and why ("sheet '集計': DOCTYPE"), at most MAX_DROPPED entries:
    # indexed as ``content_dropped`` with ``content_truncated`` (nothing is cut silently).
    dropped: tuple[str, ...] = ()
    # Document properties where the format records them (ISO 8601 UTC for the dates).
    author: str | None = None
    last_saved_by: str | None = None
    created: str | None = None
    modified: str | None = None
    # Where each page starts, with its own text, for formats that have pages (PDF pages, slides,
    # sheets, a mail's parts); empty for the others. ``text`` is the pages joined and cleaned.
    pages: tuple[PageText, ...] = ()
