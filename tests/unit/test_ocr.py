"""docindex.worker.ocr with real Tesseract (jpn, jpn_vert) on generated scans, in this process (no pool, no servers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devkit.samples import char_accuracy, make_pdf, make_scan_pdf, make_scan_png, make_scan_tiff, render_scan_page
from devkit.samples.scans import IMAGE_KINDS, ImageKind, make_scan_pdf_image
from docindex.worker import ocr, rasterize, tesseract
from tests.support.scans import CARD_INCHES, LAYOUT, REPORT_LINES

# What the pool's initializer does; set before tesserocr is first used in this process.
os.environ["OMP_THREAD_LIMIT"] = "1"

OPTIONS = ocr.OcrOptions()


def write(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_tidy_text_drops_spaces_between_japanese_characters_only() -> None:
    raw = "株 式 会社 サンプル  Annual  report\n\n\n\n東京 本社 ( 2026 ) \n"
    assert tesseract.tidy_text(raw) == "株式会社サンプル  Annual  report\n\n東京本社 ( 2026 )"


def test_png_scan_is_read_at_its_resolution(tmp_path: Path) -> None:
    # Given a 300 dpi scan of a Japanese report with an English line
    path = write(tmp_path, "scan.png", make_scan_png(REPORT_LINES, dpi=300, page=(8.27, 3.0), **LAYOUT))
    # When its only page is processed
    info = ocr.probe(path, "image", OPTIONS)
    page = ocr.process_page(path, "image", 0, OPTIONS)
    # Then the text comes back nearly exact, horizontal, at 300 dpi
    assert info.page_count == 1
    assert page.error is None
    assert (page.source, page.dpi, page.vertical) == ("ocr", 300, False)
    assert char_accuracy("".join(REPORT_LINES), page.text) >= 0.95
    assert "東京本社" in page.text
    assert "revenue" in page.text


def test_vertical_japanese_is_detected_and_read_with_the_vertical_model(tmp_path: Path) -> None:
    lines = REPORT_LINES[1:4]
    path = write(tmp_path, "tategaki.png", make_scan_png(lines, dpi=300, page=(3.0, 6.5), vertical=True, **LAYOUT))
    page = ocr.process_page(path, "image", 0, OPTIONS)
    assert page.vertical is True
    assert char_accuracy("".join(lines), page.text) >= 0.9
    assert "経費削減" in page.text


def test_vertical_detection_can_be_turned_off(tmp_path: Path) -> None:
    path = write(
        tmp_path, "tategaki.png", make_scan_png(["経費削減"], dpi=150, page=(1.0, 3.0), vertical=True, **LAYOUT)
    )
    page = ocr.process_page(path, "image", 0, ocr.OcrOptions(vertical="never"))
    assert page.vertical is False


def test_pdf_pages_use_the_text_layer_when_there_is_one_and_ocr_otherwise(tmp_path: Path) -> None:
    # Given one PDF with a text layer and one scanned PDF
    text_pdf = write(tmp_path, "office.pdf", make_pdf(["議事録 第3回 経営会議 売上目標を確認した"]))
    scan_pdf = write(tmp_path, "scan.pdf", make_scan_pdf([["見積書 合計金額"]], dpi=200, page=CARD_INCHES, **LAYOUT))
    # When their first pages are processed
    from_text = ocr.process_page(text_pdf, "pdf", 0, OPTIONS)
    from_scan = ocr.process_page(scan_pdf, "pdf", 0, OPTIONS)
    # Then the text layer is used as is, and the scan is OCR'd from its embedded image at its own resolution
    assert from_text.source == "text_layer"
    assert from_text.text == "議事録 第3回 経営会議 売上目標を確認した"
    assert from_scan.source == "ocr"
    assert from_scan.dpi == 300  # resampled from 200 to OCR_DPI
    assert "見積書" in from_scan.text


def test_scanned_pdf_page_that_is_not_a_single_image_is_rendered(tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    # A page rotated by /Rotate: the embedded image alone would be sideways.
    source = pdfium.PdfDocument(make_scan_pdf([["請求書"]], dpi=200, page=CARD_INCHES, **LAYOUT))
    source[0].set_rotation(90)
    path = tmp_path / "rotated.pdf"
    source.save(str(path))
    assert rasterize.scan_resolution(pdfium.PdfDocument(str(path))[0]) is None
    page = ocr.process_page(str(path), "pdf", 0, ocr.OcrOptions(dpi=200))
    assert page.source == "ocr"
    assert page.error is None


def _dark(image: object) -> object:
    import numpy as np

    return np.asarray(image.convert("L")) < 128  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", [kind for kind in IMAGE_KINDS if kind != "plain"])
def test_a_page_image_is_read_as_the_page_shows_it(tmp_path: Path, kind: ImageKind) -> None:
    # Given a scanned page whose one image is stored as scanners, fax servers and PDF writers do: drawn
    # through a soft mask, a stencil mask, inverted by /Decode, through a palette, in CMYK, 16 bits a sample
    lines = ["見積書 合計金額", "請求書 Invoice"]
    stored = write(tmp_path, f"{kind}.pdf", make_scan_pdf_image(lines, kind, dpi=200, page=CARD_INCHES, **LAYOUT))
    plain = write(tmp_path, "plain.pdf", make_scan_pdf_image(lines, "plain", dpi=200, page=CARD_INCHES, **LAYOUT))
    # When the worker takes its page image and reads it
    (image, dpi), _, _ = rasterize.pdf_page(stored, 0, OPTIONS)
    (expected, _), _, _ = rasterize.pdf_page(plain, 0, OPTIONS)
    page = ocr.process_page(stored, "pdf", 0, OPTIONS)
    # Then the image is the page as it is shown (dark text where the plain scan's is, a white page
    # elsewhere: not the image's own samples, a dark square for the soft mask, inverted for the stencil),
    # at the scan's resolution resampled to OCR_DPI, and its words are read
    assert (image.size, dpi) == (expected.size, 300)
    assert (_dark(image) != _dark(expected)).mean() < 0.01
    assert page.error is None
    assert "見積書" in page.text
    assert "Invoice" in page.text


def test_a_short_clean_text_layer_is_the_page_s_text_unless_the_scan_holds_more(tmp_path: Path) -> None:
    import io

    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    from devkit.ocr_defects import FIXTURES

    # Given a chart whose only text is its axis labels (pdfminer.six's matplotlib chart: a clean text layer,
    # too short to trust alone, which the OCR read 8 6 4 2 0 0 2 1 4 1 6 1 8)
    chart = str(FIXTURES / "pdfminer-matplotlib.pdf")
    # ... and a scanned page stamped with a short text ("DRAFT")
    scan = io.BytesIO()
    render_scan_page(["見積書 合計金額 御中"], 200, page=CARD_INCHES, **LAYOUT).save(scan, format="PNG")
    scan.seek(0)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=(CARD_INCHES[0] * 72, CARD_INCHES[1] * 72))
    pdf.drawImage(ImageReader(scan), 0, 0, width=CARD_INCHES[0] * 72, height=CARD_INCHES[1] * 72)
    pdf.drawString(300, 10, "DRAFT")
    pdf.save()
    stamped = write(tmp_path, "stamped.pdf", buffer.getvalue())
    # When both are read
    labels = ocr.process_page(chart, "pdf", 0, OPTIONS)
    read = ocr.process_page(stamped, "pdf", 0, OPTIONS)
    # Then both were OCR'd for their short layers; the chart's text is its layer, exact, as the OCR found
    # nothing more; the scan's is what the OCR read
    assert (labels.source, labels.reason, read.source, read.reason) == ("ocr", "sparse_text_layer") * 2
    assert labels.text == "0\n2468\n02468"
    assert "見積書" in read.text
    assert read.text != "DRAFT"


def test_multi_page_tiff_pages_are_read_one_by_one(tmp_path: Path) -> None:
    path = write(
        tmp_path, "fax.tif", make_scan_tiff([["一枚目 注文書"], ["二枚目 納品書"]], dpi=200, page=CARD_INCHES, **LAYOUT)
    )
    info = ocr.probe(path, "image", OPTIONS)
    pages = [ocr.process_page(path, "image", i, OPTIONS) for i in range(info.page_count)]
    assert info.page_count == 2
    assert "注文書" in pages[0].text
    assert "納品書" in pages[1].text


def test_transparent_and_colour_images_are_flattened_on_white(tmp_path: Path) -> None:
    image = render_scan_page(["領収書"], 200, page=CARD_INCHES, **LAYOUT)
    rgba = image.convert("RGBA")
    rgba.putalpha(image.point(lambda v: 255 - v))  # black text on a fully transparent page
    path = tmp_path / "receipt.png"
    rgba.save(path, dpi=(200, 200))
    page = ocr.process_page(str(path), "image", 0, OPTIONS)
    assert "領収書" in page.text


def test_corrupt_files_are_reported_not_raised(tmp_path: Path) -> None:
    png = write(tmp_path, "broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00garbage" * 50)
    pdf = write(tmp_path, "broken.pdf", b"%PDF-1.7\n" + b"garbage" * 50)
    assert ocr.probe(png, "image", OPTIONS).error == "corrupt"
    assert ocr.probe(pdf, "pdf", OPTIONS).error == "corrupt"


def test_truncated_image_fails_its_page_only(tmp_path: Path) -> None:
    data = make_scan_png(["途中で切れた画像"], dpi=100, page=CARD_INCHES, **LAYOUT)
    path = write(tmp_path, "cut.png", data[: len(data) // 2])
    assert ocr.probe(path, "image", OPTIONS).page_count == 1  # the header is fine
    page = ocr.process_page(path, "image", 0, OPTIONS)
    assert page.error == "corrupt"


def test_huge_pages_are_scaled_under_the_pixel_cap() -> None:
    from PIL import Image

    options = ocr.OcrOptions(dpi=300, max_pixels=1_000_000)
    scaled, dpi = rasterize.scale_to(Image.new("L", (3000, 3000), 255), 300, options)
    assert scaled.width * scaled.height <= 1_000_000
    assert dpi == 100
    same, same_dpi = rasterize.scale_to(Image.new("L", (500, 500), 255), 310, options)
    assert (same.size, same_dpi) == ((500, 500), 310)


def test_setup_check_names_missing_models() -> None:
    report = ocr.check_setup(ocr.OcrOptions(languages="jpn+klingon"))
    assert report.missing == ("klingon",)
    assert {"jpn", "jpn_vert"} <= set(report.languages)


def test_missing_model_directory_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tesseract, "_TESSDATA_CANDIDATES", ())
    monkeypatch.delenv("TESSDATA_PREFIX", raising=False)
    with pytest.raises(RuntimeError, match="OCR_TESSDATA_DIR"):
        tesseract.find_tessdata(str(tmp_path / "nowhere"))


def open_files() -> set[str]:
    fds = Path("/proc/self/fd")
    return {os.readlink(fd) for fd in fds.iterdir() if fd.is_symlink()} if fds.exists() else set()


def test_no_file_stays_open_after_a_page(tmp_path: Path) -> None:
    # An open PDFium document keeps every object it parsed (memory grows with each page read), and an
    # open handle would keep a finished job's deleted temporary file on disk: files are opened per page.
    pdf = write(tmp_path, "long.pdf", make_scan_pdf([["頁"]] * 3, dpi=50, page=CARD_INCHES, **LAYOUT))
    tif = write(tmp_path, "long.tif", make_scan_tiff([["頁"]] * 3, dpi=50, page=CARD_INCHES, **LAYOUT))
    for path, kind in ((pdf, "pdf"), (tif, "image")):
        assert ocr.probe(path, kind, OPTIONS).page_count == 3
        for index in range(3):
            ocr.process_page(path, kind, index, OPTIONS)
    assert not {pdf, tif} & open_files()
