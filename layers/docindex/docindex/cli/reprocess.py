"""``docindex reprocess``: re-extract documents already in the index (after an upgrade, say).

Exit codes: 0 done (or a dry run, or stopped at --limit), 2 an error stopped it
(the last key sent is printed: ``--after`` resumes there).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError


def _date(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a date: {text!r} (use 2026-11-20 or 2026-11-20T09:00:00+09:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def register(subparsers: Any) -> None:
    """Add the ``reprocess`` subcommand."""
    parser = subparsers.add_parser(
        "reprocess",
        help="send indexed documents matching a filter through the ingest queue again (re-extract them)",
        description=(
            "Find documents in the index by extraction error, extension, key prefix or indexing date, and send "
            "one change per document to the ingest queue, rate-limited, so the indexer re-reads and re-extracts "
            "the current object with every guarantee of a real S3 event (idempotency, ordering, OCR hand-off). "
            "Run it after an upgrade that reads new formats: docindex reprocess --extraction-error unsupported; "
            "after one that reads scans better: docindex reprocess --ocr-outdated (or --ocr-confidence-below 75). "
            "--dates reads only each document's date from its object's metadata (the file server's modification "
            "time: MTIME_METADATA_KEYS), without reading its content again."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex reprocess --extraction-error unsupported --dry-run\n"
            "  docindex reprocess --stack docindex-prod --extension doc --rate 50\n"
            "  docindex reprocess --prefix 総務部/ --before 2026-11-01\n"
            "  docindex reprocess --ocr-outdated --rate 5\n"
            "  docindex reprocess --ocr-confidence-below 60 --prefix スキャン/\n"
            "  docindex reprocess --ocr-status failed --dry-run\n"
            "  docindex reprocess --dates\n"
            "  docindex reprocess --dates --prefix 総務部/ --before 2026-12-01"
        ),
    )
    _ops.add_target_options(parser)
    parser.add_argument("--extraction-error", metavar="CODE", help="only documents with this extraction_error")
    parser.add_argument("--extension", metavar="EXT", help="only documents with this extension (doc, ppt, msg...)")
    parser.add_argument("--prefix", help="only keys under this prefix")
    parser.add_argument("--before", type=_date, metavar="DATE", help="only documents indexed before this date")
    parser.add_argument(
        "--ocr-confidence-below",
        type=_ops.bounded_int(1, 100),
        metavar="N",
        help="only documents with a page OCR read at a mean word confidence below N (0-100)",
    )
    parser.add_argument(
        "--ocr-status",
        choices=("failed", "pending", "done", "none"),
        help="only documents whose OCR ended so (failed: what `docindex failures` lists as ocr_failed)",
    )
    parser.add_argument(
        "--truncated",
        action="store_true",
        help="only documents read in part (a limit cut their text; raise it first: docs/operations.md)",
    )
    parser.add_argument(
        "--ocr-outdated",
        action="store_true",
        help="only documents OCR read with an older OCR pipeline than this version's (re-OCR after an upgrade)",
    )
    parser.add_argument(
        "--missing-vectors",
        action="store_true",
        help="meaning search: queue an embed job (the embed queue) for each document without the configured model's "
        "vectors, instead of re-extracting (after docindex reindex gave an older index the vector fields)",
    )
    parser.add_argument(
        "--dates",
        action="store_true",
        help="the file server's dates only: each object's metadata is read (HeadObject), not its content, "
        "unless the object changed; alone, it selects the documents indexed before dates were read from metadata",
    )
    parser.add_argument("--after", metavar="KEY", help="resume: only keys after this one (printed by an earlier run)")
    parser.add_argument(
        "--rate",
        type=_ops.bounded_float(0),
        default=50.0,
        metavar="N",
        help="at most N documents per second (default 50; 0 = unlimited)",
    )
    parser.add_argument("--limit", type=_ops.bounded_int(1), metavar="N", help="stop after N documents")
    parser.add_argument("--dry-run", action="store_true", help="count and show what would be sent; send nothing")
    _ops.add_output_options(parser, progress=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from docindex.ops.enqueue import ChangeSender, RateLimiter
    from docindex.ops.reprocess import DATES_REASON, REASON, ReprocessFilter, count_matching, matching, reprocess

    if args.missing_vectors:
        return _missing_vectors(args)
    filters = (args.extraction_error, args.extension, args.prefix, args.before, args.ocr_outdated)
    filtered = any((*filters, args.ocr_status, args.truncated)) or args.ocr_confidence_below is not None
    if not filtered and not args.dates:
        raise CommandError(
            "give at least one filter (--extraction-error, --extension, --prefix, --before, "
            "--ocr-confidence-below, --ocr-status, --truncated, --ocr-outdated), --dates or --missing-vectors"
        )
    deployment, clients = _ops.resolve(args)
    opensearch = _ops.opensearch_for(deployment)
    queue_url = deployment.ingest_queue_url
    if not queue_url and not args.dry_run:
        raise CommandError("no ingest queue: give --queue-url or --stack (or use --dry-run)")
    selection = ReprocessFilter(
        extraction_error=args.extraction_error,
        extension=args.extension,
        prefix=args.prefix,
        before=args.before,
        bucket=deployment.bucket,
        ocr_confidence_below=args.ocr_confidence_below,
        ocr_outdated=args.ocr_outdated,
        ocr_status=args.ocr_status,
        truncated=args.truncated,
        undated=args.dates and not filtered,
    )
    index = deployment.opensearch_index
    after = (deployment.bucket or "", args.after) if args.after else None
    total = count_matching(opensearch, index, selection)
    out = _ops.Output(progress=not (args.json or args.no_progress))
    if not args.json:
        _ops.print_settings(deployment)
        verb = "would send" if args.dry_run else "sending"
        what = " (dates only: each object's metadata, not its content)" if args.dates else ""
        out.line(f"reprocess: {total:,} documents match; {verb} to {queue_url or '?'}{what}")
    with out.progress("reprocess", total=min(total, args.limit) if args.limit else total, unit="documents") as bar:
        result = reprocess(
            matching(opensearch, index, selection, after=after),
            sender=None if args.dry_run else ChangeSender(clients.client("sqs"), str(queue_url)),
            rate=RateLimiter(args.rate or None),
            limit=args.limit,
            on_progress=lambda r: bar.update(r.matched, status=r.last[1] if r.last else ""),
            reason=DATES_REASON if args.dates else REASON,
        )
    if args.json:
        _ops.emit_json({"version": 1, **result.to_dict(), "settings": _ops.settings_json(deployment)})
    else:
        verb = "would send" if result.dry_run else "sent"
        out.table(
            ["", ""],
            [
                ("matched", f"{result.matched:,}"),
                (verb, f"{result.matched if result.dry_run else result.sent:,}"),
                ("time", f"{result.seconds:,.1f} s"),
            ],
        )
        for sample in result.samples if result.dry_run else []:
            out.line(f"  {sample['key']}", style="dim")
        if result.error:
            out.line(f"stopped by an error: {result.error}", style="bold red")
        if result.last and (result.error or args.limit):
            out.line(f"resume with: --after {result.last[1]!r}", style="yellow")
    return _ops.EXIT_FAIL if result.error else _ops.EXIT_OK


def _missing_vectors(args: argparse.Namespace) -> int:
    from docindex.core.settings import EmbeddingSettings
    from docindex.embed.settings import vector_spec
    from docindex.ingest.handoff import OcrQueue
    from docindex.ops.enqueue import RateLimiter
    from docindex.ops.vectors import embed_jobs, missing_vectors_query, queue_embed_jobs

    spec = vector_spec(EmbeddingSettings.from_env())
    if spec is None:
        raise CommandError("meaning search is off (EMBEDDINGS=off): no vectors to fill in")
    deployment, clients = _ops.resolve(args)
    opensearch = _ops.opensearch_for(deployment)
    # A stack deployed before the embed queue existed takes them on its OCR queue.
    queue_url = deployment.embed_queue_url or deployment.ocr_queue_url
    if not queue_url and not args.dry_run:
        raise CommandError(
            "no embed queue: give --stack (or an env file with EMBED_QUEUE_URL or OCR_QUEUE_URL), or use --dry-run"
        )
    index = deployment.opensearch_index
    query = missing_vectors_query(spec.model_id, prefix=args.prefix, bucket=deployment.bucket)
    total = int(opensearch.count(index=index, body={"query": query})["count"])
    after = (deployment.bucket or "", args.after) if args.after else None
    result = queue_embed_jobs(
        embed_jobs(opensearch, index, query, after=after),
        queue=None if args.dry_run else OcrQueue(clients.client("sqs"), str(queue_url), name="embed queue"),
        rate=RateLimiter(args.rate or None),
        limit=args.limit,
    )
    if args.json:
        _ops.emit_json({"version": 1, "model": spec.model_id, **result.to_dict()})
    else:
        verb = "would queue" if result.dry_run else "queued"
        queued = result.matched if result.dry_run else result.sent
        print(f"{total:,} documents without {spec.model_id} vectors; {verb} {queued:,} embed jobs")
        if result.error:
            last = result.last[1] if result.last else ""
            print(f"stopped by an error: {result.error}; resume with: --after {last!r}")
    return _ops.EXIT_FAIL if result.error else _ops.EXIT_OK
