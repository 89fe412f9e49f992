"""What the operator commands share: where the resources are, and how results are shown.

Not a subcommand (no ``register``). Output is human-readable by default
(tables; progress bars with rate and ETA on stderr, so stdout stays clean) and
JSON with ``--json``. ``rich`` draws the tables and bars when it is installed
(it is in the dev and ``local`` requirements); without it the same content is
printed as plain text.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from docindex.core.clients import AwsClients
from docindex.core.exceptions import CommandError, SettingsError
from docindex.ops.deployment import Deployment

DEFAULT_ENV_FILE = Path(".docindex/local.env")

# Exit codes shared by diagnose, backfill, reconcile, pause and resume (docs/operations.md, "Exit codes").
EXIT_OK = 0
EXIT_FINDINGS = 1  # WARN findings, differences found, parts skipped
EXIT_FAIL = 2  # FAIL findings, or the command could not run (bad arguments, unreachable, not found)
EXIT_INTERRUPTED = 130


# What a terminal would act on instead of showing: C0/C1 control characters (escape sequences, NUL,
# carriage return, tab, newline), the bidi overrides/isolates that reorder what follows ("Trojan
# Source" file names), line/paragraph separators, the BOM, and lone surrogates (non-UTF-8 names).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(value: Any) -> str:
    """``value`` as text a terminal shows literally: control, bidi and NUL characters as ``\\xNN``/``\\uNNNN``.

    Every renderer of the CLI passes what came from a bucket or the index (keys, file names, snippets,
    error messages quoting them) through this before printing.
    """
    return _UNSAFE.sub(_escape, str(value))


class HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions like the default, but keeps indented example lines as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for paragraph in text.splitlines():
            if paragraph.startswith("  ") or not paragraph.strip():
                lines.append(indent + paragraph)
            else:
                lines.append(textwrap.fill(paragraph, width, initial_indent=indent, subsequent_indent=indent))
        return "\n".join(lines)


def exclude_globs() -> tuple[str, ...]:
    """The keys never indexed, as the indexer reads them: ``EXCLUDE_KEYS`` if set here, else its default.

    When the indexer function's ``EXCLUDE_KEYS`` was changed from the default, export the same
    value for backfill and reconcile.
    """
    from docindex.core.settings import DEFAULT_EXCLUDE_KEYS

    text = os.environ.get("EXCLUDE_KEYS", DEFAULT_EXCLUDE_KEYS)
    return tuple(g.strip().lower() for g in text.split(",") if g.strip())


def bounded_int(low: int, high: int | None = None) -> Any:
    """An argparse type: a whole number in ``low..high``, else one clear line (exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"{value} is out of range: give {low}..{high}" if high is not None else f"must be ≥ {low}, got {value}"
            )
        return value

    parse.__name__ = "number"
    return parse


def bounded_float(low: float, high: float | None = None) -> Any:
    """An argparse type: a number in ``low..high``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if math.isnan(value) or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"{text} is out of range: give {low:g}..{high:g}" if high is not None else f"must be ≥ {low:g}"
            )
        return value

    parse.__name__ = "number"
    return parse


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """--stack / --env-file / explicit resources: where the pipeline is."""
    group = parser.add_argument_group(
        "where the pipeline is",
        "A CloudFormation stack (--stack, or DOCINDEX_STACK), else the local run's env file "
        f"({DEFAULT_ENV_FILE}, when it exists and no resource flag is given), else the environment "
        "(DOCINDEX_BUCKET, INGEST_QUEUE_URL, ...). Flags override single resources.",
    )
    group.add_argument("--stack", metavar="NAME", help="CloudFormation stack deployed from template.yaml")
    group.add_argument("--env-file", type=Path, metavar="PATH", help=f"KEY=VALUE file (default {DEFAULT_ENV_FILE})")
    group.add_argument("--region", help="AWS region (default: AWS_REGION / the profile's)")
    group.add_argument("--profile", help="AWS named profile")
    group.add_argument("--bucket", help="documents bucket")
    group.add_argument("--queue-url", help="ingest queue URL")
    group.add_argument("--dlq-url", help="ingest DLQ URL (default: from the queue's redrive policy)")
    group.add_argument("--ocr-queue-url", help="OCR queue URL")
    group.add_argument("--function", help="indexer function name")
    group.add_argument("--ledger-table", help="ledger table (pause state)")
    group.add_argument("--opensearch-endpoint", help="OpenSearch endpoint URL")
    group.add_argument("--index", help="index or alias (default documents)")
    group.add_argument("--cluster", help="ECS cluster of the OCR worker")
    group.add_argument("--service", help="ECS service of the OCR worker")


def add_index_options(parser: argparse.ArgumentParser, *, settings: str = "") -> None:
    """--stack / --env-file / --opensearch-endpoint / --index: where the index is (search, ask).
    ``settings``: the command's own environment variables to name beside OPENSEARCH_*."""
    group = parser.add_argument_group(
        "where the index is",
        f"Explicit flags, then the exported environment (OPENSEARCH_ENDPOINT, OPENSEARCH_INDEX, {settings}...), "
        f"then --env-file or {DEFAULT_ENV_FILE} (when it exists), then the stack (--stack or DOCINDEX_STACK).",
    )
    group.add_argument("--stack", metavar="NAME", help="CloudFormation stack deployed from template.yaml")
    group.add_argument(
        "--env-file",
        type=Path,
        default=None,
        help=f"read settings from this env file (default {DEFAULT_ENV_FILE} when it exists)",
    )
    group.add_argument("--region", help="AWS region (SigV4)")
    group.add_argument("--profile", help="AWS named profile")
    group.add_argument("--opensearch-endpoint", help="OpenSearch endpoint URL")
    group.add_argument("--index", help="index or alias (default documents)")


