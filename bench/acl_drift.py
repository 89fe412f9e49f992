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
    result, _ = load(export, mapping=mapping, prefix="nas/")
    out.write_text(json.dumps(result.access_map(), ensure_ascii=False, indent=2), encoding="utf-8")
    imported = time.perf_counter() - started

    # One folder's ACL changes on the file server; a fresh export is taken
    target = tuple(changed_key.removeprefix("nas/").rstrip("/").split("/"))
    for node in nodes:
        if node.path == target:
            node.explicit = [*node.explicit, allow(f"{DOMAIN}-2001", READ_EXECUTE, OI | CI)]
    export.write_bytes(write_icacls(nodes))
    started = time.perf_counter()
    fresh, _ = load(export, mapping=mapping, prefix="nas/")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folders", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.folders)
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
    return 0 if result["found_the_changed_folder_only"] and result["seconds_diff"] < 60 else 1


if __name__ == "__main__":
    sys.exit(main())
