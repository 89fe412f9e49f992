"""backfill against moto server: every object enqueued exactly once across interruptions; inventories."""

from __future__ import annotations

import csv
import gzip
import io
import json
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import pytest

from docindex.ops.backfill.checkpoint import Checkpoint
from docindex.ops.backfill.run import Backfill
from docindex.ops.backfill.sources import BucketListing, InventorySource, read_manifest
from docindex.ops.enqueue import BacklogGuard, ChangeSender, RateLimiter
from tests.conftest import Aws

pytestmark = pytest.mark.integration


class Drainer(threading.Thread):
    """Consumes the queue while backfill fills it, as the indexer would, and keeps every body.

    (moto's SQS slows down linearly with the number of messages held, so the
    queue is kept short, as a consumer keeps it in production.)
    """

    def __init__(self, sqs: Any, url: str) -> None:
        super().__init__(daemon=True)
        self.sqs = sqs
        self.url = url
        self.bodies: list[dict[str, Any]] = []
        self.finish = threading.Event()

    def run(self) -> None:
        while True:
            got = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get(
                "Messages", []
            )
            if not got:
                if self.finish.is_set():
                    return
                time.sleep(0.02)
                continue
            self.bodies += [json.loads(m["Body"]) for m in got]
            self.sqs.delete_message_batch(
                QueueUrl=self.url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)],
            )

    def stop(self) -> list[dict[str, Any]]:
        self.finish.set()
        self.join(timeout=60)
        return self.bodies


def fresh(aws: Aws) -> tuple[str, str]:
    name = f"bf-{uuid.uuid4().hex[:10]}"
    aws.s3.create_bucket(Bucket=name)
    url = aws.sqs.create_queue(QueueName=name)["QueueUrl"]
    return name, url


def fill(aws: Aws, bucket: str, keys: list[str]) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: aws.s3.put_object(Bucket=bucket, Key=k, Body=b"x"), keys))


class CrashingSqs:
    """The real client, until ``after`` batches were sent: then every send fails (a crash mid-run)."""

    def __init__(self, sqs: Any, after: int) -> None:
        self._sqs = sqs
        self._left = after
        self._lock = threading.Lock()

    def send_message_batch(self, **kwargs: Any) -> Any:
        with self._lock:
            self._left -= 1
            if self._left < 0:
                raise RuntimeError("simulated crash")
        return self._sqs.send_message_batch(**kwargs)


