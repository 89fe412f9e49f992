"""``make bench`` meaning-search scenario: keyword-only against hybrid on employees' own words, and
when the vector leg may offer a file at all.

    .venv/bin/python -m bench.meaning [--docs 2000] [--office-docs 300] [--json] [--results bench/results.json]

The query set is ``bench.meaning_corpus`` (98 queries as employees phrase them, over 91 files
that answer them and generated near misses up to ``--docs``; kept out of the tests so that it
measures rather than fits). Beside them, ``bench.meaning_unanswered``: 32 questions no file of
that corpus answers, and a second corpus of other office topics (a department's twelve files
among ``--office-docs`` generated ones) with 12 answerable questions, 20 unanswerable ones and 6
names its files hold. Each query runs through ``docindex.index.search.search`` on the same
index — keyword-only, then hybrid under the acceptance rule before issue 35 (a fixed cut and a
spread) and under the configured one (``MEANING_*``: ``docindex.index.hybrid.MeaningRule``) —
and the figures are recall@3, MRR and nDCG@10 of the file that answers it, overall and per kind
of query, and the share of unanswerable questions that get no file by meaning.

The curve: every query's two legs are recorded once (the keyword page, the vector leg's 20
nearest files), and each candidate rule — a fixed cut; a cut and a spread; a standout above the
crowd of nearest files; keyword evidence raising the bar; names, codes and single words as
keyword searches — is applied to them as the search function applies it: its unanswerable share
and answerable R@3/MRR, the best rule of each family at >= 90 % unanswerable, and the operating
point (the rule with the best R@3 at that share). The existing sets must not get worse: the
keyword relevance set (``tests/support/relevance.py``) and the spelling-variant pairs
(``bench.variants``) run keyword-only and under both rules.

Costs, on this machine: the embedding CPU per passage and per document (the local model,
``EMBED_THREADS=1``), the index size per document with and without vectors (the engine's store),
and the query latency of both modes. Vectors are cached under ``bench/corpus/`` (keyed by the
model and the text), so a second run embeds nothing.

The engine is a real OpenSearch node (k-NN's Lucene HNSW in float32: the node has no Faiss; its scores are the
exact cosines production's rescored bq4 returns).
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
    import os

    from docindex.core.settings import EmbeddingSettings

    chosen = {"EMBEDDINGS": "local", "EMBED_THREADS": "1"}
    if os.environ.get("VECTOR_ENCODING"):  # the engine's (the real node serves Lucene's encodings only)
        chosen["VECTOR_ENCODING"] = os.environ["VECTOR_ENCODING"]
    return EmbeddingSettings.from_env(chosen)


def embed_corpus(documents: list[tuple[str, str]], cache: VectorCache) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every document's passages and vectors (from the cache where it has them); the embedding cost."""
    from docindex.embed.chunks import PASSAGES_VERSION
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
        cache_key = VectorCache.key(f"{embedder.model_id}/passages-{PASSAGES_VERSION}", title, text)
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
    client: Any,
    index: str,
    documents: list[tuple[str, str]],
    embedded: dict[str, Any],
    *,
    vectors: bool = True,
    allow: Callable[[str], tuple[str, ...]] | None = None,
    encoding: str | None = None,
) -> None:
    """The corpus as docindex writes it: every field, and (``vectors``) the passages with their vectors;
    ``allow``: who may read each key (the access map's stamp), else no one but the operator; ``encoding``: the
    vector field's VECTOR_ENCODING (the engine's, where it serves one only: bench.local.Engine.vector_encoding)."""
    from opensearchpy import helpers

    from docindex.access.policy import AccessGrant
    from docindex.core.changes import doc_id
    from docindex.embed.settings import vector_spec
    from docindex.index.documents import IndexDocument
    from docindex.index.mapping import ensure_index

    model = next(iter(embedded.values())).model_id if embedded else None
    spec = vector_spec(_settings())
    assert spec is not None
    assert spec.model_id == model
    if encoding is not None:
        from dataclasses import replace

        spec = replace(spec, encoding=encoding)
    ensure_index(client, index, vectors=spec if vectors else None)

    def actions() -> Any:
        for key, text in documents:
            doc = IndexDocument.for_object(bucket=BUCKET, key=key, size=len(text.encode()), etag="e", version_id=None)
            doc = doc.with_content(text=text, title=None, page_count=None, truncated=False, error=None)
            doc = doc.with_embeddings(embedded[key] if vectors else None)
            if allow is not None:
                doc = doc.with_access(AccessGrant(allow=allow(key)))
            yield {"_index": index, "_id": doc_id(BUCKET, key), "_source": doc.source()}

    helpers.bulk(client, actions(), chunk_size=200, request_timeout=300)
    client.indices.refresh(index=index)


