"""PPTX: slides in presentation order, tables, groups, notes; slide numbers are noise."""

from __future__ import annotations

import dataclasses
import re

from devkit.samples import make_pptx
from docindex.extract import Deadline, ExtractionLimits, extract

SLIDES = ["事業計画\n東京都内に新拠点", "売上目標\nquarterly revenue target", "体制\n担当：髙橋"]
NOTES = ["冒頭で実績に触れる", None, "質疑応答の時間を確保"]


def test_slides_notes_tables_groups(limits: ExtractionLimits) -> None:
    data = make_pptx(
        SLIDES,
        NOTES,
        title="2025年度 事業計画",
        tables={1: [["地域", "目標"], ["東京都", "32億円"]]},
        groups={2: ["グループ内の図形一", "グループ内の図形二"]},
    )
    doc = extract(data, "計画.pptx", limits)
    assert (doc.kind, doc.error, doc.title, doc.page_count) == ("pptx", None, "2025年度 事業計画", 3)
    assert doc.content_type == "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    # each slide's notes are a passage of their own; a table's rows are read with their header
    assert doc.text.split("\n\n") == [
        "事業計画\n東京都内に新拠点",
        "冒頭で実績に触れる",
        "売上目標\nquarterly revenue target\n地域・目標\n地域 東京都・目標 32億円",
        "体制\n担当：髙橋\nグループ内の図形一\nグループ内の図形二",
        "質疑応答の時間を確保",
    ]


def test_presentation_order_beats_part_names(limits: ExtractionLimits) -> None:
    # slide3.xml is shown first, slide1.xml second, slide2.xml third.
    data = make_pptx(["一枚目", "二枚目", "三枚目"], part_numbers=[3, 1, 2])
    assert extract(data, "a.pptx", limits).text.split("\n\n") == ["一枚目", "二枚目", "三枚目"]


def test_slide_number_fields_are_skipped(limits: ExtractionLimits) -> None:
    text = extract(make_pptx(["一枚目", "二枚目"], ["ノート", "ノート"]), "a.pptx", limits).text
    assert not re.search(r"\d", text)


def test_more_slides_than_max_pages(limits: ExtractionLimits) -> None:
    doc = extract(make_pptx(SLIDES), "a.pptx", dataclasses.replace(limits, max_pages=1))
    assert (doc.page_count, doc.truncated, doc.error, doc.text) == (3, True, None, SLIDES[0])


def test_deadline_between_slides(limits: ExtractionLimits) -> None:
    doc = extract(make_pptx(SLIDES), "a.pptx", limits, deadline=Deadline(0))
    assert (doc.error, doc.truncated, doc.text) == ("timeout", True, SLIDES[0])


def test_max_chars(limits: ExtractionLimits) -> None:
    doc = extract(make_pptx(SLIDES), "a.pptx", dataclasses.replace(limits, max_chars=4))
    assert (doc.text, doc.truncated) == ("事業計画", True)
