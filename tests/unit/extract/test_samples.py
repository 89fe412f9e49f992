"""The sample generators: deterministic, well formed, and the demo corpus is searchable."""

from __future__ import annotations

import io
import unicodedata
import zipfile

import pytest

from docindex import samples
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
    monkeypatch.setattr(samples, "_JA_FONT_CANDIDATES", ())
    monkeypatch.setattr(samples.shutil, "which", lambda _: None)
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
    assert {"pdf", "docx", "xlsx", "pptx", "html", "txt", "md", "csv", "png"} <= extensions
    docs = {key: extract(data, key, limits) for key, data in corpus}
    assert all(doc.error is None for doc in docs.values()), {k: d.error for k, d in docs.items() if d.error}
    everything = unicodedata.normalize("NFKC", "\n".join(d.text for d in docs.values())).lower()
    for word in ("四半期売上報告", "quarterly revenue", "東京都", "会議議事録", "見積書", "髙橋"):
        assert word in everything, word
    ocr = sorted(doc.ocr_reason for doc in docs.values() if doc.ocr_reason)
    assert ocr == ["image", "scanned_pdf"]