def run(
    search: Callable[..., Any], client: Any, index: str, queries: Any, *, hybrid: bool, rule: Any = None
) -> list[Outcome]:
    outcomes = []
    for query in queries:
        started = time.perf_counter()
        if rule is None:
            hits = search(client, index, query.text, size=10, hybrid=hybrid)
        else:
            hits = search(client, index, query.text, size=10, hybrid=hybrid, meaning_rule=rule)
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


# The acceptance rule before issue 35: a fixed cut and a spread below the nearest file.
BEFORE_RULE_SETTINGS = {"MEANING_MIN_SCORE": "0.905", "MEANING_SCORE_SPREAD": "0.01"}


def before_rule() -> Any:
    from docindex.index.hybrid import MeaningRule

    return MeaningRule(min_score=0.905, spread=0.01)


def standout_rule() -> Any:
    """Issue 35's first rule (a floor and a standout above the 20th nearest, with the shared characters)."""
    from docindex.index.hybrid import MeaningRule

    return MeaningRule(min_score=0.925, standout=0.0135, reference=20, overlap_weight=0.0125, single_words="unmatched")


@dataclass(frozen=True)
class Recorded:
    """One query's two legs as the search function got them: the keyword page's keys, how many
    files hold the query, and the vector leg's nearest files."""

    text: str
    keyword_keys: list[str]
    keyword_total: int
    nearest: list[Any]


def record(client: Any, index: str, texts: list[str]) -> list[Recorded]:
    """Each query's legs, through ``search`` itself (its ``search_hybrid`` call observed)."""
    from unittest import mock

    from docindex.index import hybrid as hybrid_module
    from docindex.index import search as search_module
    from docindex.index.hybrid import MeaningRule

    seen: list[Any] = []
    real = hybrid_module.search_hybrid

    def observed(*args: Any, **kwargs: Any) -> Any:
        legs = real(*args, **{**kwargs, "resolve": True})
        seen.append(legs)
        return legs

    out = []
    with mock.patch.object(search_module, "search_hybrid", observed):
        for text in texts:
            seen.clear()
            # crowding > 0: the vector leg returns each file's best passage's vector (what the rule weighs)
            search_module.search(client, index, text, size=10, meaning_rule=MeaningRule(max_files=0, crowding=1.0))
            legs = seen[0]
            keys = [hit["_source"]["key"] for hit in legs.keyword["hits"]["hits"]]
            out.append(Recorded(text, keys, legs.keyword_total, legs.nearest))
    return out


_CROWDS: dict[tuple[int, int], list[float]] = {}


def _crowd(recorded: Recorded, neighbours: int) -> list[float] | None:
    """``crowding`` of a recorded query's nearest files, computed once per query and neighbours."""
    from docindex.index.hybrid import crowding

    if not recorded.nearest:
        return None
    key = (id(recorded), neighbours)
    if key not in _CROWDS:
        _CROWDS[key] = crowding(recorded.nearest, neighbours)
    return _CROWDS[key]


def simulate(recorded: Recorded, rule: Any) -> tuple[list[str], int]:
    """The first ten keys the search function shows under ``rule``, and how many files it offers by meaning."""
    from docindex.index.hybrid import accept, on_page

    crowd = _crowd(recorded, rule.neighbours) if rule.crowding else None
    chosen = accept(recorded.nearest, rule=rule, keyword_total=recorded.keyword_total, query=recorded.text, crowd=crowd)
    shown = on_page(len(recorded.keyword_keys), recorded.keyword_total, chosen, start=0, size=10)
    return [*recorded.keyword_keys, *(hit.source.get("key", "") for hit in shown)][:10], len(chosen)


