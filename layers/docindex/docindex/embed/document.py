"""A document's passages with their vectors: what the index stores in ``passages`` and the cache keeps."""

from __future__ import annotations

import base64
import struct
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from docindex.embed import Embedder
from docindex.embed.chunks import Passage, passages


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
        """A compact copy for the content cache: each vector as base64 of little-endian float32."""
        passages = []
        for passage in self.passages:
            entry = passage.to_source()
            entry["vector"] = base64.b64encode(struct.pack(f"<{len(passage.vector)}f", *passage.vector)).decode()
            passages.append(entry)
        return {"model_id": self.model_id, "passages": passages}

    @classmethod
    def from_cache(cls, data: dict[str, Any] | None) -> EmbeddedDocument | None:
        """What ``to_cache`` kept; None for anything else (a miss: the document is embedded again)."""
        if not isinstance(data, dict) or not data.get("model_id"):
            return None
        passages = []
        try:
            for entry in data.get("passages") or []:
                packed = base64.b64decode(entry["vector"])
                vector = list(struct.unpack(f"<{len(packed) // 4}f", packed))
                passages.append(EmbeddedPassage.from_source({**entry, "vector": vector}))
        except (KeyError, TypeError, ValueError, struct.error):
            return None
        return cls(str(data["model_id"]), tuple(passages))


def embed_document(
    embedder: Embedder,
    content: str,
    *,
    title: str | None = None,
    page_starts: Sequence[int] = (),
    pages: Sequence[dict[str, Any]] = (),
    max_passages: int,
    max_chars: int,
) -> EmbeddedDocument:
    """Split ``content`` into passages (at most ``max_passages``) and embed each.

    ``pages``: the document's pages as the index keeps them (``n`` and ``text``): passages are cut
    page by page and carry the page's number (their offsets are then within the page's text).
    The first passage is embedded with the document's title (or file name) in front of it: a
    short passage says little on its own, and a Japanese office names its files for what they
    are (旅費精算規程.docx).
    """
    if pages:
        found: list[Passage] = []
        for page in pages:
            if len(found) >= max_passages:
                break
            number = page.get("n") if isinstance(page.get("n"), int) else None
            for p in passages(str(page.get("text") or ""), max_chars=max_chars, max_passages=max_passages - len(found)):
                found.append(Passage(p.text, p.start, p.end, number))
    else:
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
