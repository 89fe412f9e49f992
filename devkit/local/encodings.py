"""What a vector field in an encoding keeps of a vector, for the local k-NN stand-in (devkit.local.knn).

A cluster's ``knn_vector`` field in ``int7`` or ``fp16`` (docindex.index.encodings) compares encoded
vectors; osmem-server keeps the floats as written. The stand-in scores through a
:class:`VectorEncoder` so that a local run, and the meaning bench, rank as the engine would:

- ``fp16``: each value rounded to half precision (the query stays float32, as Faiss compares it);
- ``int7``: Lucene's scalar quantizer, 7 bits between the quantiles of the confidence interval
  ``max(0.9, 1 - 1/(1 + d))`` of the vectors it is given (Lucene takes them per segment), the
  query quantized alike.

The binary codes of ``mode: on_disk`` are rescored at full precision: their local stand-in is the
float32 one (bench.vector_encodings measures what their first pass loses).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class VectorEncoder:
    name: str
    low: float = 0.0
    high: float = 0.0

    @classmethod
    def of(cls, name: str, vectors: Sequence[Sequence[float]] = ()) -> VectorEncoder | None:
        """The encoder of ``name`` (None for float32 and the rescored binary codes); ``vectors`` give
        ``int7`` its quantiles."""
        if name == "int7":
            values = sorted(x for vector in vectors for x in vector)
            if not values:
                raise ValueError("int7 needs the vectors its quantiles come from")
            dimension = len(vectors[0])
            tail = (1 - max(0.9, 1 - 1 / (1 + dimension))) / 2
            return cls(name, values[int(tail * (len(values) - 1))], values[int((1 - tail) * (len(values) - 1))])
        if name == "fp16":
            return cls(name)
        return None

    def stored(self, vector: Sequence[float]) -> list[float]:
        if self.name == "fp16":
            return [struct.unpack("<e", struct.pack("<e", x))[0] for x in vector]
        span = (self.high - self.low) or 1.0
        return [self.low + round(min(1.0, max(0.0, (x - self.low) / span)) * 127) / 127 * span for x in vector]

    def query(self, vector: Sequence[float]) -> list[float]:
        return self.stored(vector) if self.name == "int7" else list(vector)
