"""Name search: find files by the names of their folders and their own name, not by their content.

People often remember only that a file was called something like 見積 or 議事録 and lies somewhere
under 営業部. The ``names`` field of each document holds its key's folder and file names, folded by
docindex itself the way content search folds spelling variants (:func:`docindex.text.variants.fold`:
width, case, old kanji forms, 申し込み/申込, サーバー/サーバ, era years) and, where that differs,
as written (NFKC and lower case only), so a fragment cut through a folded spelling still matches.
Its analyzer (``docindex_names`` in :mod:`docindex.index.mapping`) cuts every run of letters and
digits into its single characters and pairs: OpenSearch core's ``ngram`` tokenizer, on every engine
and analysis tier, with nothing before it (the text arrives normalized).

A query word matches where all of its characters and pairs are in the names (``minimum_should_match``
100 %: a term lookup per gram, no wildcard or regular expression, so 5 million names cost what a
word search costs); every word of the query must match, in the file's name or any of its folders'.
A word is also tried folded and, for kana, in the other script (めがね / メガネ). Files whose own
name matches rank above those found by a folder's name (``filename.ngram``). The permission filter
and every other filter apply as in content search: this module builds only the scoring query.

The field is derived (not kept in ``_source``): every writer computes it (``IndexDocument.source()``,
``docindex reindex``). An index built before it has no ``names`` until ``docindex reindex``
(``docindex diagnose`` says so); :data:`NAMES_VERSION` is stamped in the index's ``_meta``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# Bump when what the field holds of a key changes: `docindex diagnose` asks for `docindex reindex`.
# 2: `name_order` (sorting by name as Explorer does) is derived beside `names`.
NAMES_VERSION = 2
FIELD = "names"
# The tokenizer: single characters and pairs of each run of letters and digits (Unicode classes, as
# Java's Character.isLetter/isDigit see them: kana, kanji, ー and 々 are letters).
TOKENIZER: dict[str, Any] = {"type": "ngram", "min_gram": 1, "max_gram": 2, "token_chars": ["letter", "digit"]}
ANALYZER: dict[str, Any] = {"type": "custom", "tokenizer": "docindex_names"}
# The field: only whether a document has a gram (no frequencies or positions: no phrase is asked of
# it); norms kept, so that of two paths holding the words the shorter ranks first.
MAPPING: dict[str, Any] = {"type": "text", "analyzer": "docindex_names", "index_options": "docs"}
# A file whose own name holds the words ranks above one found by its folders' names.
FILE_NAME_BOOST = 2.0
MAX_WORDS = 16

_SEARCHABLE = re.compile(r"[^\W_]")  # a letter or a digit: what the tokenizer keeps
# A query word is cut at path separators too: 営業部/見積 is two words.
_SEPARATORS = re.compile(r"[\s/\\]+")


# Sorting by name as Explorer does (``docindex.index.sorting``): the file name's order key, derived like
# ``names`` (every writer computes it, ``_source`` does not keep it).
ORDER_FIELD = "name_order"
ORDER_MAPPING: dict[str, Any] = {"type": "keyword", "ignore_above": 1024}
_DIGIT_RUN = re.compile(r"[0-9]+")


def name_order(filename: str | None) -> str | None:
    """The key that orders file names as Explorer orders them (``StrCmpLogicalW``): width and case folded (NFKC,
    lower case), and each run of digits by its value — 第2回 before 第10回, 報告1 before 報告01a before 報告2 —
    written as its length (two digits) and its digits without leading zeros, so comparing keys as strings
    compares the numbers. Letters, kana and kanji compare by code point, as in ``filename.keyword``."""
    if not filename:
        return None

    def number(match: re.Match[str]) -> str:
        digits = match.group().lstrip("0") or "0"
        return f"{min(len(digits), 99):02d}{digits}"

    return _DIGIT_RUN.sub(number, plain(filename))


class NameQueryError(ValueError):
    """The name query has nothing to look for (or too many words)."""


def plain(text: str) -> str:
    """``text`` as written, normalized as every engine reads it: NFKC and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def document_names(key: str | None) -> list[str]:
    """The ``names`` field of the document at ``key``: its path folded, and as written where that differs."""
    if not key:
        return []
    from docindex.text.variants import fold

    folded, written = fold(key), plain(key)
    return [folded] if folded == written else [folded, written]