def candidate_rules() -> dict[str, list[Any]]:
    """The families of acceptance rules the curve compares."""
    from docindex.index.hybrid import MeaningRule

    cuts = [0.0, 0.9, 0.905, 0.91, 0.915, 0.92, 0.925, 0.93, 0.935, 0.94]
    standouts = [x / 10_000 for x in range(40, 205, 5)]
    families: dict[str, list[Any]] = {
        "fixed cut": [MeaningRule(min_score=c) for c in cuts],
        "cut + spread": [MeaningRule(min_score=c, spread=d) for c in cuts for d in (0.005, 0.01, 0.02)],
        "standout": [
            MeaningRule(min_score=c, standout=g, reference=r) for c in cuts for g in standouts for r in (10, 20)
        ],
    }
    families["standout + shared characters"] = [
        MeaningRule(min_score=c, standout=g, reference=20, overlap_weight=w)
        for c in (0.0, 0.91, 0.92)
        for g in standouts
        for w in (0.005, 0.01, 0.0125, 0.015, 0.02)
    ]
    families["standout + keyword evidence"] = [
        MeaningRule(min_score=r.min_score, standout=r.standout, reference=r.reference, keyword_margin=m)
        for r in families["standout"]
        for m in (0.01, None)
    ]
    families["standout + query kind"] = [
        MeaningRule(min_score=r.min_score, standout=r.standout, reference=r.reference, single_words=w)
        for r in families["standout"]
        for w in ("unmatched", "never")
    ]
    families["cut + query kind + keyword evidence"] = [
        MeaningRule(min_score=c, keyword_margin=m, single_words=w)
        for c in cuts
        for m in (0.0, 0.01, None)
        for w in ("unmatched", "never")
    ]
    # issue 35, second rule: the crowding of each file's place weighed (CSLS among the query's own
    # neighbourhood), a bar for the best file (lead) and one for each (standout), the shared characters
    families["crowding + lead + standout + shared characters"] = [
        MeaningRule(
            min_score=floor,
            standout=round(lead - offset, 4),
            reference=20,
            overlap_weight=w,
            single_words="unmatched",
            max_files=10,
            crowding=alpha,
            neighbours=k,
            lead=lead,
            sparse=standout_rule(),  # fewer than 20 readable files: no crowd (the twelve-file folder)
        )
        for alpha in (0.5, 0.75, 1.0)
        for k in (5, 10)
        for w in (0.02, 0.03, 0.04)
        for lead in (0.035, 0.04, 0.045, 0.05, 0.055, 0.06, 0.065)
        for offset in (0.01, 0.015, 0.02)
        for floor in (0.0, 0.915)
    ]
    families["all"] = [
        MeaningRule(
            min_score=r.min_score,
            standout=r.standout,
            reference=r.reference,
            overlap_weight=r.overlap_weight,
            keyword_margin=m,
            single_words=w,
        )
        for r in families["standout + shared characters"]
        for m in (0.0, None)
        for w in ("always", "unmatched", "never")
    ]
    return families


def score_rule(rule: Any, sets: dict[str, Any]) -> dict[str, Any]:
    """One rule on the recorded legs: unanswerable share with no file by meaning, answerable R@3/MRR."""
    figures: dict[str, Any] = {"rule": rule.describe()}
    for name, (recorded, expected) in sets.items():
        if expected is None:  # unanswerable, or a name the keyword leg answers: no file by meaning wanted
            none = [simulate(r, rule)[1] == 0 for r in recorded]
            figures[name] = round(sum(none) / max(1, len(none)), 3)
            continue
        outcomes = []
        for r, key in zip(recorded, expected, strict=True):
            keys, _ = simulate(r, rule)
            outcomes.append(Outcome("", keys.index(key) + 1 if key in keys else None, 0.0))
        m = metrics(outcomes)
        figures[name] = {"recall_at_3": m["recall_at_3"], "mrr": m["mrr"]}
    return figures


