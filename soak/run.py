"""One soak run: a seed, from empty servers to a verdict.

Phases:

1. **Stack**: moto server and a real OpenSearch node started fresh, the resources
   ``template.yaml`` defines provisioned (``docindex local up``), the bucket's
   own notification removed: the harness plays S3's notification system.
2. **Faults on**; the pollers (Lambda's event source mapping, ``lambdas``
   concurrent slots) and the OCR worker process run throughout.
3. **Load**: ``documents`` new objects of every kind; poison messages on both
   queues and two S3 test events.
4. **Storm**: overwrites, deletes, re-creates, renames, bursts on the same
   keys; halfway through, ``docindex backfill`` of the whole bucket at once.
5. **Drain** until every notification is delivered and both queues are empty
   (poison messages reach their DLQs after ``maxReceiveCount`` receives).
6. **Faults off**, then one **redrive** of both DLQs (the real redrive
   service, with the local stand-in for ``StartMessageMoveTask``), and drain
   again: the redriven poison returns to its DLQ, everything else is applied.
7. **Re-sync** and **short-lived files** on the quiet pipeline; then the four
   **disaster drills** (``drills.py``), each judged on its own.
8. **Judge** (``judge.py``) and figures.

With ``previous_release`` (the default of ``python -m soak``) the pipeline starts
on that release's code and a rolling upgrade replaces it by the current code
during the load (``releases.py``, ``runtime.py``).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess  # the backfill runs as the operator runs it, fixed argv  # nosec B404
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from devkit.faults import (
    AwsFaults,
    FaultCounts,
    FaultSwitch,
    OpenSearchFaults,
    Proxy,
    SendLog,
    SentMessage,
    WriteLog,
)
from devkit.messages import S3_TEST_EVENT, ocr_poison_bodies, poison_bodies
from docindex.core.aws import queue_depth
from soak.config import KiB, SoakConfig, SoakError, Stack
from soak.delivery import Delivery
from soak.judge import (
    SAMPLES,
    announced_changes,
    check_content,
    check_dlq,
    check_failures_report,
    check_resync,
    count_writes,
    drain_bodies,
    indexed_documents,
    previous_embed_jobs,
    queued_ocr_jobs,
    run_reconcile,
)
from soak.mover import LocalMessageMover
from soak.releases import checkout, python_path
from soak.sandbox import (
    RELEASE_ENV,
    SABOTAGE_ENV,
    WRITE_DELAY_ENV,
    WRITE_DELAYED,
    KillSwitch,
    Poller,
    PollerStats,
    Sandbox,
)
from soak.workerproc import WorkerFaultStats, WorkerProcess
from soak.workload import RACE_FOLDER, Workload

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}  # nosec B105 - moto's, never AWS's


def _visible(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"])


class Soak:
    """Runs one seed; ``run()`` returns the figures and the verdict as a dict."""

    def __init__(self, config: SoakConfig, *, echo: Callable[[str], None] | None = None) -> None:
        self.config = config
        self.echo = echo or (lambda text: print(text, file=sys.stderr, flush=True))
        self.dir = config.state_dir / f"seed-{config.seed}"
        self.switch = FaultSwitch()
        self.writes = WriteLog()
        self.sends = SendLog()
        self.generations_rolled_back: set[str] = set()
        self.counts = FaultCounts()
        self._ops: Proxy | None = None
        self._reconcile: subprocess.Popen[str] | None = None
        # The indexer's GetObject requests by /bucket/key (the re-sync phase's judge reads them).
        self.lambda_gets: Counter[str] = Counter()
        self.worker_gets: Counter[str] = Counter()
        self._gets_lock = threading.Lock()
        self.phases: dict[str, float] = {}
        self.pollers: list[Poller] = []
        self.worker: WorkerProcess | None = None
        # The previous release's, while a rolling upgrade is played (stopped halfway through the load).
        self.previous_pollers: list[Poller] = []
        self.previous_worker: WorkerProcess | None = None
        self._lambda_aws: Proxy | None = None
        self.delivery: Delivery | None = None
        self._proxies: list[Proxy] = []
        self._servers: list[tuple[Any, Any]] = []  # (how to stop it, the server)
        self._backfill: subprocess.Popen[str] | None = None

    # -- the run

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        try:
            result = self._run()
        finally:
            self._teardown()
        result["wall_seconds"] = round(time.monotonic() - started, 1)
        result["phases_seconds"] = self.phases
        result["config"] = self.config.to_dict()
        result["logs"] = str(self.dir)
        return result

    def _timed(self, name: str, step: Callable[[], Any]) -> Any:
        started = time.monotonic()
        try:
            return step()
        finally:
            self.phases[name] = round(time.monotonic() - started, 1)

    def _run(self) -> dict[str, Any]:
        config, echo = self.config, self.echo
        echo(f"soak seed {config.seed}: {config.documents} documents, {config.storm_operations} storm operations")
        stack = self._timed("setup", self._start_stack)
        self._start_pipeline(stack)
        ingest_poison, ocr_poison = self._inject_poison(stack)
        assert self.delivery is not None
        workload = Workload(
            s3=stack.s3,
            bucket=stack.env["DOCINDEX_BUCKET"],
            seed=config.seed,
            emit=self.delivery.announce,
            large_bytes=config.max_object_bytes + 40 * KiB,
            was_read=self._read_by_indexer(stack.env["DOCINDEX_BUCKET"]),
        )
        workload.storm_odds.update(config.storm_weights)
        workload.weigh_kinds(dict(config.kind_weights))
        milestones = self._rolling_upgrade_milestones(stack, workload)
        self._timed("load", lambda: workload.initial_load(config.documents, milestones=milestones))
        echo(f"  loaded {config.documents} documents in {self.phases['load']} s")
        backfill_start = (lambda: self._start_backfill(stack)) if config.backfill else None
        reconcile_start = (lambda: self._start_reconcile_fix(stack)) if config.reconcile_fix else None
        self._timed(
            "storm",
            lambda: workload.storm(config.storm_operations, halfway=backfill_start, three_quarters=reconcile_start),
        )
        echo(f"  storm of {config.storm_operations} operations in {self.phases['storm']} s")
        backfill = self._timed("backfill_wait", self._finish_backfill)
        reconcile_fix = self._timed("reconcile_fix_wait", self._finish_reconcile_fix)
        self._timed("drain_with_faults", lambda: self.drain(stack, "with faults"))

        # The faults stop; then one redrive run of both DLQs.
        self.switch.active = False
        for worker in filter(None, (self.worker, self.previous_worker)):
            worker.kill_probability = 0.0
        dead = {
            "ingest": _visible(stack.sqs, stack.env["INGEST_DLQ_URL"]),
            "ocr": _visible(stack.sqs, stack.env["OCR_DLQ_URL"]),
            "embed": _visible(stack.sqs, stack.env["EMBED_DLQ_URL"]),
        }
        echo(
            f"  faults stopped; dead-lettered: {dead['ingest']} ingest, {dead['ocr']} OCR, {dead['embed']} embed; "
            "redriving"
        )
        mover = LocalMessageMover(stack.sqs, sends=self.sends)
        redrive = self._timed("redrive", lambda: self._redrive(stack, mover))
        self._timed("drain_after_redrive", lambda: self.drain(stack, "after the redrive"))
        resync = self._timed("resync", lambda: self._resync(stack, workload)) if config.resync else None
        self._timed("race", lambda: self._race(stack, workload))
        drills = None
        if config.drills:
            from soak.drills import Drills

            runner = Drills(self, stack, workload, share=config.drill_share, poison=ingest_poison + ocr_poison)
            drills = self._timed("drills", runner.run)
        self._stop_pipeline()

        result = self._timed("judge", lambda: self._judge(stack, workload, ingest_poison, ocr_poison))
        if resync is not None and not resync.ok:
            result["passed"] = False
            result["failures"].append(
                f"re-sync: {len(resync.body_reads)} unchanged re-uploads read their body, "
                f"{len(resync.not_unchanged)} not applied as unchanged, {len(resync.extracted)} copies/renames "
                f"extracted again, {len(resync.ocr_jobs)} queued OCR"
            )
        result["resync"] = resync.to_dict() if resync is not None else None
        if drills is not None:
            result["drills"] = [d.to_dict() for d in drills]
            for drill in drills:
                if drill.failures:
                    result["passed"] = False
                    result["failures"] += [f"drill {drill.name}: {failure}" for failure in drill.failures]
        result.update(self._figures(workload=workload, dead=dead, mover=mover, redrive=redrive, backfill=backfill))
        result["reconcile_fix_mid_storm"] = reconcile_fix
        return result

    # -- setup

    def _start_stack(self) -> Stack:
        import boto3

        from devkit.local.servers import start_moto, stop
        from devkit.local.session import LOCAL_NODE_VECTOR_ENCODING, local_up
        from devkit.opensearch.node import start_node
        from devkit.opensearch.node import stop as stop_node
        from docindex.core.clients import boto_config

        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        moto = start_moto(self.dir, exit_with_parent=True)
        self._servers.append((stop, moto))
        # a real OpenSearch node of the soak's own (devkit.opensearch), stopped with it
        node = start_node(self.dir, exit_with_parent=True)
        self._servers.append((stop_node, node))
        os.environ.update(CREDENTIALS)
        env = local_up(
            state_dir=self.dir,
            env_file=self.dir / "soak.env",
            aws_endpoint=moto.url,
            opensearch_endpoint=node.url,
            vector_encoding=LOCAL_NODE_VECTOR_ENCODING,
            prefix=f"soak{self.config.seed}",
            function_timeout=self.config.function_timeout,
            max_receive_count=self.config.max_receive_count,
            visibility_timeout=self.config.ingest_visibility,
            ocr_visibility_timeout=60,
            log_level="INFO",
        )
        env.update(CREDENTIALS)
        from docindex.ops.envfile import write_env_file

        write_env_file(self.dir / "soak.env", env)
        session = boto3.Session(region_name=env["AWS_REGION"], **{k.lower(): v for k, v in CREDENTIALS.items()})
        config = boto_config(pool=64)
        clients = [session.client(s, endpoint_url=moto.url, config=config) for s in ("s3", "sqs", "dynamodb")]
        stack = Stack(env, *clients)
        self.harness_settings(stack)
        return stack

    def harness_settings(self, stack: Stack) -> None:
        """What the soak changes in what `docindex local up` provisions (again after a drill re-runs it)."""
        env = stack.env
        self._short_gc_deletes(stack.opensearch, env["OPENSEARCH_INDEX"])
        stack.s3.put_bucket_notification_configuration(Bucket=env["DOCINDEX_BUCKET"], NotificationConfiguration={})
        # `local up` gives the OCR queue its own maxReceiveCount; the soak uses one for both.
        for queue, dlq in (("OCR_QUEUE_URL", "OCR_DLQ_ARN"), ("EMBED_QUEUE_URL", "EMBED_DLQ_ARN")):
            policy = {"deadLetterTargetArn": env[dlq], "maxReceiveCount": self.config.max_receive_count}
            stack.sqs.set_queue_attributes(QueueUrl=env[queue], Attributes={"RedrivePolicy": json.dumps(policy)})

    def _short_gc_deletes(self, url: str, index: str) -> None:
        """A delete's tombstone lives ``gc_deletes_seconds`` (``docindex local up`` created the index)."""
        from opensearchpy import OpenSearch

        client = OpenSearch(hosts=[url], timeout=30)
        value = f"{round(self.config.gc_deletes_seconds * 1000)}ms"  # no fractional seconds in time values
        client.indices.put_settings(index=index, body={"index": {"gc_deletes": value}})
        applied = client.indices.get_settings(index=index)
        if not any(str(settings["settings"]["index"].get("gc_deletes")) == value for settings in applied.values()):
            raise SoakError(f"the local index did not take gc_deletes: {applied}")

    def _proxy(self, upstream: str, behaviour: Any) -> Proxy:
        proxy = Proxy(upstream, behaviour).start()
        self._proxies.append(proxy)
        return proxy

    def common_env(self, stack: Stack) -> dict[str, str]:
        config = self.config
        env = {
            **stack.env,
            **CREDENTIALS,
            "OPENSEARCH_AUTH": "none",
            "MAX_OBJECT_BYTES": str(config.max_object_bytes),
            # Every version's token is near the start: the storm's files need no more text than that.
            "MAX_CONTENT_CHARS": "8000",
            "INDEXER_CONCURRENCY": str(config.record_concurrency),
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "AWS_ENDPOINT_URL": stack.moto,
        }
        if config.sabotage:
            env[SABOTAGE_ENV] = ",".join(config.sabotage)
        if config.write_delay_probability > 0:
            low, high = config.write_delay_seconds
            env[WRITE_DELAY_ENV] = (
                f"{config.write_delay_probability}:{low}:{high}:{config.seed}:{config.gc_deletes_seconds}:"
                f"/{RACE_FOLDER}/"
            )
        return env

    def _start_pipeline(self, stack: Stack) -> None:
        """The indexer's invocation slots and the OCR worker (the previous release's first, when rolling)."""
        config = self.config
        release = self._release_root()
        self.pollers = self._start_indexers(stack, range(config.lambdas), release=release)
        self.worker = self._start_worker(stack, release=release)
        self.delivery = Delivery(
            sqs=stack.sqs,
            queue_url=stack.env["INGEST_QUEUE_URL"],
            seed=config.seed,
            sends=self.sends,
            faults=config.delivery,
        ).start()
        for poller in self.pollers:
            poller.start()

    def _release_root(self) -> Path | None:
        """The previous release's files, when the run starts on it (extracted once per state dir)."""
        if not self.config.previous_release:
            return None
        return checkout(self.config.previous_release, self.config.state_dir / "releases")

    def _start_indexers(self, stack: Stack, slots: Iterable[int], *, release: Path | None) -> list[Poller]:
        """One poller per slot, each with its sandbox and its own OpenSearch proxy (a kill follows its writes)."""
        config = self.config
        common = self.common_env(stack)
        if release is not None:
            common[RELEASE_ENV] = str(release)
        if self._lambda_aws is None:
            self._lambda_aws = self._proxy(
                stack.moto,
                AwsFaults(
                    client="lambda",
                    switch=self.switch,
                    rates=config.s3,
                    seed=config.seed,
                    sends=self.sends,
                    counts=self.counts,
                    on_get_object=self._count_lambda_get,
                ),
            )
        lambda_aws = self._lambda_aws
        pollers = []
        for slot in slots:
            kill_switch = KillSwitch(config.seed, f"slot-{slot}")
            os_proxy = self._proxy(
                stack.opensearch,
                OpenSearchFaults(
                    client=f"lambda-{slot}",
                    switch=self.switch,
                    rates=config.opensearch,
                    seed=config.seed + slot,
                    log=self.writes,
                    counts=self.counts,
                    on_bulk_written=kill_switch.on_written,
                ),
            )
            env = {
                **common,
                "OPENSEARCH_ENDPOINT": os_proxy.url,
                "AWS_ENDPOINT_URL_S3": lambda_aws.url,
                "AWS_ENDPOINT_URL_SQS": lambda_aws.url,
            }
            sandbox = Sandbox(env, self.dir / f"indexer-{slot}.log")
            kill_switch.sandbox = sandbox
            pollers.append(
                Poller(
                    name=str(slot),
                    sqs=stack.sqs,
                    queue_url=stack.env["INGEST_QUEUE_URL"],
                    queue_arn=stack.env["INGEST_QUEUE_ARN"],
                    sandbox=sandbox,
                    kill_switch=kill_switch,
                    function_timeout=config.function_timeout,
                    batch_size=config.batch_size,
                    kill_probability=lambda: config.kill_probability if self.switch.active else 0.0,
                )
            )
        return pollers

    def _start_worker(self, stack: Stack, *, release: Path | None) -> WorkerProcess:
        """The OCR worker as ECS runs it, with its own proxies (a kill follows its downloads)."""
        config = self.config
        name = "worker-previous" if release is not None else "worker"
        worker = WorkerProcess({}, self.dir / f"{name}.log", seed=config.seed + (7 if release is not None else 0))
        worker_aws = self._proxy(
            stack.moto,
            AwsFaults(
                client=name,
                switch=self.switch,
                rates=config.s3,
                seed=config.seed + 1000,
                sends=self.sends,
                counts=self.counts,
                on_get_object=functools.partial(self._worker_download, worker),
            ),
        )
        worker_os = self._proxy(
            stack.opensearch,
            OpenSearchFaults(
                client=name,
                switch=self.switch,
                rates=config.opensearch,
                seed=config.seed + 1000,
                log=self.writes,
                counts=self.counts,
            ),
        )
        worker.env = {
            **self.common_env(stack),
            "OPENSEARCH_ENDPOINT": worker_os.url,
            "AWS_ENDPOINT_URL_S3": worker_aws.url,
            "WORKER_CONCURRENCY": str(config.worker_concurrency),
            "WORKER_HEARTBEAT_SECONDS": "1",
            "WORKER_WAIT_SECONDS": "1",
            "WORKER_RETRY_DELAY_SECONDS": "1",
            # The soak kills OCR processes at random whatever the file (seed 4: 214 in one run), far
            # more often than production, where a process dies because of its file (what the
            # default quarantine after 3 deaths is for): at 3, a few ordinary scans killed three
            # times by chance were quarantined (seed 4: 18 documents).
            "WORKER_QUARANTINE_AFTER_FAILURES": "10",
            "WORKER_SHUTDOWN_GRACE_SECONDS": "5",
            "WORKER_METRICS_FLUSH_SECONDS": "2",
        }
        if config.worker_range_pages:
            worker.env["WORKER_RANGE_PAGES"] = str(config.worker_range_pages)
        if release is not None:
            worker.env["PYTHONPATH"] = python_path(release)
        worker.kill_probability = config.worker_kill_probability
        return worker.start()

    def _rolling_upgrade_milestones(self, stack: Stack, workload: Workload) -> dict[int, Callable[[], None]]:
        """When, during the load, the current release joins and the previous one stops (none: not rolling)."""
        documents = self.config.documents
        if not self.config.previous_release:
            return {}
        workload.era = "previous"

        def finish() -> None:
            self._timed("roll_finish", self._roll_forward_finish)
            workload.era = "current"

        return {
            documents // 3: lambda: self._timed("roll_start", lambda: self._roll_forward_start(stack)),
            2 * documents // 3: finish,
        }

    def _until(self, condition: Callable[[], bool], seconds: float, what: str) -> None:
        """Wait (bounded) for ``condition``: a phase of the upgrade starts once the releases did some work."""
        deadline = time.monotonic() + seconds
        while not condition():
            self._check_alive()
            if time.monotonic() > deadline:
                self.echo(f"  rolling upgrade: went on without {what} after {seconds:.0f} s")
                return
            time.sleep(0.2)

    @staticmethod
    def _applied(pollers: list[Poller]) -> int:
        return int(sum(p.stats.metrics.get("DocumentsIndexed", 0) for p in pollers))

    def _jobs_finished(self, log: Path) -> int:
        try:
            return log.read_text(encoding="utf-8", errors="replace").count('"OCR job finished"')
        except OSError:
            return 0

    def _roll_forward_start(self, stack: Stack) -> None:
        """A deployment of the current code begins: new indexer slots and a new worker join the old ones.

        Not before the previous release has indexed something (a loaded machine starts it slowly).
        """
        config = self.config
        self._until(lambda: self._applied(self.pollers) > 0, 120, "a change applied by the previous release")
        self.previous_pollers = list(self.pollers)
        self.previous_worker = self.worker
        new = self._start_indexers(stack, range(config.lambdas, 2 * config.lambdas), release=None)
        self.worker = self._start_worker(stack, release=None)
        if self.previous_worker is not None:
            self.worker.kill_probability = self.previous_worker.kill_probability
        for poller in new:
            poller.start()
        self.pollers += new
        self.echo("  rolling upgrade: the current release's indexer slots and worker started beside the previous one")

    def _roll_forward_finish(self) -> None:
        """The deployment ends: the old slots finish their invocation, the old worker gets SIGTERM.

        Not before both releases did work side by side: the current indexer applied a change, and
        the previous worker finished a job (when the load has given it one in time).
        """
        current = [p for p in self.pollers if p not in self.previous_pollers]
        self._until(lambda: self._applied(current) > 0, 120, "a change applied by the current release")
        self._until(
            lambda: self._jobs_finished(self.dir / "worker-previous.log") > 0, 90, "an OCR job of the previous worker"
        )
        for poller in self.previous_pollers:
            poller.stop()
        if self.previous_worker is not None:
            self.previous_worker.stop(grace=30.0)
        self.echo("  rolling upgrade: the previous release's indexer slots and worker stopped")

    def _inject_poison(self, stack: Stack) -> tuple[list[str], list[str]]:
        """Poison first: it needs maxReceiveCount receives to reach its DLQ."""
        assert self.delivery is not None
        if not self.config.poison:
            return [], []
        ingest = poison_bodies(stack.env["DOCINDEX_BUCKET"])
        for body in ingest:
            self.delivery.send_raw(body, poison=True)
        for _ in range(2):
            self.delivery.send_raw(json.dumps(S3_TEST_EVENT), test_event=True)
        ocr = ocr_poison_bodies()
        for body in ocr:
            stack.sqs.send_message(QueueUrl=stack.env["OCR_QUEUE_URL"], MessageBody=body)
            self.sends.add(SentMessage(stack.env["OCR_QUEUE_URL"], body, "poison"))
        return ingest, ocr

    def ops_proxy(self, stack: Stack) -> Proxy:
        """The operator's side: the messages its commands send are recorded on their way to SQS."""
        if self._ops is None:
            self._ops = self._proxy(
                stack.moto,
                AwsFaults(client="ops", switch=self.switch, rates=None, seed=0, sends=self.sends, counts=self.counts),
            )
        return self._ops

    def _start_reconcile_fix(self, stack: Stack) -> None:
        env = {
            **os.environ,
            **self.common_env(stack),
            "AWS_ENDPOINT_URL_SQS": self.ops_proxy(stack).url,
            "POWERTOOLS_LOG_LEVEL": "ERROR",
        }
        argv = [sys.executable, "-m", "docindex.cli", "reconcile", "--env-file", str(self.dir / "soak.env")]
        argv += ["--fix", "--json", "--no-progress"]
        self._reconcile = subprocess.Popen(  # noqa: S603  # our own CLI, fixed argv  # nosec B603
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.echo("  reconcile --fix started (three quarters into the storm)")

    def _finish_reconcile_fix(self) -> dict[str, Any]:
        process = self._reconcile
        if process is None:
            return {}
        out, err = process.communicate(timeout=self.config.drain_timeout)
        self._reconcile = None
        if process.returncode not in (0, 1):  # 1: differences found (and enqueued)
            raise SoakError(f"docindex reconcile --fix failed ({process.returncode}): {err[-2000:]}")
        data: dict[str, Any] = json.loads(out)
        keys = [
            *("missing", "stale", "orphaned", "enqueued_created", "enqueued_removed"),
            *("orphans_reappeared", "orphans_unconfirmed"),
        ]
        result = {k: data.get(k) for k in keys}
        self.echo(f"  reconcile --fix mid-storm: {result}")
        return result

    def _race(self, stack: Stack, workload: Workload) -> None:
        """Short-lived files on a quiet pipeline, their writes held until their deletes overtake them."""
        workload.race_phase(self.config.resync_objects)
        self.drain(stack, "after the short-lived files")

    def _start_backfill(self, stack: Stack) -> None:
        ops = self.ops_proxy(stack)
        env = {
            **os.environ,
            **self.common_env(stack),
            "AWS_ENDPOINT_URL_SQS": ops.url,
            "POWERTOOLS_LOG_LEVEL": "ERROR",
        }
        argv = [sys.executable, "-m", "docindex.cli", "backfill", "--env-file", str(self.dir / "soak.env")]
        argv += ["--checkpoint", str(self.dir / "backfill.json"), "--rate", "200", "--max-backlog", "300"]
        argv += ["--json", "--no-progress"]
        self._backfill = subprocess.Popen(  # noqa: S603  # our own CLI, fixed argv  # nosec B603
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.echo("  backfill of the whole bucket started (mid-storm)")

    def _finish_backfill(self) -> dict[str, Any]:
        process = self._backfill
        if process is None:
            return {}
        out, err = process.communicate(timeout=self.config.drain_timeout)
        self._backfill = None
        if process.returncode != 0:
            raise SoakError(f"docindex backfill failed ({process.returncode}): {err[-2000:]}")
        result: dict[str, Any] = json.loads(out)
        self.echo(f"  backfill enqueued {result.get('enqueued')} objects")
        return result

    def metric_totals(self) -> Counter[str]:
        """Every metric the indexer slots and the workers emitted so far, summed (counts)."""
        from devkit.local.runner import collect_emf

        totals: defaultdict[str, float] = defaultdict(float)
        for poller in self.pollers:
            for name, value in poller.stats.metrics.items():
                totals[name] += value
        for log in sorted(self.dir.glob("worker*.log")):
            collect_emf(log.read_text(errors="replace"), totals)
        return Counter({name: int(value) for name, value in totals.items()})

    def object_reads(self) -> Counter[str]:
        """GetObject requests of the documents bucket so far, by /bucket/key (the indexer's and the workers')."""
        with self._gets_lock:
            return Counter(self.lambda_gets) + Counter(self.worker_gets)

    def _worker_download(self, worker: WorkerProcess, path: str) -> None:
        with self._gets_lock:
            self.worker_gets[path] += 1
        worker.on_job_download(path)

    def _read_by_indexer(self, bucket: str) -> Callable[[str], bool]:
        def was_read(key: str) -> bool:
            with self._gets_lock:
                return self.lambda_gets[f"/{bucket}/{key}"] > 0

        return was_read

    def _count_lambda_get(self, path: str) -> None:
        with self._gets_lock:
            self.lambda_gets[path] += 1

    def _resync(self, stack: Stack, workload: Workload) -> Any:
        """The last phase: unchanged re-uploads, copies and renames of complete documents, judged."""
        with self._gets_lock:
            gets_before = Counter(self.lambda_gets)
        sent_before = len(self.sends.snapshot())
        # Only this phase's log records judge it (an earlier "unchanged" of the key proves nothing).
        logs_before = {log: log.stat().st_size for log in self.dir.glob("indexer-*.log")}
        plan = workload.resync_phase(self.config.resync_objects)
        self.drain(stack, "after the re-sync")
        with self._gets_lock:
            gets = Counter(self.lambda_gets) - gets_before
        lines: list[str] = []
        for log in sorted(self.dir.glob("indexer-*.log")):
            with log.open("rb") as handle:
                handle.seek(logs_before.get(log, 0))
                lines.extend(handle.read().decode("utf-8", errors="replace").splitlines())
        report = check_resync(
            plan,
            bucket=workload.bucket,
            gets=gets,
            log_lines=lines,
            messages=self.sends.snapshot()[sent_before:],
            ocr_url=stack.env["OCR_QUEUE_URL"],
        )
        self.echo(
            f"  re-sync: {report.resynced} re-uploads ({sum(report.body_reads.values())} body reads), "
            f"{report.copied} copies and {report.renamed} renames ({len(report.extracted)} extracted, "
            f"{len(report.ocr_jobs)} OCR jobs)"
        )
        return report

    # -- waiting

    def _check_alive(self) -> None:
        for poller in self.pollers:
            if poller.error is not None:
                raise SoakError(f"an event source poller died: {poller.error!r}")
        if self.delivery is not None and self.delivery.error is not None:
            raise SoakError(f"the notification sender died: {self.delivery.error!r}")

    def drain(self, stack: Stack, when: str) -> None:
        """Until every notification is sent, both queues are empty and no invocation runs."""
        deadline = time.monotonic() + self.config.drain_timeout
        urls = [stack.env["INGEST_QUEUE_URL"], stack.env["OCR_QUEUE_URL"], stack.env["EMBED_QUEUE_URL"]]
        quiet, last_report = 0, time.monotonic()
        while quiet < 3:
            self._check_alive()
            pending = self.delivery.pending if self.delivery else 0
            depth = sum(queue_depth(stack.sqs, url) for url in urls)
            if time.monotonic() > deadline:
                raise SoakError(
                    f"not drained {when} within {self.config.drain_timeout:.0f} s: "
                    f"{pending} notifications unsent, {depth} messages in the queues"
                )
            busy = any(p.busy for p in self.pollers)
            quiet = quiet + 1 if depth == 0 and pending == 0 and not busy else 0
            if time.monotonic() - last_report > 15:
                last_report = time.monotonic()
                self.echo(f"  draining {when}: {pending} notifications to send, {depth} messages in the queues")
            time.sleep(0.5)

    def _redrive(self, stack: Stack, mover: LocalMessageMover) -> list[dict[str, Any]]:
        from opensearchpy import OpenSearch

        from docindex.redrive.models import RedriveAction, RedriveRequest
        from docindex.redrive.probes import OpenSearchHealth
        from docindex.redrive.service import RedriveService
        from docindex.redrive.settings import RedriveSettings
        from docindex.redrive.state import RedriveStateStore

        env = stack.env
        settings = RedriveSettings.from_env(
            {
                "REDRIVE_STATE_TABLE": env["LEDGER_TABLE"],
                "INGEST_DLQ_ARN": env["INGEST_DLQ_ARN"],
                "OCR_DLQ_ARN": env["OCR_DLQ_ARN"],
                "EMBED_DLQ_ARN": env["EMBED_DLQ_ARN"],
                "REDRIVE_VELOCITY": "100",
                "OPENSEARCH_ENDPOINT": env["OPENSEARCH_ENDPOINT"],
                "OPENSEARCH_INDEX": env["OPENSEARCH_INDEX"],
                "OPENSEARCH_AUTH": "none",
                "AWS_REGION": env["AWS_REGION"],
            }
        )
        client = OpenSearch(hosts=[env["OPENSEARCH_ENDPOINT"]], timeout=10)
        service = RedriveService(
            settings=settings,
            sqs=stack.sqs,
            move_tasks=mover,
            state=RedriveStateStore(stack.dynamodb, settings.state_table),
            health=OpenSearchHealth(client, "es", env["OPENSEARCH_INDEX"]),
        )
        results = [r.to_dict() for r in service.run(RedriveRequest(action=RedriveAction.START)).results]
        for r in results:
            name = str(r.get("dlq_arn", "")).rsplit(":", 1)[-1]
            self.echo(f"  redrive {name}: {r.get('status')} {r.get('reason') or ''} {r.get('message') or ''}".rstrip())
        mover.wait()
        return results

    # -- teardown

    def _stop_pipeline(self) -> None:
        for poller in self.pollers:
            poller.stop()
        for worker in filter(None, (self.worker, self.previous_worker)):
            worker.stop()
        if self.delivery is not None:
            self.delivery.close()

    def _teardown(self) -> None:
        """Stop everything this run started (fast: after a failure nothing is waited for)."""

        steps: list[Callable[[], None]] = []
        for poller in self.pollers:
            steps.append(poller.abort)
        for worker in filter(None, (self.worker, self.previous_worker)):
            steps.append(functools.partial(worker.stop, grace=0))
        if self.delivery is not None:
            steps.append(self.delivery.close)
        if self._backfill is not None:
            steps.append(self._backfill.kill)
        if self._reconcile is not None:
            steps.append(self._reconcile.kill)
        steps += [proxy.stop for proxy in self._proxies]
        steps += [functools.partial(stopper, info) for stopper, info in self._servers]
        for step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - teardown goes on
                self.echo(f"  teardown: {type(exc).__name__}: {exc}")

    # -- verdict and figures

    def _judge(
        self, stack: Stack, workload: Workload, ingest_poison: list[str], ocr_poison: list[str]
    ) -> dict[str, Any]:
        from opensearchpy import OpenSearch

        env, failures = stack.env, []
        reconcile = run_reconcile(self.dir / "soak.env")
        clean = all(reconcile.get(k) == 0 for k in ("missing", "stale", "orphaned"))
        if not (clean and reconcile.get("coverage_percent") == 100.0):
            failures.append(
                f"reconcile: coverage {reconcile.get('coverage_percent')} %, missing {reconcile.get('missing')}, "
                f"stale {reconcile.get('stale')}, orphaned {reconcile.get('orphaned')}"
            )
        messages = self.sends.snapshot()
        self._dump("sends.jsonl", [m.__dict__ for m in messages])
        self._dump("writes.jsonl", [w.__dict__ for w in self.writes.snapshot()])
        writes = count_writes(
            self.writes.snapshot(),
            announced_changes(messages, env["INGEST_QUEUE_URL"]),
            queued_ocr_jobs(messages, env["OCR_QUEUE_URL"], env["EMBED_QUEUE_URL"]),
            rolled_back=self.generations_rolled_back,
        )
        if not writes.ok:
            # The first violations themselves: a failed CI run keeps only this line of the report.
            first = "; ".join(json.dumps(v, ensure_ascii=False) for v in writes.violations[:3])
            failures.append(
                f"writes: {writes.duplicate_writes} duplicate writes ({len(writes.violations)} violations: {first})"
            )
        dlqs = [
            check_dlq("ingest", drain_bodies(stack.sqs, env["INGEST_DLQ_URL"]), ingest_poison),
            check_dlq("ocr", drain_bodies(stack.sqs, env["OCR_DLQ_URL"]), ocr_poison),
            check_dlq("embed", drain_bodies(stack.sqs, env["EMBED_DLQ_URL"]), []),
        ]
        failures += [
            f"{d.queue} DLQ: {len(d.unexpected)} unexpected messages, {len(d.missing_poison)} poison missing"
            for d in dlqs
            if not d.ok
        ]
        docs = indexed_documents(
            OpenSearch(hosts=[stack.opensearch], timeout=60), env["OPENSEARCH_INDEX"], workload.bucket
        )
        expected = workload.expected()
        content = check_content(expected, docs)
        if not content.ok:
            failures.append(f"content: {len(content.mismatches)} documents wrong, {content.pending} left pending")
        unread = check_failures_report(self.dir / "soak.env", workload.bucket, docs)
        if unread["missing_count"] or unread["listed_twice"]:
            failures.append(
                f"docindex failures: {unread['missing_count']} documents with an extraction_error not listed, "
                f"{unread['listed_twice']} listed twice"
            )
        paginator = stack.s3.get_paginator("list_objects_v2")
        listed = {o["Key"] for page in paginator.paginate(Bucket=workload.bucket) for o in page.get("Contents", [])}
        if listed != set(expected):
            failures.append(f"model: the bucket holds {len(listed)} objects, the workload expects {len(expected)}")
        rolling = (
            self._rolling_upgrade(ingest_poison + ocr_poison, env["OCR_QUEUE_URL"])
            if self.config.previous_release
            else None
        )
        if rolling is not None and rolling["embed_jobs_taken_by_previous"]:
            failures.append(
                f"rolling upgrade: the previous release took {rolling['embed_jobs_taken_by_previous']} embed jobs "
                "from the OCR queue (for jobs to OCR)"
            )
        if rolling is not None and rolling["unreadable_by_previous"]:
            failures.append(
                f"rolling upgrade: the previous release failed {rolling['unreadable_by_previous']} messages "
                "of the current one as poison"
            )
        keys = ("objects", "documents", "in_sync", "missing", "stale", "orphaned", "coverage_percent", "samples")
        return {
            "rolling_upgrade": rolling,
            "seed": self.config.seed,
            "passed": not failures,
            "failures": failures,
            "reconcile": {k: reconcile.get(k) for k in (*keys, "exit_code")},
            "writes": writes.to_dict(),
            "dlq": [d.to_dict() for d in dlqs],
            "content": content.to_dict(),
            "failures_report": unread,
        }

    def _rolling_upgrade(self, poison: list[str], ocr_url: str) -> dict[str, Any]:
        """What the previous release did while it shared the queues, and what it could not read.

        A message the previous release's indexer or worker logged as poison that is not one of the
        run's poison bodies came from the current release in a shape the previous one cannot
        read: during a real deployment it would spend its receives there and be dead-lettered.
        """
        from devkit.local.runner import collect_emf

        previews = {body[:200] for body in poison}
        logs = [self.dir / f"indexer-{p.name}.log" for p in self.previous_pollers]
        logs.append(self.dir / "worker-previous.log")
        unreadable: list[str] = []
        failed = 0  # job attempts and records the previous release failed (faults, or the current one's data)
        previous_worker_log = self.dir / "worker-previous.log"
        embed = previous_embed_jobs(
            previous_worker_log.read_text(encoding="utf-8", errors="replace").splitlines()
            if previous_worker_log.exists()
            else [],
            self.sends.snapshot(),
            ocr_url,
        )
        for log in filter(Path.exists, logs):
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
                failed += '"OCR job failed' in line or '"record failed"' in line
                if '"poison message' not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                preview = str(record.get("body_preview", ""))
                if str(record.get("message", "")).startswith("poison message") and preview not in previews:
                    unreadable.append(preview)
        stats = PollerStats()
        for poller in self.previous_pollers:
            stats.merge(poller.stats)
        worker: defaultdict[str, float] = defaultdict(float)
        if (self.dir / "worker-previous.log").exists():
            collect_emf((self.dir / "worker-previous.log").read_text(errors="replace"), worker)
        current = PollerStats()
        for poller in self.pollers:
            if poller not in self.previous_pollers:
                current.merge(poller.stats)
        if (self.dir / "worker.log").exists():
            collect_emf((self.dir / "worker.log").read_text(errors="replace"), current.metrics)
        return {
            "previous_release": self.config.previous_release,
            "previous_invocations": stats.invocations,
            "previous_records": stats.records,
            "previous_changes_applied": int(
                stats.metrics.get("DocumentsIndexed", 0) + stats.metrics.get("DocumentsDeleted", 0)
            ),
            "previous_ocr_jobs": int(worker.get("OcrJobsCompleted", 0) + worker.get("OcrJobsFailed", 0)),
            "previous_ocr_ranges": int(worker.get("OcrRangesCompleted", 0)),
            "previous_failures": failed,
            "unreadable_by_previous": len(unreadable),
            "unreadable_samples": unreadable[:SAMPLES],
            "deferred_by_current": int(current.metrics.get("MessagesDeferred", 0)),
            "embed_jobs_queued_by_current": int(current.metrics.get("EmbedJobsQueued", 0)),
            # Meaning search's jobs the previous worker finished, and of them those it took from the OCR
            # queue (possibly for jobs to OCR: judge.previous_embed_jobs).
            "embed_jobs_finished_by_previous": embed.finished,
            "embed_jobs_taken_by_previous": embed.from_ocr_queue,
        }

    def _process_deaths(self, killed: int, pages_redone: int) -> dict[str, Any]:
        """What a killed OCR pool process cost: the job attempts it broke and the pages they read again."""
        broken = 0
        for log in self.dir.glob("worker*.log"):
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
                broken += '"OCR job failed' in line and "an OCR process died" in line
        return {
            "pool_processes_killed": killed,
            "job_attempts_broken": broken,
            "pages_redone": pages_redone,
            "jobs_per_death": round(broken / killed, 2) if killed else None,
            "pages_per_death": round(pages_redone / killed, 2) if killed else None,
        }

    def _delayed_writes(self) -> dict[str, int]:
        """Document writes the write-delay fault held, and those overtaken meanwhile (one log line each)."""
        held = overtaken = 0
        for log in self.dir.glob("indexer-*.log"):
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
                if f'"{WRITE_DELAYED}"' in line:
                    held += 1
                    overtaken += '"overtaken": true' in line
        return {"held": held, "overtaken_while_held": overtaken}

    def _dump(self, name: str, rows: list[dict[str, Any]]) -> None:
        """What the proxies recorded, one JSON line each (to examine a failed run)."""
        with (self.dir / name).open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")

    def _figures(
        self,
        *,
        workload: Workload,
        dead: dict[str, int],
        mover: LocalMessageMover,
        redrive: list[dict[str, Any]],
        backfill: dict[str, Any],
    ) -> dict[str, Any]:
        from devkit.local.runner import collect_emf

        stats = PollerStats()
        for poller in self.pollers:
            stats.merge(poller.stats)
        worker_metrics: defaultdict[str, float] = defaultdict(float)
        for log in sorted(self.dir.glob("worker*.log")):
            collect_emf(log.read_text(errors="replace"), worker_metrics)
        metrics = {k: int(v) for k, v in sorted(stats.metrics.items())}
        # Counts only (a sum of seconds-per-page figures means nothing).
        ocr = {k: int(v) for k, v in sorted(worker_metrics.items()) if k.startswith("Ocr") and "Seconds" not in k}
        workers = [w.stats for w in (self.previous_worker, self.worker) if w is not None]
        worker = WorkerFaultStats(
            pool_processes_killed=sum(w.pool_processes_killed for w in workers),
            workers_killed=sum(w.workers_killed for w in workers),
        )
        return {
            "changes": {
                "s3_changes": workload.stats.changes,
                "created": workload.stats.created,
                "removed": workload.stats.removed,
                "operations": dict(sorted(workload.stats.operations.items())),
                "backfill_enqueued": backfill.get("enqueued"),
                "objects_at_end": len(workload.expected()),
                "applied": metrics.get("DocumentsIndexed", 0) + metrics.get("DocumentsDeleted", 0),
            },
            "delivery": self.delivery.stats.to_dict() if self.delivery else {},
            "duplicates_suppressed": metrics.get("DuplicatesSkipped", 0),
            "stale_skipped": metrics.get("StaleEventsSkipped", 0),
            "retries": {
                "records_failed_and_redelivered": stats.failed_records,
                "bulk_item_retries": metrics.get("BulkRetries", 0),
                "ocr_jobs_retried": ocr.get("OcrJobsRetried", 0),
                "ocr_jobs_deferred": ocr.get("OcrJobsDeferred", 0),
            },
            "invocations": {
                "total": stats.invocations,
                "records": stats.records,
                "killed_mid_batch": stats.killed_mid_batch,
                "timed_out": stats.timeouts,
                "crashed": stats.crashed,
                "handler_errors": stats.handler_errors,
                "cold_starts": sum(p.sandbox.cold_starts for p in self.pollers),
            },
            "faults": {
                **self.counts.snapshot(),
                "invocations_killed_mid_batch": stats.killed_mid_batch,
                "invocations_timed_out": stats.timeouts,
                "document_writes_delayed": self._delayed_writes(),
                "ocr_pool_processes_killed": worker.pool_processes_killed if worker else 0,
                "ocr_workers_killed": worker.workers_killed if worker else 0,
            },
            "ocr_process_deaths": self._process_deaths(worker.pool_processes_killed, ocr.get("OcrPagesRedone", 0)),
            "dead_lettered": dead,
            "redriven": mover.moved_total,
            "redrive": redrive,
            "indexer_metrics": metrics,
            "worker_metrics": ocr,
        }
