"""Documents left ``ocr_status: pending`` too long, and their repair (part of ``docindex reconcile``).

A pending document waits for its OCR job. When the job died in the OCR DLQ
(or its message expired), nothing else would ever complete the document, and
the bucket/index merge counts it as in sync (its etag is the object's). So
reconcile also asks the index for documents pending longer than a threshold
and, with ``--fix``, queues their OCR job again: an ``OcrJob`` at the
generation the ledger holds for the pending write, exactly what the indexer
would have sent. The worker's own guards then apply as for any job: a newer
change or a delete makes it stale, and a job that already completed is not
run again (idempotency keyed on bucket, key and generation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from docindex.core.changes import doc_id
from docindex.index.documents import OcrStatus
from docindex.ingest.handoff import OcrJob, OcrQueue
from docindex.ingest.ledger import Ledger

# Default threshold: the OCR backlog alarm's (OcrMaxAgeSeconds) and more than the longest job (3 h).
DEFAULT_PENDING_AFTER_SECONDS = 6 * 3600
MAX_LISTED = 10_000


@dataclass(frozen=True)
class StuckDocument:
    key: str
    version: int
    indexed_at: str
    source: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "indexed_at": self.indexed_at, "ocr_reason": self.source.get("ocr_reason")}


@dataclass
class PendingReport:
    older_than_seconds: int
    stuck: list[StuckDocument] = field(default_factory=list)
    requeued: int = 0
    skipped: int = 0  # a newer change or a delete holds the ledger: the job would be stale

    def to_dict(self, samples: int = 10) -> dict[str, Any]:
        return {
            "older_than_seconds": self.older_than_seconds,
            "stuck": len(self.stuck),
            "requeued": self.requeued,
            "skipped": self.skipped,
            "samples": [s.to_dict() for s in self.stuck[:samples]],
        }


def find_stuck_pending(
    client: Any, index: str, bucket: str, *, older_than_seconds: int, prefix: str = "", now: datetime | None = None
) -> list[StuckDocument]:
    """Documents of ``bucket`` pending OCR since before ``now - older_than_seconds`` (at most ``MAX_LISTED``)."""
    cutoff = (now or datetime.now(UTC)) - timedelta(seconds=older_than_seconds)
    filters: list[dict[str, Any]] = [
        {"term": {"bucket": bucket}},
        {"term": {"ocr_status": OcrStatus.PENDING.value}},
        {"range": {"indexed_at": {"lt": cutoff.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}},
    ]
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    body: dict[str, Any] = {
        "size": 1000,
        "version": True,
        "query": {"bool": {"filter": filters}},
        "sort": [{"key": {"order": "asc"}}],
        "_source": {"excludes": ["content", "pages"]},
    }
    found: list[StuckDocument] = []
    while len(found) < MAX_LISTED:
        hits = client.search(index=index, body=body)["hits"]["hits"]
        for hit in hits:
            source = hit["_source"]
            found.append(
                StuckDocument(source["key"], int(hit.get("_version", 0)), source.get("indexed_at", ""), source)
            )
        if len(hits) < body["size"]:
            break
        body["search_after"] = hits[-1]["sort"]
    return found[:MAX_LISTED]


def requeue_ocr(report: PendingReport, *, bucket: str, ledger: Ledger, queue: OcrQueue) -> None:
    """Queue the OCR job of every stuck document again, at the generation its pending write holds."""
    for doc in report.stuck:
        entry = ledger.get(doc_id(bucket, doc.key))
        if entry is None or entry.state != "present":
            report.skipped += 1
            continue
        # The worker committed this job (ledger at g+1, ocr_of g) but its write never landed: the
        # job of generation g resumes. Otherwise the ledger must still hold the pending write's g.
        generation = entry.ocr_of if entry.ocr_of == entry.generation - 1 else entry.generation
        if generation != doc.version:
            report.skipped += 1
            continue
        source = doc.source
        queue.send(
            OcrJob(
                bucket=bucket,
                key=doc.key,
                reason=str(source.get("ocr_reason") or "image"),
                generation=generation,
                version_id=source.get("version_id"),
                etag=source.get("etag"),
                sequencer=source.get("sequencer"),
                size=source.get("size"),
                content_type=source.get("content_type"),
            )
        )
        report.requeued += 1


def distinct_contents(client: Any, index: str, bucket: str, *, prefix: str = "") -> int:
    """How many distinct contents (``content_sha256``) the bucket's documents hold (approximate above 40,000)."""
    filters: list[dict[str, Any]] = [{"term": {"bucket": bucket}}]
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    response = client.search(
        index=index,
        body={
            "size": 0,
            "query": {"bool": {"filter": filters}},
            "aggs": {"contents": {"cardinality": {"field": "content_sha256", "precision_threshold": 40000}}},
        },
    )
    return int(response["aggregations"]["contents"]["value"])
