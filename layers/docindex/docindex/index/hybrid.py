"""Hybrid search: the keyword leg and the vector leg, fused by rank, the permission filter inside both.

Why fusion in the search function and not OpenSearch's ``hybrid`` query: it answers the same
on a managed domain, on a serverless collection and on the local run (where k-NN is a
stand-in), and every step is visible and testable. The legs:

- **keyword**: the query as it is searched today (words, characters, file-name fragments,
  synonyms and spelling variants), its best ``window`` documents;
- **vector**: the query embedded with the same model as the documents' passages, a ``knn``
  query on the nested ``passages.vector`` with the caller's permission filter and the user's
  filters as its *pre*-filter (never post-filtering: a page is never emptied and nothing the
  caller may not read is counted), its ``window`` nearest documents by their best passage.

Reciprocal-rank fusion (RRF, k = 60) orders the union; the keyword leg's matches (each holds all
of the query, as words, in another spelling, as characters or in its file name) stay ahead of
documents found by meaning alone, so an exact search never loses its matches. Totals and facets
are counted over the same union (keyword matches or one of the vector leg's documents), with the
same filters. Beyond the fused window, the rest of the keyword matches follow in keyword order.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from docindex.core.observability import Metric, count, logger
from docindex.embed import Embedder, EmbedderUnavailable, VectorSpec

# Documents each leg contributes to the fusion.
WINDOW = 100
RRF_K = 60
PASSAGES = "passages"


@dataclass(frozen=True)
class VectorHit:
    """A document the vector leg found: its score and the passage that matched best."""

    doc_id: str
    score: float
    passage: str = ""
    page: int | None = None


@dataclass
class Fused:
    """The fused order of the union of both legs' windows."""

    order: list[str] = field(default_factory=list)
    vector: dict[str, VectorHit] = field(default_factory=dict)
    keyword: set[str] = field(default_factory=set)

    def by_meaning_alone(self, doc_id: str) -> VectorHit | None:
        """The vector hit of a document the keyword leg did not find (None otherwise)."""
        return None if doc_id in self.keyword else self.vector.get(doc_id)

    def page(self, start: int, size: int) -> list[str]:
        return self.order[start : start + size]


