"""The disaster drills at full size (issue 29): after the soak's other phases, on the quiet pipeline.

Each drill breaks one thing the way an operator's bad day does, runs the commands of its runbook
(docs/operations.md#disaster-runbooks) as the operator runs them (the CLI, in its own process,
its messages recorded on their way to SQS), drains the pipeline, and is judged on its own:
``docindex reconcile --against-ledger`` must find nothing, and every document must say what its
object holds (the workload's model). The same drills run small in ``make test``
(tests/integration/test_drills.py).

1. **The idempotency table is lost**: deleted and provisioned again empty (``docindex local up``),
   then a share of the changes announced so far announced again, and the OCR jobs queued again:
   nothing may be written (the run's judge counts every accepted write).
2. **The index is restored from an older snapshot** while changes kept arriving: the documents
   taken with their versions, a share of the documents changed (a small storm), the index replaced
   by the snapshot, more changes, then ``reconcile --against-ledger --fix``.
3. **The ledger is restored to an earlier point in time**: its object entries taken, a small storm,
   the entries put back as they were; then ``docindex pause``, ``docindex ledger repair``,
   ``docindex resume``, the storm's notifications delivered again (late), new changes, and
   ``reconcile --against-ledger --fix``: nothing late may be written.
4. **The index is deleted**: ``docindex backfill --restart``; the figures are what a rebuild of the
   soak's corpus costs (objects read, pages OCR'd, cache hits and misses, seconds).
"""

from __future__ import annotations

import json
import os
import subprocess  # the operator's commands, fixed argv  # nosec B404
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from devkit.faults import SentMessage
from soak.config import SoakConfig, SoakError, Stack
from soak.judge import check_content, indexed_documents

if TYPE_CHECKING:
    from devkit.faults import Proxy, SendLog, WriteLog
    from soak.workload import Workload


class SoakRun(Protocol):
    """What a drill uses of the run it belongs to (``soak.run.Soak``, which starts the drills)."""

    config: SoakConfig
    dir: Path
    writes: WriteLog
    sends: SendLog
    echo: Callable[[str], None]
    # documents whose ledger entries the ledger-restored drill rolled back or erased (soak.judge.count_writes)
    generations_rolled_back: set[str]

    def common_env(self, stack: Stack) -> dict[str, str]: ...
    def drain(self, stack: Stack, when: str) -> None: ...
    def harness_settings(self, stack: Stack) -> None: ...
    def metric_totals(self) -> Counter[str]: ...
    def object_reads(self) -> Counter[str]: ...
    def ops_proxy(self, stack: Stack) -> Proxy: ...


@dataclass
class DrillResult:
    """One drill: what it did and found, and whether the index ended right."""

    name: str
    seconds: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)
    reconcile: dict[str, Any] = field(default_factory=dict)
    wrong: int = 0  # documents whose content is not what their object holds, after the drill
    pending: int = 0
    failures: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seconds": round(self.seconds, 1),
            "figures": self.figures,
            "reconcile": self.reconcile,
            "documents_wrong": self.wrong,
            "left_pending": self.pending,
            "failures": self.failures,
        }


