"""``docindex local run`` runs the OCR worker next to the indexer: an uploaded scan ends up searchable."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from devkit.samples import make_scan_png
from docindex.core.changes import doc_id
from docindex.index.search import search
from tests.conftest import Aws
from tests.support.scans import LAYOUT


def cli(*args: str, cwd: Path) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "docindex.cli", *args, "--json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, f"docindex {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def test_local_run_ocrs_an_uploaded_scan(tmp_path: Path, aws: Aws, opensearch: Any, engine_url: str) -> None:
    # Given a local stack on the test's moto server and OpenSearch
    env_file = tmp_path / "local.env"
    common = ["--env-file", str(env_file)]
    env = cli(
        "local",
        "up",
        "--aws-endpoint",
        aws.endpoint,
        "--opensearch-endpoint",
        engine_url,
        "--prefix",
        f"l{uuid.uuid4().hex[:8]}",
        *common,
        cwd=tmp_path,
    )
    # When a scanned receipt is uploaded (a real S3 notification) and the local run drains the queues
    key = "経理/領収書 2026-11.png"
    scan = make_scan_png(["領収書", "株式会社サンプル 御中", "金額 一万二千円"], dpi=200, page=(4.0, 2.0), **LAYOUT)
    aws.s3.put_object(Bucket=env["DOCINDEX_BUCKET"], Key=key, Body=scan)
    summary = cli("local", "run", "--once", "--max-seconds", "120", *common, cwd=tmp_path)
    # Then the indexer queued the OCR job, the worker ran it, and the receipt is searchable by its text
    assert summary["drained"] is True
    assert summary["failed_records"] == 0
    assert summary["ocr_jobs"] == 1
    index = env["OPENSEARCH_INDEX"]
    opensearch.indices.refresh(index=index)
    doc = opensearch.get(index=index, id=doc_id(env["DOCINDEX_BUCKET"], key))["_source"]
    assert doc["ocr_status"] == "done"
    assert "領収書" in doc["content"]
    assert [hit["key"] for hit in search(opensearch, index, "領収書")] == [key]
