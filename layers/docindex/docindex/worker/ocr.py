"""Rasterizing pages and running Tesseract on them, one page at a time.

Everything here runs inside the OCR worker's pool processes (see
``docindex.worker.pool``): functions take a file *path* and a page index and
return small picklable results, so a page's pixels never cross a process
boundary and a process holds one page image at a time, however many pages a
scan has.

Measured choices (docs/extraction.md, re-checked on this code):

- tesserocr with one engine per (languages, page mode) reused for every page,
  and ``SetSourceResolution`` set to the page's real resolution (without it
  Tesseract splits and reorders Japanese lines).
- ``OMP_THREAD_LIMIT=1`` in every pool process: parallelism comes from the
  pool, and Tesseract's own OpenMP threads only fight over the same cores.
- PDF pages with a usable text layer are not OCR'd. A scanned page whose one
  image covers the page is OCR'd from that image (0.016 s instead of 0.084 s
  to render an A4 page here); anything else is rendered with pypdfium2 at ``OCR_DPI``.
- Vertical Japanese (縦書き): Tesseract's layout analysis reports each block's
  writing direction (before any recognition); a page that is mostly
  top-to-bottom is read with ``jpn_vert`` in single-vertical-block mode (``jpn`` returns garbage on it).
"""

from __future__ import annotations

import math
import os
import re
import signal
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from docindex.core.limits import growth_bound

if TYPE_CHECKING:
    from PIL import Image

    from docindex.extract import ExtractedDocument, ExtractionLimits

Kind = Literal["pdf", "image"]
MiB = 1024 * 1024
VerticalMode = Literal["auto", "always", "never"]

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


@dataclass(frozen=True)
class OcrOptions:
    """How pages are rasterized and recognized (from ``WorkerSettings``)."""

    languages: str = "jpn+eng"
    vertical_languages: str = "jpn_vert"
    vertical: VerticalMode = "auto"
    dpi: int = 300
    tessdata_dir: str | None = None
    # A PDF page with at least this many non-blank characters in its text layer is not OCR'd.
    min_text_chars: int = 16
    page_timeout_seconds: float = 300.0
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
    error: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class SetupReport:
    """What the pool processes found at start: Tesseract's version and models."""

    tesseract: str
    tessdata_dir: str
    languages: tuple[str, ...]
    missing: tuple[str, ...] = field(default_factory=tuple)


