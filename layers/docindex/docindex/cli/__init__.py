"""The ``docindex`` operator CLI.

Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds an argparse parser whose ``func`` default runs the command and
returns the process exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules under docindex.cli that contribute subcommands, in --help order.
COMMAND_MODULES: tuple[str, ...] = ("local", "search", "redrive")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docindex",
        description="Keep an OpenSearch index in step with the documents in an S3 bucket.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"docindex.cli.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
