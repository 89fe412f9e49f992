"""PDF: text per page, title, page count, scans, passwords, damage, bounds."""

from __future__ import annotations

import dataclasses
import unicodedata

import pytest

from devkit.samples import make_corrupt_pdf, make_encrypted_pdf, make_pdf, make_scan_pdf
from docindex.extract import Deadline, ExtractionLimits, extract

PAGE_1 = "四半期売上報告\n東京都の売上は前年同期比 12% 増。\nQuarterly revenue grew in Tokyo."
PAGE_2 = "担当：髙橋・山﨑 ①〜③ 9:00～18:00"
PAGE_3 = "会議議事録 第三頁"


@pytest.mark.parametrize("font", ["HeiseiKakuGo-W5", "HeiseiMin-W3"])
def test_text_title_and_page_count(limits: ExtractionLimits, font: str) -> None:
    doc = extract(make_pdf([PAGE_1, PAGE_2, PAGE_3], "四半期売上報告 Q3", font=font), "報告.pdf", limits)
    assert (doc.kind, doc.content_type, doc.error) == ("pdf", "application/pdf", None)
    assert doc.title == "四半期売上報告 Q3"
    assert doc.page_count == 3
    assert doc.ocr_reason is None
    # Pages in order, separated by a blank line; CP932-only characters intact.
    assert doc.text == f"{PAGE_1}\n\n{PAGE_2}\n\n{PAGE_3}"
    assert unicodedata.normalize("NFKC", doc.text).count("9:00~18:00") == 1


def test_no_title_is_none(limits: ExtractionLimits) -> None:
    assert extract(make_pdf([PAGE_1]), "a.pdf", limits).title is None


def test_image_only_pdf_is_a_scan(limits: ExtractionLimits, japanese_font: str) -> None:
    data = make_scan_pdf([["業務委託契約書", "甲と乙は契約を締結する。"], ["第二頁"]], dpi=72, title="契約書")
    doc = extract(data, "契約書.pdf", limits)
    assert (doc.ocr_reason, doc.page_count, doc.title, doc.error) == ("scanned_pdf", 2, "契約書", None)
    assert doc.text == ""


def test_typed_cover_with_scanned_body_is_a_scan(limits: ExtractionLimits) -> None:
    # The average is above the threshold, but most pages have no text layer.
    doc = extract(make_pdf([PAGE_1 * 3, "", "", ""]), "mixed.pdf", limits)
    assert doc.ocr_reason == "scanned_pdf"
    assert "四半期売上報告" in doc.text


def test_text_pdf_with_one_blank_page_is_not_a_scan(limits: ExtractionLimits) -> None:
    assert extract(make_pdf([PAGE_1, PAGE_2, ""]), "a.pdf", limits).ocr_reason is None


def test_user_password_is_encrypted(limits: ExtractionLimits) -> None:
    doc = extract(make_encrypted_pdf([PAGE_1], title="秘密"), "秘密.pdf", limits)
    assert (doc.kind, doc.error, doc.text) == ("pdf", "encrypted", "")


def test_owner_password_only_is_extracted(limits: ExtractionLimits) -> None:
    doc = extract(make_encrypted_pdf([PAGE_1], user_password="", title="印刷禁止"), "a.pdf", limits)
    assert (doc.error, doc.title, doc.text) == (None, "印刷禁止", PAGE_1)


@pytest.mark.parametrize("mode", ["garbage", "truncated"])
def test_corrupt(limits: ExtractionLimits, mode: str) -> None:
    doc = extract(make_corrupt_pdf(mode), "broken.pdf", limits)
    assert (doc.kind, doc.error, doc.text) == ("pdf", "corrupt", "")


def test_more_pages_than_max_pages(limits: ExtractionLimits) -> None:
    pages = [f"第{i}頁の本文です。東京都。" for i in range(1, 6)]
    doc = extract(make_pdf(pages), "long.pdf", dataclasses.replace(limits, max_pages=2))
    # Decision: keep the first max_pages pages, flag truncation, no error.
    assert (doc.error, doc.truncated, doc.page_count) == (None, True, 5)
    assert doc.text == f"{pages[0]}\n\n{pages[1]}"


def test_max_chars(limits: ExtractionLimits) -> None:
    doc = extract(make_pdf([PAGE_1, PAGE_2]), "a.pdf", dataclasses.replace(limits, max_chars=10))
    assert (doc.text, doc.truncated, doc.error) == (PAGE_1[:10], True, None)


def test_deadline_keeps_the_pages_read(limits: ExtractionLimits) -> None:
    pages = [f"第{i}頁 四半期売上報告の本文" for i in range(1, 6)]
    doc = extract(make_pdf(pages), "a.pdf", limits, deadline=Deadline(0))
    # The deadline is checked between pages: the first page is always read.
    assert (doc.error, doc.truncated, doc.page_count, doc.text) == ("timeout", True, 5, pages[0])


def test_pages_beyond_max_pages_are_named_as_left_out() -> None:
    import dataclasses

    from devkit.samples import make_pdf
    from docindex.extract import ExtractionLimits, extract

    limits = dataclasses.replace(ExtractionLimits(), max_pages=2)
    doc = extract(make_pdf(["一頁", "二頁", "三頁", "四頁"]), "four.pdf", limits)
    assert doc.page_count == 4
    assert doc.truncated
    assert doc.dropped == ("pages 3-4: more than MAX_PAGES (2)",)
