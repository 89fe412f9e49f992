"""What flows through an answer: the request, the passages an answerer may read, and the answer with its citations.

The JSON an answer becomes is docs/search-api.md's ("Answers"): ``answer`` (null when refused),
``no_answer``, ``answered_by`` and ``citations`` (``id``, ``path``, ``page``, ``quote``), every quote text
of the cited file's page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

AnsweredBy = Literal["extractive", "bedrock"]


class AnswerRequest(BaseModel):
    """GET /answer's query parameters (and ``docindex ask``'s): the same bounds as ``/search``'s."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    q: str = Field(..., min_length=1, max_length=256)
    prefix: str = Field(default="", max_length=1024)

    @field_validator("q", "prefix")
    @classmethod
    def _text(cls, value: str) -> str:
        from docindex.index.query_parts import has_control_characters

        if has_control_characters(value):
            raise ValueError("must not contain control characters")
        return value.strip()

    @field_validator("q")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value


@dataclass(frozen=True)
class Passage:
    """A piece of a file the caller may read, as retrieval found it: whole sentences of one page.

    ``text`` is verbatim text of page ``page`` of the file (1 for a file without pages); ``source``
    says which leg found it (``meaning``: the file's passages, ``keyword``: a page or content window
    around the question's words); ``best``: the passage the vector leg scored the file by.
    """

    doc_id: str
    bucket: str
    path: str
    page: int
    text: str
    source: Literal["meaning", "keyword"] = "meaning"
    best: bool = False
    order: int = 0  # the passage's place in its file (0 first)


@dataclass
class Document:
    """One readable file the answerer considers, with what each leg said of it."""

    doc_id: str
    bucket: str
    path: str
    title: str = ""
    passages: list[Passage] = field(default_factory=list)
    # The indexed version's ETag (what a cached answer's quotes were read from).
    etag: str = ""
    # Whether the file has passages with vectors (embedded by the worker): only such a file can be near by meaning;
    # one not embedded yet (or too large to embed) is judged by its words alone.
    embedded: bool = False
    # The vector leg: the file's score (its best passage's), its rank after crowding and how far it stands
    # out from the crowd of nearest files (MeaningRule's standout), whether the rule offers it.
    meaning_score: float | None = None
    standout: float | None = None
    offered: bool = False
    # The keyword leg: its rank among the files holding the question's words (0 best), None when absent.
    keyword_rank: int | None = None
    best_vector: tuple[float, ...] = field(default=(), repr=False)
    # Flagged at indexing time as carrying instructions aimed at an assistant (index field ``findings``):
    # never the only source of an answer (docindex.answer.extractive.compose).
    flagged: bool = False

    @property
    def name(self) -> str:
        """The file's name without its extension, and its title: what the file says it is about."""
        stem = self.path.rsplit("/", 1)[-1]
        stem = stem.rsplit(".", 1)[0] if "." in stem else stem
        return f"{stem} {self.title}" if self.title and self.title not in stem else stem


@dataclass(frozen=True)
class Citation:
    """A source of the answer: the file, its page, and the quote (text of that page)."""

    doc_id: str
    path: str
    page: int
    quote: str
    # How a person names the place cited: p. 3, シート 備考, スライド 2, 添付 見積.pdf, or 本文 for a file without
    # pages (docindex.extract.base.PageText.label); set by the service from the index.
    label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.doc_id,
            "path": self.path,
            "page": self.page,
            "label": self.label or f"p. {self.page}",
            "quote": self.quote,
        }


@dataclass(frozen=True)
class Answer:
    """An answer with its citations, or a refusal (``answer`` None, no citation)."""

    answer: str | None
    citations: tuple[Citation, ...] = ()
    answered_by: AnsweredBy = "extractive"
    # Why it was refused (a code, never text of a file): "no_passage", "not_near_enough", "kind_not_found",
    # "focus_not_found", "flagged_file", "model_refused", "no_valid_citation".
    reason: str | None = None
    # What the answerer spent (Bedrock: one request, its tokens); no text.
    usage: dict[str, int] = field(default_factory=dict)

    @property
    def no_answer(self) -> bool:
        return self.answer is None

    @classmethod
    def refused(cls, answered_by: AnsweredBy, reason: str, usage: dict[str, int] | None = None) -> Answer:
        return cls(None, (), answered_by, reason, dict(usage or {}))

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "answer": self.answer,
            "no_answer": self.no_answer,
            "answered_by": self.answered_by,
            "citations": [c.to_json() for c in self.citations],
        }
        if self.reason:
            body["reason"] = self.reason
        return body
