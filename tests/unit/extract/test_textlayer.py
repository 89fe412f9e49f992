"""The text-layer judge (extract/textlayer.py) on real and broken PDFs, and what the indexer makes of its verdicts."""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest

from devkit.ocr_defects import FIXTURES
from docindex.extract import ExtractionLimits, extract
from docindex.extract.textlayer import TextLayer, judge, read_text_layer


def verdicts(name: str) -> list[str]:
    pdf = pdfium.PdfDocument(str(FIXTURES / name))
    out = []
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            verdict = judge(read_text_layer(page, min_chars=16), min_chars=16)
        finally:
            page.close()
        out.append("trusted" if verdict.trusted else str(verdict.reason))
    pdf.close()
    return out


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # controls: LibreOffice's report, LaTeX's vertical Japanese, an invoice PDFium flags as unmapped yet reads right
        ("report.pdf", ["trusted", "trusted", "trusted"]),
        ("pdfminer-jo.pdf", ["trusted"]),
        ("pdfminer-issue-625-identity-cmap.pdf", ["trusted", "trusted"]),
        # fonts without /ToUnicode: PDFium hands out the glyphs' codes
        ("report-no-tounicode.pdf", ["control_characters"] * 3),
        ("pdfminer-issue-791-non-unicode-cmap.pdf", ["control_characters"]),
        ("type3-contract.pdf", ["control_characters"]),
        # later pages decoding to U+25A0
        ("report-placeholder-pages.pdf", ["trusted", "placeholder_run", "placeholder_run"]),
        # a scanned last page; a chart with a few labels
        ("contract-last-page-scanned.pdf", ["trusted", "trusted", "no_text_layer"]),
        ("pdfminer-matplotlib.pdf", ["sparse_text_layer"]),
    ],
)
def test_each_page_of_real_and_broken_pdfs_is_judged(name: str, expected: list[str]) -> None:
    assert verdicts(name) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("(cid:12)(cid:34)(cid:56)(cid:78) 報告書の本文がここに続きます", "cid_codes"),
        ("報告書\ufffd\ufffd\ufffd\ufffd本文\ufffd\ufffd\ufffdがここに", "replacement_characters"),
        ("\ue001\ue002\ue003\ue004\ue005 見積書 \ue006\ue007\ue008\ue009\ue00a\ue00b\ue00c\ue00d", "private_use"),
        # UTF-8 read as Windows-1252: Japanese turned into accented Latin
        ("æ—¥æœ¬ã®ä¼šç¤¾ã§ã™ã€‚æ—¥æœ¬èªžã®æ–‡æ›¸ 会社", "script_mix"),
        # CIDs taken for code points: Armenian, Hebrew, Arabic, Thai letters among kanji
        ("会議 ԱԲԳԴԵԶԷԸ אבגדהוזח ابتثجحخد กขคงจฉชซ 議事録", "script_mix"),
    ],
)
def test_text_no_real_page_holds_is_not_trusted(text: str, reason: str) -> None:
    assert judge(TextLayer(text), min_chars=16).reason == reason


@pytest.mark.parametrize(
    "text",
    [
        "四半期売上報告 東京都の売上は前年同期比 12% 増。Quarterly revenue grew in Tokyo.",
        "αβγ 係数の推定値は β = 0.42 であった。標準誤差は 0.03 である。",
        "Der schnelle braune Fuchs springt über den faulen Hund. Le renard brun « rapide ».",
        "第1章 総則 ................................ 5\n第2章 組織 ................................ 9",
    ],
)
def test_ordinary_text_is_trusted(text: str) -> None:
    assert judge(TextLayer(text), min_chars=16).trusted


def test_the_indexer_sends_pdfs_with_lying_or_scanned_pages_to_the_worker_without_their_garbage() -> None:
    limits = ExtractionLimits()

    def extracted(name: str) -> tuple[str | None, str]:
        doc = extract((FIXTURES / name).read_bytes(), name, limits)
        return doc.ocr_reason, doc.text

    assert extracted("report.pdf")[0] is None
    reason, text = extracted("report-placeholder-pages.pdf")
    # page 1 is indexed at once; pages 2-3 wait for the worker
    assert reason == "untrusted_text_layer"
    assert "営業報告書" in text
    assert "■" not in text
    assert extracted("report-no-tounicode.pdf") == ("untrusted_text_layer", "")
    reason, text = extracted("contract-last-page-scanned.pdf")
    assert reason == "scanned_pages"
    assert "物流倉庫" in text
    assert extracted("pdfminer-issue-625-identity-cmap.pdf")[0] is None
