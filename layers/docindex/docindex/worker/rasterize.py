"""Pages as images: a PDF page (or its text layer) and an image file's frame, ready to be read.

Everything here runs inside the OCR worker's pool processes (``docindex.worker.pool``), one
page at a time, so a process holds one page image however many pages a scan has.

- PDF pages with a usable text layer are not OCR'd. Any other page is rendered with PDFium, as
  the page shows it: a scanned page whose one image covers the page at that image's own
  resolution (onto its pixel grid), anything else at ``OCR_DPI``.
- An image's two axes keep their own resolution until the page is resampled to square pixels
  (fax: 204 x 98 dpi).
- What a page's images would take decoded is measured from their headers before a byte is
  decoded (``PageTooLarge``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from docindex.worker.options import OcrOptions

if TYPE_CHECKING:
    from PIL import Image

MiB = 1024 * 1024

# Files are opened per page and closed before the page is recognized, never
# cached: opening costs ~3 ms (PDF, page 250 of 300) or ~9 ms (TIFF, frame 290)
# against ~1 s of OCR, while an open PDFium document keeps every object it has
# parsed (memory grew ~0.6 MiB per page read) and an open handle would keep a
# finished job's deleted temporary file on disk.


@contextmanager
def open_pdf(path: str) -> Iterator[Any]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        yield pdf
    finally:
        pdf.close()


@contextmanager
def open_image(path: str, options: OcrOptions) -> Iterator[Image.Image]:
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


# -- PDF pages ---------------------------------------------------------------


def pdf_page(path: str, index: int, options: OcrOptions) -> tuple[str | tuple[Image.Image, int], str | None, str]:
    """The page's text layer if it can be trusted (``extract.textlayer``), else its image as rendered,
    and why it is OCR'd; and the text layer of a page OCR'd only because its layer is short, when the
    layer is otherwise clean (a chart's axis labels: what the OCR reads beside it, ``ocr.py``)."""
    from docindex.extract.textlayer import SPARSE, judge, read_text_layer

    with open_pdf(path) as pdf:
        page = pdf[index]
        try:
            layer = read_text_layer(page)
            verdict = judge(layer, min_chars=options.min_text_chars)
            if verdict.trusted:
                return layer.text, None, ""
            short = layer.text if verdict.reason == SPARSE and judge(layer, min_chars=1).trusted else ""
            _check_page_images(page, options)
            return _render(page, options, scan_resolution(page)), verdict.reason, short
        finally:
            page.close()


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


def scan_resolution(page: Any) -> tuple[float, float] | None:
    """The horizontal and vertical resolution of the page's scan: of its one image when the page is
    exactly one upright image covering it (a scanner's or a fax server's page), else None."""
    import pypdfium2.raw as pdfium_c

    if page.get_rotation() % 360:
        return None
    # Top-level objects only: a page that is anything but one image (text,
    # vector drawing, several images, a form XObject) is rendered at OCR_DPI.
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
        return None  # rotated, mirrored, sheared or partial: rendered at OCR_DPI
    # Each axis on its own: a fax server's page holds a 204 x 98 dpi image (non-square pixels).
    px_width, px_height = image.get_px_size()
    dpi = (px_width / ((right - left) / 72.0), px_height / ((top - bottom) / 72.0))
    return dpi if all(50 <= value <= 2400 for value in dpi) else None


def _render(page: Any, options: OcrOptions, dpi: tuple[float, float] | None = None) -> tuple[Image.Image, int]:
    """The page as PDFium shows it, in grey, at ``dpi`` (its scan's own resolution, each axis its own:
    the bitmap's pixels are the scan's samples) or ``OCR_DPI``; resampled to square pixels at about
    ``OCR_DPI`` (``scale_to``).

    Never the image's samples themselves: they are what the page shows only when the image's
    dictionary says nothing more (no soft mask, stencil, ``/Decode``, palette or other colour space),
    which PDFium does not tell; rendered onto the scan's own pixel grid the page comes out
    pixel-identical to those samples where they are exact, in the same time (docs/ocr-worker.md).
    """
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    width_pt, height_pt = page.get_size()
    xdpi, ydpi = dpi or (float(options.dpi), float(options.dpi))
    # A poster-sized page at 300 dpi would be gigapixels: cap the bitmap.
    pixels = width_pt * xdpi / 72.0 * height_pt * ydpi / 72.0
    if pixels > options.max_pixels:
        shrink = math.sqrt(options.max_pixels / pixels)
        xdpi, ydpi = xdpi * shrink, ydpi * shrink
    width, height = max(1, round(width_pt * xdpi / 72.0)), max(1, round(height_pt * ydpi / 72.0))
    # An 8-bit grey bitmap: PDFium's grey device converts the colours as it draws (FPDF_GRAYSCALE would
    # convert them again, to the same pixels, at 5x the time on an A4 grey scan). The page is
    # stretched onto width x height: the two axes keep their own resolution.
    bitmap = pdfium.PdfBitmap.new_native(width, height, format=pdfium_c.FPDFBitmap_Gray)
    bitmap.fill_rect((255, 255, 255, 255), 0, 0, width, height)
    pdfium_c.FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, pdfium_c.FPDF_ANNOT)
    return scale_to(_to_pil(bitmap), (width * 72.0 / width_pt, height * 72.0 / height_pt), options)


def _to_pil(bitmap: Any) -> Image.Image:
    """A PIL copy of a PDFium bitmap: ``to_pil`` shares the bitmap's memory, freed with the bitmap."""
    image = bitmap.to_pil()
    try:
        return image.copy()
    finally:
        image.close()


# -- image files -------------------------------------------------------------


def image_page(path: str, index: int, options: OcrOptions) -> tuple[Image.Image, int]:
    from PIL import ImageOps

    with open_image(path, options) as image:
        image.seek(index)
        dpi = resolution(image, options)
        scaled = _fit_decoded(image, options)
        dpi = (dpi[0] * scaled, dpi[1] * scaled)
        # Phone photos are stored sideways with an EXIF orientation tag (a copy either way);
        # orientations 5-8 turn the image a quarter, which swaps the axes' resolutions.
        if image.getexif().get(_EXIF_ORIENTATION, 1) in (5, 6, 7, 8):
            dpi = (dpi[1], dpi[0])
        frame = _ocr_ready(ImageOps.exif_transpose(image))
    return scale_to(frame, dpi, options)


_EXIF_ORIENTATION = 0x0112


def resolution(image: Image.Image, options: OcrOptions) -> tuple[float, float]:
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


def scale_to(image: Image.Image, dpi: float | tuple[float, float], options: OcrOptions) -> tuple[Image.Image, int]:
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
