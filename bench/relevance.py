"""``make bench`` relevance scenario: recall@3, mean reciprocal rank and query latency.

    .venv/bin/python -m bench.relevance [--code PATH] [--repeat 5] [--json]

Runs the query set of tests/support/relevance.py against osmem-server with the
real index settings and query of this checkout (or of the ``docindex`` package
under ``--code PATH/layers/docindex``, e.g. a checkout of main, for a before /
after comparison). osmem applies neither ``mapping`` char filters nor
``synonym_graph`` when searching, so the synonym queries count as misses here
whatever the settings say; the report says so.
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
    from opensearchpy import OpenSearch
    from osmem_server import OsmemServer

    from tests.support import relevance

    with OsmemServer.start(japanese=True) as server:
        client = OpenSearch(hosts=[server.url], timeout=120)
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
    args = parser.parse_args(argv)
    if args.code:
        sys.path.insert(0, str(args.code.resolve() / "layers" / "docindex"))
    sys.path.insert(1 if args.code else 0, str(REPO))
    result = measure(args.repeat)
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
            note = " (osmem does not apply synonyms)" if row["needs"] == "synonyms" else ""
            print(f"  missed: {row['query']!r} [{row['kind']}] rank {row['rank']}{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
