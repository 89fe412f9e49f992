"""A small picture of one page: PDF and scan pages rendered on demand from the object.

Rendered when asked rather than at index time (issue 28 weighed both, docs/performance.md,
"Pages"): most pages of most files are never previewed, so rendering every page at index
time would cost every file's pages in time and storage to save a fraction of a second on the
few that are looked at; a preview is a private, cacheable answer (``ETag``), so looking again
costs nothing.

Bounded in pixels, bytes and time: the longest edge is ``SEARCH_PREVIEW_MAX_EDGE`` pixels; an
object larger than ``SEARCH_PREVIEW_MAX_OBJECT_BYTES`` is not read (the page's text is shown
instead); a page whose images declare more pixels than the decode budget is refused before
PDFium decodes anything (the way the OCR worker refuses them); the object is streamed to a
temporary file, never held in memory whole; and the function's own timeout ends anything else.
Formats without a renderer (slides, sheets, mail parts) answer the page's text.

Asked with the query it was found by, an OCR'd page has the query's words marked where the OCR
worker kept their boxes (``docindex.search_api.marks``): a translucent yellow over each match,
the rest of the picture unchanged.
"""

from __future__ import annotations

import io
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# PDFium is not thread-safe (docindex.extract.pdf); the local gateway serves requests in threads.
_RENDER_LOCK = threading.Lock()
MiB = 1024 * 1024
# Bytes one decoded image of a page may take (4 bytes a pixel: PDFium's bitmaps are BGRA).
DECODE_BUDGET = 256 * MiB
JPEG_QUALITY = 70
# The marks: yellow, at this opacity over the page (the words stay readable under it).
MARK_COLOUR = (255, 214, 0)
MARK_OPACITY = 0.45


class PreviewRefused(Exception):
    """The page cannot be pictured within the bounds (too large, unreadable): its text is shown instead."""


@dataclass(frozen=True)
class PageImage:
    """A rendered page: JPEG bytes and its size in pixels."""

    jpeg: bytes
    width: int
    height: int


def renderer_for(content_type: str | None) -> str | None:
    """``pdf`` or ``image`` for the formats pictured from the object, None for the others."""
    if content_type == "application/pdf":
        return "pdf"
    if content_type in ("image/tiff", "image/png", "image/jpeg", "image/gif", "image/bmp", "image/webp"):
        return "image"
    return None


def fetch_to_file(s3: Any, bucket: str, key: str, *, version_id: str | None, max_bytes: int, directory: str) -> Path:
    """Stream the object to a temporary file (deleted by the caller); ``PreviewRefused`` above ``max_bytes``."""
    params: dict[str, Any] = {"Bucket": bucket, "Key": key}
    if version_id:
        params["VersionId"] = version_id
    response = s3.get_object(**params)
    body = response["Body"]
    try:
        size = int(response.get("ContentLength") or 0)
        if size > max_bytes:
            raise PreviewRefused(f"the file is {size:,} bytes: previews read at most {max_bytes:,}")
        handle = tempfile.NamedTemporaryFile(dir=directory, suffix=".preview", delete=False)  # noqa: SIM115
        with handle:
            written = 0
            for chunk in body.iter_chunks(4 * MiB):
                written += len(chunk)
                if written > max_bytes:
                    Path(handle.name).unlink(missing_ok=True)
                    raise PreviewRefused(f"the file is over {max_bytes:,} bytes")
                handle.write(chunk)
        return Path(handle.name)
    finally:
        body.close()


Box = tuple[float, float, float, float]


def render(
    path: Path, kind: str, number: int, max_edge: int, marks: list[Box] | None = None, *, turn: int = 0
) -> PageImage:
    """Page ``number`` (from 1) of a PDF or image file as a JPEG whose longest edge is at most ``max_edge``,
    with ``marks`` (boxes as fractions of the page as stored) tinted, then turned ``turn`` degrees
    counter-clockwise (a quarter turn: how OCR read the page upright), the marks with it."""
    if kind == "pdf":
        with _RENDER_LOCK:
            return _render_pdf(path, number - 1, max_edge, marks or [], turn)
    return _render_image(path, number - 1, max_edge, marks or [], turn)