def add_output_options(parser: argparse.ArgumentParser, *, progress: bool = False) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document (for scripts) instead of tables")
    if progress:
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _profile_region(profile: str | None) -> str:
    try:
        import boto3

        return boto3.Session(profile_name=profile).region_name or "us-east-1"
    except Exception:  # noqa: BLE001 - no profile, no config: the default region
        return "us-east-1"


# Deployment field -> the attribute of the parsed flags (commands that take only some of the target
# options, like search, simply lack the others).
TARGET_FLAGS = {
    "bucket": "bucket",
    "ingest_queue_url": "queue_url",
    "ingest_dlq_url": "dlq_url",
    "ocr_queue_url": "ocr_queue_url",
    "function_name": "function",
    "ledger_table": "ledger_table",
    "opensearch_endpoint": "opensearch_endpoint",
    "opensearch_index": "index",
    "ecs_cluster": "cluster",
    "ecs_service": "service",
    "region": "region",
}


def env_file_of(args: argparse.Namespace, *, stack: str | None) -> Path | None:
    """``--env-file``, else the local run's default env file when it exists and no stack is named."""
    explicit = getattr(args, "env_file", None)
    if explicit is not None:
        if not Path(explicit).is_file():
            raise CommandError(f"{explicit}: no such env file (run `docindex local up`, or give --stack NAME)")
        return Path(explicit)
    if stack is None and DEFAULT_ENV_FILE.is_file():
        return DEFAULT_ENV_FILE
    return None


def resolve(args: argparse.Namespace) -> tuple[Deployment, AwsClients]:
    """The deployment the flags, the environment, the env file and the stack describe, and clients for it.

    One precedence for every command (docs/operations.md, "Where the settings come from"): explicit
    flags > exported environment > ``--env-file`` or ``.docindex/local.env`` > the stack's outputs.
    The env file also fills in the variables it has that are not exported (credentials, endpoint),
    so a flag never switches a local run to real AWS.
    """
    from docindex.ops.deployment import layered
    from docindex.ops.envfile import apply_env_file

    exported = dict(os.environ)  # before the env file fills anything in
    stack = getattr(args, "stack", None) or exported.get("DOCINDEX_STACK") or None
    env_file = env_file_of(args, stack=stack)
    file_values = apply_env_file(env_file) if env_file is not None else {}
    flags = {name: getattr(args, attr, None) for name, attr in TARGET_FLAGS.items()}
    profile = getattr(args, "profile", None)
    region = (
        flags["region"]
        or exported.get("AWS_REGION")
        or exported.get("AWS_DEFAULT_REGION")
        or file_values.get("AWS_REGION")
        or _profile_region(profile)
    )
    clients = AwsClients(region, profile=profile)
    stack_deployment = None
    if stack:
        endpoint_url = exported.get("AWS_ENDPOINT_URL") or file_values.get("AWS_ENDPOINT_URL")
        _check_endpoints(Deployment(endpoint_url=endpoint_url, origins={"endpoint_url": "the environment"}))
        stack_deployment = Deployment.from_stack(
            clients.client("cloudformation"), stack, region=region, endpoint_url=endpoint_url
        )
    deployment = layered(
        flags=flags,
        environ=exported,
        env_file=(f"env file {env_file}", file_values) if env_file is not None else None,
        stack=stack_deployment,
        default_region=region,
    )
    _check_endpoints(deployment)
    return deployment, clients


def _check_endpoints(deployment: Deployment) -> None:
    """An endpoint without its scheme is a configuration error, named with where it came from."""
    for name, variable in (("endpoint_url", "AWS_ENDPOINT_URL"), ("opensearch_endpoint", "OPENSEARCH_ENDPOINT")):
        value = getattr(deployment, name)
        if value and not str(value).startswith(("http://", "https://")):
            origin = deployment.origins.get(name, "the settings")
            raise SettingsError(f"{variable} {value!r} (from {origin}) must start with http:// or https://")


