"""``make bench``: how each vector encoding keeps the vector leg's answers, and what it costs (issue 36).

    .venv/bin/python -m bench.vector_encodings [--docs 2000] [--json]

The meaning bench's documents (``bench.meaning``: 91 answers and near misses, embedded by the real
model; the vectors are cached under ``bench/corpus/``) and its 98 queries. For each encoding of
``docindex.index.encodings`` the passages (and, where the engine does, the query) are encoded as the
engine encodes them, and the vector leg is run exactly over them: documents ranked by their best
passage, as the nested ``knn`` query ranks them. Against the same leg on the raw float32 vectors:

- **recall@10**: of the exact leg's 10 best documents, how many the encoded leg also returns in its 10;
- the **answer's rank** in the leg: R@3 and MRR of the file that answers each query;
- **bytes per vector**: in memory (OpenSearch's estimate ``1.1 x (vector bytes + 8 m)``, what decides
  the data nodes' size) and on disk.

How the engine encodes (what is simulated here, in NumPy): ``fp16`` rounds to half precision; ``int7``
is Lucene's scalar quantizer (7 bits between the quantiles of the confidence interval
``max(0.9, 1 - 1/(1 + d))``, the query quantized alike); ``byte`` is the client-side 8-bit vector
(``data_type: byte``, both sides scaled by the largest magnitude); ``bq1/bq2/bq4`` are the Faiss binary
codes of ``mode: on_disk`` (per-dimension thresholds at the mean, or at quantiles for 2 and 4 bits;
the query encoded alike, Hamming distance), then the best ``max(100, oversample x k)`` passages
rescored with the full-precision vectors (oversample 3, 2, 2 for 32x, 16x, 8x: the defaults), k the
leg's window (100). HNSW's own approximation is not in these figures (the leg here searches exactly):
they isolate what the encoding loses.

The default encoding (``docindex.index.encodings.DEFAULT_ENCODING``) is the cheapest in memory whose
recall@10 stays at or above ``1 - NOISE`` and whose R@3 and MRR stay within ``NOISE`` of float32:
one query of the 98 moving is about 0.01.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
NOISE = 0.02
WINDOW = 100
OVERSAMPLE = {"bq1": 3.0, "bq2": 2.0, "bq4": 2.0}


def _quantizers(matrix: Any) -> dict[str, Any]:
    """encoding -> (encode passages, encode a query) for the passages ``matrix`` (float32, n x d)."""
    import numpy as np

    dimension = matrix.shape[1]
    confidence = max(0.9, 1 - 1 / (1 + dimension))
    low, high = np.quantile(matrix, [(1 - confidence) / 2, 1 - (1 - confidence) / 2])

    def int7(x: Any) -> Any:
        q = np.round(np.clip((x - low) / (high - low), 0, 1) * 127)
        return (low + q / 127 * (high - low)).astype(np.float32)

    scale = float(np.abs(matrix).max())

    def byte(x: Any) -> Any:
        return (np.clip(np.round(x / scale * 127), -128, 127) / 127 * scale).astype(np.float32)

    def fp16(x: Any) -> Any:
        return x.astype(np.float16).astype(np.float32)

    coders: dict[str, Any] = {
        "fp32": (lambda x: x, lambda q: q),
        "fp16": (fp16, lambda q: q),
        "int7": (int7, int7),
        "byte": (byte, byte),
    }
    for name, bits in (("bq1", 1), ("bq2", 2), ("bq4", 4)):
        if bits == 1:
            thresholds = matrix.mean(axis=0, keepdims=True)[None, ...]
        else:
            levels = [(i + 1) / (2**bits) for i in range(2**bits - 1)]
            thresholds = np.quantile(matrix, levels, axis=0)[:, None, :]

        def code(x: Any, thresholds: Any = thresholds) -> Any:
            # thermometer code: how many thresholds each value passes (0 .. 2^bits - 1) per dimension
            return (np.atleast_2d(x)[None, ...] > thresholds).sum(axis=0).astype(np.int16)

        coders[name] = (code, code)
    return coders


def leg(  # noqa: PLR0917 - the leg of one encoding on one query
    name: str, coders: dict[str, Any], raw: Any, encoded: Any, owners: Any, query: Any, *, k: int = WINDOW
) -> list[int]:
    """The vector leg's documents (by their best passage), best first, for one query vector."""
    import numpy as np

    if name.startswith("bq"):
        distance = np.abs(encoded - coders[name][1](query)).sum(axis=1)
        candidates = np.argsort(distance, kind="stable")[: max(100, int(OVERSAMPLE[name] * k))]
        scores = np.full(raw.shape[0], -np.inf, dtype=np.float32)
        scores[candidates] = raw[candidates] @ query  # rescored at full precision
    else:
        scores = encoded @ coders[name][1](query)
    best: dict[int, float] = {}
    for passage in np.argsort(-scores, kind="stable"):
        if not np.isfinite(scores[passage]):
            break
        owner = int(owners[passage])
        if owner not in best:
            best[owner] = float(scores[passage])
            if len(best) == k:
                break
    return list(best)


