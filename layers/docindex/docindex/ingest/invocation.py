"""One Lambda invocation of the indexer: its memory and time budgets, the state its records share.

Every record of a batch runs in the same process at once (``ConcurrentBatchProcessor``),
so what they share is bounded here: object bodies held in memory (a byte budget from the
function's memory size), work slots (``INDEXER_CONCURRENCY``), the batch's coalescing
``_bulk`` writer, and per-object locks so changes of one object never race.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from docindex.core.storage import ByteBudget
from docindex.index.bulk import BulkWriter
from docindex.ingest.batch import WorkSlots

# Time kept back from extraction for the bulk write and the batch response.
EXTRACTION_MARGIN_SECONDS = 10.0
# Object bodies held in memory at once, across the records of an invocation:
# at most this share of the function's memory (384 MiB at 1536 MB). A body
# costs about 1.2-1.6 times its size at peak (make bench: 10 PDFs of 20 MB
# read at once peaked 250-330 MB above the idle process), and the extracted
# text and its JSON need room too.
BODY_BUDGET_SHARE = 0.25
DEFAULT_MEMORY_MB = 1536
MiB = 1024 * 1024
# Records of an invocation in flight at once: INDEXER_CONCURRENCY of them working,
# the others waiting for a work slot or for their _bulk result (docs/performance.md).
RECORDS_IN_FLIGHT = 100
# A record that gets its work slot with less than this left of the invocation (at most
# LATE_START_SECONDS, a share of the time the invocation started with) is not started:
# it fails and SQS delivers it again, rather than being extracted in a hurry and indexed
# with extraction_error "timeout".
LATE_START_SECONDS = 40.0
LATE_START_SHARE = 0.25


def function_memory_mb(context: Any) -> int:
    """The function's memory size from the Lambda context (a default outside Lambda)."""
    try:
        return max(128, int(context.memory_limit_in_mb))
    except (AttributeError, TypeError, ValueError):
        return DEFAULT_MEMORY_MB


def body_budget_bytes(context: Any) -> int:
    """The byte budget for object bodies of one invocation, from the function's memory size."""
    return int(function_memory_mb(context) * MiB * BODY_BUDGET_SHARE)


class Outcome(StrEnum):
    """What became of one change (the ``outcome`` of its result and log line)."""

    INDEXED = "indexed"
    DELETED = "deleted"
    OCR_QUEUED = "ocr_queued"
    STALE = "stale"
    GONE = "gone"
    IGNORED = "ignored"
    DUPLICATE = "duplicate"
    QUARANTINED = "quarantined"
    UNCHANGED = "unchanged"
    ARCHIVED = "archived"
    EXCLUDED = "excluded"
    DEFERRED = "deferred"  # a message from a newer release, left to a newer consumer


@dataclass
class BatchRun:
    """State shared by the records of one invocation."""

    writer: BulkWriter
    time_left: Callable[[], float]
    budget: ByteBudget
    slots: WorkSlots
    late_start_seconds: float = 0.0
    index_error: str | None = None
    _locks: defaultdict[str, threading.Lock] = field(default_factory=lambda: defaultdict(threading.Lock))
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def lock_for(self, doc_id: str) -> threading.Lock:
        # Changes of one object within a batch run one after another, so a
        # create and its delete (or both shapes of one change) never race.
        with self._guard:
            return self._locks[doc_id]
