"""The OCR tasks a pool process runs: what a file holds, and the text of one of its pages.

Everything here runs inside the OCR worker's pool processes (see
``docindex.worker.pool``): functions take a file *path* and a page index and
return small picklable results, so a page's pixels never cross a process
boundary and a process holds one page image at a time, however many pages a
scan has.

- ``docindex.worker.rasterize`` gives a page's trusted text layer, or its image at its own
  resolution (PDF pages rendered or their scanned image taken out, image frames resampled);
- ``docindex.worker.recognize`` reads a page image with Tesseract (``docindex.worker.tesseract``):
  layout analysis decides horizontal or vertical writing (``jpn_vert`` in single-vertical-block
  mode for 縦書き: ``jpn`` returns garbage on it); a page that reads badly is turned upright
  (``docindex.worker.geometry``) and given second opinions;
- ``docindex.worker.boxes`` places the words read on the page as a preview shows it.

Files too large for the Lambda go through ``docindex.worker.large_files`` instead.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from docindex.core.limits import growth_bound
from docindex.worker import boxes, rasterize, tesseract
from docindex.worker.options import OcrOptions
from docindex.worker.rasterize import PageTooLarge

if TYPE_CHECKING:
    from PIL import Image

Kind = Literal["pdf", "image"]
MiB = 1024 * 1024


@dataclass(frozen=True)
class DocumentInfo:
    """What a file holds before its pages are read; ``error`` is an ``extraction_error`` code."""

    kind: Kind
    page_count: int = 0
    title: str | None = None
    error: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class PageResult:
    """The text of one page and how it was obtained."""

    index: int
    text: str = ""
    source: Literal["text_layer", "ocr", "none"] = "none"
    seconds: float = 0.0
    dpi: int = 0
    vertical: bool = False
    confidence: int | None = None
    # How the page was turned before it was read: counter-clockwise quarter turns, then degrees of skew.
    rotation: int = 0
    skew: float = 0.0
    # Why the page was OCR'd: "image", "no_text_layer", "sparse_text_layer", or why its text layer
    # was not trusted (docindex.extract.textlayer).
    reason: str | None = None
    error: str | None = None
    detail: str = ""
    # The words read and where they are on the page as a preview shows it (the page turned back
    # the way it was scanned): (left, top, right, bottom) in 1/10,000 of the page, text, line number,
    # and which way the text runs on that page ("r", "l", "d", "u": right, left, down, up).
    words: tuple[tuple[int, int, int, int, str, int, str], ...] = ()


@dataclass(frozen=True)
class SetupReport:
    """What the pool processes found at start: Tesseract's version and models."""

    tesseract: str
    tessdata_dir: str
    languages: tuple[str, ...]
    missing: tuple[str, ...] = field(default_factory=tuple)
    # PP-OCR (``OCR_ENGINE=ppocr``): where its models are and which files are missing there.
    engine: str = "tesseract"
    models_dir: str = ""
    missing_models: tuple[str, ...] = field(default_factory=tuple)


# -- pool process state ------------------------------------------------------


def init_process() -> None:
    """Initializer of every pool process (spawned: nothing is inherited from the parent)."""
    # Before tesserocr loads: OpenMP reads this once.
    os.environ["OMP_THREAD_LIMIT"] = "1"
    # Ctrl-C reaches the whole process group; the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# -- tasks run in pool processes -------------------------------------------


def check_setup(options: OcrOptions) -> SetupReport:
    """Load every configured model once; reports what is missing instead of failing pages later."""
    import tesserocr

    tessdata = tesseract.find_tessdata(options.tessdata_dir)
    _, available = tesserocr.get_languages(tessdata)
    wanted = tesseract.language_names(options.languages)
    if options.vertical != "never":
        wanted += tesseract.language_names(options.vertical_languages)
    if options.orientation:
        wanted.append("osd")  # Debian: tesseract-ocr-osd
    missing = tuple(name for name in dict.fromkeys(wanted) if name not in available)
    if not missing:
        tesseract.engine(options.languages, tesserocr.PSM.AUTO, tessdata)
        if options.vertical != "never":
            tesseract.engine(options.vertical_languages, tesserocr.PSM.SINGLE_BLOCK_VERT_TEXT, tessdata)
        if options.orientation:
            tesseract.engine("osd", tesserocr.PSM.OSD_ONLY, tessdata)
    models_dir = ""
    missing_models: tuple[str, ...] = ()
    if options.engine == "ppocr":
        from docindex.worker import ppocr

        try:
            directory = ppocr.model_dir(options.model_dir)
        except RuntimeError as exc:
            models_dir, missing_models = str(exc), (ppocr.DET_MODEL, ppocr.REC_MODEL, ppocr.DICTIONARY)
        else:
            models_dir, missing_models = str(directory), ppocr.missing_models(directory)
            if not missing_models:
                ppocr.engine(options.model_dir, options.engine_threads)
    return SetupReport(
        tesseract=tesserocr.tesseract_version().splitlines()[0],
        tessdata_dir=tessdata,
        languages=tuple(sorted(available)),
        missing=missing,
        engine=options.engine,
        models_dir=models_dir,
        missing_models=missing_models,
    )


def probe(path: str, kind: Kind, options: OcrOptions) -> DocumentInfo:
    """Page count and title of a PDF or image file; ``error`` when it cannot be opened."""
    try:
        with growth_bound(options.memory_bytes):
            return _probe(path, kind, options)
    except MemoryError:
        grant = (options.memory_bytes or 0) // MiB
        return DocumentInfo(kind, error="memory", detail=f"opening it needed more than {grant} MiB")


