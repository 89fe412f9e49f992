"""``make bench`` relevance scenario: recall@3, mean reciprocal rank and query latency.

    .venv/bin/python -m bench.relevance [--code PATH] [--repeat 5] [--json] [--results bench/results.json]

Runs the query set of tests/support/relevance.py against the bench's engine (``bench.local.search_engine``:
a real OpenSearch node, or osmem-server with ``DOCINDEX_BENCH_ENGINE=osmem``) with the real index settings
and query of this checkout (or of the ``docindex`` package under ``--code PATH/layers/docindex``, e.g. a
checkout of main, for a before / after comparison). osmem applied neither ``mapping`` char filters nor
``synonym_graph`` when searching; the real node applies both, and the query side applies both too
(normalization and the vocabulary's synonyms as query variants). The
figures go under ``"relevance"`` into ``--results`` (``make bench``'s
``bench/results.json``, created if ``bench.run`` has not written it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def measure(repeat: int) -> dict[str, Any]:
    from bench.local import search_engine
    from tests.support import relevance

    with search_engine() as (_, client):
        relevance.load(client, "documents")
        relevance.run(client, "documents")  # warm-up
        rounds = [relevance.run(client, "documents") for _ in range(repeat)]
    outcomes = rounds[-1]
    latencies = sorted(o.seconds * 1000 for r in rounds for o in r)
    import docindex

    return {
        "code": str(Path(docindex.__file__).parent),
        **relevance.summary(outcomes),
        "latency_ms": {
            "p50": round(statistics.median(latencies), 2),
            "p95": round(latencies[int(len(latencies) * 0.95) - 1], 2),
        },
        "queries_detail": [
            {"query": o.query.text, "kind": o.query.kind, "rank": o.rank, "needs": o.query.needs} for o in outcomes
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.relevance", description=__doc__)
    parser.add_argument("--code", type=Path, help="a checkout whose docindex package is measured instead")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the query set for the latency")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--results", type=Path, default=REPO / "bench" / "results.json", help="add the figures to this JSON file"
    )
    args = parser.parse_args(argv)
    if args.code:
        sys.path.insert(0, str(args.code.resolve() / "layers" / "docindex"))
    sys.path.insert(1 if args.code else 0, str(REPO))
    result = measure(args.repeat)
    _record(args.results, result)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return 0
    print(f"relevance ({result['queries']} queries, code {result['code']})")
    print(
        f"  recall@3 {result['recall_at_3']:.2f}   MRR {result['mrr']:.3f}   "
        f"latency p50 {result['latency_ms']['p50']} ms, p95 {result['latency_ms']['p95']} ms"
    )
    for row in result["queries_detail"]:
        if row["rank"] is None or row["rank"] > 3:
            print(f"  missed: {row['query']!r} [{row['kind']}] rank {row['rank']}")
    return 0


def _record(path: Path, result: dict[str, Any]) -> None:
    """Put the figures under ``"relevance"`` in ``path`` (the other scenarios' results stay)."""
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            data = {}
    data["relevance"] = result
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
