"""Text and metadata extraction, one module per format family.

Heavy libraries (pypdfium2, calamine, lxml, selectolax) load only when a file
of that kind arrives, so the Lambda's cold start stays small.
"""

from __future__ import annotations

from docindex.extract.base import Deadline, ExtractedDocument, ExtractionLimits, FileType
from docindex.extract.detect import detect_type
from docindex.extract.dispatch import extract

__all__ = ["Deadline", "ExtractedDocument", "ExtractionLimits", "FileType", "detect_type", "extract"]
