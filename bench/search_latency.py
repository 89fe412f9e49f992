"""The search function's latency on >= 10,000 documents, and where the time goes: before -> after in one run.

    .venv/bin/python -m bench.search_latency [--docs 10000] [--repeat 5] [--before REF] [--results bench/results.json]

osmem-server with the real index settings is loaded with ``--docs`` documents spread over
20 departments' folders, each stamped as the access map stamps them (``allow_principals``: the
department's group and the administrators; every fifth folder shared with everyone), and the same
documents again with meaning search's passages (their vectors from the real model). Then a set of
Japanese queries goes through the search function itself (``functions/search/app.py``: an HTTP API
payload 2.0 ``GET /search`` event with the JWT authorizer's claims, Powertools' resolver, the
request model, the OpenSearch query with highlight, page hits and facets, the JSON response) as
an employee of one department.

Each search function runs in a process of its own (``bench/search_latency_worker.py``): this
checkout's, and the code at ``--before`` (default: main before issue 35, read from git) — the
same queries, interleaved round by round, against the same engine. Each request reports its wall
time, the CPU the function itself spent (its process's CPU: the engine and the k-NN stand-in run
elsewhere), the time spent waiting on OpenSearch and how many requests went there. Rows: keyword
search (before, after, and after without the permission filter: what the filter costs), and
hybrid search (before on the exact k-NN stand-in, as it shipped; before and after on the
approximate HNSW stand-in; and before and after with the process's query vectors not kept: every
query embedded, as a query never asked before is). The absolute figures are the emulator's and the handler's on this
machine; the load average is recorded beside them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
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


# Questions the answers rows ask (GET /answer): the corpus's lines, asked as employees would.
QUESTIONS = (
    "東京都の売上はどうなった？",
    "次回の定例会議はいつ？",
    "見積書の有効期限は何日間？",
    "請求書の支払い条件は？",
    "新製品の発売に向けてどこが連携する？",
    "業務委託契約の更新は誰に確認した？",
    "出張ではどこを訪問した？",
    "株主総会の議決権行使の方法は？",
)


def search_event(query: str, groups: list[str], **params: str) -> dict[str, Any]:
    """``GET /search?q=…`` (or, with ``route="/answer"``, ``GET /answer?q=…``) as API Gateway's JWT authorizer
    hands it to the function."""
    from urllib.parse import urlencode

    from devkit.local.gateway import http_api_event

    route = params.pop("route", "/search")
    claims = {"sub": "bench-user", "username": "bench-user", "cognito:groups": groups}
    return http_api_event("GET", route, urlencode({"q": query, **params}), {}, claims)


BEFORE_REF = "59f731c"  # main before issue 35: three requests per hybrid search, page hits, the exact stand-in
WORKER = Path(__file__).resolve().parent / "search_latency_worker.py"


def code_at(ref: str, into: Path) -> Path:
    """The code at ``ref`` (the package, the functions, the devkit), read from this repository's git."""
    import subprocess  # nosec B404 - git, with fixed arguments

    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(  # noqa: S603  # nosec B603
        ["git", "-C", str(REPO), "archive", ref, "layers/docindex", "functions", "devkit"],  # noqa: S607
        check=True,
        capture_output=True,
    ).stdout
    import io
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


