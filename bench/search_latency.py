"""The search API's query latency with and without the permission filter, on >= 10,000 documents.

    .venv/bin/python -m bench.search_latency [--docs 10000] [--repeat 5] [--results bench/results.json]

osmem-server with the real index settings is loaded with ``--docs`` documents spread over
20 departments' folders, each stamped as the access map stamps them (``allow_principals``: the
department's group and the administrators; every fifth folder shared with everyone). Then a set
of Japanese queries goes through the search function itself (``functions/search/app.py``: an HTTP
API payload 2.0 ``GET /search`` event with the JWT authorizer's claims, Powertools' resolver,
the request model, the OpenSearch query with highlight and facets, the JSON response), as an
employee of one department and, as the baseline of the same run, with the permission filter taken
out of the query (``docindex.search_api.query.permission_filter`` replaced by ``match_all``). The
ratio is what the filter costs; the absolute figures are the emulator's and the handler's on this
machine (the time per request includes the handler's own work, measured round trip).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

from bench.report import save_section

REPO = Path(__file__).resolve().parent.parent
QUERIES = ("売上", "見積書", "会議 議事録", "契約", "東京都", "新製品 発売", "請求書 月末", "出張 報告")
LINES = (
    "東京都の売上は前年同期比で増加しました。",
    "会議議事録：次回の定例会議は来週の月曜日です。",
    "見積書の有効期限は発行日から三十日間です。",
    "請求書は月末締め翌月末払いでお願いします。",
    "新製品の発売に向けて営業部と開発部が連携します。",
    "業務委託契約の更新について法務部に確認しました。",
    "出張報告：大阪支店と福岡営業所を訪問しました。",
)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


def search_event(query: str, groups: list[str]) -> dict[str, Any]:
    """``GET /search?q=…`` as API Gateway's JWT authorizer hands it to the function."""
    from urllib.parse import urlencode

    from devkit.local.gateway import http_api_event

    claims = {"sub": "bench-user", "username": "bench-user", "cognito:groups": groups}
    return http_api_event("GET", "/search", urlencode({"q": query}), {}, claims)


def measure(docs: int, repeat: int) -> dict[str, Any]:
    import os
    from unittest import mock

    from opensearchpy import OpenSearch, helpers
    from osmem_server import OsmemServer

    from devkit.local.context import LocalLambdaContext
    from devkit.local.handlers import load_handler
    from docindex.access.policy import EVERYONE, group_principal
    from docindex.core.observability import logger
    from docindex.index.mapping import ensure_index
    from docindex.search_api import routes

    admins = group_principal("docindex-admins")
    with OsmemServer.start(japanese=True) as server:
        client = OpenSearch(hosts=[server.url], timeout=300)
        index = "documents"
        ensure_index(client, index)

        def document(n: int) -> dict[str, Any]:
            department = n % 20
            allow = [group_principal(f"部署{department}"), admins] + ([EVERYONE] if department % 5 == 0 else [])
            text = "".join(LINES[(n + k) % len(LINES)] for k in range(4)) + f" 管理番号{n}"
            return {
                "_index": index,
                "_id": f"doc-{n}",
                "_source": {
                    "bucket": "docs",
                    "key": f"部署{department}/文書 {n:06d}.txt",
                    "filename": f"文書 {n:06d}.txt",
                    "extension": "txt",
                    "content": text,
                    "allow_principals": allow,
                    "folders": [f"部署{department}/"],
                    "last_modified": f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}T09:00:00Z",
                    "ocr_status": "none",
                },
            }

        helpers.bulk(client, (document(n) for n in range(docs)), chunk_size=1000, request_timeout=300)
        client.indices.refresh(index=index)
        environment = {
            "OPENSEARCH_ENDPOINT": server.url,
            "OPENSEARCH_INDEX": index,
            "OPENSEARCH_AUTH": "none",
            "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
            "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
            "POWERTOOLS_SERVICE_NAME": "docindex",
            "POWERTOOLS_METRICS_NAMESPACE": "DocIndex",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
        }
        results: dict[str, Any] = {}
        logger.setLevel("WARNING")  # the function logs one line per search; the bench prints the figures
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        with mock.patch.dict(os.environ, environment):
            routes._resolver = None  # built from this environment on the first request
            handler = load_handler("search")
            for mode in ("unfiltered", "filtered"):
                latencies: list[float] = []
                totals: list[int] = []
                patch = (
                    mock.patch("docindex.search_api.query.permission_filter", return_value={"match_all": {}})
                    if mode == "unfiltered"
                    else contextlib.nullcontext()
                )
                with patch:
                    for round_number in range(repeat + 1):
                        for query in QUERIES:
                            event = search_event(query, ["部署3"])
                            started = time.perf_counter()
                            response = handler(event, LocalLambdaContext(function_name="docindex-search-bench"))
                            elapsed = (time.perf_counter() - started) * 1000
                            if response["statusCode"] != 200:
                                raise RuntimeError(f"search {query!r}: {response['statusCode']} {response['body']}")
                            if round_number:  # the first round warms caches
                                latencies.append(elapsed)
                                totals.append(int(json.loads(response["body"])["total"]))
                results[mode] = {
                    "p50_ms": round(statistics.median(latencies), 2),
                    "p95_ms": round(_percentile(latencies, 0.95), 2),
                    "mean_hits": round(statistics.mean(totals), 1),
                }
            routes._resolver = None
    results["documents"] = docs
    results["queries"] = len(QUERIES) * repeat
    results["through"] = "functions/search/app.py lambda_handler (GET /search, JWT claims)"
    results["filtered_vs_unfiltered_p50"] = round(results["filtered"]["p50_ms"] / results["unfiltered"]["p50_ms"], 2)
    results["filtered_vs_unfiltered_p95"] = round(results["filtered"]["p95_ms"] / results["unfiltered"]["p95_ms"], 2)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.search_latency", description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    figures = measure(args.docs, args.repeat)
    save_section(args.results, "search_latency", figures)
    u, f = figures["unfiltered"], figures["filtered"]
    print(
        f"search latency through the search function on {figures['documents']:,} documents, "
        f"{figures['queries']} queries: "
        f"without the permission filter p50 {u['p50_ms']} ms / p95 {u['p95_ms']} ms ({u['mean_hits']} hits); "
        f"with it p50 {f['p50_ms']} ms / p95 {f['p95_ms']} ms ({f['mean_hits']} hits); "
        f"ratio p50 x{figures['filtered_vs_unfiltered_p50']}, p95 x{figures['filtered_vs_unfiltered_p95']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
