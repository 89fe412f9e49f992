"""The ``docindex`` operator CLI.

Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds an argparse parser whose ``func`` default runs the command and
returns the process exit code.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

# Modules under docindex.cli that contribute subcommands, in --help order.
COMMAND_MODULES: tuple[str, ...] = (
    "local",
    "demo",
    "search",
    "analysis",
    "reindex",
    "access",
    "redrive",
    "diagnose",
    "backfill",
    "reconcile",
    "pause",
    "reprocess",
)


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


def _quiet_logs(verbose: bool) -> None:
    """Command output goes to stdout; Powertools' JSON logs go to stderr, warnings only by default."""
    from docindex.core.observability import logger

    handler = logger.registered_handler
    if isinstance(handler, logging.StreamHandler):
        try:
            handler.setStream(sys.stderr)
        except ValueError:
            # The previous stream is closed (main() called again in one process, e.g. by tests): just replace it.
            handler.stream = sys.stderr
    level = "INFO" if verbose else os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING")
    logger.setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level (to stderr)")
    args = parser.parse_args(argv)
    _quiet_logs(args.verbose)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
