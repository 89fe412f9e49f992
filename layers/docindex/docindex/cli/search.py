"""``docindex search QUERY``: full-text search with highlighted snippets."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _search(args: argparse.Namespace) -> int:
    from docindex.clients import opensearch_client
    from docindex.search_index import search
    from docindex.settings import Settings

    if args.env_file and args.env_file.exists():
        from docindex.local.envfile import apply_env_file

        apply_env_file(args.env_file)
    settings = Settings.from_env()
    client = opensearch_client(settings)
    hits = search(
        client,
        settings.opensearch_index,
        args.query,
        size=args.size,
        prefix=args.prefix,
        extension=args.extension,
    )
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
    parser = subparsers.add_parser("search", help="full-text search the index")
    parser.add_argument("query")
    parser.add_argument("--size", type=int, default=10)
    parser.add_argument("--prefix", help="only keys under this prefix")
    parser.add_argument("--extension", help="only files with this extension (pdf, docx, ...)")
    parser.add_argument(
        "--env-file",
        type=Path,
        default=Path(".docindex/local.env"),
        help="read settings from this env file when it exists (default .docindex/local.env)",
    )
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=_search)
