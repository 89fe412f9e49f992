"""The passages an answer may be built from: the hybrid search's page-level passages, in one round trip,
with the caller's permission filter inside both legs.

The two legs of the search (docindex.index.hybrid) go to the cluster together in one ``_msearch``, each
limited by ``filters`` (the caller's permission filter and the request's folder) *inside* the query:

- **meaning**: the vector leg as the search runs it — the 20 files whose best passage is nearest the
  question, with that passage's vector (the crowding the acceptance rule weighs) — and each file's
  passages (whole sentences, cut page by page, at most ``EMBED_MAX_PASSAGES`` of them: what the worker
  embedded);
- **words**: the files that hold most of the question's words (any of them, not every one: a question is
  not a keyword search), each with its best matching pages (the nested ``pages``) and, for a file without
  pages, the best windows of its text — so a page far into a long file is read too.

Nothing is filtered afterwards: what the cluster does not return for these filters does not exist for the
answerer. The passages carry their text verbatim, with the page it is on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from docindex.answer.models import Document, Passage
from docindex.embed import Embedder
from docindex.extract.findings import ASSISTANT_INSTRUCTIONS
from docindex.index.hybrid import RETURNED, WINDOW, MeaningRule, VectorHit, accept, crowding, query_vector, search_both
from docindex.index.hybrid import standouts as standouts_of

# Files of the keyword leg read (each with its best pages or windows).
KEYWORD_FILES = 8
# A page's or a file's window around the question's words: characters either side of the matches.
WINDOW_CHARS = 320
WINDOWS_PER_FILE = 2
# What a file's summary and passages the answerer needs (no content: it can be megabytes); its ETag is the
# version a cached answer quoted (docindex.answer.cache).
SOURCE = ["bucket", "key", "filename", "title", "etag", "findings", "passages.text", "passages.page"]


@dataclass
class Retrieved:
    """What the cluster returned for one question and one caller: the files, in no particular order."""

    documents: dict[str, Document]
    nearest: list[VectorHit]
    # True when the vector leg ran (the index has vectors of the configured model and the cluster answered).
    by_meaning: bool

    def passages(self) -> list[Passage]:
        return [p for d in self.documents.values() for p in d.passages]


def question_query(forms: Sequence[str]) -> dict[str, Any]:
    """Files holding most of the question's words, in any form the vocabulary writes it: ``match`` queries
    (analyzed text: no query syntax reaches the cluster) on the text fields and their character pairs."""
    should: list[dict[str, Any]] = []
    for text in forms:
        should += [
            {"match": {"content": {"query": text, "minimum_should_match": "2<50%"}}},
            {"match": {"title": {"query": text, "minimum_should_match": "2<50%", "boost": 2.0}}},
            {"match": {"content.bigram": {"query": text, "minimum_should_match": "3<40%", "boost": 0.3}}},
        ]
    return {"bool": {"should": should, "minimum_should_match": 1}}


def keyword_body(question: str, filters: Sequence[dict[str, Any]], *, max_analyzer_offset: int) -> dict[str, Any]:
    """The words leg: the best ``KEYWORD_FILES`` files, each with its best pages and text windows."""
    from docindex.index.pages import pages_clause
    from docindex.index.query_parts import MARK_END, MARK_START, query_forms

    forms = query_forms(question)
    pages = pages_clause(
        forms, size=WINDOWS_PER_FILE, pre_tag=MARK_START, post_tag=MARK_END, fragment_size=WINDOW_CHARS
    )
    return {
        "size": KEYWORD_FILES,
        "track_total_hits": False,
        "query": {"bool": {"must": [question_query(forms)], "filter": [*filters, *([pages] if pages else [])]}},
        "_source": SOURCE,
        "highlight": {
            "max_analyzer_offset": max_analyzer_offset,
            "pre_tags": [MARK_START],
            "post_tags": [MARK_END],
            "fields": {"content": {"fragment_size": WINDOW_CHARS, "number_of_fragments": WINDOWS_PER_FILE}},
        },
    }


def retrieve(
    client: Any,
    index: str,
    question: str,
    *,
    filters: Sequence[dict[str, Any]],
    embedder: Embedder | None,
    rule: MeaningRule,
    max_analyzer_offset: int = 999_999,
) -> Retrieved:
    """The files ``filters`` let the caller read that are near ``question``, with their passages."""
    from docindex.index.hybrid import vector_body

    words = keyword_body(question, filters, max_analyzer_offset=max_analyzer_offset)
    vector = query_vector(client, index, question, embedder)
    nearest: list[VectorHit] | None = None
    if vector is None:
        keyword = client.search(index=index, body=words)
    else:
        leg = vector_body(vector, k=WINDOW, filters=filters, size=RETURNED, source=SOURCE, vectors=rule.crowding > 0)
        keyword, nearest = search_both(client, index, words, leg)
    documents: dict[str, Document] = {}
    for rank, hit in enumerate(keyword.get("hits", {}).get("hits", [])):
        document = _document(documents, hit["_id"], hit.get("_source") or {})
        document.keyword_rank = rank
        document.embedded = document.embedded or bool((hit.get("_source") or {}).get("passages"))
        document.passages.extend(_windows(document, hit))
    if nearest:
        # Near enough by meaning, whatever the words leg found (an answer is not a keyword search).
        crowd = crowding(nearest, rule.neighbours) if rule.crowding else None
        near = accept(nearest, rule=replace(rule, keyword_margin=0.0), keyword_total=0, query=question, crowd=crowd)
        offered = {hit.doc_id for hit in near}
        measured = standouts_of(nearest, rule=rule, query=question, crowd=crowd)
        for hit, standout in measured:
            document = _document(documents, hit.doc_id, hit.source)
            document.meaning_score = hit.score
            document.standout = standout
            document.offered = hit.doc_id in offered
            document.best_vector = hit.vector
            document.embedded = True
            document.passages.extend(_passages(document, hit))
    for document in documents.values():
        document.passages = _unique(document.passages)
    return Retrieved(documents, nearest or [], nearest is not None)


def _document(documents: dict[str, Document], doc_id: str, source: dict[str, Any]) -> Document:
    if doc_id not in documents:
        documents[doc_id] = Document(
            doc_id=doc_id,
            bucket=str(source.get("bucket") or ""),
            path=str(source.get("key") or ""),
            title=str(source.get("title") or ""),
            etag=str(source.get("etag") or ""),
            flagged=ASSISTANT_INSTRUCTIONS in (source.get("findings") or ()),
        )
    return documents[doc_id]


def _passages(document: Document, hit: VectorHit) -> list[Passage]:
    """The file's passages as the worker cut them (whole sentences of one page), its best one flagged."""
    found = []
    for order, entry in enumerate(hit.source.get("passages") or []):
        if not isinstance(entry, dict) or not entry.get("text"):
            continue
        text = str(entry["text"])
        page = entry.get("page")
        found.append(
            Passage(
                doc_id=document.doc_id,
                bucket=document.bucket,
                path=document.path,
                page=page if isinstance(page, int) and page > 0 else 1,
                text=text,
                source="meaning",
                best=text == hit.passage,
                order=order,
            )
        )
    if not found and hit.passage:
        found.append(Passage(document.doc_id, document.bucket, document.path, hit.page or 1, hit.passage, best=True))
    return found


