"""The OCR worker as ECS runs it (``python -m docindex.worker``), and the ways it dies.

Two kinds of death, both mid-job (armed when the worker starts downloading a
job's object, fired a fraction of a second later, while pages are read or the
result is written):

- one of its OCR pool processes is SIGKILLed (the kernel's OOM killer, a
  segfault in a native library): the worker sees a broken pool, fails the job
  as transient and rebuilds the pool;
- the whole task is SIGKILLed with its process group (a lost Fargate task):
  its messages and idempotency locks are left to expire, and a new task is
  started in its place, as the ECS service would.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess  # the worker runs as its own process, fixed argv  # nosec B404
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path


def child_pids(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
    return found


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _exited(pid: int) -> bool:
    """Whether the child ``pid`` has ended, without reaping it (its pid stays reserved)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


@dataclass
class WorkerFaultStats:
    pool_processes_killed: int = 0
    workers_killed: int = 0
    worker_starts: int = 0


class WorkerProcess:
    """Keeps one worker process running (restarting it after a crash) and kills it on demand."""

    def __init__(self, env: dict[str, str], log_path: Path, *, seed: int) -> None:
        self.env = env
        self.log_path = log_path
        self.stats = WorkerFaultStats()
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._rng = random.Random(f"{seed}:worker-kills")  # noqa: S311  # fault injection, not crypto  # nosec B311
        self._monitor = threading.Thread(target=self._watch, name="soak-worker-monitor", daemon=True)
        self.kill_probability = 0.0
        self.whole_task_share = 0.3

    def start(self) -> WorkerProcess:
        self._spawn()
        self._monitor.start()
        return self

    def _spawn(self) -> None:
        with self._lock, self.log_path.open("ab") as log:
            self._process = subprocess.Popen(  # our interpreter, fixed argv  # nosec B603
                [sys.executable, "-m", "docindex.worker"],
                env={**os.environ, **self.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.stats.worker_starts += 1

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            process = self._process
            if process is not None and process.poll() is not None and not self._stop.is_set():
                self._spawn()  # the ECS service replaces a stopped task

    def on_job_download(self, _path: str) -> None:
        """The worker started reading a job's object: maybe kill it a moment later."""
        if self.kill_probability <= 0 or self._rng.random() >= self.kill_probability:
            return
        whole = self._rng.random() < self.whole_task_share
        delay = self._rng.uniform(0.05, 0.6)
        threading.Timer(delay, self._kill_task if whole else self._kill_pool_process).start()

    def _kill_pool_process(self) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        pool = [pid for pid in child_pids(process.pid) if "spawn_main" in _cmdline(pid)]
        if not pool:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._rng.choice(pool), signal.SIGKILL)
            self.stats.pool_processes_killed += 1

    def _kill_task(self) -> None:
        with self._lock:
            process = self._process
            if process is None or process.poll() is not None:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
                self.stats.workers_killed += 1
            process.wait()

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM (graceful shutdown), then SIGKILL to its process group after ``grace`` seconds.

        Once: a second call does nothing. The group is signalled only while its leader is not
        reaped, so its id cannot belong to another process group by then (a pid is reused once
        reaped: killing "the worker's group" minutes later could hit anything).
        """
        self._stop.set()
        self._monitor.join()
        with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while not _exited(process.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()
