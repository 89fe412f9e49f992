"""``make bench`` meaning-search scenario: keyword-only against hybrid on employees' own words.

    .venv/bin/python -m bench.meaning [--docs 2000] [--json] [--results bench/results.json]

The query set is ``bench.meaning_corpus`` (98 queries as employees phrase them, over 91 files
that answer them and generated near misses up to ``--docs``; kept out of the tests so that it
measures rather than fits). Each query runs through ``docindex.index.search.search`` twice on
the same index — keyword-only, then hybrid (keyword and vector legs fused) — and the figures
are recall@3, MRR and nDCG@10 of the file that answers it, overall and per kind of query. The
existing sets must not get worse with hybrid on: the keyword relevance set
(``tests/support/relevance.py``) and the spelling-variant pairs (``bench.variants``) are run the
same two ways.

Costs, on this machine: the embedding CPU per passage and per document (the local model,
``EMBED_THREADS=1``), the index size per document with and without vectors (osmem's estimate),
and the query latency of both modes. Vectors are cached under ``bench/corpus/`` (keyed by the
model and the text), so a second run embeds nothing.

osmem-server answers ``knn`` queries through the exact stand-in (``devkit.local.knn``): the
vector leg here is exact search; on a cluster it is HNSW.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / "corpus" / "meaning-vectors.jsonl"
BUCKET = "meaning"


@dataclass(frozen=True)
class Outcome:
    kind: str
    rank: int | None  # 1-based rank of the answer in the top 10, None when absent
    seconds: float


def metrics(outcomes: list[Outcome]) -> dict[str, float]:
    """recall@3, MRR and nDCG@10 (one relevant file per query)."""
    n = len(outcomes) or 1
    return {
        "queries": len(outcomes),
        "recall_at_3": round(sum(o.rank is not None and o.rank <= 3 for o in outcomes) / n, 3),
        "mrr": round(sum(1 / o.rank for o in outcomes if o.rank) / n, 3),
        "ndcg_at_10": round(sum(1 / math.log2(o.rank + 1) for o in outcomes if o.rank) / n, 3),
    }


class VectorCache:
    """Embedded documents by (model, title, text), in a JSON-lines file outside git."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self._entries[entry["key"]] = entry["document"]

    @staticmethod
    def key(model_id: str, title: str, text: str) -> str:
        return hashlib.sha256("\0".join((model_id, title, text)).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        return self._entries.get(key)

    def put(self, key: str, document: dict[str, Any]) -> None:
        self._entries[key] = document
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, "document": document}, ensure_ascii=False) + "\n")


def corpus(size: int) -> list[tuple[str, str]]:
    from bench.meaning_corpus import TARGETS, near_misses

    return [*TARGETS, *near_misses(max(0, size - len(TARGETS)))]


def _settings() -> Any:
    from docindex.core.settings import EmbeddingSettings

    return EmbeddingSettings.from_env({"EMBEDDINGS": "local", "EMBED_THREADS": "1"})


def embed_corpus(documents: list[tuple[str, str]], cache: VectorCache) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every document's passages and vectors (from the cache where it has them); the embedding cost."""
    from docindex.embed.document import EmbeddedDocument, embed_document
    from docindex.embed.settings import embedder_for

    settings = _settings()
    embedder = embedder_for(settings)
    assert embedder is not None
    embedded: dict[str, Any] = {}
    cpu = 0.0
    passages_embedded = documents_embedded = 0
    for key, text in documents:
        title = key.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        cache_key = VectorCache.key(embedder.model_id, title, text)
        cached = EmbeddedDocument.from_cache(cache.get(cache_key))
        if cached is None:
            started = time.process_time()
            cached = embed_document(
                embedder,
                text,
                title=title,
                max_passages=settings.embed_max_passages,
                max_chars=settings.embed_passage_chars,
            )
            cpu += time.process_time() - started
            passages_embedded += len(cached.passages)
            documents_embedded += 1
            cache.put(cache_key, cached.to_cache())
        embedded[key] = cached
    cost: dict[str, Any] = {"model": embedder.model_id, "documents_embedded_now": documents_embedded}
    if passages_embedded:
        cost["cpu_ms_per_passage"] = round(cpu / passages_embedded * 1000, 1)
        cost["cpu_ms_per_document"] = round(cpu / documents_embedded * 1000, 1)
    cost["passages_per_document"] = round(
        statistics.mean(len(e.passages) for e in embedded.values()) if embedded else 0.0, 2
    )
    return embedded, cost


