"""The sample generators: deterministic, well formed, and the demo corpus is searchable."""

from __future__ import annotations

import io
import unicodedata
import zipfile

import pytest

from devkit import samples
from devkit.samples import fonts
from docindex.extract import ExtractionLimits, extract


@pytest.mark.parametrize(
    "build",
    [
        lambda: samples.make_pdf(["東京都"], "題名"),
        lambda: samples.make_docx(["東京都"], title="題名", header="h", textbox="t", table=[["a"]]),
        lambda: samples.make_xlsx({"S": [["東京都", 1]]}),
        lambda: samples.make_pptx(["東京都"], ["ノート"]),
        lambda: samples.make_xls({"S": [["東京都"]]}),
        lambda: samples.make_encrypted_pdf(["東京都"]),
    ],
)
def test_generators_are_deterministic(build: object) -> None:
    assert callable(build)
    assert build() == build()


def test_scan_generators_are_deterministic(japanese_font: str) -> None:
    assert samples.make_scan_png(["東京都"], dpi=50) == samples.make_scan_png(["東京都"], dpi=50)
    assert samples.make_scan_pdf([["東京都"]], dpi=50) == samples.make_scan_pdf([["東京都"]], dpi=50)


def test_scan_png_has_the_requested_resolution(japanese_font: str) -> None:
    from PIL import Image

    image = Image.open(io.BytesIO(samples.make_scan_png(["請求書"], dpi=100)))
    assert image.size == (827, 1169)  # A4 at 100 dpi
    assert round(image.info["dpi"][0]) == 100
    assert image.getextrema()[0] == 0  # something black was drawn


def test_scan_page_size_in_inches_or_by_name() -> None:
    from PIL import Image

    card = Image.open(io.BytesIO(samples.make_scan_png(["テスト"], dpi=150, page=(5.0, 2.0))))
    assert card.size == (750, 300)
    assert round(card.info["dpi"][0]) == 150
    assert card.getextrema() == (0, 255)  # something was drawn
    letter = Image.open(io.BytesIO(samples.make_scan_png(["テスト"], dpi=100, page="letter")))
    assert letter.size == (850, 1100)
    with pytest.raises(ValueError, match="unknown page size"):
        samples.make_scan_png(["テスト"], page="A0")


def test_vertical_scan_runs_top_to_bottom_from_the_right() -> None:
    tall = samples.render_scan_page(["経費削減の取り組み"], 100, page=(2.0, 4.0), vertical=True)
    left, top, right, bottom = tall.point(lambda v: 255 - v).getbbox()
    assert bottom - top > 5 * (right - left)  # one tall column
    assert left > tall.width // 2
    # A column longer than the page goes on in the next column to the left.
    short = samples.render_scan_page(["経費削減の取り組み"], 100, page=(2.0, 2.5), vertical=True)
    left, _, right, bottom = short.point(lambda v: 255 - v).getbbox()
    assert right - left > 2 * 15  # two columns of 15 px characters
    assert bottom < short.height - 70


def test_scan_pdf_has_no_text_layer_and_one_page_per_entry() -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(samples.make_scan_pdf([["一頁"], ["二頁"]], dpi=100, page=(5.0, 2.0)))
    assert len(pdf) == 2
    assert pdf[0].get_size() == (360, 144)
    assert pdf[0].get_textpage().get_text_bounded().strip() == ""


def test_scan_tiff_has_one_frame_per_page() -> None:
    from PIL import Image, ImageSequence

    data = samples.make_scan_tiff([["一枚目"], ["二枚目"], ["三枚目"]], dpi=100, page=(5.0, 2.0))
    assert data == samples.make_scan_tiff([["一枚目"], ["二枚目"], ["三枚目"]], dpi=100, page=(5.0, 2.0))
    image = Image.open(io.BytesIO(data))
    assert len(list(ImageSequence.Iterator(image))) == 3
    assert image.size == (500, 200)
    assert round(image.info["dpi"][0]) == 100


def test_char_accuracy_is_one_minus_character_error_rate() -> None:
    assert samples.char_accuracy("東京本社", "東京 本社") == 1.0
    assert samples.char_accuracy("東京本社", "東京本杜") == 0.75
    assert samples.char_accuracy("ＡＢＣ", "ABC") == 1.0
    assert samples.char_accuracy("東京", "まったく違う長い文字列") == 0.0
    assert samples.char_accuracy("", "") == 1.0


def test_office_packages_are_well_formed() -> None:
    from lxml import etree

    for package in (
        samples.make_docx(["a"], header="h", footer="f", footnote="n", endnote="e", comment="c", textbox="t"),
        samples.make_xlsx({"S": [["a", 1, True]]}),
        samples.make_pptx(["a"], ["n"], tables={0: [["x"]]}, groups={0: ["g"]}),
    ):
        with zipfile.ZipFile(io.BytesIO(package)) as zf:
            assert zf.namelist()[0] == "[Content_Types].xml"
            for name in zf.namelist():
                etree.fromstring(zf.read(name))  # every part parses


def test_missing_font_names_the_debian_package(monkeypatch: pytest.MonkeyPatch) -> None:
    samples.find_japanese_font.cache_clear()
    monkeypatch.delenv("DOCINDEX_JA_FONT", raising=False)
    monkeypatch.setattr(fonts, "_JA_FONT_CANDIDATES", ())
    monkeypatch.setattr(fonts.shutil, "which", lambda _: None)
    try:
        with pytest.raises(RuntimeError, match="fonts-ipafont-gothic"):
            samples.find_japanese_font()
    finally:
        samples.find_japanese_font.cache_clear()


def test_iso_2022_jp_encoder_round_trips_through_python_for_jis_x_0208() -> None:
    text = "東京都の会議議事録です。"
    assert samples.make_text(text, "iso-2022-jp") == text.encode("iso2022_jp")


def test_corpus_keys_and_searchable_words(limits: ExtractionLimits, japanese_font: str) -> None:
    corpus = samples.sample_corpus()
    keys = [key for key, _ in corpus]
    assert len(set(keys)) == len(keys)
    assert any(" " in key for key in keys)
    extensions = {key.rsplit(".", 1)[-1] for key in keys}
    assert {"pdf", "docx", "xlsx", "pptx", "html", "txt", "md", "csv", "png", "doc", "msg", "zip"} <= extensions
    docs = {key: extract(data, key, limits) for key, data in corpus}
    assert all(doc.error is None for doc in docs.values()), {k: d.error for k, d in docs.items() if d.error}
    everything = unicodedata.normalize("NFKC", "\n".join(d.text for d in docs.values())).lower()
    for word in (
        "四半期売上報告",
        "quarterly revenue",
        "東京都",
        "会議議事録",
        "見積書",
        "髙橋",
        "会議室用プロジェクター",
        "格式測試",
    ):
        assert word in everything, word
    ocr = sorted(doc.ocr_reason for doc in docs.values() if doc.ocr_reason)
    # a scanned PNG, three scans as offices make them (sideways, fax, vertical notice), a scanned PDF
    assert ocr == ["image", "image", "image", "image", "scanned_pdf"]
