"""``docindex diagnose``: check a deployment for the incident's causes, with evidence and fixes.

Exit codes: 0 every check OK (or skipped), 1 at least one WARN, 2 at least one
FAIL, a check that could not read its facts, nothing configured, or every check skipped.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

if TYPE_CHECKING:
    from docindex.ops.diagnose.report import Diagnosis

CHECK_IDS = (
    "notifications",
    "visibility",
    "redrive",
    "event-source",
    "dlq",
    "backlog",
    "permissions",
    "index",
    "ocr-worker",
)
STYLES = {"OK": "green", "WARN": "yellow", "FAIL": "bold red", "SKIP": "dim"}


def register(subparsers: Any) -> None:
    """Add the ``diagnose`` subcommand."""
    parser = subparsers.add_parser(
        "diagnose",
        help="check notifications, queues, DLQs, backlog, permissions and the index; OK/WARN/FAIL with fixes",
        description=(
            "Check a docindex deployment for every cause of the queue-that-never-drains incident: duplicate "
            "notification paths, visibility timeout vs function timeout, redrive policies, the event source "
            "mapping, DLQ contents, the backlog trend, IAM, and the index. Read-only, except that sampling a "
            "queue receives a few messages and releases them at once. Exit code: 0 all OK, 1 warnings, "
            "2 failures (or the checks could not run)."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex diagnose --stack docindex-prod\n"
            "  docindex diagnose                       # the local run (.docindex/local.env)\n"
            "  docindex diagnose --check backlog --check dlq --json"
        ),
    )
    _ops.add_target_options(parser)
    parser.add_argument(
        "--check",
        action="append",
        choices=CHECK_IDS,
        metavar="ID",
        help=f"run only these checks (repeatable): {', '.join(CHECK_IDS)}",
    )
    parser.add_argument(
        "--sample",
        type=_ops.bounded_int(0, 1000),
        default=10,
        metavar="N",
        help="messages to peek at in the ingest queue and each DLQ (0: none; default 10)",
    )
    parser.add_argument(
        "--sample-seconds",
        type=_ops.bounded_float(0, 600),
        default=10.0,
        metavar="S",
        help="without CloudWatch data, watch a non-empty queue's depth this long (default 10)",
    )
    parser.add_argument(
        "--window",
        type=_ops.bounded_int(1, 24 * 60),
        default=15,
        metavar="MIN",
        help="CloudWatch throughput window in minutes (default 15)",
    )
    parser.add_argument("--details", action="store_true", help="show the evidence of passing checks too")
    _ops.add_output_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from docindex.ops.diagnose.run import Diagnoser

    deployment, clients = _ops.resolve(args)
    if not (deployment.bucket or deployment.ingest_queue_url or deployment.opensearch_endpoint):
        # A monitor must not read "all OK" off a run that checked nothing.
        raise CommandError(
            "nothing to diagnose: no stack, no env file and no resources in the environment; give --stack NAME "
            "(or DOCINDEX_STACK), run `docindex local up`, or set DOCINDEX_BUCKET / INGEST_QUEUE_URL / "
            "OPENSEARCH_ENDPOINT"
        )
    opensearch = _ops.opensearch_for(deployment) if deployment.opensearch_endpoint else None
    diagnoser = Diagnoser(
        deployment,
        clients,
        opensearch=opensearch,
        sample=max(0, args.sample),
        sample_seconds=max(0.0, args.sample_seconds),
        window_minutes=max(1, args.window),
    )
    diagnosis = diagnoser.run(only=args.check)
    if args.json:
        _ops.emit_json({**diagnosis.to_dict(), "settings": _ops.settings_json(deployment)})
    else:
        _ops.print_settings(deployment)
        render(diagnosis, _ops.Output(progress=False), details=args.details)
    return diagnosis.exit_code


def render(diagnosis: Diagnosis, out: _ops.Output, *, details: bool = False) -> None:
    """The diagnosis as a table of findings, then the evidence and fix of each that is not OK."""
    d = diagnosis.deployment
    out.line(f"docindex diagnose — {d.source}" + (" (local endpoints)" if d.is_local else f" ({d.region})"))
    resources = [
        ("bucket", d.bucket),
        ("ingest queue", d.ingest_queue_url),
        ("OCR queue", d.ocr_queue_url),
        ("indexer function", d.function_name),
        ("OpenSearch", f"{d.opensearch_endpoint} / {d.opensearch_index}" if d.opensearch_endpoint else None),
        ("OCR worker", f"{d.ecs_cluster}/{d.ecs_service}" if d.ecs_service else None),
    ]
    for label, value in resources:
        if value:
            out.line(f"  {label:<17} {value}", style="dim")
    out.line()
    out.table(
        ["status", "check", "finding"],
        [(c.status.value, c.title, c.summary) for c in diagnosis.checks],
        styles=[STYLES.get(c.status.value) for c in diagnosis.checks],
    )
    for check in diagnosis.checks:
        if check.status.value in ("OK", "SKIP") and not details:
            continue
        out.line()
        out.line(f"{check.status.value} {check.title}: {check.summary}", style=STYLES.get(check.status.value))
        for item in check.evidence:
            out.line(f"  · {item}")
        if check.fix:
            out.line("  fix:", style="bold")
            for fix_line in check.fix.splitlines():
                out.line(f"    {fix_line}")
    counts = diagnosis.counts
    out.line()
    if diagnosis.nothing_checked:
        out.line(
            f"FAIL: every check was skipped: nothing here to diagnose (exit {diagnosis.exit_code})",
            style=STYLES["FAIL"],
        )
        return
    out.line(
        f"{diagnosis.status.value}: {counts['OK']} ok, {counts['WARN']} warning(s), {counts['FAIL']} failure(s), "
        f"{counts['SKIP']} skipped (exit {diagnosis.exit_code})",
        style=STYLES.get(diagnosis.status.value),
    )
