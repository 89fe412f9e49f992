"""Plain text, CSV and Markdown: the Japanese encoding cascade."""

from __future__ import annotations

import pytest

from devkit.samples import make_csv, make_text
from docindex.extract import ExtractionLimits, extract
from docindex.extract.encoding import decode, japanese_score

CP932_SPECIALS = "①髙﨑～"


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_cp932_extensions_survive(limits: ExtractionLimits, newline: str) -> None:
    text = f"社員名簿\n髙橋 一郎 ①総務\n山﨑 花子 ②経理\n受付 9:00～18:00 {CP932_SPECIALS}\n"
    doc = extract(make_text(text, "cp932", newline=newline), "名簿.txt", limits)
    assert doc.error is None
    assert doc.encoding == "cp932"
    assert doc.text == text.strip()
    for ch in CP932_SPECIALS:
        assert ch in doc.text


def test_euc_jp(limits: ExtractionLimits) -> None:
    text = "会議議事録\n東京都千代田区の本社で四半期売上報告を行った。"
    doc = extract(make_text(text, "euc_jp"), "memo.txt", limits)
    assert (doc.encoding, doc.text) == ("euc_jp", text)


def test_iso_2022_jp_as_windows_writes_it(limits: ExtractionLimits) -> None:
    # ① is a NEC row-13 character Python's iso2022_jp codec rejects; ～ is
    # JIS 0x2141, which Windows reads as U+FF5E (as CP932 does).
    text = "①東京都の見積書 ～ 10月分"
    data = make_text(text, "iso-2022-jp")
    assert data.startswith(b"\x1b$B")
    assert max(data) < 0x80
    doc = extract(data, "mail.txt", limits)
    assert (doc.encoding, doc.text) == ("iso-2022-jp", text)


def test_iso_2022_jp_standard_codec_output(limits: ExtractionLimits) -> None:
    text = "東京都の会議議事録です。"
    doc = extract(text.encode("iso2022_jp"), "mail.txt", limits)
    assert doc.text == text


@pytest.mark.parametrize(
    ("encoding", "bom", "expected_encoding"),
    [
        ("utf-16-le", True, "utf-16-le"),
        ("utf-16-be", True, "utf-16-be"),
        ("utf-16", False, "utf-16-le"),  # Python writes a BOM itself
        ("utf-8", True, "utf-8"),
        ("utf-32-le", True, "utf-32-le"),
    ],
)
def test_byte_order_marks(limits: ExtractionLimits, encoding: str, bom: bool, expected_encoding: str) -> None:
    text = f"東京都 quarterly revenue {CP932_SPECIALS}"
    doc = extract(make_text(text, encoding, bom=bom), "bom.txt", limits)
    assert doc.kind == "text"
    assert (doc.encoding, doc.text) == (expected_encoding, text)


def test_utf16_without_bom_is_text(limits: ExtractionLimits) -> None:
    doc = extract("Tokyo quarterly revenue 東京".encode("utf-16-le"), "noBOM.txt", limits)
    assert (doc.kind, doc.text) == ("text", "Tokyo quarterly revenue 東京")


def test_plain_utf8_and_ascii(limits: ExtractionLimits) -> None:
    assert extract(make_text("東京都 見積書"), "a.txt", limits).encoding == "utf-8"
    ascii_doc = extract(b"quarterly revenue\n", "a.txt", limits)
    assert (ascii_doc.encoding, ascii_doc.text) == ("ascii", "quarterly revenue")


_SHORT = ["東京", "会議", "見積書", "あ", "テスト"]
_SHORT_CP932_ONLY = ["髙橋", "山﨑", "①", "～", "㈱サンプル"]


@pytest.mark.parametrize(
    ("text", "encoding"),
    [(t, e) for t in _SHORT for e in ("cp932", "euc_jp", "utf-8")]
    + [(t, e) for t in _SHORT_CP932_ONLY for e in ("cp932", "utf-8")],
)
def test_short_strings(text: str, encoding: str) -> None:
    # charset-normalizer labels short EUC-JP as cp949 (docs/extraction.md); the cascade must not.
    assert decode(make_text(text, encoding)).text == text


def test_western_text_falls_back_sensibly() -> None:
    decoded = decode("café résumé naïve".encode("cp1252"))
    assert decoded.text == "café résumé naïve"


def test_csv_and_markdown_content_types(limits: ExtractionLimits) -> None:
    csv_doc = extract(make_csv([["取引先", "所在地"], ["株式会社サンプル", "東京都港区"]], "cp932"), "一覧.csv", limits)
    assert (csv_doc.content_type, csv_doc.encoding) == ("text/csv", "cp932")
    # a CSV file is a table: its rows read with their header
    assert csv_doc.text == "取引先・所在地\n取引先 株式会社サンプル・所在地 東京都港区"
    md = extract(make_text("# 設計メモ\n\n- 東京都"), "README.md", limits)
    assert (md.content_type, md.text) == ("text/markdown", "# 設計メモ\n\n- 東京都")


def test_japanese_score_separates_readings() -> None:
    data = "会議議事録です".encode("euc_jp")
    assert japanese_score(data.decode("euc_jp")) > japanese_score(data.decode("cp932", "replace"))


def test_mostly_cp932_with_one_stray_byte(limits: ExtractionLimits) -> None:
    text = "四半期売上報告。東京都の売上は前年同期比で増加しました。" * 3
    data = make_text(text, "cp932") + b"\xff" + make_text("以上", "cp932")
    doc = extract(data, "a.txt", limits)
    assert doc.encoding == "cp932"
    assert text in doc.text
