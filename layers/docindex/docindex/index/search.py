"""Full-text search as the operator CLI and the demo run it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docindex.index.mapping import normalize

if TYPE_CHECKING:
    from opensearchpy import OpenSearch


def search(
    client: OpenSearch,
    index: str,
    query: str,
    *,
    size: int = 10,
    prefix: str | None = None,
    extension: str | None = None,
    bucket: str | None = None,
) -> list[dict[str, Any]]:
    """Full-text search over content, title and file name, with highlighted snippets.

    Documents whose words match the query as kuromoji splits them come first;
    then those that only contain its characters (the bigram fields: a compound
    kuromoji splits another way, an unknown word) or fragments of the file name.
    """
    # The index's char filter normalizes width and form on the cluster; doing the same here
    # makes the query independent of whether the cluster (or an emulator) applies it.
    query = normalize(query)
    body = {
        "size": size,
        "query": {"bool": {"must": [query_clause(query)], "filter": _filters(prefix, extension, bucket)}},
        "_source": {"excludes": ["content"]},
        "highlight": {
            "fields": {
                "content": {"fragment_size": 120, "number_of_fragments": 1},
                "content.bigram": {"fragment_size": 120, "number_of_fragments": 1},
                "title": {},
                "filename": {},
            },
            "pre_tags": ["["],
            "post_tags": ["]"],
        },
    }
    response = client.search(index=index, body=body)
    hits = []
    for hit in response["hits"]["hits"]:
        highlight = hit.get("highlight", {})
        snippet = next(
            (highlight[f][0] for f in ("content", "content.bigram", "title", "filename") if highlight.get(f)), ""
        )
        hits.append({"id": hit["_id"], "score": hit.get("_score"), "snippet": snippet, **hit["_source"]})
    return hits


# Added to the score of every document whose words match: above any score of a document
# matched only by characters (bigrams) or file-name fragments, whatever their BM25 figures.
WORD_MATCH_TIER = 1000.0


def query_clause(query: str) -> dict[str, Any]:
    """The scoring query: word matches first, then character and file-name fragment matches."""
    # Every word of the query must appear (in the text fields, or as fragments of the file
    # name): file-server search is looking for a specific document, not the best partial match.
    words = {
        "multi_match": {
            "query": query,
            "fields": ["title^3", "filename^2", "content"],
            "type": "cross_fields",
            "operator": "and",
        }
    }
    characters = {
        "multi_match": {
            "query": query,
            "fields": ["title.bigram^3", "content.bigram"],
            "type": "cross_fields",
            "operator": "and",
            "boost": 0.5,
        }
    }
    name_fragment = {"match": {"filename.ngram": {"query": query, "minimum_should_match": "100%", "boost": 0.5}}}
    word_tier = {"constant_score": {"filter": words, "boost": WORD_MATCH_TIER}}
    return {"bool": {"should": [word_tier, words, characters, name_fragment], "minimum_should_match": 1}}


def _filters(prefix: str | None, extension: str | None, bucket: str | None) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = []
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    if extension:
        filters.append({"term": {"extension": extension.lower().lstrip(".")}})
    if bucket:
        filters.append({"term": {"bucket": bucket}})
    return filters
