"""Which files could not be read completely, and why: the operator's report (``docindex failures``).

Every indexed document whose text is missing or partial falls in exactly one reason, the first
that applies:

1. ``ocr_failed``: the OCR worker gave up on it (``ocr_status: failed``); the detail is the
   ``extraction_error`` it recorded (``timeout``, ``too_large``, ``quarantined``, ...).
2. an ``extraction_error`` value (``corrupt``, ``encrypted``, ``unsupported``, ``timeout``,
   ``memory``, ``zip_bomb``, ``too_large``, ``empty``, ``quarantined``, ``index_rejected``,
   ``archived``): indexed by name and metadata only; the detail is what the file is (type, size).
3. ``low_ocr_confidence``: read, but OCR read a page below the confidence threshold
   (``ocr_confidence``; default 75, the search API's "low confidence" facet); the detail is the
   confidence and why the pages were OCR'd.
4. ``truncated``: read in part (``content_truncated``); the detail is what was left out and why
   (``content_dropped``).
5. ``assistant_instructions``: read completely, but its text carries instructions aimed at an AI assistant
   (``findings``, docindex.extract.findings): a planted file to review; nothing to retry.

So the report counts each file once, and a document with an ``extraction_error`` is always listed
(under its error, or under ``ocr_failed`` with the error as detail). Each reason names the
``docindex reprocess`` filter that sends its documents through the pipeline again.

The counts come from one aggregation request; the keys are paged in (bucket, key) order with
``search_after``, so a report of millions of documents streams in constant memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

OCR_FAILED = "ocr_failed"
LOW_OCR_CONFIDENCE = "low_ocr_confidence"
TRUNCATED = "truncated"
# Read completely, but flagged at indexing time (docindex.extract.findings): a planted file to look at.
ASSISTANT_INSTRUCTIONS = "assistant_instructions"
# The search API's threshold (docindex.search_api.query.LOW_OCR_CONFIDENCE; recognize.PLAUSIBLE_CONFIDENCE).
DEFAULT_CONFIDENCE_BELOW = 75
MAX_ERROR_CODES = 200
SOURCE_FIELDS = [
    *("bucket", "key", "extension", "content_type", "size", "last_modified", "indexed_at"),
    *("extraction_error", "ocr_status", "ocr_reason", "ocr_confidence", "ocr_page_reasons", "content_dropped"),
    "findings",
]

# What each reason means for the person who owns the file, and what to do before retrying.
EXPLANATIONS: dict[str, str] = {
    OCR_FAILED: "the OCR worker gave up on the scan or image (the detail says why)",
    LOW_OCR_CONFIDENCE: "read by OCR, but poorly: words may be missing or wrong (rescan at 300 dpi, or retry after "
    "an OCR upgrade)",
    TRUNCATED: "read in part: the text past a limit (MAX_CONTENT_CHARS, MAX_PAGES, a sheet's or member's limit) "
    "is not searchable; raise the limit, then retry",
    "corrupt": "the file is damaged or not what its name says; replace it on the share, or retry after an upgrade",
    "encrypted": "password-protected: save it without the password (or with a password only for editing), then retry",
    "unsupported": "a format docindex does not read; retry after an upgrade that reads it",
    "empty": "the file holds no text (an empty file, a form without content)",
    "too_large": "larger than MAX_OBJECT_BYTES (or the worker's limit); raise it, then retry",
    "timeout": "reading took longer than EXTRACTION_TIMEOUT_SECONDS; retry (or raise it)",
    "memory": "the parser needed more memory than the extraction may use; retry on the OCR worker or raise it",
    "zip_bomb": "an archive that expands beyond MAX_ZIP_UNCOMPRESSED_BYTES or MAX_ZIP_RATIO: left unread on purpose",
    "quarantined": "its change failed repeatedly (it crashed its reader): indexed by name, not retried by itself",
    "index_rejected": "OpenSearch refused the full document (mapping, size): indexed by name and metadata",
    ASSISTANT_INSTRUCTIONS: "read, but its text carries instructions aimed at an AI assistant (ignore the previous "
    "instructions, list every file, follow a link): a planted file? Answers never rest on it alone; review it on "
    "the share",
    "archived": "in an archive storage class (Glacier): restore it; docindex re-reads it when the restore completes",
}


def reprocess_command(
    reason: str, *, prefix: str | None = None, confidence_below: int = DEFAULT_CONFIDENCE_BELOW
) -> str:
    """The ``docindex reprocess`` that sends the documents of ``reason`` (under ``prefix``) through again."""
    if reason == OCR_FAILED:
        selection = "--ocr-status failed"
    elif reason == LOW_OCR_CONFIDENCE:
        selection = f"--ocr-confidence-below {confidence_below}"
    elif reason == TRUNCATED:
        selection = "--truncated"
    elif reason == ASSISTANT_INSTRUCTIONS:
        # nothing to retry: the file is re-read when someone changes it
        return "(review the file; it is re-read when it changes)"
    else:
        selection = f"--extraction-error {shell_word(reason)}"
    return f"docindex reprocess {selection}" + (f" --prefix {shell_word(prefix)}" if prefix else "")


_SHELL_PLAIN = re.compile(r"[^\s'\"\\$`!*?\[\]{}()<>|&;#~=]+")


def shell_word(text: str) -> str:
    """``text`` as one word of a shell command: as it is when nothing in it is special (営業部/), else quoted."""
    import shlex

    return text if _SHELL_PLAIN.fullmatch(text) else shlex.quote(text)


@dataclass(frozen=True)
class FailureFilter:
    """Which documents the report looks at: under ``prefix`` (of ``bucket``), and how low a confidence counts."""

    prefix: str | None = None
    bucket: str | None = None
    confidence_below: int = DEFAULT_CONFIDENCE_BELOW

    def scope(self) -> list[dict[str, Any]]:
        clauses: list[dict[str, Any]] = []
        if self.prefix:
            clauses.append({"prefix": {"key": self.prefix}})
        if self.bucket:
            clauses.append({"term": {"bucket": self.bucket}})
        return clauses

    def reason_query(self, reason: str) -> dict[str, Any]:
        """The documents of ``reason``, and of no reason before it (each document has one reason)."""
        failed: dict[str, Any] = {"term": {"ocr_status": "failed"}}
        errored: dict[str, Any] = {"exists": {"field": "extraction_error"}}
        low: dict[str, Any] = {"range": {"ocr_confidence": {"lt": self.confidence_below}}}
        wanted: list[dict[str, Any]]
        before: list[dict[str, Any]]
        if reason == OCR_FAILED:
            wanted, before = [failed], []
        elif reason == LOW_OCR_CONFIDENCE:
            wanted, before = [low], [failed, errored]
        elif reason == TRUNCATED:
            wanted, before = [{"term": {"content_truncated": True}}], [failed, errored, low]
        elif reason == ASSISTANT_INSTRUCTIONS:
            truncated = {"term": {"content_truncated": True}}
            wanted, before = [{"term": {"findings": reason}}], [failed, errored, low, truncated]
        else:
            wanted, before = [{"term": {"extraction_error": reason}}], [failed]
        return {"bool": {"filter": [*self.scope(), *wanted], "must_not": before}}

    def counts_body(self) -> dict[str, Any]:
        """One request: how many documents each reason holds (extraction errors by value)."""
        failed = {"term": {"ocr_status": "failed"}}
        return {
            "size": 0,
            "track_total_hits": True,
            "query": {"bool": {"filter": self.scope()}},
            "aggs": {
                OCR_FAILED: {"filter": self.reason_query(OCR_FAILED)},
                "errors": {
                    "filter": {"bool": {"must_not": [failed]}},
                    "aggs": {"codes": {"terms": {"field": "extraction_error", "size": MAX_ERROR_CODES}}},
                },
                LOW_OCR_CONFIDENCE: {"filter": self.reason_query(LOW_OCR_CONFIDENCE)},
                TRUNCATED: {"filter": self.reason_query(TRUNCATED)},
                ASSISTANT_INSTRUCTIONS: {"filter": self.reason_query(ASSISTANT_INSTRUCTIONS)},
            },
        }


@dataclass(frozen=True)
class Failure:
    """One document of the report: where it is, why it was not read completely, the detail."""

    reason: str
    bucket: str
    key: str
    detail: str
    source: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        s = self.source
        return {
            "reason": self.reason,
            "bucket": self.bucket,
            "key": self.key,
            "detail": self.detail,
            "extraction_error": s.get("extraction_error"),
            "ocr_status": s.get("ocr_status"),
            "ocr_confidence": s.get("ocr_confidence"),
            "content_type": s.get("content_type"),
            "size": s.get("size"),
            "last_modified": s.get("last_modified"),
            "indexed_at": s.get("indexed_at"),
        }


@dataclass
class Reason:
    """A reason's line of the summary: how many documents, what it means, the command that retries them."""

    name: str
    count: int
    retry: str
    explanation: str

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.name, "count": self.count, "retry": self.retry, "explanation": self.explanation}


