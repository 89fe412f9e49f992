"""``docindex access``: the access map — check it, see who may read a key, apply a new one; import
it from the file server's ACLs and see where the two drift apart.

Exit codes: ``check``/``apply``: 0 done, 1 some documents could not be re-stamped, 2 the map or the
deployment is unusable. ``import``: 0 the map is exact, 1 it was written but is more restrictive
than the file server somewhere (the report says where), 2 could not run. ``diff``: 0 in step, 1
differences, 2 could not run.
"""

from __future__ import annotations

import argparse
import os
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


def _merge(uri: str, imported: Any, s3: Any, admin_group: str) -> Any:
    """The applied map with its rules under ``imported``'s covered prefixes replaced (none applied yet: closed)."""
    from botocore.exceptions import ClientError

    from docindex.access.policy import AccessMap, AccessMapError, merged, parse_access_map
    from docindex.access.source import read_map_bytes

    data: bytes | None = None
    try:
        data, _ = read_map_bytes(uri, s3)
    except FileNotFoundError:
        pass
    except ClientError as exc:
        if (exc.response.get("Error") or {}).get("Code") not in ("NoSuchKey", "404", "NotFound"):
            raise CommandError(f"{uri}: cannot read the applied map to merge into: {exc}") from None
    try:
        applied = parse_access_map(data, admin_group=admin_group, name=uri) if data else None
        return merged(applied or AccessMap.admins_only(admin_group), imported)
    except AccessMapError as exc:
        raise CommandError(str(exc)) from None


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
        if args.merge:
            access_map = _merge(uri, access_map, s3, deployment.admin_group)
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


# The ``--json`` schema's version for import and diff (docs/operations.md, "JSON output").
JSON_VERSION = 1
_SHOWN = 40  # report lines per kind in the table; --json has them all


def _import_options(parser: argparse.ArgumentParser, *, bucket: bool = True) -> None:
    parser.add_argument("export", type=Path, help="icacls /save file, Get-Acl JSON or CSV, or smbcacls output")
    parser.add_argument("--mapping", type=Path, metavar="CSV", help="nas,docindex pairs: SID or DOMAIN\\name -> group")
    parser.add_argument(
        "--format",
        default="auto",
        choices=("auto", "icacls", "getacl-json", "getacl-csv", "smbcacls"),
        help="the export's format (default: recognised from its content)",
    )
    parser.add_argument(
        "--strip",
        metavar="PATH",
        help="the export's leading path the sync did not copy (e.g. D:\\Shares); default: the longest path all "
        "entries share; '' for none",
    )
    parser.add_argument("--prefix", default="", help="what the sync put in front of the keys (e.g. nas/)")
    if bucket:  # diff has it among the target options
        parser.add_argument("--bucket", metavar="BUCKET", help="limit the imported rules to this bucket")
    parser.add_argument("--domain-sid", metavar="SID", help="the domain's SID, to read DU, DA, ... in SDDL as SIDs")
    parser.add_argument(
        "--expect-entries",
        type=int,
        metavar="N",
        help="the paths the export step reported (icacls: 'Successfully processed N files'); refuse an export with "
        "another count (icacls, CSV and smbcacls files have no end marker: a file cut at an entry boundary reads "
        "as complete)",
    )
    _ops.add_output_options(parser)


def _load_export(args: argparse.Namespace) -> Any:
    from docindex.access.ntfs import ExportError, MappingError, load

    try:
        return load(
            args.export,
            mapping=args.mapping,
            fmt=args.format,
            strip=args.strip,
            prefix=args.prefix,
            bucket=args.bucket,
            domain_sid=args.domain_sid,
            expect_entries=args.expect_entries,
        )
    except (ExportError, MappingError) as exc:
        raise CommandError(str(exc)) from None


