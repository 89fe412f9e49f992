"""``KEY=VALUE`` env files written by ``docindex local up``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# written by `docindex local up`; read by `docindex local run` and the tests"]
    lines += [f"{key}={value}" for key, value in sorted(values.items())]
    path.write_text("\n".join(lines) + "\n")


def read_env_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


def apply_env_file(path: Path) -> dict[str, str]:
    """Load the file into ``os.environ`` (the handlers read their settings from there)."""
    values = read_env_file(path)
    os.environ.update(values)
    return values
