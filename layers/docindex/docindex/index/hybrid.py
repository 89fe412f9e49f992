"""Hybrid search: the keyword leg and the vector leg in one round trip, the permission filter inside both.

Why in the search function and not OpenSearch's ``hybrid`` query: it answers the same on a managed
domain, on a serverless collection and on the local run (where k-NN is a stand-in), and every step
is visible and testable. The legs go to the cluster together, in one ``_msearch``:

- **keyword**: the search as it is without vectors — the page of results with its highlights, its
  matching pages, the total and the facets — so the files that contain the query come first, in
  their own order, and are counted as they always were;
- **vector**: the query embedded with the same model as the documents' passages, a ``knn`` query
  on the nested ``passages.vector`` with the caller's permission filter and the user's filters as
  its *pre*-filter (never post-filtering: nothing the caller may not read is found or counted),
  its nearest documents by their best passage. Which of them hold the query is read from the
  keyword page; only when the page does not hold every match, and a file the rule would offer might
  be one, does one more small request ask (the query, limited to those few ids).

A file found by meaning alone is **offered only when it is near enough to be worth a look**
(``MeaningRule``, measured by ``bench.meaning``: docs/meaning-search.md): nearest is not always
near. Those files follow the keyword matches, nearest first, and are counted apart
(``more_by_meaning``): the total and the facets count the files that contain the query.
"""

from __future__ import annotations

import math
import re
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, cast

from docindex.core.observability import Metric, count, logger
from docindex.core.settings import EmbeddingSettings
from docindex.embed import Embedder, EmbedderUnavailable, VectorSpec

# Neighbours the vector leg asks the cluster for (HNSW candidates, per shard).
WINDOW = 100
# Of those, how many come back: enough for the acceptance rule's reference and what it accepts.
RETURNED = 20
PASSAGES = "passages"
# The named clause that flags a vector hit holding the query's words.
KEYWORD_MATCH = "keyword"

QueryKind = Literal["words", "keyword"]
# Hiragana: particles, verb and adjective endings, the glue of a sentence or a question.
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
# A part number, an order number, a code: letters and digits with separators, at least one digit.
_CODE = re.compile(r"^(?=.*\d)[A-Za-z0-9][A-Za-z0-9\-_./#:]*$")
# A name or a single word: no space, no hiragana, at most this many characters (福岡県, 内部統制, テレワーク).
KEYWORD_QUERY_CHARS = 12


