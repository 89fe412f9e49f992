"""A deleted file never comes back, however long its create's write was delayed.

OpenSearch remembers a delete's external version for ``index.gc_deletes``
only (60 s by default; 1 s here so the run stays short). A create claimed
before the delete, whose write is then held up longer than that (a slow
extraction, a ``_bulk`` back-off during a 429 storm, a paused process),
would be accepted by the index once the tombstone is forgotten. The write
path asks the ledger before every attempt whether the change still holds.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from devkit.messages import s3_notification, sqs_event
from docindex.index.store import DocumentStore
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke

GC_DELETES_SECONDS = 1


def short_gc_deletes(stack: Stack) -> None:
    stack.opensearch.indices.put_settings(index=stack.index, body={"index": {"gc_deletes": f"{GC_DELETES_SECONDS}s"}})


def test_a_create_delayed_past_gc_deletes_does_not_resurrect_a_deleted_file(stack: Stack) -> None:
    key = "人事部/機密/評価.txt"
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body="部外秘 人事評価".encode())
    slow, fast = build_indexer(stack), build_indexer(stack)
    fast.documents.ensure()
    short_gc_deletes(stack)

    # Given the create is claimed by one invocation whose write is held up before it is sent
    claimed, release = threading.Event(), threading.Event()
    original_write = slow.documents.write

    def held_write(*args: Any, **kwargs: Any) -> Any:
        claimed.set()
        assert release.wait(60)
        return original_write(*args, **kwargs)

    slow.documents.write = held_write  # type: ignore[method-assign]
    create = sqs_event(s3_notification(stack.bucket, key, sequencer="0055000000000001"))
    failed: list[set[str]] = []
    thread = threading.Thread(target=lambda: failed.append(invoke(slow, create, timeout=120)))
    thread.start()
    assert claimed.wait(30)

    # When the file is deleted and another invocation applies the delete ...
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
    delete = sqs_event(s3_notification(stack.bucket, key, event="ObjectRemoved:Delete", sequencer="0055000000000002"))
    assert invoke(fast, delete) == set()
    assert stack.doc(key) is None
    # ... and the held write lands after the index has forgotten the delete's version
    time.sleep(GC_DELETES_SECONDS * 3)
    release.set()
    thread.join(60)

    # Then the deleted file stays deleted: its content is not searchable
    assert failed == [set()]
    assert stack.doc(key) is None
    stack.opensearch.indices.refresh(index=stack.index)
    hits = stack.opensearch.search(index=stack.index, body={"query": {"match": {"content": "人事評価"}}})
    assert hits["hits"]["total"]["value"] == 0


def test_the_single_request_path_drops_an_overtaken_write(stack: Stack) -> None:
    # The OCR worker writes one document at a time; the same question is asked before each attempt.
    store = DocumentStore(stack.opensearch, stack.index)
    store.ensure()
    short_gc_deletes(stack)
    from docindex.index.documents import IndexDocument

    document = IndexDocument.for_object(bucket=stack.bucket, key="k/消えた.txt")
    asked: list[int] = []

    def overtaken() -> bool:
        asked.append(1)
        return False

    outcome = store.write("some-id", 3, document, still_current=overtaken)

    assert outcome.value == "conflict"
    assert asked == [1]
    assert stack.opensearch.exists(index=stack.index, id="some-id") is False


@pytest.mark.parametrize("order", ["create-then-delete", "delete-then-create"])
def test_a_create_never_overwrites_a_delete_of_the_same_instant(stack: Stack, order: str) -> None:
    # Without sequencers (a change source that lacks them) and with identical times, the delete wins.
    from docindex.core.changes import Action, ObjectChange, normalize_time
    from docindex.ingest.ledger import Ledger

    ledger = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    at = normalize_time("2026-11-20T09:00:00.123Z")
    create = ObjectChange(bucket="b", key="同時刻.txt", action=Action.CREATED, event_time=at, etag="e1")
    delete = ObjectChange(bucket="b", key="同時刻.txt", action=Action.REMOVED, event_time=at)
    changes = [create, delete] if order == "create-then-delete" else [delete, create]

    for change in changes:
        ledger.claim(change)

    entry = ledger.get(create.doc_id)
    assert entry is not None
    assert entry.state == "removed"


@pytest.mark.parametrize("first", ["aaa", "bbb"])
def test_same_instant_versions_are_ordered_by_content_identity(stack: Stack, first: str) -> None:
    from docindex.core.changes import Action, ObjectChange, normalize_time
    from docindex.ingest.ledger import Ledger

    ledger = Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])
    at = normalize_time("2026-11-20T09:00:00.123Z")
    etags = [first, "bbb" if first == "aaa" else "aaa"]

    for etag in etags:
        ledger.claim(ObjectChange(bucket="b", key="同版.txt", action=Action.CREATED, event_time=at, etag=etag))

    entry = ledger.get(ObjectChange(bucket="b", key="同版.txt", action=Action.CREATED, event_time=at).doc_id)
    assert entry is not None
    # Whatever order they arrive in, the same version wins.
    assert entry.etag == "bbb"