def _windows(document: Document, hit: dict[str, Any]) -> list[Passage]:
    """What the words leg read of a file: its passages, its best pages' windows, or its text's windows."""
    from docindex.index.pages import page_hits
    from docindex.index.query_parts import MARK_END, MARK_START

    found: list[Passage] = []
    for order, entry in enumerate((hit.get("_source") or {}).get("passages") or []):
        if isinstance(entry, dict) and entry.get("text"):
            page = entry.get("page")
            found.append(
                Passage(
                    document.doc_id,
                    document.bucket,
                    document.path,
                    page if isinstance(page, int) and page > 0 else 1,
                    str(entry["text"]),
                    source="keyword",
                    order=order,
                )
            )
    # A window is cut by the highlighter, maybe mid-sentence: only where the file's passages (whole
    # sentences) do not reach — pages past them, or a file without passages (EMBEDDINGS=off).
    covered = {p.page for p in found}
    pages, _ = page_hits(hit, MARK_START)
    for page in pages:
        text = _unmarked(page.fragment, MARK_START, MARK_END)
        if text.strip() and page.number not in covered:
            found.append(
                Passage(document.doc_id, document.bucket, document.path, page.number, text, "keyword", order=1000)
            )
    if not pages and not found:
        for fragment in (hit.get("highlight") or {}).get("content") or []:
            text = _unmarked(fragment, MARK_START, MARK_END)
            if text.strip():
                found.append(Passage(document.doc_id, document.bucket, document.path, 1, text, "keyword", order=1000))
    return found


def _unmarked(fragment: str, start: str, end: str) -> str:
    return fragment.replace(start, "").replace(end, "")


def _unique(passages: list[Passage]) -> list[Passage]:
    """Each text once per page (both legs may bring the same passage), the vector leg's best kept flagged."""
    seen: dict[tuple[int, str], Passage] = {}
    for passage in passages:
        key = (passage.page, passage.text)
        if key not in seen or (passage.best and not seen[key].best):
            seen[key] = passage
    return list(seen.values())
