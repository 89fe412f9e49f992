"""Scanned pages: Japanese text rendered with Pillow, as a scanner would deliver it (PNG, JPEG, TIFF, PDF).

Pages are 8-bit grey at a chosen dpi, in a Japanese TrueType font found on
the system (``fonts.find_japanese_font``); horizontal or 縦書き. Pillow and
reportlab are imported inside the functions that need them.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from typing import Any, Literal, TypedDict, Unpack

from devkit.samples.fonts import find_japanese_font
from devkit.samples.hostile import _pdf_objects

__all__ = [
    "IMAGE_KINDS",
    "SCAN_PAGE_SIZES",
    "ImageKind",
    "ScanLayout",
    "image_page_pdf",
    "make_scan_image",
    "make_scan_pdf",
    "make_scan_pdf_image",
    "make_scan_png",
    "make_scan_tiff",
    "render_scan_page",
]

# Named page sizes for scans, (width, height) in inches; any other size is given as such a pair.
SCAN_PAGE_SIZES: dict[str, tuple[float, float]] = {
    "A4": (210 / 25.4, 297 / 25.4),
    "A5": (148 / 25.4, 210 / 25.4),
    "B5": (182 / 25.4, 257 / 25.4),  # JIS B5, common for Japanese forms
    "letter": (8.5, 11.0),
}


def _page_inches(page: str | tuple[float, float]) -> tuple[float, float]:
    if isinstance(page, str):
        if page not in SCAN_PAGE_SIZES:
            raise ValueError(f"unknown page size {page!r}: one of {', '.join(SCAN_PAGE_SIZES)} or (width, height)")
        return SCAN_PAGE_SIZES[page]
    width, height = page
    if width <= 0 or height <= 0:
        raise ValueError(f"page size must be positive, got {page!r}")
    return width, height


class ScanLayout(TypedDict, total=False):
    """Layout keywords of the scan generators; see ``render_scan_page`` for their meaning and defaults."""

    page: str | tuple[float, float]
    font_size: float
    margin: float
    line_spacing: float
    vertical: bool


def render_scan_page(
    lines: Sequence[str],
    dpi: int = 300,
    *,
    page: str | tuple[float, float] = "A4",
    font_size: float = 10.5,
    margin: float = 20 / 25.4,
    line_spacing: float = 1.7,
    vertical: bool = False,
) -> Any:
    """A page at ``dpi`` with ``lines`` in black on white, 8-bit grey, like a scanner's output: a Pillow image.

    ``page`` is a name of ``SCAN_PAGE_SIZES`` or (width, height) in inches;
    ``font_size`` is in points; ``margin`` in inches on every side (20 mm);
    ``line_spacing`` is the distance between lines (columns when
    ``vertical``) in font sizes. ``vertical`` writes 縦書き: columns from the
    right edge leftwards, characters top to bottom. Lines longer than the page
    wrap (Japanese has no spaces to break at: by measured width, or height).
    """
    from PIL import Image, ImageDraw, ImageFont

    width_in, height_in = _page_inches(page)
    width, height = round(width_in * dpi), round(height_in * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    size = max(8, round(font_size / 72 * dpi))
    font = ImageFont.truetype(find_japanese_font(), size=size)
    edge = round(margin * dpi)
    line_height = round(font_size / 72 * dpi * line_spacing)
    if vertical:
        x = width - edge - size
        advance = round(size * 1.1)
        for text in lines:
            y = edge
            for ch in text:
                if y > edge and y + size > height - edge:
                    x -= line_height
                    y = edge
                draw.text((x, y), ch, fill=0, font=font)
                y += advance
            x -= line_height
        return image
    y = edge
    for text in lines:
        line = ""
        for ch in text:
            if line and draw.textlength(line + ch, font=font) > width - 2 * edge:
                draw.text((edge, y), line, fill=0, font=font)
                y += line_height
                line = ""
            line += ch
        draw.text((edge, y), line, fill=0, font=font)
        y += line_height
    return image


def make_scan_image(lines: Sequence[str], dpi: int = 300, *, fmt: str = "PNG", **layout: Unpack[ScanLayout]) -> bytes:
    """A scanned page as an image file (``fmt``: PNG, JPEG, TIFF, GIF, BMP, WEBP), ``dpi`` recorded."""
    image = render_scan_page(lines, dpi, **layout)
    buf = io.BytesIO()
    options: dict[str, Any] = {"dpi": (dpi, dpi)}
    if fmt.upper() == "JPEG":
        options["quality"] = 85
    elif fmt.upper() == "WEBP":
        options = {"quality": 85}
    image.save(buf, format=fmt.upper(), **options)
    return buf.getvalue()


def make_scan_png(lines: Sequence[str], dpi: int = 300, **layout: Unpack[ScanLayout]) -> bytes:
    """A scanned page holding ``lines`` of Japanese text, as PNG."""
    return make_scan_image(lines, dpi, fmt="PNG", **layout)


def make_scan_pdf(
    pages: Sequence[Sequence[str]], dpi: int = 300, *, title: str | None = None, **layout: Unpack[ScanLayout]
) -> bytes:
    """An image-only PDF (no text layer), one scanned page per entry, JPEG-compressed like a scanner's.

    Pages are rendered one at a time (an A4 page at 300 dpi is 8.7 MB of
    pixels), so long scans for soak tests stay small in memory.
    """
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    if not pages:
        raise ValueError("a PDF needs at least one page")
    width_in, height_in = _page_inches(layout.get("page", "A4"))
    width, height = width_in * 72, height_in * 72
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=(width, height), invariant=1)
    pdf.setCreator("docindex samples")
    pdf.setTitle(title or "")
    for lines in pages:
        jpeg = io.BytesIO()
        render_scan_page(lines, dpi, **layout).save(jpeg, format="JPEG", quality=85, dpi=(dpi, dpi))
        jpeg.seek(0)
        # reportlab embeds JPEG data as is (DCTDecode), like a scanner driver.
        pdf.drawImage(ImageReader(jpeg), 0, 0, width=width, height=height)
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def make_scan_tiff(pages: Sequence[Sequence[str]], dpi: int = 300, **layout: Unpack[ScanLayout]) -> bytes:
    """A multi-page TIFF, one scanned page per entry, deflate-compressed (fax / document scanner style)."""
    if not pages:
        raise ValueError("a TIFF needs at least one page")
    first, *rest = [render_scan_page(lines, dpi, **layout) for lines in pages]
    buf = io.BytesIO()
    first.save(buf, format="TIFF", save_all=True, append_images=rest, dpi=(dpi, dpi), compression="tiff_deflate")
    return buf.getvalue()


def image_page_pdf(
    image_dict: bytes, data: bytes, width_pt: float, height_pt: float, *, extra: Sequence[bytes] = ()
) -> bytes:
    """A one-page PDF whose page is one image drawn over the whole page (a scanner's output).

    ``image_dict`` is the image's dictionary without ``/Length``; ``extra`` are further objects
    (numbered from 6 on: a soft mask, a palette) it may refer to.
    """
    # The fill colour is black: a stencil mask (/ImageMask) paints with it.
    content = b"q 0 g %.2f 0 0 %.2f 0 0 cm /Im1 Do Q" % (width_pt, height_pt)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im1 5 0 R >> >>"
        b" /Contents 4 0 R >>" % (width_pt, height_pt),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        image_dict[:-2] + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream",
        *extra,
    ]
    return _pdf_objects(objects)


ImageKind = Literal["plain", "smask", "stencil", "decode", "indexed", "cmyk", "gray16"]
# How scanners, fax servers and PDF writers store a page's one image; all but "plain" hold
# samples that are not what the page shows until the image's dictionary is applied to them.
IMAGE_KINDS: tuple[ImageKind, ...] = ("plain", "smask", "stencil", "decode", "indexed", "cmyk", "gray16")


def make_scan_pdf_image(lines: Sequence[str], kind: ImageKind, dpi: int = 300, **layout: Unpack[ScanLayout]) -> bytes:
    """A one-page scanned PDF whose page image is stored as ``kind`` (Flate-compressed, hand-built):

    - ``plain``: 8-bit DeviceGray, the page's own samples;
    - ``smask``: a uniformly dark RGB image whose soft mask (``/SMask``) carries the text: its samples
      are one colour, the page shows the text (OCRmyPDF's ``aspect.pdf`` is drawn that way);
    - ``stencil``: a 1-bit stencil mask (``/ImageMask true``, ``/Decode [1 0]``: the set bits paint
      the fill colour);
    - ``decode``: 8-bit DeviceGray stored inverted with ``/Decode [1 0]``;
    - ``indexed``: 8-bit indexes into a reversed grey palette (``/Indexed /DeviceRGB 255``);
    - ``cmyk``: DeviceCMYK, the text in black ink (K);
    - ``gray16``: 16-bit DeviceGray.
    """
    from PIL import Image, ImageOps

    page = render_scan_page(lines, dpi, **layout)
    width, height = page.size
    width_pt, height_pt = width * 72 / dpi, height * 72 / dpi
    grey = page.tobytes()
    ink_image = ImageOps.invert(page)
    ink = ink_image.tobytes()
    head = b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /Filter /FlateDecode " % (width, height)
    extra: list[bytes] = []
    if kind == "plain":
        entries, samples = b"/ColorSpace /DeviceGray /BitsPerComponent 8", grey
    elif kind == "smask":
        mask = zlib.compress(ink)
        extra.append(
            b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8"
            b" /Filter /FlateDecode /Length %d >>\nstream\n" % (width, height, len(mask)) + mask + b"\nendstream"
        )
        entries, samples = (
            b"/ColorSpace /DeviceRGB /BitsPerComponent 8 /SMask 6 0 R",
            b"\x60\x30\x80" * (width * height),
        )
    elif kind == "stencil":
        bits = page.point(lambda value: 255 if value < 128 else 0, mode="1")
        entries, samples = b"/ImageMask true /BitsPerComponent 1 /Decode [1 0]", bits.tobytes()
    elif kind == "decode":
        entries, samples = b"/ColorSpace /DeviceGray /BitsPerComponent 8 /Decode [1 0]", ink
    elif kind == "indexed":
        palette = bytes(value for index in range(256) for value in (255 - index,) * 3)
        entries = b"/ColorSpace [/Indexed /DeviceRGB 255 <%s>] /BitsPerComponent 8" % palette.hex().encode()
        samples = ink
    elif kind == "cmyk":
        entries = b"/ColorSpace /DeviceCMYK /BitsPerComponent 8"
        none = Image.new("L", page.size, 0)
        samples = Image.merge("CMYK", (none, none, none, ink_image)).tobytes()
    elif kind == "gray16":
        entries = b"/ColorSpace /DeviceGray /BitsPerComponent 16"
        # Each sample twice: v * 257, big-endian, the full 16-bit range.
        samples = Image.merge("LA", (page, page)).tobytes()
    else:
        raise ValueError(f"unknown image kind {kind!r}: one of {', '.join(IMAGE_KINDS)}")
    return image_page_pdf(head + entries + b" >>", zlib.compress(samples), width_pt, height_pt, extra=extra)
