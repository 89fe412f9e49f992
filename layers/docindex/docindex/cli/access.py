"""``docindex access``: the access map — check it, see who may read a key, apply a new one.

Exit codes: 0 done, 1 some documents could not be re-stamped, 2 the map or the deployment is unusable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError


def _load(path: Path, admin_group: str) -> Any:
    from docindex.access.policy import AccessMapError, parse_access_map

    try:
        return parse_access_map(path.read_bytes(), admin_group=admin_group, name=str(path))
    except (OSError, AccessMapError) as exc:
        raise CommandError(str(exc)) from None


def _check(args: argparse.Namespace) -> int:
    try:
        deployment, _ = _ops.resolve(args)
        access_map = _load(args.map, deployment.admin_group)
    except CommandError as exc:
        print(f"docindex access check: {exc}", file=sys.stderr)
        return _ops.EXIT_FAIL
    rows = []
    for key in args.key or []:
        grant = access_map.grant(args.bucket or deployment.bucket or "", key)
        rows.append({"key": key, "allow": list(grant.allow), "deny": list(grant.deny)})
    if args.json:
        _ops.emit_json({"valid": True, "version": access_map.version, "rules": len(access_map.rules), "keys": rows})
        return _ops.EXIT_OK
    print(f"{args.map}: valid, {len(access_map.rules)} rule(s), version {access_map.version}")
    for row in rows:
        deny = f"  deny: {', '.join(row['deny'])}" if row["deny"] else ""
        print(f"  {row['key']}\n    allow: {', '.join(row['allow'])}{deny}")
    return _ops.EXIT_OK


def _apply(args: argparse.Namespace) -> int:
    from docindex.access.policy import to_json
    from docindex.ops.access import Restamper, publish_map

    try:
        deployment, clients = _ops.resolve(args)
        access_map = _load(args.map, deployment.admin_group)
        uri = args.uri or deployment.access_map_uri
        if not uri:
            raise CommandError(
                "no access map location: give --uri (e.g. s3://BUCKET/_docindex/access-map.json), set "
                "ACCESS_MAP_URI, or name a stack deployed with AccessMapS3Uri (--stack NAME); for the local "
                "run, `docindex local up` first"
            )
        client = _ops.opensearch_for(deployment)
        s3 = clients.client("s3")
        still_current = None
        if deployment.ledger_table:
            from docindex.ingest.ledger import Ledger

            ledger = Ledger(clients.client("dynamodb"), deployment.ledger_table)
            still_current = ledger.still_current
        # The map goes first: from now on every writer stamps with it (within its TTL).
        publish_map(uri, to_json(access_map), s3)
        report = Restamper(client, deployment.opensearch_index, access_map, still_current=still_current).run(
            settle_seconds=args.settle
        )
    except CommandError as exc:
        print(f"docindex access apply: {exc}", file=sys.stderr)
        return _ops.EXIT_FAIL
    failed = sum(p.failed for p in report.passes)
    if args.json:
        _ops.emit_json({"uri": uri, **report.to_dict()})
    else:
        print(f"access map {access_map.version} stored at {uri}")
        for p in report.passes:
            print(
                f"  {p.name:<12} scanned {p.scanned}, changed {p.changed}, written {p.written}, "
                f"overtaken by newer writes {p.overtaken}, failed {p.failed}"
            )
        if args.settle <= 0:
            print(
                "  writers pick the new map up within ACCESS_MAP_TTL_SECONDS: run `docindex access apply` again "
                "(or pass --settle) after that to catch documents they wrote meanwhile"
            )
    return _ops.EXIT_FINDINGS if failed else _ops.EXIT_OK


def register(subparsers: Any) -> None:
    """Add ``access check`` and ``access apply``."""
    parser = subparsers.add_parser(
        "access",
        formatter_class=_ops.HelpFormatter,
        help="the access map: who may read which folder (the search API's permission filter)",
        description=(
            "The access map says, per key prefix, which groups and users may read (docs/search-api.md). "
            "`check` validates a map and shows who may read the keys you name; `apply` stores it where the "
            "indexer and the OCR worker read it and re-stamps the indexed documents (no re-extraction): "
            "restrictive first, so nobody sees a file in between that neither map lets them read."
        ),
        epilog=(
            "examples:\n"
            "  docindex access check access-map.yaml --key 人事部/評価/2024.xlsx\n"
            "  docindex access apply access-map.yaml --stack docindex-prod --settle 70"
        ),
    )
    commands = parser.add_subparsers(dest="access_command", metavar="ACTION", required=True)
    check = commands.add_parser("check", help="validate a map; show who may read the given keys")
    check.add_argument("map", type=Path, help="the access map (JSON or YAML)")
    check.add_argument("--key", action="append", help="an object key to resolve (repeatable)")
    _ops.add_target_options(check)
    _ops.add_output_options(check)
    check.set_defaults(func=_check)
    apply = commands.add_parser("apply", help="store a map and re-stamp the indexed documents")
    apply.add_argument("map", type=Path, help="the access map (JSON or YAML; stored as JSON)")
    apply.add_argument("--uri", help="where to store it (default: ACCESS_MAP_URI / the stack's AccessMapS3Uri)")
    apply.add_argument(
        "--settle",
        type=_ops.bounded_float(0, 3600),
        default=0.0,
        metavar="S",
        help="wait S seconds (the writers' ACCESS_MAP_TTL_SECONDS + a margin), then re-stamp what they wrote meanwhile",
    )
    _ops.add_target_options(apply)
    _ops.add_output_options(apply)
    apply.set_defaults(func=_apply)
