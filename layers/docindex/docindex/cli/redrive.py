"""``docindex redrive start|status|cancel|reset``: the redrive service, from a terminal.

Same service and same guards as the scheduled Lambda (docs/dlq-redrive.md). Exit codes:
0 every DLQ handled (started, skipped, ...), 1 at least one DLQ ended in ``error``,
2 the arguments or the environment are invalid.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from docindex.core.aws import queue_name
from docindex.core.exceptions import CommandError
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
    where = parser.add_argument_group(
        "where the pipeline is",
        "The exported environment (REDRIVE_*, OPENSEARCH_*, AWS_ENDPOINT_URL, ...), then --env-file or "
        ".docindex/local.env (when it exists and no stack is named), then the stack (--stack or DOCINDEX_STACK).",
    )
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
        help="KEY=VALUE lines (as `docindex local up` writes; default .docindex/local.env) for variables "
        "not already exported",
    )
    parser.add_argument("--region", help="AWS region of the stack (default: AWS_REGION / the profile's)")
    parser.add_argument("--profile", help="AWS named profile")
    parser.set_defaults(func=run)


def load_settings(args: argparse.Namespace) -> Any:
    """Put the resolved settings where the redrive service reads them (the environment).

    The same precedence as every command: the exported environment > ``--env-file`` or
    ``.docindex/local.env`` > the stack's outputs and parameters.
    """
    from docindex.cli._ops import resolve
    from docindex.ops.deployment import ENVIRONMENT_VARIABLES

    exported = set(os.environ)
    deployment, _ = resolve(args)
    if deployment.stack_name and not (deployment.ingest_dlq_url or deployment.ocr_dlq_url):
        raise CommandError(f"{deployment.source}: no DLQ found (outputs IngestDlqUrl / OcrDlqUrl)")
    if args.profile:
        os.environ.setdefault("AWS_PROFILE", args.profile)
    # Only what a source gave (never a class default such as OPENSEARCH_INDEX=documents) and what is not
    # exported already: the environment then holds exactly the resolved settings.
    variables = {field: variable for variable, field in ENVIRONMENT_VARIABLES.items()}
    given = {
        variables[name]: str(getattr(deployment, name))
        for name, origin in deployment.origins.items()
        if name in variables and origin not in ("environment", "default")
    }
    if "LEDGER_TABLE" in given:
        given["REDRIVE_STATE_TABLE"] = given["LEDGER_TABLE"]  # as template.yaml sets it
    for key, value in given.items():
        if key not in exported:
            os.environ[key] = value
    return deployment


def run(args: argparse.Namespace) -> int:
    deployment = load_settings(args)
    fields = {
        "action": args.action,
        "dlq_arn": args.dlq,
        "velocity": args.velocity,
        "dry_run": args.dry_run,
        "reset": args.reset,
        "destination_arn": args.destination,
    }
    event = {k: v for k, v in fields.items() if v is not None}
    request = RedriveRequest.from_event(event)
    if deployment.redrive_function and not deployment.is_local:
        summary = invoke_function(deployment, args.profile, event)
    else:
        # Through the module: tests replace wiring.get_service.
        summary = wiring.get_service().run(request)
    unreachable = _could_not_run(summary)
    if unreachable and not args.json:
        raise CommandError(unreachable)
    if args.json:
        from docindex.cli._ops import emit_json, settings_json

        emit_json({"version": 1, **summary.to_dict(), "settings": settings_json(deployment)})
    else:
        from docindex.cli._ops import print_settings, safe_text

        print_settings(deployment)
        print("\n".join(safe_text(line) for line in render(summary).splitlines()))
    return 2 if unreachable else 1 if summary.has_errors else 0


def invoke_function(deployment: Any, profile: str | None, event: dict[str, Any]) -> RedriveSummary:
    """Run the redrive in the stack's redrive function (``lambda:InvokeFunction``), with its role.

    A move task sends to its destination with the permissions of whoever started it, and the OCR
    queue's policy admits only the stack's roles: an operator's own credentials would start a move
    of the OCR DLQ that SQS then refuses message by message. The function is the same service with
    the same guards; its role is the one the policy names (docs/dlq-redrive.md).
    """
    import json

    from docindex.core.clients import AwsClients
    from docindex.redrive.models import DlqResult

    client = AwsClients(deployment.region, profile=profile).client("lambda")
    response = client.invoke(
        FunctionName=deployment.redrive_function, Payload=json.dumps(event).encode(), InvocationType="RequestResponse"
    )
    payload = json.loads(response["Payload"].read() or b"{}")
    if response.get("FunctionError") or not isinstance(payload, dict) or "results" not in payload:
        raise CommandError(f"the redrive function {deployment.redrive_function} failed: {str(payload)[:300]}")
    results = [DlqResult(**result) for result in payload["results"]]
    return RedriveSummary(str(payload.get("action")), bool(payload.get("dry_run")), results)


def _could_not_run(summary: RedriveSummary) -> str | None:
    """One line when every DLQ failed for want of AWS itself (endpoint down, no credentials), else None."""
    from docindex.cli._errors import NO_CREDENTIALS_FIX

    reasons = {r.reason for r in summary.results if r.status == "error"}
    if not summary.results or len(reasons) != 1 or any(r.status != "error" for r in summary.results):
        return None
    reason, message = reasons.pop(), summary.results[0].message or ""
    if reason == "endpoint_unreachable":
        return (
            f"cannot reach AWS ({message}): for the local run, start it with `docindex local up`; "
            "on AWS, check the network and --region"
        )
    if reason == "access_denied" and "credentials" in message.lower():
        return f"no AWS credentials ({message}): {NO_CREDENTIALS_FIX}"
    return None


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
