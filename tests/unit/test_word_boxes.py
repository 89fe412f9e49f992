"""The OCR'd words' boxes a page preview marks (issue 28): placed on the page as it was scanned,
kept small, and matched to a query as the search matches it."""

from __future__ import annotations

import pytest

from docindex.ingest.wordboxes import MAX_WORDS, PageWords, WordBoxStore
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


def _words(*lines: list[tuple[str, tuple[int, int, int, int]]]) -> PageWords:
    return PageWords.from_result(3, [(*box, text, number) for number, line in enumerate(lines) for text, box in line])


def test_an_entry_is_bounded_and_read_back() -> None:
    many = PageWords.from_result(1, [(0, 0, 10, 10, "字" * 100, n // 40) for n in range(MAX_WORDS + 10)])
    assert len(many.words) == MAX_WORDS
    assert all(len(word.text) == 64 for word in many.words)
    again = PageWords.unpack(many.pack())
    assert again == many
    # a page whose entry would be too large is not kept (and nothing is stored without a bucket)
    assert WordBoxStore(None, None).put("a" * 64, many) == 0