@dataclass(frozen=True)
class VectorHit:
    """A document the vector leg found: its score, the passage that matched best, whether it holds the
    query's words (``keyword``), and its summary fields (``source``) for showing it."""

    doc_id: str
    score: float
    passage: str = ""
    page: int | None = None
    keyword: bool = False
    source: dict[str, Any] = field(default_factory=dict, compare=False)
    # the best passage's vector, when the rule weighs how crowded the neighbourhood is (else empty)
    vector: tuple[float, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class MeaningRule:
    """When the vector leg offers a file that does not contain the query (docs/meaning-search.md).

    A file found by meaning alone is offered when its score is at least ``min_score``, within
    ``spread`` of the nearest file's, and ``standout`` above the score of the ``reference``-th
    nearest file (the last one when fewer came back) — an answer stands out from the crowd of
    files that merely share the subject, and that crowd's score rises with the index, so the bar
    rises with it. Of the query's characters (kanji, kana words, letters, digits), the share its
    best passage also holds counts ``overlap_weight`` towards the standout: a passage that says
    part of what was asked needs to stand out less.

    ``crowding``: a file near many of the other nearest files (a template, a series, one of many
    minutes on the subject) is near to every question on that subject, and is discounted: its score
    counts ``crowding`` times how much nearer it is to its ``neighbours`` nearest fellow candidates
    than the candidates are on average (CSLS, the hubness correction of cross-lingual retrieval,
    computed among the query's own neighbourhood; copies of one file do not crowd each other). The
    files are ranked, and stand out, by that score. ``lead``: nothing by meaning unless the best of
    them stands out at least this much (each then needs ``standout``). When the keyword leg
    found files, the bar is ``keyword_margin`` higher (None: nothing by meaning then). A query
    that is a name, a code or a single word (``query_kind``) is a keyword search: nothing by
    meaning (``single_words``: "never"), or only when no file holds it ("unmatched"), or as any
    other query ("always"). At most ``max_files`` files.
    """

    min_score: float = 0.0
    spread: float | None = None
    standout: float = 0.0
    reference: int = 10
    overlap_weight: float = 0.0
    keyword_margin: float | None = 0.0
    single_words: Literal["never", "unmatched", "always"] = "always"
    max_files: int = RETURNED
    crowding: float = 0.0
    neighbours: int = 10
    lead: float | None = None
    # With fewer than ``reference`` readable files there is no crowd to stand out from (a small folder,
    # a narrow filter): this rule decides instead (None: this one, against the last file).
    sparse: MeaningRule | None = None

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings) -> MeaningRule:
        """The rule the ``MEANING_*`` settings name."""
        return cls(
            min_score=settings.meaning_min_score,
            spread=settings.meaning_score_spread,
            standout=settings.meaning_min_standout,
            reference=settings.meaning_reference_rank,
            overlap_weight=settings.meaning_overlap_weight,
            keyword_margin=settings.meaning_keyword_margin,
            single_words=settings.meaning_single_words,
            max_files=settings.meaning_max_files,
            crowding=settings.meaning_crowding_weight,
            neighbours=settings.meaning_crowding_neighbours,
            lead=settings.meaning_min_lead,
            sparse=cls(
                min_score=settings.meaning_sparse_min_score,
                standout=settings.meaning_sparse_min_standout,
                reference=settings.meaning_sparse_reference_rank,
                lead=settings.meaning_sparse_min_lead,
                overlap_weight=settings.meaning_sparse_overlap_weight,
                keyword_margin=settings.meaning_keyword_margin,
                single_words=settings.meaning_single_words,
                max_files=settings.meaning_max_files,
            ),
        )

    def keyword_search(self, query: str) -> bool:
        """Whether ``query`` is a keyword search that gets files by meaning only when no file holds it
        (or never): the keyword leg can then run first, and the query is embedded only when needed."""
        return self.single_words != "always" and query_kind(query) == "keyword"

    def describe(self) -> str:
        parts = [f"score>={self.min_score:g}"]
        if self.spread is not None:
            parts.append(f"spread<={self.spread:g}")
        if self.crowding:
            parts.append(f"crowding*{self.crowding:g}@{self.neighbours}")
        if self.lead is not None:
            parts.append(f"lead>={self.lead:g}")
        if self.standout:
            overlap = f"+{self.overlap_weight:g}*overlap" if self.overlap_weight else ""
            parts.append(f"standout{overlap}>={self.standout:g}@{self.reference}")
        if self.keyword_margin is None:
            parts.append("none-when-words-match")
        elif self.keyword_margin:
            parts.append(f"+{self.keyword_margin:g}-when-words-match")
        if self.single_words != "always":
            parts.append(f"single-words:{self.single_words}")
        if self.sparse is not None:
            parts.append(f"[fewer than {self.reference}: {self.sparse.describe()}]")
        return " ".join(parts)


def query_kind(text: str) -> QueryKind:
    """``keyword`` for a name, a code or a single word (what a keyword search is for), else ``words``.

    A single word: one run of characters without a space or hiragana (a sentence or a question
    has particles), short — 福岡県, 内部統制, テレワーク, AB-1234 — or a code of letters and digits.
    """
    stripped = text.strip()
    if not stripped or any(ch.isspace() for ch in stripped):
        return "words"
    if _CODE.match(stripped):
        return "keyword"
    if _HIRAGANA.search(stripped) or len(stripped) > KEYWORD_QUERY_CHARS:
        return "words"
    return "keyword"


def accept(
    nearest: Sequence[VectorHit],
    *,
    rule: MeaningRule,
    keyword_total: int,
    query: str,
    crowd: Sequence[float] | None = None,
) -> list[VectorHit]:
    """The files found by meaning alone that ``rule`` offers for ``query``, best first.

    ``nearest``: the vector leg's hits, nearest first, keyword matches among them (they set the
    scale: the nearest score, the crowd and the reference are over every readable file). ``crowd``:
    ``crowding(nearest, rule.neighbours)`` when the caller has it already.
    """
    if not nearest or rule.max_files <= 0:
        return []
    if rule.sparse is not None and len(nearest) < rule.reference:
        return accept(nearest, rule=rule.sparse, keyword_total=keyword_total, query=query)
    kind = query_kind(query)
    if kind == "keyword" and (rule.single_words == "never" or (rule.single_words == "unmatched" and keyword_total)):
        return []
    if keyword_total and rule.keyword_margin is None:
        return []
    floor = rule.min_score
    if rule.spread is not None:
        floor = max(floor, nearest[0].score - rule.spread)
    if keyword_total and rule.keyword_margin:
        floor += rule.keyword_margin
    candidates = [
        (hit, standout)
        for hit, standout in standouts(nearest, rule=rule, query=query, crowd=crowd)
        if not hit.keyword and hit.score >= floor
    ]
    if rule.lead is not None and (not candidates or max(standout for _, standout in candidates) < rule.lead):
        return []
    chosen = [hit for hit, standout in candidates if not rule.standout or standout >= rule.standout]
    return chosen[: rule.max_files]