def vector_body(vector: Sequence[float], *, k: int, filters: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The vector leg: the ``k`` documents whose best passage is nearest, among those ``filters`` let through."""
    knn: dict[str, Any] = {"vector": list(vector), "k": k}
    if filters:
        knn["filter"] = {"bool": {"filter": list(filters)}}
    return {
        "size": k,
        "_source": False,
        "query": {
            "nested": {
                "path": PASSAGES,
                "score_mode": "max",
                "query": {"knn": {f"{PASSAGES}.vector": knn}},
                "inner_hits": {"size": 1, "_source": {"includes": [f"{PASSAGES}.text", f"{PASSAGES}.page"]}},
            }
        },
    }


def vector_hits(response: dict[str, Any]) -> list[VectorHit]:
    """The vector leg's documents in order, each with its best passage."""
    found = []
    for hit in response.get("hits", {}).get("hits", []):
        inner = hit.get("inner_hits", {}).get(PASSAGES, {}).get("hits", {}).get("hits", [])
        source = (inner[0].get("_source") or {}) if inner else {}
        page = source.get("page")
        found.append(
            VectorHit(
                doc_id=hit["_id"],
                score=float(hit.get("_score") or 0.0),
                passage=str(source.get("text") or ""),
                page=int(page) if isinstance(page, int) else None,
            )
        )
    return found


def fuse(keyword: Sequence[str], vector: Sequence[VectorHit], *, first: set[str] | None = None) -> Fused:
    """The fused order: documents in ``first`` (the exact matches) ahead, in the keyword leg's
    order; then the others by reciprocal-rank fusion of the two legs (ties: the vector leg's order).

    The vector leg does not reorder exact matches: measured on the relevance set, letting it do
    so (fusing their ranks too) moved right answers below others that merely read alike.
    """
    scores: dict[str, float] = {}
    for rank, doc_id in enumerate(keyword, start=1):
        scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (RRF_K + rank)
    for rank, hit in enumerate(vector, start=1):
        scores[hit.doc_id] = scores.get(hit.doc_id, 0.0) + 1.0 / (RRF_K + rank)
    position: dict[str, int] = {}
    for doc_id in [*keyword, *(h.doc_id for h in vector)]:
        position.setdefault(doc_id, len(position))  # where each document first appears
    ahead = first or set()
    order = sorted(scores, key=lambda d: (0, position[d], 0.0) if d in ahead else (1, -scores[d], position[d]))
    return Fused(order=order, vector={hit.doc_id: hit for hit in vector}, keyword=set(keyword))


def union_query(keyword_query: dict[str, Any], vector_ids: Sequence[str]) -> dict[str, Any]:
    """Keyword matches or one of the vector leg's documents: what hybrid totals and facets count."""
    if not vector_ids:
        return keyword_query
    return {"bool": {"should": [keyword_query, {"ids": {"values": list(vector_ids)}}], "minimum_should_match": 1}}


# -- running it -----------------------------------------------------------------------------

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
    try:
        return embedder.query(text)
    except EmbedderUnavailable as exc:
        count(Metric.HYBRID_SEARCH_DEGRADED)
        logger.warning("query not embedded; keyword search only", extra={"error": str(exc)[:300]})
        return None


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


def rank(
    client: Any,
    index: str,
    *,
    keyword_query: dict[str, Any],
    filters: Sequence[dict[str, Any]],
    vector: Sequence[float],
    window: int = WINDOW,
    spread: float | None = None,
    min_score: float = 0.0,
) -> Fused | None:
    """Both legs' best ``window`` documents, fused; the keyword leg's matches first.

    The vector leg keeps only documents scoring at least ``min_score``, and within ``spread`` of its
    best one (None: however far). None when the cluster refuses the vector leg's query (no k-NN
    query, a mapping it cannot search): the search is keyword-only, logged and counted in
    ``HybridSearchDegraded``, as when the query cannot be embedded.
    """
    from opensearchpy.exceptions import RequestError

    keyword = client.search(
        index=index,
        body={"size": window, "_source": False, "track_total_hits": False, "query": keyword_query},
    )
    keyword_ids = [hit["_id"] for hit in keyword["hits"]["hits"]]
    # Every keyword hit holds all of the query (as words, in another spelling, as characters or in
    # its file name: each clause requires every part): such exact matches stay ahead of documents
    # found by meaning alone, in the keyword order.
    first = set(keyword_ids)
    try:
        nearest = vector_hits(client.search(index=index, body=vector_body(vector, k=window, filters=filters)))
    except RequestError as exc:  # a 400 the keyword leg did not get: this cluster cannot search vectors
        count(Metric.HYBRID_SEARCH_DEGRADED)
        logger.warning("the cluster refused the vector query; keyword search only", extra={"error": str(exc)[:300]})
        return None
    nearest = [hit for hit in nearest if hit.score >= min_score]
    if spread is not None and nearest:
        nearest = [hit for hit in nearest if hit.score >= nearest[0].score - spread]
    return fuse(keyword_ids, nearest, first=first)


def final_body(
    fused: Fused, *, start: int, size: int, keyword_must: dict[str, Any], filters: Sequence[dict[str, Any]]
) -> tuple[dict[str, Any], list[str]]:
    """The query that fetches one page of hybrid results, and the page's ids in their fused order.

    Within the fused window the page's documents are fetched by id (``post_filter``, so the
    aggregations and the ``matched`` count still see the whole union); past it, the keyword
    matches outside the window follow in keyword order.
    """
    vector_ids = list(fused.vector)
    union = {"bool": {"must": [union_query(keyword_must, vector_ids)], "filter": list(filters)}}
    page_ids = fused.page(start, size)
    body: dict[str, Any] = {"track_total_hits": False, "aggs": {"matched": {"filter": {"match_all": {}}}}}
    if page_ids:
        body.update({"size": len(page_ids), "query": union, "post_filter": {"ids": {"values": page_ids}}})
        return body, page_ids
    beyond = {"bool": {"must": [keyword_must], "filter": list(filters), "must_not": [{"ids": {"values": fused.order}}]}}
    body.update({"size": size, "from": max(0, start - len(fused.order)), "query": union, "post_filter": beyond})
    return body, []


def matched_total(response: dict[str, Any]) -> int:
    """How many documents the hybrid union holds (the ``matched`` aggregation of ``final_body``)."""
    return int(((response.get("aggregations") or {}).get("matched") or {}).get("doc_count", 0))


def in_order(hits: list[dict[str, Any]], page_ids: list[str]) -> list[dict[str, Any]]:
    """The page's hits in their fused order (the cluster returns them by score)."""
    if not page_ids:
        return hits
    position = {doc_id: n for n, doc_id in enumerate(page_ids)}
    return sorted(hits, key=lambda hit: position.get(hit["_id"], len(position)))


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
