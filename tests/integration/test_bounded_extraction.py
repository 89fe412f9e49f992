"""One hostile file cannot take down the batch: a bomb inside a format and nine good files, one invocation.

The indexer runs in a fresh process (tests/support/hostile_run.py) with the
template's memory size in its Lambda context, so what is measured is one
Lambda-sized process and its extraction processes: its own peak and the
largest child's, from ``getrusage`` (``RUSAGE_SELF``, ``RUSAGE_CHILDREN``
once the children were waited for). No timing assertions.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from devkit import samples
from devkit.messages import s3_notification, sqs_event
from devkit.samples import bombs
from docindex.index.search import search
from tests.conftest import REPO_ROOT, Stack
from tests.support.template_model import load_template

GOOD: list[tuple[str, str, bytes]] = [
    ("good/契約書 alpha.pdf", "業務委託契約", samples.make_pdf(["第一条 業務委託契約の目的"], "契約書")),
    ("good/報告書 bravo.pdf", "四半期報告", samples.make_pdf(["四半期報告 売上は増加した"] * 3, "報告")),
    ("good/議事録 charlie.pdf", "取締役会", samples.make_pdf(["取締役会 議事録"], "議事録")),
    ("good/売上 delta.xlsx", "りんご", samples.make_xlsx({"売上": [["品名", "数量"], ["りんご", 3]]})),
    ("good/在庫 echo.xlsx", "倉庫番号", samples.make_xlsx({"在庫": [["倉庫番号", 17]]})),
    ("good/手順書 foxtrot.docx", "作業手順", samples.make_docx(["作業手順 その一"])),
    ("good/提案 golf.pptx", "新規提案", samples.make_pptx(["新規提案の概要"])),
    ("good/メモ hotel.txt", "打ち合わせ", "明日の打ち合わせは十時から".encode()),
    ("good/一覧 india.csv", "担当者", "担当者,電話\n山田,03-0000-0000\n".encode()),
]


def _upload(stack: Stack, files: list[tuple[str, str, bytes]], prefix: str) -> list[dict[str, Any]]:
    """Put every file; their S3 notifications, in order."""
    notifications = []
    for n, (name, _, body) in enumerate(files):
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=name, Body=body)
        notifications.append(s3_notification(stack.bucket, name, sequencer=f"{prefix}{n:02d}", size=len(body)))
    return notifications


def _run_indexer(env: dict[str, str], event: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    spec_file, out_file = tmp_path / "spec.json", tmp_path / "result.json"
    memory_mb = int(load_template()["Parameters"]["IndexerMemorySize"]["Default"])
    spec = {"env": env, "event": event, "timeout": 120, "memory_mb": memory_mb}
    spec_file.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "tests.support.hostile_run", "indexer", str(spec_file), str(out_file)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result: dict[str, Any] = json.loads(out_file.read_text(encoding="utf-8"))
    result["memory_mb"] = memory_mb
    return result


@pytest.mark.parametrize(
    ("key", "make", "error"),
    [
        # 1.3 MB on disk, 1.2 GiB inflated: 2.3 GiB in process before isolation
        ("bomb/内容爆弾 streambomb.pdf", lambda: bombs.make_pdf_stream_bomb(1200), "memory"),
        # 10 M cells (~1.3 GiB in calamine): refused from the streamed cell count
        ("bomb/一千万セル cellbomb.xlsx", lambda: bombs.make_xlsx_many_cells(10_000_000), "too_large"),
    ],
    ids=["pdf-stream-1.2GiB", "xlsx-10M-cells"],
)
def test_a_batch_of_nine_good_files_and_one_bomb_indexes_the_nine_within_the_functions_memory(
    stack: Stack, tmp_path: Path, key: str, make: Any, error: str
) -> None:
    # Given nine good files and one bomb in the bucket
    bomb = make()
    notifications = _upload(stack, [*GOOD[:4], (key, "", bomb), *GOOD[4:]], "00C0")

    # When one invocation gets all ten
    result = _run_indexer(stack.settings_env(), sqs_event(*notifications), tmp_path)
    print(f"indexer batch: {result}")

    # Then no record failed: the bomb cost only its own extraction process
    assert result["failed"] == []
    # ... the nine are indexed with their content
    for name, word, _ in GOOD:
        doc = stack.doc(name)
        assert doc is not None, name
        assert "extraction_error" not in doc["_source"], name
        assert word in doc["_source"]["content"], name
    # ... the bomb is findable by name and says why it has no content
    source = (stack.doc(key) or {})["_source"]
    assert source["extraction_error"] == error
    assert "content" not in source or not source["content"]
    hits = search(stack.opensearch, stack.index, key.rsplit(" ", 1)[1].split(".", maxsplit=1)[0], size=5)
    assert key in {hit["key"] for hit in hits}
    # ... and the function stayed within its memory: its own peak plus every extraction
    # process that ran at once at the largest child's peak
    at_once = result["extraction_processes_at_once"]
    assert 1 <= at_once <= 8
    assert result["children_max_rss_mb"] < result["extraction_budget_mb"]
    assert result["max_rss_mb"] + at_once * result["children_max_rss_mb"] < result["memory_mb"]


def test_four_workbooks_of_nine_point_nine_million_cells_in_one_batch_stay_within_the_functions_memory(
    stack: Stack, tmp_path: Path
) -> None:
    # Given four workbooks each just under the sheet-cell limit (9.9 M cells; without the bounds one
    # peaked at 1,388 MiB, four in one batch at 4,612 MiB for 510 s, all ending ``timeout``),
    # different bytes each (no content cache hit between them), and two good files
    workbooks = [
        (f"bomb/集計 {n} cells{n}.xlsx", bombs.make_xlsx_many_cells(9_900_000, columns=columns))
        for n, columns in enumerate((100, 90, 110, 120))
    ]
    assert len({body for _, body in workbooks}) == 4
    notifications = _upload(stack, [GOOD[3], *[(name, "", body) for name, body in workbooks], GOOD[5]], "00D0")

    # When one invocation gets all six
    result = _run_indexer(stack.settings_env(), sqs_event(*notifications), tmp_path)
    print(f"indexer batch: {result}")

    # Then no record failed and the good files are indexed with their content
    assert result["failed"] == []
    for name, word, _ in (GOOD[3], GOOD[5]):
        source = (stack.doc(name) or {})["_source"]
        assert word in source["content"], name
    # ... each workbook ended with a reason of its own (not the batch's timeout), findable by name
    for name, _ in workbooks:
        source = (stack.doc(name) or {})["_source"]
        assert source["extraction_error"] in ("too_large", "memory"), (name, source.get("extraction_error"))
        hits = search(stack.opensearch, stack.index, name.rsplit(" ", 1)[1].split(".", maxsplit=1)[0], size=5)
        assert name in {hit["key"] for hit in hits}
    # ... and the function stayed within its memory: its own peak plus every extraction process
    # that ran at once at the largest child's peak
    at_once = result["extraction_processes_at_once"]
    assert 1 <= at_once <= 8
    assert result["max_rss_mb"] + at_once * result["children_max_rss_mb"] < result["memory_mb"]
