"""The extraction child process: serves one job at a time on stdin/stdout, within its bounds.

Started by ``docindex.extract.isolation`` (``python -m docindex.extract.child``); the
protocol is described there. Each job's address space and CPU time are limited before
its extractor runs and released after.
"""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import struct
import sys
from typing import IO

from docindex.core.limits import limit_growth, peak_rss, unlimit
from docindex.extract.base import Deadline, ExtractionLimits, FileType, JobBounds
from docindex.extract.context import ExtractionContext
from docindex.extract.dispatch import _extractor, _run
from docindex.extract.isolation import KILL_GRACE_SECONDS, write_frame


def _bound(seconds: float, memory: int) -> None:
    """Limit this process for one job: address space grows by ``memory`` at most, CPU by ``seconds`` + grace."""
    limit_growth(memory)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    resource.setrlimit(
        resource.RLIMIT_CPU, (math.ceil(used + seconds + KILL_GRACE_SECONDS) + 1, resource.RLIM_INFINITY)
    )


def _unbound() -> None:
    unlimit()
    resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def _read_exact(stream: IO[bytes], n: int) -> bytes | None:
    parts, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    while True:
        head = _read_exact(requests, 4)
        if head is None:
            return
        raw = _read_exact(requests, struct.unpack(">I", head)[0])
        if raw is None:
            return
        job = json.loads(raw)
        data = _read_exact(requests, int(job["size"]))
        if data is None:
            return
        ftype = FileType(kind=job["kind"], mime=job["mime"], encrypted=job["encrypted"])
        limits = ExtractionLimits(**job["limits"])
        bounds = JobBounds(memory_bytes=int(job["memory"]), seconds=float(job["seconds"]))
        ctx = ExtractionContext(limits, Deadline(bounds.seconds), bounds=bounds)
        extractor = _extractor(ftype.kind)
        error: str | None
        detail: str | None
        _bound(bounds.seconds, bounds.memory_bytes)
        try:
            if extractor is None:
                error, detail = "unsupported", f"no text extractor for {ftype.mime}"
            else:
                error, detail = _run(extractor, data, ftype, ctx)
        finally:
            _unbound()
        del data
        answer = {
            "error": error,
            "detail": detail,
            "text": ctx.text.getvalue(),
            "truncated": ctx.text.truncated,
            "title": ctx.title,
            "page_count": ctx.page_count,
            "ocr_reason": ctx.ocr_reason,
            "encoding": ctx.encoding,
            "incomplete": ctx.incomplete,
            "dropped": ctx.dropped,
            "author": ctx.author,
            "last_saved_by": ctx.last_saved_by,
            "created": ctx.created.isoformat() if ctx.created else None,
            "modified": ctx.modified.isoformat() if ctx.modified else None,
            "page_marks": ctx.page_marks,
            "peak_rss": peak_rss(),
            # After running out of memory the heap is not worth keeping.
            "retire": error == "memory",
        }
        write_frame(answers, json.dumps(answer, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        answers.flush()


def main() -> None:
    """Serve jobs on stdin/stdout until the parent goes away."""
    # Anything a library prints must not corrupt the answers: stdout goes to stderr.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
