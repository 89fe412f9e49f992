"""``docindex redrive start|status|cancel|reset``: the redrive service, from a terminal.

Same service and same guards as the scheduled Lambda (docs/dlq-redrive.md). Exit codes:
0 every DLQ handled (started, skipped, ...), 1 at least one DLQ ended in ``error``,
2 the arguments or the environment are invalid.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from docindex.core.aws import queue_name
from docindex.core.exceptions import RedriveConfigError
from docindex.redrive import wiring
from docindex.redrive.models import RedriveAction, RedriveRequest, RedriveSummary, check_velocity


def _velocity(text: str) -> int:
    try:
        return check_velocity(int(text))
    except ValueError as exc:
        message = str(exc) if text.strip().lstrip("-").isdigit() else f"not a whole number: {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def register(subparsers: Any) -> None:
    """Add the ``redrive`` subcommand."""
    parser = subparsers.add_parser(
        "redrive",
        help="move dead-lettered messages back (SQS StartMessageMoveTask), with guards",
        description=(
            "Redrive the DLQs with SQS StartMessageMoveTask at a limited velocity, only when the DLQ "
            "has messages, no task is running, the source queue is not backed up, OpenSearch is "
            "healthy and earlier redrives made progress. Reads the same environment as the Lambda "
            "(REDRIVE_*, OPENSEARCH_*, AWS_ENDPOINT_URL)."
        ),
    )
    parser.add_argument(
        "action",
        choices=[a.value for a in RedriveAction],
        help="start a redrive, show the last task, cancel the running task, or clear the no-progress stop",
    )
    parser.add_argument("--dlq", metavar="ARN", help="one DLQ (ARN or URL) instead of the configured ones")
    parser.add_argument(
        "--velocity",
        type=_velocity,
        metavar="N",
        help="messages per second, 1..500 (default REDRIVE_VELOCITY, 10)",
    )
    parser.add_argument(
        "--destination", metavar="ARN", help="with --dlq: move to this queue instead of the original source"
    )
    parser.add_argument("--dry-run", action="store_true", help="decide and report, start or cancel nothing")
    parser.add_argument(
        "--reset", action="store_true", help="with start: clear the no-progress stop first (cause fixed)"
    )
    parser.add_argument("--json", action="store_true", help="print the JSON summary the Lambda returns")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--stack",
        metavar="NAME",
        help="CloudFormation stack deployed from template.yaml: its DLQs, state table and OpenSearch "
        "(or DOCINDEX_STACK)",
    )
    where.add_argument(
        "--env-file",
        type=Path,
        metavar="PATH",
        help="KEY=VALUE lines (as `docindex local up` writes) for variables not already set",
    )
    parser.add_argument("--region", help="AWS region of the stack (default: AWS_REGION / the profile's)")
    parser.add_argument("--profile", help="AWS named profile")
    parser.set_defaults(func=run)


def load_env_file(path: Path) -> None:
    """Fill in variables from a KEY=VALUE file; the real environment wins."""
    from docindex.ops.envfile import read_env_file

    for key, value in read_env_file(path).items():
        os.environ.setdefault(key.removeprefix("export ").strip(), value.strip("'\""))


def load_stack(args: argparse.Namespace) -> None:
    """Fill in variables from the stack's outputs and parameters; the real environment wins."""
    from docindex.cli._ops import resolve
    from docindex.core.exceptions import CommandError

    deployment, _ = resolve(args)
    if args.profile:
        os.environ.setdefault("AWS_PROFILE", args.profile)
    if not (deployment.ingest_dlq_url or deployment.ocr_dlq_url):
        raise CommandError(f"{deployment.source}: no DLQ found (outputs IngestDlqUrl / OcrDlqUrl)")
    for key, value in {**deployment.environment(), "AWS_REGION": deployment.region}.items():
        os.environ.setdefault(key, value)


def run(args: argparse.Namespace) -> int:
    from docindex.core.exceptions import CommandError

    if args.env_file:
        load_env_file(args.env_file)
    elif args.stack or os.environ.get("DOCINDEX_STACK"):
        try:
            load_stack(args)
        except CommandError as exc:
            print(f"docindex redrive: {exc}", file=sys.stderr)
            return 2
    fields = {
        "action": args.action,
        "dlq_arn": args.dlq,
        "velocity": args.velocity,
        "dry_run": args.dry_run,
        "reset": args.reset,
        "destination_arn": args.destination,
    }
    try:
        request = RedriveRequest.from_event({k: v for k, v in fields.items() if v is not None})
        # Through the module: tests replace wiring.get_service.
        summary = wiring.get_service().run(request)
    except RedriveConfigError as exc:
        print(f"docindex redrive: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(render(summary))
    return 1 if summary.has_errors else 0


def render(summary: RedriveSummary) -> str:
    """The summary for a human: one block per DLQ."""
    title = f"redrive {summary.action}" + (" (dry run: nothing started or changed)" if summary.dry_run else "")
    lines = [title]
    for r in summary.results:
        head = f"  {queue_name(r.dlq_arn or '?')}: {r.status}" + (f" ({r.reason})" if r.reason else "")
        facts = [
            f"messages={r.approximate_messages}" if r.approximate_messages is not None else "",
            f"velocity={r.velocity}/s" if r.velocity is not None else "",
            f"moved={r.moved}" if r.moved is not None else "",
            f"to_move={r.to_move}" if r.to_move is not None else "",
            f"fruitless_rounds={r.fruitless_rounds}" if r.fruitless_rounds else "",
            f"next_attempt_at={r.next_attempt_at}" if r.next_attempt_at else "",
        ]
        lines.append("  ".join([head, *[f for f in facts if f]]))
        if r.source_arn:
            lines.append(f"      source: {r.source_arn}")
        if r.destination_arn:
            lines.append(f"      destination: {r.destination_arn}")
        if r.task_handle:
            lines.append(f"      task: {r.task_handle}")
        if r.message:
            lines.append(f"      {r.message}")
    return "\n".join(lines)
