"""``docindex failures``: the files that could not be read completely, by reason, and how to retry each.

Exit codes: 0 every document was read completely (within the filters), 1 some were not (listed), 2 the
index could not be read.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from typing import Any

from docindex.cli import _ops

# The ``--json`` schema's version (docs/operations.md, "JSON output").
JSON_VERSION = 1
SHOWN = 20
CSV_COLUMNS = (
    *("reason", "bucket", "key", "detail", "extraction_error", "ocr_status", "ocr_confidence"),
    *("content_type", "size", "last_modified", "indexed_at", "retry"),
)
# A cell a spreadsheet would run as a formula (OWASP "CSV injection"): a file named =HYPERLINK(...).
_FORMULA = re.compile(r"^[=+\-@\t\r]")
_REASON = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def _reason(text: str) -> str:
    if not _REASON.match(text):
        raise argparse.ArgumentTypeError(
            f"not a reason: {text!r} (ocr_failed, low_ocr_confidence, truncated, corrupt…)"
        )
    return text


def register(subparsers: Any) -> None:
    """Add the ``failures`` subcommand."""
    from docindex.ops.failures import DEFAULT_CONFIDENCE_BELOW

    parser = subparsers.add_parser(
        "failures",
        help="list the files that could not be read completely, by reason, with the command that retries each",
        description=(
            "Which indexed files could not be read completely, and why: OCR that failed (ocr_failed), every "
            "extraction_error (corrupt, encrypted, unsupported, timeout, ...), scans read with low confidence "
            "(low_ocr_confidence) and files read in part (truncated). Each file is counted once, under the first "
            "reason that applies. The counts come first, each with the `docindex reprocess` command that sends "
            "its files through the pipeline again; then the files of each reason with the reason's detail. "
            "An operator's view of the whole index (no access map). "
            "Exit code: 0 nothing unread, 1 files listed, 2 error."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex failures\n"
            "  docindex failures --prefix 営業部/ --reason encrypted\n"
            "  docindex failures --csv > failures.csv\n"
            "  docindex failures --stack docindex-prod --json"
        ),
    )
    _ops.add_target_options(parser)
    parser.add_argument("--prefix", help="only keys under this prefix")
    parser.add_argument(
        "--reason",
        type=_reason,
        action="append",
        metavar="REASON",
        help="only this reason (repeatable): ocr_failed, low_ocr_confidence, truncated or an extraction_error value",
    )
    parser.add_argument(
        "--confidence-below",
        type=_ops.bounded_int(1, 100),
        default=DEFAULT_CONFIDENCE_BELOW,
        metavar="N",
        help=f"a scan read below this OCR confidence counts as low_ocr_confidence (default {DEFAULT_CONFIDENCE_BELOW})",
    )
    parser.add_argument(
        "--limit",
        type=_ops.bounded_int(0),
        metavar="N",
        help=f"at most N files per reason (default: {SHOWN} in the text report, all with --csv and --json)",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON document (schema: docs/operations.md)")
    output.add_argument(
        "--csv", action="store_true", help="one line per file, UTF-8 with a BOM (Excel reads the Japanese names)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from itertools import islice

    from docindex.ops.failures import FailureFilter, count_reasons, documents

    deployment, _ = _ops.resolve(args)
    opensearch = _ops.opensearch_for(deployment)
    index = deployment.opensearch_index
    selection = FailureFilter(prefix=args.prefix, bucket=args.bucket, confidence_below=args.confidence_below)
    reasons = [r for r in count_reasons(opensearch, index, selection) if not args.reason or r.name in args.reason]
    total = sum(r.count for r in reasons)
    limit = args.limit if args.limit is not None else (None if args.json or args.csv else SHOWN)

    def listed(name: str) -> Any:
        found = documents(opensearch, index, selection, name)
        return found if limit is None else islice(found, limit)

    code = _ops.EXIT_FINDINGS if total else _ops.EXIT_OK
    if args.csv:
        _write_csv(reasons, listed)
        return code
    if args.json:
        _ops.emit_json(
            {
                "version": JSON_VERSION,
                "index": index,
                "prefix": args.prefix,
                "confidence_below": args.confidence_below,
                "total": total,
                "reasons": [{**r.to_dict(), "documents": [f.to_dict() for f in listed(r.name)]} for r in reasons],
                "settings": _ops.settings_json(deployment),
            }
        )
        return code
    _ops.print_settings(deployment)
    out = _ops.Output(progress=False)
    where = f" under {args.prefix}" if args.prefix else ""
    if not reasons:
        out.line(f"every document{where} was read completely")
        return code
    from docindex.ops.failures import ASSISTANT_INSTRUCTIONS

    unread = sum(r.count for r in reasons if r.name != ASSISTANT_INSTRUCTIONS)
    planted = total - unread
    if unread:
        out.line(f"{unread:,} document{'s' if unread != 1 else ''}{where} could not be read completely:")
    if planted:
        # read completely, but flagged at indexing time: what an operator reviews (docs/operations.md)
        out.line(
            f"{planted:,} document{'s' if planted != 1 else ''}{where} carr{'y' if planted != 1 else 'ies'} "
            f"instructions aimed at an AI assistant ({ASSISTANT_INSTRUCTIONS}):"
        )
    out.table(["reason", "documents", "retry with"], [[r.name, f"{r.count:,}", r.retry] for r in reasons])
    for reason in reasons:
        out.line()
        out.line(f"{reason.name}: {reason.count:,} — {reason.explanation}", style="bold")
        shown = list(listed(reason.name))
        out.table(["file", "detail"], [[f"s3://{f.bucket}/{f.key}", f.detail] for f in shown])
        if reason.count > len(shown):
            out.line(f"  … and {reason.count - len(shown):,} more (--limit, --csv or --json lists them all)")
    return code


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if _FORMULA.match(text) else text


def _write_csv(reasons: list[Any], listed: Any) -> None:
    sys.stdout.write("\ufeff")
    writer = csv.writer(sys.stdout, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for reason in reasons:
        for failure in listed(reason.name):
            row = {**failure.to_dict(), "retry": reason.retry}
            writer.writerow([_cell(row.get(column)) for column in CSV_COLUMNS])
