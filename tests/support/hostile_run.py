"""One indexer batch, or the OCR worker until its queue is empty, in a fresh process; peak memory included.

The bad-input test runs each side here so that the peak resident memory it
reports is that of one Lambda-sized process (or one worker task with its OCR
processes), not that of the test runner:

    python -m tests.support.hostile_run indexer|worker SPEC.json RESULT.json

SPEC holds ``env`` (the handler's environment), ``event`` (indexer: the SQS
event) and ``timeout`` (seconds).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any


def _indexer(spec: dict[str, Any]) -> dict[str, Any]:
    from devkit.local.context import LocalLambdaContext
    from docindex.core.clients import Clients
    from docindex.core.settings import Settings
    from docindex.ingest.indexer import Indexer

    settings = Settings.from_env()
    clients = Clients(settings)
    indexer = Indexer(
        settings, s3=clients.s3, sqs=clients.sqs, dynamodb=clients.dynamodb, opensearch=clients.opensearch
    )
    context = LocalLambdaContext(
        timeout_seconds=float(spec["timeout"]), memory_limit_in_mb=int(spec.get("memory_mb", 1536))
    )
    response = indexer.handle(spec["event"], context)
    result: dict[str, Any] = {"failed": [f["itemIdentifier"] for f in response["batchItemFailures"]]}
    if indexer.pool is not None:
        # Stopping the extraction processes waits for them: RUSAGE_CHILDREN then covers every one.
        indexer.pool.close()
        result["extraction_processes_at_once"] = indexer.pool.max_running
        result["extraction_budget_mb"] = indexer.pool.memory_budget // (1024 * 1024)
    return result


def _worker(spec: dict[str, Any]) -> dict[str, Any]:
    from docindex.worker import build_worker

    worker = build_worker(flush_metrics=False)
    jobs, idle = 0, 0
    deadline = time.monotonic() + float(spec["timeout"])
    try:
        while idle < 2 and time.monotonic() < deadline:
            finished = worker.poll_once(wait_seconds=1)
            jobs += finished
            idle = 0 if finished else idle + 1
    finally:
        worker.close()
    return {"jobs": jobs, "concurrency": worker.settings.concurrency}


def _peak_rss_mb() -> float:
    """This program's own peak resident memory (VmHWM: the memory map's, new at exec).

    Not ``RUSAGE_SELF``'s ``ru_maxrss``: Linux carries it across ``execve``, so a process started by
    fork and exec from a test worker that had grown to hundreds of MB reported that worker's size.
    """
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def main(argv: list[str]) -> int:
    mode, spec_path, out_path = argv
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    os.environ.update(spec["env"])
    started = time.monotonic()
    result = _indexer(spec) if mode == "indexer" else _worker(spec)
    # ru_maxrss is in KiB on Linux; RUSAGE_CHILDREN is the largest child waited for (the OCR processes).
    result["seconds"] = round(time.monotonic() - started, 2)
    result["max_rss_mb"] = _peak_rss_mb()
    result["children_max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    Path(out_path).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
