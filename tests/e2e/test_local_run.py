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


def test_up_on_a_real_opensearch_node_keeps_its_index_across_down_and_up(workdir: Path) -> None:
    import urllib.request

    from devkit.local.servers import pid_alive

    def get(url: str) -> dict[str, object]:
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.loads(response.read())

    # Given a local stack with a real OpenSearch node as its engine
    env = json.loads(cli("local", "up", "--json", cwd=workdir).stdout)
    endpoint = env["OPENSEARCH_ENDPOINT"]
    assert get(endpoint)["version"]["number"] == "2.19.1"
    assert read_env_file(workdir / ".docindex" / "local.env")["VECTOR_ENCODING"] == "fp32"
    index = get(f"{endpoint}/{env['OPENSEARCH_INDEX']}/_mapping")
    assert next(iter(index.values()))["mappings"]["_meta"]["docindex"]["analysis"] == "icu+kuromoji"
    servers = json.loads((workdir / ".docindex" / "servers.json").read_text())
    node_pid = servers["opensearch"]["pid"]
    # Run twice, it reuses the node
    again = json.loads(cli("local", "up", "--json", cwd=workdir).stdout)
    assert again["OPENSEARCH_ENDPOINT"] == endpoint
    put = urllib.request.Request(
        f"{endpoint}/{env['OPENSEARCH_INDEX']}/_doc/kept?refresh=true",
        data=json.dumps({"key": "kept.txt", "content": "残る文書"}).encode(),
        headers={"Content-Type": "application/json"},
        method="PUT",
    )
    urllib.request.urlopen(put, timeout=30).read()
    # When the servers are stopped, the node stops too
    cli("local", "down", cwd=workdir)
    assert not pid_alive(node_pid)
    # and a new `up` finds the index it kept on disk (its documents with it)
    third = json.loads(cli("local", "up", "--json", cwd=workdir).stdout)
    concrete = get(f"{third['OPENSEARCH_ENDPOINT']}/_alias/{env['OPENSEARCH_INDEX']}")
    assert list(concrete) == [f"{env['OPENSEARCH_INDEX']}-v1"]
    assert get(f"{third['OPENSEARCH_ENDPOINT']}/{env['OPENSEARCH_INDEX']}/_doc/kept")["_source"]["key"] == "kept.txt"
