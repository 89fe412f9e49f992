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
    collapse: bool = False,
) -> list[dict[str, Any]]:
    """Full-text search over content, title and file name, with highlighted snippets.

    ``collapse``: identical copies (same ``content_sha256``) are one hit, the best-scoring copy,
    with every other copy's location in ``also_in`` (see :func:`collapse_copies`).
    """
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
        # Collapsing needs room: copies of one file would otherwise crowd the page.
        "size": min(size * COLLAPSE_OVERFETCH, MAX_COLLAPSE_WINDOW) if collapse else size,
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
    return collapse_copies(client, index, hits, size=size) if collapse else hits


COLLAPSE_OVERFETCH = 4
MAX_COLLAPSE_WINDOW = 200
MAX_COPIES_LISTED = 100


def collapse_copies(client: OpenSearch, index: str, hits: list[dict[str, Any]], *, size: int) -> list[dict[str, Any]]:
    """One hit per distinct content, in rank order, each with ``also_in``: the other copies' locations.

    Done here rather than with OpenSearch's ``collapse`` (which osmem-server and OpenSearch
    support): a field collapse puts every document *without* the field (indexed before
    ``content_sha256`` existed, archived, too large to hash in the indexer) into one group, which
    would hide unrelated files. The copies are listed with one ``terms`` query over the page's
    hashes, so a copy is named even when it ranked outside the page (or outside the filters).
    """
    page: list[dict[str, Any]] = []
    seen: set[str] = set()
    for hit in hits:
        digest = hit.get("content_sha256")
        if digest and digest in seen:
            continue
        if digest:
            seen.add(digest)
        page.append(hit)
        if len(page) == size:
            break
    if not seen:
        return page
    response = client.search(
        index=index,
        body={
            "size": MAX_COPIES_LISTED,
            "query": {"terms": {"content_sha256": sorted(seen)}},
            "_source": ["bucket", "key", "content_sha256"],
            "sort": [{"key": "asc"}],
        },
    )
    copies: dict[str, list[str]] = {}
    for copy in response["hits"]["hits"]:
        source = copy["_source"]
        copies.setdefault(source.get("content_sha256", ""), []).append(f"s3://{source['bucket']}/{source['key']}")
    for hit in page:
        digest = hit.get("content_sha256")
        if digest:
            here = f"s3://{hit['bucket']}/{hit['key']}"
            hit["also_in"] = [where for where in copies.get(digest, []) if where != here]
    return page
