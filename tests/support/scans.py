"""Texts and page layout for the OCR tests' scans, which devkit.samples renders.

OCR tests in tests/unit and tests/integration import from here.
"""

from __future__ import annotations

from typing import TypedDict


class Layout(TypedDict):
    """The type-setting keywords of devkit.samples.ScanLayout (not ``page``, which each test picks)."""

    font_size: float
    margin: float
    line_spacing: float


# Passed to devkit.samples' scan generators (``make_scan_png(..., **LAYOUT)``): the layout the OCR tests'
# accuracy bounds and job durations were measured on, 12 pt type, 0.4 in margins, lines 1.8 font sizes apart
# (the generators' default is a 10.5 pt letter with 20 mm margins).
LAYOUT: Layout = {"font_size": 12.0, "margin": 0.4, "line_spacing": 1.8}

# A small page (inches) keeps the tests fast where accuracy is not the point.
CARD_INCHES = (5.0, 2.0)

REPORT_LINES = [
    "株式会社サンプル 第三四半期 業績報告書",
    "売上高は前年同期比で大幅に増加しました。",
    "東京本社と大阪支店の経費削減が順調に進んでいます。",
    "新製品の出荷は来月から開始する予定です。",
    "Quarterly revenue report for fiscal year 2026.",
]

_LETTER = [
    "株式会社サンプルは、二〇二六年度第三四半期の業績を以下のとおり報告いたします。",
    "売上高は前年同期比で大幅に増加し、営業利益も計画を上回りました。",
    "東京本社と大阪支店では経費削減の取り組みが順調に進んでいます。",
    "新製品の出荷は来月から開始する予定であり、受注残高は過去最高です。",
    "海外事業については、為替の影響を受けたものの堅調に推移しました。",
    "今後とも株主の皆様のご支援を賜りますようお願い申し上げます。",
]
# About 770 characters: a typical full A4 page of a Japanese business letter.
DENSE_PAGE = [*(_LETTER * 4)[:22], "Quarterly revenue report for fiscal year 2026."]
