"""Files too large for the Lambda, through the indexer's extractors in a pool process, never whole in memory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from docindex.core.limits import growth_bound

if TYPE_CHECKING:
    from docindex.extract import ExtractedDocument, ExtractionLimits

MiB = 1024 * 1024
# Read first by ``extract_file``: more than type detection looks at (``detect.SNIFF_BYTES``).
HEAD_BYTES = 64 * 1024


def extract_file(
    path: str, filename: str, limits: ExtractionLimits, max_bytes: int, memory_bytes: int | None = None
) -> ExtractedDocument:
    """``_extract_file`` with the process's address space bounded by ``memory_bytes`` of growth."""
    from docindex.extract import ExtractedDocument

    try:
        with growth_bound(memory_bytes):
            return _extract_file(path, filename, limits, max_bytes)
    except MemoryError:
        return ExtractedDocument(
            kind="unknown",
            content_type="application/octet-stream",
            error="memory",
            error_detail=f"the extractor needed more than {(memory_bytes or 0) // MiB} MiB",
        )


def _extract_file(path: str, filename: str, limits: ExtractionLimits, max_bytes: int) -> ExtractedDocument:
    """The non-OCR extractors on a file too large for the Lambda (runs in a pool process).

    Never more than ``max_bytes`` of the file (plus its first ``HEAD_BYTES``)
    are held in memory, however large the file is. The type is decided from
    the file's first bytes, and then:

    - text and HTML: only the prefix their extractor can use (``max_chars``
      worth of bytes, at most ``max_bytes``) is read, cut at a line end; a
      longer file is marked ``truncated``;
    - a type without an extractor (archive, media, unknown binary): nothing
      past the first bytes, which already decide ``unsupported``;
    - zip and OLE2 packages (Office files), which only their directory tells
      apart, and PDFs (the worker reads those page by page instead): the
      extractors need them whole, so they are read whole when they fit in
      ``max_bytes``, and are ``too_large`` without reading any further otherwise.
    """
    from docindex.extract import ExtractedDocument, detect_type, extract
    from docindex.extract.detect import SNIFF_BYTES, is_package
    from docindex.extract.dispatch import has_extractor, prefix_budget
    from docindex.extract.text import prefix_at_line_end

    with Path(path).open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(HEAD_BYTES)
        ftype = detect_type(head, filename)
        package = is_package(head)
        budget = None if package else prefix_budget(ftype.kind, limits)
        if budget is None and not package and not has_extractor(ftype.kind):
            # What detection looks at is all ``extract`` needs to say so.
            return extract(head[:SNIFF_BYTES], filename, limits)
        if budget is None:
            if size > max_bytes:
                return ExtractedDocument(
                    kind=ftype.kind,
                    content_type=ftype.mime,
                    error="too_large",
                    error_detail=(
                        f"{size} bytes: a {ftype.kind} file is extracted whole, "
                        f"and at most {max_bytes} bytes of a file are read into memory"
                    ),
                )
            handle.seek(0)
            return extract(handle.read(max_bytes), filename, limits)
        limit = min(budget, max_bytes)
        handle.seek(0)
        data = handle.read(limit + 1)  # one byte more says whether the file goes on
    cut = len(data) > limit
    if cut:
        data = prefix_at_line_end(data, limit)
    extracted = extract(data, filename, limits)
    extracted.truncated = extracted.truncated or cut
    return extracted
