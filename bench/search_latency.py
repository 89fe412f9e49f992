"""The search function's latency on >= 10,000 documents, and where the time goes: before -> after in one run.

    .venv/bin/python -m bench.search_latency [--docs 10000] [--repeat 5] [--before REF] [--results bench/results.json]

A real OpenSearch node (``bench.local.search_engine``: 2.19.1 with k-NN, kuromoji and ICU; vectors in
float32, ``VECTOR_ENCODING=fp32``, the Lucene encoding it serves) with the real index settings is loaded
with ``--docs`` documents spread over
20 departments' folders, each stamped as the access map stamps them (``allow_principals``: the
department's group and the administrators; every fifth folder shared with everyone), and the same
documents again with meaning search's passages (their vectors from the real model). Then a set of
Japanese queries goes through the search function itself (``functions/search/app.py``: an HTTP API
payload 2.0 ``GET /search`` event with the JWT authorizer's claims, Powertools' resolver, the
request model, the OpenSearch query with highlight, page hits and facets, the JSON response) as
an employee of one department.

Each search function runs in a process of its own (``bench/search_latency_worker.py``): this
checkout's, and the code at ``--before`` (default: main before issue 48, read from git) — the
same queries, interleaved round by round, against the same engine. Each request reports its wall
time, the CPU the function itself spent (its process's CPU: the engine runs elsewhere), the time spent
waiting on OpenSearch and how many requests went there. Rows: keyword search (before, after, and after
without the permission filter: what the filter costs), hybrid search (before and after, and both with the
process's query vectors not kept: every query embedded, as a query never asked before is), and answers
(``GET /answer``, before and after). The absolute figures are the local node's and the handler's on this
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


# main before issue 48 (586de69: the first code with GET /answer on the real node); issue 35's figures
# were measured against 59f731c (three requests per hybrid search, page hits), which has no /answer
BEFORE_REF = "586de69"
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
    workers: dict[str, tuple[Worker, dict[str, str]]],
    repeat: int,
    *,
    queries: dict[str, tuple[str, ...]] | None = None,
    groups: tuple[str, ...] = ("部署3",),
) -> dict[str, Any]:
    """Every query ``repeat`` times (after a warm-up round) through every worker, alternating.

    ``queries``: a row's own queries (default :data:`QUERIES` for every row), as an employee of ``groups``.
    """
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in workers}
    names = list(workers)
    asked = {name: (queries or {}).get(name, QUERIES) for name in names}
    for round_number in range(repeat + 1):
        order = names if round_number % 2 == 0 else names[::-1]
        for position in range(max(len(q) for q in asked.values())):
            for name in order:
                if position >= len(asked[name]):
                    continue
                worker, params = workers[name]
                answer = worker.search(search_event(asked[name][position], list(groups), **params))
                if round_number:  # the first round warms caches
                    samples[name].append(answer)
    return {name: _summary(rows) for name, rows in samples.items()}


def _with_vectors(client: Any, index: str, documents: list[dict[str, Any]], encoding: str) -> None:
    """The same documents in an index with meaning search's passages, their vectors from the real
    model (the corpus has seven distinct texts: each is embedded once, the serial number left out) in
    ``encoding`` (the VECTOR_ENCODING the engine serves)."""
    from opensearchpy import helpers

    from docindex.core.settings import EmbeddingSettings
    from docindex.embed.document import embed_document
    from docindex.embed.settings import embedder_for, vector_spec
    from docindex.index.mapping import ensure_index

    settings = EmbeddingSettings.from_env({"EMBEDDINGS": "local", "VECTOR_ENCODING": encoding})
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


def function_environment(url: str, index: str = "documents", **extra: str) -> dict[str, str]:
    """The search function's settings against the bench's engine (keyword search: no embedder, unless ``extra``
    says otherwise)."""
    import os

    return {
        "OPENSEARCH_ENDPOINT": url,
        "OPENSEARCH_INDEX": index,
        "OPENSEARCH_AUTH": "none",
        "EMBEDDINGS": "off",
        "AWS_REGION": os.environ.get("AWS_REGION", "us-east-1"),
        "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
        "POWERTOOLS_SERVICE_NAME": "docindex",
        "POWERTOOLS_METRICS_NAMESPACE": "DocIndex",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        **extra,
    }


def measure(docs: int, repeat: int, *, hybrid: bool = True, before: str = BEFORE_REF) -> dict[str, Any]:
    import os
    import tempfile

    from opensearchpy import helpers

    from bench.local import search_engine
    from docindex.access.policy import EVERYONE, group_principal
    from docindex.index.mapping import ensure_index

    admins = group_principal("docindex-admins")
    load_before = os.getloadavg()
    with (
        search_engine(timeout=300, engine="opensearch") as (engine, client),
        tempfile.TemporaryDirectory(prefix="docindex-before-") as scratch,
    ):
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
        encoding = engine.vector_encoding or "fp32"
        if hybrid:
            _with_vectors(client, "documents-vectors", documents, encoding)
        environment = function_environment(engine.url, index)
        old = code_at(before, Path(scratch) / "before")
        vectors = {"OPENSEARCH_INDEX": "documents-vectors", "EMBEDDINGS": "local", "VECTOR_ENCODING": encoding}
        rows: dict[str, tuple[Path, dict[str, str], tuple[str, ...]]] = {
            "keyword before": (old, environment, ()),
            "keyword after": (REPO, environment, ()),
            "keyword after, no permission filter": (REPO, environment, ("--unfiltered",)),
        }
        if hybrid:
            rows.update(
                {
                    "hybrid before": (old, {**environment, **vectors}, ()),
                    # the code before with its query vectors not kept too (before issue 35 it kept none)
                    "hybrid before, every query embedded": (old, {**environment, **vectors}, ("--no-query-cache",)),
                    "hybrid after": (REPO, {**environment, **vectors}, ()),
                    "hybrid after, every query embedded": (REPO, {**environment, **vectors}, ("--no-query-cache",)),
                }
            )
        workers = {name: Worker(root, env, flags=flags) for name, (root, env, flags) in rows.items()}
        try:
            results: dict[str, Any] = interleaved({name: (w, {}) for name, w in workers.items()}, repeat)
        finally:
            for worker in workers.values():
                worker.close()
        if hybrid:
            # Answers (GET /answer, ANSWERS=extractive): the same function, retrieval and sentence choice;
            # answers not kept (ANSWER_CACHE_SECONDS=0): each one retrieved and chosen again
            answering_environment = {**environment, **vectors, "ANSWER_CACHE_SECONDS": "0"}
            answering = {
                # the code at --before answering the same questions (before -> after of the answerer's cost)
                "answer (extractive) before": (Worker(old, answering_environment), {"route": "/answer"}),
                "answer (extractive)": (Worker(REPO, answering_environment), {"route": "/answer"}),
                "answer (extractive), every question embedded": (
                    Worker(REPO, answering_environment, flags=("--no-query-cache",)),
                    {"route": "/answer"},
                ),
            }
            try:
                results.update(interleaved(answering, repeat, queries=dict.fromkeys(answering, QUESTIONS)))
            finally:
                for worker, _ in answering.values():
                    worker.close()
    results["engine"] = engine.name
    results["vector_encoding"] = encoding
    results["documents"] = docs
    results["queries"] = len(QUERIES) * repeat
    results["before"] = before
    results["load_average"] = {
        "start": [round(x, 1) for x in load_before],
        "end": [round(x, 1) for x in os.getloadavg()],
    }
    results["through"] = "functions/search/app.py lambda_handler (GET /search, JWT claims), one process per row"
    return results


# Name search (docindex.index.names) over generated file server paths (bench.corpus.file_path): a
# customer, a meeting, a width variant (ｻﾝﾌﾟﾙ: the paths write both ｻﾝﾌﾟﾙ and サンプル), a spelling
# variant (申込書: the paths write 申し込み書 too), fragments, several words, a folder and a file name.
NAME_QUERIES = (
    *("見積", "議事録 定例会議", "サンプル商事", "ｻﾝﾌﾟﾙ", "最終版 修正", "2024 請求書", "申込書"),
    *("仕様書 在庫管理", "SCAN_201903", "髙橋建設 契約", "応募書類", "コピー"),
)
NAME_ROWS = {
    "keyword search (content)": ({}, QUERIES),
    "name search": ({"scope": "name"}, NAME_QUERIES),
    "name search, by name": ({"scope": "name", "sort": "name"}, NAME_QUERIES),
    "name search, newest first": ({"scope": "name", "sort": "date"}, NAME_QUERIES),
}
# The name search before its words were marked in the file names (issue 43's last round): its own row, the
# code at this commit, so what the marks cost is a ratio in the same run.
NAMES_BEFORE_REF = "7e3a72f"
NAME_BEFORE_ROW = "name search, before the names were marked"
NAME_GROUP = "営業部"
BYTES_SAMPLE = 10_000


def name_document(n: int, *, names: bool = True) -> dict[str, Any]:
    """Document ``n`` of the name bench: a generated path, a few lines of text, the access map's stamp
    (its department's group and the administrators; every fifth department's files shared with everyone)."""
    from bench.corpus import _ORGS, file_path
    from docindex.access.policy import EVERYONE, group_principal
    from docindex.index.documents import file_name_parts, folder_prefixes
    from docindex.index.names import document_names

    key = file_path(n)
    filename, extension = file_name_parts(key)
    org = key.split("/", 1)[0]
    shared = org in _ORGS and _ORGS.index(org) % 5 == 0
    source: dict[str, Any] = {
        "bucket": "docs",
        "key": key,
        "filename": filename,
        "extension": extension,
        "content": "".join(LINES[(n + k) % len(LINES)] for k in range(3)),
        "size": 10_000 + (n * 7919) % 5_000_000,
        "allow_principals": [group_principal(org), group_principal("docindex-admins")] + ([EVERYONE] if shared else []),
        "folders": list(folder_prefixes(key)),
        "last_modified": f"20{16 + n % 10}-{1 + n % 12:02d}-{1 + n % 28:02d}T09:00:00Z",
        "ocr_status": "none",
    }
    if names:
        source["names"] = document_names(key)
    return source


def _grams(text: str) -> set[str]:
    """The ``docindex_names`` analyzer's tokens of ``text`` (single characters and pairs of each run of letters
    and digits), as Python sees letters and digits."""
    import re

    found: set[str] = set()
    for run in re.findall(r"[^\W_]+", text):
        found.update(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found


def postings_estimate(documents: int, frequencies: dict[str, int], grams_per_document: float) -> dict[str, Any]:
    """What the ``names`` field costs a Lucene index, estimated from its terms (for more documents than a node here
    holds: ``--names-bytes``; ``measure_names`` measures the node's own files beside it).

    Postings without frequencies or positions (``index_options: docs``): a document id per (term, document),
    delta-coded in blocks, about log2(N / df) + 1 bits each; the terms dictionary about the term's UTF-8 bytes plus
    8 bytes each; norms one byte per document.
    """
    import math

    postings_bits = sum(df * (math.log2(documents / df) + 1) for df in frequencies.values())
    terms = sum(len(term.encode()) + 8 for term in frequencies)
    total = postings_bits / 8 + terms + documents
    return {
        "terms": len(frequencies),
        "grams_per_document": round(grams_per_document, 1),
        "postings_bytes_per_document": round(postings_bits / 8 / documents, 1),
        "terms_bytes_per_document": round(terms / documents, 2),
        "norms_bytes_per_document": 1,
        "bytes_per_document": round(total / documents, 1),
    }


def names_bytes(docs: int) -> dict[str, Any]:
    """:func:`postings_estimate` of ``docs`` generated paths, without an engine, and the JSON the field adds
    to each write request."""
    import json
    from collections import Counter

    from bench.corpus import file_path
    from docindex.index.names import document_names

    frequencies: Counter[str] = Counter()
    grams = sent = characters = 0
    for n in range(docs):
        key = file_path(n)
        values = document_names(key)
        found = set().union(*(_grams(value) for value in values))
        frequencies.update(found)
        grams += len(found)
        characters += len(key)
        sent += len(json.dumps({"names": values}, ensure_ascii=False).encode()) + 1
    return {
        "documents": docs,
        "mean_path_characters": round(characters / docs, 1),
        "request_bytes_per_document": round(sent / docs, 1),
        **postings_estimate(docs, frequencies, grams / docs),
    }


def measure_names(docs: int, repeat: int, *, before: str = NAMES_BEFORE_REF) -> dict[str, Any]:
    """Name search against keyword search over the same ``docs`` documents, through the search function, and
    against the name search at ``before``, on a real OpenSearch node; the bytes per document the ``names`` field
    adds (the node's store on a sample, and a Lucene estimate on all)."""
    import os
    import tempfile
    import time
    from collections import Counter

    from opensearchpy import helpers

    from bench.local import search_engine
    from docindex.index.mapping import ensure_index

    load_before = os.getloadavg()
    frequencies: Counter[str] = Counter()
    grams = 0

    def actions(index: str, count: int, *, names: bool = True, tally: bool = False) -> Any:
        nonlocal grams
        for n in range(count):
            source = name_document(n, names=names)
            if tally:
                found = set().union(*(_grams(value) for value in source["names"]))
                frequencies.update(found)
                grams += len(found)
            yield {"_index": index, "_id": f"doc-{n}", "_source": source}

    with search_engine(timeout=600, engine="opensearch") as (engine, client):
        sample = min(docs, BYTES_SAMPLE)
        stored = {label: _stored_bytes(client, label, sample, actions) for label in ("before", "after")}
        index = "documents"
        ensure_index(client, index)
        started = time.monotonic()
        helpers.bulk(client, actions(index, docs, tally=True), chunk_size=2000, request_timeout=600)
        client.indices.refresh(index=index)
        load_seconds = time.monotonic() - started
        environment = function_environment(engine.url, index)
        rows = {**NAME_ROWS, NAME_BEFORE_ROW: NAME_ROWS["name search"]}
        with tempfile.TemporaryDirectory(prefix="docindex-names-before-") as scratch:
            old = code_at(before, Path(scratch) / "before")
            workers = {name: Worker(old if name == NAME_BEFORE_ROW else REPO, environment) for name in rows}
            try:
                results: dict[str, Any] = interleaved(
                    {name: (worker, rows[name][0]) for name, worker in workers.items()},
                    repeat,
                    queries={name: queries for name, (_, queries) in rows.items()},
                    groups=(NAME_GROUP,),
                )
            finally:
                for worker in workers.values():
                    worker.close()
        engine_rss = _rss_mib(engine.pid) if engine.pid else None
    results["documents"] = docs
    results["load_seconds"] = round(load_seconds, 1)
    results["engine"] = engine.name
    results["engine_rss_mib"] = engine_rss
    results["queries_per_row"] = {name: len(queries) * repeat for name, (_, queries) in NAME_ROWS.items()}
    results["names_before"] = before
    results["index_bytes_per_document"] = {
        "sample": sample,
        "store_before": round(stored["before"] / sample),
        "store_after": round(stored["after"] / sample),
        "names_field_lucene_estimate": postings_estimate(docs, frequencies, grams / max(1, docs)),
    }
    results["load_average"] = {
        "start": [round(x, 1) for x in load_before],
        "end": [round(x, 1) for x in os.getloadavg()],
    }
    results["through"] = "functions/search/app.py lambda_handler (GET /search, JWT claims), one process per row"
    return results


def _stored_bytes(client: Any, label: str, sample: int, actions: Any) -> int:
    """The node's store (Lucene's files, merged to one segment) for ``sample`` documents with the ``names`` field
    (``after``) or without it and its mapping (``before``, the mapping before issue 43)."""
    from opensearchpy import helpers

    from docindex.index.mapping import index_body

    names = label == "after"
    body = index_body(tier="cjk")
    if not names:
        del body["mappings"]["properties"]["names"]
        body["mappings"]["_source"] = {"excludes": ["variants"]}
    index = f"bytes-{label}"
    client.indices.create(index=index, body=body)
    helpers.bulk(client, actions(index, sample, names=names), chunk_size=2000, request_timeout=600)
    client.indices.refresh(index=index)
    # one segment each: the two sizes differ by the field, not by where the merges happened to stop
    client.indices.forcemerge(index=index, max_num_segments=1, request_timeout=600)
    size = int(client.indices.stats(index=index, metric="store")["_all"]["primaries"]["store"]["size_in_bytes"])
    client.indices.delete(index=index)
    return size


def _rss_mib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def print_names(figures: dict[str, Any]) -> None:
    print(
        f"name search through the function on {figures['documents']:,} generated file server paths "
        f"(loaded in {figures['load_seconds']} s, the node's peak RSS {figures['engine_rss_mib']} MiB); "
        f"load average {figures['load_average']}"
    )
    print(f"  {'':<42} {'p50':>7} {'p95':>7} {'fn CPU p50/p95':>15} {'engine p50/p95':>15} {'hits':>9} {'n':>4}")
    for name in [*NAME_ROWS, NAME_BEFORE_ROW]:
        r = figures.get(name)
        if r is None:
            continue
        print(
            f"  {name:<42} {r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f} "
            f"{r['function_cpu_p50_ms']:>7.1f}/{r['function_cpu_p95_ms']:<7.1f} "
            f"{r['engine_p50_ms']:>7.1f}/{r['engine_p95_ms']:<7.1f} {r['mean_hits']:>9} {r['requests']:>4}"
        )
    size = figures["index_bytes_per_document"]
    estimate = size["names_field_lucene_estimate"]
    print(
        f"  bytes per document, the node's store on {size['sample']:,}: {size['store_before']} -> "
        f"{size['store_after']}; the names field on a Lucene cluster (estimate on all {figures['documents']:,}): "
        f"{estimate['bytes_per_document']} ({estimate['grams_per_document']} grams, {estimate['terms']:,} terms)"
    )


ROWS_PRINTED = (
    "keyword before",
    "keyword after",
    "keyword after, no permission filter",
    "hybrid before",
    "hybrid after",
    "hybrid before, every query embedded",
    "hybrid after, every query embedded",
    "answer (extractive) before",
    "answer (extractive)",
    "answer (extractive), every question embedded",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.search_latency", description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default=BEFORE_REF, help="the commit to compare with (default: %(default)s)")
    parser.add_argument("--no-hybrid", action="store_true", help="skip meaning search (embeds seven texts)")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    parser.add_argument(
        "--names",
        type=int,
        default=0,
        metavar="N",
        help="instead: name search against keyword search on N generated file server paths (issue 43)",
    )
    parser.add_argument(
        "--names-bytes",
        type=int,
        default=0,
        metavar="N",
        help="instead: only the names field's Lucene estimate on N generated paths (no engine: 1,000,000 fit)",
    )
    parser.add_argument(
        "--names-before",
        default=NAMES_BEFORE_REF,
        help="with --names: the commit whose name search is a row of its own (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.names_bytes:
        estimate = names_bytes(args.names_bytes)
        save_section(args.results, "name_search_bytes", estimate)
        print(f"the names field on {args.names_bytes:,} generated paths, Lucene estimate: {estimate}")
        return 0
    if args.names:
        named = measure_names(args.names, args.repeat, before=args.names_before)
        save_section(args.results, "name_search", named)
        print_names(named)
        return 0
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
