"""The OpenSearch index's settings and mapping, and its creation behind an alias.

``content``, ``title`` and ``filename`` use kuromoji (Japanese morphological
analysis) after a width and form normalization generated from the Unicode
tables (half-width katakana, full-width letters, compatibility characters), so
text matches however it was typed. A cluster without the kuromoji plugin gets
CJK bigrams instead (logged). ``content.bigram`` and ``title.bigram`` find
words kuromoji splits badly; ``filename.ngram`` finds files by fragments of
their names. The company's vocabulary (user dictionary, synonyms) comes from
``docindex.index.vocabulary``.
"""

from __future__ import annotations

import copy
import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from docindex.core.observability import logger

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from docindex.index.vocabulary import Vocabulary

INDEX_VERSION = 1

# Blocks whose characters NFKC rewrites and people meet in Japanese office files: full-width
# ASCII and half-width katakana (old systems), circled and parenthesized numbers, ㈱ and ㍉,
# Roman numerals, Kangxi radicals (what many PDFs extract instead of ideographs),
# CJK compatibility ideographs, Latin ligatures (PDFs), the ideographic space.
_NORMALIZED_BLOCKS = (
    (0x00A0, 0x00A0),
    (0x2150, 0x218F),
    (0x2460, 0x24FF),
    (0x2E80, 0x2FDF),
    (0x3000, 0x3000),
    (0x3200, 0x33FF),
    (0xF900, 0xFAFF),
    (0xFB00, 0xFB06),
    (0xFF00, 0xFFEF),
)
_VOICED_MARKS = ("\uff9e", "\uff9f")  # half-width dakuten, handakuten


@functools.cache
def _width_table() -> tuple[tuple[str, str], ...]:
    """``(source, target)`` pairs: NFKC of every character of the blocks, and of half-width
    katakana followed by a voiced mark (``ｻﾞ`` → ``ザ``, ``ﾊﾟ`` → ``パ``)."""
    pairs: dict[str, str] = {}
    for first, last in _NORMALIZED_BLOCKS:
        for code in range(first, last + 1):
            char = chr(code)
            if unicodedata.category(char) in ("Cn", "Co", "Cs"):
                continue
            target = unicodedata.normalize("NFKC", char)
            if target != char:
                pairs[char] = target
    for code in range(0xFF66, 0xFF9E):
        for mark in _VOICED_MARKS:
            combined = unicodedata.normalize("NFKC", chr(code) + mark)
            if len(combined) == 1:
                pairs[chr(code) + mark] = combined
    return tuple(sorted(pairs.items()))


def _rule_text(text: str) -> str:
    # Letters and digits as they are (readable settings); everything else escaped, because the
    # rule syntax trims whitespace and gives '=', '>', '\\' and quotes a meaning.
    return "".join(ch if ch.isalnum() else f"\\u{ord(ch):04x}" for ch in text)


def width_mappings() -> list[str]:
    """The ``mapping`` char filter's rules: Unicode NFKC for the blocks above, generated from
    the Unicode tables, so every tier normalizes width and form *before* tokenizing."""
    return [f"{_rule_text(source)} => {_rule_text(target)}" for source, target in _width_table()]


@functools.cache
def _width_pattern() -> re.Pattern[str]:
    sources = sorted((source for source, _ in _width_table()), key=len, reverse=True)
    return re.compile("|".join(re.escape(source) for source in sources))


def normalize(text: str) -> str:
    """``text`` as the ``docindex_width`` char filter rewrites it (longest match first)."""
    table = dict(_width_table())
    return _width_pattern().sub(lambda m: table[m.group(0)], text)


_TEXT_FILTERS = ["kuromoji_baseform", "docindex_ja_pos", "cjk_width", "ja_stop", "kuromoji_stemmer", "lowercase"]
_BIGRAM: dict[str, Any] = {
    "type": "custom",
    "tokenizer": "standard",
    "filter": ["cjk_width", "lowercase", "cjk_bigram"],
}
_NGRAM: dict[str, Any] = {"type": "custom", "tokenizer": "docindex_ngram", "filter": ["cjk_width", "lowercase"]}


