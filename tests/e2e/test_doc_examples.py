"""Every ``docindex`` command shown in README.md and docs/*.md runs against the demo's local run, exiting as documented.

Commands are the lines of ``bash``/``sh`` code blocks that start with ``docindex`` (or
``.venv/bin/docindex``) and the ``$ docindex ...`` lines of ``console`` blocks (their other lines
are output). They run in the order the documents show them, in the directory where ``docindex
demo`` has indexed the sample documents (the demo test_demo.py checks: tests/e2e/conftest.py). The
few that need a real AWS account (``--stack``), a placeholder (``ARN``), or would not return (a
continuous ``local run``) are only parsed, with the CLI's own parser, so a renamed flag still fails
here. Then ``demo --stop`` runs again on the indexed samples and stops the servers; ``local down``
runs last.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import DemoRun
from tests.support.cli import docindex

# One demo for this module and test_demo.py (tests/e2e/conftest.py): one process runs both.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("demo")]

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
    (("failures",), {0, 1}),  # every file read, or files listed (the demo's password-protected PDF)
    (("ledger", "repair"), {0, 1}),  # repaired, or some entries left as they were (run it again)
    (("plan",), {0}),
]
# Commands that read a file the reader writes first (an access map, a file server's ACL export, an
# inventory report): parsed only here; tests/unit/test_acl_import.py and test_acl_samba.py run import
# and diff on real exports, tests/unit/test_plan.py reads inventories.
PARSE_ONLY = {
    ("access", "check"),
    ("access", "apply"),
    ("access", "import"),
    ("access", "diff"),
    ("plan", "--inventory"),
}


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


def _lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) with a shell continuation (a trailing backslash) joined to the next line."""
    joined: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        number, text = (pending[0], pending[1] + " " + raw.lstrip()) if pending is not None else (n, raw)
        pending = (number, text[:-1].rstrip()) if text.endswith("\\") else None
        if pending is None:
            joined.append((number, text))
    return joined


def examples() -> list[Example]:
    found = []
    for path in DOCUMENTS:
        language = None
        for number, text in _lines(path):
            if text.lstrip().startswith("```"):
                language = None if language is not None else (text.strip().removeprefix("```") or "plain")
                continue
            match = _COMMAND.match(text)
            if language is None or not match:
                continue
            prompt, command = match.groups()
            if (language == "console" and prompt) or (language in ("bash", "sh", "shell") and not prompt):
                words = shlex.split(command, comments=True)[1:]
                # the command's own words: a redirection or the next command of a pipeline is the shell's
                shell = [n for n, w in enumerate(words) if w in ("|", "||", "&&", ";") or w.startswith((">", "2>"))]
                argv = words[: shell[0]] if shell else words
                found.append(Example(str(path.relative_to(ROOT)), number, tuple(argv)))
    return found


def expected(example: Example) -> set[int]:
    for prefix, codes in EXPECTED:
        if example.argv[: len(prefix)] == prefix or (
            prefix[0] == example.argv[0] and all(word in example.argv for word in prefix[1:])
        ):
            return codes
    raise AssertionError(f"{example}: no documented exit code in EXPECTED: add it")


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


def test_every_documented_command_runs_against_the_demo(demo_run: DemoRun) -> None:
    # Given the demo's local run (the sample documents indexed)
    demo, directory = demo_run.result, demo_run.directory
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    runnable = [e for e in examples() if not e.parse_only]
    last = [e for e in runnable if e.argv[:2] == ("local", "down")]
    try:
        # When each documented command runs, in the documents' order
        failures = []
        for example in [e for e in runnable if e not in last]:
            result = docindex(*example.argv, cwd=directory)
            # Then it exits as documented, and never with a traceback
            if result.returncode not in expected(example) or "Traceback" in result.stderr:
                output = result.stdout[-1500:] + result.stderr[-1500:]
                failures.append(f"{example} exited {result.returncode}:\n{output}")
        assert not failures, "\n\n".join(failures)
        # When the demo runs again with --stop (the samples are indexed: nothing new to read)
        again = docindex("demo", "--stop", cwd=directory)
        # Then it drains and stops the local servers at the end (test_demo.py's run leaves them running)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        assert "stopped moto" in again.stdout
        # And the documents' `local down` runs last, as documented
        for example in last[:1]:
            result = docindex(*example.argv, cwd=directory)
            output = result.stdout[-1500:] + result.stderr[-1500:]
            assert result.returncode in expected(example), f"{example} exited {result.returncode}:\n{output}"
            assert "Traceback" not in result.stderr, f"{example}:\n{output}"
    finally:
        docindex("local", "down", cwd=directory)
