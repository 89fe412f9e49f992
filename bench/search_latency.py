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


def search_event(query: str, groups: list[str], **params: str) -> dict[str, Any]:
    """``GET /search?q=…`` as API Gateway's JWT authorizer hands it to the function."""
    from urllib.parse import urlencode

    from devkit.local.gateway import http_api_event

    claims = {"sub": "bench-user", "username": "bench-user", "cognito:groups": groups}
    return http_api_event("GET", "/search", urlencode({"q": query, **params}), {}, claims)


def _run_mode(handler: Any, repeat: int, **params: str) -> dict[str, Any]:
    """Every query ``repeat`` times (after a warm-up round) as an employee of 部署3."""
    from devkit.local.context import LocalLambdaContext

    latencies: list[float] = []
    totals: list[int] = []
    for round_number in range(repeat + 1):
        for query in QUERIES:
            event = search_event(query, ["部署3"], **params)
            started = time.perf_counter()
            response = handler(event, LocalLambdaContext(function_name="docindex-search-bench"))
            elapsed = (time.perf_counter() - started) * 1000
            if response["statusCode"] != 200:
                raise RuntimeError(f"search {query!r}: {response['statusCode']} {response['body']}")
            if round_number:  # the first round warms caches
                latencies.append(elapsed)
                totals.append(int(json.loads(response["body"])["total"]))
    return {
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(_percentile(latencies, 0.95), 2),
        "mean_hits": round(statistics.mean(totals), 1),
    }


def _with_vectors(client: Any, index: str, documents: list[dict[str, Any]]) -> None:
    """The same documents in an index with meaning search's passages, their vectors from the real
    model (the corpus has seven distinct texts: each is embedded once, the serial number left out)."""
    from opensearchpy import helpers

    from docindex.core.settings import EmbeddingSettings
    from docindex.embed.document import embed_document
    from docindex.embed.settings import embedder_for, vector_spec
    from docindex.index.mapping import ensure_index

    settings = EmbeddingSettings.from_env({"EMBEDDINGS": "local"})
    embedder, spec = embedder_for(settings), vector_spec(settings)
    assert embedder is not None
    assert spec is not None
    ensure_index(client, index, vectors=spec)
    embedded: dict[str, Any] = {}
    actions = []
    for action in documents:
        source = dict(action["_source"])
        text = source["content"].rsplit(" 管理番号", 1)[0]
        if text not in embedded:
            embedded[text] = embed_document(
                embedder,
                text,
                title=None,
                max_passages=settings.embed_max_passages,
                max_chars=settings.embed_passage_chars,
            )
        source["passages"] = [passage.to_source() for passage in embedded[text].passages]
        source["embedding_model"] = embedder.model_id
        actions.append({**action, "_index": index, "_source": source})
    helpers.bulk(client, actions, chunk_size=500, request_timeout=300)
    client.indices.refresh(index=index)


def _hybrid_modes(
    url: str, client: Any, documents: list[dict[str, Any]], environment: dict[str, str], repeat: int
) -> dict[str, Any]:
    """Meaning search: the same documents with passages and vectors, the vector leg answered by the
    exact stand-in (devkit.local.knn) in front of osmem, the query embedded by the real model in the
    function; keyword-only on that index (``mode=keyword``) as the baseline."""
    import os
    from unittest import mock

    from devkit.faults.proxy import Proxy
    from devkit.local.handlers import load_handler
    from devkit.local.knn import ExactKnn
    from docindex.search_api import routes

    _with_vectors(client, "documents-vectors", documents)
    results: dict[str, Any] = {}
    with Proxy(url, ExactKnn()) as proxy:
        vectors = {**environment, "OPENSEARCH_ENDPOINT": proxy.url, "OPENSEARCH_INDEX": "documents-vectors"}
        with mock.patch.dict(os.environ, {**vectors, "EMBEDDINGS": "local"}):
            routes._resolver = None
            handler = load_handler("search")
            results["vectors_keyword_only"] = _run_mode(handler, repeat, mode="keyword")
            results["hybrid"] = _run_mode(handler, repeat)
            routes._resolver = None
    return results


def measure(docs: int, repeat: int, *, hybrid: bool = True) -> dict[str, Any]:
    import os
    from unittest import mock

    from opensearchpy import OpenSearch, helpers
    from osmem_server import OsmemServer

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

        documents = [document(n) for n in range(docs)]
        helpers.bulk(client, documents, chunk_size=1000, request_timeout=300)
        client.indices.refresh(index=index)
        environment = {
            "OPENSEARCH_ENDPOINT": server.url,
            "OPENSEARCH_INDEX": index,
            "OPENSEARCH_AUTH": "none",
            "EMBEDDINGS": "off",
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
                patch = (
                    mock.patch("docindex.search_api.query.permission_filter", return_value={"match_all": {}})
                    if mode == "unfiltered"
                    else contextlib.nullcontext()
                )
                with patch:
                    results[mode] = _run_mode(handler, repeat)
            routes._resolver = None
        if hybrid:
            results.update(_hybrid_modes(server.url, client, documents, environment, repeat))
    results["documents"] = docs
    results["queries"] = len(QUERIES) * repeat
    results["through"] = "functions/search/app.py lambda_handler (GET /search, JWT claims)"
    results["filtered_vs_unfiltered_p50"] = round(results["filtered"]["p50_ms"] / results["unfiltered"]["p50_ms"], 2)
    results["filtered_vs_unfiltered_p95"] = round(results["filtered"]["p95_ms"] / results["unfiltered"]["p95_ms"], 2)
    if hybrid:
        results["hybrid_vs_keyword_only_p50"] = round(
            results["hybrid"]["p50_ms"] / results["vectors_keyword_only"]["p50_ms"], 2
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.search_latency", description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-hybrid", action="store_true", help="skip meaning search (embeds seven texts)")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    figures = measure(args.docs, args.repeat, hybrid=not args.no_hybrid)
    save_section(args.results, "search_latency", figures)
    u, f = figures["unfiltered"], figures["filtered"]
    print(
        f"search latency through the search function on {figures['documents']:,} documents, "
        f"{figures['queries']} queries: "
        f"without the permission filter p50 {u['p50_ms']} ms / p95 {u['p95_ms']} ms ({u['mean_hits']} hits); "
        f"with it p50 {f['p50_ms']} ms / p95 {f['p95_ms']} ms ({f['mean_hits']} hits); "
        f"ratio p50 x{figures['filtered_vs_unfiltered_p50']}, p95 x{figures['filtered_vs_unfiltered_p95']}"
    )
    if "hybrid" in figures:
        k, h = figures["vectors_keyword_only"], figures["hybrid"]
        print(
            f"  meaning search (index with vectors; the vector leg on the exact stand-in, not HNSW): "
            f"keyword-only p50 {k['p50_ms']} ms / p95 {k['p95_ms']} ms; hybrid p50 {h['p50_ms']} ms / "
            f"p95 {h['p95_ms']} ms ({h['mean_hits']} hits); ratio p50 x{figures['hybrid_vs_keyword_only_p50']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
