"""Which pages of a document match a query: the nested ``pages`` clause and the page hits it returns.

Each page, slide, sheet or attachment is a nested document of its file (``index/mapping.py``,
``pages``), written and deleted with it in one Lucene block, so the permission stamp and the
external version of the file are the page's too. A search adds one ``nested`` clause with
``inner_hits`` in *filter context* next to a ``match_all``: it changes neither which files match
nor their score, and the cluster evaluates it only for the hits it returns (the inner-hits fetch
phase runs the page query on each returned file's pages), so a page of results costs at most
``size`` small page queries. The inner hits are the best-scoring matching pages of each file,
each with a highlighted snippet of its own text, and their total is the file's matching-page
count.

A page matches when it holds every word of the query (or every character pair of it, for words
kuromoji splits another way), and, ranked below those, when it holds some of them: a query whose
words are spread over several pages still names them. Excluded words (``-word``) never make a
page match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# The inner hits' name in the response.
INNER_HITS = "pages"
# Phrases and words preceded by '-' (the exclusions of both query syntaxes), and the NOT operator.
_EXCLUDED = re.compile(r'(?:^|(?<=\s))-(?:"[^"]*"?|\S+)')
_OPERATOR_NOT = re.compile(r"(?:^|(?<=\s))NOT\s+\S+")
# simple_query_string features a page query uses: no NOT (exclusions were taken out), no field syntax.
PAGE_QUERY_FLAGS = "AND|OR|PHRASE|PRECEDENCE|WHITESPACE|ESCAPE"


@dataclass(frozen=True)
class PageHit:
    """One matching page of a hit: its number, kind and label, and a highlighted fragment of its text."""

    number: int
    kind: str
    label: str
    fragment: str


def positive_text(query: str) -> str:
    """The query without its exclusions (``-word``, ``-"a phrase"``, ``NOT word``)."""
    return " ".join(_OPERATOR_NOT.sub(" ", _EXCLUDED.sub(" ", query)).split())


def pages_clause(
    variants: list[str], *, size: int, pre_tag: str, post_tag: str, fragment_size: int = 160
) -> dict[str, Any] | None:
    """The non-scoring clause that returns each hit's best ``size`` matching pages; None without words.

    ``variants``: the query as typed and its other written forms (the vocabulary's), each searched.
    Put it in the top-level ``bool``'s ``filter`` list: it matches every document.
    """
    texts = [text for text in dict.fromkeys(positive_text(v) for v in variants) if text]
    if not texts or size <= 0:
        return None

    def sqs(text: str, field: str, operator: str, boost: float) -> dict[str, Any]:
        return {
            "simple_query_string": {
                "query": text,
                "fields": [field],
                "default_operator": operator,
                "flags": PAGE_QUERY_FLAGS,
                "lenient": True,
                "boost": boost,
            }
        }

    should: list[dict[str, Any]] = []
    for text in texts:
        should += [
            sqs(text, "pages.text", "and", 4.0),
            sqs(text, "pages.text.bigram", "and", 2.0),
            sqs(text, "pages.text", "or", 0.5),
        ]
    nested = {
        "nested": {
            "path": "pages",
            "score_mode": "max",
            "query": {"bool": {"should": should, "minimum_should_match": 1}},
            "inner_hits": {
                "name": INNER_HITS,
                "size": size,
                # Full-path doc values, not _source filtering: the one form whose paths every
                # OpenSearch version and the emulator read the same way.
                "_source": False,
                "docvalue_fields": ["pages.n", "pages.kind", "pages.label"],
                "highlight": {
                    "pre_tags": [pre_tag],
                    "post_tags": [post_tag],
                    "fields": {
                        "pages.text": {
                            "fragment_size": fragment_size,
                            "number_of_fragments": 1,
                            "no_match_size": fragment_size,
                        },
                        "pages.text.bigram": {"fragment_size": fragment_size, "number_of_fragments": 1},
                    },
                },
            },
        }
    }
    return {"bool": {"should": [nested, {"match_all": {}}]}}


def _first(fields: dict[str, Any], name: str) -> Any:
    values = fields.get(name) or []
    return values[0] if values else None


def page_hits(hit: dict[str, Any], pre_tag: str) -> tuple[list[PageHit], int]:
    """The matching pages of one search hit, best first, and how many pages match in all.

    A page's fragment is the word field's highlight, or the character-pair field's when only
    that one marks something (a word kuromoji split another way).
    """
    inner = ((hit.get("inner_hits") or {}).get(INNER_HITS) or {}).get("hits") or {}
    total = inner.get("total") or 0
    count = int(total.get("value", 0) if isinstance(total, dict) else total)
    pages: list[PageHit] = []
    for page in inner.get("hits") or []:
        fields = page.get("fields") or {}
        number = _first(fields, "pages.n")
        if number is None:
            continue
        highlight = page.get("highlight") or {}
        fragments = [highlight[f][0] for f in ("pages.text", "pages.text.bigram") if highlight.get(f)]
        fragment = next((f for f in fragments if pre_tag in f), fragments[0] if fragments else "")
        kind = str(_first(fields, "pages.kind") or "page")
        label = str(_first(fields, "pages.label") or f"p. {int(number)}")
        pages.append(PageHit(number=int(number), kind=kind, label=label, fragment=fragment))
    return pages, count
