"""``docindex reprocess --missing-vectors``: embed jobs for indexed documents without this model's vectors.

An index that existed before meaning search (after ``docindex reindex`` gave it the vector fields),
or one whose model changed, holds documents without vectors. Re-extracting them would read every
object again; their text is in the index already, so each gets an embed job on the embed queue at its
current generation (the document's external version), exactly as the indexer queues one: the
worker reads the text from the index, embeds it (the content cache first) and writes it back at
the next generation. A document changed in between has a newer generation in the ledger: its job is
stale and dropped, and the change's own write queued a job of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from docindex.core.exceptions import TransientError
from docindex.ingest.handoff import EMBED_REASON, OcrJob, OcrQueue
from docindex.ops.enqueue import RateLimiter
from docindex.ops.reprocess import ReprocessResult, by_key, send_in_batches

_FIELDS = ["bucket", "key", "version_id", "etag", "sequencer", "size", "content_type"]


def missing_vectors_query(model_id: str, *, prefix: str | None = None, bucket: str | None = None) -> dict[str, Any]:
    """Documents with text, complete (not waiting for OCR), without ``model_id``'s vectors."""
    clauses: list[dict[str, Any]] = [
        {"exists": {"field": "content"}},
        {"terms": {"ocr_status": ["none", "done"]}},
    ]
    if prefix:
        clauses.append({"prefix": {"key": prefix}})
    if bucket:
        clauses.append({"term": {"bucket": bucket}})
    return {"bool": {"filter": clauses, "must_not": [{"term": {"embedding_model": model_id}}]}}


def embed_jobs(
    opensearch: Any, index: str, query: dict[str, Any], *, after: tuple[str, str] | None = None
) -> Iterator[OcrJob]:
    """One embed job per matching document, at its current generation, in (bucket, key) order."""
    for hit in by_key(opensearch, index, query, source=_FIELDS, after=after, version=True):
        source = hit.get("_source") or {}
        yield OcrJob(
            bucket=str(source["bucket"]),
            key=str(source["key"]),
            reason=EMBED_REASON,
            generation=int(hit["_version"]),
            version_id=source.get("version_id"),
            etag=source.get("etag"),
            sequencer=source.get("sequencer"),
            size=source.get("size"),
            content_type=source.get("content_type"),
        )


def queue_embed_jobs(
    jobs: Iterator[OcrJob],
    *,
    queue: OcrQueue | None,
    rate: RateLimiter,
    limit: int | None = None,
    on_progress: Callable[[ReprocessResult], None] | None = None,
) -> ReprocessResult:
    """Send the jobs in batches of ten (``queue`` None: a dry run that only counts)."""
    result = ReprocessResult(dry_run=queue is None)
    started = time.monotonic()
    try:
        send_in_batches(
            jobs,
            result,
            send=None if queue is None else queue.send_all,
            rate=rate,
            where=lambda job: (job.bucket, job.key),
            sample=lambda job: {"bucket": job.bucket, "key": job.key, "generation": job.generation},
            limit=limit,
            on_progress=on_progress,
        )
    except TransientError as exc:
        result.error = str(exc)
    result.seconds = time.monotonic() - started
    return result
