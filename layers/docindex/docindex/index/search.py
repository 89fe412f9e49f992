"""Full-text search as the operator CLI and the demo run it.

What people may type (``parse_query``, docs/search.md): words (every one must match), ``"quoted
phrases"``, ``-word`` / ``-"phrase"`` to exclude, and ``OR`` between alternatives. Nothing else of
a query language reaches OpenSearch: each clause becomes a ``simple_query_string`` limited to the
PHRASE, OR and WHITESPACE flags over fixed fields (no field names, wildcards, regular expressions
or fuzziness can be injected), combined in a ``bool`` query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docindex.core.observability import logger
from docindex.core.settings import EmbeddingSettings
from docindex.embed import Embedder, EmbedderUnavailable
from docindex.index.hybrid import Legs, MeaningRule, VectorHit, on_page, query_vector, search_hybrid, total_of
from docindex.text.width import normalize

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

# The fields a query searches, with their boosts.
TEXT_FIELDS = ["title^3", "filename^2", "content"]
# simple_query_string features the user's clauses may use (not PREFIX, FUZZY, SLOP, NEAR, ESCAPE, PRECEDENCE).
USER_QUERY_FLAGS = "PHRASE|OR|WHITESPACE"
MAX_QUERY_CHARS = 1000
MAX_CLAUSES = 32
# OpenSearch's default index.max_result_window: from + size beyond it is refused.
MAX_RESULT_WINDOW = 10_000
# --type: document families and their extensions.
TYPE_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "pdf": ("pdf",),
    "word": ("doc", "docx", "docm", "rtf", "odt"),
    "excel": ("xls", "xlsx", "xlsm", "xlsb", "ods", "csv", "tsv"),
    "powerpoint": ("ppt", "pptx", "pptm", "odp"),
    "text": ("txt", "md", "markdown", "log", "json", "xml", "yaml", "yml", "csv", "tsv"),
    "html": ("html", "htm", "xhtml"),
    "image": ("png", "jpg", "jpeg", "tif", "tiff", "gif", "bmp", "webp"),
}


class QueryError(ValueError):
    """The query cannot be searched as typed (empty, only operators, too long, not text)."""


@dataclass(frozen=True)
class Clause:
    """One required (or, with ``exclude``, forbidden) clause: alternatives, each a word or a phrase."""

    alternatives: tuple[str, ...]  # words as typed, phrases with their quotes
    exclude: bool = False

    def query_string(self) -> str:
        return " | ".join(self.alternatives)


@dataclass(frozen=True)
class ParsedQuery:
    clauses: tuple[Clause, ...] = field(default_factory=tuple)

    @property
    def has_operators(self) -> bool:
        """A phrase, an exclusion or an OR: the plain words-only query cannot express it."""
        return any(c.exclude or len(c.alternatives) > 1 or c.alternatives[0].startswith('"') for c in self.clauses)


_TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')
# simple_query_string operators and characters a word must not carry to OpenSearch.
_SPECIAL = re.compile(r'[|+"()*~\\]')


def _word(text: str) -> str:
    """The text without query operators; empty when nothing searchable (no letter or digit) is left."""
    cleaned = " ".join(_SPECIAL.sub(" ", text).split())
    return cleaned if re.search(r"\w", cleaned) else ""


def parse_query(text: str) -> ParsedQuery:
    """Words, ``"phrases"``, ``-exclusions`` and ``OR``, as people type them; ``QueryError`` when unusable."""
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        raise QueryError("the query is not valid UTF-8 text: type it again, or check the terminal's encoding")
    if "\x00" in text:
        raise QueryError("the query contains a NUL character")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is {len(text)} characters long: at most {MAX_QUERY_CHARS}")
    clauses: list[Clause] = []
    pending_or = False
    for item in _items(text):
        if item is None:
            pending_or = bool(clauses) and not clauses[-1].exclude
            continue
        excluded, term = item
        if pending_or and not excluded:
            last = clauses.pop()
            clauses.append(Clause((*last.alternatives, term)))
        else:
            clauses.append(Clause((term,), exclude=excluded))
        pending_or = False
    if not any(not c.exclude for c in clauses):
        raise QueryError(
            "the query has no words to search for (an empty query, only operators or punctuation, or only "
            '-exclusions): type at least one word or "phrase"'
        )
    if len(clauses) > MAX_CLAUSES:
        raise QueryError(f"the query has {len(clauses)} clauses: at most {MAX_CLAUSES}")
    return ParsedQuery(tuple(clauses))


def _items(text: str) -> list[tuple[bool, str] | None]:
    """The query's words and phrases as ``(excluded, word or "phrase")``, ``None`` for each ``OR``."""
    items: list[tuple[bool, str] | None] = []
    for match in _TOKEN.finditer(text):
        negated, phrase, word = match.group(1), match.group(2), match.group(3)
        if phrase is not None:
            cleaned = _word(phrase)
            if cleaned:
                items.append((bool(negated), f'"{cleaned}"'))
            continue
        if word == "OR":
            items.append(None)
            continue
        excluded = word.startswith("-") and len(word) > 1
        cleaned = _word(word[1:] if excluded else word)
        if cleaned:
            items.append((excluded, cleaned))
    return items