def settings_json(deployment: Deployment) -> dict[str, Any]:
    """Where the settings came from, as every ``--json`` output carries it."""
    return {"sources": deployment.settings_sources, "origins": dict(sorted(deployment.origins.items()))}


def print_settings(deployment: Deployment) -> None:
    """One line on stderr: which source gave which settings (stdout stays the command's output)."""
    print(safe_text(f"settings: {deployment.describe_settings()}"), file=sys.stderr)


def opensearch_for(deployment: Deployment) -> Any:
    from docindex.ops.deployment import opensearch_client_for

    return opensearch_client_for(deployment)


def emit_json(data: Any) -> None:
    """JSON on stdout; ``ensure_ascii`` would hide Japanese, so control characters are escaped by json itself
    and the bidi/separator characters (which json leaves raw) are escaped here."""
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    print(_JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


# json.dumps escapes C0 controls but not these, nor (with ensure_ascii=False) lone surrogates.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


# --------------------------------------------------------------------------- human output


class Output:
    """Tables and progress bars with rich; plain text without it."""

    def __init__(self, *, progress: bool = True) -> None:
        try:
            from rich.console import Console
        except ImportError:  # pragma: no cover - rich is in the dev/local requirements
            self.console: Any = None
            self.errors: Any = None
        else:
            self.console = Console(highlight=False, soft_wrap=False)
            self.errors = Console(stderr=True, highlight=False)
        self.show_progress = progress and sys.stderr.isatty()

    def line(self, text: str = "", style: str | None = None) -> None:
        text = safe_text(text)
        if self.console is None:
            print(text)
        else:
            # Long lines (commands to copy) are not broken up: the terminal wraps them.
            self.console.print(text, style=style, markup=False, soft_wrap=True)

    def rule(self, title: str) -> None:
        if self.console is None:
            print(f"== {title}")
        else:
            self.console.rule(title, style="dim")

    def table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        *,
        title: str | None = None,
        styles: Sequence[str | None] | None = None,
    ) -> None:
        """A table; ``styles`` colours whole rows (e.g. by status)."""
        columns = [safe_text(c) for c in columns]
        rows = [[safe_text(v) for v in row] for row in rows]
        if self.console is None:
            widths = [
                max(len(str(c)), *(len(str(r[i])) for r in rows)) if rows else len(c) for i, c in enumerate(columns)
            ]
            if title:
                print(title)
            print("  ".join(str(c).ljust(w) for c, w in zip(columns, widths, strict=True)))
            for row in rows:
                print("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)))
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title, title_justify="left", show_lines=False, show_header=any(columns))
        for column in columns:
            table.add_column(column, overflow="fold")
        for i, row in enumerate(rows):
            style = styles[i] if styles else None
            table.add_row(*(Text(str(v)) for v in row), style=style)
        self.console.print(table)

    @contextmanager
    def progress(self, description: str, *, total: int | None, unit: str = "objects") -> Iterator[ProgressBar]:
        bar = ProgressBar(self, description, total=total, unit=unit)
        try:
            yield bar
        finally:
            bar.close()


class ProgressBar:
    """A progress bar with count, rate and ETA (rich), or a status line every few seconds."""

    def __init__(self, output: Output, description: str, *, total: int | None, unit: str) -> None:
        self.output = output
        self.unit = unit
        self.description = description
        self._started = time.monotonic()
        self._last_line = 0.0
        self._completed = 0
        self._progress: Any = None
        self._task: Any = None
        if not output.show_progress:
            return
        if output.errors is None:  # pragma: no cover - plain fallback
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        unit_name = unit

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text(f"{speed:,.0f} {unit_name}/s" if speed else f"- {unit_name}/s", style="cyan")

        # Without a total (no object count known) there is no ETA to show, only count and rate.
        eta = [TextColumn("ETA"), TimeRemainingColumn()] if total else []
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            *eta,
            TimeElapsedColumn(),
            TextColumn("{task.fields[status]}", style="dim"),
            console=output.errors,
            transient=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(description, total=total or None, status="")

    def update(self, completed: int | None, *, total: int | None = None, status: str = "") -> None:
        """Set the count (None: keep it) and the status text."""
        if completed is not None:
            self._completed = completed
        completed = self._completed
        if self._progress is not None:
            kwargs: dict[str, Any] = {"completed": completed, "status": status}
            if total:
                kwargs["total"] = max(total, completed)
            self._progress.update(self._task, **kwargs)
            return
        if not self.output.show_progress:
            return
        now = time.monotonic()
        if now - self._last_line >= 2.0:  # pragma: no cover - plain fallback
            self._last_line = now
            rate = completed / max(now - self._started, 1e-6)
            print(f"{self.description}: {completed} {self.unit} ({rate:,.0f}/s) {status}", file=sys.stderr)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
