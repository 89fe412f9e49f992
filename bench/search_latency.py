"""The search API's query latency with and without the permission filter, on >= 10,000 documents.

    .venv/bin/python -m bench.search_latency [--docs 10000] [--repeat 5] [--results bench/results.json]

osmem-server with the real index settings is loaded with ``--docs`` documents spread over
20 departments' folders, each stamped as the access map stamps them (``allow_principals``: the
department's group and the administrators; every fifth folder shared with everyone). Then the
search API's own request bodies (``docindex.search_api.query.search_body``: query, highlight,
facets, sort) are sent for a set of Japanese queries, as an employee of one department and, as
the baseline of the same run, with the permission filter taken out. The ratio is what the filter
costs; the absolute figures are the emulator's on this machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

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


def measure(docs: int, repeat: int) -> dict[str, Any]:
    from opensearchpy import OpenSearch, helpers
    from osmem_server import OsmemServer

    from docindex.access.policy import EVERYONE, group_principal
    from docindex.index.mapping import ensure_index
    from docindex.search_api.query import SearchRequest, search_body

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
        employee = [group_principal("部署3"), EVERYONE]
        results: dict[str, Any] = {}
        for mode in ("unfiltered", "filtered"):
            latencies: list[float] = []
            totals: list[int] = []
            for round_number in range(repeat + 1):
                for query in QUERIES:
                    body = search_body(
                        SearchRequest(q=query),
                        employee,
                        max_page_size=100,
                        max_result_window=10_000,
                        max_analyzer_offset=999_999,
                    )
                    if mode == "unfiltered":
                        body["query"]["bool"]["filter"] = body["query"]["bool"]["filter"][1:]
                    started = time.perf_counter()
                    response = client.search(index=index, body=body)
                    elapsed = (time.perf_counter() - started) * 1000
                    if round_number:  # the first round warms caches
                        latencies.append(elapsed)
                        totals.append(int(response["hits"]["total"]["value"]))
            results[mode] = {
                "p50_ms": round(statistics.median(latencies), 2),
                "p95_ms": round(_percentile(latencies, 0.95), 2),
                "mean_hits": round(statistics.mean(totals), 1),
            }
    results["documents"] = docs
    results["queries"] = len(QUERIES) * repeat
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
    data: dict[str, Any] = {}
    if args.results.exists():
        try:
            data = json.loads(args.results.read_text(encoding="utf-8"))
        except ValueError:
            data = {}
    data["search_latency"] = figures
    args.results.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    u, f = figures["unfiltered"], figures["filtered"]
    print(
        f"search latency on {figures['documents']:,} documents, {figures['queries']} queries: "
        f"without the permission filter p50 {u['p50_ms']} ms / p95 {u['p95_ms']} ms ({u['mean_hits']} hits); "
        f"with it p50 {f['p50_ms']} ms / p95 {f['p95_ms']} ms ({f['mean_hits']} hits); "
        f"ratio p50 x{figures['filtered_vs_unfiltered_p50']}, p95 x{figures['filtered_vs_unfiltered_p95']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
