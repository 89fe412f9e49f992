"""The pipeline a disaster drill runs: the real indexer and OCR worker behind a recording proxy, and the
operator's ``docindex`` commands with the stack's env file (tests/integration/test_drills.py on one node,
tests/integration/test_cluster_drills.py on a three-node cluster)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch

from devkit import samples
from devkit.faults import OpenSearchFaults, Proxy, WriteLog
from devkit.local.runner import LocalRunner
from docindex.cli import main
from docindex.ops.envfile import write_env_file
from docindex.worker.config import WorkerSettings
from docindex.worker.pool import OcrPool
from docindex.worker.service import Worker
from tests.conftest import REGION, Stack
from tests.integration.conftest import build_indexer
from tests.support.scans import CARD_INCHES, LAYOUT, REPORT_LINES

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
    indexer: Any = None

    def drain(self, *, ocr: bool = True, retried: bool = False, max_seconds: float = 120) -> None:
        """Apply everything in the ingest and OCR queues, as Lambda and the ECS service would.

        One indexer for the whole test, as a warm Lambda keeps its process between invocations. ``retried``:
        records may fail on the way (a cluster losing a node) as long as SQS's next delivery applies them.
        """
        if self.indexer is None:
            self.indexer = build_indexer(
                self.stack, OPENSEARCH_ENDPOINT=self.worker.settings.common.opensearch_endpoint, opensearch=self.client
            )
        runner = LocalRunner(
            sqs=self.stack.aws.sqs,
            handler=self.indexer.handle,
            queue_url=self.stack.env["INGEST_QUEUE_URL"],
            queue_arn=self.stack.env["INGEST_QUEUE_ARN"],
            region=REGION,
            function_timeout=30,
            worker=self.worker if ocr else None,
        )
        stats = runner.run(once=True, max_seconds=max_seconds)
        assert stats.drained, runner.depths()
        if not retried:
            assert stats.failures == 0, stats.failed_message_ids
        self.metrics.update({name: int(value) for name, value in stats.metrics.items()})
        # what the pipeline wrote is searchable at the index's next refresh (1 s): the operator's next command
        # comes later than that
        self.stack.opensearch.indices.refresh(index=self.stack.index)

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


@contextmanager
def drill_pipeline(stack: Stack, tmp_path: Path, ocr_pool: OcrPool, **env_overrides: str) -> Iterator[Pipeline]:
    """The stack's pipeline with every write recorded (``Pipeline.writes``) and its env file in ``tmp_path``."""
    writes = WriteLog()
    with Proxy(stack.engine_url, OpenSearchFaults(log=writes)) as proxy:
        env = stack.settings_env(OPENSEARCH_ENDPOINT=proxy.url, **env_overrides)
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