def user_query(parsed: ParsedQuery, fields: list[str] | None = None) -> dict[str, Any]:
    """The bool query of a parsed query: each clause a ``simple_query_string`` with the limited flags."""

    def clause(c: Clause) -> dict[str, Any]:
        return {
            "simple_query_string": {
                "query": c.query_string(),
                "fields": fields or TEXT_FIELDS,
                "flags": USER_QUERY_FLAGS,
                "default_operator": "and",
            }
        }

    return {
        "bool": {
            "must": [clause(c) for c in parsed.clauses if not c.exclude],
            "must_not": [clause(c) for c in parsed.clauses if c.exclude],
        }
    }


def page_query_text(parsed: ParsedQuery) -> str:
    """The query's wanted clauses as a ``simple_query_string`` (the page clause's syntax): each
    clause's alternatives joined by ``|`` in parentheses, phrases quoted, exclusions left out."""
    return " ".join(
        f"({c.query_string()})" if len(c.alternatives) > 1 else c.query_string()
        for c in parsed.clauses
        if not c.exclude
    )


class SearchHits(list[dict[str, Any]]):
    """The hits of one page (a list, as before), with the number of documents that contain the query
    (``total``) and how many more were found by meaning alone (``by_meaning``)."""

    total: int = 0
    total_is_exact: bool = True
    by_meaning: int = 0