class Worker:
    """A search function in its own process (``bench/search_latency_worker.py``)."""

    def __init__(self, root: Path, environment: dict[str, str], *, flags: tuple[str, ...] = ()) -> None:
        import os
        import subprocess  # nosec B404

        argv = [sys.executable, "-P", str(WORKER), str(root), *flags]
        self.process = subprocess.Popen(  # noqa: S603  # nosec B603
            argv,
            env={**os.environ, **environment, "PYTHONPATH": ""},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._read()
        if "ready" not in ready:
            raise RuntimeError(f"the search worker for {root} did not start: {ready}")

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the search worker exited")
        return dict(json.loads(line))

    def search(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(event, ensure_ascii=False) + "\n")
        self.process.stdin.flush()
        answer = self._read()
        if answer["status"] != 200:
            raise RuntimeError(f"search failed: {answer}")
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def _summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    def pct(name: str, q: float) -> float:
        return round(_percentile([s[name] for s in samples], q), 1)

    own = [s["wall_ms"] - s["engine_ms"] for s in samples]
    return {
        "p50_ms": pct("wall_ms", 0.5),
        "p95_ms": pct("wall_ms", 0.95),
        "function_cpu_p50_ms": pct("cpu_ms", 0.5),
        "function_cpu_p95_ms": pct("cpu_ms", 0.95),
        "function_wall_p95_ms": round(_percentile(own, 0.95), 1),
        "model_cpu_p50_ms": pct("model_cpu_ms", 0.5),
        "function_cpu_without_model_p95_ms": round(
            _percentile([s["cpu_ms"] - s["model_cpu_ms"] for s in samples], 0.95), 1
        ),
        "engine_p50_ms": pct("engine_ms", 0.5),
        "engine_p95_ms": pct("engine_ms", 0.95),
        "engine_share": round(sum(s["engine_ms"] for s in samples) / max(1e-9, sum(s["wall_ms"] for s in samples)), 2),
        "round_trips": round(statistics.mean(s["round_trips"] for s in samples), 2),
        "mean_hits": round(statistics.mean(s["total"] or 0 for s in samples), 1),
        "mean_by_meaning": round(statistics.mean(s["by_meaning"] or 0 for s in samples), 2),
        "requests": len(samples),
    }


def interleaved(
    workers: dict[str, tuple[Worker, dict[str, str]]], repeat: int, queries: tuple[str, ...] = QUERIES
) -> dict[str, Any]:
    """Every query ``repeat`` times (after a warm-up round) through every worker, alternating."""
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in workers}
    names = list(workers)
    for round_number in range(repeat + 1):
        order = names if round_number % 2 == 0 else names[::-1]
        for query in queries:
            for name in order:
                worker, params = workers[name]
                answer = worker.search(search_event(query, ["部署3"], **params))
                if round_number:  # the first round warms caches
                    samples[name].append(answer)
    return {name: _summary(rows) for name, rows in samples.items()}


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