def name_words(query: str) -> list[str]:
    """The words of a name query: whitespace and path separators cut them, each must have a letter or digit."""
    words = [w for w in _SEPARATORS.split(query.strip()) if _SEARCHABLE.search(plain(w))]
    if not words:
        raise NameQueryError("the name query has no letters or digits to look for")
    if len(words) > MAX_WORDS:
        raise NameQueryError(f"the name query has {len(words)} words: at most {MAX_WORDS}")
    return words


def _forms(word: str) -> list[str]:
    from docindex.text.variants import fold, other_script

    forms = (fold(word), plain(word), fold(other_script(word)) if other_script(word) else "")
    return [f for f in dict.fromkeys(forms) if f and _SEARCHABLE.search(f)]


class NameMarker:
    """Marks a name query's words in file names, as the search found them: folded, as written, or in the
    other kana script (the words and their forms are worked out once per query)."""

    def __init__(self, query: str) -> None:
        from docindex.text.variants import fold, other_script

        try:
            words = name_words(query)
        except NameQueryError:
            words = []
        self.forms = [list(dict.fromkeys((word, other_script(word) or word))) for word in words]
        self.written = [[re.compile(re.escape(plain(form))) for form in forms] for forms in self.forms]
        self.folded = [list(dict.fromkeys(fold(form) for form in forms)) for forms in self.forms]

    def marks(self, filename: str) -> list[dict[str, Any]]:
        """The file name as segments ``[{"text", "match"}]`` with the words marked where it holds them in one
        of their spellings; a word found only in a folder's name marks nothing. Empty when nothing is marked."""
        from docindex.text.variants import fold, folded_spans

        if not self.forms or not filename:
            return []
        written, firsts, ends = _written(filename)
        marked = [False] * len(filename)
        folded: str | None = None
        for patterns, folded_forms in zip(self.written, self.folded, strict=True):
            spans = [(firsts[m.start()], ends[m.end() - 1]) for p in patterns for m in p.finditer(written)]
            if spans:
                for first, end in spans:
                    marked[first:end] = [True] * (end - first)
                continue
            # not as written: in a folded spelling (申込書 / 申し込み書), found the slower way
            folded = fold(filename) if folded is None else folded
            for form in folded_forms:
                if form and form in folded:
                    spans += folded_spans(filename, form)
            for first, end in spans:
                marked[first:end] = [True] * (end - first)
        return _segments(filename, marked) if any(marked) else []


# Half-width voiced and semi-voiced sound marks: NFKC joins them to the kana before them (ﾌﾟ → プ).
_HALF_WIDTH_MARKS = "\uff9e\uff9f"


def _written(filename: str) -> tuple[str, list[int], list[int]]:
    """The name as written (NFKC, lower case), and for each of its characters the first character of the
    name it comes from and the end of those (a half-width kana and its sound mark make one: ﾌﾟ → プ)."""
    written = plain(filename)
    if len(written) == len(filename):
        return written, list(range(len(filename))), list(range(1, len(filename) + 1))
    out: list[str] = []
    firsts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(filename):
        end = i + 2 if i + 1 < len(filename) and filename[i + 1] in _HALF_WIDTH_MARKS else i + 1
        piece = plain(filename[i:end])
        out.append(piece)
        firsts += [i] * len(piece)
        ends += [end] * len(piece)
        i = end
    return "".join(out), firsts, ends


def _segments(text: str, marked: list[bool]) -> list[dict[str, Any]]:
    """``text`` as runs ``[{"text", "match"}]`` of marked and unmarked characters."""
    segments: list[dict[str, Any]] = []
    for ch, match in zip(text, marked, strict=True):
        if segments and segments[-1]["match"] == match:
            segments[-1]["text"] += ch
        else:
            segments.append({"text": ch, "match": match})
    return segments


def name_marks(filename: str, query: str) -> list[dict[str, Any]]:
    """``filename`` with the name query's words marked (:class:`NameMarker`; one query, one name)."""
    return NameMarker(query).marks(filename)


def name_query(query: str) -> dict[str, Any]:
    """The scoring query of a name search: every word in the names, each in one of its spellings."""
    words = name_words(query)
    must = [
        {
            "bool": {
                "should": [
                    {"match": {FIELD: {"query": form, "minimum_should_match": "100%"}}} for form in _forms(word)
                ],
                "minimum_should_match": 1,
            }
        }
        for word in words
    ]
    own_name = [
        {"match": {"filename.ngram": {"query": word, "minimum_should_match": "100%", "boost": FILE_NAME_BOOST}}}
        for word in words
    ]
    return {"bool": {"must": must, "should": own_name}}
