"""Quarantine of a change that never completes, including one that kills its invocation.

A Lambda timeout during a native extractor call, an out-of-memory kill or a
crash ends the invocation without any ``except`` running: the change's
messages come back (then go to the DLQ, then are redriven) and its
idempotency record is left ``INPROGRESS`` until its lock expires. The ledger
counts every claim of a change for work, so such a change is quarantined
like one that fails with an exception.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from devkit.messages import s3_notification, sqs_event
from docindex.core.changes import Action, ObjectChange, normalize_sequencer, normalize_time
from docindex.core.observability import metrics
from docindex.index.search import search
from docindex.ingest.ledger import Ledger
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke


class InvocationKilled(BaseException):
    """A timeout or OOM kill as the code sees it: no ``except Exception`` catches it."""


def kill_the_invocation(*args: Any, **kwargs: Any) -> Any:
    raise InvocationKilled


def expire_in_progress(stack: Stack) -> int:
    """What time does after a kill: the INPROGRESS locks the dead invocation left expire."""
    ddb, table = stack.aws.dynamodb, stack.env["IDEMPOTENCY_TABLE"]
    past = str(int((time.time() - 60) * 1000))
    items = ddb.scan(TableName=table).get("Items", [])
    stuck = [i for i in items if i.get("status", {}).get("S") == "INPROGRESS"]
    for item in stuck:
        ddb.update_item(
            TableName=table,
            Key={"id": item["id"]},
            UpdateExpression="SET in_progress_expiration = :past",
            ExpressionAttributeValues={":past": {"N": past}},
        )
    return len(stuck)


def emitted(name: str) -> float:
    return float(sum(metrics.metric_set.get(name, {}).get("Value", [])))


def killed_deliveries(stack: Stack, indexer: Any, body: dict[str, Any], times: int) -> None:
    """Deliver ``body`` ``times`` times, each delivery's invocation dying inside extraction."""
    for _ in range(times):
        with pytest.raises(InvocationKilled):
            invoke(indexer, sqs_event(body))
        assert expire_in_progress(stack) == 1


def test_a_change_that_kills_its_invocation_is_quarantined(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    indexer = build_indexer(stack, QUARANTINE_AFTER_FAILURES="3")
    key = "crash/設計図面 2026.pdf"
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=b"%PDF-1.7\n% a file the extractor never survives\n")
    body = s3_notification(stack.bucket, key, sequencer="00E1")
    # Given a file whose extraction kills the invocation every time (receives, then redrives)
    monkeypatch.setattr("docindex.ingest.reading.extract", kill_the_invocation)
    killed_deliveries(stack, indexer, body, times=3)
    assert stack.doc(key) is None
    # When it is delivered once more (the extractor would still kill it)
    assert invoke(indexer, sqs_event(body)) == set()
    # Then it is indexed by name as quarantined, and found by its name
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["extraction_error"] == "quarantined"
    assert doc["_source"]["filename"] == "設計図面 2026.pdf"
    assert "content" not in doc["_source"]
    assert emitted("ChangesQuarantined") == 1
    hits = search(stack.opensearch, stack.index, "設計図面")
    assert [hit["key"] for hit in hits] == [key]


def test_below_the_threshold_a_killed_change_is_still_tried(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    indexer = build_indexer(stack, QUARANTINE_AFTER_FAILURES="3")
    key = "crash/報告書.txt"
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body="四半期の報告".encode())
    body = s3_notification(stack.bucket, key, sequencer="00E2")
    # Given two deliveries that died
    monkeypatch.setattr("docindex.ingest.reading.extract", kill_the_invocation)
    killed_deliveries(stack, indexer, body, times=2)
    # When the third delivery survives (the cause was transient)
    monkeypatch.undo()
    assert invoke(indexer, sqs_event(body)) == set()
    # Then the file is indexed with its content, not quarantined
    doc = stack.doc(key)
    assert doc is not None
    assert "extraction_error" not in doc["_source"]
    assert "四半期" in doc["_source"]["content"]
    assert emitted("ChangesQuarantined") == 0
    # and the completed change's count is gone from the ledger
    entry = stack.aws.dynamodb.get_item(TableName=stack.env["LEDGER_TABLE"], Key={"id": {"S": "object#" + doc["_id"]}})
    assert "attempts" not in entry["Item"]


