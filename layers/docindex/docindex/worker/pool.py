"""The OCR process pool: CPU-bound work off the main process.

The main process receives, heartbeats, writes and deletes; it must never
stall behind Tesseract (which holds the GIL for seconds) or die with it. So
the OCR, the rendering and the extraction of large non-OCR files run in
``WORKER_CONCURRENCY`` *spawned* processes (forking a process that already
runs boto3 and heartbeat threads can deadlock the child).

A process that dies (a segfault in a native library, the kernel's OOM
killer) breaks the executor; the pool is then rebuilt and the jobs that were
running fail as transient, so their messages come back. One death breaks every
job in flight, but only one of them caused it: each task records, in a file
named after its process, which job it runs (``owner``), and ``took_down``
tells a job whether the process that died on its own (killed or crashed, not
stopped by the executor afterwards) was running its page. Only that job counts
the failure towards its quarantine (``WORKER_QUARANTINE_AFTER_FAILURES``).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from docindex.worker.ocr import init_process

T = TypeVar("T")


class OcrPool:
    """A rebuildable ``ProcessPoolExecutor`` of spawned processes."""

    def __init__(self, processes: int) -> None:
        self.processes = max(1, processes)
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False
        # Which job each process is working for: <marks>/<pid> holds the owner of its current task.
        self.marks = tempfile.mkdtemp(prefix="docindex-ocr-pool-")
        self._seen: dict[int, Any] = {}  # pid -> multiprocessing.Process, kept after the executor drops it
        self._took_down: dict[str, int] = {}  # owner -> deaths not yet claimed

    def _current(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._closed:
                raise RuntimeError("the OCR pool is shut down")
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    max_workers=self.processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=init_process,
                )
            return self._executor

    def submit(self, fn: Callable[..., T], *args: Any, owner: str = "") -> Future[T]:
        """Run ``fn(*args)`` in a pool process, on behalf of ``owner`` (see ``took_down``)."""
        executor = self._current()
        try:
            future = executor.submit(_owned, self.marks, owner, fn, *args)
        except BrokenProcessPool:
            self._replace(executor)
            executor = self._current()
            future = executor.submit(_owned, self.marks, owner, fn, *args)
        with self._lock:
            self._seen.update(getattr(executor, "_processes", None) or {})
        return future

    def took_down(self, owner: str) -> bool:
        """Whether a process died on its own (killed, crashed) while running a task of ``owner``.

        Each such death is told once. Processes the executor stopped itself after another one
        died (SIGTERM), or that ended normally, tell nothing.
        """
        with self._lock:
            for pid, process in list(self._seen.items()):
                code = _exit_code(process)
                if code is None:
                    continue
                del self._seen[pid]
                mark = os.path.join(self.marks, str(pid))
                try:
                    with open(mark, encoding="utf-8") as handle:
                        victim = handle.read()
                    os.unlink(mark)
                except OSError:
                    victim = ""
                if code not in (0, -signal.SIGTERM) and victim:
                    self._took_down[victim] = self._took_down.get(victim, 0) + 1
            deaths = self._took_down.pop(owner, 0)
            if len(self._took_down) > 1000:  # owners whose jobs ended without asking
                self._took_down.clear()
        return deaths > 0

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is broken:
                self._executor = None
        broken.shutdown(wait=False, cancel_futures=True)

    def terminate(self) -> None:
        """Stop every pool process now, running pages included (shutdown after the grace period)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is None:
            return
        _kill_processes(executor)
        executor.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """Terminate and refuse new work."""
        with self._lock:
            self._closed = True
        self.terminate()
        shutil.rmtree(self.marks, ignore_errors=True)


def _exit_code(process: Any, wait: float = 2.0) -> int | None:
    """The exit code of a process that has ended, None while it runs.

    The executor's own thread reaps the processes of a broken pool (it joins them), so a dead
    process's code can be a moment from being readable here: wait for it, briefly.
    """
    from multiprocessing.connection import wait as ready

    code = process.exitcode
    if code is not None:
        return int(code)
    try:
        if not ready([process.sentinel], 0):
            return None  # still running
    except (OSError, ValueError):
        pass
    give_up = time.monotonic() + wait
    while time.monotonic() < give_up:
        code = process.exitcode
        if code is not None:
            return int(code)
        time.sleep(0.01)
    return None


def _owned(marks: str, owner: str, fn: Callable[..., T], *args: Any) -> T:
    """In the pool process: say whose task this is (a file named after the process) while it runs."""
    mark = os.path.join(marks, str(os.getpid()))
    with open(mark, "w", encoding="utf-8") as handle:
        handle.write(owner)
    try:
        return fn(*args)
    finally:
        with open(mark, "w", encoding="utf-8"):
            pass  # idle: a death now is nobody's


def _kill_processes(executor: ProcessPoolExecutor) -> None:
    terminate_workers = getattr(executor, "terminate_workers", None)  # Python 3.14+
    if terminate_workers is not None:
        terminate_workers()
        return
    # Before 3.14 the executor has no public way to stop a running task.
    processes = getattr(executor, "_processes", None) or {}
    for process in list(processes.values()):
        if process.is_alive():
            process.kill()
