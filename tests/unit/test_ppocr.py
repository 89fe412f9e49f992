"""PP-OCR's pure parts: regions of a detection map, reading order, numerals, the preview's turn (no models)."""

from __future__ import annotations

import numpy as np
import pytest

from docindex.search_api.service import page_turn
from docindex.worker.ppocr import components, regions, separated
from docindex.worker.ppocr_reader import fix_numerals, reading_order


def test_regions_are_8_connected_and_weak_ones_dropped() -> None:
    probability = np.zeros((40, 60), dtype=np.float32)
    probability[5:10, 5:30] = 0.9  # a line
    probability[10:14, 30:40] = 0.9  # touching it diagonally: the same region
    probability[25:30, 5:50] = 0.35  # a weak smudge: above the threshold, below the box score
    found = components(probability > 0.3)
    assert sorted(found) == [(5, 5, 40, 14), (5, 25, 50, 30)]
    kept = regions(probability, 0.3, 0.4)
    assert len(kept) == 1
    (left, top, right, bottom), score = kept[0]
    # grown back by the unclip around the line's core
    assert left < 5
    assert top < 5
    assert right > 40
    assert bottom > 14
    assert 0.4 < score < 1.0


def test_overlapping_neighbours_are_cut_between_their_cores() -> None:
    upper, lower = (0, 0, 100, 30), (0, 24, 100, 54)
    a, b = separated([upper, lower])
    assert a[3] == b[1]
    assert 24 <= a[3] <= 30


def test_reading_order_rows_columns_and_spreads() -> None:
    # A schedule: label and date on each row, no gap between the rows
    boxes = [(0, 0, 100, 30), (130, 0, 300, 30), (0, 28, 100, 58), (130, 28, 300, 58)]
    assert reading_order(boxes, [False] * 4) == [0, 1, 2, 3]
    # Three columns of vertical writing: right to left
    columns = [(0, 0, 30, 300), (40, 0, 70, 300), (80, 0, 110, 300)]
    assert reading_order(columns, [True] * 3) == [2, 1, 0]
    # A two-page spread: the left page's lines, then the right page's
    spread = [(0, 0, 400, 30), (600, 0, 1000, 30), (0, 50, 400, 80), (600, 50, 1000, 80)]
    assert reading_order(spread, [False] * 4) == [0, 2, 1, 3]


@pytest.mark.parametrize(
    ("read", "meant"),
    [
        ("前年同期比でーニパーセント増加", "前年同期比で一二パーセント増加"),
        ("十ニ月", "十二月"),
        ("コーヒー二杯", "コーヒー二杯"),  # ー after katakana lengthens a vowel: kept
        ("ニュース", "ニュース"),
    ],
)
def test_kanji_numerals_read_as_katakana_are_put_back(read: str, meant: str) -> None:
    assert fix_numerals(read) == meant


def test_a_page_turned_to_be_read_is_previewed_turned_the_same_way() -> None:
    source = {"ocr_pages": [{"page": 1, "rotation": 270}, {"page": 2, "rotation": 0}, {"page": 3, "rotation": 45}]}
    assert [page_turn(source, n) for n in (1, 2, 3, 4)] == [270, 0, 0, 0]
    assert page_turn({}, 1) == 0