def test_a_later_change_of_the_object_starts_from_zero(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    indexer = build_indexer(stack, QUARANTINE_AFTER_FAILURES="2")
    key = "crash/見積書.txt"
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body="見積 第一版".encode())
    first = s3_notification(stack.bucket, key, sequencer="00E3")
    # Given a change that died once and then was applied
    monkeypatch.setattr("docindex.ingest.reading.extract", kill_the_invocation)
    killed_deliveries(stack, indexer, first, times=1)
    monkeypatch.undo()
    assert invoke(indexer, sqs_event(first)) == set()
    # When the object is uploaded again and that change dies once too
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body="見積 第二版".encode())
    second = s3_notification(stack.bucket, key, sequencer="00E4")
    monkeypatch.setattr("docindex.ingest.reading.extract", kill_the_invocation)
    killed_deliveries(stack, indexer, second, times=1)
    monkeypatch.undo()
    # Then its next delivery is applied normally: the first change's attempts do not count
    assert invoke(indexer, sqs_event(second)) == set()
    doc = stack.doc(key)
    assert doc is not None
    assert "extraction_error" not in doc["_source"]
    assert "第二版" in doc["_source"]["content"]
    # and duplicates of the applied change are not claimed, so not counted either
    for _ in range(3):
        assert invoke(indexer, sqs_event(second)) == set()
    assert stack.doc(key)["_source"]["content"] == doc["_source"]["content"]  # type: ignore[index]
    assert emitted("ChangesQuarantined") == 0


# -- the ledger's count -----------------------------------------------------


def change(action: Action = Action.CREATED, *, seq: str) -> ObjectChange:
    return ObjectChange(
        bucket="b",
        key="q/図面.pdf",
        action=action,
        event_time=normalize_time("2026-11-20T09:00:00Z"),
        sequencer=normalize_sequencer(seq),
    )


def test_every_claim_of_the_same_change_counts_one_attempt(stack: Stack) -> None:
    led = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    claims = [led.claim(change(seq="00F1")) for _ in range(4)]
    # failures = earlier claims of this change that did not complete
    assert [(c.failures, c.retry) for c in claims if c] == [(0, False), (1, True), (2, True), (3, True)]
    assert len({c.generation for c in claims if c}) == 1


def test_stale_changes_are_not_counted_and_a_new_change_starts_again(stack: Stack) -> None:
    led = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    for _ in range(3):
        led.claim(change(seq="00F5"))
    # An older change is stale, however often it comes: it neither claims nor counts
    for _ in range(3):
        assert led.claim(change(Action.REMOVED, seq="00F4")) is None
    again = led.claim(change(seq="00F5"))
    assert again is not None
    assert again.failures == 3
    # A newer change of the object starts its own count
    newer = led.claim(change(seq="00F6"))
    assert newer is not None
    assert (newer.failures, newer.retry) == (0, False)
    retried = led.claim(change(seq="00F6"))
    assert retried is not None
    assert retried.failures == 1


def test_a_completed_change_leaves_no_count_and_never_clears_a_newer_ones(stack: Stack) -> None:
    led = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    for _ in range(3):
        led.claim(change(seq="00F7"))
    # The change completed on its third attempt: its count is forgotten
    led.clear_attempts(change(seq="00F7"))
    again = led.claim(change(seq="00F7"))
    assert again is not None
    assert (again.failures, again.retry) == (0, True)
    # Clearing on behalf of an older change leaves the newer change's count alone
    led.claim(change(seq="00F8"))
    led.claim(change(seq="00F8"))
    led.clear_attempts(change(seq="00F7"))
    newer = led.claim(change(seq="00F8"))
    assert newer is not None
    assert newer.failures == 2


def test_failures_counted_before_attempts_existed_still_count(stack: Stack) -> None:
    led = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    first = change(seq="00F9")
    assert led.claim(first) is not None
    # An entry as the previous version left it: no attempts, failures counted after exceptions
    stack.aws.dynamodb.update_item(
        TableName=stack.env["LEDGER_TABLE"],
        Key={"id": {"S": "object#" + first.doc_id}},
        UpdateExpression="SET failing_change = :ck, failures = :n REMOVE attempts",
        ExpressionAttributeValues={":ck": {"S": first.dedupe_key}, ":n": {"N": "7"}},
    )
    again = led.claim(first)
    assert again is not None
    assert again.failures == 7
