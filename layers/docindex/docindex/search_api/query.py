"""The search request and the OpenSearch body it becomes, with the permission filter always in it.

User text goes only into ``simple_query_string`` over fixed fields with a
limited set of operators (AND, OR, NOT, phrases, precedence; no field syntax,
wildcards, fuzziness or regular expressions) and into a ``match`` on file-name
fragments: it cannot name another field or a costly query. Everything else
the user sends is validated (lengths, patterns, ranges, page bounds) first.

The permission filter is a ``terms`` filter on ``allow_principals`` with the
caller's principals and a ``must_not`` on ``deny_principals``: it is part of
the query itself, so hits, totals and every facet count see only what the
caller may read.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from docindex.index.query_parts import (
    MARK_END,
    MARK_START,
    has_control_characters,
    permission_filter,
    query_forms,
)

__all__ = [
    "MARK_END",
    "MARK_START",
    "SearchRequest",
    "permission_filter",
    "query_forms",
    "search_body",
    "segments",
    "text_query",
]

SIMPLE_QUERY_FLAGS = "AND|OR|NOT|PHRASE|PRECEDENCE|WHITESPACE|ESCAPE"
TEXT_FIELDS = ["title^3", "filename^2", "content"]
SUMMARY_FIELDS = [
    "bucket",
    "key",
    "filename",
    "extension",
    "size",
    "last_modified",
    "last_modified_source",
    "s3_last_modified",
    "content_type",
    "ocr_status",
    "title",
    "page_count",
    "extraction_error",
    "ocr_confidence",
]
# Below this mean word confidence an OCR'd page has likely lost words (recognize.PLAUSIBLE_CONFIDENCE).
LOW_OCR_CONFIDENCE = 75
# simple_query_string operators (SIMPLE_QUERY_FLAGS): a query with one is not plain words.
_OPERATOR = re.compile(r'[+|"()\\~*]|(?:^|\s)-')
_LUCENE_REGEX_SPECIAL = re.compile(r'([.?+*|{}\[\]()"\\#@&<>~])')
# A fixed UTC offset (the page sends its own): the days of modified_from/modified_to and the years of the
# year facet are the caller's, not UTC's.
UTC_OFFSET = r"^(Z|[+-](0\d|1[0-4]):[0-5]\d)$"


class UnsearchableQuery(ValueError):
    """A query with nothing to search for (only punctuation or symbols): ``reason`` names it for the page."""

    reason = "no_words"


def check_searchable(q: str) -> None:
    """``UnsearchableQuery`` unless ``q`` (non-empty) holds a letter or a digit (kana and kanji are letters)."""
    if q and not any(c.isalnum() for c in q):
        raise UnsearchableQuery(
            "the query has no letters or digits to search for (punctuation and symbols alone are not searched)"
        )


class SearchRequest(BaseModel):
    """GET /search query parameters, validated."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    q: str = Field("", max_length=256)
    prefix: str = Field("", max_length=1024)
    extension: str = Field("", max_length=16, pattern=r"^[A-Za-z0-9]*$")
    ocr_status: str = Field("", pattern=r"^(|none|pending|done|failed)$")
    # Only documents with a page OCR read at a mean word confidence below this (0: no filter).
    ocr_confidence_below: int = Field(0, ge=0, le=100)
    modified_from: date | None = None
    modified_to: date | None = None
    page: int = Field(1, ge=1, le=1000)
    size: int = Field(20, ge=1, le=100)
    # relevance, or as Explorer orders a folder: name (A to Z), date (newest first), size (largest first);
    # order reverses those (docindex.index.sorting).
    sort: Literal["relevance", "name", "date", "size"] = "relevance"
    order: Literal["", "asc", "desc"] = ""
    # content: the words in the text, title or file name; name: in the names of the file and its folders
    # (partial strings, docindex.index.names).
    scope: Literal["content", "name"] = "content"
    # auto: by words and, where the index has vectors, by meaning (hybrid); keyword: by words only.
    mode: Literal["auto", "keyword"] = "auto"
    # The caller's UTC offset (+09:00): the days of the date range and the years of the year facet are its.
    tz: str = Field("Z", pattern=UTC_OFFSET)

    @property
    def utc_offset(self) -> str:
        """``tz`` as OpenSearch writes an offset (``+00:00`` for ``Z``)."""
        return "+00:00" if self.tz == "Z" else self.tz

    @field_validator("q", "prefix")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        if has_control_characters(value):
            raise ValueError("must not contain control characters")
        return value.strip() if value.strip() != "" else ""

    @field_validator("tz", mode="before")
    @classmethod
    def _offset_sign(cls, value: Any) -> Any:
        # "+09:00" in a query string unencoded arrives as " 09:00" (a + is a space there).
        if isinstance(value, str) and re.fullmatch(r"\s*\d{2}:\d{2}", value):
            return "+" + value.strip()
        return value.strip() if isinstance(value, str) else value

    @field_validator("modified_from", "modified_to", mode="before")
    @classmethod
    def _empty_date(cls, value: Any) -> Any:
        return None if value == "" else value

    @model_validator(mode="after")
    def _range(self) -> SearchRequest:
        if self.modified_from and self.modified_to and self.modified_from > self.modified_to:
            raise ValueError("modified_from is after modified_to")
        return self