def _analysis(tier: str, vocabulary: Vocabulary) -> dict[str, Any]:
    """The ``analysis`` settings of a tier: index analyzers, and the search analyzer with synonyms."""
    analysis: dict[str, Any] = {
        "char_filter": {"docindex_width": {"type": "mapping", "mappings": width_mappings()}},
        "tokenizer": {"docindex_ngram": {"type": "ngram", "min_gram": 2, "max_gram": 3}},
        "filter": {},
        "analyzer": {"docindex_bigram": copy.deepcopy(_BIGRAM), "docindex_ngram": copy.deepcopy(_NGRAM)},
    }
    text: dict[str, Any]
    search: dict[str, Any]
    if tier == "cjk":
        text = copy.deepcopy(_BIGRAM)
        search = copy.deepcopy(_BIGRAM)
    else:
        analysis["filter"]["docindex_ja_pos"] = {"type": "kuromoji_part_of_speech"}
        options = vocabulary.tokenizer_options()
        analysis["tokenizer"]["docindex_ja"] = {"type": "kuromoji_tokenizer", "mode": "search", **options}
        # The query side keeps only the parts of a compound: synonym_graph cannot read the
        # token graph search mode makes of it, and the parts match the index all the same.
        analysis["tokenizer"]["docindex_ja_query"] = {
            "type": "kuromoji_tokenizer",
            "mode": "search",
            "discard_compound_token": True,  # nosec B105 - an analyzer option, not a password
            **options,
        }
        text = {"type": "custom", "tokenizer": "docindex_ja", "filter": list(_TEXT_FILTERS)}
        search = {"type": "custom", "tokenizer": "docindex_ja_query", "filter": list(_TEXT_FILTERS)}
    synonyms = vocabulary.synonym_filter()
    if synonyms is not None:
        analysis["filter"]["docindex_synonyms"] = synonyms
        search["filter"].append("docindex_synonyms")
    analysis["analyzer"]["docindex_text"] = text
    analysis["analyzer"]["docindex_search"] = search
    char_filters = ["docindex_width"] + (["icu_normalizer"] if tier == "icu+kuromoji" else [])
    for analyzer in analysis["analyzer"].values():
        analyzer["char_filter"] = list(char_filters)
    if not analysis["filter"]:
        del analysis["filter"]
    return analysis


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
            "search_analyzer": "docindex_search",
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
        "content_sha256": {"type": "keyword"},
        "last_modified": {"type": "date"},
        "indexed_at": {"type": "date"},
        "title": {
            "type": "text",
            "analyzer": "docindex_text",
            "search_analyzer": "docindex_search",
            "fields": {"bigram": {"type": "text", "analyzer": "docindex_bigram"}},
        },
        "content": {
            "type": "text",
            "analyzer": "docindex_text",
            "search_analyzer": "docindex_search",
            "fields": {"bigram": {"type": "text", "analyzer": "docindex_bigram"}},
        },
        "content_truncated": {"type": "boolean"},
        "content_dropped": {"type": "keyword"},
        "author": {"type": "keyword", "ignore_above": 256},
        "last_saved_by": {"type": "keyword", "ignore_above": 256},
        "created": {"type": "date"},
        "modified": {"type": "date"},
        "page_count": {"type": "integer"},
        "ocr_status": {"type": "keyword"},
        "ocr_reason": {"type": "keyword"},
        # What OCR did page by page (issue 26): stored for operators, not indexed.
        "ocr_pages": {"type": "object", "enabled": False},
        "ocr_page_reasons": {"type": "keyword"},
        "ocr_confidence": {"type": "integer"},
        "ocr_version": {"type": "integer"},
        "extraction_error": {"type": "keyword"},
        # The search API: folder facets and filters, and who may read the file (docindex.access).
        "folders": {"type": "keyword", "ignore_above": 1024},
        "allow_principals": {"type": "keyword"},
        "deny_principals": {"type": "keyword"},
    },
}


