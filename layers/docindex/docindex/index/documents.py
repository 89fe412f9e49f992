"""The index document: the only place its fields are set.

Every writer — the indexer (metadata, content, OCR pending, quarantine), the
OCR worker (the job's result) and the rejected-document fallback — builds an
:class:`IndexDocument` here and sends :meth:`IndexDocument.source`. The field
names are the mapping's (``index/mapping.py``) and the contract's; the values
of ``ocr_status`` and the pipeline's own ``extraction_error`` reasons are
enums, so a typo is a type error rather than a document nobody can filter.
"""

from __future__ import annotations

import posixpath
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from docindex.core.filedates import FileDate

if TYPE_CHECKING:
    from docindex.access.policy import AccessGrant
    from docindex.core.changes import ObjectChange
    from docindex.core.storage import FetchedObject
    from docindex.embed.document import EmbeddedDocument
    from docindex.extract import ExtractedDocument
    from docindex.extract.base import PageText


class OcrStatus(StrEnum):
    """Where a document's OCR stands (``ocr_status``)."""

    NONE = "none"  # no OCR needed: the content came from the file itself
    PENDING = "pending"  # indexed by name; the OCR worker will add the content
    DONE = "done"
    FAILED = "failed"


class ExtractionErrorCode(StrEnum):
    """Why a document has no (complete) content (``extraction_error``).

    Extractors raise ``ExtractionError`` with the first group; the pipeline
    itself sets the last three.
    """

    CORRUPT = "corrupt"
    ENCRYPTED = "encrypted"
    UNSUPPORTED = "unsupported"
    EMPTY = "empty"
    TOO_LARGE = "too_large"
    TIMEOUT = "timeout"
    # The parser needed more memory than the file's extraction process may use.
    MEMORY = "memory"
    ZIP_BOMB = "zip_bomb"
    # The change failed repeatedly (it killed its invocation, say): indexed by name, not retried.
    QUARANTINED = "quarantined"
    # OpenSearch refused the full document (mapping, size): indexed by name and metadata.
    INDEX_REJECTED = "index_rejected"
    # The object is in an archive storage class (Glacier Flexible Retrieval, Deep Archive, an
    # Intelligent-Tiering archive tier): indexed by name once, re-indexed when a restore completes.
    ARCHIVED = "archived"


# Fields only extraction (the indexer's or the OCR worker's) contributes.
CONTENT_FIELDS = (
    *("content", "title", "page_count", "content_truncated", "content_dropped", "extraction_error", "pages"),
    *("passages", "embedding_model"),
    *("author", "last_saved_by", "created", "modified"),
)


# The pages of one document carry at most this many characters of text in all: each page is a
# nested document holding its own copy of its text, and a document must stay under the smallest
# managed domains' 10 MiB request (2,000,000 characters of content are ~6 MB of UTF-8 Japanese).
# Pages past it are still in ``content``; the search only cannot name them.
MAX_PAGE_TEXT_CHARS = 500_000
# And at most this many pages: each is a nested document, and OpenSearch refuses a document with
# more than index.mapping.nested_objects.limit (10,000 by default) of them.
MAX_INDEXED_PAGES = 5000


def page_entries(
    pages: tuple[PageText, ...] | list[PageText], max_chars: int = MAX_PAGE_TEXT_CHARS
) -> tuple[dict[str, Any], ...]:
    """The nested ``pages`` of the index: number, kind, label and text of each page, within ``max_chars``."""
    entries: list[dict[str, Any]] = []
    left = max_chars
    for page in pages[:MAX_INDEXED_PAGES]:
        if left <= 0:
            break
        text = page.text[:left]
        left -= len(text)
        entries.append({"n": page.number, "kind": page.kind, "label": page.label, "text": text})
    return tuple(entries)


def now_iso() -> str:
    """The current time as the index stores dates (UTC, microseconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# At most this many OCR'd pages are listed on a document (``ocr_pages``); the others still count.
MAX_OCR_PAGES = 5000

# Folder facets stop this deep: a key is at most 1,024 bytes, a facet needs only the top levels.
MAX_FOLDER_DEPTH = 32


def folder_prefixes(key: str) -> tuple[str, ...]:
    """The key's ancestor folders, each with its trailing slash: ``a/b/c.txt`` → ``("a/", "a/b/")``."""
    parts = key.split("/")[:-1][:MAX_FOLDER_DEPTH]
    return tuple("/".join(parts[: i + 1]) + "/" for i in range(len(parts)))


def file_name_parts(key: str) -> tuple[str, str]:
    """The last path segment and its lowercase extension (no dot)."""
    filename = posixpath.basename(key.rstrip("/")) or key
    _, dot, ext = filename.rpartition(".")
    return filename, (ext.lower() if dot and ext and len(ext) <= 16 else "")


