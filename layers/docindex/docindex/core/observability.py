"""Logger, Metrics and Tracer shared by every entry point (namespace ``DocIndex``).

Creating the Logger and Metrics is cheap and has no I/O. The Tracer is created on first use
(``observability.tracer``, which only the Lambda handlers' decorators touch): Powertools' Tracer
imports the X-Ray SDK even when tracing is disabled (~0.25-0.45 s of CPU per process), which every
CLI command and OCR worker process would otherwise pay for nothing.
"""

from __future__ import annotations

import os
import threading
from functools import cache
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

SERVICE = os.environ.get("POWERTOOLS_SERVICE_NAME", "docindex")
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "DocIndex")

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)


@cache
def _tracer() -> Tracer:
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE)


def __getattr__(name: str) -> Tracer:
    """``tracer``: the one Tracer, created on first access (module docstring)."""
    if name == "tracer":
        return _tracer()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Metric:
    """The metric names of the contract (and a few more)."""

    DOCUMENTS_INDEXED = "DocumentsIndexed"
    DOCUMENTS_DELETED = "DocumentsDeleted"
    DUPLICATES_SKIPPED = "DuplicatesSkipped"
    STALE_EVENTS_SKIPPED = "StaleEventsSkipped"
    OBJECTS_GONE = "ObjectsGoneSkipped"
    # Keys matching EXCLUDE_KEYS (lock files, Thumbs.db, folder markers): not indexed, not an error.
    OBJECTS_SKIPPED = "ObjectsSkipped"
    TEST_EVENTS_IGNORED = "TestEventsIgnored"
    OCR_JOBS_QUEUED = "OcrJobsQueued"
    EXTRACTION_FAILURES = "ExtractionFailures"
    # Parts of a file left out of its text (a sheet, pages, a member, an attachment): content_dropped.
    CONTENT_PARTS_DROPPED = "ContentPartsDropped"
    RECORDS_FAILED = "RecordsFailed"
    CHANGES_QUARANTINED = "ChangesQuarantined"
    POISON_MESSAGES = "PoisonMessages"
    BYTES_INDEXED = "BytesIndexed"
    BULK_RETRIES = "BulkRetries"
    # A write whose change a delete or a newer change overtook while it waited (never sent).
    OVERTAKEN_WRITES_DROPPED = "OvertakenWritesDropped"
    # A create whose content identity (ETag and size) matched the indexed version: identity refreshed, body not read.
    UNCHANGED_CONTENT_SKIPPED = "UnchangedContentSkipped"
    # The extraction/OCR result cache (docindex/ingest/cache.py), keyed by content hash.
    CONTENT_CACHE_HITS = "ContentCacheHits"
    CONTENT_CACHE_MISSES = "ContentCacheMisses"
    # GetObject refused with InvalidObjectState: indexed by name with extraction_error archived.
    OBJECTS_ARCHIVED = "ObjectsArchived"
    OCR_PAGES_PROCESSED = "OcrPagesProcessed"
    OCR_JOBS_COMPLETED = "OcrJobsCompleted"
    OCR_JOBS_FAILED = "OcrJobsFailed"
    # The OCR worker's own (beyond the contract's three above).
    OCR_SECONDS_PER_PAGE = "OcrSecondsPerPage"
    OCR_TEXT_LAYER_PAGES = "OcrTextLayerPages"
    OCR_JOBS_STALE = "OcrJobsStale"
    OCR_JOBS_DUPLICATE = "OcrJobsDuplicate"
    OCR_JOBS_RETRIED = "OcrJobsRetried"
    OCR_JOBS_DEFERRED = "OcrJobsDeferred"
    OCR_JOBS_RELEASED = "OcrJobsReleased"
    OCR_JOBS_QUARANTINED = "OcrJobsQuarantined"
    OCR_JOBS_SPLIT = "OcrJobsSplit"
    OCR_RANGES_COMPLETED = "OcrRangesCompleted"
    OCR_PROCESSES_LOST = "OcrProcessesLost"
    # Pages an attempt had read when an OCR process died under it: its retry reads them again.
    OCR_PAGES_REDONE = "OcrPagesRedone"
    OCR_LEASES_LOST = "OcrLeasesLost"
    # A docindex message from a newer release, re-sent for a newer consumer (core/messages.py).
    MESSAGES_DEFERRED = "MessagesDeferred"
    # The redrive's (functions/redrive): real start runs only; skips and errors also once per Reason.
    # Meaning search (docindex/embed, docindex/index/hybrid.py, docindex/worker/vectors.py).
    HYBRID_SEARCH_DEGRADED = "HybridSearchDegraded"
    EMBED_JOBS_QUEUED = "EmbedJobsQueued"
    PASSAGES_EMBEDDED = "PassagesEmbedded"
    EMBEDDING_SECONDS_PER_PASSAGE = "EmbeddingSecondsPerPassage"
    EMBEDDINGS_FAILED = "EmbeddingsFailed"
    REDRIVES_STARTED = "RedrivesStarted"
    REDRIVES_SKIPPED = "RedrivesSkipped"
    REDRIVE_ERRORS = "RedriveErrors"


_metrics_lock = threading.Lock()


def count(name: str, value: float = 1) -> None:
    """Add to a counter metric of this invocation (safe from any thread)."""
    with _metrics_lock:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def measure(name: str, value: float, unit: MetricUnit) -> None:
    """Record one value of a non-count metric (seconds, bytes...); thread-safe."""
    with _metrics_lock:
        metrics.add_metric(name=name, unit=unit, value=value)


def flush() -> None:
    """Print the metrics gathered so far as EMF (stdout) and start over.

    Outside Lambda nothing flushes at the end of an invocation: the long-running
    OCR worker calls this periodically and at shutdown.
    """
    with _metrics_lock:
        if metrics.metric_set:
            metrics.flush_metrics()


__all__ = ["Metric", "MetricUnit", "count", "flush", "logger", "measure", "metrics"]
