"""``docindex search QUERY``: full-text search with highlighted snippets.

Exit codes: 0 documents found, 1 none, 2 the index could not be searched (or the query/flags are unusable).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date, datetime
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

# The ``--json`` schema's version (docs/operations.md, "JSON output").
JSON_VERSION = 1
MAX_SIZE = 100
# Every hit in --json has exactly these fields (null when the document has no value).
HIT_FIELDS = (
    "id",
    "score",
    "bucket",
    "key",
    "filename",
    "extension",
    "content_type",
    "size",
    # The document's date: the file server's modification time from the object's metadata, else S3's
    # LastModified (last_modified_source: file_server or s3); s3_last_modified is S3's own.
    "last_modified",
    "last_modified_source",
    "s3_last_modified",
    "indexed_at",
    "title",
    "author",
    "modified",
    "page_count",
    "ocr_status",
    "ocr_confidence",
    "ocr_page_reasons",
    "extraction_error",
    "snippet",
    "content_sha256",
    "also_in",
    # Where in the file (issue 28): the best matching pages, each {number, kind, label, snippet},
    # and how many pages match in all (0 for a file without pages).
    "pages",
    "matching_pages",
    # Meaning search (issue 30): "meaning" for a hit no word of the query matched (its snippet is the
    # passage that matched), null otherwise; the page that passage is on.
    "found_by",
    "passage_page",
    # Where the file is on the file server (FILE_SERVER_SHARES, docs/search-api.md#file-server-paths):
    # {path, folder, smb, smb_folder}, null for a key under no mapped share.
    "location",
)


def _day_or_time(text: str) -> str:
    """An ISO date (``2026-04-01``) or date-time, as OpenSearch compares ``last_modified``."""
    try:
        if len(text) == 10:
            return date.fromisoformat(text).isoformat()
        return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date: {text!r} (use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)") from None


def _hit_json(hit: dict[str, Any]) -> dict[str, Any]:
    found = {name: hit.get(name) for name in HIT_FIELDS}
    if found["last_modified"] and not found["last_modified_source"]:
        found["last_modified_source"] = "s3"  # indexed before dates were read from metadata
    return found


def _day(hit: dict[str, Any]) -> str:
    """The hit's date as the text output shows it: the UTC day, ``(S3)`` when not the file server's."""
    day = str(hit.get("last_modified") or "")[:10] or "-" * 10
    return day if hit.get("last_modified_source") == "file_server" else f"{day} (S3)"


def _print_pages(hit: dict[str, Any]) -> None:
    """The hit's matching pages, each with its snippet, and how many more match (issue 28)."""
    for page in hit.get("pages") or []:
        print(_ops.safe_text(f"        {page['label']}: " + " ".join(str(page["snippet"]).split())))
    more_pages = int(hit.get("matching_pages") or 0) - len(hit.get("pages") or [])
    if more_pages > 0:
        print(f"        … {more_pages} more matching page{'s' if more_pages > 1 else ''}")


def _print_count(args: argparse.Namespace, hits: Any, first: int) -> bool:
    """The count line: the files that contain the query, and apart from them those found by meaning.

    False when the page is empty (said so).
    """
    total, by_meaning = hits.total, hits.by_meaning
    if not hits:
        beyond = f" on page {args.page} (there are {total + by_meaning})" if total + by_meaning else ""
        print(_ops.safe_text(f"no file contains {args.query!r} and none is near enough in meaning{beyond}"))
        return False
    shown = f"{first + 1}–{first + len(hits)}"
    if not total:
        # Documents near in meaning are suggestions: nothing holds the query's words.
        print(_ops.safe_text(f"no file contains {args.query!r}; {shown} of {by_meaning} found by meaning:"))
        return True
    more = "+" if not hits.total_is_exact else ""
    meaning = f"; {by_meaning} more found by meaning" if by_meaning else ""
    print(f"{shown} of {total:,}{more} documents{meaning}")
    return True


def _shares(text: str | None) -> Any:
    """The share mapping of the deployment (FILE_SERVER_SHARES / the stack's FileServerShares)."""
    from docindex.access.shares import SharesError, parse_shares

    try:
        return parse_shares(text)
    except SharesError as exc:
        raise CommandError(f"{exc} (docs/search-api.md#file-server-paths)") from None