def measure(docs: int, repeat: int, *, hybrid: bool = True, before: str = BEFORE_REF) -> dict[str, Any]:
    import os
    import tempfile

    from opensearchpy import OpenSearch, helpers
    from osmem_server import OsmemServer

    from devkit.faults.proxy import Proxy
    from devkit.local.knn import ExactKnn, HnswKnn
    from docindex.access.policy import EVERYONE, group_principal
    from docindex.index.mapping import ensure_index

    admins = group_principal("docindex-admins")
    load_before = os.getloadavg()
    with (
        OsmemServer.start(japanese=True) as server,
        tempfile.TemporaryDirectory(prefix="docindex-before-") as scratch,
    ):
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
        if hybrid:
            _with_vectors(client, "documents-vectors", documents)
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
        old = code_at(before, Path(scratch) / "before")
        with Proxy(server.url, ExactKnn()) as exact, Proxy(server.url, HnswKnn()) as hnsw:
            vectors = {"OPENSEARCH_INDEX": "documents-vectors", "EMBEDDINGS": "local"}
            rows: dict[str, tuple[Path, dict[str, str], tuple[str, ...]]] = {
                "keyword before": (old, environment, ()),
                "keyword after": (REPO, environment, ()),
                "keyword after, no permission filter": (REPO, environment, ("--unfiltered",)),
            }
            if hybrid:
                rows.update(
                    {
                        "hybrid before, exact stand-in": (
                            old,
                            {**environment, **vectors, "OPENSEARCH_ENDPOINT": exact.url},
                            (),
                        ),
                        "hybrid before, HNSW stand-in": (
                            old,
                            {**environment, **vectors, "OPENSEARCH_ENDPOINT": hnsw.url},
                            (),
                        ),
                        # the code before with its query vectors not kept too (before issue 35 it kept none)
                        "hybrid before, every query embedded": (
                            old,
                            {**environment, **vectors, "OPENSEARCH_ENDPOINT": hnsw.url},
                            ("--no-query-cache",),
                        ),
                        "hybrid after, HNSW stand-in": (
                            REPO,
                            {**environment, **vectors, "OPENSEARCH_ENDPOINT": hnsw.url},
                            (),
                        ),
                        "hybrid after, every query embedded": (
                            REPO,
                            {**environment, **vectors, "OPENSEARCH_ENDPOINT": hnsw.url},
                            ("--no-query-cache",),
                        ),
                    }
                )
            workers = {name: Worker(root, env, flags=flags) for name, (root, env, flags) in rows.items()}
            try:
                results: dict[str, Any] = interleaved({name: (w, {}) for name, w in workers.items()}, repeat)
            finally:
                for worker in workers.values():
                    worker.close()
            if hybrid:
                # Answers (GET /answer, ANSWERS=extractive): the same function, retrieval and sentence choice
                answering = {
                    # answers not kept (ANSWER_CACHE_SECONDS=0): each one retrieved and chosen again
                    "answer (extractive), HNSW stand-in": (
                        Worker(
                            REPO,
                            {**environment, **vectors, "OPENSEARCH_ENDPOINT": hnsw.url, "ANSWER_CACHE_SECONDS": "0"},
                        ),
                        {"route": "/answer"},
                    ),
                    "answer (extractive), every question embedded": (
                        Worker(
                            REPO,
                            {**environment, **vectors, "OPENSEARCH_ENDPOINT": hnsw.url, "ANSWER_CACHE_SECONDS": "0"},
                            flags=("--no-query-cache",),
                        ),
                        {"route": "/answer"},
                    ),
                }
                try:
                    results.update(interleaved(answering, repeat, QUESTIONS))
                finally:
                    for worker, _ in answering.values():
                        worker.close()
    results["documents"] = docs
    results["queries"] = len(QUERIES) * repeat
    results["before"] = before
    results["load_average"] = {
        "start": [round(x, 1) for x in load_before],
        "end": [round(x, 1) for x in os.getloadavg()],
    }
    results["through"] = "functions/search/app.py lambda_handler (GET /search, JWT claims), one process per row"
    return results


ROWS_PRINTED = (
    "keyword before",
    "keyword after",
    "keyword after, no permission filter",
    "hybrid before, exact stand-in",
    "hybrid before, HNSW stand-in",
    "hybrid after, HNSW stand-in",
    "hybrid before, every query embedded",
    "hybrid after, every query embedded",
    "answer (extractive), HNSW stand-in",
    "answer (extractive), every question embedded",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.search_latency", description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default=BEFORE_REF, help="the commit to compare with (default: %(default)s)")
    parser.add_argument("--no-hybrid", action="store_true", help="skip meaning search (embeds seven texts)")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    figures = measure(args.docs, args.repeat, hybrid=not args.no_hybrid, before=args.before)
    save_section(args.results, "search_latency", figures)
    print(
        f"search through the function on {figures['documents']:,} documents, {figures['queries']} queries per row, "
        f"before = {figures['before']}; load average {figures['load_average']}"
    )
    print(
        f"  {'':<38} {'p50':>7} {'p95':>7} {'fn CPU p50/p95':>15} {'fn wall p95':>11} "
        f"{'engine p50/p95':>15} {'engine':>6} {'trips':>5} {'hits':>7} {'+meaning':>8} {'model p50':>9} "
        f"{'fn-model p95':>12}"
    )
    for name in ROWS_PRINTED:
        if name not in figures:
            continue
        r = figures[name]
        print(
            f"  {name:<38} {r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f} "
            f"{r['function_cpu_p50_ms']:>7.1f}/{r['function_cpu_p95_ms']:<7.1f} {r['function_wall_p95_ms']:>11.1f} "
            f"{r['engine_p50_ms']:>7.1f}/{r['engine_p95_ms']:<7.1f} {r['engine_share']:>6.0%} {r['round_trips']:>5} "
            f"{r['mean_hits']:>7} {r['mean_by_meaning']:>8} {r['model_cpu_p50_ms']:>9.1f} "
            f"{r['function_cpu_without_model_p95_ms']:>12.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