def child_folders_pattern(prefix: str) -> str:
    """A Lucene regular expression for the folders one level below ``prefix``."""
    base = prefix
    if base and not base.endswith("/"):
        base = base.rsplit("/", 1)[0] + "/" if "/" in base else ""
    return _LUCENE_REGEX_SPECIAL.sub(r"\\\1", base) + "[^/]+/"


def text_query(q: str) -> dict[str, Any]:
    """Every word in the text fields, or the whole query as file-name fragments; synonyms too.

    The query is width-normalized as the index's analyzers do, and also searched as written
    with the vocabulary's synonym terms (``docindex.index.vocabulary.query_variants``):
    the replacements are vocabulary terms, never user-supplied syntax. Plain words are also
    searched in every spelling (``docindex.index.search.variant_clause``), ranked below the
    spelling typed.
    """
    variants = query_forms(q)
    if len(variants) == 1:
        return _text_clause(q)
    return {"bool": {"should": [_text_clause(v) for v in variants], "minimum_should_match": 1}}


def _text_clause(q: str) -> dict[str, Any]:
    from docindex.index.search import VARIANT_MATCH_TIER, scaled_variant_score, variant_clause

    should: list[dict[str, Any]] = [
        {
            "simple_query_string": {
                "query": q,
                "fields": TEXT_FIELDS,
                "default_operator": "and",
                "flags": SIMPLE_QUERY_FLAGS,
                "lenient": True,
            }
        },
        {"match": {"filename.ngram": {"query": q, "minimum_should_match": "100%", "boost": 0.5}}},
    ]
    # Spelling variants (表記ゆれ) of plain words; a query with operators is matched as typed.
    variants = None if _OPERATOR.search(q) else variant_clause(q)
    if variants is not None:
        # the constant tier, and the phrases' own score only to order variant matches among
        # themselves: a tenth, so that it never reorders documents that match as typed
        should += [
            {"constant_score": {"filter": variants, "boost": VARIANT_MATCH_TIER}},
            scaled_variant_score(variants),
        ]
    return {"bool": {"should": should, "minimum_should_match": 1}}


def query_of(request: SearchRequest) -> dict[str, Any]:
    """The scoring query of a request with ``q``: its words in the text, or in the file and folder names."""
    if request.scope == "name":
        from docindex.index.names import name_query

        return name_query(request.q)
    return text_query(request.q)


def request_filters(request: SearchRequest, principals: list[str]) -> list[dict[str, Any]]:
    """The permission filter and the user's filters: what every leg of a search is limited to."""
    filters: list[dict[str, Any]] = [permission_filter(principals)]
    if request.prefix:
        filters.append({"prefix": {"key": request.prefix}})
    if request.extension:
        filters.append({"term": {"extension": request.extension.lower()}})
    if request.ocr_status:
        filters.append({"term": {"ocr_status": request.ocr_status}})
    if request.ocr_confidence_below:
        filters.append({"range": {"ocr_confidence": {"lt": request.ocr_confidence_below}}})
    if request.modified_from or request.modified_to:
        # Whole days in the caller's time zone: from its first moment to its last.
        bounds: dict[str, str] = {}
        if request.modified_from:
            bounds["gte"] = f"{request.modified_from.isoformat()}T00:00:00.000{request.utc_offset}"
        if request.modified_to:
            bounds["lte"] = f"{request.modified_to.isoformat()}T23:59:59.999{request.utc_offset}"
        filters.append({"range": {"last_modified": bounds}})
    return filters