def _check_query(query: str, *, names: bool) -> None:
    """The query as typed can be searched (a name query needs a letter or digit), else a CommandError."""
    from docindex.index.names import NameQueryError, name_words
    from docindex.index.search import QueryError, parse_query

    try:
        if names:
            name_words(query)
        else:
            parse_query(query or "x")
    except (QueryError, NameQueryError) as exc:
        raise CommandError(str(exc)) from None


def _locate(hits: list[dict[str, Any]], shares: Any) -> None:
    """Each hit's place on the file server (``location``; None under no mapped share)."""
    for hit in hits:
        location = shares.locate(hit.get("bucket"), str(hit.get("key") or ""))
        hit["location"] = location.to_dict() if location else None


def _search(args: argparse.Namespace) -> int:
    from docindex.index.search import MAX_RESULT_WINDOW, TYPE_EXTENSIONS, search

    if not args.query.strip() and args.ocr_confidence_below is None and args.sort == "relevance":
        raise CommandError(
            "give a query (or --ocr-confidence-below N to list every document read below N, or --sort to list all)"
        )
    _check_query(args.query, names=args.names)
    if args.page * args.size > MAX_RESULT_WINDOW:
        raise CommandError(
            f"--page {args.page} × --size {args.size} goes past the first {MAX_RESULT_WINDOW:,} hits: "
            "narrow the query or the filters instead"
        )
    extensions = [args.extension] if args.extension else []
    for kind in args.type or []:
        extensions.extend(TYPE_EXTENSIONS[kind])
    # --bucket filters the hits here; it does not name the resources to look for.
    deployment, _ = _ops.resolve(argparse.Namespace(**{**vars(args), "bucket": None}))
    shares = _shares(deployment.file_server_shares)
    client = _ops.opensearch_for(deployment)
    hits = search(
        client,
        deployment.opensearch_index,
        args.query,
        size=args.size,
        page=args.page,
        prefix=args.prefix,
        extensions=extensions or None,
        bucket=args.bucket,
        modified_after=args.modified_after,
        modified_before=args.modified_before,
        operators=True,
        collapse=args.collapse,
        hybrid=False if args.keyword_only else None,
        ocr_confidence_below=args.ocr_confidence_below,
        names=args.names,
        sort=args.sort,
        order=args.order,
    )
    _locate(hits, shares)
    first = (args.page - 1) * args.size
    # Exit code 0 means the query's words were found; documents found by meaning alone do not count.
    by_words = any(hit.get("found_by") != "meaning" for hit in hits)
    # The operator's view: every document, whatever the access map says (the search API filters per user).
    print("note: operator search: access map not applied (employees search through the search API)", file=sys.stderr)
    if args.json:
        _ops.emit_json(
            {
                "version": JSON_VERSION,
                "query": args.query,
                "index": deployment.opensearch_index,
                "total": hits.total,
                "total_is_exact": hits.total_is_exact,
                # Documents found by meaning alone, after the ``total`` that contain the query.
                "by_meaning": hits.by_meaning,
                "page": args.page,
                "size": args.size,
                "hits": [_hit_json(h) for h in hits],
                "settings": _ops.settings_json(deployment),
            }
        )
        return _ops.EXIT_OK if by_words else _ops.EXIT_FINDINGS
    _ops.print_settings(deployment)
    if not _print_count(args, hits, first):
        return _ops.EXIT_FINDINGS
    for hit in hits:
        score = f"{hit['score']:.2f}" if hit.get("score") is not None else "-"
        status = "" if hit.get("ocr_status") in (None, "none", "done") else f" [ocr {hit['ocr_status']}]"
        if args.ocr_confidence_below is not None and hit.get("ocr_confidence") is not None:
            reasons = ", ".join(hit.get("ocr_page_reasons") or [])
            status += f" [ocr confidence {hit['ocr_confidence']}: {reasons}]"
        error = f" [{hit['extraction_error']}]" if hit.get("extraction_error") else ""
        meaning = " [by meaning]" if hit.get("found_by") == "meaning" else ""
        line = f"{score:>6}  {_day(hit)}  s3://{hit.get('bucket')}/{hit.get('key')}{status}{error}{meaning}"
        print(_ops.safe_text(line))
        if hit.get("location"):
            print("        " + _ops.safe_text(hit["location"]["path"]))
        if hit.get("snippet"):
            print("        " + _ops.safe_text(" ".join(str(hit["snippet"]).split())))
        _print_pages(hit)
        if hit.get("also_in"):
            print("        also in: " + _ops.safe_text(", ".join(hit["also_in"])))
    if first + len(hits) < hits.total + hits.by_meaning:
        print(f"more: --page {args.page + 1}")
    return _ops.EXIT_OK if by_words else _ops.EXIT_FINDINGS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from docindex.index.search import TYPE_EXTENSIONS

    parser = subparsers.add_parser(
        "search",
        help="full-text search the index",
        description=(
            'Search content, titles and file names. Every word must match; "quoted phrases" match as written, '
            '-word (or -"phrase") excludes, and a OR b matches either. Nothing else is query syntax. Prints '
            "the hit count, then score, date (the file server's; '(S3)' when the object carries none: the day it "
            "reached S3), key and a snippet with the matches in [brackets]. An administrator's tool: it "
            "reads the whole index and does not apply the access map (employees use the search API and page, which "
            "do). "
            "Where the index has vectors, documents near the query in meaning follow the matches (marked "
            "[by meaning]; --keyword-only turns that off). --names finds the words in file and folder names "
            "instead of content. A hit under a share of FILE_SERVER_SHARES prints its path on the file server. "
            "Exit code: 0 found, 1 no document holds the query's words, 2 error."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex search 見積 --prefix 営業部/ --extension xlsx\n"
            "  docindex search '\"quarterly revenue\" -draft' --type pdf --type word\n"
            "  docindex search 'quarterly OR 議事録' --modified-after 2026-01-01 --page 2\n"
            "  docindex search 'release notes' --stack docindex-prod --json\n"
            "  docindex search --ocr-confidence-below 60 --prefix スキャン/\n"
            "  docindex search --names '営業部 見積' --sort date\n"
            "  docindex search --prefix 総務部/ --sort size --size 20"
        ),
    )
    parser.add_argument(
        "query", nargs="?", default="", help="the words to find (optional with --ocr-confidence-below or --sort)"
    )
    parser.add_argument(
        "--size",
        type=_ops.bounded_int(1, MAX_SIZE),
        default=10,
        help=f"results per page, 1..{MAX_SIZE} (default 10)",
    )
    parser.add_argument("--page", type=_ops.bounded_int(1, 10_000), default=1, help="page of results (default 1)")
    parser.add_argument("--prefix", help="only keys under this prefix")
    parser.add_argument("--extension", help="only files with this extension (pdf, docx, ...)")
    parser.add_argument(
        "--type",
        action="append",
        choices=sorted(TYPE_EXTENSIONS),
        help="only documents of this kind (repeatable: any of them)",
    )
    parser.add_argument(
        "--modified-after",
        type=_day_or_time,
        metavar="DATE",
        help="modified on or after DATE (the file server's date, else S3's; a day is UTC's)",
    )
    parser.add_argument("--modified-before", type=_day_or_time, metavar="DATE", help="modified before DATE")
    parser.add_argument("--bucket", help="only documents of this bucket (an index may hold several)")
    parser.add_argument(
        "--ocr-confidence-below",
        type=_ops.bounded_int(1, 100),
        metavar="N",
        help="only documents with a page OCR read at a mean word confidence below N (0-100; without a query: "
        "every such document, least confident first)",
    )
    parser.add_argument(
        "--names",
        action="store_true",
        help="find the words in the names of the files and their folders, not in their content (parts of names, "
        "any spelling: 見積 finds 2024_御見積書.xlsx and every file under a folder 見積)",
    )
    from docindex.index.sorting import SORTS

    parser.add_argument(
        "--sort",
        choices=SORTS,
        default="relevance",
        help="order of the results: relevance (default), name (A to Z), date (newest first: the file server's "
        "modification time, else S3's), size (largest first)",
    )
    parser.add_argument("--order", choices=("asc", "desc"), help="reverse --sort's direction (asc or desc)")
    parser.add_argument(
        "--keyword-only",
        action="store_true",
        help="search by the query's words only (default: also by meaning where the index has vectors)",
    )
    parser.add_argument(
        "--collapse",
        action="store_true",
        help="identical copies (same content) are one result, followed by 'also in:' and the other copies",
    )
    _ops.add_index_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document (schema: docs/operations.md)")
    parser.set_defaults(func=_search)