def pdf_quote_marks(path: Path, number: int, quote: str) -> list[Box]:
    """The boxes (fractions of the page) of an answer's quote in page ``number``'s text layer: each of its lines
    found by PDFium's text search, the rectangles of its characters; none when a line is not found as written."""
    import pypdfium2 as pdfium

    out: list[Box] = []
    with _RENDER_LOCK:
        try:
            pdf = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError:
            return []
        try:
            if not 0 < number <= len(pdf):
                return []
            page = pdf[number - 1]
            width, height = page.get_size()
            text = page.get_textpage()
            for piece in (line.strip() for line in quote.split("\n")):
                if len(piece) < 2 or width <= 0 or height <= 0:
                    continue
                searcher = text.search(piece, match_case=False)
                found = searcher.get_next()
                if found is None:
                    continue
                index, count = found
                for i in range(text.count_rects(index, count)):
                    left, bottom, right, top = text.get_rect(i)
                    out.append((left / width, 1 - top / height, right / width, 1 - bottom / height))
        finally:
            pdf.close()
    return out[:500]


def upright(image: Any, turn: int) -> Any:
    """``image`` turned ``turn`` degrees counter-clockwise (0, 90, 180 or 270)."""
    from PIL import Image

    quarter = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}
    return image.transpose(quarter[turn]) if turn in quarter else image


def mark(image: Any, marks: list[Box]) -> Any:
    """``image`` (RGB) with each box tinted yellow; pixels outside every box are left as they were."""
    from PIL import Image, ImageDraw

    if not marks:
        return image
    width, height = image.size
    tint = Image.new("RGB", image.size, MARK_COLOUR)
    mask = Image.new("L", image.size, 0)
    draw = ImageDraw.Draw(mask)
    for left, top, right, bottom in marks:
        box = (
            max(0, int(left * width)),
            max(0, int(top * height)),
            min(width - 1, round(right * width)),
            min(height - 1, round(bottom * height)),
        )
        if box[2] > box[0] and box[3] > box[1]:
            draw.rectangle(box, fill=round(255 * MARK_OPACITY))
    return Image.composite(tint, image, mask)


def _render_pdf(path: Path, index: int, max_edge: int, marks: list[Box], turn: int = 0) -> PageImage:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise PreviewRefused(f"the PDF cannot be opened: {exc}") from None
    try:
        if not 0 <= index < len(pdf):
            raise PreviewRefused(f"the PDF has {len(pdf)} pages")
        page = pdf[index]
        try:
            for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
                width, height = obj.get_px_size()
                if int(width) * int(height) * 4 > DECODE_BUDGET:
                    raise PreviewRefused(f"an image of {int(width):,} x {int(height):,} px on the page")
            width_pt, height_pt = page.get_size()
            scale = min(max_edge / max(width_pt, height_pt, 1.0), 4.0)
            bitmap = page.render(scale=scale, may_draw_forms=True)
            try:
                image = bitmap.to_pil()
                return _jpeg(upright(mark(image.convert("RGB"), marks), turn))
            finally:
                bitmap.close()
        finally:
            page.close()
    finally:
        pdf.close()


def _render_image(path: Path, index: int, max_edge: int, marks: list[Box], turn: int = 0) -> PageImage:
    import warnings

    from PIL import Image, ImageOps

    Image.MAX_IMAGE_PIXELS = DECODE_BUDGET // 4
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                if index >= int(getattr(image, "n_frames", 1) or 1):
                    raise PreviewRefused("no such page in the image")
                image.seek(index)
                # JPEG decodes at 1/2, 1/4 or 1/8 of its size for free: no more pixels than shown.
                image.draft("RGB", (max_edge, max_edge))
                frame = ImageOps.exif_transpose(image)
                frame.thumbnail((max_edge, max_edge))
                return _jpeg(upright(mark(frame.convert("RGB"), marks), turn))
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise PreviewRefused(f"the image cannot be read: {type(exc).__name__}") from None


def _jpeg(image: Any) -> PageImage:
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    return PageImage(out.getvalue(), image.width, image.height)