def search_body(
    request: SearchRequest,
    principals: list[str],
    *,
    max_page_size: int,
    max_result_window: int,
    max_analyzer_offset: int,
    page_hits: int = 0,
) -> dict[str, Any]:
    """The full OpenSearch body for a search request by a caller holding ``principals``.

    ``page_hits``: name at most this many matching pages of each hit (``docindex.index.pages``).
    """
    size = min(request.size, max_page_size)
    start = (request.page - 1) * size
    if start + size > max_result_window:
        raise ValueError(f"page too deep: at most {max_result_window} results can be paged through")
    from docindex.index.sorting import sort_clause

    filters = request_filters(request, principals)
    must = [query_of(request)] if request.q else [{"match_all": {}}]
    if request.q and request.scope == "content":
        from docindex.index.pages import pages_clause

        pages = pages_clause(query_forms(request.q), size=page_hits, pre_tag=MARK_START, post_tag=MARK_END)
        if pages is not None:
            filters.append(pages)
    sort = sort_clause(request.sort, request.order, scored=bool(request.q))
    return {
        "from": start,
        "size": size,
        "track_total_hits": True,
        "query": {"bool": {"must": must, "filter": filters}},
        "sort": sort,
        "_source": SUMMARY_FIELDS,
        "highlight": {
            # Documents longer than the index's highlight limit (1,000,000 characters by default;
            # docindex keeps 2,000,000) fail the whole search without this bound: the highlighter
            # analyzes only the first max_analyzer_offset characters instead.
            "max_analyzer_offset": max_analyzer_offset,
            "pre_tags": [MARK_START],
            "post_tags": [MARK_END],
            "fields": {
                "content": {"fragment_size": 160, "number_of_fragments": 1, "no_match_size": 160},
                "title": {"number_of_fragments": 0},
                "filename": {"number_of_fragments": 0},
            },
        },
        "aggs": {
            "extension": {"terms": {"field": "extension", "size": 20}},
            "folder": {"terms": {"field": "folders", "size": 20, "include": child_folders_pattern(request.prefix)}},
            "year": {
                "date_histogram": {
                    "field": "last_modified",
                    "calendar_interval": "year",
                    "time_zone": request.utc_offset,
                    "format": "yyyy",
                    "min_doc_count": 1,
                    "order": {"_key": "desc"},
                }
            },
            "ocr_status": {"terms": {"field": "ocr_status", "size": 10}},
            # Documents OCR read with little confidence: the API's "low confidence" facet.
            "low_ocr_confidence": {"filter": {"range": {"ocr_confidence": {"lt": LOW_OCR_CONFIDENCE}}}},
        },
    }


def document_body(doc_id: str, principals: list[str]) -> dict[str, Any]:
    """One document by id, only if the caller may read it."""
    return {
        "size": 1,
        "query": {"bool": {"filter": [{"ids": {"values": [doc_id]}}, permission_filter(principals)]}},
        "_source": [*SUMMARY_FIELDS, "version_id", "indexed_at", "content_truncated"],
    }


def page_body(doc_id: str, principals: list[str], number: int) -> dict[str, Any]:
    """One document by id, only if the caller may read it, with its page ``number`` (if indexed) as an inner hit."""
    page = {
        "nested": {
            "path": "pages",
            "query": {"term": {"pages.n": number}},
            # The whole nested object: _source paths of nested inner hits are read differently
            # across versions, a page object is small, and only one is asked for.
            "inner_hits": {"name": "page", "size": 1},
        }
    }
    return {
        "size": 1,
        "query": {
            "bool": {
                "filter": [
                    {"ids": {"values": [doc_id]}},
                    permission_filter(principals),
                    {"bool": {"should": [page, {"match_all": {}}]}},
                ]
            }
        },
        "_source": [*SUMMARY_FIELDS, "version_id", "etag", "content_sha256", "indexed_at", "ocr_pages"],
    }


def segments(fragment: str) -> list[dict[str, Any]]:
    """A highlighted fragment as ``[{"text": ..., "match": bool}]`` (the page escapes and marks them)."""
    out: list[dict[str, Any]] = []
    for i, part in enumerate(re.split(f"[{MARK_START}{MARK_END}]", fragment)):
        if not part:
            continue
        if out and out[-1]["match"] == (i % 2 == 1):
            out[-1]["text"] += part  # adjacent highlighted tokens are one match
        else:
            out.append({"text": part, "match": i % 2 == 1})
    return out