def _print_findings(result: Any) -> None:
    from itertools import groupby

    out = _ops.Output(progress=False)
    findings = sorted(result.findings, key=lambda f: (not f.restrictive, f.kind, f.key))
    for kind, group in groupby(findings, key=lambda f: f.kind):
        items = list(group)
        rows = [[f.key or "(everywhere)", f.trustee, f.detail, f.where] for f in items[:_SHOWN]]
        title = f"{kind}: {len(items)}" + (" (more restrictive than the file server)" if items[0].restrictive else "")
        out.table(["key", "who", "what docindex does", "where"], rows, title=title)
        if len(items) > _SHOWN:
            out.line(f"  ... and {len(items) - _SHOWN} more (--json lists them all)")


def _import(args: argparse.Namespace) -> int:
    import json

    try:
        result, fmt = _load_export(args)
        document = result.access_map(
            f"imported by docindex access import from {args.export.name} ({fmt}); rules per folder, inherit false"
        )
        text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
        from docindex.access.policy import AccessMapError, parse_access_map

        try:
            parse_access_map(text, admin_group="docindex-admins", name="the imported map")
        except AccessMapError as exc:
            raise CommandError(str(exc)) from None
        if str(args.output) == "-":
            sys.stdout.write(text)
        else:
            try:
                args.output.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"{args.output}: {exc.strerror or exc}") from None
    except CommandError as exc:
        print(f"docindex access import: {_ops.safe_text(exc)}", file=sys.stderr)
        return _ops.EXIT_FAIL
    restrictive = result.restrictive
    code = _ops.EXIT_FINDINGS if restrictive else _ops.EXIT_OK
    from docindex.access.ntfs.exports import ENDS_WITH_A_MARK

    checked = args.expect_entries is not None or fmt in ENDS_WITH_A_MARK
    if args.json:
        _ops.emit_json(
            {
                "version": JSON_VERSION,
                "export": str(args.export),
                "format": fmt,
                "output": str(args.output),
                "strip": "\\".join(result.strip),
                "prefix": args.prefix,
                "covers": result.covers,
                "folders": result.folders,
                "files": result.files,
                "both": result.both,
                "entries_checked": checked,
                "rules": len(result.rules),
                "exact": not restrictive,
                "findings": [f.to_dict() for f in result.findings],
                "exit_code": code,
            }
        )
        return code

    def _print(text: str) -> None:  # the map may be on stdout: then the summary goes to stderr
        print(text, file=sys.stderr if str(args.output) == "-" else sys.stdout)

    first = next((p for p in result.paths if p.where), None)
    stripped = "\\".join(result.strip) or "(nothing)"
    example = f"; e.g. {first.where} -> {first.key!r}" if first else ""
    both = f", {result.both} read as both (the export does not say)" if result.both else ""
    _print(
        _ops.safe_text(
            f"{args.export} ({fmt}): {result.folders} folder(s), {result.files} file(s){both} -> "
            f"{len(result.rules)} rule(s) in {args.output}"
        )
    )
    _print(_ops.safe_text(f"  paths: {stripped} stripped, prefix {args.prefix!r}{example}"))
    root = "\\".join(result.root) or "the share's root"
    _print(
        _ops.safe_text(
            f"  covers {result.covers!r} (the export's root folder: {root}); no rule outside it: those keys are "
            "closed, or keep the applied map's rules there with `docindex access apply --merge`"
        )
    )
    if not checked:
        _print(
            f"  {result.folders + result.files + result.both} entries read; the {fmt} "
            "format has no end marker: a file cut at an entry boundary reads as complete. Pass --expect-entries N "
            "(icacls prints 'Successfully processed N files')"
        )
    if result.findings and str(args.output) != "-":
        _print_findings(result)
    _print(
        f"  {len(restrictive)} place(s) where the map is more restrictive than the file server"
        if restrictive
        else "  the map gives exactly the file server's readers"
    )
    return code


