"""Full-text search as the operator CLI and the demo run it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    """Full-text search over content, title and file name, with highlighted snippets."""
    # Every word of the query must appear (in the text fields, or as
    # fragments of the file name): file-server search is looking for a
    # specific document, not the best partial match.
    text_match = {
        "multi_match": {
            "query": query,
            "fields": ["title^3", "filename^2", "content"],
            "type": "cross_fields",
            "operator": "and",
        }
    }
    name_fragment = {"match": {"filename.ngram": {"query": query, "minimum_should_match": "100%", "boost": 0.5}}}
    must: dict[str, Any] = {"bool": {"should": [text_match, name_fragment], "minimum_should_match": 1}}
    filters: list[dict[str, Any]] = []
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    if extension:
        filters.append({"term": {"extension": extension.lower().lstrip(".")}})
    if bucket:
        filters.append({"term": {"bucket": bucket}})
    body = {
        "size": size,
        "query": {"bool": {"must": [must], "filter": filters}},
        "_source": {"excludes": ["content"]},
        "highlight": {
            "fields": {"content": {"fragment_size": 120, "number_of_fragments": 1}, "title": {}, "filename": {}},
            "pre_tags": ["["],
            "post_tags": ["]"],
        },
    }
    response = client.search(index=index, body=body)
    hits = []
    for hit in response["hits"]["hits"]:
        highlight = hit.get("highlight", {})
        snippet = (highlight.get("content") or highlight.get("title") or highlight.get("filename") or [""])[0]
        hits.append({"id": hit["_id"], "score": hit.get("_score"), "snippet": snippet, **hit["_source"]})
    return hits
