"""PP-OCR's pure parts: regions of a detection map, reading order, numerals, the preview's turn (no models)."""

from __future__ import annotations

import numpy as np
import pytest

from docindex.search_api.service import page_turn
from docindex.worker.ppocr import Line, components, line_regions, regions, separated, split_merged
from docindex.worker.ppocr_reader import fix_numerals, fix_parties, joined_lines, reading_order, spaced_groups


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
    a, b = separated([(upper, 0.9, (0, 9, 100, 21)), (lower, 0.9, (0, 33, 100, 45))])
    assert a[3] == b[1]
    assert 24 <= a[3] <= 30


def test_tightly_set_lines_are_cut_where_the_map_is_empty_and_a_merged_region_does_not_find_the_line_above() -> None:
    # Given a detection map of four tight lines (rows 10-17, 24-31, 35-42, 56-63: the second and third touch
    # at the detection's threshold), as the contract's scanned page gave (甲と乙は read 用とこは)
    probability = np.zeros((80, 200), dtype=np.float32)
    probability[10:18, 10:190] = 0.95
    probability[24:32, 10:190] = 0.95
    probability[32:35, 10:190] = 0.4  # the two lines' regions touch
    probability[35:43, 10:190] = 0.95
    probability[56:64, 10:190] = 0.95
    # When the lines are found, the merged region split and the overlaps cut
    found = split_merged(probability, line_regions(probability, 0.3, 0.3))
    boxes = sorted(separated(found, probability), key=lambda box: box[1])
    # Then there are four lines, each holding its whole core, none cut through another's
    assert len(boxes) == 4
    cores = [(10, 18), (24, 32), (35, 43), (56, 64)]
    for (_, top, _, bottom), (core_top, core_bottom) in zip(boxes, cores, strict=True):
        assert top <= core_top
        assert bottom >= core_bottom
    assert boxes[0][3] <= 24
    assert boxes[1][3] <= 35
    assert boxes[2][3] <= 56


def test_reading_order_rows_columns_and_spreads() -> None:
    # A schedule: label and date on each row, no gap between the rows
    boxes = [(0, 0, 100, 30), (130, 0, 300, 30), (0, 28, 100, 58), (130, 28, 300, 58)]
    assert reading_order(boxes, [False] * 4) == [0, 1, 2, 3]
    # Three columns of vertical writing: right to left
    columns = [(0, 0, 30, 300), (40, 0, 70, 300), (80, 0, 110, 300)]
    assert reading_order(columns, [True] * 3) == [2, 1, 0]
    # A line the detection cut in two (its right half a pixel higher), overlapping the next line: left to right
    halves = [(234, 0, 644, 26), (51, 1, 239, 31), (39, 25, 651, 76), (43, 75, 653, 120)]
    assert reading_order(halves, [False] * 4) == [1, 0, 2, 3]
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
        ("投入ロのフタ", "投入口のフタ"),  # ロ alone beside a kanji is 口
        ("ロ座に振り込む", "口座に振り込む"),
        ("部品の加エ", "部品の加工"),
        ("クロド", "クロド"),  # katakana words keep theirs
        ("レクリエーション", "レクリエーション"),
        ("エンジン部", "エンジン部"),
    ],
)
def test_kanji_numerals_read_as_katakana_are_put_back(read: str, meant: str) -> None:
    assert fix_numerals(read) == meant


@pytest.mark.parametrize(
    ("read", "meant"),
    [
        ("第一条　こは甲の書面による承諾なく", "第一条　乙は甲の書面による承諾なく"),  # the squeezed contract line
        ("甲とこは、相互に開示する", "甲と乙は、相互に開示する"),
        ("甲及び乙の協議", "甲及び乙の協議"),
        ("会議室はそこは広い", "会議室はそこは広い"),  # inside a hiragana word: kept
        ("ここに記す", "ここに記す"),
        ("こは", "こは"),  # a line's start: a word the line cut
    ],
)
def test_the_party_otsu_read_as_ko_is_put_back(read: str, meant: str) -> None:
    # (the reader applies it only on a page that names 甲)
    assert fix_parties(read) == meant


def test_a_page_turned_to_be_read_is_previewed_turned_the_same_way() -> None:
    source = {"ocr_pages": [{"page": 1, "rotation": 270}, {"page": 2, "rotation": 0}, {"page": 3, "rotation": 45}]}
    assert [page_turn(source, n) for n in (1, 2, 3, 4)] == [270, 0, 0, 0]
    assert page_turn({}, 1) == 0


def test_a_line_the_detection_cut_in_two_is_one_line_of_text() -> None:
    # The halves of a typewritten line (a row, touching), then the next line; a schedule's label and date
    halves = [(51, 1, 239, 31), (234, 0, 644, 26), (39, 25, 651, 76)]
    texts = ["3，1の各層ステ", "ーションに直接落下する", "が通じ投入口のフタに"]
    assert joined_lines(halves, [False] * 3, texts) == "3，1の各層ステーションに直接落下する\nが通じ投入口のフタに"
    schedule = [(0, 0, 100, 30), (160, 0, 300, 30)]
    assert joined_lines(schedule, [False] * 2, ["日時", "十二月五日"]) == "日時\n十二月五日"
    assert joined_lines([(0, 0, 90, 30), (95, 0, 200, 30)], [False] * 2, ["Annual", "report"]) == "Annual report"
    # Columns of vertical writing stay apart
    assert joined_lines([(40, 0, 70, 300), (0, 0, 30, 300)], [True] * 2, ["縦書き", "の本文"]) == "縦書き\nの本文"


def test_a_forms_letter_spaced_labels_are_grouped_but_not_its_numbers_or_far_cells() -> None:
    # The table of the 1955 report: 埋 葬 料 across a cell, read a character a box; the count beside it
    lines = [
        Line((51, 339, 74, 361), "理", 0.71, False),
        Line((74, 338, 124, 363), "葬", 0.99, False),
        Line((142, 340, 167, 361), "料", 1.0, False),
        Line((207, 340, 222, 361), "1", 1.0, False),  # a number: not a label
        Line((53, 143, 76, 164), "外", 1.0, False),
        Line((146, 144, 170, 165), "科", 1.0, False),  # three lines' heights away: another cell's
        Line((0, 400, 600, 430), "甲種組合員に対する長期給付は", 0.98, False),
    ]
    assert spaced_groups(lines) == [[0, 1, 2]]
