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

Reciprocal-rank fusion (RRF, k = 60) orders the union; documents that match every word of the
query (the keyword leg's promise) stay ahead of documents found by meaning alone, so an exact
search never gets worse. Totals and facets are counted over the same union (keyword matches or
one of the vector leg's documents), with the same filters. Beyond the fused window, the rest of
the keyword matches follow in keyword order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

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
    """Reciprocal-rank fusion of the two legs; documents in ``first`` (every word matched) stay ahead.

    Ties keep the keyword leg's order, then the vector leg's.
    """
    scores: dict[str, float] = {}
    for rank, doc_id in enumerate(keyword, start=1):
        scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (RRF_K + rank)
    for rank, hit in enumerate(vector, start=1):
        scores[hit.doc_id] = scores.get(hit.doc_id, 0.0) + 1.0 / (RRF_K + rank)
    position = {doc_id: i for i, doc_id in enumerate([*keyword, *(h.doc_id for h in vector)])}
    ahead = first or set()
    order = sorted(scores, key=lambda d: (d not in ahead, -scores[d], position[d]))
    return Fused(order=order, vector={hit.doc_id: hit for hit in vector})


def union_query(keyword_query: dict[str, Any], vector_ids: Sequence[str]) -> dict[str, Any]:
    """Keyword matches or one of the vector leg's documents: what hybrid totals and facets count."""
    if not vector_ids:
        return keyword_query
    return {"bool": {"should": [keyword_query, {"ids": {"values": list(vector_ids)}}], "minimum_should_match": 1}}
