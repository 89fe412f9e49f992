"""Meaning search's vectors, made by the worker: after OCR, or for an embed job the indexer queued.

Embedding is the expensive part of meaning search (multilingual-e5-small takes 0.1-0.4 s of CPU
per passage, a hundred times the indexer's own work on a document), so the indexer never waits
for it: it writes the document, searchable by its words at once, and queues an ``embed`` job;
the worker fleet, which scales on its queue, adds the vectors at the next generation, the way it
adds OCR text. The vectors of some bytes are kept in the content cache beside their text, so a
re-sync, a rename or a copy embeds nothing. An embedder that fails leaves the document searchable
by its words (``EmbeddingsFailed``, logged); ``docindex reprocess --missing-vectors`` fills it in later.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from docindex.core.observability import Metric, MetricUnit, count, logger, measure
from docindex.embed import EmbedderUnavailable
from docindex.embed.document import EmbeddedDocument, embed_document
from docindex.ingest.cache import with_embeddings

if TYPE_CHECKING:
    from docindex.core.settings import EmbeddingSettings
    from docindex.embed import Embedder
    from docindex.ingest.cache import ContentCache


class Vectors:
    """Embeds documents' text (the cache first); one per worker, shared by its job threads."""

    def __init__(
        self, settings: EmbeddingSettings, cache: ContentCache, *, bedrock_client: Callable[[], Any] | None = None
    ) -> None:
        self.settings = settings
        self.cache = cache
        self._bedrock_client = bedrock_client
        self._embedder: Embedder | None = None
        self._loaded = False

    @property
    def enabled(self) -> bool:
        return self.settings.embeddings != "off"

    def embedder(self) -> Embedder | None:
        """The configured embedder, loaded on first use (None when off or it cannot load)."""
        if not self._loaded:
            from docindex.embed.settings import embedder_for

            try:
                self._embedder = embedder_for(self.settings, self._bedrock_client)
            except (EmbedderUnavailable, ValueError) as exc:
                logger.error("embedder not available: documents get no vectors", extra={"error": str(exc)[:300]})
                self._embedder = None
            self._loaded = True
        return self._embedder

    def embed(
        self,
        text: str | None,
        *,
        title: str | None,
        pages: Sequence[dict[str, Any]] = (),
        content_sha256: str | None = None,
    ) -> EmbeddedDocument | None:
        """The vectors of ``text``: from the cache when these bytes were embedded before; None without."""
        if not self.enabled or not (text or "").strip():
            return None
        embedder = self.embedder()
        if embedder is None:
            count(Metric.EMBEDDINGS_FAILED)
            return None
        entry = self.cache.get(content_sha256)
        cached = EmbeddedDocument.from_cache(entry.embeddings if entry is not None else None)
        if cached is not None and cached.model_id == embedder.model_id:
            logger.info("vectors of these bytes taken from the cache")
            return cached
        started = time.process_time()
        try:
            embedded = embed_document(
                embedder,
                text or "",
                title=title,
                pages=pages,
                max_passages=self.settings.embed_max_passages,
                max_chars=self.settings.embed_passage_chars,
            )
        except EmbedderUnavailable as exc:
            count(Metric.EMBEDDINGS_FAILED)
            logger.warning("document not embedded; searchable by its words", extra={"error": str(exc)[:300]})
            return None
        cpu = time.process_time() - started
        count(Metric.PASSAGES_EMBEDDED, len(embedded.passages))
        if embedded.passages:
            measure(Metric.EMBEDDING_SECONDS_PER_PASSAGE, cpu / len(embedded.passages), MetricUnit.Seconds)
        self.cache.put(content_sha256, with_embeddings(entry, embedded.to_cache()))
        return embedded
