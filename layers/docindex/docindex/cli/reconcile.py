"""``docindex reconcile``: compare the bucket with the index; ``--fix`` repairs through the queue.

Exit codes: 0 the index is in step with the bucket (100 % coverage, no
orphans), 1 differences were found (with --fix: their repairs are enqueued; run
again once the queue has drained), 2 the comparison could not run.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError


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
        "--rate", type=float, default=200.0, metavar="N", help="with --fix: at most N repairs per second (default 200)"
    )
    parser.add_argument(
        "--max-backlog",
        type=int,
        default=100_000,
        metavar="N",
        help="with --fix: hold back while the ingest queue holds more than N messages (default 100000; 0 = never)",
    )
    parser.add_argument("--samples", type=int, default=10, metavar="N", help="example keys shown per kind (default 10)")
    parser.add_argument("--report", type=Path, metavar="PATH", help="write every difference to PATH (JSON lines)")
    parser.add_argument("--page-size", type=int, default=1000, help=argparse.SUPPRESS)
    _ops.add_output_options(parser, progress=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from docindex.core.exceptions import ReconcileError

    try:
        return _run(args)
    except (CommandError, ReconcileError) as exc:
        print(f"docindex reconcile: {exc}", file=sys.stderr)
        return _ops.EXIT_FAIL


def _queue_depth(sqs: Any, url: str) -> int | None:
    from botocore.exceptions import BotoCoreError, ClientError

    from docindex.core.aws import queue_depth

    try:
        return queue_depth(sqs, url)
    except (ClientError, BotoCoreError):
        return None


def _run(args: argparse.Namespace) -> int:
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
    waiting = _queue_depth(sqs, queue_url) if queue_url else None
    out = _ops.Output(progress=not (args.json or args.no_progress))
    try:
        estimate: int | None = count_documents(
            opensearch, deployment.opensearch_index, deployment.bucket, prefix=args.prefix
        )
    except Exception:  # noqa: BLE001 - only an estimate for the progress bar; the run reports the real error
        estimate = None
    if not args.json:
        out.line(
            f"reconcile s3://{deployment.bucket}/{args.prefix} with index {deployment.opensearch_index} "
            f"({deployment.opensearch_endpoint})" + (" — fixing" if args.fix else "")
        )
    with ExitStack() as stack:
        report_file = stack.enter_context(args.report.open("w", encoding="utf-8")) if args.report else None
        bar = stack.enter_context(out.progress(f"reconcile {deployment.bucket}", total=estimate, unit="objects"))

        def progress(objects: int, documents: int, differences: int) -> None:
            bar.update(objects, status=f"{documents:,} docs, {differences:,} differences")

        reconciler = Reconciler(
            s3=clients.client("s3"),
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
        )
        report = reconciler.run()
    data = report.to_dict()
    if waiting is not None:
        data["ingest_queue_depth_at_start"] = waiting
    if args.json:
        _ops.emit_json(data)
    else:
        _render(report, out, waiting, args.report)
    return _ops.EXIT_OK if report.in_step else _ops.EXIT_FINDINGS


def _render(report: Any, out: _ops.Output, waiting: int | None, report_path: Path | None) -> None:
    rows = [
        ("objects in the bucket", f"{report.objects:,}", ""),
        ("documents in the index", f"{report.documents:,}", ""),
        ("in sync", f"{report.in_sync:,}", ""),
        ("missing", f"{report.missing:,}", "object not in the index"),
        ("stale", f"{report.stale:,}", "indexed etag is not the object's"),
        ("orphaned", f"{report.orphaned:,}", "document of an object that no longer exists"),
        ("coverage", f"{report.coverage:.2f} %", "objects whose document is current"),
        ("time", f"{report.seconds:,.1f} s", f"{report.rate:,.0f} keys/s"),
    ]
    styles = [None, None, None, *(("yellow" if n else None) for n in (report.missing, report.stale, report.orphaned))]
    styles += ["green" if report.in_step else "yellow", None]
    out.table(["", "count", ""], rows, styles=styles)
    for kind, samples in report.samples.items():
        if samples:
            out.line(f"{kind} (first {len(samples)}):")
            for sample in samples:
                etags = " ".join(f"{k}={sample[k]}" for k in ("s3_etag", "index_etag") if k in sample)
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
    else:
        out.line("differences found; `docindex reconcile --fix` enqueues the repairs", style="yellow")
