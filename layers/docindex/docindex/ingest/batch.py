"""Powertools' BatchProcessor, processing the records of a batch concurrently.

Powertools runs record handlers one after another. Indexing one file is a
chain of round trips (DynamoDB, S3, OpenSearch) around a CPU-bound
extraction, so running a few records at once overlaps the waiting. Success
and failure bookkeeping, the partial batch response and its logging stay
Powertools' own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType


class ConcurrentBatchProcessor(BatchProcessor):
    """A ``BatchProcessor`` whose ``process`` runs up to ``concurrency`` records at once."""

    def __init__(self, concurrency: int = 8, **kwargs: Any) -> None:
        kwargs.setdefault("event_type", EventType.SQS)
        super().__init__(**kwargs)
        self.concurrency = max(1, concurrency)

    def process(self) -> list[tuple]:
        records = list(self.records)
        if self.concurrency == 1 or len(records) <= 1:
            return [self._process_record(record) for record in records]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(records))) as pool:
            return list(pool.map(self._process_record, records))


class WorkSlots:
    """At most ``n`` records of an invocation working at once (S3, DynamoDB, extraction).

    A record waiting for its ``_bulk`` result gives its slot up (``waiting``),
    so more records can be in flight than work at once: the writer's requests
    then hold many documents instead of at most ``n`` (cluster CPU per
    document falls with the request size). Each thread holds at most one slot.
    """

    def __init__(self, n: int) -> None:
        self._free = threading.Semaphore(max(1, n))
        self._local = threading.local()

    @contextmanager
    def hold(self) -> Iterator[None]:
        self._free.acquire()
        self._local.held = True
        try:
            yield
        finally:
            if self._local.held:
                self._local.held = False
                self._free.release()

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a wait that needs no slot: gives the calling thread's slot up, takes one back after."""
        if not getattr(self._local, "held", False):
            yield
            return
        self._local.held = False
        self._free.release()
        try:
            yield
        finally:
            self._free.acquire()
            self._local.held = True