def search(
    client: OpenSearch,
    index: str,
    query: str,
    *,
    size: int = 10,
    prefix: str | None = None,
    extension: str | None = None,
    bucket: str | None = None,
    page: int = 1,
    extensions: list[str] | None = None,
    modified_after: str | None = None,
    modified_before: str | None = None,
    operators: bool = False,
    collapse: bool = False,
    ocr_confidence_below: int | None = None,
    page_hits: int = 3,
    hybrid: bool | None = None,
    embedder: Embedder | None = None,
    meaning_rule: MeaningRule | None = None,
    names: bool = False,
    sort: str = "relevance",
    order: str | None = None,
) -> SearchHits:
    """Full-text search over content, title and file name, with highlighted snippets.

    Documents whose words match the query as kuromoji splits them come first;
    then those that only contain its characters (the bigram fields: a compound
    kuromoji splits another way, an unknown word) or fragments of the file name.

    ``operators``: read phrases, ``-exclusions`` and ``OR`` in ``query`` (``parse_query``); plain
    words are searched the same way either way. ``page`` counts from 1; ``extensions`` keeps any
    of those extensions; ``modified_after`` (inclusive) / ``modified_before`` (exclusive) bound
    ``last_modified`` (ISO dates or times). ``collapse``: identical copies (same
    ``content_sha256``) are one hit, the best-scoring copy, with every other copy's location in
    ``also_in`` (see :func:`collapse_copies`). ``ocr_confidence_below``: only documents with an
    OCR'd page read at a mean word confidence below it (``ocr_confidence``); with it, an empty
    ``query`` lists every such document, least confident first.
    ``page_hits``: each hit's ``pages`` names at most
    this many of its matching pages (``number``, ``kind``, ``label``, ``snippet``), best first,
    and ``matching_pages`` counts them all (``docindex.index.pages``).

    ``hybrid``: also find documents by meaning (``docindex.index.hybrid``): None (the default) does
    when the index has vectors of ``embedder``'s model (default: the configured embedder), False
    never does. A query with operators is searched by its words only. Files found by meaning alone
    (those ``meaning_rule`` offers; default: the ``MEANING_*`` settings) follow the files that
    contain the query, with their best passage as the snippet and ``found_by: "meaning"``;
    ``total`` counts the files that contain the query, ``by_meaning`` the others.

    ``names``: find the query's words in the names of the files and their folders instead
    (``docindex.index.names``: partial strings, spelling variants folded; no operators, no meaning).
    ``sort``/``order``: relevance, or name, date or size as Explorer orders them (``docindex.index.sorting``).
    """
    from docindex.index.pages import pages_clause
    from docindex.index.vocabulary import query_variants

    # The index's char filter normalizes width and form on the cluster; doing the same here
    # makes the query independent of whether the cluster (or an emulator) applies it.
    query = normalize(query)
    must = synonym_clause(query) if query.strip() else {"match_all": {}}
    with_operators: ParsedQuery | None = None
    if names:
        from docindex.index.names import name_query

        must = name_query(query)
    elif operators and query.strip():
        parsed = parse_query(query)
        if parsed.has_operators:
            must = user_query(parsed)
            with_operators = parsed
    filters = _filters(prefix, extension, bucket)
    if extensions:
        filters.append({"terms": {"extension": sorted({e.lower().lstrip(".") for e in extensions})}})
    if modified_after or modified_before:
        bounds = {"gte": modified_after, "lt": modified_before}
        filters.append({"range": {"last_modified": {k: v for k, v in bounds.items() if v}}})
    meaning = (
        hybrid is not False
        and not names
        and sort == "relevance"
        and bool(query.strip())
        and not (operators and parse_query(query).has_operators)
    )
    # The page clause is a simple_query_string: the CLI's OR is its |, never a word to find.
    page_query = page_query_text(with_operators) if with_operators is not None else query
    pages = None if names else pages_clause(list(query_variants(page_query)), size=page_hits, pre_tag="[", post_tag="]")
    if ocr_confidence_below is not None:
        filters.append(low_confidence_filter(ocr_confidence_below))
    fetch = min(size * COLLAPSE_OVERFETCH, MAX_COLLAPSE_WINDOW) if collapse else size
    start = (max(1, page) - 1) * size
    body: dict[str, Any] = {
        # Collapsing needs room: copies of one file would otherwise crowd the page.
        "size": fetch,
        "from": start,
        "track_total_hits": True,
        "query": {"bool": {"must": [must], "filter": [*filters, *([pages] if pages else [])]}},
        # name_order: kept by an index built before it was derived (its mapping's _source excludes it now)
        "_source": {"excludes": ["content", "pages", "passages", "name_order"]},
        "highlight": {
            "fields": {
                "content": {"fragment_size": 120, "number_of_fragments": 1},
                "content.bigram": {"fragment_size": 120, "number_of_fragments": 1},
                "title": {},
                "filename": {},
            },
            "pre_tags": ["["],
            "post_tags": ["]"],
        },
    }
    if ocr_confidence_below is not None and not query.strip():
        body["sort"] = [{"ocr_confidence": "asc"}, {"key": "asc"}]
    if sort != "relevance" or names:
        from docindex.index.sorting import sort_clause

        body["sort"] = sort_clause(sort, order, scored=bool(query.strip()))
    rule = meaning_rule if meaning_rule is not None else default_rule()
    if meaning and embedder is None:
        embedder = default_embedder()
    response, legs = _ask(
        client, index, body, query, must=must, filters=filters, rule=rule, embedder=embedder if meaning else None
    )
    hits = SearchHits(_hit(hit) for hit in response["hits"]["hits"])
    hits.total, hits.total_is_exact = _total(response)
    if legs is not None:
        hits.by_meaning = len(legs.by_meaning)
        hits.extend(
            _meaning_hit(found) for found in on_page(len(hits), hits.total, legs.by_meaning, start=start, size=fetch)
        )
    if collapse:
        collapsed = SearchHits(collapse_copies(client, index, hits, size=size))
        collapsed.total, collapsed.total_is_exact, collapsed.by_meaning = (
            hits.total,
            hits.total_is_exact,
            hits.by_meaning,
        )
        return collapsed
    return hits


# A hit found by meaning alone shows this much of its best passage.
SNIPPET_CHARS = 120