def unanswered_share(figures: dict[str, Any]) -> float:
    n1, n2 = len(_unanswered()[0]), len(_unanswered()[1])
    return round((figures["unanswered"] * n1 + figures["office_unanswered"] * n2) / (n1 + n2), 3)


def _unanswered() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from bench.meaning_unanswered import OFFICE_UNANSWERED, UNANSWERED

    return UNANSWERED, OFFICE_UNANSWERED


# The operating point is chosen on the first corpus and the twelve-file folder; the second corpus
# (its 300 generated files, 12 answerable and 20 unanswerable questions) is held out.
FOLDER_TARGET = 0.85


def rule_curve(sets: dict[str, Any], *, target: float = 0.9) -> dict[str, Any]:
    """Every candidate rule scored; per family the curve, its best at ``target`` over all 52 unanswerable
    questions, and its best chosen on the first corpus alone (its 32 unanswerable questions at ``target``,
    the twelve-file folder at ``FOLDER_TARGET``) with the held-out second corpus's figures beside it;
    the operating point is the best rule so chosen."""

    def key(f: dict[str, Any]) -> tuple[float, ...]:
        return (f["answerable"]["recall_at_3"], f["answerable"]["mrr"], f["office"]["recall_at_3"], f["no_file"])

    def tuned(f: dict[str, Any]) -> bool:
        return bool(f["unanswered"] >= target and f["folder_unanswered"] >= FOLDER_TARGET)

    out: dict[str, Any] = {"target_no_file": target, "target_folder": FOLDER_TARGET, "families": {}}
    best_overall: dict[str, Any] | None = None
    for family, rules in candidate_rules().items():
        points = []
        for rule in rules:
            figures = score_rule(rule, sets)
            figures["no_file"] = unanswered_share(figures)
            points.append(figures)
        meeting = [p for p in points if p["no_file"] >= target]
        best = max(meeting, key=key) if meeting else max(points, key=lambda p: (p["no_file"], *key(p)))
        chosen = [p for p in points if tuned(p)]
        # the curve: for each share of unanswerable questions with no file, the best R@3 reached
        frontier: dict[float, dict[str, Any]] = {}
        for p in sorted(points, key=lambda p: (-p["no_file"], *(-x for x in key(p)))):
            if all(key(p) > key(q) for share, q in frontier.items() if share >= p["no_file"]):
                frontier[p["no_file"]] = p
        out["families"][family] = {
            "rules": len(rules),
            "best_at_target": best,
            "chosen_on_first_corpus": max(chosen, key=key) if chosen else None,
            "curve": [frontier[share] for share in sorted(frontier)],
        }
        if chosen and (best_overall is None or key(max(chosen, key=key)) > key(best_overall)):
            best_overall = max(chosen, key=key)
    out["operating_point"] = best_overall
    return out


# Single words no sample file holds, as a new user tries them on the demo's folder (issue 42).
SMALL_FOLDER_WORDS = (
    *(
        "ブロックチェーン",
        "株主優待",
        "北海道支社",
        "カーボンニュートラル",
        "ドローン",
        "ゴルフ",
        "メタバース",
        "労働組合",
    ),
    *("福利厚生", "インボイス", "知的財産", "内部監査", "退職金", "有給休暇", "残業", "テレワーク", "在宅勤務"),
    *("ボーナス", "忘年会", "社員旅行", "年末調整", "育児休業", "ハラスメント", "コンプライアンス"),
)
# ... and a question in an employee's own words whose file is in that folder.
SMALL_FOLDER_ANSWERABLE = (
    ("お正月は会社が何日から休みになる？", "社内ポータル/お知らせ/年末年始 休業のお知らせ.html"),
)