def standouts(
    nearest: Sequence[VectorHit], *, rule: MeaningRule, query: str, crowd: Sequence[float] | None = None
) -> list[tuple[VectorHit, float]]:
    """Each of the nearest files with how far it stands out (``rule``'s measure), best first.

    The score after crowding (``rule.crowding``) less the ``rule.reference``-th file's, plus
    ``rule.overlap_weight`` times the share of the query's characters its best passage holds. What
    ``accept`` bars; the answers (docindex.answer) weigh it too.
    """
    if not nearest:
        return []
    scores = [hit.score for hit in nearest]
    if rule.crowding:
        crowd = crowding(nearest, rule.neighbours) if crowd is None else crowd
        mean = sum(crowd) / len(crowd)
        scores = [score - rule.crowding * (near - mean) for score, near in zip(scores, crowd, strict=True)]
    order = sorted(range(len(nearest)), key=lambda i: -scores[i])  # stable: nearest first without crowding
    reference = scores[order[min(rule.reference, len(order)) - 1]]
    asked = _characters(query) if rule.overlap_weight else frozenset()
    found = []
    for i in order:
        overlap = len(asked & _characters(nearest[i].passage)) / len(asked) if asked else 0.0
        found.append((nearest[i], scores[i] - reference + rule.overlap_weight * overlap))
    return found


# Two passages this near (cosine) are copies of one text: they do not crowd each other.
NEAR_COPY = 0.995


def crowding(nearest: Sequence[VectorHit], neighbours: int) -> list[float]:
    """How crowded each hit's place is: the mean score (``(1 + cos) / 2``, as the cluster's) of its
    best passage against the ``neighbours`` nearest of the other hits' best passages, copies left out.
    A hit without a vector (the cluster did not return it) gets the others' mean: no discount."""
    vectors = [(hit.vector, _norm(hit.vector)) for hit in nearest]
    n = len(vectors)
    near: list[list[float]] = [[] for _ in range(n)]
    for i in range(n):
        a, norm_a = vectors[i]
        if not norm_a:
            continue
        for j in range(i + 1, n):
            b, norm_b = vectors[j]
            if not norm_b:
                continue
            cos = _cosine(a, norm_a, b, norm_b)
            if cos < NEAR_COPY:
                near[i].append(cos)
                near[j].append(cos)
    crowd: list[float | None] = []
    for cosines in near:
        top = sorted(cosines, reverse=True)[:neighbours]
        crowd.append((1 + sum(top) / len(top)) / 2 if top else None)
    known = [c for c in crowd if c is not None]
    fallback = sum(known) / len(known) if known else 0.0
    return [fallback if c is None else c for c in crowd]


def _norm(vector: Sequence[float]) -> float:
    return math.hypot(*vector) if vector else 0.0


def _cosine(a: Sequence[float], norm_a: float, b: Sequence[float], norm_b: float) -> float:
    """The cosine of two vectors from their distance and lengths (|a-b|^2 = |a|^2 + |b|^2 - 2 a.b):
    ``math.dist`` is one C loop on every Python (no NumPy in the search function's layers): 190 pairs
    of 384 numbers in ~0.7 ms, against ~2.6 ms for a Python loop of products (docs/performance.md)."""
    distance = math.dist(a, b)
    return (norm_a * norm_a + norm_b * norm_b - distance * distance) / (2 * norm_a * norm_b)


# What a query's characters are compared on: kanji, kana words, letters and digits (not particles).
_CONTENT = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\u30a0-\u30ffA-Za-z0-9ー々]+")


@lru_cache(maxsize=4096)
def _characters(text: str) -> frozenset[str]:
    from docindex.text.width import normalize

    return frozenset(ch for run in _CONTENT.findall(normalize(text).lower()) for ch in run)


