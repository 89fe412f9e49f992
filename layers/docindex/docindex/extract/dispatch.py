"""Route bytes to the extractor for their type; never raise for a bad document."""

from __future__ import annotations

from docindex.extract.base import ExtractedDocument, ExtractionLimits
from docindex.extract.detect import detect_type


def extract(data: bytes, filename: str, limits: ExtractionLimits) -> ExtractedDocument:
    """Extract text and metadata from one file's bytes.

    Problems with the document itself are reported in ``ExtractedDocument.error``.
    """
    ftype = detect_type(data, filename)
    if ftype.kind == "image":
        return ExtractedDocument(ftype.kind, ftype.mime, ocr_reason="image")
    if ftype.kind == "text":
        text = data.decode("utf-8", errors="replace")
        truncated = len(text) > limits.max_chars
        return ExtractedDocument(ftype.kind, ftype.mime, text=text[: limits.max_chars], truncated=truncated)
    return ExtractedDocument(ftype.kind, ftype.mime, error="unsupported")