def _hit(hit: dict[str, Any]) -> dict[str, Any]:
    """One result as the CLI shows it: the highlighted snippet, its pages."""
    from docindex.index.pages import page_hits

    highlight = hit.get("highlight", {})
    snippet = next(
        (highlight[f][0] for f in ("content", "content.bigram", "title", "filename") if highlight.get(f)), ""
    )
    pages_found, matching = page_hits(hit, "[")
    found = [{"number": p.number, "kind": p.kind, "label": p.label, "snippet": p.fragment} for p in pages_found]
    return {
        "id": hit["_id"],
        "score": hit.get("_score"),
        "snippet": snippet,
        **hit["_source"],
        "pages": found,
        "matching_pages": matching,
    }


def _meaning_hit(found: VectorHit) -> dict[str, Any]:
    """A file found by meaning alone: its best passage is the snippet."""
    return {
        "id": found.doc_id,
        "score": found.score,
        "snippet": found.passage[:SNIPPET_CHARS],
        **found.source,
        "pages": [],
        "matching_pages": 0,
        "found_by": "meaning",
        "passage_page": found.page,
    }


def _total(response: dict[str, Any]) -> tuple[int, bool]:
    """The number of documents that contain the query, and whether it is exact."""
    total = response["hits"].get("total", 0)
    return total_of(response), not (isinstance(total, dict) and total.get("relation") == "gte")


def _ask(
    client: OpenSearch,
    index: str,
    body: dict[str, Any],
    query: str,
    *,
    must: dict[str, Any],
    filters: list[dict[str, Any]],
    rule: MeaningRule,
    embedder: Embedder | None,
) -> tuple[dict[str, Any], Legs | None]:
    """The keyword leg's response, and both legs when meaning search runs (``embedder``: None for
    keyword-only; the configured one is used when the index has vectors of its model).

    A name, a code or a single word is a keyword search (``MeaningRule.keyword_search``): the keyword
    leg runs alone first, and the query is embedded and the vector leg asked only when no file holds
    it and the rule allows — the files that hold it are the answer, with no embedding paid.
    """
    if embedder is None:
        return client.search(index=index, body=body), None
    asked: dict[str, Any] | None = None
    if rule.keyword_search(query):
        asked = client.search(index=index, body=body)
        if total_of(asked) or rule.single_words != "unmatched":
            return asked, None
    vector = query_vector(client, index, query, embedder)
    if vector is None:
        return (asked if asked is not None else client.search(index=index, body=body)), None
    legs = search_hybrid(
        client,
        index,
        keyword_body=body,
        keyword_query=must,
        filters=filters,
        vector=vector,
        query=query,
        rule=rule,
        source=body["_source"],
        keyword=asked,
    )
    return legs.keyword, legs


def default_rule() -> MeaningRule:
    """The acceptance rule of the ``MEANING_*`` settings (the environment, else the defaults)."""
    return MeaningRule.from_settings(EmbeddingSettings.from_env())


def default_embedder() -> Embedder | None:
    """The configured embedder (``EMBEDDINGS``), or None when it is off or cannot load (logged once)."""
    from docindex.core.settings import EmbeddingSettings
    from docindex.embed.settings import embedder_for

    try:
        return embedder_for(EmbeddingSettings.from_env())
    except (EmbedderUnavailable, ValueError) as exc:
        logger.warning("no embedder: keyword search only", extra={"error": str(exc)[:300]})
        return None


# Added to the score of every document whose words match: above any score of a document
# matched only by characters (bigrams) or file-name fragments, whatever their BM25 figures.
WORD_MATCH_TIER = 1000.0
# Added to the score of every document that has each word of the query in one of its spellings
# (``variants``): below every word match, so the spelling typed ranks first, above the rest.
VARIANT_MATCH_TIER = 100.0
# A query word without Japanese still has to be in the document, in one of these fields.
# A two-kana word in the other script is searched as a word of the morphological fields (kuromoji
# drops particles and endings: から, ます) and never in their bigram subfields.
_KANA_WORD_FIELDS = ["title", "filename", "content"]
_PLAIN_WORD_FIELDS = ["title", "filename", "content", "title.bigram", "content.bigram", "filename.ngram"]


def synonym_clause(query: str) -> dict[str, Any]:
    """:func:`query_clause` for the query as typed or written with the vocabulary's synonyms.

    Each form scores on its own; the query as typed is one of them, so its exact matches keep
    their rank (``docindex.index.vocabulary.query_variants``).
    """
    from docindex.index.vocabulary import query_variants

    variants = query_variants(query)
    if len(variants) == 1:
        return query_clause(query)
    return {"bool": {"should": [query_clause(v) for v in variants], "minimum_should_match": 1}}


