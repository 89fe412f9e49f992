"""A document's passages with their vectors: what the index stores in ``passages`` and the cache keeps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from docindex.embed import Embedder
from docindex.embed.chunks import passages


@dataclass(frozen=True)
class EmbeddedPassage:
    """One passage of a document and its vector (``text`` is kept for the hit's snippet)."""

    text: str
    start: int
    end: int
    vector: list[float]
    page: int | None = None

    def to_source(self) -> dict[str, Any]:
        """The nested object in the index document (and the content cache's copy)."""
        source = asdict(self)
        if self.page is None:
            del source["page"]
        return source

    @classmethod
    def from_source(cls, source: dict[str, Any]) -> EmbeddedPassage:
        return cls(
            text=str(source.get("text") or ""),
            start=int(source.get("start") or 0),
            end=int(source.get("end") or 0),
            vector=[float(x) for x in source.get("vector") or []],
            page=int(source["page"]) if isinstance(source.get("page"), int) else None,
        )


@dataclass(frozen=True)
class EmbeddedDocument:
    """The vectors of one document's text, named by the model that made them."""

    model_id: str
    passages: tuple[EmbeddedPassage, ...]

    def to_cache(self) -> dict[str, Any]:
        return {"model_id": self.model_id, "passages": [p.to_source() for p in self.passages]}

    @classmethod
    def from_cache(cls, data: dict[str, Any] | None) -> EmbeddedDocument | None:
        if not isinstance(data, dict) or not data.get("model_id"):
            return None
        return cls(str(data["model_id"]), tuple(EmbeddedPassage.from_source(p) for p in data.get("passages") or []))


def embed_document(
    embedder: Embedder,
    content: str,
    *,
    title: str | None = None,
    page_starts: Sequence[int] = (),
    max_passages: int,
    max_chars: int,
) -> EmbeddedDocument:
    """Split ``content`` into passages (at most ``max_passages``) and embed each.

    The first passage is embedded with the document's title (or file name) in front of it:
    a short passage says little on its own, and a Japanese office names its files for what
    they are (旅費精算規程.docx).
    """
    found = passages(content, max_chars=max_chars, max_passages=max_passages, page_starts=page_starts)
    if not found and title:
        texts = [title]
        vectors = embedder.passages(texts)
        return EmbeddedDocument(embedder.model_id, (EmbeddedPassage(title, 0, 0, vectors[0]),))
    texts = [p.text for p in found]
    if title and texts and title not in texts[0]:
        texts[0] = f"{title}\n{texts[0]}"
    vectors = embedder.passages(texts) if texts else []
    return EmbeddedDocument(
        embedder.model_id,
        tuple(
            EmbeddedPassage(text=p.text, start=p.start, end=p.end, vector=v, page=p.page)
            for p, v in zip(found, vectors, strict=True)
        ),
    )
