"""The ``docindex`` operator CLI.

Each subcommand lives in its own module exposing ``register(subparsers)``,
which adds an argparse parser whose ``func`` default runs the command and
returns the process exit code.

Exit codes (docs/operations.md, "Exit codes"): 0 ok; 1 the answer is "no" (no hits, differences,
warnings); 2 the command could not run (bad flags, configuration, credentials, an endpoint down),
always as one line on stderr with the fix (``-v``: and the traceback); 130 interrupted. The one
place that turns an exception into that line is ``main`` (``docindex.cli._errors``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

# Modules under docindex.cli that contribute subcommands, in --help order.
COMMAND_MODULES: tuple[str, ...] = (
    "local",
    "demo",
    "search",
    "ask",
    "analysis",
    "reindex",
    "access",
    "redrive",
    "diagnose",
    "backfill",
    "reconcile",
    "pause",
    "reprocess",
    "failures",
    "ledger",
    "plan",
)


EXIT_FAIL = 2
EXIT_INTERRUPTED = 130


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (exit 2) instead of the usage block, and ``-v`` on every (sub)command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            default=argparse.SUPPRESS,
            help="log at INFO level and show tracebacks (to stderr)",
        )

    def error(self, message: str) -> NoReturn:
        from docindex.cli._ops import safe_text

        self.exit(EXIT_FAIL, safe_text(f"{self.prog}: {message} (see `{self.prog} --help`)") + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="docindex",
        description="Keep an OpenSearch index in step with the documents in an S3 bucket.",
        epilog=(
            "exit codes: 0 ok, 1 the answer is no (no hits, differences, warnings), 2 could not run, 130 interrupted"
        ),
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"docindex.cli.{name}")
        module.register(subparsers)
    return parser


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a log line is written (not the one of the first call: tests swap it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def _quiet_logs(verbose: bool) -> None:
    """Command output goes to stdout; Powertools' JSON logs go to stderr, warnings only by default."""
    from docindex.core.observability import logger

    handler = logger.registered_handler
    if isinstance(handler, logging.StreamHandler):
        handler.setStream(_CurrentStderr())
    level = "INFO" if verbose else os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING")
    logger.setLevel(level)


def _command_name(args: argparse.Namespace) -> str:
    words = ["docindex", str(getattr(args, "command", "") or "")]
    words += [str(getattr(args, attr)) for attr in ("local_command",) if getattr(args, attr, None)]
    return " ".join(w for w in words if w)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Before any module builds its Powertools logger: INFO lines only with -v.
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "INFO" if {"-v", "--verbose"} & set(argv) else "WARNING")
    parser = build_parser()
    args = parser.parse_args(argv)
    verbose = bool(getattr(args, "verbose", False))
    _quiet_logs(verbose)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"{_command_name(args)}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`docindex search ... | head`): not an error of the command.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place every failure becomes one line and exit 2
        from docindex.cli._errors import describe
        from docindex.cli._ops import safe_text

        if verbose:
            traceback.print_exc(file=sys.stderr)
        print(safe_text(f"{_command_name(args)}: {describe(exc)}"), file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    raise SystemExit(main())