def tidy_text(text: str) -> str:
    """Drop Tesseract's spaces between Japanese characters, trailing blanks and runs of empty lines."""
    lines = [_CJK_GAP.sub("", line).rstrip() for line in text.replace("\r", "").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def count_chars(text: str) -> int:
    """Non-blank characters: what decides whether a PDF page's text layer is real."""
    return sum(1 for c in text if not c.isspace())


def find_tessdata(configured: str | None = None) -> str:
    """The Tesseract model directory: configured, ``TESSDATA_PREFIX``, or a distribution's default."""
    for candidate in (configured, os.environ.get("TESSDATA_PREFIX"), *_TESSDATA_CANDIDATES):
        if candidate and Path(candidate).is_dir():
            return str(candidate).rstrip("/") + "/"
    raise RuntimeError("no Tesseract model directory found: install tesseract-ocr-jpn (Debian) or set OCR_TESSDATA_DIR")


def _language_names(spec: str) -> list[str]:
    return [name for name in spec.split("+") if name]


# -- pool process state ------------------------------------------------------


def init_process() -> None:
    """Initializer of every pool process (spawned: nothing is inherited from the parent)."""
    # Before tesserocr loads: OpenMP reads this once.
    os.environ["OMP_THREAD_LIMIT"] = "1"
    # Ctrl-C reaches the whole process group; the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_ENGINES: dict[tuple[str, int, str], Any] = {}


def _engine(languages: str, psm: int, tessdata: str) -> Any:
    import tesserocr

    key = (languages, psm, tessdata)
    api = _ENGINES.get(key)
    if api is None:
        api = tesserocr.PyTessBaseAPI(path=tessdata, lang=languages, psm=psm)
        _ENGINES[key] = api
    return api


# Files are opened per page and closed before the page is recognized, never
# cached: opening costs ~3 ms (PDF, page 250 of 300) or ~9 ms (TIFF, frame 290)
# against ~1 s of OCR, while an open PDFium document keeps every object it has
# parsed (memory grew ~0.6 MiB per page read) and an open handle would keep a
# finished job's deleted temporary file on disk.


@contextmanager
def _open_pdf(path: str) -> Iterator[Any]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        yield pdf
    finally:
        pdf.close()


@contextmanager
def _open_image(path: str, options: OcrOptions) -> Iterator[Image.Image]:
    from PIL import Image

    # Decoding is bounded too (a small PNG can claim gigapixels); pages
    # between max_pixels and this are scaled down before OCR.
    Image.MAX_IMAGE_PIXELS = options.max_pixels * 4
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        image = Image.open(path)
    try:
        yield image
    finally:
        image.close()


# -- tasks run in pool processes -------------------------------------------


def check_setup(options: OcrOptions) -> SetupReport:
    """Load every configured model once; reports what is missing instead of failing pages later."""
    import tesserocr

    tessdata = find_tessdata(options.tessdata_dir)
    _, available = tesserocr.get_languages(tessdata)
    wanted = _language_names(options.languages)
    if options.vertical != "never":
        wanted += _language_names(options.vertical_languages)
    missing = tuple(name for name in dict.fromkeys(wanted) if name not in available)
    if not missing:
        _engine(options.languages, tesserocr.PSM.AUTO, tessdata)
        if options.vertical != "never":
            _engine(options.vertical_languages, tesserocr.PSM.SINGLE_BLOCK_VERT_TEXT, tessdata)
    return SetupReport(
        tesseract=tesserocr.tesseract_version().splitlines()[0],
        tessdata_dir=tessdata,
        languages=tuple(sorted(available)),
        missing=missing,
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
            with _open_pdf(path) as pdf:
                title = (pdf.get_metadata_value("Title") or "").strip() or None
                return DocumentInfo(kind, page_count=len(pdf), title=title)
        except pdfium.PdfiumError as exc:
            code = "encrypted" if "password" in str(exc).lower() else "corrupt"
            return DocumentInfo(kind, error=code, detail=str(exc)[:300])
    from PIL import Image, UnidentifiedImageError

    try:
        with _open_image(path, options) as image:
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
    try:
        text_or_image = _pdf_page(path, index, options) if kind == "pdf" else _image_page(path, index, options)
    except (MemoryError, PageTooLarge):
        raise
    except Exception as exc:  # noqa: BLE001 - a broken page is reported, the other pages still count
        return PageResult(index, error="corrupt", detail=f"{type(exc).__name__}: {exc}"[:300])
    if isinstance(text_or_image, str):
        # The text layer's own spacing is the author's: only line ends are normalized.
        text = "\n".join(line.rstrip() for line in text_or_image.replace("\r\n", "\n").split("\n")).strip()
        return PageResult(index, text=text, source="text_layer", seconds=time.perf_counter() - started)
    image, dpi = text_or_image
    try:
        return _recognize(image, dpi, index, options, started)
    finally:
        image.close()


class PageTooLarge(Exception):
    """A page whose images would need more memory decoded than the page may take (measured before decoding)."""


def _check_decoded(width: int, height: int, bytes_per_pixel: int, options: OcrOptions, what: str) -> None:
    budget = options.decode_budget
    if budget is not None and width * height * bytes_per_pixel > budget:
        need = width * height * bytes_per_pixel // MiB
        raise PageTooLarge(
            f"{what} of {width:,} x {height:,} px would need {need:,} MiB decoded; "
            f"a page may take {budget // MiB:,} MiB"
        )


# Read first by ``extract_file``: more than type detection looks at (``detect.SNIFF_BYTES``).
HEAD_BYTES = 64 * 1024


def extract_file(
    path: str, filename: str, limits: ExtractionLimits, max_bytes: int, memory_bytes: int | None = None
) -> ExtractedDocument:
    """``_extract_file`` with the process's address space bounded by ``memory_bytes`` of growth."""
    from docindex.extract import ExtractedDocument

    try:
        with growth_bound(memory_bytes):
            return _extract_file(path, filename, limits, max_bytes)
    except MemoryError:
        return ExtractedDocument(
            kind="unknown",
            content_type="application/octet-stream",
            error="memory",
            error_detail=f"the extractor needed more than {(memory_bytes or 0) // MiB} MiB",
        )


def _extract_file(path: str, filename: str, limits: ExtractionLimits, max_bytes: int) -> ExtractedDocument:
    """The non-OCR extractors on a file too large for the Lambda (runs in a pool process).

    Never more than ``max_bytes`` of the file (plus its first ``HEAD_BYTES``)
    are held in memory, however large the file is. The type is decided from
    the file's first bytes, and then:

    - text and HTML: only the prefix their extractor can use (``max_chars``
      worth of bytes, at most ``max_bytes``) is read, cut at a line end; a
      longer file is marked ``truncated``;
    - a type without an extractor (archive, media, unknown binary): nothing
      past the first bytes, which already decide ``unsupported``;
    - zip and OLE2 packages (Office files), which only their directory tells
      apart, and PDFs (the worker reads those page by page instead): the
      extractors need them whole, so they are read whole when they fit in
      ``max_bytes``, and are ``too_large`` without reading any further otherwise.
    """
    from docindex.extract import ExtractedDocument, detect_type, extract
    from docindex.extract.detect import SNIFF_BYTES, is_package
    from docindex.extract.dispatch import has_extractor, prefix_budget
    from docindex.extract.text import prefix_at_line_end

    with Path(path).open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(HEAD_BYTES)
        ftype = detect_type(head, filename)
        package = is_package(head)
        budget = None if package else prefix_budget(ftype.kind, limits)
        if budget is None and not package and not has_extractor(ftype.kind):
            # What detection looks at is all ``extract`` needs to say so.
            return extract(head[:SNIFF_BYTES], filename, limits)
        if budget is None:
            if size > max_bytes:
                return ExtractedDocument(
                    kind=ftype.kind,
                    content_type=ftype.mime,
                    error="too_large",
                    error_detail=(
                        f"{size} bytes: a {ftype.kind} file is extracted whole, "
                        f"and at most {max_bytes} bytes of a file are read into memory"
                    ),
                )
            handle.seek(0)
            return extract(handle.read(max_bytes), filename, limits)
        limit = min(budget, max_bytes)
        handle.seek(0)
        data = handle.read(limit + 1)  # one byte more says whether the file goes on
    cut = len(data) > limit
    if cut:
        data = prefix_at_line_end(data, limit)
    extracted = extract(data, filename, limits)
    extracted.truncated = extracted.truncated or cut
    return extracted


# -- PDF pages ---------------------------------------------------------------


def _pdf_page(path: str, index: int, options: OcrOptions) -> str | tuple[Image.Image, int]:
    with _open_pdf(path) as pdf:
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_bounded()
            finally:
                textpage.close()
            if count_chars(text) >= options.min_text_chars:
                return text
            _check_page_images(page, options)
            embedded = _embedded_scan(page, options)
            if embedded is not None:
                return embedded
            return _render(page, options)
        finally:
            page.close()


def _embedded_scan(page: Any, options: OcrOptions) -> tuple[Image.Image, int] | None:
    """The page's scanned image itself, when the page is exactly one upright full-page image."""
    try:
        found = _full_page_image(page)
        if found is None:
            return None
        image, dpi = found
        pil = _to_pil(image.get_bitmap(render=False))
    except Exception:  # noqa: BLE001 - unusual image encodings: rendering always works
        return None
    return _scale_to(_ocr_ready(pil), dpi, options)


def _check_page_images(page: Any, options: OcrOptions) -> None:
    """Refuse the page if an image on it (in a form XObject too) would not fit decoded.

    The pixel size comes from the image's dictionary, not its data: a CCITT or JBIG2 stream of a
    few kilobytes can declare 100,000 x 100,000 pixels, and rendering the page at any scale has
    PDFium decode the image whole. Four bytes per pixel: PDFium's bitmaps are BGRA.
    """
    import pypdfium2.raw as pdfium_c

    if options.decode_budget is None:
        return
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        width, height = obj.get_px_size()
        _check_decoded(int(width), int(height), 4, options, "an image")


def _full_page_image(page: Any) -> tuple[Any, float] | None:
    import pypdfium2.raw as pdfium_c

    if page.get_rotation() % 360:
        return None
    # Top-level objects only: a page that is anything but one image (text,
    # vector drawing, several images, a form XObject) is rendered whole.
    objects = list(page.get_objects(max_depth=0))
    if len(objects) != 1 or objects[0].type != pdfium_c.FPDF_PAGEOBJ_IMAGE:
        return None
    image = objects[0]
    matrix = image.get_matrix()
    upright = matrix.a > 0 and matrix.d > 0 and abs(matrix.b) < 1e-6 and abs(matrix.c) < 1e-6
    left, bottom, right, top = image.get_bounds()
    width_pt, height_pt = page.get_size()
    covers = (right - left) >= 0.9 * width_pt and (top - bottom) >= 0.9 * height_pt
    if not (upright and covers):
        return None  # rotated, mirrored, sheared or partial: rendering gets it right
    px_width, _ = image.get_px_size()
    dpi = px_width / ((right - left) / 72.0)
    return (image, dpi) if 50 <= dpi <= 2400 else None


def _render(page: Any, options: OcrOptions) -> tuple[Image.Image, int]:
    width_pt, height_pt = page.get_size()
    scale = options.dpi / 72.0
    # A poster-sized page at 300 dpi would be gigapixels: cap the bitmap.
    if width_pt * height_pt * scale * scale > options.max_pixels:
        scale = math.sqrt(options.max_pixels / (width_pt * height_pt))
    bitmap = page.render(scale=scale, grayscale=True, may_draw_forms=True)
    return _to_pil(bitmap), round(scale * 72)


def _to_pil(bitmap: Any) -> Image.Image:
    """A PIL copy of a PDFium bitmap: ``to_pil`` shares the bitmap's memory, freed with the bitmap."""
    image = bitmap.to_pil()
    try:
        return image.copy()
    finally:
        image.close()


# -- image files -------------------------------------------------------------


def _image_page(path: str, index: int, options: OcrOptions) -> tuple[Image.Image, int]:
    from PIL import ImageOps

    with _open_image(path, options) as image:
        image.seek(index)
        dpi_info = image.info.get("dpi") or (0, 0)
        try:
            dpi = float(dpi_info[0])
        except (TypeError, ValueError, IndexError):
            dpi = 0.0
        dpi *= _fit_decoded(image, options)
        # Phone photos are stored sideways with an EXIF orientation tag (a copy either way).
        frame = _ocr_ready(ImageOps.exif_transpose(image))
    # No (or a nonsense) resolution in the file: assume the configured one.
    if not 50 <= dpi <= 2400:
        dpi = float(options.dpi)
    return _scale_to(frame, dpi, options)


def _bytes_per_pixel(mode: str) -> int:
    """What Pillow keeps per pixel in memory (RGB is stored in four bytes)."""
    if mode in ("1", "L", "P"):
        return 1
    if mode in ("LA", "La", "PA") or mode.startswith("I;16"):
        return 2
    return 4


def _fit_decoded(image: Image.Image, options: OcrOptions) -> float:
    """Make sure this frame fits decoded (measured from its header); the factor its resolution changed by.

    A JPEG too large decoded is decoded at 1/2, 1/4 or 1/8 of its size (libjpeg scales while
    decoding); any other image too large is refused before a byte of it is decoded.
    """
    budget = options.decode_budget
    need = image.width * image.height * _bytes_per_pixel(image.mode)
    if budget is None or need <= budget:
        return 1.0
    if image.format == "JPEG":
        reduce = math.ceil(math.sqrt(need / budget))
        width = image.width
        image.draft("L", (max(1, image.width // reduce), max(1, image.height // reduce)))
        if image.width * image.height * _bytes_per_pixel(image.mode) <= budget:
            return image.width / width
    _check_decoded(image.width, image.height, _bytes_per_pixel(image.mode), options, "an image")
    return 1.0


def _ocr_ready(image: Image.Image) -> Image.Image:
    """A mode Tesseract reads well: bilevel or 8-bit grey, transparency on white."""
    from PIL import Image as PILImage

    if image.mode in ("1", "L"):
        return image
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = PILImage.new("RGBA", rgba.size, (255, 255, 255, 255))
        background.alpha_composite(rgba)
        return background.convert("L")
    if image.mode.startswith("I;16") or image.mode == "I":
        return image.point(lambda value: value * (1 / 256)).convert("L")
    return image.convert("L")


def _scale_to(image: Image.Image, dpi: float, options: OcrOptions) -> tuple[Image.Image, int]:
    """Resample to about ``OCR_DPI`` (and under ``max_pixels``); returns the image and its resolution."""
    from PIL import Image as PILImage

    target = float(options.dpi)
    factor = 1.0
    if not 0.75 * target <= dpi <= 1.25 * target:
        factor = target / dpi
    pixels = image.width * image.height * factor * factor
    if pixels > options.max_pixels:
        factor = math.sqrt(options.max_pixels / (image.width * image.height))
    if abs(factor - 1.0) < 0.01:
        return image, round(dpi)
    size = (max(1, round(image.width * factor)), max(1, round(image.height * factor)))
    resample = PILImage.Resampling.LANCZOS if factor < 1 else PILImage.Resampling.BICUBIC
    source = image if image.mode != "1" else image.convert("L")
    return source.resize(size, resample), round(dpi * factor)


# -- Tesseract ---------------------------------------------------------------


# Below this mean word confidence the automatic page segmentation has likely
# cut the page wrong (sparse pages, forms, a lone line): read it again as
# sparse text and keep the more confident reading.
LOW_CONFIDENCE = 60


def _recognize(image: Image.Image, dpi: int, index: int, options: OcrOptions, started: float) -> PageResult:
    import tesserocr

    tessdata = find_tessdata(options.tessdata_dir)
    timeout_ms = int(options.page_timeout_seconds * 1000)
    api = _engine(options.languages, tesserocr.PSM.AUTO, tessdata)
    api.SetImage(image)
    api.SetSourceResolution(dpi)
    vertical = options.vertical == "always" or (options.vertical == "auto" and _mostly_vertical(api, tesserocr))
    if vertical:
        api.Clear()
        api = _engine(options.vertical_languages, tesserocr.PSM.SINGLE_BLOCK_VERT_TEXT, tessdata)
    reading = _read(api, image, dpi, timeout_ms, analysed=not vertical)
    if reading is not None and reading[1] < LOW_CONFIDENCE and not vertical:
        sparse = _read(_engine(options.languages, tesserocr.PSM.SPARSE_TEXT, tessdata), image, dpi, timeout_ms)
        if sparse is not None and sparse[1] > reading[1]:
            reading = sparse
    if reading is None:
        return PageResult(
            index,
            source="ocr",
            seconds=time.perf_counter() - started,
            dpi=dpi,
            vertical=vertical,
            error="timeout",
            detail=f"page {index + 1} took over {options.page_timeout_seconds:g} s",
        )
    text, confidence = reading
    return PageResult(
        index,
        text=tidy_text(text),
        source="ocr",
        seconds=time.perf_counter() - started,
        dpi=dpi,
        vertical=vertical,
        confidence=confidence,
    )


def _read(api: Any, image: Image.Image, dpi: int, timeout_ms: int, *, analysed: bool = False) -> tuple[str, int] | None:
    """Recognize with ``api``: the text and mean confidence, or None on timeout."""
    try:
        if not analysed:  # AnalyseLayout already ran on this image: Recognize reuses it
            api.SetImage(image)
            api.SetSourceResolution(dpi)
        if not api.Recognize(timeout=timeout_ms):
            return None
        return api.GetUTF8Text(), int(api.MeanTextConf())
    finally:
        api.Clear()


def _mostly_vertical(api: Any, tesserocr: Any) -> bool:
    """Whether most of the page's text area is written top to bottom (layout analysis only)."""
    layout = api.AnalyseLayout()
    if layout is None:
        return False
    vertical_area = other_area = 0
    while True:
        box = layout.BoundingBox(tesserocr.RIL.BLOCK)
        if box is not None:
            left, top, right, bottom = box
            area = max(0, right - left) * max(0, bottom - top)
            _, direction, _, _ = layout.Orientation()
            if direction == tesserocr.WritingDirection.TOP_TO_BOTTOM:
                vertical_area += area
            else:
                other_area += area
        if not layout.Next(tesserocr.RIL.BLOCK):
            break
    return vertical_area > other_area