def _diff(args: argparse.Namespace) -> int:
    import time

    from docindex.access.ntfs.drift import drift
    from docindex.access.ntfs.importer import normalize_prefix
    from docindex.access.policy import AccessMapError, parse_access_map

    started = time.monotonic()
    try:
        result, fmt = _load_export(args)
        admin_group = os.environ.get("DOCINDEX_ADMIN_GROUP", "docindex-admins")
        uri = str(args.map)
        try:
            if uri.startswith("s3://"):
                from docindex.access.source import read_map_bytes

                _, clients = _ops.resolve(args)
                data, _ = read_map_bytes(uri, clients.client("s3"))
            else:
                data = Path(uri).read_bytes()
            access_map = parse_access_map(data or b"", admin_group=admin_group, name=uri)
        except OSError as exc:
            raise CommandError(f"{uri}: {exc.strerror or exc}") from None
        except AccessMapError as exc:
            raise CommandError(str(exc)) from None
        report = drift(result, access_map, bucket=args.bucket or "", prefix=normalize_prefix(args.prefix))
    except CommandError as exc:
        print(f"docindex access diff: {_ops.safe_text(exc)}", file=sys.stderr)
        return _ops.EXIT_FAIL
    code = _ops.EXIT_OK if report.in_step else _ops.EXIT_FINDINGS
    seconds = round(time.monotonic() - started, 3)
    if args.json:
        _ops.emit_json(
            {
                "version": JSON_VERSION,
                "export": str(args.export),
                "format": fmt,
                "map": uri,
                "map_version": access_map.version,
                **report.to_dict(),
                "seconds": seconds,
                "exit_code": code,
            }
        )
        return code
    out = _ops.Output(progress=False)
    out.line(f"{args.export} ({fmt}) against {uri}: {report.compared} path(s) compared in {seconds} s")
    if report.differences:

        def side(readers: Any) -> str:
            text = ", ".join(sorted(readers.allow)) or "(administrators only)"
            return text + (f"; deny {', '.join(sorted(readers.deny))}" if readers.deny else "")

        rows = [
            [d.key, side(d.nas), side(d.mapped), " ".join(d.wider) or "-", " ".join(d.narrower) or "-"]
            for d in report.differences[: _SHOWN * 5]
        ]
        out.table(
            ["key", "file server", "map", "map lets in (danger)", "map keeps out"],
            rows,
            title=f"{len(report.differences)} path(s) whose readers differ",
            styles=["red" if d.wider else "yellow" for d in report.differences[: _SHOWN * 5]],
        )
    if report.stale_rules:
        out.table(["prefix"], [[p] for p in report.stale_rules], title="rules for paths the export no longer has")
    out.line("in step" if report.in_step else "the map and the file server differ: re-import and apply")
    return code


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
            "restrictive first, so nobody sees a file in between that neither map lets them read. "
            "`import` writes a map from the file server's ACLs (icacls /save, Get-Acl, smbcacls); `diff` compares "
            "a fresh export with the applied map (a scheduled check)."
        ),
        epilog=(
            "examples:\n"
            "  docindex access check access-map.yaml --key 人事部/評価/2024.xlsx\n"
            "  docindex access apply access-map.yaml --stack docindex-prod --settle 70\n"
            "  docindex access import acl.txt --mapping groups.csv --prefix nas/ -o access-map.json\n"
            "  docindex access diff acl.txt access-map.json --mapping groups.csv --prefix nas/"
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
        "--merge",
        action="store_true",
        help="replace only the applied map's rules under the new map's covered prefixes (an imported map's "
        "'covers'), leaving the others untouched (default: the new map replaces the whole map)",
    )
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
    imp = commands.add_parser(
        "import",
        formatter_class=_ops.HelpFormatter,
        help="write an access map from the file server's ACL export; report what it cannot match exactly",
    )
    _import_options(imp)
    imp.add_argument(
        "-o", "--output", type=Path, required=True, metavar="MAP", help="where to write the map ('-': stdout)"
    )
    imp.set_defaults(func=_import)
    diff = commands.add_parser(
        "diff",
        formatter_class=_ops.HelpFormatter,
        help="compare a fresh ACL export with the applied map: exit 1 when any path's readers differ",
    )
    _import_options(diff, bucket=False)
    diff.add_argument("map", help="the applied map: a file, or s3://BUCKET/KEY (with --stack/--env-file for access)")
    _ops.add_target_options(diff)
    diff.set_defaults(func=_diff)
