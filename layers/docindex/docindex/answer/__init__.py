"""Answers to questions, with the file and page each comes from — only from files the caller may read.

``GET /answer`` on the search API and ``docindex ask`` (docs/search-api.md, "Answers"): the hybrid search's
page-level passages of the files the caller's permission filter lets through (``retrieval``), an answerer —
``extractive`` (the sentences that answer, quoted: ``extractive``) or ``bedrock`` (Amazon Bedrock's Converse
API with citations: ``bedrock``) — the refusal rule (``refusal``), answers cached per caller (``cache``), and
the service tying them together (``service``). Importing the package loads nothing heavy.
"""

from __future__ import annotations

from docindex.answer.models import Answer, AnswerRequest, Citation

__all__ = ["Answer", "AnswerRequest", "Citation"]
