"""Where each page starts (issue 28): pages, slides, sheets and mail parts, on files real applications wrote.

The files are LibreOffice's, Outlook's and Excel's (tests/fixtures/real/README.md); the
page-boundary contract is that each page's text is the text the page shows, and that the
document's ``text`` still holds every page.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.samples import make_pdf
from docindex.extract import ExtractionLimits, extract
from docindex.extract.base import PageText
from docindex.extract.dispatch import split_pages
from docindex.extract.isolation import ExtractionPool
from docindex.index.documents import page_entries

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real"
LIMITS = ExtractionLimits()


def pages_of(name: str) -> list[tuple[int, str, str]]:
    extracted = extract((REAL / name).read_bytes(), Path(name).name, LIMITS)
    assert extracted.error is None
    for page in extracted.pages:
        assert page.text in extracted.text or page.text.replace("\n", "") in extracted.text.replace("\n", "")
    return [(page.number, page.label, page.text) for page in extracted.pages]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("gijiroku.pdf", "p."),  # LibreOffice Impress's PDF export: one page per slide
        ("gijiroku.pptx", "スライド"),
        ("gijiroku.ppt", "スライド"),
        ("gijiroku.odp", "スライド"),
    ],
)
def test_each_slide_or_page_of_a_real_presentation_holds_its_own_words(name: str, kind: str) -> None:
    pages = pages_of(name)
    assert [(number, label) for number, label, _ in pages] == [(1, f"{kind} 1"), (2, f"{kind} 2")]
    assert "第三四半期の営業会議" in pages[0][2]
    assert "次回の議題" not in pages[0][2]
    assert "次回の議題と担当者" in pages[1][2]
    assert "営業会議" not in pages[1][2]


@pytest.mark.parametrize("name", ["kessan.xlsx", "kessan.ods"])
def test_each_sheet_of_a_real_workbook_is_a_page_named_after_it(name: str) -> None:
    pages = pages_of(name)
    assert [(number, label) for number, label, _ in pages] == [(1, "シート 概要"), (2, "シート 売上")]
    assert "営業利益は横ばい" in pages[0][2]
    assert "九州支社" in pages[1][2]
    assert "九州支社" not in pages[0][2]


def test_real_xlsb_sheets_are_pages() -> None:
    labels = [label for _, label, _ in pages_of("apache-tika/testEXCEL.xlsb")]
    assert labels == ["シート Sheet 1", "シート Sheet 2", "シート Sheet 3"]


def test_a_mail_is_its_message_then_one_part_per_attachment() -> None:
    eml = pages_of("uchiawase.eml")
    assert [(number, label) for number, label, _ in eml] == [(1, "本文"), (2, "添付 稟議書.doc")]
    assert "会議室用プロジェクター" in eml[1][2]
    assert "会議室用プロジェクター" not in eml[0][2]
    msg = pages_of("apache-tika/testMSG_att_doc.msg")
    assert [label for _, label, _ in msg] == ["本文", "添付 test-unicode.doc", "添付 pj1.txt"]


def test_formats_without_pages_have_none() -> None:
    for name in ("ringi.odt", "ringi.doc", "ringi.rtf", "meibo.csv", "shiryou_cp932.zip"):
        assert extract((REAL / name).read_bytes(), name, LIMITS).pages == (), name


def test_pdf_pages_keep_their_numbers_when_a_page_has_no_text() -> None:
    pdf = make_pdf(["一頁目 概要", "", "三頁目 内部統制"])
    extracted = extract(pdf, "r.pdf", LIMITS)
    assert [(p.number, p.text) for p in extracted.pages] == [(1, "一頁目 概要"), (3, "三頁目 内部統制")]


@pytest.fixture
def pool() -> Iterator[ExtractionPool]:
    pool = ExtractionPool.for_function(1536, 2, share=0.5)
    yield pool
    pool.close()


def test_an_isolated_extraction_brings_its_pages_back(pool: ExtractionPool) -> None:
    data = (REAL / "kessan.xlsx").read_bytes()
    assert extract(data, "kessan.xlsx", LIMITS, pool=pool).pages == extract(data, "kessan.xlsx", LIMITS).pages
    pdf = (REAL / "gijiroku.pdf").read_bytes()
    assert [p.number for p in extract(pdf, "g.pdf", LIMITS, pool=pool).pages] == [1, 2]


def test_pages_are_cleaned_like_the_whole_and_text_before_the_first_page_belongs_to_none() -> None:
    raw = "preamble\n" + "p1 line  \n\n\n\n\nmore\x00" + "   \n" + "p3"
    marks = [(9, "page", 1, None), (len(raw) - 6, "page", 2, None), (len(raw) - 2, "page", 3, None)]
    assert split_pages(raw, marks) == (PageText(1, "page", "p1 line\n\nmore"), PageText(3, "page", "p3"))


def test_index_pages_stop_at_their_text_budget() -> None:
    pages = [PageText(n, "page", "あ" * 100) for n in range(1, 11)]
    entries = page_entries(pages, max_chars=250)
    assert [(e["n"], len(e["text"])) for e in entries] == [(1, 100), (2, 100), (3, 50)]
    assert entries[0]["label"] == "p. 1"


def test_ocr_range_parts_assemble_into_numbered_pages_and_old_parts_name_none() -> None:
    from docindex.worker.pages import PageReader
    from docindex.worker.ranges import RangePart

    reader = PageReader(pool=None, options=None, max_pages=5000, max_content_chars=10_000)  # type: ignore[arg-type]
    second = RangePart(first_page=2, last_page=4, texts=["三頁目"], pages=[3])
    first = RangePart(first_page=0, last_page=2, texts=["一頁目", "二頁目"], pages=[1, 2])
    content = reader.assemble([second, first], page_count=4, title=None)
    assert content.text == "一頁目\n\n二頁目\n\n三頁目"
    assert [(p.number, p.text) for p in content.pages] == [(1, "一頁目"), (2, "二頁目"), (3, "三頁目")]
    # A part a worker stored before pages were kept (no page numbers): its text counts, its pages are not named.
    legacy = RangePart(first_page=2, last_page=4, texts=["三頁目"])
    assert [p.number for p in reader.assemble([first, legacy], page_count=4, title=None).pages] == [1, 2]
