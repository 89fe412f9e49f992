"""Powertools' BatchProcessor, processing the records of a batch concurrently.

Powertools runs record handlers one after another. Indexing one file is a
chain of round trips (DynamoDB, S3, OpenSearch) around a CPU-bound
extraction, so running a few records at once overlaps the waiting. Success
and failure bookkeeping, the partial batch response and its logging stay
Powertools' own.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
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