class Drills:
    """Runs the four drills on a soak's stack, in order."""

    def __init__(self, soak: SoakRun, stack: Stack, workload: Workload, *, share: float, poison: list[str]) -> None:
        self.soak = soak
        self.poison = set(poison)
        self.stack = stack
        self.workload = workload
        self.share = share  # of the documents changed during a drill (storm operations)
        self.env_file = soak.dir / "soak.env"

    def run(self) -> list[DrillResult]:
        results = []
        for name in self.soak.config.drills:
            drill = getattr(self, name)
            self.soak.echo(f"  drill: {name.replace('_', ' ')}")
            started = time.monotonic()
            result = DrillResult(name)
            result.figures = drill()
            self._judge(result)
            result.seconds = time.monotonic() - started
            self.soak.echo(f"    {json.dumps(result.to_dict(), ensure_ascii=False)}")
            results.append(result)
        return results

    # -- the drills

    def idempotency_lost(self) -> dict[str, Any]:
        stack, env = self.stack, self.stack.env
        stack.dynamodb.delete_table(TableName=env["IDEMPOTENCY_TABLE"])
        stack.dynamodb.get_waiter("table_not_exists").wait(TableName=env["IDEMPOTENCY_TABLE"])
        config = self.soak.config
        self._cli(
            "local", "up", "--aws-endpoint", stack.moto, "--opensearch-endpoint", stack.opensearch,
            "--prefix", f"soak{config.seed}", "--function-timeout", str(config.function_timeout),
            "--max-receive-count", str(config.max_receive_count),
            "--visibility-timeout", str(config.ingest_visibility),
            "--state-dir", str(self.soak.dir / "local-up"), "--env-file", str(self.soak.dir / "local-up.env"),
            env_file=False,
        )  # fmt: skip
        self.soak.harness_settings(stack)  # `local up` provisions the notification the harness plays itself
        writes = len(self.soak.writes.snapshot())
        sent = self.soak.sends.snapshot()
        ingest, workers = env["INGEST_QUEUE_URL"], (env["OCR_QUEUE_URL"], env["EMBED_QUEUE_URL"])
        notifications = [m for m in sent if m.queue_url == ingest and m.body not in self.poison]
        jobs = [m for m in sent if m.queue_url in workers and m.body not in self.poison and '"ocr_job"' in m.body]
        every = max(1, round(1 / self.share))
        again = notifications[::every] + jobs[::every]
        for message in again:
            self._send(message.queue_url, message.body, "duplicate")
        self.soak.drain(stack, "after duplicates without the idempotency table")
        return {
            "announced_again": len(notifications[::every]),
            "ocr_jobs_again": len(jobs[::every]),
            "written_again": len(self.soak.writes.snapshot()) - writes,
        }

    def snapshot_restored(self) -> dict[str, Any]:
        from opensearchpy import OpenSearch, helpers

        from docindex.core.settings import EmbeddingSettings
        from docindex.embed.settings import vector_spec
        from docindex.index.mapping import ensure_index

        client = OpenSearch(hosts=[self.stack.opensearch], timeout=120)
        index = self.stack.env["OPENSEARCH_INDEX"]
        client.indices.refresh(index=index)
        snap = list(helpers.scan(client, index=index, query={"query": {"match_all": {}}}, version=True))
        changes = max(2, round(self.workload_size() * self.share))
        self.workload.storm(changes)
        self.soak.drain(self.stack, "after the changes since the snapshot")
        concrete = next(iter(client.indices.get_alias(name=index)))
        client.indices.delete(index=concrete)
        # A snapshot restores the index as it was: its mapping, meaning search's vector field included.
        ensure_index(client, index, vectors=vector_spec(EmbeddingSettings.from_env(self.stack.env)))
        self.soak.harness_settings(self.stack)
        helpers.bulk(
            client,
            (
                {"_index": index, "_id": d["_id"], "_version": d["_version"], "_version_type": "external"}
                | {"_source": d["_source"]}
                for d in snap
            ),
            refresh=True,
            chunk_size=200,
        )
        self.workload.storm(changes)  # changes keep arriving on the restored index
        self.soak.drain(self.stack, "after the changes since the restore")
        found = self._cli("reconcile", "--against-ledger", "--fix", "--pending-after", "0", "--no-progress", ok=(0, 1))
        self.soak.drain(self.stack, "after reconcile --fix")
        return {
            "snapshot_documents": len(snap),
            "changes_before_and_after_the_restore": 2 * changes,
            "found": {k: found.get(k) for k in ("missing", "stale", "orphaned", "behind")},
            "enqueued": {k: found.get(k) for k in ("enqueued_created", "enqueued_removed")},
        }

    def ledger_restored(self) -> dict[str, Any]:
        stack = self.stack
        table = stack.env["LEDGER_TABLE"]
        at_r = self._ledger_entries()
        sent_before = len(self.soak.sends.snapshot())
        changes = max(2, round(self.workload_size() * self.share))
        self.workload.storm(changes)
        self.soak.drain(stack, "after the changes since the restore point")
        late = [
            m
            for m in self.soak.sends.snapshot()[sent_before:]
            if m.queue_url == stack.env["INGEST_QUEUE_URL"] and m.client == "notifications"
        ]
        restored = {item["id"]["S"]: item.get("generation", {}).get("N") for item in at_r}
        for item in self._ledger_entries():
            if restored.get(item["id"]["S"]) != item.get("generation", {}).get("N"):
                self.soak.generations_rolled_back.add(item["id"]["S"].removeprefix("object#"))
            stack.dynamodb.delete_item(TableName=table, Key={"id": item["id"]})
        for item in at_r:
            stack.dynamodb.put_item(TableName=table, Item=item)
        self._cli("pause", ok=(0, 1))  # locally nothing to pause: the pipeline is quiet
        repaired = self._cli("ledger", "repair", "--no-progress")
        self._cli("resume", ok=(0, 1))
        writes = len(self.soak.writes.snapshot())
        for message in late:
            self._send(message.queue_url, message.body, "late")
        self.soak.drain(stack, "after the late notifications")
        written_late = len(self.soak.writes.snapshot()) - writes
        self.workload.storm(changes)
        self.soak.drain(stack, "after the changes since the repair")
        found = self._cli("reconcile", "--against-ledger", "--fix", "--pending-after", "0", "--no-progress", ok=(0, 1))
        self.soak.drain(stack, "after reconcile --fix")
        return {
            "entries_restored": len(at_r),
            "entries_rolled_back": len(self.soak.generations_rolled_back),
            "repair": {
                k: repaired.get(k)
                for k in ("entries_checked", "raised", "created", "marked_removed", "marked_present", "seconds")
            },
            "late_notifications": len(late),
            "written_by_late_notifications": written_late,
            "found_after": {k: found.get(k) for k in ("missing", "stale", "orphaned", "behind")},
        }

    def index_deleted(self) -> dict[str, Any]:
        from opensearchpy import OpenSearch

        client = OpenSearch(hosts=[self.stack.opensearch], timeout=120)
        index = self.stack.env["OPENSEARCH_INDEX"]
        cached = self._ocr_results_in_cache(client, index)
        logs = {log: log.stat().st_size for log in self.soak.dir.glob("worker*.log")}
        metrics, gets = self.soak.metric_totals(), self.soak.object_reads()
        started = time.monotonic()
        concrete = next(iter(client.indices.get_alias(name=index)))
        client.indices.delete(index=concrete)
        sent = self._cli("backfill", "--restart", "--checkpoint", str(self.soak.dir / "rebuild.json"), "--no-progress")
        self.soak.drain(self.stack, "after the rebuild")
        seconds = time.monotonic() - started
        time.sleep(3)  # the worker's last metrics (flushed every 2 s)
        used = self.soak.metric_totals() - metrics
        read = self.soak.object_reads() - gets
        pages = self._pages_by_key(logs)
        return {
            # OCR'd documents whose result the content cache held (under this release's extractor
            # version): the rebuild must read none of their pages. The others (read by the previous
            # release, whose results the current one does not reuse) are read again.
            "ocr_results_in_cache": len(cached),
            "ocr_pages_of_cached_results": sum(n for key, n in pages.items() if key in cached),
            "ocr_pages_of_other_results": sum(n for key, n in pages.items() if key not in cached),
            "objects": sent.get("listed"),
            "enqueued": sent.get("enqueued"),
            "rebuild_seconds": round(seconds, 1),
            "objects_read": sum(read.values()),
            "ocr_pages": used.get("OcrPagesProcessed", 0),
            "ocr_jobs_queued": used.get("OcrJobsQueued", 0),
            "content_cache_hits": used.get("ContentCacheHits", 0),
            "content_cache_misses": used.get("ContentCacheMisses", 0),
            "documents_indexed": used.get("DocumentsIndexed", 0),
        }

    # -- helpers

    def _ocr_results_in_cache(self, client: Any, index: str) -> set[str]:
        """Keys of the OCR'd documents whose content the cache holds for this release's extractors."""
        from opensearchpy import helpers

        from docindex.ingest.cache import ContentCache

        cache = ContentCache(self.stack.s3, self.stack.env.get("CONTENT_CACHE_BUCKET"), "content-cache/")
        query = {"query": {"term": {"ocr_status": "done"}}, "_source": ["key", "content_sha256"]}
        held = set()
        for hit in helpers.scan(client, index=index, query=query):
            source = hit["_source"]
            sha = source.get("content_sha256")
            if not sha:
                continue
            try:
                self.stack.s3.head_object(Bucket=cache.bucket, Key=cache.key(sha))
            except Exception:  # noqa: BLE001, S112 - not cached (or unreadable): the rebuild reads it again
                continue
            held.add(source["key"])
        return held

    def _pages_by_key(self, logs: dict[Any, int]) -> Counter[str]:
        """OCR pages the workers read per key since ``logs`` (their sizes) were taken."""
        pages: Counter[str] = Counter()
        for log in self.soak.dir.glob("worker*.log"):
            with log.open("rb") as handle:
                handle.seek(logs.get(log, 0))
                for line in handle.read().decode("utf-8", errors="replace").splitlines():
                    if '"OCR job finished"' not in line:
                        continue
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if record.get("key") and record.get("ocr_pages"):
                        pages[str(record["key"])] += int(record["ocr_pages"])
        return pages

    def workload_size(self) -> int:
        return len(self.workload.expected())

    def _judge(self, result: DrillResult) -> None:
        from opensearchpy import OpenSearch

        found = self._cli("reconcile", "--against-ledger", "--pending-after", "0", "--no-progress", ok=(0, 1))
        result.reconcile = {
            k: found.get(k) for k in ("objects", "coverage_percent", "missing", "stale", "orphaned", "behind")
        }
        if found.get("coverage_percent") != 100.0 or any(
            found.get(k) for k in ("missing", "stale", "orphaned", "behind")
        ):
            result.failures.append(f"reconcile after the drill: {result.reconcile}")
        docs = indexed_documents(
            OpenSearch(hosts=[self.stack.opensearch], timeout=120),
            self.stack.env["OPENSEARCH_INDEX"],
            self.workload.bucket,
        )
        content = check_content(self.workload.expected(), docs)
        result.wrong, result.pending = len(content.mismatches), content.pending
        if not content.ok:
            result.failures.append(
                f"{len(content.mismatches)} documents wrong, {content.pending} pending: {content.mismatches[:3]}"
            )
        if any(
            result.figures.get(name)
            for name in ("written_again", "written_by_late_notifications", "ocr_pages_of_cached_results")
        ):
            result.failures.append(f"writes that must not happen: {result.figures}")

    def _ledger_entries(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {"TableName": self.stack.env["LEDGER_TABLE"]}
        while True:
            page = self.stack.dynamodb.scan(**request)
            items += [i for i in page["Items"] if i["id"]["S"].startswith("object#")]
            if "LastEvaluatedKey" not in page:
                return items
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _send(self, url: str, body: str, source: str) -> None:
        self.stack.sqs.send_message(QueueUrl=url, MessageBody=body)
        self.soak.sends.add(SentMessage(url, body, source))

    def _cli(self, *args: str, ok: tuple[int, ...] = (0,), env_file: bool = True) -> dict[str, Any]:
        """``docindex ARGS --json`` as the operator runs it; its messages recorded on their way to SQS."""
        env = {
            **os.environ,
            **self.soak.common_env(self.stack),
            "AWS_ENDPOINT_URL_SQS": self.soak.ops_proxy(self.stack).url,
            "POWERTOOLS_LOG_LEVEL": "ERROR",
        }
        argv = [sys.executable, "-m", "docindex.cli", *args, "--json"]
        if env_file:
            argv += ["--env-file", str(self.env_file)]
        result = subprocess.run(  # noqa: S603  # our own CLI, fixed argv  # nosec B603
            argv, env=env, capture_output=True, text=True, timeout=self.soak.config.drain_timeout, check=False
        )
        if result.returncode not in ok:
            raise SoakError(f"docindex {' '.join(args)} exited {result.returncode}: {result.stderr[-2000:]}")
        data: dict[str, Any] = json.loads(result.stdout) if result.stdout.strip() else {}
        data["exit_code"] = result.returncode
        return data