class CtrlC:
    """A progress callback that presses Ctrl-C once, when ``at`` objects have been enqueued."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.pressed = False

    def __call__(self, listed: int, enqueued: int, skipped: int) -> None:
        if not self.pressed and enqueued >= self.at:
            self.pressed = True
            raise KeyboardInterrupt


def test_a_few_thousand_objects_are_enqueued_exactly_once_across_interruptions(aws: Aws, tmp_path: Path) -> None:
    # Given a bucket of 2000 objects
    bucket, url = fresh(aws)
    keys = [f"{['営業部', 'Eng', 'eng', '経理'][i % 4]}/{i:05d} 資料.txt" for i in range(2000)]
    fill(aws, bucket, keys)
    source = BucketListing(aws.s3, bucket)
    path = tmp_path / "checkpoint.json"
    identity = {**source.identity(), "queue": url}
    drainer = Drainer(aws.sqs, url)
    drainer.start()
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def run(sqs: Any, **kwargs: Any) -> Any:
        return Backfill(
            source,
            sender=ChangeSender(sqs, url),
            checkpoint=Checkpoint.load(path, identity),
            concurrency=4,
            # The consumer keeps up; the guard also keeps moto's queue short (it slows down with depth).
            backlog=BacklogGuard(aws.sqs, url, max_backlog=20, check_every=0.01),
            **kwargs,
        ).run()

    # When a first run is stopped by Ctrl-C, a second one crashes, and a third one finishes
    first = run(aws.sqs, on_progress=CtrlC(at=400))
    second = run(CrashingSqs(aws.sqs, after=60))
    third = run(aws.sqs, rate=RateLimiter(5000))
    bodies = drainer.stop()

    # Then each run stopped and resumed as expected
    assert (first.stopped, second.stopped, third.stopped) == ("interrupted", "error", None)
    assert "simulated crash" in str(second.error)
    assert third.skipped == 0
    assert json.loads(path.read_text())["completed_at"]
    # and every object was enqueued exactly once
    counts = Counter(body["key"] for body in bodies)
    assert set(counts) == set(keys)
    assert counts.most_common(1)[0][1] == 1
    assert first.enqueued + second.enqueued + third.enqueued == len(keys)
    # as a docindex change observed when listed (not the object's LastModified)
    assert {b["action"] for b in bodies} == {"created"}
    # (dated by S3's clock, the listing response's Date header: whole seconds)
    assert all(b["event_time"] >= started[:19] and b["reason"] == "backfill" and b["etag"] for b in bodies)


def inventory(aws: Aws, source_bucket: str, rows: list[list[str]], *, per_file: int) -> str:
    """An S3 Inventory report (manifest.json + gzip CSV files) in a destination bucket; returns the manifest URI."""
    destination = f"inv-{uuid.uuid4().hex[:8]}"
    aws.s3.create_bucket(Bucket=destination)
    files = []
    for n, start in enumerate(range(0, len(rows), per_file)):
        text = io.StringIO()
        csv.writer(text, quoting=csv.QUOTE_ALL).writerows(rows[start : start + per_file])
        key = f"{source_bucket}/cfg/data/{n:03d}.csv.gz"
        aws.s3.put_object(Bucket=destination, Key=key, Body=gzip.compress(text.getvalue().encode()))
        files.append({"key": key, "size": 1, "MD5checksum": "-"})
    manifest = {
        "sourceBucket": source_bucket,
        "destinationBucket": f"arn:aws:s3:::{destination}",
        "version": "2016-11-30",
        "creationTimestamp": "1763629200000",
        "fileFormat": "CSV",
        "fileSchema": "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate, ETag",
        "files": files,
    }
    key = f"{source_bucket}/cfg/2025-11-20T09-00Z/manifest.json"
    aws.s3.put_object(Bucket=destination, Key=key, Body=json.dumps(manifest).encode())
    return f"s3://{destination}/{key}"


def test_a_listing_dates_its_pages_after_every_change_made_before_it_began(aws: Aws) -> None:
    """The rebuild after a lost index (issue 29's drill, failed once in CI): a page dated in the very second
    of a change the ledger applied before the run would be judged older than it, and that file left out."""
    bucket, _ = fresh(aws)
    # Given an object written early in a second (S3 dates listings by its Date header, whole seconds) ...
    while datetime.now(UTC).microsecond > 300_000:
        time.sleep(0.01)
    aws.s3.put_object(Bucket=bucket, Key="営業部/見積書.txt", Body=b"x")
    written = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # after S3's event time for it
    # When a backfill lists the bucket at once
    listed = list(BucketListing(aws.s3, bucket).objects(None))
    # Then its observation is later than the change: the ledger lets it through
    assert [o.key for o in listed] == ["営業部/見積書.txt"]
    assert listed[0].observed_at > written


def test_inventory_report_is_backfilled_once_with_its_creation_time(aws: Aws, tmp_path: Path) -> None:
    # Given a versioned bucket's CSV inventory: URL-encoded keys, old versions and delete markers
    bucket, url = fresh(aws)
    rows = []
    expected = set()
    for i in range(95):
        key = f"営業部/見積 {i:03d}+税.pdf"
        rows.append(
            [bucket, quote_plus(key, safe="/"), f"v{i}", "true", "false", "100", "2025-01-01T00:00:00.000Z", f"e{i}"]
        )
        expected.add(key)
        if i % 10 == 0:
            rows.append(
                [bucket, quote_plus(key, safe="/"), f"old{i}", "false", "false", "90", "2024-01-01T00:00:00.000Z", "x"]
            )
    rows.append([bucket, quote_plus("deleted.txt"), "dm", "true", "true", "", "2025-01-01T00:00:00.000Z", ""])
    location = inventory(aws, bucket, rows, per_file=30)
    source = InventorySource(aws.s3, read_manifest(aws.s3, location))
    path = tmp_path / "cp.json"
    identity = {**source.identity(), "queue": url}
    drainer = Drainer(aws.sqs, url)
    drainer.start()
    # When backfilled in two runs (the first stops after 40 objects: rows 0..43 of the first two files)
    first = Backfill(
        source, sender=ChangeSender(aws.sqs, url), checkpoint=Checkpoint.load(path, identity), limit=40
    ).run()
    assert json.loads(path.read_text())["position"] == [1, 13]
    second = Backfill(source, sender=ChangeSender(aws.sqs, url), checkpoint=Checkpoint.load(path, identity)).run()
    bodies = drainer.stop()
    # Then the latest version of every key was enqueued once, as observed at the report's creation
    assert (first.stopped, second.completed) == ("limit", True)
    assert Counter(b["key"] for b in bodies) == dict.fromkeys(expected, 1)
    assert {b["event_time"] for b in bodies} == {"2025-11-20T09:00:00.000000Z"}
    assert next(b for b in bodies if b["key"] == "営業部/見積 007+税.pdf")["etag"] == "e7"


def test_backlog_guard_holds_the_sender_while_the_queue_is_deep(aws: Aws) -> None:
    _, url = fresh(aws)
    for n in range(3):
        aws.sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"{n}-{i}"} for i in range(10)])
    seen: list[int] = []

    def consumer_catches_up(_: float) -> None:
        got = aws.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        aws.sqs.delete_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
        )

    guard = BacklogGuard(aws.sqs, url, max_backlog=10, sleep=consumer_catches_up, on_wait=seen.append)
    guard.wait()
    assert seen == [30, 20]
    assert guard.depth() == 10