def sample_folder() -> list[tuple[str, str]]:
    """The demo's nineteen sample files as the indexer reads them (``devkit.samples``; scans, which the OCR
    worker reads, by their name): a folder of about twenty files of every kind, some unlike the rest."""
    from devkit.samples import sample_corpus
    from docindex.extract.base import ExtractionLimits
    from docindex.extract.dispatch import extract

    files = []
    for key, data in sample_corpus():
        name = key.rsplit("/", 1)[-1]
        text = extract(data, name, ExtractionLimits()).text or ""
        files.append((key, text or name))
    return files


def small_folder(client: Any, embedded: dict[str, Any] | None = None) -> dict[str, Any]:
    """The small folder's case (fewer than 20 readable files: the sparse rule decides), before -> after on the
    same recorded legs: files offered by meaning for single words no file holds (each one is noise), for the
    52 unanswerable questions, and whether the employee's question still finds its file."""
    from bench.meaning_unanswered import OFFICE_UNANSWERED, UNANSWERED
    from docindex.index.search import default_rule

    files = sample_folder()
    if embedded is None:
        embedded, _ = embed_corpus(files, VectorCache(CACHE))
    load(client, "small-folder", files, embedded)
    words = record(client, "small-folder", list(SMALL_FOLDER_WORDS))
    unanswered = record(client, "small-folder", [*OFFICE_UNANSWERED, *UNANSWERED])
    answerable = record(client, "small-folder", [q for q, _ in SMALL_FOLDER_ANSWERABLE])
    out: dict[str, Any] = {"files": len(files)}
    for name, rule in (("before", small_folder_rule_before()), ("after", default_rule())):
        offered = [simulate(r, rule)[1] for r in words]
        out[name] = {
            "rule": rule.describe(),
            "single_words_files_offered": sum(offered),
            "single_words_with_files": sum(n > 0 for n in offered),
            "single_words_most_files": max(offered),
            "unanswerable_with_no_file": round(sum(simulate(r, rule)[1] == 0 for r in unanswered) / len(unanswered), 3),
            "answerable_in_top_3": sum(
                key in simulate(r, rule)[0][:3] for r, (_, key) in zip(answerable, SMALL_FOLDER_ANSWERABLE, strict=True)
            ),
        }
    out["single_words"] = len(words)
    out["unanswerable"] = len(unanswered)
    return out


def small_folder_rule_before() -> Any:
    """The configured rule with the small-folder rule as issue 35 shipped it: above the *last* file, no lead."""
    from dataclasses import replace

    from docindex.index.search import default_rule

    rule = default_rule()
    assert rule.sparse is not None
    return replace(rule, sparse=replace(rule.sparse, reference=rule.reference, lead=None))


