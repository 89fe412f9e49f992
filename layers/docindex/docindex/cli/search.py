"""``docindex search QUERY``: full-text search with highlighted snippets.

Exit codes: 0 documents found, 1 none, 2 the index could not be searched.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from docindex.cli import _ops
from docindex.core.exceptions import CommandError


def _search(args: argparse.Namespace) -> int:
    from opensearchpy.exceptions import OpenSearchException

    from docindex.index.search import search

    try:
        # --bucket filters the hits here; it does not name the resources to look for.
        deployment, _ = _ops.resolve(argparse.Namespace(**{**vars(args), "bucket": None}))
        client = _ops.opensearch_for(deployment)
        hits = search(
            client,
            deployment.opensearch_index,
            args.query,
            size=args.size,
            prefix=args.prefix,
            extension=args.extension,
            bucket=args.bucket,
        )
    except (CommandError, OpenSearchException) as exc:
        print(f"docindex search: {exc}", file=sys.stderr)
        return _ops.EXIT_FAIL
    # The operator's view: every document, whatever the access map says (the search API filters per user).
    print("note: operator search: access map not applied (employees search through the search API)", file=sys.stderr)
    if args.json:
        print(json.dumps(hits, ensure_ascii=False, indent=2))
        return 0 if hits else 1
    if not hits:
        print(f"no documents match {args.query!r}")
        return 1
    for hit in hits:
        score = f"{hit['score']:.2f}" if hit.get("score") is not None else "-"
        status = "" if hit.get("ocr_status") in (None, "none", "done") else f" [ocr {hit['ocr_status']}]"
        error = f" [{hit['extraction_error']}]" if hit.get("extraction_error") else ""
        print(f"{score:>6}  s3://{hit['bucket']}/{hit['key']}{status}{error}")
        if hit.get("snippet"):
            print(f"        {' '.join(hit['snippet'].split())}")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "search",
        help="full-text search the index",
        description=(
            "Search content, titles and file names (every word must match); prints score, key and a snippet "
            "with the matches in [brackets]. An administrator's tool: it reads the whole index and does not apply "
            "the access map (employees use the search API and page, which do). "
            "Exit code: 0 found, 1 nothing found, 2 error."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex search 見積 --prefix 営業部/ --extension pdf\n"
            "  docindex search 'release notes' --stack docindex-prod --json"
        ),
    )
    parser.add_argument("query")
    parser.add_argument("--size", type=int, default=10, help="at most this many results (default 10)")
    parser.add_argument("--prefix", help="only keys under this prefix")
    parser.add_argument("--extension", help="only files with this extension (pdf, docx, ...)")
    parser.add_argument("--bucket", help="only documents of this bucket (an index may hold several)")
    group = parser.add_argument_group(
        "where the index is",
        "A CloudFormation stack (--stack, or DOCINDEX_STACK), else the local run's env file "
        f"({_ops.DEFAULT_ENV_FILE}, when it exists), else the environment (OPENSEARCH_ENDPOINT, OPENSEARCH_INDEX).",
    )
    group.add_argument("--stack", metavar="NAME", help="CloudFormation stack deployed from template.yaml")
    group.add_argument(
        "--env-file",
        type=Path,
        default=None,
        help=f"read settings from this env file (default {_ops.DEFAULT_ENV_FILE} when it exists)",
    )
    group.add_argument("--region", help="AWS region (SigV4)")
    group.add_argument("--profile", help="AWS named profile")
    group.add_argument("--opensearch-endpoint", help="OpenSearch endpoint URL")
    group.add_argument("--index", help="index or alias (default documents)")
    parser.add_argument("--json", action="store_true", help="print the hits as JSON")
    parser.set_defaults(func=_search)
