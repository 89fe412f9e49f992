"""The OCR'd words' boxes a page preview marks (issue 28): placed on the page as it was scanned,
kept small, and matched to a query as the search matches it."""

from __future__ import annotations

import io

import pytest

from docindex.ingest.wordboxes import MAX_WORDS, PageWords, WordBoxStore
from docindex.search_api.marks import marked_boxes, query_terms
from docindex.search_api.preview import mark
from docindex.worker import geometry


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
@pytest.mark.parametrize("skew", [0.0, 8.0, -12.0])
def test_a_box_on_the_turned_page_is_found_again_on_the_page_as_scanned(rotation: int, skew: float) -> None:
    from PIL import Image, ImageDraw

    # Given a page with one black box on it
    page = Image.new("L", (400, 300), 255)
    ImageDraw.Draw(page).rectangle((50, 60, 90, 80), fill=0)
    correction = geometry.Correction(rotation=rotation, skew=skew)
    # When the worker turns it upright and finds the ink there
    turned = geometry.apply(page, correction)
    found = turned.point(lambda value: 255 if value < 128 else 0).getbbox()
    assert found is not None
    # Then the box turned back lies where the ink is on the page as scanned (a skewed box grows
    # to the bounding box of its corners)
    left, top, right, bottom = geometry.unturned_box(found, correction, page.size)
    slack = 1 if not skew else 10
    assert 50 - slack <= left <= 51
    assert 60 - slack <= top <= 61
    assert 90 <= right <= 91 + slack
    assert 80 <= bottom <= 81 + slack


def _words(*lines: list[tuple[str, tuple[int, int, int, int]]], flow: str = "r") -> PageWords:
    return PageWords.from_result(
        3, [(*box, text, number, flow) for number, line in enumerate(lines) for text, box in line]
    )


def test_japanese_is_matched_across_words_and_only_the_matched_characters_are_marked() -> None:
    # Tesseract cut the line anywhere: 内部 / 統制の評 / 価
    page = _words(
        [("内部", (1000, 1000, 2000, 1500)), ("統制の評", (2000, 1000, 4000, 1500)), ("価", (4000, 1000, 4500, 1500))],
        [("内部監査", (1000, 2000, 3000, 2500))],
    )
    boxes = marked_boxes(page, "内部統制")
    # 内部 whole, and the first two of the four characters of 統制の評
    assert boxes == [(0.1, 0.1, 0.2, 0.15), (0.2, 0.1, 0.3, 0.15)]
    # another word of the query, on another line, is marked too; an exclusion is not
    assert marked_boxes(page, "内部統制 OR 監査 -内部") == [*boxes, (0.2, 0.2, 0.3, 0.25)]
    assert query_terms('内部統制 OR 監査 -内部 "年次 報告"') == ["内部統制", "監査", "年次 報告"]


def test_the_query_matches_as_the_search_folds_it() -> None:
    # 申込書 written with its okurigana, in full-width letters and an old kanji form
    page = _words(
        [("申し込み書", (0, 0, 5000, 500))], [("ＡＢＣ社", (0, 1000, 4000, 1500))], [("髙橋", (0, 2000, 2000, 2500))]
    )
    assert marked_boxes(page, "申込書") == [(0.0, 0.0, 0.5, 0.05)]
    assert marked_boxes(page, "abc社") == [(0.0, 0.1, 0.4, 0.15)]
    assert marked_boxes(page, "高橋") == [(0.0, 0.2, 0.2, 0.25)]


@pytest.mark.parametrize(
    ("flow", "box", "expected"),
    [
        # vertical writing: down the column
        ("d", (8000, 1000, 8500, 9000), (0.8, 0.5, 0.85, 0.9)),
        # a page scanned turned counter-clockwise: its lines run up the page
        ("u", (8000, 1000, 8500, 9000), (0.8, 0.1, 0.85, 0.5)),
        # vertical writing scanned turned clockwise: its columns run right to left
        ("l", (1000, 8000, 9000, 8500), (0.1, 0.8, 0.5, 0.85)),
        ("r", (1000, 8000, 9000, 8500), (0.5, 0.8, 0.9, 0.85)),
    ],
)
def test_part_of_a_word_is_cut_the_way_its_characters_run(
    flow: str, box: tuple[int, int, int, int], expected: tuple[float, float, float, float]
) -> None:
    page = _words([("議事録の内部統制", box)], flow=flow)
    (found,) = marked_boxes(page, "内部統制")
    assert found == pytest.approx(expected)


def test_latin_words_match_whole_words_only() -> None:
    page = _words([("of", (0, 0, 100, 100)), ("file", (200, 0, 400, 100)), ("format.", (500, 0, 900, 100))])
    assert marked_boxes(page, "Format") == [(0.05, 0.0, 0.09, 0.01)]
    assert marked_boxes(page, '"file format"') == [(0.02, 0.0, 0.04, 0.01), (0.05, 0.0, 0.09, 0.01)]
    assert marked_boxes(page, "form") == []
    assert marked_boxes(page, "") == []


def test_an_entry_is_bounded_and_read_back() -> None:
    many = PageWords.from_result(1, [(0, 0, 10, 10, "字" * 100, n // 40, "d") for n in range(MAX_WORDS + 10)])
    assert len(many.words) == MAX_WORDS
    assert all(len(word.text) == 64 for word in many.words)
    again = PageWords.unpack(many.pack())
    assert again == many
    # a page whose entry would be too large is not kept (and nothing is stored without a bucket)
    assert WordBoxStore(None, None).put("a" * 64, many) == 0


def test_marks_tint_their_boxes_and_leave_every_other_pixel_alone() -> None:
    from PIL import Image, ImageChops

    page = Image.new("RGB", (200, 100), (255, 255, 255))
    marked = mark(page, [(0.25, 0.5, 0.5, 0.8)])
    difference = ImageChops.difference(page, marked)
    assert difference.getbbox() == (50, 50, 101, 81)
    red, green, blue = marked.getpixel((60, 60))  # type: ignore[misc]
    assert (red, green) == (255, 255 - round(0.45 * 41)) or blue < 200
    assert blue < 200  # yellow over white
    out = io.BytesIO()
    marked.save(out, "PNG")
    assert mark(page, []) is page
