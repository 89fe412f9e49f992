"""One search function in a process of its own, for ``bench.search_latency`` (run by path, not imported).

    python -P bench/search_latency_worker.py CODE_ROOT [--unfiltered] [--no-query-cache]

Loads ``functions/search/app.py`` and the ``docindex`` package of ``CODE_ROOT`` (this checkout, or
an older commit read from git), configured by the environment, and answers one search per line
of standard input (an HTTP API ``GET /search`` event as JSON) with one line of figures:

- ``wall_ms``: the handler's time, request to response;
- ``cpu_ms``: the CPU this process spent on it — the function's own work (the request model,
  building the query, embedding it, reading the answer, the JSON response), since the engine runs
  in another process;
- ``model_cpu_ms``: the part of it spent embedding the query (the model);
- ``engine_ms``: the time spent waiting on OpenSearch (opensearch-py's ``Transport.perform_request``),
  and ``round_trips``: how many requests went to it;
- ``status``, ``total``, ``by_meaning``, ``returned``.

Only the standard library is imported here before ``CODE_ROOT``'s paths are in front.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any


def main() -> int:
    root = Path(sys.argv[1]).resolve()
    unfiltered = "--unfiltered" in sys.argv[2:]
    uncached = "--no-query-cache" in sys.argv[2:]
    sys.path[:0] = [str(root / "layers" / "docindex"), str(root)]
    import warnings

    from opensearchpy.transport import Transport

    from devkit.local.context import LocalLambdaContext
    from devkit.local.handlers import load_handler
    from docindex.core.observability import logger

    logger.setLevel("WARNING")
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    engine = {"seconds": 0.0, "calls": 0}
    real = Transport.perform_request

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return real(self, *args, **kwargs)
        finally:
            engine["seconds"] += time.perf_counter() - started
            engine["calls"] += 1

    Transport.perform_request = timed  # type: ignore[method-assign]
    # The query's embedding (the model, in this process): the part of the function's CPU that is the model's.
    from docindex.embed.local import LocalE5

    model = {"seconds": 0.0}
    embed = LocalE5.query

    def embedded(self: Any, text: str) -> Any:
        started = time.process_time()
        try:
            return embed(self, text)
        finally:
            model["seconds"] += time.process_time() - started

    LocalE5.query = embedded  # type: ignore[method-assign]
    if unfiltered:  # the baseline: the permission filter taken out of the query
        from docindex.search_api import query

        query.permission_filter = lambda principals: {"match_all": {}}  # type: ignore[assignment]
    if uncached:  # every query embedded, as if each were new (the warm process's query vectors not kept)
        from docindex.index import hybrid

        hybrid.QUERY_VECTORS_KEPT = 0
    handler = load_handler("search")
    context = LocalLambdaContext(function_name="docindex-search-bench")
    print(json.dumps({"ready": str(root)}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        event = json.loads(line)
        engine.update(seconds=0.0, calls=0)
        model["seconds"] = 0.0
        cpu, wall = time.process_time(), time.perf_counter()
        response = handler(event, context)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        body = json.loads(response["body"]) if response.get("statusCode") == 200 else {}
        print(
            json.dumps(
                {
                    "status": response.get("statusCode"),
                    "wall_ms": wall * 1000,
                    "cpu_ms": cpu * 1000,
                    "model_cpu_ms": model["seconds"] * 1000,
                    "engine_ms": engine["seconds"] * 1000,
                    "round_trips": engine["calls"],
                    "total": body.get("total"),
                    "by_meaning": body.get("more_by_meaning"),
                    "returned": len(body.get("hits") or []),
                    "error": None if body else str(response.get("body"))[:300],
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