def _probe(path: str, kind: Kind, options: OcrOptions) -> DocumentInfo:
    if kind == "pdf":
        import pypdfium2 as pdfium

        try:
            with rasterize.open_pdf(path) as pdf:
                title = (pdf.get_metadata_value("Title") or "").strip() or None
                return DocumentInfo(kind, page_count=len(pdf), title=title)
        except pdfium.PdfiumError as exc:
            code = "encrypted" if "password" in str(exc).lower() else "corrupt"
            return DocumentInfo(kind, error=code, detail=str(exc)[:300])
    from PIL import Image, UnidentifiedImageError

    try:
        with rasterize.open_image(path, options) as image:
            return DocumentInfo(kind, page_count=int(getattr(image, "n_frames", 1) or 1))
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        return DocumentInfo(kind, error="corrupt", detail=str(exc)[:300])
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return DocumentInfo(kind, error="too_large", detail=str(exc)[:300])


def process_page(path: str, kind: Kind, index: int, options: OcrOptions) -> PageResult:
    """The text of page ``index``: from the PDF text layer when it has one, otherwise by OCR."""
    started = time.perf_counter()
    try:
        with growth_bound(options.memory_bytes):
            return _process_page(path, kind, index, options, started)
    except PageTooLarge as exc:
        return PageResult(index, error="too_large", detail=str(exc)[:300])
    except MemoryError:
        # The page needed more than the process's share of the task's memory: this page is not
        # read, the others are (a process the allocation failure left unusable is replaced).
        grant = (options.memory_bytes or 0) // MiB
        return PageResult(index, error="memory", detail=f"page {index + 1} needed more than {grant} MiB")


def _process_page(path: str, kind: Kind, index: int, options: OcrOptions, started: float) -> PageResult:
    short_layer = ""
    try:
        if kind == "pdf":
            text_or_image, reason, short_layer = rasterize.pdf_page(path, index, options)
        else:
            text_or_image, reason = rasterize.image_page(path, index, options), "image"
    except (MemoryError, PageTooLarge):
        raise
    except Exception as exc:  # noqa: BLE001 - a broken page is reported, the other pages still count
        return PageResult(index, error="corrupt", detail=f"{type(exc).__name__}: {exc}"[:300])
    if isinstance(text_or_image, str):
        return PageResult(
            index, text=_tidy_layer(text_or_image), source="text_layer", seconds=time.perf_counter() - started
        )
    image, dpi = text_or_image
    try:
        result = replace(_recognize(image, dpi, index, options, started), reason=reason)
    finally:
        image.close()
    if short_layer and _adds_nothing(result.text, short_layer, options.min_text_chars):
        # The OCR found nothing the short text layer lacks: the layer is the page's text, exact (a
        # chart's tick labels, which the OCR reads in another order and with the ticks as 1s).
        return replace(result, text=_tidy_layer(short_layer))
    return result


def _adds_nothing(read: str, layer: str, min_chars: int) -> bool:
    """Whether ``read`` holds no word beyond ``layer``: no letter, kana or kanji the layer lacks, and
    fewer than ``min_chars`` other characters (a chart's tick marks read as 1 or |)."""
    from collections import Counter

    beyond = Counter(c for c in read if not c.isspace()) - Counter(c for c in layer if not c.isspace())
    return sum(beyond.values()) < min_chars and not any(c.isalpha() for c in beyond)


def _tidy_layer(text: str) -> str:
    """A text layer's text: the author's own spacing, only the line ends normalized."""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()


# -- the engines --------------------------------------------------------------


def _recognize(image: Image.Image, dpi: int, index: int, options: OcrOptions, started: float) -> PageResult:
    """The page image read by the configured engine with this process's models."""
    from docindex.worker import geometry

    tessdata = tesseract.find_tessdata(options.tessdata_dir)
    result = None
    if options.engine == "ppocr":
        import tesserocr

        from docindex.worker.ppocr_reader import PageReader as PPOCRReader

        osd = tesseract.engine("osd", tesserocr.PSM.OSD_ONLY, tessdata) if options.orientation else None
        reader = PPOCRReader(options, dpi, osd)
        # Pages in Latin letters go to Tesseract (docs/ocr-worker.md, "Two engines").
        result = None if reader.latin(image) else reader.read(image)
    if result is None:
        from docindex.worker.recognize import PageReader

        result = PageReader(options, lambda languages, psm: tesseract.engine(languages, psm, tessdata), dpi).read(image)
    seconds = time.perf_counter() - started
    reading, correction = result.reading, result.correction
    if reading is None:
        return PageResult(
            index,
            source="ocr",
            seconds=seconds,
            dpi=dpi,
            error="timeout",
            detail=f"page {index + 1} took over {options.page_timeout_seconds:g} s",
        )
    return PageResult(
        index,
        text=tesseract.tidy_text(reading.text),
        source="ocr",
        seconds=seconds,
        dpi=dpi,
        vertical=reading.vertical,
        confidence=reading.confidence,
        rotation=correction.rotation,
        skew=round(correction.skew, 1) if abs(correction.skew) >= geometry.MIN_SKEW else 0.0,
        words=boxes.page_words(reading.words, correction, image.size),
    )
