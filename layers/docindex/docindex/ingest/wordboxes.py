"""The OCR'd words of a page and where they are on it: what a page preview marks a query's words with.

The OCR worker keeps, for each page it recognised, the words Tesseract read with their boxes,
placed on the page as a preview shows it: the turn the worker gave a sideways, upside-down or
skewed page before reading it is undone, and the boxes are fractions (1/10,000) of the page's
width and height, so they fit a picture of the page at any size.

Kept beside the content cache (``docindex.ingest.cache``), in the same bucket, keyed like it by
the bytes' SHA-256 (and the page number), not by the file: a rename, a copy or a re-sync of the
same bytes finds them; the bucket's lifecycle rule expires them with the cache entries. Only the
worker writes them; the search function reads one page's, after it has checked that the caller
may read the document. Losing them costs only the marks: every error here is a miss (reads) or a
skipped store (writes), logged, never a failed job or a failed preview.

A page holds at most ``MAX_WORDS`` words (a dense A4 page of Japanese is 800-1,500), each at most
``MAX_WORD_CHARS`` characters; an entry is at most ``MAX_ENTRY_BYTES`` compressed.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.observability import logger
from docindex.ingest.cache import read_capped

PREFIX = "ocr-words/"
# Bumped when what an entry holds changes: entries of another format are not read.
FORMAT = 1
SCALE = 10_000
MAX_WORDS = 5000
MAX_WORD_CHARS = 64
MAX_ENTRY_BYTES = 512 * 1024
MAX_INFLATED_BYTES = 4 * 1024 * 1024
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


FLOWS = frozenset("rldu")


@dataclass(frozen=True)
class PlacedWord:
    """One word read on a page: its text, its text line's number, its box in 1/10,000 of the page,
    and which way its characters run on the page: ``r`` (left to right), ``l`` (right to left: a
    column of vertical writing on a page scanned turned clockwise), ``d`` (top to bottom: vertical
    writing), ``u`` (bottom to top)."""

    text: str
    line: int
    left: int
    top: int
    right: int
    bottom: int
    flow: str = "r"

    @property
    def box(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) as fractions of the page's width and height."""
        return (self.left / SCALE, self.top / SCALE, self.right / SCALE, self.bottom / SCALE)


@dataclass(frozen=True)
class PageWords:
    """The words of one OCR'd page, in reading order."""

    page: int
    words: tuple[PlacedWord, ...]

    @classmethod
    def from_result(cls, page: int, words: Any) -> PageWords:
        """From the worker's ``(left, top, right, bottom, text, line)`` tuples, bounded."""
        kept = []
        for left, top, right, bottom, text, line, flow in list(words)[:MAX_WORDS]:
            kept.append(_word((text, line, left, top, right, bottom, flow)))
        return cls(page, tuple(kept))

    def lines(self) -> list[list[PlacedWord]]:
        """The words grouped by text line, in reading order."""
        out: list[list[PlacedWord]] = []
        for word in self.words:
            if out and out[-1][-1].line == word.line:
                out[-1].append(word)
            else:
                out.append([word])
        return out

    def pack(self) -> bytes:
        body = {
            "format": FORMAT,
            "page": self.page,
            "words": [[w.text, w.line, w.left, w.top, w.right, w.bottom, w.flow] for w in self.words],
        }
        return gzip.compress(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(), compresslevel=6)

    @classmethod
    def unpack(cls, packed: bytes) -> PageWords | None:
        import zlib

        inflater = zlib.decompressobj(wbits=31)
        raw = inflater.decompress(packed, MAX_INFLATED_BYTES + 1)
        if len(raw) > MAX_INFLATED_BYTES or inflater.unconsumed_tail:
            raise ValueError("entry inflates too far")
        body = json.loads(raw)
        if body.get("format") != FORMAT:
            return None
        words = tuple(_word(values) for values in body["words"][:MAX_WORDS])
        return cls(int(body["page"]), words)


def _word(values: Any) -> PlacedWord:
    """A word from its stored ``[text, line, left, top, right, bottom, flow]``, checked and bounded."""
    text, line, left, top, right, bottom, flow = values
    return PlacedWord(
        str(text)[:MAX_WORD_CHARS],
        int(line),
        int(left),
        int(top),
        int(right),
        int(bottom),
        flow if flow in FLOWS else "r",
    )


class WordBoxStore:
    """Get and put a page's :class:`PageWords` by content hash; disabled (always a miss) without a bucket."""

    def __init__(self, s3: Any, bucket: str | None) -> None:
        self._s3 = s3
        self.bucket = bucket

    @property
    def enabled(self) -> bool:
        return bool(self.bucket)

    @staticmethod
    def key(content_sha256: str, page: int) -> str:
        return f"{PREFIX}v{FORMAT}/{content_sha256[:2]}/{content_sha256}/{page}.json.gz"

    def put(self, content_sha256: str | None, words: PageWords) -> int:
        """Keep a page's words; the bytes stored (0: not stored). A failure is logged and forgotten."""
        if not self.enabled or not content_sha256 or not _SHA256.match(content_sha256) or not words.words:
            return 0
        packed = words.pack()
        if len(packed) > MAX_ENTRY_BYTES:
            logger.info("word boxes of a page not kept: too large", extra={"page": words.page, "bytes": len(packed)})
            return 0
        try:
            self._s3.put_object(
                Bucket=self.bucket,
                Key=self.key(content_sha256, words.page),
                Body=packed,
                ContentType="application/gzip",
            )
        except (ClientError, BotoCoreError) as exc:
            logger.warning("word boxes not written", extra={"page": words.page, "error": str(exc)})
            return 0
        return len(packed)

    def get(self, content_sha256: str | None, page: int) -> PageWords | None:
        """The page's words, None when there are none (or anything goes wrong)."""
        if not self.enabled or not content_sha256 or not _SHA256.match(content_sha256):
            return None
        try:
            return PageWords.unpack(
                read_capped(self._s3, str(self.bucket), self.key(content_sha256, page), MAX_ENTRY_BYTES)
            )
        except ClientError as exc:
            # Without ListBucket (the search function has none) a missing entry reads as 403.
            if (exc.response.get("Error") or {}).get("Code") not in ("NoSuchKey", "404", "NotFound", "AccessDenied"):
                logger.warning("word boxes unreadable", extra={"error": str(exc)})
            return None
        except (BotoCoreError, OSError, ValueError, TypeError, KeyError, EOFError) as exc:
            logger.warning("word boxes unusable", extra={"error": f"{type(exc).__name__}: {exc}"})
            return None
