"""The OCR process pool: CPU-bound work off the main process.

The main process receives, heartbeats, writes and deletes; it must never
stall behind Tesseract (which holds the GIL for seconds) or die with it. So
the OCR, the rendering and the extraction of large non-OCR files run in
``WORKER_CONCURRENCY`` *spawned* processes (forking a process that already
runs boto3 and heartbeat threads can deadlock the child).

A process that dies (a segfault in a native library, the kernel's OOM
killer) breaks the executor; the pool is then rebuilt and the jobs that were
running fail as transient, so their messages come back (and reach the DLQ
after ``maxReceiveCount`` if the same file keeps killing the process).
"""

from __future__ import annotations

import multiprocessing
import threading
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

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        executor = self._current()
        try:
            return executor.submit(fn, *args)
        except BrokenProcessPool:
            self._replace(executor)
            return self._current().submit(fn, *args)

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
