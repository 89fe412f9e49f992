"""A real OpenSearch cluster's failures (issue 47): three nodes (three JVMs), one replica, the real pipeline.

Each drill runs the real indexer (fed from the ingest queue as Lambda feeds it) against a cluster of three
real OpenSearch 2.19 nodes, makes the cluster fail the way a real one does, and is judged as the operator
would judge it: ``docindex reconcile`` finds nothing missing, stale or orphaned, and the recording proxy in
front of the cluster saw no version of a document written twice.

- a data node holding the index's primary shard killed (SIGKILL: no flush, no goodbye) during a bulk, then
  started again with its data;
- the index's shards relocating to other nodes while ``docindex reindex`` copies and switches;
- write-queue rejections (429) from a node started with one write thread and a queue of one;
- a snapshot to an ``fs`` repository, restored after the index is deleted, then repaired by ``docindex
  reconcile --against-ledger --fix``.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from devkit.local.servers import ServerInfo, pid_alive
from devkit.messages import sqs_event
from devkit.opensearch import node
from devkit.opensearch.engine import NodeEngine, Space
from docindex.ops.reconcile import REMOVAL_MARGIN
from docindex.worker.pool import OcrPool
from tests.conftest import Aws, Stack, provision_stack
from tests.integration.conftest import build_indexer, invoke
from tests.support.drills import Pipeline, documents, drill_pipeline

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("cluster-drills")]

FILES = 60


@dataclass
class Cluster:
    state: Path
    nodes: list[ServerInfo]
    vector_encoding = NodeEngine.vector_encoding

    def url(self, name: str) -> str:
        return next(info.url for info in self.nodes if info.name == name)

    @property
    def client(self) -> OpenSearch:
        """A client on a node that is running (a drill may have killed another)."""
        alive = next(info for info in self.nodes if pid_alive(info.pid))
        return OpenSearch(hosts=[alive.url], timeout=60)

    def clone(self) -> Space:
        return Space(self.nodes[0].url)

    def kill(self, name: str) -> None:
        node.kill(next(info for info in self.nodes if info.name == name))

    def restart(self, name: str) -> None:
        number = next(n for n, info in enumerate(self.nodes) if info.name == name)
        self.nodes[number] = node.restart(self.nodes[number], self.state, exit_with_parent=True, nodes=len(self.nodes))

    def green(self, index: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            health = self.client.cluster.health(index=index)
            if health["status"] == "green" and health["relocating_shards"] == 0:
                return
            time.sleep(0.5)
        raise AssertionError(f"{index} not green within {timeout:.0f} s: {self.client.cluster.health(index=index)}")

    def shards(self, index: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.client.cat.shards(index=index, format="json")
        return rows


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    state = tmp_path_factory.mktemp("cluster")
    infos = node.start_cluster(state, 3, exit_with_parent=True)
    try:
        yield Cluster(state, infos)
    finally:
        for info in infos:
            node.stop(info)


def _stack_on(aws: Aws, url: str, engine: Any) -> Stack:
    # a record failed while the cluster fails over is given again 10 s later, not a minute
    return provision_stack(aws, OpenSearch(hosts=[url], timeout=60), url, engine=engine, visibility_timeout=10)


@pytest.fixture
def space(cluster: Cluster) -> Iterator[Space]:
    with cluster.clone() as opened:
        yield opened


def upload(stack: Stack, count: int, tag: str = "第1版") -> list[str]:
    keys = [f"部署{n % 5}/報告書 {n:03d}.txt" for n in range(count)]
    for key in keys:
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=f"{key} の報告 {tag} 売上と費用".encode())
    return keys


def no_version_written_twice(pipeline: Pipeline) -> None:
    """No index took one version of a document twice (a reindex copies each into the next index once)."""
    written = Counter((w.index, w.doc_id, w.version) for w in pipeline.writes.snapshot() if w.op == "index")
    assert [pair for pair, times in written.items() if times > 1] == []


def in_step(pipeline: Pipeline) -> dict[str, Any]:
    report = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0")
    assert (report["missing"], report["stale"], report["orphaned"], report["behind"]) == (0, 0, 0, 0), report
    assert report["coverage_percent"] == 100.0
    return report


# ---------------------------------------------------------------- a data node killed during a bulk


def test_a_data_node_killed_during_a_bulk_and_started_again_loses_and_doubles_nothing(
    cluster: Cluster, space: Space, aws: Aws, tmp_path: Path, ocr_pool: OcrPool
) -> None:
    # Given an index with one primary and one replica on a three-node cluster, and the node holding the
    # primary; the pipeline talks to another node, as a domain's endpoint spreads clients over nodes
    stack = _stack_on(aws, space.url, cluster)
    cluster.green(stack.index)
    primary = next(s["node"] for s in cluster.shards(stack.index) if s["prirep"] == "p")
    other = next(info.name for info in cluster.nodes if info.name != primary)
    stack = Stack(stack.aws, OpenSearch(hosts=[cluster.url(other)], timeout=60), cluster.url(other), stack.env)
    with drill_pipeline(stack, tmp_path, ocr_pool) as pipeline:
        keys = upload(stack, FILES)
        # When the primary's node is killed while the indexer is writing its bulks
        with ThreadPoolExecutor(1) as running:
            drained = running.submit(pipeline.drain, ocr=False, retried=True, max_seconds=240)
            deadline = time.monotonic() + 60
            while pipeline.index_writes() < FILES // 6 and time.monotonic() < deadline:
                time.sleep(0.01)
            before_kill = pipeline.index_writes()
            cluster.kill(primary)
            drained.result(timeout=300)
        # Then the killed node's shard was failed over (the replica became the primary) during the bulk
        assert 0 < before_kill < FILES
        assert next(s["node"] for s in cluster.shards(stack.index) if s["prirep"] == "p") != primary
        # When it is started again with its data, and the cluster is green
        cluster.restart(primary)
        cluster.green(stack.index)
        # Then every file is in the index once, at its newest version, and no version was written twice
        in_step(pipeline)
        assert set(documents(pipeline)) == set(keys)
        no_version_written_twice(pipeline)


# ---------------------------------------------------------------- shards relocating during docindex reindex


def test_shards_relocating_during_a_reindex_leave_every_document_in_the_new_index(
    cluster: Cluster, space: Space, aws: Aws, tmp_path: Path, ocr_pool: OcrPool
) -> None:
    stack = _stack_on(aws, space.url, cluster)
    with drill_pipeline(stack, tmp_path, ocr_pool) as pipeline:
        # Given an index in step with the bucket
        keys = upload(stack, FILES * 4)
        pipeline.drain(ocr=False)
        before = documents(pipeline)
        target = f"{stack.index}-v2"
        relocated: list[dict[str, Any]] = []

        def relocate_the_new_index() -> None:
            # as soon as reindex creates it, its shards are moved off the node holding its primary
            deadline = time.monotonic() + 60
            while not stack.opensearch.indices.exists(index=target) and time.monotonic() < deadline:
                time.sleep(0.02)
            shards = cluster.shards(target)
            primary = next(s["node"] for s in shards if s["prirep"] == "p")
            settings = {"index.routing.allocation.exclude._name": primary}
            stack.opensearch.indices.put_settings(index=target, body=settings)
            while time.monotonic() < deadline:
                health = stack.opensearch.cluster.health(index=target)
                if health["relocating_shards"] or health["initializing_shards"]:
                    relocated.append(health)
                if relocated and not health["relocating_shards"] and not health["initializing_shards"]:
                    return
                time.sleep(0.02)

        mover = threading.Thread(target=relocate_the_new_index)
        mover.start()
        # When docindex reindex runs (with a few seconds of settling, in which the pipeline writes on)
        pipeline.stack.aws.s3.put_object(Bucket=stack.bucket, Key=keys[0], Body="改訂 第2版".encode())
        result = pipeline.command("reindex", "--ledger-table", stack.env["LEDGER_TABLE"], "--settle", "3")
        mover.join(timeout=120)
        # Then the new index's shards moved while it was being filled and switched to
        assert relocated, "no shard relocated during the reindex"
        assert result["target"] == target
        assert result["copied"] == len(before)
        cluster.green(target)
        pipeline.drain(ocr=False)
        # ... and it holds every file at its newest version, with nothing written twice
        in_step(pipeline)
        after = documents(pipeline)
        assert set(after) == set(keys)
        assert "第2版" in after[keys[0]][1]["content"]
        assert {k: v for k, (v, _) in after.items() if k != keys[0]} == {
            k: v for k, (v, _) in before.items() if k != keys[0]
        }
        no_version_written_twice(pipeline)


# ---------------------------------------------------------------- write-queue rejections (429)


@pytest.fixture(scope="module")
def narrow_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeEngine]:
    """A node with one write thread and a write queue of one: concurrent bulks are rejected with 429."""
    engine = NodeEngine.start(
        tmp_path_factory.mktemp("narrow"), settings={"thread_pool.write.size": 1, "thread_pool.write.queue_size": 1}
    )
    yield engine
    engine.close()


def test_write_queue_rejections_are_retried_until_every_document_is_written_once(
    narrow_node: NodeEngine, aws: Aws, tmp_path: Path, ocr_pool: OcrPool
) -> None:
    with narrow_node.clone() as opened:
        stack = _stack_on(aws, opened.url, narrow_node)
        with drill_pipeline(stack, tmp_path, ocr_pool) as pipeline:
            # Given many files, announced in batches that four indexers handle at once (as Lambda scales out)
            keys = upload(stack, FILES * 2)
            stack.messages("INGEST_QUEUE_URL", delete=True)
            batches = [keys[n : n + 10] for n in range(0, len(keys), 10)]
            rejected_before = _write_rejections(stack.opensearch)

            def index(batch: list[str]) -> list[str]:
                """One indexer's batch; the bodies of the records it failed (SQS would deliver them again)."""
                indexer = build_indexer(stack, pipeline.client)
                changes = [
                    {"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"} for key in batch
                ]
                event = sqs_event(*changes)
                missed = invoke(indexer, event, timeout=120)
                return [record["body"] for record in event["Records"] if record["messageId"] in missed]

            # When they write side by side to a node whose write queue holds one request
            with ThreadPoolExecutor(4) as indexers:
                failed = [body for bodies in indexers.map(index, batches) for body in bodies]
            # Then the node rejected writes (429) ...
            assert _write_rejections(stack.opensearch) > rejected_before
            # ... and a record the indexer could not write is failed, not lost: SQS gives it again
            for body in failed:
                stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=body)
            pipeline.drain(ocr=False)
            in_step(pipeline)
            assert set(documents(pipeline)) == set(keys)
            no_version_written_twice(pipeline)


