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
- A page image is read by ``docindex.worker.recognize``: layout analysis decides horizontal or
  vertical writing (``jpn_vert`` in single-vertical-block mode for 縦書き: ``jpn`` returns garbage
  on it); a page that reads badly is turned upright (``docindex.worker.geometry``) and given
  second opinions.
- An image's two axes keep their own resolution until the page is resampled to square pixels
  (fax: 204 x 98 dpi).
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from docindex.core.limits import growth_bound
from docindex.worker.options import OcrOptions

if TYPE_CHECKING:
    from PIL import Image

    from docindex.extract import ExtractedDocument, ExtractionLimits
    from docindex.worker.recognize import Word

Kind = Literal["pdf", "image"]
MiB = 1024 * 1024
# Where the image read lies on the page as it is shown: (left, top, right, bottom) as fractions of
# the page's width and height (a scan's embedded image may cover a little less than the page).
Extent = tuple[float, float, float, float]
WHOLE_PAGE: Extent = (0.0, 0.0, 1.0, 1.0)
# Word boxes are kept in 1/10,000 of the page's width and height (docindex.ingest.wordboxes).
BOX_SCALE = 10_000

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


def _language_names(spec: str) -> list[str]:
    return [name for name in spec.split("+") if name]


# -- pool process state ------------------------------------------------------


def init_process() -> None:
    """Initializer of every pool process (spawned: nothing is inherited from the parent)."""
    # Before tesserocr loads: OpenMP reads this once.
    os.environ["OMP_THREAD_LIMIT"] = "1"
    # Ctrl-C reaches the whole process group; the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_ENGINES: dict[tuple[str, str], Any] = {}


def _engine(languages: str, psm: int, tessdata: str) -> Any:
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
    if options.orientation:
        wanted.append("osd")  # Debian: tesseract-ocr-osd
    missing = tuple(name for name in dict.fromkeys(wanted) if name not in available)
    if not missing:
        _engine(options.languages, tesserocr.PSM.AUTO, tessdata)
        if options.vertical != "never":
            _engine(options.vertical_languages, tesserocr.PSM.SINGLE_BLOCK_VERT_TEXT, tessdata)
        if options.orientation:
            _engine("osd", tesserocr.PSM.OSD_ONLY, tessdata)
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
    extent = WHOLE_PAGE
    try:
        if kind == "pdf":
            text_or_image, reason, extent = _pdf_page(path, index, options)
        else:
            text_or_image, reason = _image_page(path, index, options), "image"
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
        return replace(_recognize(image, dpi, index, options, started, extent=extent), reason=reason)
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


def _pdf_page(path: str, index: int, options: OcrOptions) -> tuple[str | tuple[Image.Image, int], str | None, Extent]:
    """The page's text layer if it can be trusted (``extract.textlayer``), else its image, why it is
    OCR'd and where the image lies on the page."""
    from docindex.extract.textlayer import judge, read_text_layer

    with _open_pdf(path) as pdf:
        page = pdf[index]
        try:
            layer = read_text_layer(page)
            verdict = judge(layer, min_chars=options.min_text_chars)
            if verdict.trusted:
                return layer.text, None, WHOLE_PAGE
            _check_page_images(page, options)
            embedded = _embedded_scan(page, options)
            if embedded is not None:
                image, dpi, extent = embedded
                return (image, dpi), verdict.reason, extent
            return _render(page, options), verdict.reason, WHOLE_PAGE
        finally:
            page.close()


def _embedded_scan(page: Any, options: OcrOptions) -> tuple[Image.Image, int, Extent] | None:
    """The page's scanned image itself, when the page is exactly one upright full-page image, and where it lies."""
    try:
        found = _full_page_image(page)
        if found is None:
            return None
        image, dpi = found
        extent = _image_extent(page, image)
        pil = _to_pil(image.get_bitmap(render=False))
    except Exception:  # noqa: BLE001 - unusual image encodings: rendering always works
        return None
    scaled, resolution = _scale_to(_ocr_ready(pil), dpi, options)
    return scaled, resolution, extent


def _image_extent(page: Any, image: Any) -> Extent:
    """Where the (upright) image lies on the page as rendered (its crop box), as fractions of the page."""
    left, bottom, right, top = image.get_bounds()
    try:
        box_left, box_bottom, box_right, box_top = page.get_cropbox()
    except Exception:  # noqa: BLE001 - a page without a usable box: its size from the origin
        box_left, box_bottom = 0.0, 0.0
        box_right, box_top = page.get_size()
    width, height = max(box_right - box_left, 1e-6), max(box_top - box_bottom, 1e-6)
    return (
        (left - box_left) / width,
        (box_top - top) / height,
        (right - box_left) / width,
        (box_top - bottom) / height,
    )


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


def _full_page_image(page: Any) -> tuple[Any, tuple[float, float]] | None:
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
    # Each axis on its own: a fax server's page holds a 204 x 98 dpi image (non-square pixels).
    px_width, px_height = image.get_px_size()
    dpi = (px_width / ((right - left) / 72.0), px_height / ((top - bottom) / 72.0))
    return (image, dpi) if all(50 <= value <= 2400 for value in dpi) else None


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
        dpi = _resolution(image, options)
        scaled = _fit_decoded(image, options)
        dpi = (dpi[0] * scaled, dpi[1] * scaled)
        # Phone photos are stored sideways with an EXIF orientation tag (a copy either way);
        # orientations 5-8 turn the image a quarter, which swaps the axes' resolutions.
        if image.getexif().get(_EXIF_ORIENTATION, 1) in (5, 6, 7, 8):
            dpi = (dpi[1], dpi[0])
        frame = _ocr_ready(ImageOps.exif_transpose(image))
    return _scale_to(frame, dpi, options)


