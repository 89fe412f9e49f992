"""`docindex demo` (what `make demo` runs) from an empty directory, then every ``docindex`` command shown
in README.md and docs/*.md against the demo's local run, exiting as documented.

The demo runs once: what it prints is checked (every sample indexed, the scans OCR'd, Japanese and
English hits, each employee sees their own department's files), then the documents' commands run
against what it indexed. Commands are the lines of ``bash``/``sh`` code blocks that start with
``docindex`` (or ``.venv/bin/docindex``) and the ``$ docindex ...`` lines of ``console`` blocks
(their other lines are output). They run in the order the documents show them. The few that need a
real AWS account (``--stack``), a placeholder (``ARN``), or would not return (a continuous ``local
run``) are only parsed, with the CLI's own parser, so a renamed flag still fails here. Then ``demo
--stop`` runs again on the indexed samples and stops the servers; ``local down`` runs last.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_COMMAND = re.compile(r"^\s*(\$\s+)?(?:\.venv/bin/)?(docindex\s.*)$")

# Documented exit codes of each command against the demo's local run (docs/operations.md, "Exit codes").
EXPECTED: list[tuple[tuple[str, ...], set[int]]] = [
    # every document OCR read below N, or none (the demo's scans may all read better)
    (("search", "--ocr-confidence-below"), {0, 1}),
    (("search",), {0}),  # the examples search for what the demo indexed
    (("diagnose",), {0, 1}),  # OK, or WARN findings (the demo leaves poison messages in the DLQ)
    (("backfill",), {0}),
    (("reconcile", "--fix"), {0, 1}),  # in step, or differences whose repairs were enqueued
    (("reconcile",), {0}),  # after the drain that follows --fix: in step
    (("pause",), {1}),
    (("access",), {0}),  # locally there is nothing to pause: skipped
    (("resume",), {1}),
    (("redrive", "start", "--dry-run"), {0}),  # every DLQ handled: skipped, nothing to move
    (("redrive",), {1}),  # moto has no message-move API: "unsupported by this endpoint" (docs/dlq-redrive.md)
    (("local", "up"), {0}),
    (("local", "run", "--once"), {0}),
    (("local", "down"), {0}),
    (("reprocess",), {0}),
    (("ledger", "repair"), {0, 1}),  # repaired, or some entries left as they were (run it again)
]
# Commands that read a file the reader writes first (an access map): parsed only.
PARSE_ONLY = {("access", "check"), ("access", "apply")}


@dataclass(frozen=True)
class Example:
    document: str
    line: int
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: docindex {' '.join(self.argv)}"

    @property
    def parse_only(self) -> bool:
        """Needs real AWS, holds a placeholder, or would never return."""
        continuous = self.argv[:2] == ("local", "run") and "--once" not in self.argv
        return "--stack" in self.argv or "ARN" in self.argv or continuous or self.argv[:2] in PARSE_ONLY


def examples() -> list[Example]:
    found = []
    for path in DOCUMENTS:
        language = None
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if text.lstrip().startswith("```"):
                language = None if language is not None else (text.strip().removeprefix("```") or "plain")
                continue
            match = _COMMAND.match(text)
            if language is None or not match:
                continue
            prompt, command = match.groups()
            if (language == "console" and prompt) or (language in ("bash", "sh", "shell") and not prompt):
                argv = shlex.split(command, comments=True)[1:]
                found.append(Example(str(path.relative_to(ROOT)), number, tuple(argv)))
    return found


def expected(example: Example) -> set[int]:
    for prefix, codes in EXPECTED:
        if example.argv[: len(prefix)] == prefix or (
            prefix[0] == example.argv[0] and all(word in example.argv for word in prefix[1:])
        ):
            return codes
    raise AssertionError(f"{example}: no documented exit code in EXPECTED: add it")


def docindex(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docindex.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_documents_show_commands_and_each_has_a_documented_exit_code() -> None:
    found = examples()
    assert len(found) >= 20, [str(e) for e in found]
    for example in found:
        expected(example)


def test_commands_that_need_aws_parse() -> None:
    from docindex.cli import build_parser

    parser = build_parser()
    for example in (e for e in examples() if e.parse_only):
        try:
            parser.parse_args(list(example.argv))
        except SystemExit as exc:  # argparse's way to refuse
            raise AssertionError(f"{example}: does not parse (exit {exc.code})") from None


def check_demo_output(out: str) -> None:
    """What `docindex demo` prints after indexing the samples and searching them."""
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
    # the quarterly report's hit names the page its words are on (issue 28)
    assert "p. 2: 大阪府と[福岡県]の売上" in out.replace("[福岡][県]", "[福岡県]")
    # ... a page fed sideways, a fax at 200 x 100 dpi and a notice written vertically too
    for query, key in (
        ("健康診断", "スキャン/健康診断のお知らせ 横向き.tif"),
        ("物流倉庫", "FAX受信/2026-11-20 営業報告.tif"),
        # found by meaning (the worker embedded every document; the stand-in answers the vector leg)
        ("お正月は会社が何日から休みになる？", "社内ポータル/お知らせ/年末年始 休業のお知らせ.html  [by meaning]"),
        ("非常階段", "総務部/掲示/社内行事のお知らせ.tif"),
    ):
        assert key in out.split(f"$ docindex search {query!r}")[1].split("$ docindex search", maxsplit=1)[0], query
    # typed 高橋, the file writes 髙橋 (spelling variants)
    typed = out.split("$ docindex search '高橋 評価'")[1].split("$ docindex search", maxsplit=1)[0]
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" in typed
    # two employees search the same word through the search API: each sees their own department's file
    sales = out.split("eigyo (営業部) searches")[1].split("jinji (人事部) searches", maxsplit=1)[0]
    hr = out.split("jinji (人事部) searches")[1].split("Search page:", maxsplit=1)[0]
    assert "営業部/顧客/髙橋商事 訪問記録.txt" in sales
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" not in sales
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" in hr
    assert "営業部/顧客/髙橋商事 訪問記録.txt" not in hr
    assert "総務部/古い文書/社員名簿 メモ.txt" in sales
    assert "総務部/古い文書/社員名簿 メモ.txt" in hr
    assert "Search page: http://127.0.0.1:" in out


def test_the_demo_indexes_the_samples_and_every_documented_command_runs_against_it(tmp_path: Path) -> None:
    # Given the demo's local run from an empty directory (the sample documents indexed)
    demo = docindex("demo", "--max-seconds", "900", cwd=tmp_path, timeout=1200)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    # Then it found what it indexed, in Japanese and English, and each employee sees their own files
    check_demo_output(demo.stdout)
    runnable = [e for e in examples() if not e.parse_only]
    last = [e for e in runnable if e.argv[:2] == ("local", "down")]
    try:
        # When each documented command runs, in the documents' order
        failures = []
        for example in [e for e in runnable if e not in last]:
            result = docindex(*example.argv, cwd=tmp_path)
            # Then it exits as documented, and never with a traceback
            if result.returncode not in expected(example) or "Traceback" in result.stderr:
                output = result.stdout[-1500:] + result.stderr[-1500:]
                failures.append(f"{example} exited {result.returncode}:\n{output}")
        assert not failures, "\n\n".join(failures)
        # When the demo runs again with --stop (the samples are indexed: nothing new to read)
        again = docindex("demo", "--stop", cwd=tmp_path)
        # Then it drains and stops the local servers at the end
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        assert "stopped moto" in again.stdout
        # And the documents' `local down` runs last, as documented
        for example in last[:1]:
            result = docindex(*example.argv, cwd=tmp_path)
            output = result.stdout[-1500:] + result.stderr[-1500:]
            assert result.returncode in expected(example), f"{example} exited {result.returncode}:\n{output}"
            assert "Traceback" not in result.stderr, f"{example}:\n{output}"
    finally:
        docindex("local", "down", cwd=tmp_path)
