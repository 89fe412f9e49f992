"""The answers' settings (docs/configuration.md, "Answers"): which answerer, its model, the refusal rule, the cache."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from docindex.core.settings import EnvSettings


class AnswerSettings(EnvSettings):
    """``ANSWERS`` and its figures; the search API's settings include them."""

    # extractive: the sentences of the readable passages that answer, quoted (no model); bedrock: Amazon
    # Bedrock's Converse API writes the answer from those passages, citing them; off: no answers (no box).
    answers: Literal["extractive", "bedrock", "off"] = Field("extractive", alias="ANSWERS")
    # The Bedrock model (or inference profile) ANSWERS=bedrock asks: the template's AnswerModelId.
    answer_model: str = Field("us.anthropic.claude-3-5-haiku-20241022-v1:0", alias="ANSWER_MODEL", min_length=1)
    answer_max_tokens: int = Field(600, alias="ANSWER_MAX_TOKENS", ge=64, le=4096)
    # Passages sent to Bedrock (each a document block): the best ones by the extractive measures.
    answer_passages: int = Field(6, alias="ANSWER_PASSAGES", ge=1, le=20)
    # The refusal rule (docindex.answer.refusal.AnswerRule; chosen by bench.meaning, docs/search-api.md).
    answer_min_coverage: float = Field(0.4, alias="ANSWER_MIN_COVERAGE", ge=0, le=1)
    answer_min_coverage_near: float = Field(0.3, alias="ANSWER_MIN_COVERAGE_NEAR", ge=0, le=1)
    answer_min_standout_alone: float = Field(0.06, alias="ANSWER_MIN_STANDOUT_ALONE", ge=0, le=1)
    answer_min_coverage_alone: float = Field(0.0, alias="ANSWER_MIN_COVERAGE_ALONE", ge=0, le=1)
    answer_min_lead_gap: float = Field(0.02, alias="ANSWER_MIN_LEAD_GAP", ge=0, le=1)
    answer_max_citations: int = Field(2, alias="ANSWER_MAX_CITATIONS", ge=1, le=5)
    # A warm function keeps answers this long, keyed on the caller's principals (0: no cache).
    answer_cache_seconds: float = Field(60.0, alias="ANSWER_CACHE_SECONDS", ge=0, le=3600)
    answer_cache_entries: int = Field(256, alias="ANSWER_CACHE_ENTRIES", ge=1, le=10_000)
