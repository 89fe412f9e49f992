"""The OpenSearch index's settings and mapping, and its creation behind an alias.

``content``, ``title`` and ``filename`` use kuromoji (Japanese morphological
analysis) with width normalization, so half-width katakana and full-width
letters match their usual forms. A cluster without the kuromoji plugin gets
CJK bigrams instead (logged). ``filename.ngram`` finds files by fragments of
their names.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from docindex.core.observability import logger

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

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
        # The search API: folder facets and filters, and who may read the file (docindex.access).
        "folders": {"type": "keyword", "ignore_above": 1024},
        "allow_principals": {"type": "keyword"},
        "deny_principals": {"type": "keyword"},
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


# Fields added after INDEX_VERSION 1 was deployed: put on an existing index (adding fields is always allowed).
ADDED_FIELDS = ("folders", "allow_principals", "deny_principals")


def ensure_added_fields(client: OpenSearch, name: str) -> None:
    """Add :data:`ADDED_FIELDS` to an index created before they existed (idempotent)."""
    properties = {field: MAPPINGS["properties"][field] for field in ADDED_FIELDS}
    client.indices.put_mapping(index=name, body={"properties": properties})
