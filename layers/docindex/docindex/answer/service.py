"""One answer for one caller: the passages they may read, the answerer, the cache, a log line without text.

The search API's ``GET /answer`` and ``docindex ask`` both call :meth:`AnswerService.answer`. The passages come
from one permission-filtered query (docindex.answer.retrieval): the answerer — extractive or Bedrock — is handed
nothing else, so it cannot quote, cite or be instructed by a file the caller may not read. Logs keep counts and
timings, never the question or a passage.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from docindex.answer.cache import AnswerCache, Kept, cache_key, still_readable
from docindex.answer.models import Answer, AnsweredBy, AnswerRequest, Document
from docindex.answer.refusal import AnswerRule
from docindex.answer.retrieval import Retrieved, retrieve
from docindex.answer.settings import AnswerSettings
from docindex.core.observability import logger
from docindex.embed import Embedder
from docindex.index.hybrid import MeaningRule

# The cache key's principals for the operator's CLI (no permission filter: it reads the whole index).
OPERATOR = ("operator:whole-index",)


class Answerer(Protocol):
    """Writes an answer to a question from readable files' passages, or refuses."""

    name: AnsweredBy

    def answer(self, question: str, documents: list[Document]) -> Answer: ...


class ExtractiveAnswerer:
    """``ANSWERS=extractive`` (docindex.answer.extractive)."""

    name: AnsweredBy = "extractive"

    def __init__(self, rule: AnswerRule) -> None:
        self.rule = rule

    def answer(self, question: str, documents: list[Document]) -> Answer:
        from docindex.answer.extractive import answer

        return answer(question, documents, self.rule)


def answer_filters(principals: Sequence[str] | None, prefix: str) -> list[dict[str, Any]]:
    """What retrieval is limited to: the caller's permission filter (None: the operator, no filter) and the folder."""
    from docindex.index.query_parts import permission_filter

    filters: list[dict[str, Any]] = []
    if principals is not None:
        filters.append(permission_filter(list(principals)))
    if prefix:
        filters.append({"prefix": {"key": prefix}})
    return filters


