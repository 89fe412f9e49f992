"""How results are ordered, as Explorer orders a folder: by relevance, name, modified date or size.

One place for the page, the API (``sort``, ``order``) and the CLI (``--sort``, ``--order``). Each
order ends with the key, so that paging through equal names, dates or sizes neither repeats nor
skips a file. Names compare as Explorer compares them (``name_order``, ``docindex.index.names.name_order``):
case and width folded, runs of digits by their value (第2回 before 第10回); kana in 五十音 order and kanji
by code point, not by reading, then as written (``filename.keyword``). A document written before
``name_order`` existed sorts after the others (by ``filename.keyword``) until ``docindex reindex``
derives it. The modified date is the document's ``last_modified`` (what the year facet and the date range use):
the file server's modification time from the object's metadata, else S3's ``LastModified``
(``docindex.core.filedates``). It orders results only: which change of an object wins is the ledger's.
"""

from __future__ import annotations

from typing import Any, Literal

Sort = Literal["relevance", "name", "date", "size"]
Order = Literal["asc", "desc"]
SORTS: tuple[str, ...] = ("relevance", "name", "date", "size")
# What each order means without a direction: A to Z, newest first, largest first.
DEFAULT_ORDER: dict[str, str] = {"relevance": "desc", "name": "asc", "date": "desc", "size": "desc"}
_FIELD = {"name": "filename.keyword", "date": "last_modified", "size": "size"}


def sort_clause(sort: str, order: str | None = None, *, scored: bool = True) -> list[Any]:
    """The ``sort`` of a search body; ``scored``: the query ranks (a query was typed), else relevance is by date."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    if order not in (None, "", "asc", "desc"):
        raise ValueError(f"order must be asc or desc, not {order!r}")
    by_key = {"key": {"order": "asc"}}
    if sort == "relevance":
        newest = {"last_modified": {"order": "desc", "missing": "_last"}}
        return ["_score", newest, by_key] if scored else [newest, "_score", by_key]
    direction = order or DEFAULT_ORDER[sort]
    by = [{_FIELD[sort]: {"order": direction, "missing": "_last"}}]
    if sort == "name":
        by.insert(0, {"name_order": {"order": direction, "missing": "_last"}})
    return [*by, "_score", {"key": {"order": direction}}]
