"""Lambda, locally: execution environments as processes, and the SQS event source mapping.

A ``Sandbox`` is one execution environment: a spawned process that imports
``functions/indexer/app.py`` once (the cold start) and then serves
invocations, like Lambda's runtime. When an invocation outlives the function
timeout, or when the soak kills it mid-batch (after some of its records were
written), the process is killed with SIGKILL, exactly what Lambda does to a
timed-out environment: threads, buffered writes and half-done records die
with it, the batch is not acknowledged, and its messages come back after the
visibility timeout. The next invocation gets a new environment.

A ``Poller`` is one concurrent invocation slot of the event source mapping:
receive up to a batch of messages, invoke, delete the ones that succeeded
(``ReportBatchItemFailures``), leave the rest to reappear. Those steps are
``devkit.local.runner``'s, the ones ``docindex local run`` uses; what is the
soak's own is the sandbox process, killed at the timeout or mid-batch.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from devkit.local.runner import collect_emf, delete_succeeded, lambda_event, receive_batch, reported_failures
from soak.runtime import RELEASE_ENV, SABOTAGE_ENV, WRITE_DELAY_ENV, WRITE_DELAYED, serve

__all__ = ["RELEASE_ENV", "SABOTAGE_ENV", "WRITE_DELAYED", "WRITE_DELAY_ENV", "KillSwitch", "Poller", "Sandbox"]


@dataclass
class Invocation:
    response: dict[str, Any] | None
    error: str | None = None
    killed: str | None = None  # "timeout" or "fault"
    emf: str = ""
    seconds: float = 0.0


class Sandbox:
    """One execution environment (a process); replaced after a kill."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.env = env
        self.log_path = log_path
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._killed_by_fault = threading.Event()
        self.cold_starts = 0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        process = ctx.Process(target=serve, args=(child, self.env, str(self.log_path)), daemon=True)
        process.start()
        child.close()
        if not parent.poll(120):
            process.kill()
            raise RuntimeError(f"the indexer sandbox did not start; see {self.log_path}")
        status = parent.recv()
        if status[0] != "ready":
            raise RuntimeError(f"the indexer sandbox failed to start: {status}")
        self._process, self._conn = process, parent
        self._killed_by_fault.clear()
        self.cold_starts += 1

    def kill(self, *, fault: bool, pid: int | None = None) -> None:
        """SIGKILL the environment (Lambda's timeout, or an injected crash); with ``pid``, only if still that one."""
        process = self._process
        if process is None or process.pid is None or (pid is not None and process.pid != pid):
            return
        if fault:
            self._killed_by_fault.set()
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)

    def invoke(self, event: dict[str, Any], timeout: float) -> Invocation:
        started = time.monotonic()
        conn: Connection | None = None
        for attempt in (1, 2):
            if self._process is None or not self._process.is_alive():
                self._reap()
                self.start()
            conn = self._conn
            assert conn is not None
            try:
                conn.send((event, timeout))
                break
            except OSError:
                # Killed between invocations (a late kill): Lambda gives the invocation a new environment.
                self._reap()
                if attempt == 2:
                    raise
        # Lambda stops an invocation at its timeout; a little slack for the pipe.
        assert conn is not None
        ready = conn.poll(timeout + 0.5)
        result: Invocation
        if ready:
            try:
                response, error, emf = conn.recv()
                result = Invocation(response, error, None, emf)
            except (EOFError, OSError):
                result = Invocation(None, None, "fault" if self._killed_by_fault.is_set() else "crash")
        else:
            self.kill(fault=False)
            result = Invocation(None, None, "timeout")
        if result.killed:
            if result.killed == "timeout" and self._killed_by_fault.is_set():
                result.killed = "fault"
            self._reap()
        result.seconds = time.monotonic() - started
        return result

    def _reap(self) -> None:
        if self._process is not None:
            self._process.join(5)
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
        self._process, self._conn = None, None

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            with contextlib.suppress(OSError, BrokenPipeError):
                self._conn.send(None)
            self._process.join(5)
        if self._process is not None and self._process.is_alive():
            self.kill(fault=False)
        self._reap()


