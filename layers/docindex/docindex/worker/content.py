"""What an OCR job produces and works on: the downloaded object, the content, a split."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError

from docindex.core.exceptions import JobAbandoned, TransientError
from docindex.core.filedates import FileDate
from docindex.core.storage import get_object, object_date, s3_sha256
from docindex.embed.document import EmbeddedDocument
from docindex.extract.base import PageText
from docindex.index.documents import OcrStatus
from docindex.ingest.cache import CACHEABLE_ERRORS, CachedContent

if TYPE_CHECKING:
    from docindex.ingest.handoff import OcrJob
    from docindex.worker.leases import Lease

MiB = 1024 * 1024


@dataclass(frozen=True)
class Split:
    """A document long enough to be read as page-range jobs."""

    page_count: int
    wanted: int


@dataclass
class JobContent:
    """What the job produced for the document."""

    status: OcrStatus  # DONE or FAILED
    text: str = ""
    title: str | None = None
    page_count: int | None = None
    content_type: str | None = None
    truncated: bool = False
    error: str | None = None
    detail: str = ""
    ocr_pages: int = 0
    text_layer_pages: int = 0
    ocr_seconds: float = 0.0
    vertical_pages: int = 0
    confidences: list[int] = field(default_factory=list)
    # One entry per OCR'd page (index ``ocr_pages``), in page order.
    ocr_page_info: list[dict[str, Any]] = field(default_factory=list)
    # Taken from the content cache: the same bytes were recognised before (no pages run now).
    cached: bool = False
    # Each page's text (docindex.extract.base.PageText), in page order.
    pages: tuple[PageText, ...] = ()
    # Meaning search: the text's passages and vectors (docindex.worker.vectors); None without.
    embedded: EmbeddedDocument | None = None

    @classmethod
    def from_cache(cls, entry: CachedContent) -> JobContent:
        return cls(
            embedded=EmbeddedDocument.from_cache(entry.embeddings),
            status=OcrStatus(entry.ocr_status),
            text=entry.text,
            title=entry.title,
            page_count=entry.page_count,
            content_type=entry.content_type,
            truncated=entry.truncated,
            error=entry.error,
            ocr_page_info=list(entry.ocr_pages),
            cached=True,
            pages=entry.page_texts(),
        )

    def cache_entry(self, reason: str) -> CachedContent | None:
        """What the cache keeps of this result: only complete work the same bytes would give again."""
        if self.status is not OcrStatus.DONE or (self.error and self.error not in CACHEABLE_ERRORS):
            return None
        return CachedContent(
            ocr_status=self.status.value,
            content_type=self.content_type,
            text=self.text,
            title=self.title,
            page_count=self.page_count,
            truncated=self.truncated,
            error=self.error,
            ocr_reason=reason,
            pages=CachedContent.pack_pages(self.pages),
            ocr_pages=list(self.ocr_page_info),
            embeddings=self.embedded.to_cache() if self.embedded is not None else None,
        )


@dataclass(frozen=True)
class Downloaded:
    path: Path
    size: int
    etag: str | None
    version_id: str | None
    last_modified: str | None
    # S3's full-object SHA-256 when the object has one, else computed from the chunks streamed.
    content_sha256: str | None = None
    # The document's date (the file server's from the object's metadata, else S3's: docindex.core.filedates).
    file_date: FileDate | None = None


def download(
    s3: Any,
    job: OcrJob,
    path: Path,
    lease: Lease,
    *,
    max_object_bytes: int,
    mtime_keys: tuple[str, ...] = ("file-mtime", "mtime"),
) -> Downloaded | None:
    """Stream the job's object version to ``path``; None when it no longer exists or changed.

    An object over ``max_object_bytes`` is not streamed (an empty file stands for it): its
    job ends ``too_large`` without reading it.
    """
    response = get_object(s3, job.bucket, job.key, version_id=job.version_id)
    if response is None:
        return None
    body = response["Body"]
    try:
        etag = (response.get("ETag") or "").strip('"') or None
        if not job.version_id and job.etag and etag and etag != job.etag:
            return None  # overwritten since the job was queued: its own event brings a new job
        size = int(response.get("ContentLength") or 0)
        digest: Any = hashlib.sha256()
        if size > max_object_bytes:
            path.write_bytes(b"")
            digest = None
        else:
            with path.open("wb") as out:
                for chunk in body.iter_chunks(8 * MiB):
                    out.write(chunk)
                    digest.update(chunk)
                    if not lease.usable(0):
                        raise JobAbandoned(lease.reason or "lease ended during download")
    except (BotoCoreError, OSError) as exc:
        raise TransientError(f"reading s3://{job.bucket}/{job.key} failed: {exc}") from exc
    finally:
        body.close()
    last_modified = response.get("LastModified")
    version_id = response.get("VersionId")
    return Downloaded(
        path=path,
        size=size,
        etag=etag,
        version_id=version_id if version_id and version_id != "null" else None,
        last_modified=last_modified.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if last_modified else None,
        content_sha256=s3_sha256(response) or (digest.hexdigest() if digest is not None else None),
        file_date=object_date(response, mtime_keys),
    )
