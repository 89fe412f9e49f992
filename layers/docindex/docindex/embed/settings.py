"""The embedder the settings name (``EMBEDDINGS`` and friends; docs/configuration.md), built once per process."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from docindex.core.settings import EmbeddingSettings
from docindex.embed import Embedder, EmbedderUnavailable, VectorSpec

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


def vector_spec(settings: EmbeddingSettings) -> VectorSpec | None:
    """The vector field an index needs for the configured embedder (without loading the model); None when off."""
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "bedrock":
        from docindex.embed.bedrock import dimension_of

        return VectorSpec(
            f"bedrock:{settings.embedding_model}",
            dimension_of(settings.embedding_model),
            encoding=settings.vector_encoding,
        )
    from docindex.embed.local import DIMENSION, MODEL_ID

    return VectorSpec(MODEL_ID, DIMENSION, encoding=settings.vector_encoding)
