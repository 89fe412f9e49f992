"""Disaster drills (issue 29): each runs the steps of its runbook in docs/operations.md as commands.

The pipeline is the real indexer (fed from the ingest queue as Lambda feeds it) and the real OCR
worker on moto server and osmem-server; the operator's steps are ``docindex`` commands run as a
user runs them (``main([...])`` with the stack's env file). Every write OpenSearch accepts goes
through a recording proxy, so "written once" is counted, not assumed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from devkit import samples
from devkit.faults import OpenSearchFaults, Proxy, WriteLog
from devkit.local.runner import LocalRunner
from docindex.cli import main
from docindex.ingest.handoff import OcrJob, OcrQueue
from docindex.ops.envfile import write_env_file
from docindex.worker.config import WorkerSettings
from docindex.worker.pool import OcrPool
from docindex.worker.service import Worker
from tests.conftest import REGION, Stack
from tests.integration.conftest import build_indexer
from tests.support.scans import CARD_INCHES, LAYOUT, REPORT_LINES

pytestmark = pytest.mark.integration

TEXTS = {
    "営業部/見積書 No.1.txt": "見積書 合計 120,000円",
    "経理部/請求書 2026-04.txt": "請求書 支払期限 月末",
    "総務部/議事録.txt": "定例会議 議事録 来週月曜",
}
SCAN = "スキャン/受領書.png"


@dataclass
class Pipeline:
    """The stack, its env file, the recording proxy in front of OpenSearch, the indexer and the worker."""

    stack: Stack
    env_file: Path
    writes: WriteLog
    worker: Worker
    # What the pipeline's runs emitted (EMF), summed: the indexer's and the worker's metrics.
    metrics: Counter[str] = field(default_factory=Counter)

    def drain(self, *, ocr: bool = True) -> None:
        """Apply everything in the ingest and OCR queues, as Lambda and the ECS service would."""
        indexer = build_indexer(
            self.stack, OPENSEARCH_ENDPOINT=self.worker.settings.common.opensearch_endpoint, opensearch=self.client
        )
        runner = LocalRunner(
            sqs=self.stack.aws.sqs,
            handler=indexer.handle,
            queue_url=self.stack.env["INGEST_QUEUE_URL"],
            queue_arn=self.stack.env["INGEST_QUEUE_ARN"],
            region=REGION,
            function_timeout=30,
            worker=self.worker if ocr else None,
            ocr_queue_url=self.stack.env["OCR_QUEUE_URL"],
        )
        stats = runner.run(once=True, max_seconds=120)
        assert stats.drained, runner.depths()
        assert stats.failures == 0, stats.failed_message_ids
        self.metrics.update({name: int(value) for name, value in stats.metrics.items()})

    @property
    def client(self) -> OpenSearch:
        return OpenSearch(hosts=[self.worker.settings.common.opensearch_endpoint], timeout=30)

    def command(self, *args: str, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
        """``docindex ARGS --env-file ... --json``; its JSON document."""
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main([*args, "--env-file", str(self.env_file), "--json"])
        assert code in ok, out.getvalue()
        result: dict[str, Any] = json.loads(out.getvalue())
        result["exit_code"] = code
        return result

    def index_writes(self) -> int:
        return sum(1 for w in self.writes.snapshot() if w.op == "index")


@pytest.fixture
def pipeline(stack: Stack, tmp_path: Path, ocr_pool: OcrPool) -> Iterator[Pipeline]:
    writes = WriteLog()
    with Proxy(stack.osmem_url, OpenSearchFaults(log=writes)) as proxy:
        env = stack.settings_env(OPENSEARCH_ENDPOINT=proxy.url)
        env_file = tmp_path / "docindex.env"
        write_env_file(env_file, env)
        settings = WorkerSettings.from_env({**env, "WORKER_CONCURRENCY": "2", "WORKER_HEARTBEAT_SECONDS": "5"})
        worker = Worker(
            settings,
            s3=stack.aws.s3,
            sqs=stack.aws.sqs,
            dynamodb=stack.aws.dynamodb,
            opensearch=OpenSearch(hosts=[proxy.url], timeout=30),
            pool=ocr_pool,
            flush_metrics=False,
        )
        try:
            yield Pipeline(stack, env_file, writes, worker)
        finally:
            worker.close()


def load(pipeline: Pipeline) -> list[str]:
    """Three text files and a scan, uploaded (S3 announces them) and indexed, the scan OCR'd.

    Returns the bodies of the notifications that announced them.
    """
    stack = pipeline.stack
    for key, text in TEXTS.items():
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=text.encode())
    scan = samples.make_scan_png(REPORT_LINES[:2], dpi=300, page=CARD_INCHES, **LAYOUT)
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=SCAN, Body=scan)
    announced = [m["Body"] for m in stack.messages("INGEST_QUEUE_URL")]
    pipeline.drain()
    return announced


def documents(pipeline: Pipeline) -> dict[str, tuple[int, dict[str, Any]]]:
    """Every document of the bucket: key -> (version, source)."""
    client = pipeline.stack.opensearch
    client.indices.refresh(index=pipeline.stack.index)
    hits = client.search(index=pipeline.stack.index, body={"size": 1000, "version": True, "query": {"match_all": {}}})[
        "hits"
    ]["hits"]
    return {h["_source"]["key"]: (int(h["_version"]), h["_source"]) for h in hits}


# ---------------------------------------------------------------- (d) the idempotency table is lost


def test_with_the_idempotency_table_lost_duplicates_still_write_once(pipeline: Pipeline) -> None:
    # Given documents indexed and a scan OCR'd, and the messages that announced them
    stack = pipeline.stack
    messages = load(pipeline)
    before = documents(pipeline)
    assert before[SCAN][1]["ocr_status"] == "done"
    assert len([w for w in pipeline.writes.snapshot() if w.writer == "doc"]) == 1
    written = pipeline.index_writes()
    pages = pipeline.metrics["OcrPagesProcessed"]
    assert pages == 1
    # When the idempotency table is lost: deleted, then created again empty (`docindex local up`
    # here, `sam deploy` for a stack)
    stack.aws.dynamodb.delete_table(TableName=stack.env["IDEMPOTENCY_TABLE"])
    prefix = stack.env["IDEMPOTENCY_TABLE"].removesuffix("-idempotency")
    env = dict(line.split("=", 1) for line in pipeline.env_file.read_text().splitlines() if "=" in line)
    up = pipeline.command(
        "local", "up", "--aws-endpoint", env["AWS_ENDPOINT_URL"], "--opensearch-endpoint", stack.osmem_url,
        "--prefix", prefix, "--state-dir", str(pipeline.env_file.parent / "state"),
    )  # fmt: skip
    assert up["IDEMPOTENCY_TABLE"] == stack.env["IDEMPOTENCY_TABLE"]
    write_env_file(pipeline.env_file, env)  # local up rewrote it with the proxy-less endpoint
    # ... and every change is announced again (a redrive, a duplicate notification), the OCR job too
    for body in messages:
        stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=body)
    version, source = before[SCAN]
    job = OcrJob(bucket=stack.bucket, key=SCAN, reason="image", generation=version - 1, etag=source["etag"])
    OcrQueue(stack.aws.sqs, stack.env["OCR_QUEUE_URL"]).send(job)
    pipeline.drain()
    # Then nothing was written again and no page read again: the ledger and the index recognised
    # every duplicate
    assert pipeline.index_writes() == written
    assert documents(pipeline) == before
    assert pipeline.metrics["DuplicatesSkipped"] >= len(TEXTS) + 1
    assert (pipeline.metrics["OcrJobsCompleted"], pipeline.metrics["OcrJobsDuplicate"]) == (1, 1)
    assert pipeline.metrics["OcrPagesProcessed"] == pages


# ---------------------------------------------------------------- (b) the index restored from an older snapshot


def snapshot(pipeline: Pipeline) -> list[dict[str, Any]]:
    """What a snapshot of the index holds: every document with its version.

    osmem-server has no snapshot repository; a snapshot's restore gives back exactly this.
    """
    client, index = pipeline.stack.opensearch, pipeline.stack.index
    client.indices.refresh(index=index)
    hits = client.search(index=index, body={"size": 1000, "version": True, "query": {"match_all": {}}})["hits"]["hits"]
    return [{"_id": h["_id"], "_version": h["_version"], "_source": h["_source"]} for h in hits]


def restore(pipeline: Pipeline, snap: list[dict[str, Any]]) -> None:
    """The index replaced by the snapshot (deleted, created again, the documents at their versions)."""
    from opensearchpy import helpers

    from docindex.index.mapping import ensure_index

    client, index = pipeline.stack.opensearch, pipeline.stack.index
    concrete = next(iter(client.indices.get_alias(name=index)))
    client.indices.delete(index=concrete)
    ensure_index(client, index)
    actions = [
        {
            "_index": index,
            "_id": d["_id"],
            "_version": d["_version"],
            "_version_type": "external",
            "_source": d["_source"],
        }
        for d in snap
    ]
    helpers.bulk(client, actions, refresh=True)


def test_an_index_restored_from_an_older_snapshot_is_repaired_exactly_where_it_is_behind(
    pipeline: Pipeline,
) -> None:
    stack, s3 = pipeline.stack, pipeline.stack.aws.s3
    # Given an index in step, and a scan whose OCR has not run yet when the snapshot is taken
    load(pipeline)
    weekly = "営業部/週報.txt"
    s3.put_object(Bucket=stack.bucket, Key=weekly, Body="週報 第1週".encode())
    late_scan = "スキャン/契約書.png"
    s3.put_object(
        Bucket=stack.bucket,
        Key=late_scan,
        Body=samples.make_scan_png(["業務委託契約書", "契約番号 K-2231"], dpi=300, page=CARD_INCHES, **LAYOUT),
    )
    pipeline.drain(ocr=False)
    snap = snapshot(pipeline)
    # ... then an hour of changes: the scan read, a file edited, one deleted, one created, one re-uploaded
    # unchanged (a new version, the same bytes)
    edited, deleted, unchanged = "営業部/見積書 No.1.txt", "経理部/請求書 2026-04.txt", "総務部/議事録.txt"
    s3.put_object(Bucket=stack.bucket, Key=edited, Body="見積書 訂正版 合計 150,000円".encode())
    s3.delete_object(Bucket=stack.bucket, Key=deleted)
    s3.put_object(Bucket=stack.bucket, Key="営業部/提案書.txt", Body="提案書 新規".encode())
    s3.put_object(Bucket=stack.bucket, Key=unchanged, Body=TEXTS[unchanged].encode())
    s3.put_object(Bucket=stack.bucket, Key=weekly, Body="週報 第2週".encode())
    pipeline.drain()
    pages = pipeline.metrics["OcrPagesProcessed"]
    # When the index is restored from the snapshot, and changes keep arriving (one re-edits a file
    # the restore set back, one is new)
    restore(pipeline, snap)
    s3.put_object(Bucket=stack.bucket, Key="人事部/規程.txt", Body="就業規則 改定".encode())
    s3.put_object(Bucket=stack.bucket, Key=weekly, Body="週報 第3週".encode())
    pipeline.drain()
    # Then reconcile against the ledger finds exactly what the restore undid and nothing else
    found = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0", ok=(1,))
    keys = {
        kind: {d["key"] for d in found["samples"].get(kind, [])} for kind in ("missing", "stale", "orphaned", "behind")
    }
    assert keys == {
        "missing": {"営業部/提案書.txt"},
        "stale": {edited},
        "orphaned": {deleted},
        "behind": {late_scan, unchanged},  # the ETag alone cannot see these two
    }
    # When --fix repairs it and the pipeline drains
    fixed = pipeline.command("reconcile", "--against-ledger", "--fix", "--pending-after", "0", ok=(1,))
    assert (fixed["enqueued_created"], fixed["enqueued_removed"]) == (4, 1)
    pipeline.drain()
    # Then the index is in step again, the scan's text came from the content cache (no page read)
    again = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0")
    assert (again["coverage_percent"], again["behind"]) == (100.0, 0)
    docs = documents(pipeline)
    assert docs[late_scan][1]["ocr_status"] == "done"
    assert "K-2231" in docs[late_scan][1]["content"]
    assert "訂正版" in docs[edited][1]["content"]
    assert deleted not in docs
    assert "第3週" in docs[weekly][1]["content"]
    assert pipeline.metrics["OcrPagesProcessed"] == pages
