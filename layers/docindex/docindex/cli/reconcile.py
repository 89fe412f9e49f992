"""``docindex reconcile``: compare the bucket with the index; ``--fix`` repairs through the queue.

Exit codes: 0 the index is in step with the bucket (100 % coverage, no
orphans), 1 differences were found (with --fix: their repairs are enqueued; run
again once the queue has drained), 2 the comparison could not run.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

# The ``--json`` schema's version (docs/operations.md, "JSON output").
JSON_VERSION = 1


def register(subparsers: Any) -> None:
    """Add the ``reconcile`` subcommand."""
    parser = subparsers.add_parser(
        "reconcile",
        help="compare the bucket with the index (missing, stale, orphaned, coverage %%); --fix repairs",
        description=(
            "Stream the bucket listing and the bucket's index documents, both sorted by key, and merge them in "
            "constant memory: objects missing from the index, documents whose etag is not the object's (stale), "
            "documents of objects that no longer exist (orphaned), and the coverage. --fix enqueues the missing "
            "and stale objects as changes and the orphans as removals, so the indexer applies them through its "
            "ordering ledger like any other event. Exit code: 0 in step, 1 differences found, 2 error."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex reconcile --stack docindex-prod\n"
            "  docindex reconcile --stack docindex-prod --fix --report differences.jsonl\n"
            "  docindex reconcile --prefix 経理/ --json        # the local run"
        ),
    )
    _ops.add_target_options(parser)
    parser.add_argument("--prefix", default="", help="only keys under this prefix")
    parser.add_argument("--fix", action="store_true", help="enqueue repairs for every difference found")
    parser.add_argument(
        "--rate",
        type=_ops.bounded_float(0),
        default=200.0,
        metavar="N",
        help="with --fix: at most N repairs per second (default 200)",
    )
    parser.add_argument(
        "--max-backlog",
        type=_ops.bounded_int(0),
        default=100_000,
        metavar="N",
        help="with --fix: hold back while the ingest queue holds more than N messages (default 100000; 0 = never)",
    )
    parser.add_argument(
        "--pending-after",
        type=_ops.bounded_int(0, 365 * 86_400),
        default=None,
        metavar="SECONDS",
        help="report documents pending OCR for longer than this (default 21600 = 6 h; 0 = skip); "
        "with --fix their objects are announced again on the ingest queue (the indexer queues the OCR)",
    )
    parser.add_argument(
        "--samples",
        type=_ops.bounded_int(0, 10_000),
        default=10,
        metavar="N",
        help="example keys shown per kind (default 10)",
    )
    parser.add_argument(
        "--against-ledger",
        action="store_true",
        help="also compare each document's version with the generation the ordering ledger holds: finds "
        "documents the index lost a write of (an index restored from a snapshot); needs the ledger table",
    )
    parser.add_argument("--report", type=Path, metavar="PATH", help="write every difference to PATH (JSON lines)")
    parser.add_argument("--page-size", type=int, default=1000, help=argparse.SUPPRESS)
    _ops.add_output_options(parser, progress=True)
    parser.set_defaults(func=run)


def _bucket_total(args: argparse.Namespace, deployment: Any, clients: Any) -> int | None:
    """How many objects the comparison will walk: CloudWatch's daily count on AWS (whole bucket only), a
    counting pass locally (cheap there); None when unknown (the bar then shows count and rate only)."""
    from docindex.ops.backfill.run import estimate_object_count

    if deployment.is_local:
        paginator = clients.client("s3").get_paginator("list_objects_v2")
        pages = paginator.paginate(Bucket=deployment.bucket, Prefix=args.prefix)
        return sum(int(page.get("KeyCount", 0)) for page in pages)
    if args.prefix:
        return None
    return estimate_object_count(clients.client("cloudwatch"), deployment.bucket)


def _queue_depth(sqs: Any, url: str) -> int | None:
    from botocore.exceptions import BotoCoreError, ClientError

    from docindex.core.aws import queue_depth

    try:
        return queue_depth(sqs, url)
    except (ClientError, BotoCoreError):
        return None


def run(args: argparse.Namespace) -> int:
    from docindex.ops.enqueue import BacklogGuard, ChangeSender, RateLimiter
    from docindex.ops.reconcile import Reconciler, count_documents

    deployment, clients = _ops.resolve(args)
    if not deployment.bucket:
        raise CommandError("no bucket: give --bucket, --stack, or run `docindex local up`")
    opensearch = _ops.opensearch_for(deployment)
    queue_url = deployment.ingest_queue_url
    if args.fix and not queue_url:
        raise CommandError("--fix needs the ingest queue: give --queue-url or --stack")
    sqs = clients.client("sqs")
    s3 = clients.client("s3")
    # Reach both sides once before printing anything: an endpoint that is down, missing credentials or a
    # missing bucket or index is one line (exit 2).
    s3.head_bucket(Bucket=deployment.bucket)
    count_documents(opensearch, deployment.opensearch_index, deployment.bucket, prefix=args.prefix)
    waiting = _queue_depth(sqs, queue_url) if queue_url else None
    out = _ops.Output(progress=not (args.json or args.no_progress))
    total = _bucket_total(args, deployment, clients) if out.show_progress else None
    if not args.json:
        _ops.print_settings(deployment)
        out.line(
            f"reconcile s3://{deployment.bucket}/{args.prefix} with index {deployment.opensearch_index} "
            f"({deployment.opensearch_endpoint})" + (" — fixing" if args.fix else "")
        )
    with ExitStack() as stack:
        report_file = stack.enter_context(args.report.open("w", encoding="utf-8")) if args.report else None
        # The bar counts the bucket's objects against the bucket's total (when it is known), never the index's.
        bar = stack.enter_context(out.progress(f"reconcile {deployment.bucket}", total=total, unit="objects"))

        def progress(objects: int, documents: int, differences: int) -> None:
            bar.update(objects, status=f"{documents:,} docs, {differences:,} differences")

        ledger = None
        if args.against_ledger:
            from docindex.ingest.ledger import Ledger

            if not deployment.ledger_table:
                raise CommandError("--against-ledger needs the ledger table: give --ledger-table or --stack")
            ledger = Ledger(clients.client("dynamodb"), deployment.ledger_table)
        reconciler = Reconciler(
            s3=s3,
            opensearch=opensearch,
            bucket=deployment.bucket,
            index=deployment.opensearch_index,
            prefix=args.prefix,
            sender=ChangeSender(sqs, str(queue_url)) if args.fix else None,
            rate=RateLimiter(args.rate or None),
            backlog=BacklogGuard(sqs, str(queue_url), args.max_backlog) if args.fix and args.max_backlog else None,
            page_size=max(1, min(args.page_size, 10_000)),
            sample_size=max(0, args.samples),
            report_file=report_file,
            on_progress=progress,
            exclude_globs=_ops.exclude_globs(),
            ledger=ledger,
        )
        report = reconciler.run()
    pending = _stuck_pending(args, deployment, clients, opensearch)
    data = {"version": JSON_VERSION, **report.to_dict(), "settings": _ops.settings_json(deployment)}
    if pending is not None:
        data["pending_ocr"] = pending.to_dict(max(0, args.samples))
    data["distinct_contents"] = _distinct_contents(opensearch, deployment, args.prefix)
    if waiting is not None:
        data["ingest_queue_depth_at_start"] = waiting
    if args.json:
        _ops.emit_json(data)
    else:
        _render(report, out, waiting, args.report)
        _render_pending(pending, data["distinct_contents"], out)
    in_step = report.in_step and not (pending and pending.stuck)
    return _ops.EXIT_OK if in_step else _ops.EXIT_FINDINGS


def _stuck_pending(args: argparse.Namespace, deployment: Any, clients: Any, opensearch: Any) -> Any:
    """Documents pending OCR too long; with --fix their objects are announced again. None when skipped."""
    from docindex.ops.enqueue import ChangeSender, RateLimiter
    from docindex.ops.pending import DEFAULT_PENDING_AFTER_SECONDS, PendingReport, find_stuck_pending, reannounce

    seconds = DEFAULT_PENDING_AFTER_SECONDS if args.pending_after is None else args.pending_after
    if seconds <= 0:
        return None
    report = PendingReport(older_than_seconds=seconds)
    report.stuck = find_stuck_pending(
        opensearch, deployment.opensearch_index, deployment.bucket, older_than_seconds=seconds, prefix=args.prefix
    )
    if args.fix and report.stuck:
        # The ingest queue, as every other repair: the OCR queue admits only the stack's roles.
        sender = ChangeSender(clients.client("sqs"), str(deployment.ingest_queue_url))
        reannounce(report, bucket=deployment.bucket, sender=sender, rate=RateLimiter(args.rate or None))
    return report


def _distinct_contents(opensearch: Any, deployment: Any, prefix: str) -> int | None:
    from docindex.ops.pending import distinct_contents

    try:
        return distinct_contents(opensearch, deployment.opensearch_index, deployment.bucket, prefix=prefix)
    except Exception:  # noqa: BLE001 - an index without content_sha256 mapped: reported as unknown
        return None


def _render_pending(pending: Any, distinct: int | None, out: _ops.Output) -> None:
    if distinct is not None:
        out.line(f"distinct contents: {distinct:,} (identical copies count once; `docindex search --collapse`)")
    if pending is None:
        return
    hours = pending.older_than_seconds / 3600
    if not pending.stuck:
        out.line(f"no document pending OCR for more than {hours:g} h", style="green")
        return
    out.line(f"{len(pending.stuck):,} document(s) pending OCR for more than {hours:g} h:", style="yellow")
    for sample in pending.stuck[:10]:
        out.line(_ops.safe_text(f"  {sample.key}  indexed_at={sample.indexed_at}"), style="dim")
    if pending.requeued:
        out.line(
            f"announced {pending.requeued:,} object(s) again on the ingest queue: the indexer hands each to OCR",
            style="yellow",
        )
    else:
        out.line("`docindex reconcile --fix` announces them again (the indexer queues their OCR)", style="yellow")


def _render(report: Any, out: _ops.Output, waiting: int | None, report_path: Path | None) -> None:
    rows = [
        ("objects in the bucket", f"{report.objects:,}", ""),
        ("documents in the index", f"{report.documents:,}", ""),
        ("in sync", f"{report.in_sync:,}", ""),
        ("missing", f"{report.missing:,}", "object not in the index"),
        ("stale", f"{report.stale:,}", "indexed etag is not the object's"),
        ("orphaned", f"{report.orphaned:,}", "document of an object that no longer exists"),
    ]
    counts = [report.missing, report.stale, report.orphaned]
    if report.against_ledger:
        rows.append(("behind", f"{report.behind:,}", "document older than the ledger's generation"))
        counts.append(report.behind)
    rows += [
        ("coverage", f"{report.coverage:.2f} %", "objects whose document is current"),
        ("time", f"{report.seconds:,.1f} s", f"{report.rate:,.0f} keys/s"),
    ]
    styles = [None, None, None, *(("yellow" if n else None) for n in counts)]
    styles += ["green" if report.in_step else "yellow", None]
    out.table(["", "count", ""], rows, styles=styles)
    for kind, samples in report.samples.items():
        if samples:
            out.line(f"{kind} (first {len(samples)}):")
            for sample in samples:
                names = ("s3_etag", "index_etag", "index_version", "ledger_generation")
                etags = " ".join(f"{k}={sample[k]}" for k in names if k in sample)
                out.line(f"  {sample['key']}  {etags}", style="dim")
    if report_path:
        out.line(f"every difference: {report_path}")
    if waiting:
        out.line(
            f"note: {waiting:,} message(s) were waiting in the ingest queue: some differences may only be in flight",
            style="yellow",
        )
    if report.in_step:
        out.line("the index is in step with the bucket", style="green")
    elif report.fixed:
        out.line(
            f"enqueued {report.enqueued_created:,} change(s) and {report.enqueued_removed:,} removal(s); "
            "run reconcile again once the ingest queue has drained",
            style="yellow",
        )
        kept = report.orphans_reappeared + report.orphans_unconfirmed
        if kept:
            out.line(
                f"kept {kept:,} orphaned document(s): {report.orphans_reappeared:,} whose object exists again, "
                f"{report.orphans_unconfirmed:,} whose absence S3 did not confirm in time (a later run retries)",
                style="yellow",
            )
    else:
        out.line("differences found; `docindex reconcile --fix` enqueues the repairs", style="yellow")
