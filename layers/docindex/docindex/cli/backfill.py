"""``docindex backfill``: the initial load of an existing bucket, resumable.

Exit codes: 0 finished (or stopped at --limit, or a dry run), 2 an error stopped
it (the checkpoint is kept: run the same command again to resume), 130 Ctrl-C
(likewise resumable).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

DEFAULT_STATE_DIR = Path(".docindex")


# The ``--json`` schema's version (docs/operations.md, "JSON output").
JSON_VERSION = 1
_positive = _ops.bounded_int(0)


def register(subparsers: Any) -> None:
    """Add the ``backfill`` subcommand."""
    parser = subparsers.add_parser(
        "backfill",
        help="enqueue every existing object of the bucket for indexing (resumable, rate-limited)",
        description=(
            "List the bucket (or read an S3 Inventory report) and send one change per object to the ingest "
            "queue, in SendMessageBatch batches of 10, at a bounded rate, holding back while the queue is deep. "
            "A checkpoint records progress after every batch: after an interruption the same command resumes "
            "where it stopped, and no object is enqueued twice in one run. Each change carries the time the "
            "object was listed, so a real S3 event that happens later always wins in the indexer's ledger."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex backfill --stack docindex-prod --dry-run\n"
            "  docindex backfill --stack docindex-prod --rate 200 --max-backlog 50000\n"
            "  docindex backfill --stack docindex-prod --inventory s3://inv-bucket/docs/cfg/2026-11-20T01-00Z/manifest.json\n"
            "  docindex backfill --bucket my-docs --prefix 営業部/ --queue-url https://sqs...   # explicit resources"
        ),
    )
    _ops.add_target_options(parser)
    parser.add_argument("--prefix", default="", help="only keys under this prefix")
    parser.add_argument(
        "--inventory",
        metavar="MANIFEST",
        help="read this S3 Inventory manifest.json (s3://... or a local path; CSV format) instead of listing",
    )
    parser.add_argument(
        "--rate",
        type=_ops.bounded_float(0),
        default=200.0,
        metavar="N",
        help="at most N objects per second (default 200; 0 = unlimited)",
    )
    parser.add_argument(
        "--max-backlog",
        type=_positive,
        default=100_000,
        metavar="N",
        help="pause sending while the ingest queue holds more than N messages (default 100000; 0 = never)",
    )
    parser.add_argument("--concurrency", type=_positive, default=4, metavar="N", help="batches in flight (default 4)")
    parser.add_argument("--limit", type=_positive, metavar="N", help="stop after about N objects (resume later)")
    parser.add_argument(
        "--checkpoint",
        type=Path,
        metavar="PATH",
        help="checkpoint file (default .docindex/backfill/<bucket>-<hash of bucket, prefix, source>.json)",
    )
    parser.add_argument(
        "--count",
        action="store_true",
        help="list once first to count the objects, for an ETA where CloudWatch has no object count "
        "(a prefix, an inventory, the local run); costs one extra listing pass",
    )
    parser.add_argument("--restart", action="store_true", help="ignore an existing checkpoint and start a new run")
    parser.add_argument("--dry-run", action="store_true", help="list and count; send nothing, write no checkpoint")
    _ops.add_output_options(parser, progress=True)
    parser.set_defaults(func=run)


def _source(args: argparse.Namespace, deployment: Any, s3: Any) -> Any:
    from docindex.core.exceptions import BackfillError
    from docindex.ops.backfill.sources import BucketListing, InventorySource, read_manifest

    try:
        if args.inventory:
            manifest = read_manifest(s3, args.inventory)
            if args.bucket and args.bucket != manifest.source_bucket:
                raise CommandError(f"the inventory is of bucket {manifest.source_bucket!r}, not {args.bucket!r}")
            return InventorySource(s3, manifest, prefix=args.prefix)
        if not deployment.bucket:
            raise CommandError("no bucket: give --bucket, --stack, or run `docindex local up`")
        return BucketListing(s3, deployment.bucket, prefix=args.prefix)
    except BackfillError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"{args.inventory}: {exc}") from None


def _checkpoint(args: argparse.Namespace, identity: dict[str, Any]) -> Any:
    from docindex.core.exceptions import BackfillError
    from docindex.ops.backfill.checkpoint import Checkpoint, default_checkpoint_path

    if args.dry_run:
        return Checkpoint(path=None, identity=identity)
    path = args.checkpoint or default_checkpoint_path(DEFAULT_STATE_DIR, identity)
    if args.restart and path.exists():
        path.unlink()
    try:
        return Checkpoint.load(path, identity)
    except BackfillError as exc:
        raise CommandError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from docindex.ops.backfill.run import Backfill, estimate_object_count
    from docindex.ops.enqueue import BacklogGuard, ChangeSender, RateLimiter

    deployment, clients = _ops.resolve(args)
    source = _source(args, deployment, clients.client("s3"))
    queue_url = deployment.ingest_queue_url
    if not queue_url and not args.dry_run:
        raise CommandError("no ingest queue: give --queue-url or --stack (or use --dry-run)")
    _preflight(args, deployment, clients)
    checkpoint = _checkpoint(args, {**source.identity(), "queue": queue_url or ""})
    if not args.json:
        _ops.print_settings(deployment)
    if checkpoint.completed_at:
        return _already_completed(args, checkpoint, source, deployment)

    out = _ops.Output(progress=not (args.json or args.no_progress))
    total = None
    if args.count:
        total = sum(1 for _ in source.objects(checkpoint.position))
    elif not args.inventory and not args.prefix and not deployment.is_local:
        total = estimate_object_count(clients.client("cloudwatch"), source.bucket)
    if not args.json:
        out.line(f"backfill {source.describe()} → {queue_url or '?'}" + (" (dry run)" if args.dry_run else ""))
        if checkpoint.position is not None or checkpoint.sent_ahead:
            out.line(f"  resuming run {checkpoint.run_id} after {checkpoint.position!r} ({checkpoint.enqueued} sent)")
        limits = f"rate ≤ {args.rate:g}/s" if args.rate else "no rate limit"
        verb = "would enqueue" if args.dry_run else "enqueueing"
        out.line(f"  {verb}; {limits}, max backlog {args.max_backlog or '∞'}, {args.concurrency} batches in flight")

    with out.progress(f"backfill {source.bucket}", total=total) as bar:

        def progress(listed: int, enqueued: int, skipped: int) -> None:
            # The bar counts objects dealt with (sent, or sent before a resume); the listing runs ahead.
            bar.update(
                enqueued + skipped, status=f"{listed:,} listed" + (f", {skipped:,} sent before" if skipped else "")
            )

        backlog = None
        if queue_url and not args.dry_run and args.max_backlog:
            backlog = BacklogGuard(
                clients.client("sqs"),
                queue_url,
                args.max_backlog,
                on_wait=lambda depth: bar.update(None, status=f"waiting: queue holds {depth:,}"),
            )
        result = Backfill(
            source,
            sender=None if args.dry_run else ChangeSender(clients.client("sqs"), str(queue_url)),
            checkpoint=checkpoint,
            rate=RateLimiter(args.rate or None),
            backlog=backlog,
            concurrency=max(1, args.concurrency),
            limit=args.limit,
            on_progress=progress,
            exclude_globs=_ops.exclude_globs(),
        ).run()

    if args.json:
        data = result.to_dict()
        if result.dry_run:
            # Nothing was sent: "enqueued" stays 0; what would have been sent is "would_enqueue".
            data["would_enqueue"], data["enqueued"], data["total_enqueued"] = result.enqueued, 0, 0
        _ops.emit_json({"version": JSON_VERSION, **data, "settings": _ops.settings_json(deployment)})
    else:
        _render(result, out, _resume_hint(args))
    return {"interrupted": _ops.EXIT_INTERRUPTED, "error": _ops.EXIT_FAIL}.get(result.stopped or "", _ops.EXIT_OK)


def _preflight(args: argparse.Namespace, deployment: Any, clients: Any) -> None:
    """Reach the bucket and the queue once before starting: an endpoint that is down, missing credentials or
    a missing bucket is one line (exit 2), not a run that stops on its first batch."""
    if not args.inventory and deployment.bucket:
        clients.client("s3").head_bucket(Bucket=deployment.bucket)
    if deployment.ingest_queue_url and not args.dry_run:
        clients.client("sqs").get_queue_attributes(QueueUrl=deployment.ingest_queue_url, AttributeNames=["QueueArn"])


def _already_completed(args: argparse.Namespace, checkpoint: Any, source: Any, deployment: Any) -> int:
    """A finished run: nothing to do, unless the listing has grown past where it ended (then say so, exit 1)."""
    newer = next(iter(source.objects(checkpoint.position)), None)
    if args.json:
        _ops.emit_json(
            {
                "version": JSON_VERSION,
                "completed": True,
                "already_completed": True,
                "listing_changed": newer is not None,
                **checkpoint.to_json(),
                "settings": _ops.settings_json(deployment),
            }
        )
    elif newer is None:
        print(
            f"this backfill finished at {checkpoint.completed_at} ({checkpoint.enqueued} objects enqueued) and the "
            f"listing has nothing after where it ended: nothing to do. --restart starts a new run "
            f"(checkpoint {checkpoint.path})"
        )
    else:
        print(
            _ops.safe_text(
                f"this backfill finished at {checkpoint.completed_at} ({checkpoint.enqueued} objects enqueued), "
                f"but the listing has changed since: {newer.key!r} and maybe more are new. Run it again with "
                "--restart (a new run over the whole listing), or `docindex reconcile --fix` to send only what "
                "the index lacks"
            )
        )
    return _ops.EXIT_OK if newer is None else _ops.EXIT_FINDINGS


def _resume_hint(args: argparse.Namespace) -> str:
    """How to continue this run: the same command, but never with --restart (that would discard the checkpoint)."""
    if args.restart:
        return "run the same command without --restart to resume (--restart would start over)"
    return "run the same command to resume"


def _render(result: Any, out: _ops.Output, resume: str) -> None:
    rows = [
        ("objects listed", f"{result.listed:,}"),
        ("enqueued" if not result.dry_run else "would enqueue", f"{result.enqueued:,}"),
    ]
    if result.skipped:
        rows.append(("skipped (sent before this resume)", f"{result.skipped:,}"))
    if not result.dry_run and result.total_enqueued != result.enqueued:
        rows.append(("enqueued by this run so far", f"{result.total_enqueued:,}"))
    rows += [("time", f"{result.seconds:,.1f} s"), ("rate", f"{result.rate:,.0f} objects/s")]
    if result.backlog_wait_seconds:
        rows.append(("held back by the backlog", f"{result.backlog_wait_seconds:,.0f} s"))
    if result.checkpoint:
        rows.append(("checkpoint", result.checkpoint))
    out.table(["", ""], rows)
    if result.dry_run and result.samples:
        out.line("first messages:")
        for sample in result.samples:
            out.line("  " + json.dumps(sample, ensure_ascii=False), style="dim")
    if result.completed:
        out.line("done" + ("" if result.dry_run else ": every object is in the ingest queue"), style="green")
    elif result.stopped == "limit":
        out.line(f"stopped at --limit; {resume.replace('resume', 'continue', 1)}", style="yellow")
    elif result.stopped == "interrupted":
        out.line(f"interrupted; {resume}", style="yellow")
    else:
        out.line(f"stopped by an error: {result.error}; {resume}", style="bold red")