def embedding_cost(documents: list[tuple[str, str]], queries: list[str]) -> dict[str, Any]:
    """The model's CPU, measured every run whatever the cache holds: ``documents`` embedded
    afresh (the worker's work per document) and ``queries`` (the search function's per search)."""
    from docindex.embed.document import embed_document
    from docindex.embed.settings import embedder_for

    settings = _settings()
    embedder = embedder_for(settings)
    assert embedder is not None
    embedder.query("準備")  # the model loaded before the clock starts
    passages, started = 0, time.process_time()
    for key, text in documents:
        title = key.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        embedded = embed_document(
            embedder,
            text,
            title=title,
            max_passages=settings.embed_max_passages,
            max_chars=settings.embed_passage_chars,
        )
        passages += len(embedded.passages)
    passage_cpu = (time.process_time() - started) / max(1, passages)
    query_cpu = []
    for text in queries:
        started = time.process_time()
        embedder.query(text)
        query_cpu.append(time.process_time() - started)
    return {
        "sample_documents": len(documents),
        "sample_passages": passages,
        "cpu_ms_per_passage": round(passage_cpu * 1000, 1),
        "cpu_ms_per_query": round(statistics.median(query_cpu) * 1000, 1),
        # A long document reaches EMBED_MAX_PASSAGES passages (its first EMBED_PASSAGE_CHARS x that).
        "cpu_ms_per_document_at_the_cap": round(passage_cpu * settings.embed_max_passages * 1000),
    }


def load(
    client: Any, index: str, documents: list[tuple[str, str]], embedded: dict[str, Any], *, vectors: bool = True
) -> None:
    """The corpus as docindex writes it: every field, and (``vectors``) the passages with their vectors."""
    from opensearchpy import helpers

    from docindex.core.changes import doc_id
    from docindex.embed.settings import vector_spec
    from docindex.index.documents import IndexDocument
    from docindex.index.mapping import ensure_index

    model = next(iter(embedded.values())).model_id if embedded else None
    spec = vector_spec(_settings())
    assert spec is not None
    assert spec.model_id == model
    ensure_index(client, index, vectors=spec if vectors else None)

    def actions() -> Any:
        for key, text in documents:
            doc = IndexDocument.for_object(bucket=BUCKET, key=key, size=len(text.encode()), etag="e", version_id=None)
            doc = doc.with_content(text=text, title=None, page_count=None, truncated=False, error=None)
            doc = doc.with_embeddings(embedded[key] if vectors else None)
            yield {"_index": index, "_id": doc_id(BUCKET, key), "_source": doc.source()}

    helpers.bulk(client, actions(), chunk_size=200, request_timeout=300)
    client.indices.refresh(index=index)


def run(search: Callable[..., Any], client: Any, index: str, queries: Any, *, hybrid: bool) -> list[Outcome]:
    outcomes = []
    for query in queries:
        started = time.perf_counter()
        hits = search(client, index, query.text, size=10, hybrid=hybrid)
        elapsed = time.perf_counter() - started
        keys = [hit["key"] for hit in hits]
        rank = keys.index(query.expected) + 1 if query.expected in keys else None
        outcomes.append(Outcome(query.kind, rank, elapsed))
    return outcomes


def by_kind(outcomes: list[Outcome]) -> dict[str, Any]:
    kinds = sorted({o.kind for o in outcomes})
    return {"all": metrics(outcomes), **{k: metrics([o for o in outcomes if o.kind == k]) for k in kinds}}