@dataclass(frozen=True)
class IndexDocument:
    """One document of the index (``_source``); ``None`` fields are left out of it."""

    bucket: str
    key: str
    filename: str
    extension: str
    indexed_at: str
    ocr_status: OcrStatus = OcrStatus.NONE
    content_type: str | None = None
    size: int | None = None
    etag: str | None = None
    version_id: str | None = None
    sequencer: str | None = None
    # The document's date (shown, sorted and filtered on): the file server's modification time when the
    # object's metadata carries one, else S3's LastModified; which it is, why the metadata's was not
    # used, and S3's own (docindex.core.filedates). Never an ordering key: the sequencer is.
    last_modified: str | None = None
    last_modified_source: str | None = None
    last_modified_problem: str | None = None
    s3_last_modified: str | None = None
    ocr_reason: str | None = None
    # The OCR'd pages (stored, not indexed): {"page", "reason", "confidence", "rotation", "skew", "vertical"}.
    ocr_pages: tuple[dict[str, Any], ...] | None = None
    # Why pages were OCR'd ("image", "no_text_layer", "unmapped_glyphs"...): filterable.
    ocr_page_reasons: tuple[str, ...] | None = None
    # The lowest mean word confidence of an OCR'd page (0-100): ``search --ocr-confidence-below``.
    ocr_confidence: int | None = None
    # The OCR pipeline that read the document (extract/version.py OCR_VERSION; absent: version 1).
    ocr_version: int | None = None
    title: str | None = None
    content: str | None = None
    page_count: int | None = None
    content_truncated: bool | None = None
    # What was left out of the text and why ("sheet '集計': DOCTYPE", "pages 5001-6000: MAX_PAGES").
    content_dropped: tuple[str, ...] | None = None
    # What the file's own properties say: who wrote it, who saved it last, created, modified.
    author: str | None = None
    last_saved_by: str | None = None
    created: str | None = None
    modified: str | None = None
    extraction_error: str | None = None
    # What the text holds that an operator should know of (docindex.extract.findings): assistant_instructions.
    findings: tuple[str, ...] | None = None
    # Where in the file (issue 28): one nested object per page, slide, sheet or attachment with its
    # text (``page_entries``); the search names the pages that match and previews them.
    pages: tuple[dict[str, Any], ...] | None = None
    # Meaning search (docs/meaning-search.md): the text's passages with their vectors, and the model
    # that made them (a document without vectors, or with another model's, is embedded again).
    passages: tuple[dict[str, Any], ...] | None = None
    embedding_model: str | None = None
    # Lowercase hex SHA-256 of the object's bytes: identical copies share it (search --collapse)
    # and it keys the extraction/OCR result cache.
    content_sha256: str | None = None
    # Derived from the key: the folder facet and the folder filter of the search API.
    folders: tuple[str, ...] | None = None
    # Who may read the file (docindex.access): stamped on every write by the document store.
    allow_principals: tuple[str, ...] | None = None
    deny_principals: tuple[str, ...] | None = None

    # -- built from a change ------------------------------------------------

    @classmethod
    def for_object(
        cls,
        *,
        bucket: str,
        key: str,
        content_type: str | None = None,
        size: int | None = None,
        etag: str | None = None,
        version_id: str | None = None,
        sequencer: str | None = None,
        last_modified: str | None = None,
        content_sha256: str | None = None,
        file_date: FileDate | None = None,
    ) -> IndexDocument:
        """The fields every document has, with or without content; ``file_date`` (default: S3's
        ``last_modified``) is the document's date."""
        filename, extension = file_name_parts(key)
        return cls(
            bucket=bucket,
            key=key,
            filename=filename,
            extension=extension,
            indexed_at=now_iso(),
            folders=folder_prefixes(key),
            content_type=content_type,
            size=size,
            etag=etag,
            version_id=version_id,
            sequencer=sequencer,
            content_sha256=content_sha256,
        ).with_file_date(file_date or FileDate.from_s3(last_modified))

    @classmethod
    def for_change(
        cls, change: ObjectChange, fetched: FetchedObject | None, *, content_type: str | None
    ) -> IndexDocument:
        """Metadata of the object a change announced (what S3 returned wins over the event's)."""
        return cls.for_object(
            bucket=change.bucket,
            key=change.key,
            content_type=content_type,
            size=fetched.size if fetched else change.size,
            etag=(fetched.etag if fetched else None) or change.etag,
            version_id=(fetched.version_id if fetched else None) or change.version_id,
            sequencer=change.sequencer,
            last_modified=(fetched.last_modified if fetched else None) or change.event_time,
            content_sha256=fetched.content_sha256 if fetched else None,
            file_date=fetched.file_date if fetched else None,
        )

    @classmethod
    def extracted(cls, change: ObjectChange, fetched: FetchedObject, extracted: ExtractedDocument) -> IndexDocument:
        """The full document of a file the indexer extracted."""
        base = cls.for_change(change, fetched, content_type=extracted.content_type)
        return base.with_extracted(extracted).with_properties(
            author=extracted.author,
            last_saved_by=extracted.last_saved_by,
            created=extracted.created,
            modified=extracted.modified,
        )

    @classmethod
    def from_source(cls, source: dict[str, Any]) -> IndexDocument:
        """A document read back from the index (unknown fields are dropped)."""
        known = {name: source[name] for name in cls.__dataclass_fields__ if name in source}
        if "ocr_status" in known:
            known["ocr_status"] = OcrStatus(known["ocr_status"])
        for name in (
            "allow_principals",
            "deny_principals",
            "content_dropped",
            "ocr_pages",
            "ocr_page_reasons",
            "pages",
            "passages",
        ):
            if name in known:
                known[name] = tuple(known[name] or ())
        known["folders"] = folder_prefixes(str(source.get("key", "")))
        filename, extension = file_name_parts(str(source.get("key", "")))
        known.setdefault("filename", filename)
        known.setdefault("extension", extension)
        known.setdefault("indexed_at", now_iso())
        return cls(**known)

    # -- states -------------------------------------------------------------

    def with_file_date(self, found: FileDate) -> IndexDocument:
        """This document dated ``found``: the file server's time or S3's, said which, and S3's own."""
        return replace(
            self,
            last_modified=found.value,
            last_modified_source=found.source if found.value else None,
            last_modified_problem=found.problem,
            s3_last_modified=found.s3_value,
        )

    def with_access(self, grant: AccessGrant) -> IndexDocument:
        """This document stamped with who may read it (the search API filters on these)."""
        return replace(self, allow_principals=tuple(grant.allow), deny_principals=tuple(grant.deny))

    def with_content(
        self,
        *,
        text: str | None,
        title: str | None,
        page_count: int | None,
        truncated: bool,
        error: str | None,
        dropped: tuple[str, ...] | list[str] = (),
        pages: tuple[PageText, ...] = (),
    ) -> IndexDocument:
        """This document with extraction's fields replaced (empty ones are left out).

        ``dropped``: what was left out of the text and why (``content_dropped``); ``pages``: each
        page's text, for formats that have pages (``pages``).
        """
        from docindex.extract.findings import findings

        return replace(
            self,
            content=text or None,
            findings=findings(text) or None,
            title=title or None,
            page_count=page_count,
            content_truncated=True if truncated or dropped else None,
            content_dropped=tuple(dropped) or None,
            extraction_error=str(error) if error else None,
            pages=(page_entries(pages) or None) if text else None,
            # New text: its vectors are made from it (``with_embeddings``), never kept from before.
            passages=None,
            embedding_model=None,
        )

    def with_embeddings(self, embedded: EmbeddedDocument | None) -> IndexDocument:
        """This document with its passages' vectors (None: without; keyword search still finds it)."""
        if embedded is None or not embedded.passages:
            return replace(self, passages=None, embedding_model=None)
        return replace(
            self,
            passages=tuple(p.to_source() for p in embedded.passages),
            embedding_model=embedded.model_id,
        )

    def with_properties(
        self, *, author: str | None, last_saved_by: str | None, created: str | None, modified: str | None
    ) -> IndexDocument:
        """The file's own properties (who wrote and last saved it, when), where its format records them."""
        return replace(self, author=author, last_saved_by=last_saved_by, created=created, modified=modified)

    def pending_ocr(self, reason: str) -> IndexDocument:
        """Indexed now by name (and any text already found); the OCR worker brings the rest."""
        return replace(self, ocr_status=OcrStatus.PENDING, ocr_reason=reason)

    def ocr_done_from_cache(
        self, status: OcrStatus, reason: str, pages: list[dict[str, Any]] | tuple[dict[str, Any], ...] = ()
    ) -> IndexDocument:
        """The OCR result of the same bytes, taken from the cache: no job, the content is here."""
        return replace(self, ocr_status=status, ocr_reason=reason).with_ocr_pages(pages)

    def with_ocr_pages(self, pages: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> IndexDocument:
        """What OCR did page by page: the pages, their reasons, the lowest confidence, the OCR version."""
        from docindex.extract.version import OCR_VERSION

        confidences = [page["confidence"] for page in pages if page.get("confidence") is not None]
        reasons = tuple(sorted({str(page.get("reason") or "image") for page in pages}))
        return replace(
            self,
            ocr_pages=tuple(dict(page) for page in pages[:MAX_OCR_PAGES]) or None,
            ocr_page_reasons=reasons or None,
            ocr_confidence=min(confidences) if confidences else None,
            ocr_version=OCR_VERSION,
        )

    def with_extracted(self, extracted: ExtractedDocument) -> IndexDocument:
        """This document with what the extractor read (``with_content`` of its fields)."""
        return self.with_content(
            text=extracted.text,
            title=extracted.title,
            page_count=extracted.page_count,
            truncated=extracted.truncated,
            error=extracted.error,
            dropped=extracted.dropped,
            pages=extracted.pages,
        )

    def with_content_sha256(self, content_sha256: str) -> IndexDocument:
        return replace(self, content_sha256=content_sha256)

    def quarantined(self) -> IndexDocument:
        """A change that kept failing: findable by name, and says why it has no content."""
        return replace(self, extraction_error=ExtractionErrorCode.QUARANTINED.value)

    def archived(self) -> IndexDocument:
        """An object S3 cannot serve until it is restored: findable by name, says why it has no content."""
        return replace(self, extraction_error=ExtractionErrorCode.ARCHIVED.value)

    def with_identity(
        self,
        *,
        version_id: str | None,
        sequencer: str | None,
        file_date: FileDate | None,
        etag: str | None,
    ) -> IndexDocument:
        """The same content re-announced (a re-sync, a metadata edit, ``docindex reprocess --dates``):
        only the version's identity and its date (``file_date``, from its metadata; None: kept) change."""
        dated = self.with_file_date(file_date) if file_date is not None and file_date.value else self
        return replace(
            dated,
            version_id=version_id,
            sequencer=sequencer or self.sequencer,
            etag=etag or self.etag,
            indexed_at=now_iso(),
        )

    def without_content(self) -> IndexDocument:
        """The metadata-only fallback for a document OpenSearch refused."""
        return replace(
            self,
            content=None,
            title=None,
            pages=None,
            passages=None,
            embedding_model=None,
            extraction_error=ExtractionErrorCode.INDEX_REJECTED.value,
        )

    def ocr_result(
        self,
        *,
        status: OcrStatus,
        reason: str,
        content_type: str | None,
        text: str | None,
        title: str | None,
        page_count: int | None,
        truncated: bool,
        error: str | None,
        ocr_pages: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
        pages: tuple[PageText, ...] = (),
    ) -> IndexDocument:
        """The pending document completed by the OCR worker's job.

        The indexer's title (from the file's own metadata) wins over OCR's.
        """
        done = (
            replace(
                self,
                ocr_status=status,
                ocr_reason=reason,
                indexed_at=now_iso(),
                content_type=self.content_type or content_type,
            )
            .with_content(text=text, title=None, page_count=page_count, truncated=truncated, error=error, pages=pages)
            .with_ocr_pages(ocr_pages)
        )
        return replace(done, title=self.title or title or None)

    def source(self) -> dict[str, Any]:
        """The ``_source`` sent to OpenSearch, with ``variants``: the spelling-variant text of the
        title, file name and content (the index does not store it; every write computes it)."""
        source = {
            name: value.value if isinstance(value, StrEnum) else list(value) if isinstance(value, tuple) else value
            for name, value in asdict(self).items()
            if value is not None
        }
        return with_variants(source)


DERIVED_FIELDS = ("variants", "names", "name_order")


def with_variants(source: dict[str, Any], fields: tuple[str, ...] = DERIVED_FIELDS) -> dict[str, Any]:
    """``source`` with its derived fields computed: ``variants``, the spelling-variant text of its
    title, file name and content (``docindex.text.variants``), ``names``, its folder and file
    names for name search, and ``name_order``, its file name's key for sorting by name
    (``docindex.index.names``); a copy of an indexed document gets them this way too. ``fields``:
    only these (an index built before one of them has no field for it)."""
    from docindex.index.names import FIELD, ORDER_FIELD, document_names, name_order
    from docindex.text.variants import document_variants

    rest = {name: value for name, value in source.items() if name not in DERIVED_FIELDS}
    derived: dict[str, Any] = {}
    if "variants" in fields:
        derived["variants"] = document_variants(source.get("title"), source.get("filename"), source.get("content"))
    if FIELD in fields:
        derived[FIELD] = document_names(source.get("key"))
    if ORDER_FIELD in fields:
        derived[ORDER_FIELD] = name_order(source.get("filename"))
    return {**rest, **{name: value for name, value in derived.items() if value}}
