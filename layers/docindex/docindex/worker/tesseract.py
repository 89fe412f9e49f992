"""Tesseract in a pool process: its model directory, one engine per language set, its text tidied.

Measured choices (docs/extraction.md, re-checked on this code):

- tesserocr with one engine per (languages, page mode) reused for every page,
  and ``SetSourceResolution`` set to the page's real resolution (without it
  Tesseract splits and reorders Japanese lines: ``docindex.worker.recognize`` sets it).
- ``OMP_THREAD_LIMIT=1`` in every pool process (``docindex.worker.ocr.init_process``):
  parallelism comes from the pool, and Tesseract's own OpenMP threads only fight over the
  same cores.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

# Where Debian/Ubuntu (tesseract-ocr-*), Alpine and Homebrew put the models.
_TESSDATA_CANDIDATES = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
)

# Han, kana, CJK punctuation and full-width forms: Tesseract puts spaces
# between such characters that a Japanese reader (and kuromoji) does not want.
_CJK = r"[\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
_CJK_GAP = re.compile(rf"(?<={_CJK})[ \t]+(?={_CJK})")
_BLANK_LINES = re.compile(r"\n{3,}")


def tidy_text(text: str) -> str:
    """Drop Tesseract's spaces between Japanese characters, trailing blanks and runs of empty lines."""
    lines = [_CJK_GAP.sub("", line).rstrip() for line in text.replace("\r", "").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def find_tessdata(configured: str | None = None) -> str:
    """The Tesseract model directory: configured, ``TESSDATA_PREFIX``, or a distribution's default."""
    for candidate in (configured, os.environ.get("TESSDATA_PREFIX"), *_TESSDATA_CANDIDATES):
        if candidate and Path(candidate).is_dir():
            return str(candidate).rstrip("/") + "/"
    raise RuntimeError("no Tesseract model directory found: install tesseract-ocr-jpn (Debian) or set OCR_TESSDATA_DIR")


def language_names(spec: str) -> list[str]:
    return [name for name in spec.split("+") if name]


_ENGINES: dict[tuple[str, str], Any] = {}


def engine(languages: str, psm: int, tessdata: str) -> Any:
    """The process's engine for ``languages``, set to page mode ``psm``: one engine (one copy of the
    models in memory) per language set, whatever modes a page is read in."""
    import tesserocr

    key = (languages, tessdata)
    api = _ENGINES.get(key)
    if api is None:
        api = tesserocr.PyTessBaseAPI(path=tessdata, lang=languages, psm=psm)
        _ENGINES[key] = api
    else:
        api.SetPageSegMode(psm)
    return api