def vector_body(
    vector: Sequence[float],
    *,
    k: int,
    filters: Sequence[dict[str, Any]],
    size: int | None = None,
    source: Any = False,
    keyword_query: dict[str, Any] | None = None,
    vectors: bool = False,
) -> dict[str, Any]:
    """The vector leg: the ``k`` documents whose best passage is nearest, among those ``filters`` let
    through; ``size`` of them returned with ``source`` (and, with ``vectors``, their best passage's
    vector). With ``keyword_query``, each hit that also matches it is flagged (a named clause in the
    should list, worth no score)."""
    passage_fields = [f"{PASSAGES}.text", f"{PASSAGES}.page", *([f"{PASSAGES}.vector"] if vectors else [])]
    knn: dict[str, Any] = {"vector": list(vector), "k": k}
    if filters:
        knn["filter"] = {"bool": {"filter": list(filters)}}
    query: dict[str, Any] = {
        "nested": {
            "path": PASSAGES,
            "score_mode": "max",
            "query": {"knn": {f"{PASSAGES}.vector": knn}},
            "inner_hits": {"size": 1, "_source": {"includes": passage_fields}},
        }
    }
    if keyword_query is not None:
        flag = {"constant_score": {"filter": keyword_query, "boost": 0.0, "_name": KEYWORD_MATCH}}
        query = {"bool": {"must": [query], "should": [flag]}}
    return {"size": k if size is None else size, "_source": source, "query": query}


def vector_hits(response: dict[str, Any]) -> list[VectorHit]:
    """The vector leg's documents in order, each with its best passage."""
    found = []
    for hit in response.get("hits", {}).get("hits", []):
        inner = hit.get("inner_hits", {}).get(PASSAGES, {}).get("hits", {}).get("hits", [])
        source = (inner[0].get("_source") or {}) if inner else {}
        page = source.get("page")
        vector = source.get("vector")
        found.append(
            VectorHit(
                doc_id=hit["_id"],
                score=float(hit.get("_score") or 0.0),
                passage=str(source.get("text") or ""),
                page=int(page) if isinstance(page, int) else None,
                keyword=KEYWORD_MATCH in (hit.get("matched_queries") or []),
                source=dict(hit.get("_source") or {}),
                vector=tuple(vector) if isinstance(vector, list) else (),
            )
        )
    return found


def on_page(
    keyword_hits: int, keyword_total: int, by_meaning: Sequence[VectorHit], *, start: int, size: int
) -> list[VectorHit]:
    """The files found by meaning that fill a page after its ``keyword_hits`` keyword matches: they
    follow the last of the ``keyword_total`` matches."""
    room = size - keyword_hits
    if room <= 0:
        return []
    offset = max(0, start - keyword_total)
    return list(by_meaning[offset : offset + room])


# How long a process trusts what it read of an index's vectors (the model in its mapping's _meta).
INDEX_VECTORS_TTL_SECONDS = 300.0
_index_vectors: dict[tuple[int, str], tuple[float, Any]] = {}
_index_vectors_lock = threading.Lock()


def query_vector(client: Any, index: str, text: str, embedder: Embedder | None) -> list[float] | None:
    """The query's vector when hybrid search can run on ``index``; None means keyword-only.

    Keyword-only, never an error, when: no embedder is configured, the index has no vectors or
    another model's (it needs ``docindex reindex``), or the embedder fails (logged, counted in
    ``HybridSearchDegraded``: a search must still answer when the model or Bedrock cannot).
    """
    if embedder is None or not text.strip():
        return None
    spec = _vectors_of(client, index)
    if spec is None:
        return None
    if spec.model_id != embedder.model_id:
        logger.warning(
            "the index's vectors come from another model; keyword search only until it is rebuilt",
            extra={"index_model": spec.model_id, "embedder": embedder.model_id},
        )
        return None
    key = (embedder.model_id, text.strip())
    with _query_vectors_lock:
        cached = _query_vectors.get(key)
        if cached is not None:
            _query_vectors.move_to_end(key)
            return list(cached)
    try:
        vector = embedder.query(text)
    except EmbedderUnavailable as exc:
        count(Metric.HYBRID_SEARCH_DEGRADED)
        logger.warning("query not embedded; keyword search only", extra={"error": str(exc)[:300]})
        return None
    with _query_vectors_lock:
        _query_vectors[key] = array("f", vector)
        while len(_query_vectors) > QUERY_VECTORS_KEPT:
            _query_vectors.popitem(last=False)
    return vector


