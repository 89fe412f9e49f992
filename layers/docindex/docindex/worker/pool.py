"""The OCR process pool: CPU-bound work off the main process, one death costing one job.

The main process receives, heartbeats, writes and deletes; it must never
stall behind Tesseract (which holds the GIL for seconds) or die with it. So
the OCR, the rendering and the extraction of large non-OCR files run in
``WORKER_CONCURRENCY`` *spawned* processes (forking a process that already
runs boto3 and heartbeat threads can deadlock the child).

Each process is independent: it has its own pipe and runs one task (a page, a
probe, an extraction) at a time, taken from one queue by the thread that owns
it. A process that dies (a segfault in a native library, the kernel's OOM
killer) fails only the task it was running, so only the job that task was for
is retried; the pages of the jobs beside it, in the other processes, go on,
and the next task gets a fresh process. (A ``ProcessPoolExecutor``, used
before, breaks as a whole when one of its processes dies: every job in flight
on the task was retried and read its pages again.) The death is counted for
the job whose task it was (``took_down``), towards that job's quarantine
(``WORKER_QUARANTINE_AFTER_FAILURES``); processes this pool kills itself
(``terminate``, at shutdown) count for nobody.

Each process also says in a file named after it (``marks``) which job it works
for, so that a test can play the OOM killer on exactly one job's process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from docindex.worker.ocr import init_process

T = TypeVar("T")


@dataclass
class _Task:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    owner: str
    future: Future[Any] = field(default_factory=Future)


class OcrPool:
    """``processes`` independent spawned processes fed from one queue of tasks."""

    def __init__(self, processes: int) -> None:
        self.processes = max(1, processes)
        self._tasks: queue.Queue[_Task | None] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self._took_down: dict[str, int] = {}  # owner -> deaths not yet told
        # Which job each process is working for: <marks>/<pid> holds the owner of its current task.
        self.marks = tempfile.mkdtemp(prefix="docindex-ocr-pool-")
        self._slots = [_Slot(self, n) for n in range(self.processes)]
        for slot in self._slots:
            slot.thread.start()

    def submit(self, fn: Callable[..., T], *args: Any, owner: str = "") -> Future[T]:
        """Run ``fn(*args)`` in a pool process, on behalf of ``owner`` (see ``took_down``)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the OCR pool is shut down")
            task = _Task(fn, args, owner)
            self._tasks.put(task)
        return task.future

    def took_down(self, owner: str) -> bool:
        """Whether a process died on its own (killed, crashed) while running a task of ``owner``.

        Each such death is told once; processes this pool stopped itself tell nothing.
        """
        with self._lock:
            return self._took_down.pop(owner, 0) > 0

    def _died_under(self, owner: str) -> None:
        with self._lock:
            if owner:
                self._took_down[owner] = self._took_down.get(owner, 0) + 1
            if len(self._took_down) > 1000:  # owners whose jobs ended without asking
                self._took_down.clear()

    def terminate(self) -> None:
        """Stop every pool process now, running pages included; tasks not started are cancelled.

        The pool stays usable: the next task starts a fresh process.
        """
        while True:
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                break
            if task is not None:
                task.future.cancel()
        for slot in self._slots:
            slot.kill()

    def close(self) -> None:
        """Terminate and refuse new work."""
        with self._lock:
            self._closed = True
        self.terminate()
        for _ in self._slots:
            self._tasks.put(None)
        for slot in self._slots:
            slot.thread.join(timeout=10)
        shutil.rmtree(self.marks, ignore_errors=True)


class _Slot:
    """One process of the pool and the thread that feeds it, one task at a time."""

    def __init__(self, pool: OcrPool, number: int) -> None:
        self.pool = pool
        self.process: multiprocessing.process.BaseProcess | None = None
        self.conn: Connection | None = None
        self._killing = threading.Event()  # set while this pool kills the process itself
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, name=f"ocr-pool-{number}", daemon=True)

    def _serve(self) -> None:
        while True:
            task = self.pool._tasks.get()
            if task is None:
                self._stop_process()
                return
            if not task.future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                self._run(task)
            except BaseException as exc:  # noqa: BLE001 - the task's caller learns it; the slot goes on
                if not task.future.done():
                    task.future.set_exception(exc)

    def _start(self) -> tuple[multiprocessing.process.BaseProcess, Connection]:
        with self._lock:
            if self.process is None or self.conn is None or not self.process.is_alive():
                self._discard()
                self._killing.clear()  # a kill of an idle process is over with it
                ctx = multiprocessing.get_context("spawn")
                parent, child = ctx.Pipe()
                process = ctx.Process(target=_child_main, args=(child, self.pool.marks), daemon=True)
                process.start()
                child.close()
                self.process, self.conn = process, parent
            return self.process, self.conn

    def _run(self, task: _Task) -> None:
        process, conn = self._start()
        try:
            conn.send((task.fn, task.args, task.owner))
            ready = wait([conn, process.sentinel])
            if conn not in ready:
                raise EOFError
            ok, value = conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._died(process, task)
            return
        if ok:
            task.future.set_result(value)
        else:
            task.future.set_exception(value)

    def _died(self, process: multiprocessing.process.BaseProcess, task: _Task) -> None:
        """The process ended under ``task``: count it for the task's job (unless we killed it), fail the task."""
        process.join(2)
        killed_here = self._killing.is_set()
        if not killed_here:
            self.pool._died_under(task.owner)
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.pool.marks, str(process.pid)))
        with self._lock:
            self._discard()
            self._killing.clear()
        why = "stopped by the worker" if killed_here else f"died (exit code {process.exitcode})"
        task.future.set_exception(BrokenProcessPool(f"the OCR process {process.pid} {why} during the task"))

    def _discard(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.close()
        self.process, self.conn = None, None

    def kill(self) -> None:
        """SIGKILL the process (a running task fails as stopped, not as a death of its job)."""
        with self._lock:
            process = self.process
            if process is None or not process.is_alive():
                return
            self._killing.set()
            process.kill()

    def _stop_process(self) -> None:
        with self._lock:
            if self.conn is not None:
                with contextlib.suppress(OSError):
                    self.conn.send(None)
            process = self.process
            self._discard()
        if process is not None:
            process.join(2)
            if process.is_alive():
                process.kill()
                process.join(2)


def _child_main(conn: Connection, marks: str) -> None:
    """A pool process: run tasks until the pipe closes, saying in ``marks`` whose task it runs."""
    init_process()
    mark = os.path.join(marks, str(os.getpid()))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the worker is gone
        if message is None:
            return
        fn, args, owner = message
        with contextlib.suppress(OSError), open(mark, "w", encoding="utf-8") as handle:
            handle.write(owner)
        try:
            result: tuple[bool, Any] = (True, fn(*args))
        except Exception as exc:  # noqa: BLE001 - handed to the task's caller
            result = (False, exc)
        finally:
            with contextlib.suppress(OSError), open(mark, "w", encoding="utf-8"):
                pass  # idle: a death now is nobody's
        try:
            conn.send(result)
        except (OSError, EOFError):
            return
        except Exception as exc:  # noqa: BLE001 - a result or exception that does not pickle
            conn.send((False, RuntimeError(f"the task's outcome could not be sent back: {type(exc).__name__}: {exc}")))
