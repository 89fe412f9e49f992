"""Plain text, CSV and Markdown: decode with the Japanese-aware cascade, keep the text as is."""

from __future__ import annotations

from docindex.extract.base import ExtractionLimits, FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.encoding import decode
from docindex.extract.structure import csv_rows

# UTF-8 needs up to 4 bytes per character: more input than this cannot fit
# in max_chars, so it is not decoded at all (a 60 MB log file stays cheap).
_BYTES_PER_CHAR = 4


def byte_budget(limits: ExtractionLimits) -> int:
    """The most leading bytes of a text file that are decoded: more cannot fit in ``max_chars``."""
    return limits.max_chars * _BYTES_PER_CHAR + 16


def extract_text(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Decode a text file into ``ctx``; only the first ``max_chars`` worth of bytes is read."""
    budget = byte_budget(ctx.limits)
    if len(data) > budget:
        data = prefix_at_line_end(data, budget)
        ctx.incomplete = True
    decoded = decode(data)
    ctx.encoding = decoded.encoding
    # a CSV file is a table: its rows as every extractor writes a table's (docindex.extract.structure)
    ctx.text.append(csv_rows(decoded.text) if ftype.mime == "text/csv" else decoded.text)


def prefix_at_line_end(data: bytes, limit: int) -> bytes:
    """A prefix of at most ``limit`` bytes, cut after a line feed where possible.

    0x0A is never part of a multi-byte character in UTF-8, CP932 or EUC-JP,
    so cutting there keeps the prefix strictly decodable, and the encoding
    detection that follows is not fooled by a half character.
    """
    if len(data) <= limit:
        return data
    cut = data.rfind(b"\n", 0, limit)
    if cut < limit // 2:
        # No line ends (or UTF-16, where 0x0A is half a character): keep an
        # even length so UTF-16 stays aligned.
        return data[: limit - (limit % 4)]
    return data[: cut + 1]