def measure(docs: int, office_docs: int = 300) -> dict[str, Any]:
    import os

    from bench.local import search_engine
    from bench.meaning_corpus import QUERIES
    from bench.meaning_unanswered import (
        OFFICE_FILES,
        OFFICE_NAMES,
        OFFICE_QUERIES,
        OFFICE_UNANSWERED,
        UNANSWERED,
        office_corpus,
    )
    from docindex.index.encodings import encoding as encoding_of
    from docindex.index.search import default_rule, search

    documents = corpus(docs)
    office = office_corpus(office_docs)
    embedded, cost = embed_corpus([*documents, *office], VectorCache(CACHE))
    cost.update(embedding_cost(documents[:40], [q.text for q in QUERIES[:20]]))
    after_rule = default_rule()
    # the real node's k-NN keeps the vectors in the Lucene encoding it serves (no Faiss locally)
    encoding = os.environ.setdefault("VECTOR_ENCODING", "fp32")
    with search_engine(timeout=300, engine="opensearch") as (engine, client):
        load(client, "documents", documents, embedded)
        load(client, "documents-without-vectors", documents, embedded, vectors=False)
        load(client, "office", office, embedded)
        # the department's folder alone (twelve files): no crowd of near files, the first case
        load(client, "folder", office[: len(OFFICE_FILES)], embedded)
        size = {name: _store_bytes(client, name) for name in ("documents-without-vectors", "documents")}
        run(search, client, "documents", QUERIES[:5], hybrid=True)  # warm-up: the query model, the caches
        keyword = run(search, client, "documents", QUERIES, hybrid=False)
        hybrid = {
            name: run(search, client, "documents", QUERIES, hybrid=True, rule=rule)
            for name, rule in (("before", before_rule()), ("after", after_rule))
        }
        refused = {
            name: {
                "unanswered": _no_file_share(client, "documents", UNANSWERED, rule),
                "office_unanswered": _no_file_share(client, "office", OFFICE_UNANSWERED, rule),
                "office_names": _no_file_share(client, "office", OFFICE_NAMES, rule),
                "office": metrics(run(search, client, "office", OFFICE_QUERIES, hybrid=True, rule=rule)),
                "folder_unanswered": _no_file_share(client, "folder", [*OFFICE_UNANSWERED, *UNANSWERED], rule),
                "folder": metrics(run(search, client, "folder", OFFICE_QUERIES, hybrid=True, rule=rule)),
            }
            for name, rule in (("before", before_rule()), ("after", after_rule))
        }
        sets = {
            "answerable": (record(client, "documents", [q.text for q in QUERIES]), [q.expected for q in QUERIES]),
            "unanswered": (record(client, "documents", list(UNANSWERED)), None),
            "office": (
                record(client, "office", [q.text for q in OFFICE_QUERIES]),
                [q.expected for q in OFFICE_QUERIES],
            ),
            "office_unanswered": (record(client, "office", list(OFFICE_UNANSWERED)), None),
            "office_names": (record(client, "office", list(OFFICE_NAMES)), None),
            "folder": (
                record(client, "folder", [q.text for q in OFFICE_QUERIES]),
                [q.expected for q in OFFICE_QUERIES],
            ),
            "folder_unanswered": (record(client, "folder", [*OFFICE_UNANSWERED, *UNANSWERED]), None),
        }
        curve = rule_curve(sets)
        checked = {
            name: {**score_rule(rule, sets), "rule": rule.describe()}
            for name, rule in (
                ("before", before_rule()),
                ("standout", standout_rule()),
                # the configured rule with issue 35's small-folder rule (before issue 42 measured above the 10th)
                ("after_sparse_before", small_folder_rule_before()),
                ("after", after_rule),
            )
        }
        for figures in checked.values():
            figures["no_file"] = unanswered_share(figures)
        existing = _existing_sets(client, search, {"before": before_rule(), "after": after_rule})
        folder_of_samples = small_folder(client)
    for name in ("before", "after"):
        refused[name]["no_file"] = unanswered_share(refused[name])
    return {
        "engine": engine.name,
        "documents": len(documents),
        "office_documents": len(office),
        "rules": {"before": before_rule().describe(), "after": after_rule.describe()},
        "embedding": cost,
        "keyword_only": by_kind(keyword),
        "hybrid": {name: by_kind(rows) for name, rows in hybrid.items()},
        "unanswerable": refused,
        "curve": curve,
        # the curve's simulation of the two rules (same legs): must agree with the runs above
        "simulated": checked,
        "latency_ms": {"keyword_only": latency(keyword), **{f"hybrid_{n}": latency(r) for n, r in hybrid.items()}},
        "encoding": encoding,
        "index_bytes_per_document": {
            "without_vectors": round(size["documents-without-vectors"] / len(documents)),
            "with_vectors": round(size["documents"] / len(documents)),
        },
        "stored_bytes_per_document": stored_bytes(size, documents, embedded, encoding_of(encoding)),
        "existing_sets": existing,
        "small_folder": folder_of_samples,
    }