# Query vectors a warm process keeps, most recently used first (a query's vector depends on the model
# and the text alone: no caller, no permission, no result is in it). 384 float32 = 1.5 KB each, so
# about 1.6 MB: the same query again (the next page, another filter or facet, a colleague's search)
# is not embedded again (~17 ms of CPU).
QUERY_VECTORS_KEPT = 1024
_query_vectors: OrderedDict[tuple[str, str], array[float]] = OrderedDict()
_query_vectors_lock = threading.Lock()


def _vectors_of(client: Any, index: str) -> VectorSpec | None:
    from docindex.index.mapping import index_vectors

    key = (id(client), index)
    now = time.monotonic()
    with _index_vectors_lock:
        cached = _index_vectors.get(key)
        if cached is not None and now - cached[0] < INDEX_VECTORS_TTL_SECONDS:
            return cast("VectorSpec | None", cached[1])
    from opensearchpy.exceptions import ConnectionError as ClusterUnreachable

    try:
        spec = index_vectors(client, index)
    except ClusterUnreachable:
        raise  # the keyword search cannot run either: its caller reports the one error
    except Exception as exc:  # noqa: BLE001 - a mapping we cannot read: keyword search, as before
        logger.warning("could not read the index's vector fields; keyword search only", extra={"error": str(exc)})
        return None  # not remembered: the next search asks again
    with _index_vectors_lock:
        _index_vectors[key] = (now, spec)
    return spec


@dataclass
class Legs:
    """One hybrid search's answer: the keyword leg's page response, the vector leg's nearest files,
    and those of them offered as found by meaning alone."""

    keyword: dict[str, Any]
    nearest: list[VectorHit]
    by_meaning: list[VectorHit]

    @property
    def keyword_total(self) -> int:
        return total_of(self.keyword)


def total_of(response: dict[str, Any]) -> int:
    total = response.get("hits", {}).get("total", 0)
    return int(total.get("value", 0) if isinstance(total, dict) else total or 0)


def search_both(
    client: Any, index: str, keyword_body: dict[str, Any], vector_leg: dict[str, Any]
) -> tuple[dict[str, Any], list[VectorHit] | None]:
    """Both legs in one round trip (``_msearch``): the keyword leg's response, and the vector leg's
    hits — None when the cluster refused the vector query (no k-NN, a mapping it cannot search):
    the search is then keyword-only, logged and counted in ``HybridSearchDegraded``."""
    from opensearchpy.exceptions import RequestError, TransportError

    try:
        answer = client.msearch(index=index, body=[{}, keyword_body, {}, vector_leg])
    except RequestError as exc:  # the whole request refused: the keyword leg alone, as without vectors
        _degraded(str(exc))
        return client.search(index=index, body=keyword_body), None
    keyword, vector = answer["responses"]
    if "error" in keyword:
        status = int(keyword.get("status") or 500)
        raise (RequestError if status == 400 else TransportError)(status, str(keyword["error"])[:300], keyword)
    if "error" in vector:
        _degraded(str(vector["error"]))
        return keyword, None
    return keyword, vector_hits(vector)


def _degraded(error: str) -> None:
    count(Metric.HYBRID_SEARCH_DEGRADED)
    logger.warning("the cluster refused the vector query; keyword search only", extra={"error": error[:300]})