@dataclass
class PollerStats:
    invocations: int = 0
    records: int = 0
    failed_records: int = 0
    killed_mid_batch: int = 0
    timeouts: int = 0
    crashed: int = 0
    handler_errors: int = 0
    metrics: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))

    def merge(self, other: PollerStats) -> None:
        for name in (
            "invocations",
            "records",
            "failed_records",
            "killed_mid_batch",
            "timeouts",
            "crashed",
            "handler_errors",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for key, value in other.metrics.items():
            self.metrics[key] += value


class KillSwitch:
    """Arms an injected crash of one invocation, fired after its first accepted write."""

    def __init__(self, seed: int, name: str, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox
        self._rng = random.Random(f"{seed}:kill:{name}")  # noqa: S311  # fault injection, not crypto  # nosec B311
        self._armed: float | None = None
        self._lock = threading.Lock()

    def arm(self, probability: float) -> None:
        with self._lock:
            self._armed = self._rng.uniform(0.0, 0.03) if self._rng.random() < probability else None

    def disarm(self) -> None:
        with self._lock:
            self._armed = None

    def on_written(self, _items: int) -> None:
        """Called by the OpenSearch proxy when this slot's bulk request was accepted."""
        with self._lock:
            delay, self._armed = self._armed, None
        if delay is not None and self.sandbox is not None:
            pid = self.sandbox.pid
            threading.Timer(delay, self.sandbox.kill, kwargs={"fault": True, "pid": pid}).start()


class Poller:
    """One slot of the event source mapping: receive, invoke, delete what succeeded."""

    def __init__(
        self,
        *,
        name: str,
        sqs: Any,
        queue_url: str,
        queue_arn: str,
        sandbox: Sandbox,
        kill_switch: KillSwitch,
        function_timeout: float,
        batch_size: int = 10,
        region: str = "us-east-1",
        kill_probability: Callable[[], float] = lambda: 0.0,
        on_log: Callable[[str], None] | None = None,
    ) -> None:
        self.name = name
        self.sqs = sqs
        self.queue_url = queue_url
        self.queue_arn = queue_arn
        self.sandbox = sandbox
        self.kill_switch = kill_switch
        self.function_timeout = function_timeout
        self.batch_size = batch_size
        self.region = region
        self.kill_probability = kill_probability
        self.stats = PollerStats()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"soak-esm-{name}", daemon=True)
        self._busy = threading.Event()
        self.error: BaseException | None = None

    def start(self) -> Poller:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Finish the current invocation, then shut the environment down."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.sandbox.close()

    def abort(self) -> None:
        """Stop now: the running invocation (if any) is killed."""
        self._stop.set()
        self.sandbox.kill(fault=False)
        if self._thread.is_alive():
            self._thread.join(timeout=self.function_timeout + 5)
        self.sandbox.close()

    @property
    def busy(self) -> bool:
        return self._busy.is_set()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.poll_once()
        except BaseException as exc:  # noqa: BLE001 - surfaced by the soak's run loop
            self.error = exc

    def poll_once(self) -> int:
        messages = receive_batch(self.sqs, self.queue_url, self.batch_size, wait_seconds=1)
        if not messages:
            return 0
        self._busy.set()
        try:
            event = lambda_event(messages, self.queue_arn, self.region)
            self.kill_switch.arm(self.kill_probability())
            result = self.sandbox.invoke(event, self.function_timeout)
            self.kill_switch.disarm()
            stats = self.stats
            stats.invocations += 1
            stats.records += len(messages)
            if result.killed:
                stats.failed_records += len(messages)
                if result.killed == "fault":
                    stats.killed_mid_batch += 1
                elif result.killed == "timeout":
                    stats.timeouts += 1
                else:
                    stats.crashed += 1
                return len(messages)
            collect_emf(result.emf, stats.metrics)
            if result.response is None:
                stats.handler_errors += 1
                stats.failed_records += len(messages)
                return len(messages)
            failed = reported_failures(result.response)
            stats.failed_records += len(failed)
            delete_succeeded(self.sqs, self.queue_url, messages, failed)
            return len(messages)
        finally:
            self._busy.clear()