def stored_bytes(size: dict[str, int], documents: list[Any], embedded: dict[str, Any], encoding: Any) -> dict[str, int]:
    """What a cluster keeps per document, before -> after issue 36. ``size`` is read as the JSON the index was
    sent, as the emulator's store was when this was written; on the real node it is Lucene's files (vectors and
    postings included), so these figures do not carry over there (``index_bytes_per_document``: the node's own).

    Before: the JSON with every passage's vector in ``_source`` as numbers, plus the float32 field.
    After: the JSON without those numbers (derived source puts them back from the field when read),
    plus the field in ``encoding`` (raw vectors kept on disk where the encoding rescores or derives).
    The text fields' postings are the same in both.
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


def _no_file_share(client: Any, index: str, texts: Any, rule: Any) -> float:
    """The share of ``texts`` whose search shows no file by meaning under ``rule``."""
    from docindex.index.search import search

    none = [search(client, index, text, size=10, meaning_rule=rule).by_meaning == 0 for text in texts]
    return round(sum(none) / max(1, len(none)), 3)


def _store_bytes(client: Any, index: str) -> int:
    """The engine's own figure of the index's size: Lucene's files on the real node."""
    client.indices.refresh(index=index)
    return int(client.indices.stats(index=index)["_all"]["primaries"]["store"]["size_in_bytes"])


