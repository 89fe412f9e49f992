"""``docindex ledger repair``: the ordering ledger after a point-in-time restore (docs/operations.md).

Exit codes: 0 done, 1 some entries could not be repaired (they changed meanwhile, or S3 did not
confirm an absence in time: run it again), 2 could not run.
"""

from __future__ import annotations

import argparse
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

JSON_VERSION = 1


def register(subparsers: Any) -> None:
    """Add the ``ledger`` subcommand."""
    parser = subparsers.add_parser(
        "ledger",
        help="the ordering ledger: repair it after a point-in-time restore",
        description="Operations on the ordering ledger (DynamoDB).",
        formatter_class=_ops.HelpFormatter,
    )
    sub = parser.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)
    repair = sub.add_parser(
        "repair",
        help="make every entry as new as the index and an observation of the bucket (after a PITR restore)",
        description=(
            "After the ledger table was restored to an earlier point in time, and with the pipeline paused "
            "(docindex pause): walk the bucket listing and the bucket's documents, and make each object's entry "
            "at least as new as its document (its version) and an observation of S3 at the listing's time; "
            "entries of objects that are gone (confirmed by HeadObject) say removed. Then every event from before "
            "is judged against what the index holds, and the next change gets a generation above anything "
            "written. Run docindex reconcile --against-ledger --fix afterwards: it re-reads what is still different."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex pause --stack docindex-prod\n"
            "  docindex ledger repair --stack docindex-prod\n"
            "  docindex resume --stack docindex-prod\n"
            "  docindex reconcile --stack docindex-prod --against-ledger --fix --pending-after 0"
        ),
    )
    _ops.add_target_options(repair)
    repair.add_argument("--prefix", default="", help="only keys under this prefix")
    repair.add_argument("--page-size", type=int, default=1000, help=argparse.SUPPRESS)
    _ops.add_output_options(repair, progress=True)
    repair.set_defaults(func=run_repair)


def run_repair(args: argparse.Namespace) -> int:
    from docindex.ingest.ledger import Ledger
    from docindex.ops.ledger_repair import LedgerRepair

    deployment, clients = _ops.resolve(args)
    if not deployment.bucket:
        raise CommandError("no bucket: give --bucket, --stack, or run `docindex local up`")
    if not deployment.ledger_table:
        raise CommandError("no ledger table: give --ledger-table or --stack")
    opensearch = _ops.opensearch_for(deployment)
    s3 = clients.client("s3")
    s3.head_bucket(Bucket=deployment.bucket)
    out = _ops.Output(progress=not (args.json or args.no_progress))
    if not args.json:
        _ops.print_settings(deployment)
        out.line(
            f"repair ledger {deployment.ledger_table} from s3://{deployment.bucket}/{args.prefix} and index "
            f"{deployment.opensearch_index}"
        )
    with out.progress(f"ledger repair {deployment.bucket}", total=None, unit="objects") as bar:
        report = LedgerRepair(
            s3=s3,
            opensearch=opensearch,
            ledger=Ledger(clients.client("dynamodb"), deployment.ledger_table),
            bucket=deployment.bucket,
            index=deployment.opensearch_index,
            prefix=args.prefix,
            page_size=max(1, min(args.page_size, 10_000)),
            exclude_globs=_ops.exclude_globs(),
            on_progress=lambda objects, written: bar.update(objects, status=f"{written:,} entries written"),
        ).run()
    complete = report.changed_meanwhile == 0 and report.unconfirmed == 0
    if args.json:
        _ops.emit_json({"version": JSON_VERSION, **report.to_dict(), "settings": _ops.settings_json(deployment)})
    else:
        out.table(
            ["", "count", ""],
            [
                ("objects in the bucket", f"{report.objects:,}", ""),
                ("documents in the index", f"{report.documents:,}", ""),
                ("entries checked", f"{report.entries_checked:,}", ""),
                ("raised to the index", f"{report.raised:,}", "generation below the document's version"),
                ("created", f"{report.created:,}", "objects the restored ledger did not know"),
                ("marked removed", f"{report.marked_removed:,}", "objects gone, entry said present"),
                ("marked present", f"{report.marked_present:,}", "objects listed, entry said removed"),
                ("unchanged", f"{report.unchanged:,}", ""),
                ("changed meanwhile", f"{report.changed_meanwhile:,}", "was the pipeline paused?"),
                ("unconfirmed", f"{report.unconfirmed:,}", "absence not confirmed in time"),
                ("time", f"{report.seconds:,.1f} s", ""),
            ],
        )
        if complete:
            out.line("ledger repaired; resume the pipeline, then run reconcile --against-ledger --fix", style="green")
        else:
            out.line("some entries were left as they are: run the repair again", style="yellow")
    return _ops.EXIT_OK if complete else _ops.EXIT_FINDINGS