def _write_rejections(client: OpenSearch) -> int:
    stats = client.nodes.stats(metric="thread_pool")["nodes"]
    return sum(int(n["thread_pool"]["write"]["rejected"]) for n in stats.values())


# ---------------------------------------------------------------- a snapshot restored after the index is deleted


def test_a_snapshot_restored_after_the_index_is_deleted_is_repaired_to_the_bucket(
    cluster: Cluster, space: Space, aws: Aws, tmp_path: Path, ocr_pool: OcrPool
) -> None:
    stack = _stack_on(aws, space.url, cluster)
    client = stack.opensearch
    with drill_pipeline(stack, tmp_path, ocr_pool) as pipeline:
        # Given an index in step, snapshotted to an fs repository every node shares
        keys = upload(stack, FILES)
        pipeline.drain(ocr=False)
        concrete = next(iter(client.indices.get_alias(name=stack.index)))
        repository = f"drill-{uuid.uuid4().hex[:8]}"
        location = str(cluster.state / "snapshots" / repository)
        client.snapshot.create_repository(
            repository=repository, body={"type": "fs", "settings": {"location": location}}
        )
        body = {"indices": concrete, "include_global_state": False}
        taken = client.snapshot.create(repository=repository, snapshot="nightly", body=body, wait_for_completion=True)
        assert taken["snapshot"]["state"] == "SUCCESS"
        # ... then the day's changes: files edited, deleted, created
        upload(stack, 10, tag="第2版")
        for key in keys[-5:]:
            stack.aws.s3.delete_object(Bucket=stack.bucket, Key=key)
        deleted_at = time.monotonic()
        new = [f"新規/議事録 {n}.txt" for n in range(5)]
        for key in new:
            stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body="議事録 新規".encode())
        pipeline.drain(ocr=False)
        # When the index is deleted by mistake, and restored from the snapshot (with its alias)
        client.indices.delete(index=concrete)
        restored = client.snapshot.restore(
            repository=repository,
            snapshot="nightly",
            body={"indices": concrete, "include_aliases": True},
            wait_for_completion=True,
        )
        assert restored["snapshot"]["shards"]["failed"] == 0
        cluster.green(concrete)
        # Then reconcile against the ledger finds what the day changed, and --fix repairs it
        behind = pipeline.command("reconcile", "--against-ledger", "--pending-after", "0", ok=(1,))
        assert (behind["missing"], behind["stale"], behind["orphaned"]) == (len(new), 10, 5)
        time.sleep(max(0.0, deleted_at + REMOVAL_MARGIN.total_seconds() + 1 - time.monotonic()))
        pipeline.command("reconcile", "--against-ledger", "--fix", "--pending-after", "0", ok=(1,))
        pipeline.drain(ocr=False)
        in_step(pipeline)
        after = documents(pipeline)
        assert set(after) == set(keys[:-5]) | set(new)
        assert all("第2版" in after[key][1]["content"] for key in keys[:10])
        no_version_written_twice(pipeline)