def measure(docs: int) -> dict[str, Any]:
    import numpy as np

    from bench.meaning import CACHE, VectorCache, corpus, embed_corpus
    from bench.meaning_corpus import QUERIES
    from docindex.embed.settings import embedder_for
    from docindex.index.encodings import ENCODINGS, HNSW_M

    documents = corpus(docs)
    embedded, _ = embed_corpus(documents, VectorCache(CACHE))
    keys = [key for key, _ in documents]
    vectors, owners = [], []
    for number, key in enumerate(keys):
        for passage in embedded[key].passages:
            vectors.append(passage.vector)
            owners.append(number)
    raw = np.asarray(vectors, dtype=np.float32)
    owners_array = np.asarray(owners)
    coders = _quantizers(raw)
    from bench.meaning import _settings

    embedder = embedder_for(_settings())
    assert embedder is not None
    queries = [(np.asarray(embedder.query(q.text), dtype=np.float32), keys.index(q.expected)) for q in QUERIES]
    exact = [leg("fp32", coders, raw, raw, owners_array, q) for q, _ in queries]
    dimension = raw.shape[1]
    rows: dict[str, Any] = {}
    for name in ("fp32", "fp16", "int7", "byte", "bq4", "bq2", "bq1"):
        encoded = coders[name][0](raw)
        ranked = [leg(name, coders, raw, encoded, owners_array, q) for q, _ in queries]
        recall = float(np.mean([len(set(r[:10]) & set(e[:10])) / 10 for r, e in zip(ranked, exact, strict=True)]))
        ranks = [
            r.index(answer) + 1 if answer in r[:10] else None for r, (_, answer) in zip(ranked, queries, strict=True)
        ]
        bits = {"byte": 8, **{n: e.bits for n, e in ENCODINGS.items()}}[name]
        disk_bits = {"byte": 8, **{n: e.disk_bits for n, e in ENCODINGS.items()}}[name]
        rows[name] = {
            "recall_at_10": round(recall, 4),
            "leg_recall_at_3": round(sum(1 for r in ranks if r and r <= 3) / len(ranks), 3),
            "leg_mrr": round(sum(1 / r for r in ranks if r) / len(ranks), 3),
            "memory_bytes_per_vector": round(1.1 * (dimension * bits / 8 + 8 * HNSW_M)),
            "disk_bytes_per_vector": round(dimension * disk_bits / 8 + 8 * HNSW_M),
        }
    reference = rows["fp32"]
    for row in rows.values():
        row["within_noise"] = (
            row["recall_at_10"] >= 1 - NOISE
            and reference["leg_recall_at_3"] - row["leg_recall_at_3"] <= NOISE
            and reference["leg_mrr"] - row["leg_mrr"] <= NOISE
        )
    shipped = [n for n in rows if n in ENCODINGS and rows[n]["within_noise"]]
    choice = min(shipped, key=lambda n: rows[n]["memory_bytes_per_vector"])
    return {
        "documents": len(keys),
        "passages": int(raw.shape[0]),
        "queries": len(queries),
        "encodings": rows,
        "cheapest_within_noise": choice,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.vector_encodings", description=__doc__)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    figures = measure(args.docs)
    from bench.report import save_section

    save_section(args.results, "vector_encodings", figures)
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    print(
        f"vector encodings: {figures['documents']} documents, {figures['passages']} passages, "
        f"{figures['queries']} queries; the vector leg against exact float32"
    )
    print(
        f"  {'encoding':<9} {'recall@10':>9} {'leg R@3':>8} {'leg MRR':>8} {'memory B':>9} {'disk B':>7}  within noise"
    )
    for name, row in figures["encodings"].items():
        print(
            f"  {name:<9} {row['recall_at_10']:>9.3f} {row['leg_recall_at_3']:>8.2f} {row['leg_mrr']:>8.3f}"
            f" {row['memory_bytes_per_vector']:>9,} {row['disk_bytes_per_vector']:>7,}  {row['within_noise']}"
        )
    print(f"  cheapest within noise (of the mappings docindex writes): {figures['cheapest_within_noise']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