def latency(outcomes: list[Outcome]) -> dict[str, float]:
    ms = sorted(o.seconds * 1000 for o in outcomes)
    return {"p50": round(statistics.median(ms), 1), "p95": round(ms[max(0, int(len(ms) * 0.95) - 1)], 1)}


def measure(docs: int, encoding: str = "fp32") -> dict[str, Any]:
    from opensearchpy import OpenSearch
    from osmem_server import OsmemServer

    from bench.meaning_corpus import QUERIES
    from devkit.faults.proxy import Proxy
    from devkit.local.encodings import VectorEncoder
    from devkit.local.knn import ExactKnn
    from docindex.index.encodings import encoding as encoding_of
    from docindex.index.search import search

    documents = corpus(docs)
    embedded, cost = embed_corpus(documents, VectorCache(CACHE))
    cost.update(embedding_cost(documents[:40], [q.text for q in QUERIES[:20]]))
    vectors = [p.vector for e in embedded.values() for p in e.passages]
    # The stand-in scores the vectors as the field's encoding keeps them (devkit.local.encodings).
    encoder = VectorEncoder.of(encoding, vectors)
    with OsmemServer.start(japanese=True) as server, Proxy(server.url, ExactKnn(encoder)) as proxy:
        client = OpenSearch(hosts=[proxy.url], timeout=300)
        load(client, "documents", documents, embedded)
        load(client, "documents-without-vectors", documents, embedded, vectors=False)
        size = {name: _store_bytes(client, name) for name in ("documents-without-vectors", "documents")}
        run(search, client, "documents", QUERIES[:5], hybrid=True)  # warm-up: the query model, the caches
        keyword = run(search, client, "documents", QUERIES, hybrid=False)
        hybrid = run(search, client, "documents", QUERIES, hybrid=True)
        existing = _existing_sets(client, search)
    return {
        "documents": len(documents),
        "embedding": cost,
        "keyword_only": by_kind(keyword),
        "hybrid": by_kind(hybrid),
        "latency_ms": {"keyword_only": latency(keyword), "hybrid": latency(hybrid)},
        "encoding": encoding,
        "index_bytes_per_document": {
            "without_vectors": round(size["documents-without-vectors"] / len(documents)),
            "with_vectors": round(size["documents"] / len(documents)),
        },
        "stored_bytes_per_document": stored_bytes(size, documents, embedded, encoding_of(encoding)),
        "existing_sets": existing,
    }


def stored_bytes(size: dict[str, int], documents: list[Any], embedded: dict[str, Any], encoding: Any) -> dict[str, int]:
    """What a cluster keeps per document, before -> after issue 36 (osmem's store is the JSON it was sent).

    Before: the JSON with every passage's vector in ``_source`` as numbers, plus the float32 field.
    After: the JSON without those numbers (derived source puts them back from the field when read),
    plus the field in ``encoding`` (raw vectors kept on disk where the encoding rescores or derives).
    The text fields' postings are the same in both and in neither figure (osmem does not count them).
    """
    from docindex.index.encodings import ENCODINGS

    passages = [p for e in embedded.values() for p in e.passages]
    vector_json = sum(len(json.dumps(p.vector)) + len(',"vector":') for p in passages)
    dimension = len(passages[0].vector) if passages else 0
    fp32 = ENCODINGS["fp32"].disk_bytes(dimension)
    sent = size["documents"]
    return {
        "before": round((sent + len(passages) * fp32) / len(documents)),
        "after": round((sent - vector_json + len(passages) * encoding.disk_bytes(dimension)) / len(documents)),
        "vector_json_per_passage": round(vector_json / max(1, len(passages))),
        "passages_per_document_x100": round(100 * len(passages) / len(documents)),
    }


def _store_bytes(client: Any, index: str) -> int:
    """osmem's own estimate of the index's size (not Lucene's files)."""
    client.indices.refresh(index=index)
    return int(client.indices.stats(index=index)["_all"]["primaries"]["store"]["size_in_bytes"])


