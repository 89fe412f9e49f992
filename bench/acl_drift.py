"""``make bench`` ACL drift: ``docindex access diff`` finds one changed folder ACL among 10,000.

    .venv/bin/python -m bench.acl_drift [--folders 10000] [--json]

A share of ``--folders`` folders (100 department folders of 99 sub-folders each, by default; every
department protected with its own group, a tenth of the sub-folders with a deny or an extra
group, Japanese names) is exported as ``icacls /save`` writes it, imported, and the map stored.
Then one sub-folder's ACL changes on the "file server" (an explicit allow for another group) and
a fresh export is compared with the map by what ``docindex access import`` and ``diff`` run
(``docindex.access.ntfs.load`` and ``drift``: harnesses do not import the CLI). Reported: the
seconds of each step, the differences found (must be exactly that folder), and the diff's time as
a ratio of just reading the export (the baseline, same run).

Then the never-wider property at length (``--trees``, default 4,000: tests/unit/test_acl_property.py
runs 200 in ``make test``): generated hostile trees in the five export formats, each with a generated
mapping file (in half of them lines that say more than the file server can: ``BU,-``,
``Everyone,all-staff``, ...), each (user, key) decided by devkit/acl_oracle.py's own [MS-DTYP] access
check and compared with the imported map. Reported: trees and keys checked, decisions, how many the
map allows that Windows denies (must be 0), how many Windows allows that the map does not, by why,
and the mapping lines drawn.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from devkit.acl_tree import CI, OI, READ_EXECUTE, Node, allow, deny, write_icacls

DOMAIN = "S-1-5-21-1004336348-1177238915-682003330"


def tree(folders: int) -> tuple[list[Node], str]:
    departments = max(1, round(folders**0.5))
    per = max(1, folders // departments - 1)
    nodes = [Node((), explicit=[allow("S-1-5-11", 0x100021)], protected=True)]
    for d in range(departments):
        group = f"{DOMAIN}-{2000 + d}"
        nodes.append(Node((f"部署{d:03d}",), explicit=[allow(group, 0x1301BF, OI | CI)], protected=True))
        for s in range(per):
            explicit = []
            if s % 10 == 3:
                explicit = [deny(f"{DOMAIN}-{3000 + s}", READ_EXECUTE, OI | CI)]
            elif s % 10 == 7:
                explicit = [allow(f"{DOMAIN}-{2000 + (d + 1) % departments}", READ_EXECUTE, OI | CI)]
            nodes.append(Node((f"部署{d:03d}", f"案件{s:03d}"), explicit=explicit))
    changed = (f"部署{departments // 2:03d}", f"案件{per // 2:03d}")
    return nodes, "nas/" + "/".join(changed) + "/"


def run(folders: int) -> dict[str, object]:
    from docindex.access.ntfs import load
    from docindex.access.ntfs.drift import drift
    from docindex.access.ntfs.exports import read_export
    from docindex.access.policy import parse_access_map

    nodes, changed_key = tree(folders)
    work = Path(tempfile.mkdtemp(prefix="acl-drift-"))
    mapping = work / "groups.csv"
    mapping.write_text(
        "nas,docindex\n" + "".join(f"{DOMAIN}-{2000 + d},部署{d:03d}\n" for d in range(200)) + f"{DOMAIN}-{3000},-\n",
        encoding="utf-8",
    )
    export = work / "acl.txt"
    export.write_bytes(write_icacls(nodes))
    out = work / "access-map.json"

    started = time.perf_counter()
    read_export(export.read_bytes(), name=str(export))
    baseline = time.perf_counter() - started

    started = time.perf_counter()
    result, _ = load(export, mapping=mapping, strip="share", prefix="nas/")
    out.write_text(json.dumps(result.access_map(), ensure_ascii=False, indent=2), encoding="utf-8")
    imported = time.perf_counter() - started

    # One folder's ACL changes on the file server; a fresh export is taken
    target = tuple(changed_key.removeprefix("nas/").rstrip("/").split("/"))
    for node in nodes:
        if node.path == target:
            node.explicit = [*node.explicit, allow(f"{DOMAIN}-2001", READ_EXECUTE, OI | CI)]
    export.write_bytes(write_icacls(nodes))
    started = time.perf_counter()
    fresh, _ = load(export, mapping=mapping, strip="share", prefix="nas/")
    applied = parse_access_map(out.read_bytes(), admin_group="docindex-admins", name=str(out))
    report = drift(fresh, applied, bucket="", prefix="nas/")
    diffed = time.perf_counter() - started
    found = [d.key for d in report.differences] + report.stale_rules
    return {
        "folders": len(nodes),
        "export_bytes": export.stat().st_size,
        "rules": len(result.rules),
        "seconds_read_export": round(baseline, 3),
        "seconds_import": round(imported, 3),
        "seconds_diff": round(diffed, 3),
        "diff_vs_read_export": round(diffed / baseline, 2) if baseline else None,
        "differences": found,
        "found_the_changed_folder_only": found == [changed_key],
    }


def never_wider(trees: int) -> dict[str, object]:
    from devkit.acl_oracle import FORMATS
    from devkit.acl_oracle import run as property_run

    started = time.perf_counter()
    tally = property_run(range(1000, 1000 + max(1, trees // len(FORMATS))))
    narrower = sum(tally.narrower.values())
    return {
        "trees": tally.trees,
        "keys": tally.keys,
        "decisions": tally.decisions,
        "windows_allows": tally.windows_allows,
        "wider": len(tally.wider),
        "wider_examples": tally.wider[:10],
        "narrower": narrower,
        "narrower_share_of_windows_allows": round(narrower / tally.windows_allows, 3) if tally.windows_allows else None,
        "narrower_by_probe": dict(sorted(tally.narrower.items())),
        "narrower_by_why": dict(sorted(tally.narrower_why.items(), key=lambda kv: -kv[1])),
        "unseen_file_acls": tally.unseen,
        "unseen_file_acls_wider": tally.unseen_wider,
        "mapping_lines": dict(sorted(tally.mapping_lines.items())),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folders", type=int, default=10_000)
    parser.add_argument("--trees", type=int, default=4_000, help="generated trees for the never-wider property")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.folders)
    result["never_wider"] = prop = never_wider(args.trees)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(
            f"ACL drift on {result['folders']} folders ({result['export_bytes']:,} bytes of icacls export, "
            f"{result['rules']} rules)"
        )
        print(f"  read the export (baseline)  {result['seconds_read_export']:.2f} s")
        print(f"  docindex access import      {result['seconds_import']:.2f} s")
        print(
            f"  docindex access diff        {result['seconds_diff']:.2f} s  "
            f"({result['diff_vs_read_export']}x the baseline)"
        )
        print(f"  differences: {result['differences']}")
        print(
            f"never wider than Windows: {prop['trees']} trees, {prop['keys']} keys, {prop['decisions']} (user, key) "
            f"decisions in {prop['seconds']} s: the map allows what Windows denies {prop['wider']} times"
        )
        print(
            f"  narrower: {prop['narrower']} of the {prop['windows_allows']} Windows allows "
            f"({prop['narrower_share_of_windows_allows']}), by why:"
        )
        for why, count in prop["narrower_by_why"].items():  # type: ignore[attr-defined]
            print(f"    {count:>7}  {why}")
        print(
            f"  files absent from a folders-only export with an ACL of their own (no export shows them): "
            f"{prop['unseen_file_acls']} decisions, {prop['unseen_file_acls_wider']} wider"
        )
        lines = ", ".join(f"{what} {n}" for what, n in prop["mapping_lines"].items())  # type: ignore[attr-defined]
        print(f"  mapping lines drawn (trustee -> target): {lines}")
        for example in prop["wider_examples"]:  # type: ignore[attr-defined]
            print(f"  WIDER: {example}")
    ok = result["found_the_changed_folder_only"] and result["seconds_diff"] < 60 and prop["wider"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
