"""``docindex pause`` / ``docindex resume``: stop and restart the consumers, keeping every message.

Exit codes: 0 done (or already in that state), 1 some part was skipped (not
deployed here; locally there is nothing to pause but the runner), 2 some part
failed.
"""

from __future__ import annotations

import argparse
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

STYLES = {"changed": "green", "unchanged": "dim", "planned": "cyan", "skipped": "yellow", "failed": "bold red"}


def register(subparsers: Any) -> None:
    """Add the ``pause`` and ``resume`` subcommands."""
    pause = subparsers.add_parser(
        "pause",
        formatter_class=_ops.HelpFormatter,
        help="emergency stop: disable the indexer's event source mapping, scale the OCR worker to 0",
        description=(
            "Stop consuming without losing anything: disable the indexer's SQS event source mapping and scale the "
            "OCR worker's ECS service to zero (its auto scaling bounds to 0/0, so no alarm starts it again). "
            "Every message stays in its queue. The previous state is recorded in the ledger table (item "
            "ops#pause) for `docindex resume`. Locally there is no mapping: stop `docindex local run` with Ctrl-C."
        ),
    )
    _ops.add_target_options(pause)
    pause.add_argument("--dry-run", action="store_true", help="show what would change")
    pause.add_argument(
        "--wait",
        type=_ops.bounded_float(0, 3600),
        default=60.0,
        metavar="S",
        help="wait up to S seconds for the mapping to settle",
    )
    _ops.add_output_options(pause)
    pause.set_defaults(func=run_pause)

    resume = subparsers.add_parser(
        "resume",
        formatter_class=_ops.HelpFormatter,
        help="undo pause: enable the event source mapping, give the OCR worker its capacity back",
        description=(
            "Enable the indexer's event source mapping again and restore the OCR worker's scaling bounds and "
            "desired count recorded by `docindex pause` (or given here). Locally: start `docindex local run`."
        ),
    )
    _ops.add_target_options(resume)
    resume.add_argument(
        "--desired", type=_ops.bounded_int(0, 10_000), metavar="N", help="OCR worker desired count (default: as before)"
    )
    resume.add_argument(
        "--min", dest="min_capacity", type=_ops.bounded_int(0, 10_000), metavar="N", help="auto scaling minimum"
    )
    resume.add_argument(
        "--max", dest="max_capacity", type=_ops.bounded_int(0, 10_000), metavar="N", help="auto scaling maximum"
    )
    resume.add_argument("--dry-run", action="store_true", help="show what would change")
    resume.add_argument(
        "--wait",
        type=_ops.bounded_float(0, 3600),
        default=60.0,
        metavar="S",
        help="wait up to S seconds for the mapping to settle",
    )
    _ops.add_output_options(resume)
    resume.set_defaults(func=run_resume)


def _control(args: argparse.Namespace) -> Any:
    from docindex.ops.pause import PipelineControl

    deployment, clients = _ops.resolve(args)
    if not (deployment.function_name or deployment.ingest_queue_url or deployment.ecs_service):
        raise CommandError(
            "nothing to pause or resume: no indexer function, ingest queue or OCR worker service is configured; "
            "give --stack NAME (or DOCINDEX_STACK), or run `docindex local up`"
        )
    return PipelineControl(deployment, clients, wait_seconds=max(0.0, args.wait))


def run_pause(args: argparse.Namespace) -> int:
    control = _control(args)
    return _finish(control.pause(dry_run=args.dry_run), args, control.deployment)


def run_resume(args: argparse.Namespace) -> int:
    control = _control(args)
    report = control.resume(
        dry_run=args.dry_run,
        desired=args.desired,
        min_capacity=args.min_capacity,
        max_capacity=args.max_capacity,
    )
    return _finish(report, args, control.deployment)


def _finish(report: Any, args: argparse.Namespace, deployment: Any) -> int:
    if args.json:
        _ops.emit_json({"version": 1, **report.to_dict(), "settings": _ops.settings_json(deployment)})
        return int(report.exit_code)
    _ops.print_settings(deployment)
    out = _ops.Output(progress=False)
    out.line(f"docindex {report.action}" + (" (dry run: nothing changed)" if report.dry_run else ""))
    out.table(
        ["status", "component", "what happened"],
        [(s.status.value, s.component, s.detail) for s in report.steps],
        styles=[STYLES.get(s.status.value) for s in report.steps],
    )
    for step in report.steps:
        if step.fix and step.status.value in ("failed", "skipped", "unchanged"):
            out.line(f"  {step.component}: {step.fix}")
    if report.state and report.action == "pause":
        state = report.state
        if state.get("desired_count") is not None:
            out.line(
                f"recorded: OCR worker desired {state['desired_count']}, bounds "
                f"{state.get('min_capacity')}..{state.get('max_capacity')}; mappings "
                + ", ".join(f"{u} ({'enabled' if e else 'disabled'})" for u, e in state.get("mappings", {}).items()),
                style="dim",
            )
    for note in report.notes:
        out.line(f"note: {note}")
    return int(report.exit_code)
