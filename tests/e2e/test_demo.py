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
    assert "DocumentsIndexed       11" in out
    assert "DuplicatesSkipped      3" in out
    # Japanese (kuromoji, CP932 髙) and English hits with highlighted snippets
    assert "営業部/2024年度 報告/四半期売上報告 Q3.pdf" in out
    assert "[四半期][売上]" in out
    assert "総務部/古い文書/社員名簿 メモ.txt" in out
    assert "[Quarterly] [revenue]" in out
    # the scans went through the OCR worker and their text is searchable
    assert "'done': 2" in out
    # ... and the worker's metrics are all in the totals (also the ones after the last indexer batch)
    assert "OcrJobsQueued          2" in out
    assert "OcrJobsCompleted       2" in out
    assert "ご[請求]金額" in out
    assert "stopped moto" in out
