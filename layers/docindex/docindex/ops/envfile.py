"""``KEY=VALUE`` env files (``docindex local up`` writes ``.docindex/local.env``): one parser, python-dotenv.

The precedence is the same for every command (docs/operations.md, "Where the settings come from"):
a variable exported in the process environment wins over the env file, so ``apply_env_file`` only
fills in what is not already set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# written by `docindex local up`; read by `docindex local run`, the operator commands and the tests"]
    lines += [f"{key}={_quote(value)}" for key, value in sorted(values.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _quote(value: str) -> str:
    """Plain when dotenv reads it back unchanged; single-quoted otherwise, where dotenv reads only ``\\\\``
    and ``\\'`` as escapes (a UNC path in FILE_SERVER_SHARES keeps both its backslashes)."""
    if value and not any(c in value for c in " \t#'\"\\$\n"):
        return value
    if "\n" in value:
        raise ValueError(f"cannot write {value!r} to an env file")
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def read_env_file(path: Path) -> dict[str, str]:
    """The file's variables (python-dotenv's syntax: ``export``, quotes, comments); no interpolation."""
    from dotenv import dotenv_values

    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such env file")
    values = dotenv_values(path, interpolate=False, encoding="utf-8")
    return {key: value for key, value in values.items() if value is not None}


def apply_env_file(path: Path) -> dict[str, str]:
    """Fill ``os.environ`` from the file, keeping what is already exported; return the file's values."""
    values = read_env_file(path)
    for key, value in values.items():
        os.environ.setdefault(key, value)
    return values
