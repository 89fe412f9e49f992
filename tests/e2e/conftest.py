"""The demo's local run, shared by the two tests that read it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import docindex


@dataclass(frozen=True)
class DemoRun:
    directory: Path  # where `docindex demo` ran: its .docindex holds the local run's state
    result: subprocess.CompletedProcess[str]


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoRun]:
    """`docindex demo` (what `make demo` runs) from an empty directory, once per test process.

    test_demo.py checks what it prints; test_doc_examples.py runs the documents' commands against
    its local run, then stops it. Both are in the xdist group ``demo``: one process runs them, after
    one demo (its servers, 20 uploads, 5 scans OCR'd, every document embedded: the cost of a demo).
    """
    directory = tmp_path_factory.mktemp("demo")
    result = docindex("demo", "--max-seconds", "900", cwd=directory, timeout=1200)
    try:
        yield DemoRun(directory, result)
    finally:
        docindex("local", "down", cwd=directory)
