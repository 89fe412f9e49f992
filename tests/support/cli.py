"""The docindex command line as a user runs it: ``python -m docindex.cli ARGS`` in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def docindex(
    *args: str, cwd: Path, timeout: float = 600, ok: tuple[int, ...] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``docindex ARGS`` in ``cwd``; with ``ok``, fail the test unless it exits with one of those codes."""
    result = subprocess.run(
        [sys.executable, "-m", "docindex.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if ok is not None and result.returncode not in ok:
        raise AssertionError(f"docindex {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result
