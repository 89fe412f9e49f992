"""How the index keeps meaning search's vectors: the encoding of the ``knn_vector`` field, and ``_source``.

**Stored once.** A vector written as JSON numbers in ``_source`` (about 8 KB for 384 dimensions)
besides the vector field itself was most of an index document's size. The k-NN plugin's *derived
source* (``index.knn.derived_source.enabled``: a setting since OpenSearch 2.19, on by default for
indices created by 3.0 and later) keeps the vector out of the stored ``_source`` and puts it back from
the vector field whenever the document is read — a GET, a search, ``docindex reindex``'s copy, the
access map's re-stamp, the indexer's refresh of an unchanged file — so every path that rewrites a
document keeps its vectors and none stores them twice. docindex asks for it explicitly; a cluster
older than 2.19 refuses the setting and gets the index without it (vectors kept in ``_source`` as
before: ``docindex analysis validate --stack`` says so). Excluding the vectors from ``_source``
instead would lose them on every one of those rewrites, or make each of them fetch the vectors back
from the content cache — whose entries expire (``ContentCacheDays``) and are keyed by the extractor
version, so an upgrade would silently drop every document's vectors.

**Encoding.** What the HNSW graph compares, per vector (d dimensions, m = 16 links; memory is
OpenSearch's estimate ``1.1 x (bytes per vector + 8 x m)``):

| encoding | mapping | memory bytes | needs |
| --- | --- | --- | --- |
| ``fp32`` | Lucene HNSW | 4d | any k-NN cluster |
| ``fp16`` | Faiss HNSW, ``encoder: sq, type: fp16`` | 2d | 2.13+ (Faiss filters, cosine: 2.19+) |
| ``int7`` | Lucene HNSW, ``encoder: sq`` (7-bit, quantiles per segment) | d | 2.16+ |
| ``bq1``, ``bq2``, ``bq4`` | ``mode: on_disk``, 32x, 16x, 8x (Faiss binary codes, rescored) | d/8 .. d/2 | 2.17+ |

``bench.vector_encodings`` measures each one's recall@10 against exact search on the meaning
bench's passages (``make bench``); the default is the cheapest whose loss stays within the bench's
noise (docs/meaning-search.md). A cluster that refuses the chosen encoding gets ``fp32``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

HNSW_M = 16
EF_CONSTRUCTION = 128


@dataclass(frozen=True)
class Encoding:
    name: str
    # bits per dimension the graph compares
    bits: float
    # bits per dimension on disk (raw vectors kept for rescoring or derived source, plus codes)
    disk_bits: float
    description: str

    def memory_bytes(self, dimension: int, m: int = HNSW_M) -> float:
        """OpenSearch's estimate of one vector's memory in the HNSW graph: 1.1 x (vector + 8 x m)."""
        return 1.1 * (dimension * self.bits / 8 + 8 * m)

    def disk_bytes(self, dimension: int, m: int = HNSW_M) -> float:
        """One vector on disk: the encoded and/or raw vector and the graph's links."""
        return dimension * self.disk_bits / 8 + 8 * m

    def field(self, dimension: int) -> dict[str, Any]:
        """The ``knn_vector`` mapping of this encoding (cosine similarity: the vectors have length 1)."""
        parameters: dict[str, Any] = {"m": HNSW_M, "ef_construction": EF_CONSTRUCTION}
        if self.name == "fp32":
            method = {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil", "parameters": parameters}
            return {"type": "knn_vector", "dimension": dimension, "method": method}
        if self.name == "int7":
            parameters["encoder"] = {"name": "sq"}
            method = {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil", "parameters": parameters}
            return {"type": "knn_vector", "dimension": dimension, "method": method}
        if self.name == "fp16":
            parameters["encoder"] = {"name": "sq", "parameters": {"type": "fp16"}}
            method = {"name": "hnsw", "engine": "faiss", "space_type": "cosinesimil", "parameters": parameters}
            return {"type": "knn_vector", "dimension": dimension, "method": method}
        compression = {"bq1": "32x", "bq2": "16x", "bq4": "8x"}[self.name]
        return {
            "type": "knn_vector",
            "dimension": dimension,
            "space_type": "cosinesimil",
            "mode": "on_disk",
            "compression_level": compression,
        }


ENCODINGS: dict[str, Encoding] = {
    "fp32": Encoding("fp32", 32, 32, "float32 (Lucene)"),
    "fp16": Encoding("fp16", 16, 16, "float16 scalar quantization (Faiss)"),
    "int7": Encoding("int7", 8, 40, "7-bit scalar quantization (Lucene: raw vectors kept beside the codes)"),
    "bq4": Encoding("bq4", 4, 36, "4-bit binary quantization, rescored from disk (on_disk 8x)"),
    "bq2": Encoding("bq2", 2, 34, "2-bit binary quantization, rescored from disk (on_disk 16x)"),
    "bq1": Encoding("bq1", 1, 33, "1-bit binary quantization, rescored from disk (on_disk 32x)"),
}
# The cheapest encoding whose recall on the meaning bench stays within its noise (bench.vector_encodings).
DEFAULT_ENCODING = "bq4"
# What a cluster that refuses the chosen encoding gets.
FALLBACK_ENCODING = "fp32"
DERIVED_SOURCE_SETTING = "knn.derived_source.enabled"


def encoding(name: str | None) -> Encoding:
    """The encoding called ``name`` (the default for None); ValueError for an unknown one."""
    chosen = name or DEFAULT_ENCODING
    if chosen not in ENCODINGS:
        raise ValueError(f"VECTOR_ENCODING must be one of {', '.join(ENCODINGS)}, not {chosen!r}")
    return ENCODINGS[chosen]
