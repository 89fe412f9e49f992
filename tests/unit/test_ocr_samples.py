"""Generated Japanese scans for the OCR tests (Pillow + a Japanese system font), and checks of the generator.

Stand-in for ``docindex.samples.make_scan_png`` / ``make_scan_pdf`` until that
module is on this branch: the same idea, a page image drawn at a known
resolution, so OCR accuracy can be measured against the exact text.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import subprocess
import unicodedata
from collections.abc import Sequence
from typing import Any

import pytest

A4_INCHES = (8.27, 11.69)
# A small page keeps the tests fast where accuracy is not the point.
CARD_INCHES = (5.0, 2.0)

REPORT_LINES = [
    "株式会社サンプル 第三四半期 業績報告書",
    "売上高は前年同期比で大幅に増加しました。",
    "東京本社と大阪支店の経費削減が順調に進んでいます。",
    "新製品の出荷は来月から開始する予定です。",
    "Quarterly revenue report for fiscal year 2026.",
]

# About 770 characters: a typical full A4 page of a Japanese business letter.
DENSE_PAGE = [
    "株式会社サンプルは、二〇二六年度第三四半期の業績を以下のとおり報告いたします。",
    "売上高は前年同期比で大幅に増加し、営業利益も計画を上回りました。",
    "東京本社と大阪支店では経費削減の取り組みが順調に進んでいます。",
    "新製品の出荷は来月から開始する予定であり、受注残高は過去最高です。",
    "海外事業については、為替の影響を受けたものの堅調に推移しました。",
    "今後とも株主の皆様のご支援を賜りますようお願い申し上げます。",
] * 4
DENSE_PAGE = [*DENSE_PAGE[:22], "Quarterly revenue report for fiscal year 2026."]


@functools.cache
def japanese_font() -> str:
    """A font file with Japanese glyphs (fonts-ipafont-gothic on Debian)."""
    if shutil.which("fc-match"):
        path = subprocess.run(
            ["fc-match", "-f", "%{file}", ":lang=ja"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if path:
            return path
    for candidate in (
        "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
        "/usr/share/fonts/truetype/fonts-japanese-gothic.ttf",
    ):
        if os.path.exists(candidate):
            return candidate
    pytest.skip("no Japanese font installed (apt-get install fonts-ipafont-gothic)")


def make_scan_image(
    lines: Sequence[str],
    *,
    dpi: int = 300,
    page_inches: tuple[float, float] = A4_INCHES,
    font_pt: float = 12.0,
    vertical: bool = False,
) -> Any:
    """A white page with ``lines`` in black, as a scanner would produce it (8-bit grey)."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = round(page_inches[0] * dpi), round(page_inches[1] * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    size = round(font_pt * dpi / 72)
    font = ImageFont.truetype(japanese_font(), size)
    margin = round(0.4 * dpi)
    if vertical:
        # 縦書き: columns from the right edge leftwards, characters top to bottom.
        x = width - margin - size
        for line in lines:
            y = margin
            for char in line:
                draw.text((x, y), char, font=font, fill=0)
                y += round(size * 1.1)
            x -= round(size * 1.8)
    else:
        y = margin
        for line in lines:
            draw.text((margin, y), line, font=font, fill=0)
            y += round(size * 1.8)
    return image


def make_scan_png(lines: Sequence[str], *, dpi: int = 300, **kwargs: Any) -> bytes:
    out = io.BytesIO()
    make_scan_image(lines, dpi=dpi, **kwargs).save(out, format="PNG", dpi=(dpi, dpi))
    return out.getvalue()


def make_scan_pdf(pages: Sequence[Sequence[str]], *, dpi: int = 300, **kwargs: Any) -> bytes:
    """A PDF of page images only (no text layer), like a scanner's output."""
    images = [make_scan_image(lines, dpi=dpi, **kwargs) for lines in pages]
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:], resolution=float(dpi))
    return out.getvalue()


def make_scan_tiff(pages: Sequence[Sequence[str]], *, dpi: int = 300, **kwargs: Any) -> bytes:
    """A multi-page TIFF (fax / document scanner style)."""
    images = [make_scan_image(lines, dpi=dpi, **kwargs) for lines in pages]
    out = io.BytesIO()
    images[0].save(
        out, format="TIFF", save_all=True, append_images=images[1:], dpi=(dpi, dpi), compression="tiff_deflate"
    )
    return out.getvalue()


def make_text_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A PDF with a real text layer (embedded IPA Gothic), as an office suite exports it."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("JapaneseGothic", japanese_font()))
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    for lines in pages:
        pdf.setFont("JapaneseGothic", 12)
        y = A4[1] - 72
        for line in lines:
            pdf.drawString(72, y, line)
            y -= 20
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def normalized(text: str) -> str:
    """NFKC without whitespace: what accuracy is measured on."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def accuracy(expected: str, got: str) -> float:
    """1 - character error rate (Levenshtein distance / expected length), after ``normalized``."""
    a, b = normalized(expected), normalized(got)
    if not a:
        return 1.0 if not b else 0.0
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return max(0.0, 1.0 - previous[-1] / len(a))


# -- checks of the generator itself ------------------------------------------


def test_scan_png_has_the_requested_resolution_and_size() -> None:
    from PIL import Image

    image = Image.open(io.BytesIO(make_scan_png(["テスト"], dpi=150, page_inches=CARD_INCHES)))
    assert image.size == (750, 300)
    assert round(image.info["dpi"][0]) == 150
    assert image.getextrema() == (0, 255)  # something was drawn


def test_scan_pdf_has_no_text_layer_and_one_page_per_entry() -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(make_scan_pdf([["一頁"], ["二頁"]], dpi=100, page_inches=CARD_INCHES))
    assert len(pdf) == 2
    assert pdf[0].get_textpage().get_text_bounded().strip() == ""


def test_accuracy_is_one_minus_character_error_rate() -> None:
    assert accuracy("東京本社", "東京 本社") == 1.0
    assert accuracy("東京本社", "東京本杜") == 0.75
    assert accuracy("ＡＢＣ", "ABC") == 1.0
