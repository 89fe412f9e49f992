"""Extraction and OCR results kept by content: a renamed, moved or copied file is not read twice.

Keyed by ``(content_sha256, EXTRACTOR_VERSION)``: the same bytes under any key
or bucket hit the same entry, and a new extractor version misses by
construction. Entries are gzip-compressed JSON objects in an S3 bucket
(``CONTENT_CACHE_BUCKET``, under ``CONTENT_CACHE_PREFIX``) whose lifecycle rule
expires them, so the cache is bounded in time; the bucket is encrypted and
readable only by the indexer and the OCR worker. Losing it costs only time:
every error here is a miss (reads) or a skipped store (writes), logged, never a
failed record. The indexer stores what it extracted; the OCR worker stores
what it recognised; both look up before doing the work.

Only results that the same bytes would produce again are stored: complete
extractions and deterministic refusals (``corrupt``, ``encrypted``,
``unsupported``, ``empty``, ``zip_bomb``), never a result cut short by a
deadline, a library crash or the pipeline's own conditions.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.observability import Metric, count, logger
from docindex.extract.base import PageText
from docindex.extract.version import EXTRACTOR_VERSION
from docindex.index.documents import OcrStatus

if TYPE_CHECKING:
    from docindex.extract import ExtractedDocument

# Errors the same bytes always give again: worth remembering.
CACHEABLE_ERRORS = frozenset({"corrupt", "encrypted", "unsupported", "empty", "zip_bomb"})
# An entry is read back at most this big (compressed) and inflated at most this far.
MAX_ENTRY_BYTES = 32 * 1024 * 1024
MAX_INFLATED_BYTES = 64 * 1024 * 1024
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class CachedContent:
    """What extraction (``ocr_status`` none) or OCR (``done``) produced for some bytes."""

    ocr_status: str
    content_type: str | None = None
    text: str = ""
    title: str | None = None
    page_count: int | None = None
    truncated: bool = False
    error: str | None = None
    ocr_reason: str | None = None
    extractor_version: str = EXTRACTOR_VERSION
    dropped: list[str] = field(default_factory=list)
    author: str | None = None
    last_saved_by: str | None = None
    created: str | None = None
    modified: str | None = None
    # Each page as [number, kind, text, name] (docindex.extract.base.PageText).
    pages: list[list[Any]] = field(default_factory=list)

    @staticmethod
    def pack_pages(pages: tuple[PageText, ...]) -> list[list[Any]]:
        return [[page.number, page.kind, page.text, page.name] for page in pages]

    def page_texts(self) -> tuple[PageText, ...]:
        """The cached pages (an entry from before pages were kept has none)."""
        return tuple(
            PageText(number=int(number), kind=str(kind), text=str(text), name=name or None)
            for number, kind, text, name in self.pages
        )

    # The OCR'd pages of an OCR result (index ``ocr_pages``): a copy gets the same fields.
    ocr_pages: list[dict[str, Any]] = field(default_factory=list)
    # Meaning search: the passages' vectors for this text (EmbeddedDocument.to_cache), added by the
    # worker once it embedded them; a rename or copy then embeds nothing.
    embeddings: dict[str, Any] | None = None

    @classmethod
    def from_extracted(cls, extracted: ExtractedDocument) -> CachedContent | None:
        """The entry for an indexer extraction; None when it must not be cached."""
        if extracted.ocr_reason or (extracted.error and extracted.error not in CACHEABLE_ERRORS):
            return None
        return cls(
            ocr_status=OcrStatus.NONE.value,
            content_type=extracted.content_type,
            text=extracted.text,
            title=extracted.title,
            page_count=extracted.page_count,
            truncated=extracted.truncated,
            error=extracted.error,
            dropped=list(extracted.dropped),
            author=extracted.author,
            last_saved_by=extracted.last_saved_by,
            created=extracted.created,
            modified=extracted.modified,
            pages=cls.pack_pages(extracted.pages),
        )


class ContentCache:
    """Get and put :class:`CachedContent` by content hash; disabled (always a miss) without a bucket."""

    def __init__(self, s3: Any, bucket: str | None, prefix: str = "content-cache/") -> None:
        self._s3 = s3
        self.bucket = bucket
        self.prefix = prefix

    @property
    def enabled(self) -> bool:
        return bool(self.bucket)

    def key(self, content_sha256: str) -> str:
        return f"{self.prefix}v{EXTRACTOR_VERSION}/{content_sha256[:2]}/{content_sha256}.json.gz"

    def get(self, content_sha256: str | None) -> CachedContent | None:
        """The cached result for these bytes, None on a miss (or when anything goes wrong)."""
        if not self.enabled or not content_sha256 or not _SHA256.match(content_sha256):
            return None
        try:
            packed = read_capped(self._s3, str(self.bucket), self.key(content_sha256), MAX_ENTRY_BYTES)
            raw = _inflate(packed)
            entry = CachedContent(**json.loads(raw))
        except ClientError as exc:
            if (exc.response.get("Error") or {}).get("Code") not in ("NoSuchKey", "404", "NotFound"):
                logger.warning("content cache unreadable; extracting", extra={"error": str(exc)})
            count(Metric.CONTENT_CACHE_MISSES)
            return None
        except (BotoCoreError, OSError, ValueError, TypeError, EOFError) as exc:
            logger.warning("content cache entry unusable; extracting", extra={"error": f"{type(exc).__name__}: {exc}"})
            count(Metric.CONTENT_CACHE_MISSES)
            return None
        if entry.extractor_version != EXTRACTOR_VERSION:
            count(Metric.CONTENT_CACHE_MISSES)
            return None
        count(Metric.CONTENT_CACHE_HITS)
        return entry

    def put(self, content_sha256: str | None, entry: CachedContent | None) -> None:
        """Remember ``entry`` for these bytes; a failure is logged and forgotten (the cache only saves time)."""
        if not self.enabled or entry is None or not content_sha256 or not _SHA256.match(content_sha256):
            return
        packed = gzip.compress(json.dumps(asdict(entry), ensure_ascii=False).encode(), compresslevel=6)
        if len(packed) > MAX_ENTRY_BYTES:
            return
        try:
            self._s3.put_object(
                Bucket=self.bucket,
                Key=self.key(content_sha256),
                Body=packed,
                ContentType="application/gzip",
            )
        except (ClientError, BotoCoreError) as exc:
            logger.warning("content cache not written", extra={"error": str(exc)})


def with_embeddings(entry: CachedContent | None, embeddings: dict[str, Any]) -> CachedContent | None:
    """``entry`` with the vectors of its text (None stays None: nothing cached for these bytes)."""
    return replace(entry, embeddings=embeddings) if entry is not None else None


def read_capped(s3: Any, bucket: str, key: str, limit: int) -> bytes:
    """An object of at most ``limit`` bytes (a cache entry); ValueError when it is larger."""
    body = s3.get_object(Bucket=bucket, Key=key)["Body"]
    try:
        data = bytes(body.read(limit + 1))
    finally:
        body.close()
    if len(data) > limit:
        raise ValueError("entry too large")
    return data


def _inflate(packed: bytes) -> bytes:
    """Gunzip with a bound on the inflated size (an entry is ours, but a bound costs nothing)."""
    import zlib

    inflater = zlib.decompressobj(wbits=31)
    raw = inflater.decompress(packed, MAX_INFLATED_BYTES + 1)
    if len(raw) > MAX_INFLATED_BYTES or inflater.unconsumed_tail:
        raise ValueError("entry inflates too far")
    return raw
