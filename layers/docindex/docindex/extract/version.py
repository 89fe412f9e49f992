"""The version of what extraction produces, part of every extraction-cache key.

Bump it whenever an extractor, the type detection or the OCR pipeline
(languages, page handling) changes the text, title or error a file yields:
cached results of the old version then simply miss (``docindex/ingest/cache.py``)
and expire with the cache's lifecycle rule. Nothing has to be purged.
"""

EXTRACTOR_VERSION = "4"  # 4: OCR turns pages upright, honours fax resolution, reads mixed vertical pages
