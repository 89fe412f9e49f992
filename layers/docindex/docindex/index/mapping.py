"""The OpenSearch index: mapping, creation, the document shape, and search.

``content``, ``title`` and ``filename`` use kuromoji (Japanese morphological
analysis) with width normalization, so half-width katakana and full-width
letters match their usual forms. A cluster without the kuromoji plugin gets
CJK bigrams instead (logged). ``filename.ngram`` finds files by fragments of
their names.
"""

from __future__ import annotations

import copy
import posixpath
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from docindex.core.observability import logger

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from docindex.core.changes import ObjectChange
    from docindex.core.storage import FetchedObject
    from docindex.extract import ExtractedDocument

INDEX_VERSION = 1

_JA_ANALYSIS: dict[str, Any] = {
    "filter": {
        "docindex_ja_pos": {"type": "kuromoji_part_of_speech"},
    },
    "tokenizer": {
        "docindex_ja": {"type": "kuromoji_tokenizer", "mode": "search"},
        "docindex_ngram": {"type": "ngram", "min_gram": 2, "max_gram": 3},
    },
    "analyzer": {
        "docindex_text": {
            "type": "custom",
            "tokenizer": "docindex_ja",
            "filter": [
                "kuromoji_baseform",
                "docindex_ja_pos",
                "cjk_width",
                "ja_stop",
                "kuromoji_stemmer",
                "lowercase",
            ],
        },
        "docindex_ngram": {"type": "custom", "tokenizer": "docindex_ngram", "filter": ["cjk_width", "lowercase"]},
    },
}

_CJK_FALLBACK_ANALYSIS: dict[str, Any] = {
    "tokenizer": {"docindex_ngram": {"type": "ngram", "min_gram": 2, "max_gram": 3}},
    "analyzer": {
        "docindex_text": {
            "type": "custom",
            "tokenizer": "standard",
            "filter": ["cjk_width", "lowercase", "cjk_bigram"],
        },
        "docindex_ngram": {"type": "custom", "tokenizer": "docindex_ngram", "filter": ["cjk_width", "lowercase"]},
    },
}

MAPPINGS: dict[str, Any] = {
    # Unknown fields are kept in _source but not indexed: a typo never
    # rejects a document, and the mapping stays the contract's.
    "dynamic": False,
    "properties": {
        "bucket": {"type": "keyword"},
        "key": {"type": "keyword"},
        "filename": {
            "type": "text",
            "analyzer": "docindex_text",
            "fields": {
                "keyword": {"type": "keyword", "ignore_above": 1024},
                "ngram": {"type": "text", "analyzer": "docindex_ngram"},
            },
        },
        "extension": {"type": "keyword"},
        "content_type": {"type": "keyword"},
        "size": {"type": "long"},
        "etag": {"type": "keyword"},
        "version_id": {"type": "keyword"},
        "sequencer": {"type": "keyword"},
        "last_modified": {"type": "date"},
        "indexed_at": {"type": "date"},
        "title": {"type": "text", "analyzer": "docindex_text"},
        "content": {"type": "text", "analyzer": "docindex_text"},
        "content_truncated": {"type": "boolean"},
        "page_count": {"type": "integer"},
        "ocr_status": {"type": "keyword"},
        "ocr_reason": {"type": "keyword"},
        "extraction_error": {"type": "keyword"},
    },
}


# Tried in order when creating an index: the best analysis the cluster supports.
ANALYSIS_TIERS = ("icu+kuromoji", "kuromoji", "cjk")