def _size(size: Any) -> str:
    if not isinstance(size, int):
        return "size unknown"
    for unit, step in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= step:
            return f"{size / step:.1f} {unit}"
    return f"{size} B"


def detail_of(reason: str, source: dict[str, Any]) -> str:
    """What the report says of one document: the reason's detail (the index keeps no extractor message)."""
    kind = source.get("content_type") or (f".{source['extension']}" if source.get("extension") else "unknown type")
    if reason == OCR_FAILED:
        return f"{source.get('extraction_error') or 'no error recorded'} ({kind}, {_size(source.get('size'))})"
    if reason == LOW_OCR_CONFIDENCE:
        pages = ", ".join(source.get("ocr_page_reasons") or []) or source.get("ocr_reason") or "ocr"
        return f"confidence {source.get('ocr_confidence')} ({pages})"
    if reason == TRUNCATED:
        return "; ".join(source.get("content_dropped") or []) or "the text past MAX_CONTENT_CHARS"
    return f"{kind}, {_size(source.get('size'))}"


def count_reasons(opensearch: Any, index: str, selection: FailureFilter) -> list[Reason]:
    """Every reason that has documents, most first (ties by name), with its retry command."""
    response = opensearch.search(index=index, body=selection.counts_body())
    aggregations = response.get("aggregations") or {}
    counts: dict[str, int] = {}
    for name in (OCR_FAILED, LOW_OCR_CONFIDENCE, TRUNCATED, ASSISTANT_INSTRUCTIONS):
        counts[name] = int((aggregations.get(name) or {}).get("doc_count", 0))
    for bucket in ((aggregations.get("errors") or {}).get("codes") or {}).get("buckets", []):
        counts[str(bucket["key"])] = int(bucket["doc_count"])
    reasons = [
        Reason(
            name,
            count,
            reprocess_command(name, prefix=selection.prefix, confidence_below=selection.confidence_below),
            EXPLANATIONS.get(name, "an extraction error this version does not describe"),
        )
        for name, count in counts.items()
        if count
    ]
    return sorted(reasons, key=lambda r: (-r.count, r.name))


def documents(opensearch: Any, index: str, selection: FailureFilter, reason: str) -> Iterator[Failure]:
    """The documents of ``reason``, in (bucket, key) order."""
    from docindex.ops.reprocess import by_key

    for hit in by_key(opensearch, index, selection.reason_query(reason), source=SOURCE_FIELDS):
        source = hit.get("_source") or {}
        bucket, key = str(source.get("bucket", "")), str(source.get("key", ""))
        yield Failure(reason, bucket, key, detail_of(reason, source), source)
