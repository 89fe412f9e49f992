"""Shared fixtures: limits and a Japanese-font check for scan samples."""

from __future__ import annotations

import pytest

from devkit.samples import find_japanese_font
from docindex.extract import ExtractionLimits


@pytest.fixture
def limits() -> ExtractionLimits:
    return ExtractionLimits()


@pytest.fixture(scope="session")
def japanese_font() -> str:
    """Scan samples need a Japanese TrueType font (Debian: fonts-ipafont-gothic, `make system-deps`).

    A missing font fails the tests that need it, with the package to install: never a silent skip.
    """
    return find_japanese_font()
