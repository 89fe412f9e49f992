"""Text and metadata extraction, one module per format family.

``extract(data, filename, limits)`` detects the type from the bytes
(:func:`detect_type`), runs the matching extractor and returns an
:class:`ExtractedDocument`. It never raises for a bad document: what went
wrong is in ``error`` (the index's ``extraction_error``), with a longer
``error_detail`` for logs. Text read before a problem is kept.

Error codes:

- ``empty``: 0 bytes, or a valid document without any text (and nothing to OCR).
- ``unsupported``: a type with no extractor (XLSB, EPUB, media, unknown binary).
- ``corrupt``: the file is damaged or not what its structure claims
  (unreadable PDF, broken zip, malformed XML, a DOCTYPE inside OOXML).
- ``encrypted``: a password is needed to open it (PDF user password,
  password-protected Office file, encrypted zip member). A PDF with only an
  owner password (print/copy restrictions) is extracted normally.
- ``zip_bomb``: a zip-based file whose directory declares more than
  ``max_zip_uncompressed_bytes`` in total, a member above 1 MiB compressed
  more than ``max_zip_ratio``:1, or too many members: rejected from the zip
  directory before anything is inflated. Members are then read against a
  byte budget and never past their declared size (a member whose data does
  not match its declared size fails its CRC check: ``corrupt``). Also a PDF
  whose stream dictionaries declare a bomb (a filter chain that decompresses
  twice, a ``/DL`` above ``max_zip_uncompressed_bytes``), before PDFium reads it.
- ``too_large``: a spreadsheet sheet spanning more than
  ``spreadsheet.MAX_SHEET_CELLS`` cells (or more than its extraction
  process's memory can hold), or text beyond the output bound.
- ``timeout``: ``limits.timeout_seconds`` (or the given deadline) passed;
  the text read so far is returned with ``truncated=True``. Also when an
  extraction process (``pool``) did not return by its deadline.
- ``memory``: the parser needed more memory than its extraction process was
  granted (:mod:`docindex.extract.isolation`), or ran out of memory.
- ``extractor_failed``: a library raised something unexpected (logged with
  the traceback); the file is indexed by name.

Not errors: ``truncated=True`` alone means ``max_chars`` was reached or only
the first ``max_pages`` pages/slides were read; ``ocr_reason`` (``image``,
``scanned_pdf``) means the text must come from the OCR worker.

Kinds with an extractor: ``pdf``, ``docx`` (also DOCM/DOTX), ``pptx``
(also PPTM/PPSX/POTX), ``xlsx`` (also XLSM/XLTX), ``xls``, ``doc`` (Word
97-2003, 6/95), ``ppt`` (PowerPoint 97-2003), ``msg`` (Outlook), ``eml``
(also .mht), ``rtf``, ``odt``, ``ods``, ``odp``, ``zip`` (member names and
readable members' text), ``html``, ``text`` (plain, CSV, TSV, Markdown,
JSON, XML...). ``image`` (PNG, JPEG, TIFF, GIF, BMP, WebP) goes to OCR.
Recognised but ``unsupported``: ``ole``, ``xlsb``, ``epub``, ``media``,
``binary``, ``unknown``. Members of archives and attachments of mails are
read through :func:`dispatch.extract_nested`, ``dispatch.MAX_NESTING``
levels deep.

Heavy libraries (pypdfium2, calamine, lxml, selectolax, charset-normalizer,
filetype, olefile) load only when a file of that kind arrives, so the Lambda's cold
start stays small.
"""

from __future__ import annotations

from docindex.extract.base import Deadline, ExtractedDocument, ExtractionLimits, FileType
from docindex.extract.detect import detect_type
from docindex.extract.dispatch import extract

__all__ = ["Deadline", "ExtractedDocument", "ExtractionLimits", "FileType", "detect_type", "extract"]