# Tried in order when creating an index: the best analysis the cluster supports.
ANALYSIS_TIERS = ("icu+kuromoji", "kuromoji", "cjk")


def index_body(*, tier: str = "kuromoji", vocabulary: Vocabulary | None = None) -> dict[str, Any]:
    """Settings and mappings for a new index with the given analysis tier and vocabulary.

    Every tier rewrites width and form before tokenizing (the ``docindex_width``
    mapping char filter), so ``ｻｰﾊﾞｰ`` is one token ``サーバー`` and ``ＱＵＯＴＥ``
    is ``quote``; ``icu+kuromoji`` adds ``icu_normalizer`` (analysis-icu, bundled
    with Amazon OpenSearch Service); ``cjk`` is bigrams for clusters without the
    Japanese plugin. ``vocabulary`` (default: the shipped ``analysis.toml``) adds
    the user dictionary to kuromoji and the synonyms to the search analyzer.
    """
    from docindex.index import vocabulary as vocabulary_module

    vocabulary = vocabulary if vocabulary is not None else vocabulary_module.load()
    return {
        "settings": {"index": {"analysis": _analysis(tier, vocabulary)}},
        "mappings": copy.deepcopy(MAPPINGS),
    }


def create_index(
    client: OpenSearch,
    concrete: str,
    *,
    alias: str | None = None,
    vocabulary: Vocabulary | None = None,
    meta: dict[str, Any] | None = None,
) -> str | None:
    """Create ``concrete`` with the best analysis tier the cluster supports; that tier.

    With ``alias``, the index is created as the alias's write index. None when the
    index already exists (another process created it first).
    """
    from opensearchpy.exceptions import RequestError

    for tier in ANALYSIS_TIERS:
        body = index_body(tier=tier, vocabulary=vocabulary)
        body["mappings"]["_meta"] = {"docindex": {"analysis": tier, **(meta or {})}}
        if alias:
            body["aliases"] = {alias: {"is_write_index": True}}
        try:
            client.indices.create(index=concrete, body=body)
        except RequestError as exc:
            error_text = str(exc.info) if exc.info else str(exc)
            if "resource_already_exists" in error_text:
                return None
            if not any(word in error_text for word in ("icu", "kuromoji", "analyz", "char_filter", "tokenizer")):
                raise
            logger.warning(
                "analysis not available on this cluster; trying the next tier",
                extra={"index": concrete, "tier": tier, "error": error_text[:300]},
            )
            continue
        logger.info("created index", extra={"index": concrete, "alias": alias, "analysis": tier})
        return tier
    raise RuntimeError(f"could not create index {concrete} with any analysis tier")


def ensure_index(client: OpenSearch, name: str) -> str:
    """Create ``{name}-v{N}`` with alias ``name`` unless ``name`` exists.

    Writing through an alias lets ``docindex reindex`` rebuild the index with
    new analysis and switch the alias without touching the pipeline. Returns
    the concrete index behind the name.
    """
    if client.indices.exists(index=name):
        return name
    concrete = f"{name}-v{INDEX_VERSION}"
    create_index(client, concrete, alias=name)
    return concrete


# Fields added after INDEX_VERSION 1 was deployed: put on an existing index (adding fields is always allowed).
ADDED_FIELDS = (
    *("folders", "allow_principals", "deny_principals", "content_sha256", "content_dropped"),
    *("author", "last_saved_by", "created", "modified"),
    *("ocr_pages", "ocr_page_reasons", "ocr_confidence", "ocr_version"),
)


def ensure_added_fields(client: OpenSearch, name: str) -> None:
    """Add :data:`ADDED_FIELDS` to an index created before they existed (idempotent)."""
    properties = {field: MAPPINGS["properties"][field] for field in ADDED_FIELDS}
    client.indices.put_mapping(index=name, body={"properties": properties})
