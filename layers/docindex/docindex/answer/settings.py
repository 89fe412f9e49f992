"""The answers' settings (docs/configuration.md, "Answers"): which answerer, its model, the refusal rule, the cache."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from docindex.core.settings import EnvSettings

# Bedrock's regional endpoint answers a TCP+TLS handshake in milliseconds: 2 s is a network that is down.
CONVERSE_CONNECT_TIMEOUT = 2.0


class AnswerSettings(EnvSettings):
    """``ANSWERS`` and its figures; the search API's settings include them."""

    # extractive: the sentences of the readable passages that answer, quoted (no model); bedrock: Amazon
    # Bedrock's Converse API writes the answer from those passages, citing them; off: no answers (no box).
    answers: Literal["extractive", "bedrock", "off"] = Field("extractive", alias="ANSWERS")
    # The Bedrock model (or inference profile) ANSWERS=bedrock asks: the template's AnswerModelId.
    answer_model: str = Field("us.anthropic.claude-3-5-haiku-20241022-v1:0", alias="ANSWER_MODEL", min_length=1)
    # What the model may write: a few sentences (bench.answers: ~250 tokens a answer) - and what its read timeout
    # must cover (Haiku and Nova Lite write 60-200 tokens a second: 400 tokens in 2-7 s).
    answer_max_tokens: int = Field(400, alias="ANSWER_MAX_TOKENS", ge=64, le=4096)
    # The Converse call's bounds, inside an API request (API Gateway's HTTP API gives up at 30 s; the search
    # function's timeout with ANSWERS=bedrock is 29 s): botocore's standard retries at most this many attempts
    # (the first included: one retry, for a throttle or a 5xx), each waiting at most the read timeout for the
    # model's whole response (Converse sends nothing before it is written) - worst case
    # attempts x (connect + read) + 1 s of backoff = 25 s with the defaults (docs/search-api.md).
    answer_read_timeout_seconds: float = Field(10.0, alias="ANSWER_READ_TIMEOUT_SECONDS", gt=0, le=25)
    answer_max_attempts: int = Field(2, alias="ANSWER_MAX_ATTEMPTS", ge=1, le=3)
    # Passages sent to Bedrock (each a document block): the best ones by the extractive measures.
    answer_passages: int = Field(6, alias="ANSWER_PASSAGES", ge=1, le=20)
    # The refusal rule (docindex.answer.refusal.AnswerRule; chosen by bench.meaning, docs/search-api.md).
    answer_min_coverage: float = Field(0.4, alias="ANSWER_MIN_COVERAGE", ge=0, le=1)
    answer_min_coverage_near: float = Field(0.3, alias="ANSWER_MIN_COVERAGE_NEAR", ge=0, le=1)
    answer_min_standout_alone: float = Field(0.06, alias="ANSWER_MIN_STANDOUT_ALONE", ge=0, le=1)
    answer_min_coverage_alone: float = Field(0.0, alias="ANSWER_MIN_COVERAGE_ALONE", ge=0, le=1)
    answer_min_lead_gap: float = Field(0.025, alias="ANSWER_MIN_LEAD_GAP", ge=0, le=1)
    # The cited file's own nearness by meaning (its best passage's cosine with the question, multilingual-e5-small's
    # scale; 0: none): a sentence with the question's words in a file about something else is no answer.
    answer_min_score: float = Field(0.91, alias="ANSWER_MIN_SCORE", ge=0, le=1)
    answer_max_citations: int = Field(1, alias="ANSWER_MAX_CITATIONS", ge=1, le=5)
    # A warm function keeps answers this long, keyed on the caller's principals (0: no cache).
    answer_cache_seconds: float = Field(60.0, alias="ANSWER_CACHE_SECONDS", ge=0, le=3600)
    answer_cache_entries: int = Field(256, alias="ANSWER_CACHE_ENTRIES", ge=1, le=10_000)

    def converse_bounds(self) -> dict[str, Any]:
        """The ``bedrock-runtime`` client's retry bounds for Converse (``AwsClients.client``'s keywords)."""
        return {
            "total_attempts": self.answer_max_attempts,
            "read_timeout": self.answer_read_timeout_seconds,
            "connect_timeout": CONVERSE_CONNECT_TIMEOUT,
        }

    def converse_worst_seconds(self) -> float:
        """The longest a Converse call can take with these bounds: every attempt connecting and reading to its
        timeout, and botocore's standard backoff between them (at most 1 s, 2 s: a throttle's ``rand() x 2^i``)."""
        backoff = sum(min(2.0**i, 20.0) for i in range(self.answer_max_attempts - 1))
        return self.answer_max_attempts * (CONVERSE_CONNECT_TIMEOUT + self.answer_read_timeout_seconds) + backoff
