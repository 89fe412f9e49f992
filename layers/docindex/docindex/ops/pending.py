"""Documents left ``ocr_status: pending`` too long, and their repair (part of ``docindex reconcile``).

A pending document waits for its OCR job. When the job died in the OCR DLQ
(or its message expired), nothing else would ever complete the document, and
the bucket/index merge counts it as in sync (its etag is the object's). So
reconcile also asks the index for documents pending longer than a threshold
and, with ``--fix``, announces each object again on the **ingest** queue, as
``docindex reprocess`` does (an observation "re-read whatever this object is
now", ``reason: reconcile``): the indexer reads it, claims the next generation
in the ordering ledger and hands the scan to the OCR worker itself (or writes
it from the content cache when its text is there already).

Why not send the OCR job straight to the OCR queue: the worker trusts a job's
bucket, key and generation, so the OCR queue's policy admits only the stack's
roles (the indexer, the worker, the redrive); an operator's credentials are
denied there on a real stack (tests/integration/test_operator_policies.py).
Through the ingest queue every guarantee of a real S3 event applies: a newer
change wins, a deleted object's document is removed, nothing is OCR'd twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from docindex.index.documents import OcrStatus
from docindex.ops.enqueue import BATCH_SIZE, ChangeSender, RateLimiter
from docindex.ops.reprocess import reprocess_change

REASON = "reconcile"

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
    # Announced again on the ingest queue (the indexer then hands each scan to the OCR worker).
    requeued: int = 0
    # Kept in the JSON for scripts written before issue 36: the indexer's ledger now decides what is
    # stale, so reconcile skips nothing itself.
    skipped: int = 0

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


def reannounce(
    report: PendingReport,
    *,
    bucket: str,
    sender: ChangeSender,
    rate: RateLimiter,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Announce every stuck document's object again on the ingest queue, ten to a batch, at ``rate``."""
    stuck = [doc.key for doc in report.stuck]
    for start in range(0, len(stuck), BATCH_SIZE):
        batch = [reprocess_change(bucket, key, now=clock()) for key in stuck[start : start + BATCH_SIZE]]
        rate.acquire(len(batch))
        report.requeued += sender.send(batch, reason=REASON)


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
