"""Pages as offices scan them (issue 26), on the defect corpus: skew, fax resolution, vertical columns
read across, and (with real Tesseract, in this process) sideways and upside-down pages turned upright."""

from __future__ import annotations

import os

import pytest

from devkit.ocr_defects import FIXTURES, load_manifest
from docindex.worker import geometry, ocr, rasterize
from docindex.worker.recognize import Reading, japanese_share, merge_boxes, stacked_columns

# What the pool's initializer does; set before tesserocr is first used in this process.
os.environ["OMP_THREAD_LIMIT"] = "1"

OPTIONS = ocr.OcrOptions()
WORDS = {entry.name: entry.pages for entry in load_manifest()}


def page_image(name: str, index: int = 0) -> tuple[object, int]:
    image, dpi = rasterize.image_page(str(FIXTURES / name), index, OPTIONS)
    return image, dpi


@pytest.mark.parametrize(
    ("name", "angle"),
    [
        ("skew8-notice.tif", -8.0),  # turned 8° counter-clockwise by the copier: straightened clockwise
        ("skew-12-notice.png", 12.0),
        ("skew4-notice-photo.jpg", -4.0),  # a photo: grey, shaded
        ("tika-testRotated+10.tif", 10.0),  # Apache Tika's test page
        ("upright-notice.tif", 0.0),
        ("vertical-minutes.tif", 0.0),  # vertical writing: the columns are the lines
        ("rotated90-notice.tif", 0.0),  # sideways but straight
    ],
)
def test_skew_is_measured_from_the_lines_of_ink(name: str, angle: float) -> None:
    image, dpi = page_image(name)
    assert geometry.estimate_skew(image, dpi) == pytest.approx(angle, abs=0.7)


def test_correction_turns_by_quarters_exactly_and_straightens_on_white() -> None:
    from PIL import Image

    page = Image.new("L", (40, 20), 255)
    page.putpixel((0, 0), 0)
    turned = geometry.apply(page, geometry.Correction(rotation=90))
    assert turned.size == (20, 40)
    assert turned.getpixel((0, 39)) == 0  # the top-left corner went to the bottom left
    straightened = geometry.apply(page, geometry.Correction(skew=10.0))
    assert straightened.width > 40
    assert straightened.getpixel((0, 0)) == 255
    assert not geometry.Correction(skew=0.3)
    assert geometry.Correction(rotation=180)


@pytest.mark.parametrize(("name", "index"), [("fax-204x98-notice.tif", 0), ("fax-200x100-report-2pages.tif", 1)])
def test_fax_pages_get_square_pixels_at_the_ocr_resolution(name: str, index: int) -> None:
    from PIL import Image

    with Image.open(FIXTURES / name) as stored:
        stored.seek(index)
        xdpi, ydpi = stored.info["dpi"]
        inches = (stored.width / xdpi, stored.height / ydpi)
    image, dpi = page_image(name, index)
    # Given a page stored at 204 x 98 (or 200 x 100) dpi, When it is prepared for OCR,
    # Then both axes are at OCR_DPI: the page keeps its size in inches (not squashed to half height)
    assert dpi == OPTIONS.dpi
    assert image.width / dpi == pytest.approx(inches[0], rel=0.01)
    assert image.height / dpi == pytest.approx(inches[1], rel=0.01)


def test_a_fax_pdf_image_is_measured_on_both_axes() -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(FIXTURES / "fax-204x98-notice.pdf"))
    assert rasterize.scan_resolution(pdf[0]) == pytest.approx((204, 98), abs=1)


def test_a_resolution_without_a_unit_still_gives_the_pixels_aspect() -> None:
    from PIL import Image

    image = Image.new("1", (100, 50))
    image.info["resolution"] = (204.0, 98.0)
    assert rasterize.resolution(image, OPTIONS) == pytest.approx((300.0, 300 * 98 / 204))


def test_vertical_columns_read_across_show_as_stacked_narrow_lines() -> None:
    # Three columns read across: each "line" three characters from three columns, one under the other
    rows = [((1420, 740 + 46 * i, 1555, 780 + 46 * i), "防 各 避", 90.0) for i in range(8)]
    heading = [((205, 198, 872, 269), "社内行事のお知らせ", 90.0)]
    reading = Reading("", 84, vertical=False, lines=tuple(heading + rows))
    assert stacked_columns(reading) == [(1420, 740, 1555, 780 + 46 * 7)]
    # A short table of wide rows is not vertical writing
    table = [((200, 400 + 50 * i, 900, 440 + 50 * i), "避難訓練 十二月五日", 90.0) for i in range(8)]
    assert stacked_columns(Reading("", 84, vertical=False, lines=tuple(table))) == []


def test_helpers_for_mixed_pages() -> None:
    assert merge_boxes([(0, 0, 10, 10), (12, 0, 20, 10), (100, 100, 110, 110)], gap=5) == [
        (0, 0, 20, 10),
        (100, 100, 110, 110),
    ]
    assert japanese_share("健康診断 DML CHAT") == pytest.approx(4 / 11)
    assert japanese_share("") == 0.0


# -- with Tesseract -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rotation"),
    [("rotated90-notice.tif", 270), ("tesseract-phototest-rotated-180.png", 180)],
)
def test_a_sideways_or_upside_down_page_is_read_upright(name: str, rotation: int) -> None:
    kind = "pdf" if name.endswith(".pdf") else "image"
    page = ocr.process_page(str(FIXTURES / name), kind, 0, OPTIONS)
    assert page.rotation == rotation
    assert page.confidence is not None
    assert page.confidence >= 80
    for word in WORDS[name][0].words:
        assert word in page.text


def test_a_page_turned_upright_by_its_pdf_rotate_is_not_turned_again() -> None:
    page = ocr.process_page(str(FIXTURES / "rotate-attribute-notice.pdf"), "pdf", 0, OPTIONS)
    assert page.rotation == 0
    assert "健康診断" in page.text


def test_orientation_can_be_turned_off() -> None:
    name = "tesseract-phototest-rotated-L.png"
    page = ocr.process_page(str(FIXTURES / name), "image", 0, ocr.OcrOptions(orientation=False))
    assert page.rotation == 0
    assert "quick" not in page.text