def query_clause(query: str) -> dict[str, Any]:
    """The scoring query: word matches first, then character and file-name fragment matches."""
    # Every word of the query must appear (in the text fields, or as fragments of the file
    # name): file-server search is looking for a specific document, not the best partial match.
    words = {
        "multi_match": {
            "query": query,
            "fields": ["title^3", "filename^2", "content"],
            "type": "cross_fields",
            "operator": "and",
        }
    }
    characters = {
        "multi_match": {
            "query": query,
            "fields": ["title.bigram^3", "content.bigram"],
            "type": "cross_fields",
            "operator": "and",
            "boost": 0.5,
        }
    }
    name_fragment = {"match": {"filename.ngram": {"query": query, "minimum_should_match": "100%", "boost": 0.5}}}
    word_tier = {"constant_score": {"filter": words, "boost": WORD_MATCH_TIER}}
    should = [word_tier, words, characters, name_fragment]
    variants = variant_clause(query)
    if variants is not None:
        # the constant tier, and the phrases' own score only to order variant matches among
        # themselves: a tenth, so that it never reorders documents that match as typed
        should += [
            {"constant_score": {"filter": variants, "boost": VARIANT_MATCH_TIER}},
            scaled_variant_score(variants),
        ]
    return {"bool": {"should": should, "minimum_should_match": 1}}


def scaled_variant_score(variants: dict[str, Any]) -> dict[str, Any]:
    """The variant clause as a scoring clause worth a tenth of its BM25 score."""
    return {"bool": {"must": [variants], "boost": 0.1}}


def variant_clause(query: str) -> dict[str, Any] | None:
    """Every word of ``query`` in one of its spellings: its folded form as a phrase of the
    ``variants`` field (``docindex.text.variants``; a kana word in the other kana script — two kana
    as a word of the morphological fields —, a noun without its ending okurigana and a word without
    two kana of okurigana between kanji too), or, for a word without Japanese, as typed.

    None when no word has Japanese (the other clauses answer such a query alone).
    """
    from docindex.text.variants import (
        other_script,
        query_text,
        stem,
        two_kana_other_script,
        variant_text,
        without_okurigana,
    )

    clauses: list[dict[str, Any]] = []
    folded_any = False
    for word in query.split():
        # Every term of the word in one field. minimum_should_match rather than operator "and":
        # osmem-server reads "and" on the n-gram field as "any gram" (a file named 入社手続き案内
        # matched 出張のお金を返してもらう手続き), OpenSearch reads both as "every gram".
        as_typed = {"multi_match": {"query": word, "fields": _PLAIN_WORD_FIELDS, "minimum_should_match": "100%"}}
        folded = query_text(word)
        if folded:
            folded_any = True
            others = [query_text(other_script(word)), query_text(stem(word)), query_text(without_okurigana(word))]
            spelled = [{"match_phrase": {"variants": text}} for text in dict.fromkeys([folded, *others]) if text]
            if kana := two_kana_other_script(word):
                as_word: dict[str, Any] = {"query": kana, "fields": _KANA_WORD_FIELDS, "minimum_should_match": "100%"}
                spelled.append({"multi_match": as_word})
            clauses.append({"bool": {"should": [*spelled, as_typed], "minimum_should_match": 1}})
        elif len(word) > 1 and len(single := variant_text(word)) == 1:
            # a word that folds to one kanji (タマゴ → 卵): the bigrams that start with it
            folded_any = True
            clauses.append(
                {"bool": {"should": [{"prefix": {"variants": single}}, as_typed], "minimum_should_match": 1}}
            )
        else:
            clauses.append(as_typed)
    return {"bool": {"must": clauses}} if folded_any else None


def low_confidence_filter(below: int) -> dict[str, Any]:
    """Documents with an OCR'd page read at a mean word confidence below ``below`` (0-100)."""
    return {"range": {"ocr_confidence": {"lt": below}}}


def _filters(prefix: str | None, extension: str | None, bucket: str | None) -> list[dict[str, Any]]:
    filters: list[dict[str, Any]] = []
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    if extension:
        filters.append({"term": {"extension": extension.lower().lstrip(".")}})
    if bucket:
        filters.append({"term": {"bucket": bucket}})
    return filters


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