def index_body(*, tier: str = "kuromoji") -> dict[str, Any]:
    """Settings and mappings for a new index with the given analysis tier.

    ``icu+kuromoji`` adds NFKC normalization *before* tokenizing (analysis-icu,
    bundled with Amazon OpenSearch Service), so full-width digits and
    half-width katakana with voiced marks become one token; ``kuromoji``
    normalizes width after tokenizing; ``cjk`` is bigrams for clusters
    without the Japanese plugin.
    """
    analysis = copy.deepcopy(_CJK_FALLBACK_ANALYSIS if tier == "cjk" else _JA_ANALYSIS)
    if tier == "icu+kuromoji":
        for name in ("docindex_text", "docindex_ngram"):
            analysis["analyzer"][name]["char_filter"] = ["icu_normalizer"]
    return {
        "settings": {"index": {"analysis": analysis}},
        "mappings": copy.deepcopy(MAPPINGS),
    }


def ensure_index(client: OpenSearch, name: str) -> str:
    """Create ``{name}-v{N}`` with alias ``name`` unless ``name`` exists.

    Writing through an alias lets an operator rebuild the index with a new
    mapping and switch the alias without touching the pipeline. Returns the
    concrete index behind the name.
    """
    from opensearchpy.exceptions import RequestError

    if client.indices.exists(index=name):
        return name
    concrete = f"{name}-v{INDEX_VERSION}"
    for tier in ANALYSIS_TIERS:
        body = index_body(tier=tier)
        body["aliases"] = {name: {"is_write_index": True}}
        try:
            client.indices.create(index=concrete, body=body)
        except RequestError as exc:
            error_text = str(exc.info) if exc.info else str(exc)
            if "resource_already_exists" in error_text:
                return concrete
            if not any(word in error_text for word in ("icu", "kuromoji", "analyz", "char_filter", "tokenizer")):
                raise
            logger.warning(
                "analysis not available on this cluster; trying the next tier",
                extra={"index": concrete, "tier": tier, "error": error_text[:300]},
            )
            continue
        logger.info("created index", extra={"index": concrete, "alias": name, "analysis": tier})
        return concrete
    raise RuntimeError(f"could not create index {concrete} with any analysis tier")


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def file_name_parts(key: str) -> tuple[str, str]:
    """The last path segment and its lowercase extension (no dot)."""
    filename = posixpath.basename(key.rstrip("/")) or key
    _, dot, ext = filename.rpartition(".")
    return filename, (ext.lower() if dot and ext and len(ext) <= 16 else "")


def metadata_document(
    change: ObjectChange, fetched: FetchedObject | None, *, content_type: str | None
) -> dict[str, Any]:
    """The fields every document has, with or without content."""
    filename, extension = file_name_parts(change.key)
    doc: dict[str, Any] = {
        "bucket": change.bucket,
        "key": change.key,
        "filename": filename,
        "extension": extension,
        "content_type": content_type,
        "size": fetched.size if fetched else change.size,
        "etag": (fetched.etag if fetched else None) or change.etag,
        "version_id": (fetched.version_id if fetched else None) or change.version_id,
        "sequencer": change.sequencer,
        "last_modified": (fetched.last_modified if fetched else None) or change.event_time,
        "indexed_at": now_iso(),
        "ocr_status": "none",
    }
    return {k: v for k, v in doc.items() if v is not None}


def document_for(change: ObjectChange, fetched: FetchedObject, extracted: ExtractedDocument) -> dict[str, Any]:
    """The full index document for an extracted file."""
    doc = metadata_document(change, fetched, content_type=extracted.content_type)
    doc.update(
        content_fields(
            text=extracted.text,
            title=extracted.title,
            page_count=extracted.page_count,
            truncated=extracted.truncated,
            error=extracted.error,
        )
    )
    return doc


def content_fields(
    *, text: str | None, title: str | None, page_count: int | None, truncated: bool, error: str | None
) -> dict[str, Any]:
    """The fields extraction (the indexer's or the OCR worker's) contributes; empty ones are left out."""
    fields: dict[str, Any] = {
        "content": text or None,
        "title": title or None,
        "page_count": page_count,
        "content_truncated": True if truncated else None,
        "extraction_error": error or None,
    }
    return {k: v for k, v in fields.items() if v is not None}


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