def _existing_sets(client: Any, search: Callable[..., Any], rules: dict[str, Any]) -> dict[str, Any]:
    """The keyword relevance set (tests/support/relevance.py) and the spelling-variant pairs
    (bench.variants, both directions), keyword-only and hybrid under each rule, their files with vectors."""
    from bench import variants
    from tests.support import relevance

    documents = [(key, "\n".join(filter(None, (title, text)))) for key, (title, text) in relevance.DOCUMENTS.items()]
    embedded, _ = embed_corpus(documents, VectorCache(CACHE))
    load(client, "relevance", documents, embedded)
    modes: dict[str, Any] = {"keyword_only": None, **{f"hybrid_{name}": rule for name, rule in rules.items()}}
    found: dict[str, Any] = {"relevance": {}, "variants": {}}
    for name, rule in modes.items():

        def run_one(c: Any, i: str, q: str, size: int, rule: Any = rule) -> Any:
            if rule is None:
                return search(c, i, q, size=size, hybrid=False)
            return search(c, i, q, size=size, meaning_rule=rule)

        found["relevance"][name] = relevance.summary(relevance.run(client, "relevance", search=run_one))
    outcomes: dict[str, list[Outcome]] = {name: [] for name in modes}
    for direction in ("forward", "backward"):
        pairs = variants._documents(direction)
        embedded, _ = embed_corpus(pairs, VectorCache(CACHE))
        index = f"variants-{direction}"
        load(client, index, pairs, embedded)
        for number, (kind, written, typed) in enumerate(variants.PAIRS):
            query = MeaningQueryLike(typed if direction == "forward" else written, f"pairs/{number:03d}.txt", kind)
            for name, rule in modes.items():
                outcomes[name] += run(search, client, index, [query], hybrid=rule is not None, rule=rule)
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
    parser.add_argument("--office-docs", type=int, default=300, help="generated files of the second corpus")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    parser.add_argument(
        "--small-folder-only", action="store_true", help="only the small folder's case (the demo's samples)"
    )
    args = parser.parse_args(argv)
    if args.small_folder_only:
        from bench.local import search_engine

        with search_engine(timeout=300, engine="opensearch") as (_, client):
            figures = {"small_folder": small_folder(client)}
        print(json.dumps(figures, ensure_ascii=False, indent=1))
        return 0

    figures = measure(args.docs, args.office_docs)
    from bench.report import save_section

    save_section(args.results, "meaning", figures)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=1))
        return 0
    print(f"meaning search: {figures['documents']} documents + {figures['office_documents']} of other office topics")
    print(f"  rules: before {figures['rules']['before']!r}; after {figures['rules']['after']!r}")
    print(f"  embedding: {figures['embedding']}")
    print(f"  {'kind':<18} {'keyword-only R@3/MRR/nDCG':>28} {'hybrid before':>22} {'hybrid after':>22}")
    for kind, kw in figures["keyword_only"].items():
        before, after = figures["hybrid"]["before"][kind], figures["hybrid"]["after"][kind]
        print(
            f"  {kind:<18} {kw['recall_at_3']:>10.2f} {kw['mrr']:>7.3f} {kw['ndcg_at_10']:>8.3f}"
            f" {before['recall_at_3']:>10.2f} {before['mrr']:>6.3f} {before['ndcg_at_10']:>6.3f}"
            f" {after['recall_at_3']:>10.2f} {after['mrr']:>6.3f} {after['ndcg_at_10']:>6.3f}"
            f"   ({kw['queries']} queries)"
        )
    for name in ("before", "after"):
        u = figures["unanswerable"][name]
        print(
            f"  {name}: unanswerable with no file by meaning {u['no_file']:.0%} (this corpus {u['unanswered']:.0%}, "
            f"office {u['office_unanswered']:.0%}); names with nothing added {u['office_names']:.0%}; "
            f"office answerable R@3 {u['office']['recall_at_3']:.2f} MRR {u['office']['mrr']:.3f}; "
            f"the twelve-file folder alone: {u['folder_unanswered']:.0%} of 52 unanswerable with no file, "
            f"R@3 {u['folder']['recall_at_3']:.2f}"
        )
    curve = figures["curve"]
    print(
        f"  the curve: per family, the best rule at >= {curve['target_no_file']:.0%} of the 52 unanswerable with no"
        f" file; then the one chosen on the first corpus alone (its 32 at >= {curve['target_no_file']:.0%}, the"
        f" folder at >= {curve['target_folder']:.0%}), the second corpus held out:"
    )
    for family, data in curve["families"].items():
        for label, best in (("all 52", data["best_at_target"]), ("chosen", data["chosen_on_first_corpus"])):
            if best is None:
                print(f"    {family:<48} {label:<7} none reaches the target")
                continue
            print(
                f"    {family:<48} {label:<7} {best['no_file']:>5.0%} (first {best['unanswered']:.0%}, held-out"
                f" {best['office_unanswered']:.0%})  R@3 {best['answerable']['recall_at_3']:.3f}"
                f" MRR {best['answerable']['mrr']:.3f}  held-out R@3 {best['office']['recall_at_3']:.2f}"
                f"  folder {best['folder_unanswered']:.0%}/{best['folder']['recall_at_3']:.2f}  ({data['rules']})"
            )
    point = curve["operating_point"]
    print(f"  operating point: {point['rule'] if point else 'none reaches the target'}")
    print("  the rules on the same recorded legs (simulated), before -> issue 35's first rule -> after:")
    for name, f in figures["simulated"].items():
        print(
            f"    {name:<9} no file {f['no_file']:>4.0%} (first corpus {f['unanswered']:.0%}, held-out"
            f" {f['office_unanswered']:.0%}, folder {f['folder_unanswered']:.0%})  R@3/MRR"
            f" {f['answerable']['recall_at_3']:.3f}/{f['answerable']['mrr']:.3f}  held-out R@3"
            f" {f['office']['recall_at_3']:.2f}  names {f['office_names']:.0%}  {f['rule']}"
        )
    print(f"  latency ms (the vector leg on the node's k-NN): {figures['latency_ms']}")
    how = (
        "the node scores with its 7-bit codes"
        if figures["encoding"] == "int7"
        else "scored at full precision, as the cluster's rescoring does"
    )
    print(f"  vector encoding: {figures['encoding']} ({how})")
    print(f"  index bytes per document (the {figures['engine']} store): {figures['index_bytes_per_document']}")
    stored = figures["stored_bytes_per_document"]
    print(
        f"  bytes per document a cluster keeps, vectors in _source + fp32 -> stored once in {figures['encoding']}: "
        f"{stored['before']:,} -> {stored['after']:,}"
    )
    print(f"  existing sets: {figures['existing_sets']}")
    folder = figures["small_folder"]
    for name in ("before", "after"):
        f = folder[name]
        print(
            f"  the small folder ({folder['files']} sample files), {name}:"
            f" {f['single_words_files_offered']} files offered"
            f" for {folder['single_words']} single words no file holds ({f['single_words_with_files']} words got some,"
            f" at most {f['single_words_most_files']}); unanswerable with no file {f['unanswerable_with_no_file']:.0%};"
            f" the employee's question's file in the top 3: {f['answerable_in_top_3']}  ({f['rule']})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
