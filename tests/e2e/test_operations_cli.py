"""The operator commands end to end, as a user runs them against the local run (separate processes)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import docindex

pytestmark = pytest.mark.e2e


def cli(*args: str, cwd: Path, ok: tuple[int, ...] = (0,), timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return docindex(*args, cwd=cwd, ok=ok, timeout=timeout)


def cli_json(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> Any:
    return json.loads(cli(*args, "--json", cwd=cwd, ok=ok).stdout)


def lose_events(sqs: Any, queue: str) -> None:
    """Drop every message waiting in the queue: the events of the changes are lost."""
    while got := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages"):
        sqs.delete_message_batch(
            QueueUrl=queue, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
        )


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    cli("local", "down", cwd=tmp_path, ok=(0, 1, 2))


def test_backfill_reconcile_diagnose_pause_search(workdir: Path) -> None:
    import boto3

    env = json.loads(cli("local", "up", "--json", cwd=workdir).stdout)
    session = boto3.Session(aws_access_key_id="local", aws_secret_access_key="local", region_name="us-east-1")
    s3 = session.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"])
    sqs = session.client("sqs", endpoint_url=env["AWS_ENDPOINT_URL"])
    bucket, queue = env["DOCINDEX_BUCKET"], env["INGEST_QUEUE_URL"]

    # Given files that were in the bucket before the pipeline (their events never reached the queue)
    files = {
        "営業部/見積書 2026.txt": "見積金額は百万円",
        "営業部/議事録.md": "# 議事録\n次回の商談",
        "経理/請求書.txt": "請求書 第3四半期",
        "Eng/Design.md": "# Design\nThe backfill is resumable",
    }
    for key, body in files.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body.encode())
    lose_events(sqs, queue)

    # reconcile sees nothing indexed (exit 1) ...
    report = cli_json("reconcile", cwd=workdir, ok=(1,))
    assert (report["objects"], report["missing"], report["coverage_percent"]) == (4, 4, 0.0)
    # ... backfill enqueues every object once, and a second run has nothing left to do
    done = cli_json("backfill", "--rate", "0", "--count", cwd=workdir)
    assert (done["completed"], done["enqueued"]) == (True, 4)
    assert cli_json("backfill", cwd=workdir)["already_completed"] is True
    run = cli("local", "run", "--once", "--no-worker", "--max-seconds", "120", cwd=workdir)
    # (a drained run's documents are searchable when it returns: reconcile asks at once)
    report = cli_json("reconcile", cwd=workdir, ok=(0, 1))
    assert (report["in_sync"], report["coverage_percent"], report["in_step"]) == (4, 100.0, True), run.stdout

    # When events get lost again, reconcile --fix repairs through the queue
    s3.delete_object(Bucket=bucket, Key="経理/請求書.txt")
    s3.put_object(Bucket=bucket, Key="経理/領収書.txt", Body="領収書".encode())
    lose_events(sqs, queue)
    fixed = cli_json("reconcile", "--fix", cwd=workdir, ok=(1,))
    assert (fixed["missing"], fixed["orphaned"], fixed["enqueued_created"], fixed["enqueued_removed"]) == (1, 1, 1, 1)
    # (with the worker this time: it adds meaning search's vectors, the embed queue's jobs)
    cli("local", "run", "--once", "--max-seconds", "120", cwd=workdir)
    human = cli("reconcile", cwd=workdir)
    assert "100.00 %" in human.stdout
    assert "in step with the bucket" in human.stdout

    # diagnose passes the drained local stack (exit 0), and says what it skipped
    table = cli("diagnose", "--sample-seconds", "0.5", cwd=workdir).stdout
    assert "exactly one path (s3)" in table
    assert "OK: 12 ok, 0 warning(s), 0 failure(s), 5 skipped (exit 0)" in table

    # pause has nothing to pause locally but the runner (exit 1, and says so)
    pause = cli("pause", cwd=workdir, ok=(1,))
    assert "Ctrl-C" in pause.stdout

    # search filters by prefix and extension, with key, score and snippet
    hits = cli_json("search", "商談", "--prefix", "営業部/", "--extension", "md", cwd=workdir)["hits"]
    assert [h["key"] for h in hits] == ["営業部/議事録.md"]
    assert "[商談]" in hits[0]["snippet"]
    assert cli("search", "商談", "--prefix", "経理/", cwd=workdir, ok=(1,)).returncode == 1
    human = cli("search", "商談", "--bucket", bucket, cwd=workdir).stdout
    assert f"s3://{bucket}/営業部/議事録.md" in human
