"""`docindex demo` (what `make demo` runs) from an empty directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_demo_indexes_samples_and_finds_japanese_and_english(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "docindex.cli", "demo", "--stop"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    # every sample indexed, the redelivered notifications recognised as duplicates
    assert "DocumentsIndexed       19" in out
    assert "DuplicatesSkipped      3" in out
    # Japanese (kuromoji, CP932 髙) and English hits with highlighted snippets
    assert "営業部/2024年度 報告/四半期売上報告 Q3.pdf" in out
    assert "[四半期][売上]" in out
    assert "総務部/古い文書/社員名簿 メモ.txt" in out
    assert "[Quarterly] [revenue]" in out
    # the scans went through the OCR worker and their text is searchable
    assert "'done': 5" in out
    # ... and the worker's metrics are all in the totals (also the ones after the last indexer batch)
    assert "OcrJobsQueued          5" in out
    assert "OcrJobsCompleted       5" in out
    assert "ご[請求]金額" in out
    # ... a page fed sideways, a fax at 200 x 100 dpi and a notice written vertically too
    for query, key in (
        ("健康診断", "スキャン/健康診断のお知らせ 横向き.tif"),
        ("物流倉庫", "FAX受信/2026-11-20 営業報告.tif"),
        ("非常階段", "総務部/掲示/社内行事のお知らせ.tif"),
    ):
        assert key in out.split(f"$ docindex search {query!r}")[1].split("$ docindex search")[0], query
    # typed 高橋, the file writes 髙橋 (spelling variants)
    typed = out.split("$ docindex search '高橋 評価'")[1].split("$ docindex search")[0]
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" in typed
    assert "stopped moto" in out
    # two employees search the same word through the search API: each sees their own department's file
    sales = out.split("eigyo (営業部) searches")[1].split("jinji (人事部) searches")[0]
    hr = out.split("jinji (人事部) searches")[1].split("Search page:")[0]
    assert "営業部/顧客/髙橋商事 訪問記録.txt" in sales
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" not in sales
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" in hr
    assert "営業部/顧客/髙橋商事 訪問記録.txt" not in hr
    assert "総務部/古い文書/社員名簿 メモ.txt" in sales
    assert "総務部/古い文書/社員名簿 メモ.txt" in hr
    assert "Search page: http://127.0.0.1:" in out
