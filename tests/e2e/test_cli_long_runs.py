"""What an operator sees on long runs and in the traps of local state (separate processes, the embedded servers)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import docindex

pytestmark = pytest.mark.e2e

HOSTILE_KEY = "eng/evil\x1b[2J\u202efdp.exe\x07.txt"


def cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return docindex(*args, cwd=cwd, timeout=timeout)


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    cli("local", "down", cwd=tmp_path)


def clients(env: dict[str, str]) -> tuple[Any, Any]:
    import boto3

    session = boto3.Session(aws_access_key_id="local", aws_secret_access_key="local", region_name="us-east-1")
    return session.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]), session.client(
        "sqs", endpoint_url=env["AWS_ENDPOINT_URL"]
    )


def test_local_run_speaks_and_the_cli_never_lets_a_file_name_drive_the_terminal(workdir: Path) -> None:
    env = json.loads(cli("local", "up", "--json", cwd=workdir).stdout)
    s3, _ = clients(env)
    bucket = env["DOCINDEX_BUCKET"]
    # Given 30 files waiting in the ingest queue, one with a name made to rewrite the terminal
    for i in range(29):
        s3.put_object(Bucket=bucket, Key=f"reports/report {i:02d}.txt", Body=f"quarterly report {i}".encode())
    s3.put_object(Bucket=bucket, Key=HOSTILE_KEY, Body=b"quarterly evil")

    # When a --once run is stopped by its time limit, one message at a time
    stopped = cli("local", "run", "--once", "--no-worker", "--batch-size", "1", "--max-seconds", "0.5", cwd=workdir)
    # Then it says how many are left, and exits 1 (the queue is not drained)
    assert stopped.returncode == 1, stopped.stderr
    verdict = stopped.stdout.strip().splitlines()[-1]
    assert verdict.startswith("stopped at --max-seconds 0.5 with "), verdict
    assert " messages left" in verdict

    # When the run goes on until drained
    drained = cli("local", "run", "--once", "--no-worker", "--progress-interval", "0.1", cwd=workdir)
    # Then progress went to stderr while it ran, and the verdict says drained (exit 0)
    assert drained.returncode == 0, drained.stderr
    assert "local run: " in drained.stderr
    assert " msg/s, " in drained.stderr
    assert drained.stdout.strip().splitlines()[-1].startswith("drained: ")
    as_json = json.loads(cli("local", "run", "--once", "--no-worker", "--json", cwd=workdir).stdout)
    assert (as_json["version"], as_json["stopped"], as_json["left"], as_json["exit_code"]) == (1, "drained", 0, 0)

    # When the hostile file is found, its name is shown, never acted on
    found = cli("search", "evil", cwd=workdir)
    assert found.returncode == 0, found.stderr
    assert "\x1b" not in found.stdout
    assert "\u202e" not in found.stdout
    assert "\x07" not in found.stdout
    assert "evil\\x1b[2J\\u202efdp.exe\\x07.txt" in found.stdout
    reconcile = cli("reconcile", "--samples", "50", cwd=workdir)
    assert "\x1b" not in reconcile.stdout + reconcile.stderr

    # And paging and the hit count follow what people type
    page = cli("search", "quarterly -evil", "--size", "10", "--page", "3", cwd=workdir)
    assert page.stdout.splitlines()[0] == "21–29 of 29 documents"


def test_backfill_and_local_state_traps(workdir: Path) -> None:
    env = json.loads(cli("local", "up", "--json", cwd=workdir).stdout)
    s3, _ = clients(env)
    bucket = env["DOCINDEX_BUCKET"]
    # Given a backfill that finished on an empty bucket
    first = json.loads(cli("backfill", "--json", cwd=workdir).stdout)
    assert (first["completed"], first["enqueued"]) == (True, 0)
    # When objects arrive afterwards, the finished run says the listing changed (exit 1), and how to go on
    s3.put_object(Bucket=bucket, Key="late/arrival.txt", Body=b"late")
    again = cli("backfill", cwd=workdir)
    assert again.returncode == 1, again.stderr
    assert "the listing has changed since" in again.stdout
    assert "--restart" in again.stdout
    # and a dry run's JSON reports nothing as sent
    dry = json.loads(cli("backfill", "--dry-run", "--json", "--restart", cwd=workdir).stdout)
    assert (dry["enqueued"], dry["would_enqueue"]) == (0, 1)
    # A run stopped at --limit tells to resume without --restart (which would discard the checkpoint)
    for i in range(30):
        s3.put_object(Bucket=bucket, Key=f"more/{i:02d}.txt", Body=b"x")
    limited = cli("backfill", "--restart", "--limit", "10", "--rate", "0", cwd=workdir)
    assert "without --restart" in limited.stdout, limited.stdout

    # Given the index holds documents
    assert cli("local", "run", "--once", "--no-worker", cwd=workdir).returncode == 0
    # When the local AWS emulator dies and `local up` runs again
    servers = json.loads((workdir / ".docindex" / "servers.json").read_text())
    moto = servers["moto"] if isinstance(servers, dict) and "moto" in servers else None
    assert moto is not None, servers
    assert moto.get("pid"), servers
    os.kill(int(moto["pid"]), signal.SIGKILL)  # the moto server this test's `local up` started
    time.sleep(0.5)
    up = cli("local", "up", cwd=workdir)
    # Then it says the index and the emulators disagree, and how to reset both
    assert up.returncode == 0, up.stderr
    assert "the index and the emulators disagree" in up.stderr
    assert "docindex local down && rm -rf .docindex && docindex local up" in up.stderr
