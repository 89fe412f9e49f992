"""Deterministic sample documents, as bytes, for tests, the demo, benchmarks and soak tests.

Every generator returns the same bytes for the same arguments (fixed zip
timestamps, reportlab's invariant mode, fixed PDF dates), so benchmarks and
golden tests are stable. No binary fixtures are committed: tests build what
they need here at run time.

One module per family:

- ``office``: DOCX, XLSX, PPTX written by hand as OOXML (``ooxml`` holds the
  package parts they share);
- ``legacy``: Excel 97-2003 ``.xls`` and password-protected Office files (OLE2);
- ``text``: plain text, CSV and HTML in Japanese encodings;
- ``pdf``: text PDFs in reportlab's built-in Japanese CID fonts;
- ``scans``: scanned pages (PNG, JPEG, TIFF, image-only PDF) rendered with
  Pillow in a Japanese font found on the system (``fonts``);
- ``hostile``: zip bombs, XXE, billion laughs, pixel bombs, corrupt files;
- ``corpus``: the demo's small mixed corpus;
- ``accuracy``: how close OCR output is to the rendered text.

reportlab and Pillow are imported inside the functions that need them:
importing this package costs nothing. The names below are re-exported so
``from devkit import samples; samples.make_docx(...)`` works.
"""

from __future__ import annotations

from devkit.samples.accuracy import char_accuracy
from devkit.samples.corpus import sample_corpus
from devkit.samples.fonts import find_japanese_font
from devkit.samples.hostile import (
    make_bad_xref_pdf,
    make_billion_laughs_docx,
    make_billion_laughs_xml,
    make_corrupt_docx,
    make_corrupt_pdf,
    make_corrupt_png,
    make_many_pages_pdf,
    make_png_bomb,
    make_xxe_docx,
    make_zip_bomb,
)
from devkit.samples.legacy import make_encrypted_office, make_xls
from devkit.samples.office import make_docx, make_pptx, make_xlsx
from devkit.samples.pdf import make_encrypted_pdf, make_pdf
from devkit.samples.scans import (
    SCAN_PAGE_SIZES,
    ScanLayout,
    make_scan_image,
    make_scan_pdf,
    make_scan_png,
    make_scan_tiff,
    render_scan_page,
)
from devkit.samples.text import HTML_NOISE_MARKERS, make_csv, make_html, make_text

__all__ = [
    "HTML_NOISE_MARKERS",
    "SCAN_PAGE_SIZES",
    "ScanLayout",
    "char_accuracy",
    "find_japanese_font",
    "make_bad_xref_pdf",
    "make_billion_laughs_docx",
    "make_billion_laughs_xml",
    "make_corrupt_docx",
    "make_corrupt_pdf",
    "make_corrupt_png",
    "make_csv",
    "make_docx",
    "make_encrypted_office",
    "make_encrypted_pdf",
    "make_html",
    "make_many_pages_pdf",
    "make_pdf",
    "make_png_bomb",
    "make_pptx",
    "make_scan_image",
    "make_scan_pdf",
    "make_scan_png",
    "make_scan_tiff",
    "make_text",
    "make_xls",
    "make_xlsx",
    "make_xxe_docx",
    "make_zip_bomb",
    "render_scan_page",
    "sample_corpus",
]
