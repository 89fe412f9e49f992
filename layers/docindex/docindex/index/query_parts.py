"""What every query a caller's words become is built from, for the search API and the answers alike.

The permission filter (a caller reads only what it lets through), the forms a query's words are searched in,
and the private-use characters the highlighter marks matches with. ``docindex.search_api`` and
``docindex.answer`` both build queries from them, so they live below both (neither imports the other for them).
"""

from __future__ import annotations

from typing import Any

# Private-use characters mark highlighted runs; the API returns segments, never HTML.
MARK_START = "\ue000"
MARK_END = "\ue001"


def permission_filter(principals: list[str]) -> dict[str, Any]:
    """Readable by one of ``principals`` and denied to none of them."""
    return {
        "bool": {
            "filter": [{"terms": {"allow_principals": principals}}],
            "must_not": [{"terms": {"deny_principals": principals}}],
        }
    }


def query_forms(q: str) -> list[str]:
    """The query width-normalized as the index's analyzers do, and as written with the vocabulary's synonyms."""
    from docindex.index.vocabulary import query_variants
    from docindex.text.width import normalize

    return list(query_variants(normalize(q)))


def has_control_characters(value: str) -> bool:
    """Whether ``value`` holds a control character or a mark character (never part of a caller's words)."""
    return any(ord(c) < 32 or MARK_START <= c <= MARK_END for c in value)
