"""Backfill without servers: checkpoint, resume after failures, rate limit, inventory manifests."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from docindex.core.changes import Action, ObjectChange
from docindex.core.exceptions import BackfillError, EnqueueError
from docindex.ops.backfill.checkpoint import BatchRange, Checkpoint
from docindex.ops.backfill.run import Backfill
from docindex.ops.backfill.sources import InventoryManifest, ListedObject, Position
from docindex.ops.enqueue import ChangeSender, RateLimiter, message_body

IDENTITY = {"bucket": "b", "prefix": "", "source": "list", "queue": "q"}


@dataclass
class FakeListing:
    """A sorted listing whose pages are observed at increasing times."""

    keys: list[str]
    bucket: str = "b"
    page_size: int = 25

    def describe(self) -> str:
        return f"s3://{self.bucket}/"

    def identity(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "prefix": "", "source": "list"}

    def objects(self, after: Position | None) -> Iterator[ListedObject]:
        keys = [k for k in sorted(self.keys) if after is None or k > after]  # type: ignore[operator]
        for n, key in enumerate(keys):
            observed = f"2026-11-20T09:00:{n // self.page_size:02d}.000000Z"
            yield ListedObject(key, f"etag-{key}", 1, key, observed)


@dataclass
class FakeSqs:
    """send_message_batch that records bodies; fails every call from ``fail_from`` on, or the calls in ``fail_on``."""

    fail_from: int | None = None
    fail_on: set[int] = field(default_factory=set)
    calls: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
        with self.lock:
            self.calls += 1
            call = self.calls
        if call in self.fail_on:
            time.sleep(0.2)  # the batches sent after it finish first
        with self.lock:
            if (self.fail_from is not None and call >= self.fail_from) or call in self.fail_on:
                raise EnqueueError("boom", sent=0, failed=[e["Id"] for e in Entries])
            self.bodies += [json.loads(e["MessageBody"]) for e in Entries]
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}


def run(source: FakeListing, sqs: FakeSqs, checkpoint: Checkpoint, **kwargs: Any) -> Any:
    return Backfill(source, sender=ChangeSender(sqs, "q"), checkpoint=checkpoint, **kwargs).run()


def test_interrupted_backfill_resumes_and_sends_every_object_once(tmp_path: Path) -> None:
    # Given 1000 keys, and a queue that fails from the 31st batch on
    keys = [f"dir{i % 7}/ファイル{i:04d}.txt" for i in range(1000)] + ["Upper.txt", "lower.txt"]
    source = FakeListing(keys)
    sqs = FakeSqs(fail_from=31)
    path = tmp_path / "cp.json"
    # When the first run stops on the error (4 batches in flight)
    first = run(source, sqs, Checkpoint.load(path, IDENTITY), concurrency=4)
    assert first.stopped == "error"
    assert "boom" in str(first.error)
    saved = json.loads(path.read_text())
    assert saved["completed_at"] is None
    # and the second run resumes from the checkpoint
    sqs.fail_from = None
    second = run(source, sqs, Checkpoint.load(path, IDENTITY), concurrency=4)
    # Then every key was sent exactly once over both runs
    assert second.completed
    counts = Counter(body["key"] for body in sqs.bodies)
    assert set(counts) == set(keys)
    assert set(counts.values()) == {1}
    assert second.skipped == 0 or second.skipped < len(keys)
    assert first.enqueued + second.enqueued == len(keys)
    assert json.loads(path.read_text())["completed_at"]


def test_batches_that_finished_after_a_failed_one_are_not_sent_again(tmp_path: Path) -> None:
    # Given a send that fails while later batches, already in flight, succeed
    keys = [f"k{i:04d}" for i in range(400)]
    source = FakeListing(keys)
    sqs = FakeSqs(fail_on={12})
    path = tmp_path / "cp.json"
    first = run(source, sqs, Checkpoint.load(path, IDENTITY), concurrency=4)
    assert first.stopped == "error"
    saved = json.loads(path.read_text())
    # the watermark stops before the failed batch, which stays in doubt; later ones are recorded
    assert saved["position"] < saved["in_doubt"][0][0]
    assert 1 <= len(saved["sent_ahead"]) < 4 * 4  # bounded by the window beyond the watermark
    # When resumed
    second = run(source, sqs, Checkpoint.load(path, IDENTITY), concurrency=4)
    # Then only what was not sent is sent
    assert second.completed
    assert second.skipped == 10 * len(saved["sent_ahead"])
    counts = Counter(body["key"] for body in sqs.bodies)
    assert set(counts) == set(keys)
    assert set(counts.values()) == {1}


def test_limit_stops_early_and_the_rest_follows(tmp_path: Path) -> None:
    source = FakeListing([f"k{i:03d}" for i in range(95)])
    sqs = FakeSqs()
    path = tmp_path / "cp.json"
    first = run(source, sqs, Checkpoint.load(path, IDENTITY), limit=30, concurrency=1)
    assert (first.stopped, first.enqueued) == ("limit", 30)
    second = run(source, sqs, Checkpoint.load(path, IDENTITY))
    assert second.completed
    assert sorted(b["key"] for b in sqs.bodies) == sorted(source.keys)


def test_messages_carry_the_listing_time_and_one_time_per_batch(tmp_path: Path) -> None:
    source = FakeListing([f"k{i:03d}" for i in range(30)], page_size=15)
    sqs = FakeSqs()
    run(source, sqs, Checkpoint.load(tmp_path / "cp.json", IDENTITY), concurrency=1)
    by_key = {b["key"]: b for b in sqs.bodies}
    assert by_key["k000"]["event_time"] == "2026-11-20T09:00:00.000000Z"
    # k010..k019 straddle two pages: the batch takes the earlier (conservative) time
    assert by_key["k019"]["event_time"] == "2026-11-20T09:00:00.000000Z"
    assert by_key["k020"]["event_time"] == "2026-11-20T09:00:01.000000Z"
    assert by_key["k001"] == {
        "docindex": "change",
        "bucket": "b",
        "key": "k001",
        "action": "created",
        "event_time": "2026-11-20T09:00:00.000000Z",
        "etag": "etag-k001",
        "size": 1,
        "reason": "backfill",
    }


def test_a_batch_in_doubt_is_resent_with_identical_bodies(tmp_path: Path) -> None:
    # A hard kill left a batch "in doubt" (written ahead, never confirmed)
    checkpoint = Checkpoint(path=tmp_path / "cp.json", identity=IDENTITY, position="k009")
    checkpoint.in_doubt.append(BatchRange("k010", "k019", "2026-11-20T08:59:59.000000Z"))
    sqs = FakeSqs()
    run(FakeListing([f"k{i:03d}" for i in range(30)]), sqs, checkpoint)
    times = {b["key"]: b["event_time"] for b in sqs.bodies}
    assert "k005" not in times
    assert times["k015"] == "2026-11-20T08:59:59.000000Z"  # same body as the first attempt: deduplicated
    assert times["k025"] == "2026-11-20T09:00:00.000000Z"


def test_a_batch_in_doubt_whose_objects_were_deleted_does_not_block_completion(tmp_path: Path) -> None:
    path = tmp_path / "cp.json"
    checkpoint = Checkpoint(path=path, identity=IDENTITY, position="k009")
    checkpoint.in_doubt.append(BatchRange("k0095", "k0099", "2026-11-20T08:59:59.000000Z"))  # gone since
    result = run(FakeListing([f"k{i:03d}" for i in range(30)]), FakeSqs(), checkpoint)
    assert result.completed
    saved = json.loads(path.read_text())
    assert saved["completed_at"]
    assert saved["in_doubt"] == []


def test_dry_run_sends_nothing() -> None:
    source = FakeListing(["a", "b", "c"])
    result = Backfill(source, sender=None, checkpoint=Checkpoint(path=None, identity=IDENTITY)).run()
    assert (result.dry_run, result.completed, result.enqueued, len(result.samples)) == (True, True, 3, 3)


def test_checkpoint_round_trip_and_identity(tmp_path: Path) -> None:
    path = tmp_path / "cp.json"
    cp = Checkpoint(path=path, identity={**IDENTITY, "source": "inventory x"}, position=(2, 40))
    cp.sent_ahead.append(BatchRange((2, 50), (2, 59)))
    cp.save()
    loaded = Checkpoint.load(path, {**IDENTITY, "source": "inventory x"})
    assert loaded.position == (2, 40)
    assert loaded.already_sent((2, 55))
    assert loaded.already_sent((1, 999))
    assert not loaded.already_sent((2, 45))
    with pytest.raises(BackfillError, match="belongs to another backfill"):
        Checkpoint.load(path, IDENTITY)


def test_rate_limiter_spaces_out_sends() -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    limiter = RateLimiter(50, clock=lambda: now[0], sleep=sleep)
    for _ in range(20):
        limiter.acquire(10)
    # 200 units at 50/s after an initial burst of 50: 3 seconds
    assert now[0] == pytest.approx(3.0)
    assert RateLimiter(None).acquire(10_000) == 0.0


class PartialSqs:
    def __init__(self) -> None:
        self.attempts = 0

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
        self.attempts += 1
        if self.attempts == 1:
            ok, bad = Entries[:-2], Entries[-2:]
            return {
                "Successful": [{"Id": e["Id"]} for e in ok],
                "Failed": [{"Id": e["Id"], "Code": "InternalError", "SenderFault": False} for e in bad],
            }
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}


def change(key: str) -> ObjectChange:
    return ObjectChange(bucket="b", key=key, action=Action.CREATED, event_time="2026-11-20T09:00:00.000000Z")


def test_sender_retries_only_the_failed_entries() -> None:
    sqs = PartialSqs()
    sent = ChangeSender(sqs, "q", sleep=lambda _: None).send([change(f"k{i}") for i in range(10)], reason="backfill")
    assert (sent, sqs.attempts) == (10, 2)


def test_sender_gives_up_on_sender_faults() -> None:
    class Refusing:
        def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
            return {"Successful": [], "Failed": [{"Id": "0", "Code": "InvalidMessageContents", "SenderFault": True}]}

    with pytest.raises(EnqueueError, match="InvalidMessageContents"):
        ChangeSender(Refusing(), "q").send([change("k")], reason="backfill")
    assert json.loads(message_body(change("鍵"), "reconcile"))["key"] == "鍵"


def test_sender_does_not_retry_on_top_of_botocore() -> None:
    from botocore.exceptions import ClientError

    # botocore's retry config already spent its attempts on a throttled call: a second layer of
    # retries here would multiply them (5 x 5), so what reaches the sender is final
    class Throttled:
        calls = 0

        def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
            Throttled.calls += 1
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "SendMessageBatch")

    with pytest.raises(EnqueueError, match="ThrottlingException"):
        ChangeSender(Throttled(), "q", sleep=lambda _: None).send([change("k")], reason="backfill")
    assert Throttled.calls == 1


def manifest(**overrides: Any) -> str:
    data = {
        "sourceBucket": "docs",
        "destinationBucket": "arn:aws:s3:::inventory",
        "version": "2016-11-30",
        "creationTimestamp": "1763629200000",
        "fileFormat": "CSV",
        "fileSchema": "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate, ETag",
        "files": [{"key": "docs/cfg/data/a.csv.gz", "size": 10, "MD5checksum": "x"}],
    }
    data.update(overrides)
    return json.dumps(data)


def test_inventory_manifest_is_parsed() -> None:
    parsed = InventoryManifest.parse(manifest(), "s3://inventory/manifest.json")
    assert parsed.destination_bucket == "inventory"
    assert parsed.columns[:3] == ("Bucket", "Key", "VersionId")
    assert parsed.created_at == "2025-11-20T09:00:00.000000Z"
    with pytest.raises(BackfillError, match="CSV only"):
        InventoryManifest.parse(manifest(fileFormat="Parquet"), "m")
    with pytest.raises(BackfillError, match="no Key column"):
        InventoryManifest.parse(manifest(fileSchema="Bucket, Size"), "m")
    with pytest.raises(BackfillError, match="not an S3 Inventory manifest"):
        InventoryManifest.parse("{}", "m")
