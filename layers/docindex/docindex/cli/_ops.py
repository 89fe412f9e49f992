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
import os
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from docindex.core.clients import AwsClients
from docindex.core.exceptions import CommandError, DeploymentError
from docindex.ops.deployment import Deployment

DEFAULT_ENV_FILE = Path(".docindex/local.env")

# Exit codes shared by diagnose, backfill, reconcile, pause and resume (docs/operations.md, "Exit codes").
EXIT_OK = 0
EXIT_FINDINGS = 1  # WARN findings, differences found, parts skipped
EXIT_FAIL = 2  # FAIL findings, or the command could not run (bad arguments, unreachable, not found)
EXIT_INTERRUPTED = 130


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


def add_output_options(parser: argparse.ArgumentParser, *, progress: bool = False) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document (for scripts) instead of tables")
    if progress:
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _region(args: argparse.Namespace) -> str:
    if getattr(args, "region", None):
        return str(args.region)
    env = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if env:
        return env
    try:
        import boto3

        return boto3.Session(profile_name=getattr(args, "profile", None)).region_name or "us-east-1"
    except Exception:  # noqa: BLE001 - no profile, no config: the default region
        return "us-east-1"


def resolve(args: argparse.Namespace) -> tuple[Deployment, AwsClients]:
    """The deployment the flags, the stack or the env file describe, and clients for it."""
    flags = {
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
    }
    # (commands that take only some of the target options, like search, simply lack the others)
    explicit = {name: getattr(args, flag, None) for name, flag in flags.items()}
    stack = args.stack or os.environ.get("DOCINDEX_STACK")
    profile = getattr(args, "profile", None)
    if stack:
        region = _region(args)
        clients = AwsClients(region, profile=profile)
        try:
            deployment = Deployment.from_stack(
                clients.client("cloudformation"),
                stack,
                region=region,
                endpoint_url=os.environ.get("AWS_ENDPOINT_URL"),
            )
        except DeploymentError as exc:
            raise CommandError(str(exc)) from None
    else:
        env_file = args.env_file
        if env_file is None and DEFAULT_ENV_FILE.exists() and not any(explicit.values()):
            env_file = DEFAULT_ENV_FILE
        source = "environment"
        if env_file is not None:
            if not env_file.exists():
                raise CommandError(f"{env_file} not found (run `docindex local up`, or give --stack)")
            from docindex.ops.envfile import apply_env_file

            apply_env_file(env_file)
            source = f"env file {env_file}"
        deployment = Deployment.from_environment(os.environ, source=source)
        region = getattr(args, "region", None) or deployment.region or _region(args)
        deployment = deployment.with_overrides(region=region)
        clients = AwsClients(region, profile=profile)
    return deployment.with_overrides(**explicit), clients


def opensearch_for(deployment: Deployment) -> Any:
    from docindex.ops.deployment import opensearch_client_for

    try:
        return opensearch_client_for(deployment)
    except DeploymentError as exc:
        raise CommandError(str(exc)) from None


def emit_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


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