class AnswerService:
    """Answers for callers; clients and the answerer passed in."""

    def __init__(
        self,
        settings: AnswerSettings,
        *,
        opensearch: Any,
        index: str,
        embedder: Embedder | None,
        meaning_rule: MeaningRule,
        answerer: Answerer,
        max_analyzer_offset: int = 999_999,
    ) -> None:
        self.settings = settings
        self.opensearch = opensearch
        self.index = index
        self.embedder = embedder
        self.meaning_rule = meaning_rule
        self.answerer = answerer
        self.max_analyzer_offset = max_analyzer_offset
        self.cache = AnswerCache(seconds=settings.answer_cache_seconds, entries=settings.answer_cache_entries)

    def retrieve(self, request: AnswerRequest, principals: Sequence[str] | None) -> Retrieved:
        """The files near the question that ``principals`` may read (None: every file), with their passages."""
        return retrieve(
            self.opensearch,
            self.index,
            request.q,
            filters=answer_filters(principals, request.prefix),
            embedder=self.embedder,
            rule=self.meaning_rule,
            max_analyzer_offset=self.max_analyzer_offset,
        )

    def labelled(self, found: Answer, principals: Sequence[str] | None) -> Answer:
        """``found`` with each citation named as a person names the place (シート 備考, スライド 2, 本文): the cited
        page's label as the index keeps it, read under the caller's permission filter; 本文 for a file without
        pages."""
        if not found.citations:
            return found
        from dataclasses import replace

        labels: dict[tuple[str, int], str] = {}
        for citation in found.citations:
            if (citation.doc_id, citation.page) not in labels:
                labels[citation.doc_id, citation.page] = self._label(citation.doc_id, citation.page, principals)
        cited = tuple(replace(c, label=labels[c.doc_id, c.page]) for c in found.citations)
        return replace(found, citations=cited)

    def _label(self, doc_id: str, page: int, principals: Sequence[str] | None) -> str:
        pages = {
            "nested": {
                "path": "pages",
                "query": {"term": {"pages.n": page}},
                "inner_hits": {"name": "page", "size": 1, "_source": ["pages.label", "pages.kind", "pages.n"]},
            }
        }
        body = {
            "size": 1,
            "track_total_hits": False,
            "query": {
                "bool": {
                    "filter": [{"ids": {"values": [doc_id]}}, *answer_filters(principals, "")],
                    "should": [pages],
                }
            },
            "_source": ["page_count"],
        }
        hits = self.opensearch.search(index=self.index, body=body).get("hits", {}).get("hits", [])
        inner = ((hits[0].get("inner_hits") or {}).get("page") or {}).get("hits", {}).get("hits", []) if hits else []
        for entry in inner:
            source = entry.get("_source") or {}
            found = source.get("pages", source) if isinstance(source, dict) else {}
            if isinstance(found, dict) and found.get("label"):
                return str(found["label"])
        return "本文" if page == 1 else f"p. {page}"

    def answer(self, request: AnswerRequest, principals: Sequence[str] | None) -> Answer:
        """The answer to ``request.q`` from the files ``principals`` may read (None: the operator, every file)."""
        key = cache_key(self.index, self.answerer.name, request.q, request.prefix, principals or OPERATOR)
        started = time.perf_counter()
        kept = self.cache.get(key)
        stale = kept is not None and not still_readable(
            self.opensearch, self.index, kept, answer_filters(principals, request.prefix)
        )
        retrieved: Retrieved | None = None
        if kept is None or stale:
            retrieved = self.retrieve(request, principals)
            found = self.labelled(self.answerer.answer(request.q, list(retrieved.documents.values())), principals)
            etags = {doc_id: document.etag for doc_id, document in retrieved.documents.items()}
            self.cache.put(key, Kept.of(found, etags))
        else:
            found = kept.answer
        logger.info(
            "answer",
            extra={
                "question_chars": len(request.q),
                "prefix": bool(request.prefix),
                "answered_by": found.answered_by,
                "no_answer": found.no_answer,
                "reason": found.reason,
                "citations": len(found.citations),
                "files_read": len(retrieved.documents) if retrieved is not None else None,
                "passages_read": len(retrieved.passages()) if retrieved is not None else None,
                "by_meaning": retrieved.by_meaning if retrieved is not None else None,
                "cached": kept is not None and not stale,
                "cache_stale": stale,
                **{f"usage_{name}": value for name, value in found.usage.items()},
                "ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return found


def build_answerer(settings: AnswerSettings, *, bedrock_client: Any = None) -> Answerer | None:
    """The answerer ``ANSWERS`` names (None: off). ``bedrock_client``: a callable building the
    ``bedrock-runtime`` client (only called for ``bedrock``)."""
    rule = AnswerRule.from_settings(settings)
    if settings.answers == "off":
        return None
    if settings.answers == "bedrock":
        from docindex.answer.bedrock import BedrockAnswerer

        if bedrock_client is None:
            raise ValueError("ANSWERS=bedrock needs a bedrock-runtime client")
        return BedrockAnswerer(
            bedrock_client(),
            settings.answer_model,
            rule=rule,
            passages=settings.answer_passages,
            max_tokens=settings.answer_max_tokens,
        )
    return ExtractiveAnswerer(rule)


def answer_response(
    answers: AnswerService | None, params: dict[str, str], caller: Callable[[], Any]
) -> tuple[int, dict[str, Any]]:
    """``GET /answer``'s status and body: 404 when answers are off, 400 for parameters out of bounds, else the
    answer for ``caller()`` (the verified caller: ``Unauthenticated`` without one, as every route)."""
    from pydantic import ValidationError

    if answers is None:
        return 404, {"message": "not found"}
    try:
        request = AnswerRequest.model_validate(params)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'query'}: {e['msg']}" for e in exc.errors()]
        return 400, {"message": "invalid parameters", "problems": problems}
    return 200, answers.answer(request, caller().principals).to_json()
