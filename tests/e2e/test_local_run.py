"""The local run end to end, through the CLI as a user runs it (separate processes)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from docindex.ops.envfile import read_env_file
from tests.support.cli import docindex


def cli(*args: str, cwd: Path, check: bool = True, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return docindex(*args, cwd=cwd, ok=(0,) if check else None, timeout=timeout)


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    cli("local", "down", cwd=tmp_path, check=False)


def test_up_upload_run_search(workdir: Path) -> None:
    import boto3

    # Given a local stack on the embedded servers
    up = cli("local", "up", "--json", cwd=workdir)
    env = json.loads(up.stdout)
    env_file = workdir / ".docindex" / "local.env"
    assert read_env_file(env_file)["INGEST_QUEUE_URL"] == env["INGEST_QUEUE_URL"]
    for name in ("DOCINDEX_BUCKET", "INGEST_DLQ_URL", "OCR_QUEUE_URL", "OCR_DLQ_URL", "AWS_ENDPOINT_URL"):
        assert env[name]
    # Run twice, it reuses the same servers and resources
    again = json.loads(cli("local", "up", "--json", cwd=workdir).stdout)
    assert (again["AWS_ENDPOINT_URL"], again["OPENSEARCH_ENDPOINT"]) == (
        env["AWS_ENDPOINT_URL"],
        env["OPENSEARCH_ENDPOINT"],
    )
    # When files are uploaded (real S3 → SQS notifications) and the runner drains the queue
    s3 = boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    s3.put_object(
        Bucket=env["DOCINDEX_BUCKET"], Key="営業部/週報 第12週.txt", Body="今週の商談は東京都内で三件".encode()
    )
    s3.put_object(Bucket=env["DOCINDEX_BUCKET"], Key="eng/notes.md", Body=b"# Release notes\nThe indexer is ready")
    s3.put_object(Bucket=env["DOCINDEX_BUCKET"], Key="eng/old.md", Body=b"obsolete draft")
    s3.delete_object(Bucket=env["DOCINDEX_BUCKET"], Key="eng/old.md")
    run = cli("local", "run", "--once", "--json", "--max-seconds", "120", cwd=workdir)
    summary = json.loads(run.stdout)
    # Then the queues are drained and the documents are searchable
    assert summary["drained"] is True
    assert summary["failed_records"] == 0
    assert summary["metrics"]["DocumentsIndexed"] >= 2
    hits = json.loads(cli("search", "商談", "--json", cwd=workdir).stdout)["hits"]
    assert [h["key"] for h in hits] == ["営業部/週報 第12週.txt"]
    assert "[商談]" in hits[0]["snippet"]
    hits = json.loads(cli("search", "indexer", "--json", cwd=workdir).stdout)["hits"]
    assert [h["key"] for h in hits] == ["eng/notes.md"]
    assert cli("search", "obsolete", cwd=workdir, check=False).returncode == 1
