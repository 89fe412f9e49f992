"""The version of what extraction produces, part of every extraction-cache key.

Bump it whenever an extractor, the type detection or the OCR pipeline
(languages, page handling) changes the text, title or error a file yields:
cached results of the old version then simply miss (``docindex/ingest/cache.py``)
and expire with the cache's lifecycle rule. Nothing has to be purged.
"""

# 4: OCR turns pages upright, honours fax resolution, reads mixed vertical pages; 5: pages (where
# each page, slide, sheet or attachment starts, and its text: issue 28).
# 6: vertical writing in PDF text layers joined back into words (issue 26)
# 7: PP-OCR reads the scans (issue 34)
# 8: a PDF's scanned pages rendered as they are shown, tight lines and a form's labels, short text
# layers kept (issue 44)
# 9: a table's rows read with their header, CSV read as a table, text boxes and slide notes as
# passages of their own (issue 48)
EXTRACTOR_VERSION = "9"

# The OCR pipeline that produced a document's content (index field ``ocr_version``; documents
# without the field were read by version 1). ``docindex reprocess --ocr-outdated`` selects
# documents read by an older one. Bump it together with EXTRACTOR_VERSION when OCR reads pages
# differently (better); EXTRACTOR_VERSION alone when only other extractors changed.
OCR_VERSION = 4  # 2: pages turned upright, fax resolution, vertical columns, text layers judged (issue 26)
# 3: PP-OCR on ONNX Runtime reads the pages (issue 34)
# 4: PDF page images as the page shows them (soft masks), tight lines cut between them, letter-spaced
# labels, short clean text layers (issue 44)