_EXIF_ORIENTATION = 0x0112


def _resolution(image: Image.Image, options: OcrOptions) -> tuple[float, float]:
    """The frame's horizontal and vertical resolution: fax TIFFs store 204 x 98 (or 200 x 100) dpi.

    No (or a nonsense) resolution: ``OCR_DPI``. A resolution without a unit (TIFF ResolutionUnit
    1) still gives the pixels' aspect ratio, so only the vertical one is derived from it.
    """

    def pair(value: Any) -> tuple[float, float] | None:
        try:
            x, y = float(value[0]), float(value[1])
        except (TypeError, ValueError, IndexError):
            return None
        return (x, y) if x > 0 and y > 0 else None

    dpi = pair(image.info.get("dpi"))
    if dpi and all(50 <= value <= 2400 for value in dpi):
        return dpi
    aspect = pair(image.info.get("resolution"))
    if aspect and 0.2 <= aspect[0] / aspect[1] <= 5:
        return (float(options.dpi), options.dpi * aspect[1] / aspect[0])
    return (float(options.dpi), float(options.dpi))


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


def _scale_to(image: Image.Image, dpi: float | tuple[float, float], options: OcrOptions) -> tuple[Image.Image, int]:
    """Resample to about ``OCR_DPI`` with square pixels (and under ``max_pixels``); the image and its resolution.

    ``dpi`` is one resolution or the (horizontal, vertical) pair: a fax at 204 x 98 dpi is
    stretched vertically to square pixels, or Tesseract sees every character squashed to half its height.
    """
    from PIL import Image as PILImage

    xdpi, ydpi = (float(dpi), float(dpi)) if isinstance(dpi, int | float) else (float(dpi[0]), float(dpi[1]))
    target = float(options.dpi)
    fx = 1.0 if 0.75 * target <= xdpi <= 1.25 * target else target / xdpi
    fy = fx * xdpi / ydpi
    if abs(fy / fx - 1.0) < 0.02:  # square enough
        fy = fx
    pixels = image.width * image.height * fx * fy
    if pixels > options.max_pixels:
        shrink = math.sqrt(options.max_pixels / pixels)
        fx, fy = fx * shrink, fy * shrink
    if abs(fx - 1.0) < 0.01 and abs(fy - 1.0) < 0.01:
        return image, round(xdpi)
    size = (max(1, round(image.width * fx)), max(1, round(image.height * fy)))
    resample = PILImage.Resampling.LANCZOS if fx * fy < 1 else PILImage.Resampling.BICUBIC
    source = image if image.mode != "1" else image.convert("L")
    return source.resize(size, resample), round(xdpi * fx)


# -- Tesseract ---------------------------------------------------------------


def _recognize(
    image: Image.Image, dpi: int, index: int, options: OcrOptions, started: float, *, extent: Extent = WHOLE_PAGE
) -> PageResult:
    """The page image read by ``docindex.worker.recognize`` with this process's engines."""
    from docindex.worker import geometry
    from docindex.worker.recognize import PageReader

    tessdata = find_tessdata(options.tessdata_dir)
    result = PageReader(options, lambda languages, psm: _engine(languages, psm, tessdata), dpi).read(image)
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
        text=tidy_text(reading.text),
        source="ocr",
        seconds=seconds,
        dpi=dpi,
        vertical=reading.vertical,
        confidence=reading.confidence,
        rotation=correction.rotation,
        skew=round(correction.skew, 1) if abs(correction.skew) >= geometry.MIN_SKEW else 0.0,
        words=page_words(reading.words, correction, image.size, extent),
    )


# Which way text runs on the page as scanned, by the quarter turn that made it upright and whether
# it runs down (vertical writing) or right on the upright page.
_FLOW = {
    (0, False): "r",
    (0, True): "d",
    (90, False): "d",
    (90, True): "l",
    (180, False): "l",
    (180, True): "u",
    (270, False): "u",
    (270, True): "r",
}


def page_words(
    words: tuple[Word, ...], correction: Any, size: tuple[int, int], extent: Extent = WHOLE_PAGE
) -> tuple[tuple[int, int, int, int, str, int, str], ...]:
    """Words read on the turned image, placed on the page as shown: the turn undone, then the
    image's pixels as 1/10,000 of the page (``extent``: where the image lies on it), and which
    way each runs there (a sideways page's lines run up or down)."""
    from docindex.worker import geometry

    width, height = max(size[0], 1), max(size[1], 1)
    left, top, right, bottom = extent
    out = []
    for box, text, line, vertical in words:
        x0, y0, x1, y1 = geometry.unturned_box(box, correction, size)

        def place(value: float, start: float, end: float) -> int:
            return min(BOX_SCALE, max(0, round((start + value * (end - start)) * BOX_SCALE)))

        out.append(
            (
                place(x0 / width, left, right),
                place(y0 / height, top, bottom),
                place(x1 / width, left, right),
                place(y1 / height, top, bottom),
                text,
                line,
                _FLOW.get((correction.rotation, vertical), "r"),
            )
        )
    return tuple(out)