def search_hybrid(
    client: Any,
    index: str,
    *,
    keyword_body: dict[str, Any],
    keyword_query: dict[str, Any],
    filters: Sequence[dict[str, Any]],
    vector: Sequence[float],
    query: str,
    rule: MeaningRule,
    source: Any,
    window: int = WINDOW,
    resolve: bool = False,
    keyword: dict[str, Any] | None = None,
) -> Legs:
    """Both legs in one round trip, and the files the rule offers by meaning alone (none when the
    cluster refused the vector leg: the search is keyword-only, as ``search_both`` says).

    Which of the nearest files hold the query is known from the keyword page when it holds every
    match; otherwise, and only when the rule would offer a file whose membership is unknown, one
    more small request asks (the query, limited to those ids). ``resolve``: ask for every nearest
    file (the bench's recording). ``keyword``: the keyword leg's response when it was asked
    already (a keyword search no file matched): only the vector leg is asked.
    """
    vector_leg = vector_body(
        vector, k=window, filters=filters, size=min(window, RETURNED), source=source, vectors=rule.crowding > 0
    )
    if keyword is None:
        keyword, nearest = search_both(client, index, keyword_body, vector_leg)
    else:
        nearest = _vector_leg(client, index, vector_leg)
    if nearest is None:
        return Legs(keyword, [], [])
    total = total_of(keyword)
    seen = {hit["_id"] for hit in keyword["hits"]["hits"]}
    every_match_seen = int(keyword_body.get("from", 0)) == 0 and total <= len(seen)
    nearest = [replace(hit, keyword=hit.doc_id in seen) for hit in nearest]
    crowd = crowding(nearest, rule.neighbours) if rule.crowding and nearest else None
    chosen = accept(nearest, rule=rule, keyword_total=total, query=query, crowd=crowd)
    asking = [hit.doc_id for hit in (nearest if resolve else chosen) if hit.doc_id not in seen]
    if total and not every_match_seen and asking:
        matched = _matching(client, index, keyword_query, asking)
        nearest = [replace(hit, keyword=hit.keyword or hit.doc_id in matched) for hit in nearest]
        chosen = accept(nearest, rule=rule, keyword_total=total, query=query, crowd=crowd)
    return Legs(keyword, nearest, chosen)


def _vector_leg(client: Any, index: str, vector_leg: dict[str, Any]) -> list[VectorHit] | None:
    """The vector leg alone; None when the cluster refused it (logged, counted, keyword-only)."""
    from opensearchpy.exceptions import RequestError

    try:
        return vector_hits(client.search(index=index, body=vector_leg))
    except RequestError as exc:
        _degraded(str(exc))
        return None


def _matching(client: Any, index: str, keyword_query: dict[str, Any], doc_ids: list[str]) -> set[str]:
    """Which of ``doc_ids`` hold the query (the vector leg found them within the caller's filters)."""
    body = {
        "size": len(doc_ids),
        "_source": False,
        "track_total_hits": False,
        "query": {"bool": {"must": [keyword_query], "filter": [{"ids": {"values": doc_ids}}]}},
    }
    return {hit["_id"] for hit in client.search(index=index, body=body)["hits"]["hits"]}


def try_vectors_on_cluster(client: Any, vectors: VectorSpec) -> dict[str, Any]:
    """Prove meaning search on a cluster: an index with the vector fields, a document, the vector leg.

    A throwaway index gets the vector mapping (the k-NN plugin must accept it), one document with
    one passage, and the vector leg's query with a permission filter, once for a principal that
    may read it (it must be found) and once for one that may not (it must not). Deleted after.
    """
    import uuid

    from opensearchpy.exceptions import RequestError

    from docindex.index.mapping import create_index

    name = f"docindex-validate-knn-{uuid.uuid4().hex[:12]}"
    create_index(client, name, vectors=vectors)
    try:
        from docindex.index.mapping import index_vectors

        if index_vectors(client, name) is None:
            return {"vectors": False, "reason": "the cluster created the index without vector fields (no k-NN)"}
        vector = [1.0] + [0.0] * (vectors.dimension - 1)
        source = {
            "key": "validate.txt",
            "allow_principals": ["group:validate"],
            "embedding_model": vectors.model_id,
            "passages": [{"text": "validate", "start": 0, "end": 8, "vector": vector}],
        }
        client.index(index=name, id="validate", body=source, refresh=True)
        allowed = [{"terms": {"allow_principals": ["group:validate"]}}]
        denied = [{"terms": {"allow_principals": ["group:other"]}}]
        try:
            found = vector_hits(client.search(index=name, body=vector_body(vector, k=1, filters=allowed)))
            hidden = vector_hits(client.search(index=name, body=vector_body(vector, k=1, filters=denied)))
        except RequestError as exc:
            return {"vectors": True, "query": False, "reason": f"the vector query was refused: {exc.error}"}
        ok = [h.doc_id for h in found] == ["validate"] and not hidden and found[0].passage == "validate"
        from docindex.index.mapping import vector_storage  # issue 36: the encoding and _source, read back

        storage = vector_storage(client, name, "validate", vectors)
        return {"vectors": True, "query": ok, "model": vectors.model_id, "dimension": vectors.dimension, **storage}
    finally:
        client.indices.delete(index=name, ignore=[404])
