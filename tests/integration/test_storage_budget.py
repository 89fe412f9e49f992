"""Object bodies are read against a byte budget, and held only until extracted."""

from __future__ import annotations

from typing import Any

import pytest

import docindex.ingest.indexer as indexer_module
from devkit.messages import s3_notification, sqs_event
from docindex.core.storage import ByteBudget, ObjectStore
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke


def test_reading_holds_the_body_size_until_the_block_ends(stack: Stack) -> None:
    stack.aws.s3.put_object(Bucket=stack.bucket, Key="a.txt", Body=b"x" * 1000)
    store = ObjectStore(stack.aws.s3)
    budget = ByteBudget(10_000)
    # A hint that is too small (the object was replaced by a bigger one) is topped up
    with store.reading(stack.bucket, "a.txt", version_id=None, max_bytes=5000, budget=budget, size_hint=10) as got:
        assert got is not None
        assert got.data == b"x" * 1000
        assert budget.used == 1000
    assert budget.used == 0
    # No hint: the reservation is taken from ContentLength
    with store.reading(stack.bucket, "a.txt", version_id=None, max_bytes=5000, budget=budget) as got:
        assert budget.used == 1000
    assert budget.used == 0
    # Too large to read here: nothing is held, and no body is read
    with store.reading(stack.bucket, "a.txt", version_id=None, max_bytes=500, budget=budget, size_hint=1000) as got:
        assert got is not None
        assert got.data is None
        assert budget.used == 0
    # Gone: the hinted reservation is given back
    missing = store.reading(stack.bucket, "gone.txt", version_id=None, max_bytes=5000, budget=budget, size_hint=800)
    with missing as got:
        assert got is None
    assert budget.used == 0


def test_a_batch_bigger_than_the_budget_reads_one_body_at_a_time(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a budget that fits one body of this batch but not two
    budgets: list[ByteBudget] = []

    class Recording(ByteBudget):
        def __init__(self, capacity: int) -> None:
            super().__init__(capacity)
            budgets.append(self)

    monkeypatch.setattr(indexer_module, "ByteBudget", Recording)
    monkeypatch.setattr(indexer_module, "body_budget_bytes", lambda context: 3000)
    bodies: list[dict[str, Any]] = []
    for i in range(6):
        key = f"budget/doc-{i}.txt"
        data = (f"文書 {i} " + "売上報告 " * 300).encode()[:2000]
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=data)
        bodies.append(s3_notification(stack.bucket, key, sequencer=f"00B{i:02d}", size=len(data)))
    indexer = build_indexer(stack, INDEXER_CONCURRENCY="8")
    # When the eight-thread indexer processes them
    assert invoke(indexer, sqs_event(*bodies)) == set()
    # Then every document is indexed, never with two bodies in memory at once
    assert stack.count() == 6
    assert budgets[0].peak == 2000
    assert budgets[0].used == 0