def _existing_sets(client: Any, search: Callable[..., Any]) -> dict[str, Any]:
    """The keyword relevance set (tests/support/relevance.py) and the spelling-variant pairs
    (bench.variants, both directions), keyword-only and hybrid, their files with vectors."""
    from bench import variants
    from tests.support import relevance

    documents = [(key, "\n".join(filter(None, (title, text)))) for key, (title, text) in relevance.DOCUMENTS.items()]
    embedded, _ = embed_corpus(documents, VectorCache(CACHE))
    load(client, "relevance", documents, embedded)
    found: dict[str, Any] = {"relevance": {}, "variants": {}}
    for name, hybrid in (("keyword_only", False), ("hybrid", True)):

        def run_one(c: Any, i: str, q: str, size: int, hybrid: bool = hybrid) -> Any:
            return search(c, i, q, size=size, hybrid=hybrid)

        found["relevance"][name] = relevance.summary(relevance.run(client, "relevance", search=run_one))
    outcomes: dict[str, list[Outcome]] = {"keyword_only": [], "hybrid": []}
    for direction in ("forward", "backward"):
        pairs = variants._documents(direction)
        embedded, _ = embed_corpus(pairs, VectorCache(CACHE))
        index = f"variants-{direction}"
        load(client, index, pairs, embedded)
        for number, (kind, written, typed) in enumerate(variants.PAIRS):
            query = MeaningQueryLike(typed if direction == "forward" else written, f"pairs/{number:03d}.txt", kind)
            for name, hybrid in (("keyword_only", False), ("hybrid", True)):
                outcomes[name] += run(search, client, index, [query], hybrid=hybrid)
    found["variants"] = {name: metrics(rows) for name, rows in outcomes.items()}
    return found


@dataclass(frozen=True)
class MeaningQueryLike:
    text: str
    expected: str
    kind: str


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.meaning", description=__doc__)
    parser.add_argument("--docs", type=int, default=2000, help="documents in the index (91 answer the queries)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--encoding",
        default=None,
        help="the vector field's encoding the stand-in scores with (default: VECTOR_ENCODING's default)",
    )
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    from docindex.index.encodings import DEFAULT_ENCODING

    figures = measure(args.docs, args.encoding or DEFAULT_ENCODING)
    from bench.report import save_section

    save_section(args.results, "meaning", figures)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=1))
        return 0
    print(f"meaning search: {figures['documents']} documents, {len(figures['hybrid']) - 1} kinds of query")
    print(f"  embedding: {figures['embedding']}")
    print(f"  {'kind':<18} {'keyword-only R@3/MRR/nDCG':>28} {'hybrid R@3/MRR/nDCG':>24}")
    for kind, kw in figures["keyword_only"].items():
        hy = figures["hybrid"][kind]
        print(
            f"  {kind:<18} {kw['recall_at_3']:>10.2f} {kw['mrr']:>7.3f} {kw['ndcg_at_10']:>8.3f}"
            f" {hy['recall_at_3']:>10.2f} {hy['mrr']:>6.3f} {hy['ndcg_at_10']:>6.3f}   ({kw['queries']} queries)"
        )
    print(f"  latency ms (the vector leg on the exact stand-in, not HNSW): {figures['latency_ms']}")
    how = (
        "the stand-in scores as the field keeps the vectors"
        if figures["encoding"] in ("fp16", "int7")
        else "scored at full precision, as the cluster's rescoring does"
    )
    print(f"  vector encoding: {figures['encoding']} ({how})")
    print(f"  index bytes per document sent (osmem's store: the JSON): {figures['index_bytes_per_document']}")
    stored = figures["stored_bytes_per_document"]
    print(
        f"  bytes per document a cluster keeps, vectors in _source + fp32 -> stored once in {figures['encoding']}: "
        f"{stored['before']:,} -> {stored['after']:,}"
    )
    print(f"  existing sets: {figures['existing_sets']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
