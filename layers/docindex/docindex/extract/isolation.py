"""Run the extractors of native parsers in child processes, inside enforced bounds.

PDFium and calamine allocate and loop in native code: a PDF whose content
stream inflates to 1.2 GiB or a workbook of 10 M cells costs gigabytes and
minutes, and neither a Python exception nor the cooperative deadline can
stop them. In Lambda an out-of-memory kill or a timeout takes the whole
batch with it. So these formats are extracted in a child process:

- **memory**: the child's address space (``RLIMIT_AS``) may grow by the
  memory *granted* to the job and no more. Grants come out of one budget for
  all jobs of the process (:class:`ExtractionPool` ``memory_budget``, a share
  of the function's memory), so whatever the mix of records, the children
  together stay within it. A job's grant is its expected cost (size times a
  per-format factor, plus a floor), capped at the budget: a big job waits
  for the memory held by others (admission weighted by cost, not by count).
- **time**: the child stops cooperatively at the deadline (the text read so
  far is kept); if native code does not return, the parent kills the child
  ``KILL_GRACE_SECONDS`` later, and ``RLIMIT_CPU`` backs that up.
- **output**: the parent reads at most what ``max_chars`` of text can take.

A blown bound kills only the child: the record gets ``extraction_error``
``memory``, ``timeout`` or ``too_large`` and is indexed by name; the other
records go on. Children are plain subprocesses talking over pipes (Lambda
has no ``/dev/shm``, so no ``multiprocessing`` queues or semaphores) and are
kept warm across records and invocations; one that failed is replaced.

Protocol (one job at a time per child), both ways a 4-byte length and a JSON
header, the request followed by the file's bytes::

    -> {"kind", "mime", "encrypted", "limits": {...}, "seconds", "memory"} + data
    <- {"error", "detail", "text", "truncated", "title", "page_count", "ocr_reason",
        "encoding", "incomplete", "dropped", "author", "last_saved_by", "created", "modified",
        "page_marks": [[offset, kind, number, name], ...], "peak_rss", "retire"}
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import struct
import subprocess  # our own interpreter running our own module, fixed argv  # nosec B404
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import IO, Any

from docindex.extract.base import ExtractionLimits, FileType, JobBounds
from docindex.extract.context import MAX_DROP_CHARS, MAX_PAGE_MARKS, ExtractionContext

MiB = 1024 * 1024
# Formats whose parsers run native code that cannot be bounded from outside, and the readers of
# legacy and container formats (OLE2 .doc/.ppt/.msg, RTF, mail, zip archives) whose memory follows
# what the file declares and nests: a pathological one costs its child, not the invocation.
ISOLATED_KINDS = frozenset({"pdf", "xlsx", "xls", "xlsb", "doc", "ppt", "msg", "rtf", "eml", "zip"})
# Time the parent gives a child past its deadline before killing it: the
# cooperative stop (between pages, rows) normally comes first.
KILL_GRACE_SECONDS = 2.0
# Expected peak memory of an extraction: floor + size x factor. The floor
# covers the parser's own tables and a page's text; the factors were
# measured on the normal corpus (make bench) with headroom: PDF text
# extraction holds the file and one page at a time; calamine builds each
# sheet densely (an XLSX is sheet XML compressed ~10:1, ~30 bytes a cell).
GRANT_FLOOR_BYTES = 160 * MiB
GRANT_FACTOR = {"pdf": 4, "xlsx": 40, "xls": 8}
DEFAULT_GRANT_FACTOR = 8
# Memory a spreadsheet cell costs calamine and our row text (measured: a
# 9.9 M-cell sheet peaked at ~1.3 GiB in process, ~130 bytes a cell). A
# sheet whose cells cannot fit the job's grant is refused before calamine
# allocates it.
BYTES_PER_CELL = 130


class ExtractionPool:
    """Warm child processes that run isolated extractions, admitted by memory.

    ``memory_budget``: bytes all running jobs together may grow by (each job's
    address-space limit is its grant); ``max_workers``: children at most.
    Thread-safe: the indexer's record threads call :meth:`run` concurrently.
    """

    def __init__(self, memory_budget: int, max_workers: int, *, kinds: frozenset[str] = ISOLATED_KINDS) -> None:
        self.memory_budget = max(GRANT_FLOOR_BYTES, memory_budget)
        self.max_workers = max(1, max_workers)
        self.kinds = kinds
        self._free = self.memory_budget
        self._running = 0
        self._idle: list[_Child] = []
        self._cond = threading.Condition()
        self._closed = False
        # Largest peak resident size a child reported or was measured at (bytes;
        # for a child that was stopped, wait4's ru_maxrss: Linux carries it over
        # exec, so it is at least this process's size when the child started),
        # and the most jobs that ran at once.
        self.max_child_rss = 0
        self.max_running = 0

    @classmethod
    def for_function(cls, memory_mb: int, concurrency: int, *, share: float) -> ExtractionPool:
        """A pool sized from the function's memory: ``share`` of it for extraction, ``concurrency`` children at most."""
        return cls(int(memory_mb * MiB * share), concurrency)

    def grant_for(self, kind: str, size: int) -> int:
        """The memory a job of ``kind`` and ``size`` bytes is granted (its address-space growth limit)."""
        expected = GRANT_FLOOR_BYTES + size * GRANT_FACTOR.get(kind, DEFAULT_GRANT_FACTOR)
        return min(self.memory_budget, expected)

    def isolates(self, kind: str) -> bool:
        return kind in self.kinds

    def run(self, data: bytes, ftype: FileType, ctx: ExtractionContext) -> tuple[str | None, str | None]:
        """Extract ``data`` in a child; fills ``ctx`` like an in-process extractor; returns (error, detail)."""
        grant = self.grant_for(ftype.kind, len(data))
        if not self._admit(grant, ctx):
            return "timeout", "no memory became free for this file before its deadline"
        child: _Child | None = None
        try:
            child = self._take()
            bounds = JobBounds(memory_bytes=grant, seconds=max(0.1, ctx.deadline.remaining()))
            result = child.run(data, ftype, ctx.limits, bounds)
            self.max_child_rss = max(self.max_child_rss, result.peak_rss)
            if result.retire:
                child.close()
                child = None
            result.fill(ctx)
            return result.error, result.detail
        finally:
            if child is not None:
                self._give_back(child)
            with self._cond:
                self._free += grant
                self._running -= 1
                self._cond.notify_all()

    def _admit(self, grant: int, ctx: ExtractionContext) -> bool:
        with self._cond:
            while self._running and (self._free < grant or self._running >= self.max_workers):
                left = ctx.deadline.remaining()
                if left <= 0:
                    return False
                self._cond.wait(timeout=min(left, 1.0))
            self._free -= grant
            self._running += 1
            self.max_running = max(self.max_running, self._running)
            return True

    def _take(self) -> _Child:
        with self._cond:
            while self._idle:
                child = self._idle.pop()
                if child.alive():
                    return child
                child.close()
        return _Child.start()

    def _give_back(self, child: _Child) -> None:
        with self._cond:
            if self._closed:
                child.close()
            else:
                self._idle.append(child)

    def close(self) -> None:
        """Stop the idle children (running jobs finish; their children stop when handed back)."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
        for child in idle:
            child.close()


@dataclass
class _Result:
    error: str | None
    detail: str | None
    text: str = ""
    truncated: bool = False
    title: str | None = None
    page_count: int | None = None
    ocr_reason: str | None = None
    encoding: str | None = None
    incomplete: bool = False
    dropped: list[str] = field(default_factory=list)
    author: str | None = None
    last_saved_by: str | None = None
    created: str | None = None
    modified: str | None = None
    page_marks: list[list[Any]] = field(default_factory=list)
    peak_rss: int = 0
    retire: bool = False

    def fill(self, ctx: ExtractionContext) -> None:
        base = len(ctx.text)
        for offset, kind, number, name in self.page_marks[:MAX_PAGE_MARKS]:
            ctx.page_marks.append((base + int(offset), str(kind), int(number), str(name) if name else None))
        if self.text:
            ctx.text.append(self.text)
        ctx.text.truncated = ctx.text.truncated or self.truncated
        ctx.title = self.title
        ctx.page_count = self.page_count
        ctx.ocr_reason = self.ocr_reason
        ctx.encoding = self.encoding
        ctx.incomplete = self.incomplete
        ctx.dropped = list(self.dropped)
        ctx.author, ctx.last_saved_by = self.author, self.last_saved_by
        ctx.set_dates(_parse_time(self.created), _parse_time(self.modified))


def _parse_time(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


class _Child:
    """One warm child process."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        if process.stdin is None or process.stdout is None:
            raise RuntimeError("an extraction child needs pipes for stdin and stdout")
        self._stdin: IO[bytes] = process.stdin
        self._stdout: IO[bytes] = process.stdout

    @classmethod
    def start(cls) -> _Child:
        env = dict(os.environ)
        # The child imports docindex from wherever this process did (a Lambda
        # layer, /var/task, a worktree): sys.path, not only PYTHONPATH.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        process = subprocess.Popen(  # nosec B603 - our interpreter, fixed argv
            [sys.executable, "-m", "docindex.extract.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        return cls(process)

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, data: bytes, ftype: FileType, limits: ExtractionLimits, bounds: JobBounds) -> _Result:
        header = {
            "kind": ftype.kind,
            "mime": ftype.mime,
            "encrypted": ftype.encrypted,
            "limits": asdict(limits),
            "seconds": bounds.seconds,
            "memory": bounds.memory_bytes,
            "size": len(data),
        }
        try:
            write_frame(self._stdin, json.dumps(header).encode())
            self._stdin.write(data)
            self._stdin.flush()
        except (BrokenPipeError, OSError):
            return self._died(bounds, killed_for=None)
        # Text of max_chars characters, JSON-escaped at worst (\uXXXX), the page marks (a name
        # each), plus the rest of the header.
        max_output = limits.max_chars * 6 + MAX_PAGE_MARKS * (MAX_DROP_CHARS * 6 + 64) + MiB
        status, payload = _read_frame(self._stdout, bounds.seconds + KILL_GRACE_SECONDS, max_output)
        if status == "ok":
            try:
                fields = json.loads(payload.decode("utf-8", "surrogatepass"))
                return _Result(**fields)
            except (ValueError, TypeError) as exc:
                self.kill()
                return _Result("extractor_failed", f"unreadable answer from the extraction process: {exc}")
        if status == "timeout":
            self.kill()
            return self._died(bounds, killed_for="timeout")
        if status == "too_large":
            self.kill()
            return self._died(bounds, killed_for="too_large")
        return self._died(bounds, killed_for=None)

    def kill(self) -> None:
        # Not Popen.poll()/kill(): they reap the child, and _died needs its
        # rusage from wait4 (killing a zombie is harmless).
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)

    def _died(self, bounds: JobBounds, *, killed_for: str | None) -> _Result:
        """The child is gone (or killed): classify, and measure its peak."""
        self.kill()
        try:
            _, status, usage = os.wait4(self.process.pid, 0)
            self.process.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            peak = int(usage.ru_maxrss) * 1024
        except ChildProcessError:  # already reaped
            peak = 0
        code = self.process.returncode
        self.close()
        if killed_for == "timeout":
            error, detail = "timeout", f"the extraction process ran past its {bounds.seconds:.0f} s and was stopped"
        elif killed_for == "too_large":
            error, detail = "too_large", "the extracted text was larger than the output bound"
        elif code == -signal.SIGXCPU:
            error, detail = "timeout", "the extraction process used up its CPU time"
        elif code is not None and code < 0 and (code == -signal.SIGABRT or peak * 2 >= bounds.memory_bytes):
            # A failed allocation in native code aborts (Rust, C++); with an
            # address-space limit a crash near it is one too.
            error, detail = "memory", f"the parser needed more than {bounds.memory_bytes // MiB} MiB"
        else:
            error, detail = "extractor_failed", f"the extraction process died (status {code})"
        from docindex.core.observability import logger

        logger.warning("extraction process ended", extra={"extraction_error": error, "detail": detail})
        return _Result(error, detail, peak_rss=peak, retire=True)

    def close(self) -> None:
        for stream in (self._stdin, self._stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(struct.pack(">I", len(payload)))
    stream.write(payload)


def _read_frame(stream: IO[bytes], seconds: float, max_bytes: int) -> tuple[str, bytes]:
    """One frame within ``seconds``: ("ok", payload), ("timeout"|"too_large"|"eof", b"")."""
    fd = stream.fileno()
    end = time.monotonic() + seconds
    buffer = bytearray()
    want: int | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while want is None or len(buffer) < want + 4:
            left = end - time.monotonic()
            if left <= 0 or not selector.select(timeout=left):
                return "timeout", b""
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return "eof", b""
            buffer += chunk
            if want is None and len(buffer) >= 4:
                want = struct.unpack(">I", buffer[:4])[0]
                if want > max_bytes:
                    return "too_large", b""
    return "ok", bytes(buffer[4 : 4 + want])
