"""The file server's ACLs into the access map: SDDL by its specification, the four export formats,
the safe direction (unmapped SIDs, file-level ACEs, list-only rights, denies), drift, and the CLI."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from devkit.acl_tree import (
    CI,
    IO,
    LIST_TRAVERSE,
    NP,
    OI,
    READ_EXECUTE,
    WRITE,
    Node,
    allow,
    can_read,
    deny,
    new_file_dacl,
    random_tree,
    stored_dacls,
    write_getacl_csv,
    write_getacl_json,
    write_icacls,
    write_smbcacls,
)
from docindex.access.ntfs.drift import drift
from docindex.access.ntfs.exports import ExportError, read_export, split_path
from docindex.access.ntfs.importer import KeyRules, import_acls
from docindex.access.ntfs.principals import Mapping, MappingError, read_mapping
from docindex.access.ntfs.readers import FILE_LEVEL, LIST_ONLY, UNMAPPED_ALLOW, UNMAPPED_DENY
from docindex.access.ntfs.sddl import SddlError, parse_sddl, reads_data
from docindex.access.policy import EVERYONE, parse_access_map
from docindex.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "acl"
DOMAIN = "S-1-5-21-1004336348-1177238915-682003330"
SALES, HR, AUDIT, STRANGER = (f"{DOMAIN}-{rid}" for rid in (1105, 1106, 1107, 1199))
MAPPING = f"nas,docindex\n{SALES},営業部\n{HR},人事部\n{AUDIT},監査\n".encode()


def imported(data: bytes, mapping: bytes = MAPPING, prefix: str = "nas/", fmt: str = "auto"):  # type: ignore[no-untyped-def]
    """The export imported as the sync of its first path (the share's root, as every writer here puts first)
    to ``prefix`` names it: ``--strip <root>``."""
    entries, _ = read_export(data, name="export", fmt=fmt)
    strip = split_path(entries[0].path)
    return import_acls(entries, read_mapping(mapping, name="map.csv"), KeyRules(strip=strip, prefix=prefix))


def as_map(result):  # type: ignore[no-untyped-def]
    return parse_access_map(json.dumps(result.access_map(), ensure_ascii=False), admin_group="docindex-admins")


# --------------------------------------------------------------------------- SDDL, by the specification


def test_a_real_get_acl_sddl_reads_as_windows_wrote_it() -> None:
    text = (FIXTURES / "azcopy-getacl-file.sddl").read_text().strip()
    sd = parse_sddl(text)
    assert sd.owner == f"{DOMAIN}-99991"
    assert sd.group == "DU"
    assert sd.dacl is not None
    assert sd.dacl.auto_inherited
    assert not sd.dacl.protected
    kinds = [(a.kind, a.flag_text(), a.mask, a.trustee) for a in sd.dacl.aces]
    assert kinds[0] == ("allow", "", 0x1201BF, f"{DOMAIN}-99992")
    # CC SW WP LO RC: the tokens name directory-service rights; their bits on a file include FILE_READ_DATA
    assert kinds[1] == ("deny", "ID", 0x1 | 0x8 | 0x20 | 0x80 | 0x20000, f"{DOMAIN}-99993")
    assert reads_data(sd.dacl.aces[1].mask)
    assert kinds[3][2] == 0x1F01FF
    assert kinds[3][3] == "BA"


def test_the_documentations_examples_decode_to_what_the_documentation_says() -> None:
    ace_line, conditional, descriptor = (FIXTURES / "win32-docs-examples.txt").read_text().splitlines()
    dacl = parse_sddl("D:" + ace_line).dacl
    assert dacl is not None
    assert dacl.aces[0].mask == 0x100E003F  # "Access Mask: 0x100e003f" on the page
    assert dacl.aces[0].trustee == "S-1-1-0"
    cond = parse_sddl(conditional).dacl
    assert cond is not None
    assert cond.aces[0].conditional
    assert cond.aces[0].type == "XA"
    sd = parse_sddl(descriptor)
    assert (sd.owner, sd.group) == ("AO", "DA")


@pytest.mark.parametrize(
    ("sddl", "mask"),
    [
        ("D:(A;;GRGX;;;BU)", 0xA0000000),
        ("D:(A;;0x1200a9;;;BU)", 0x1200A9),
        ("D:(A;;1179817;;;BU)", 0x1200A9),
        ("D:(A;;04;;;BU)", 0x4),
        ("D:(A;;FRFX;;;BU)", 0x1200A9),
    ],
)
def test_rights_are_numbers_or_concatenated_tokens(sddl: str, mask: int) -> None:
    dacl = parse_sddl(sddl).dacl
    assert dacl is not None
    assert dacl.aces[0].mask == mask


@pytest.mark.parametrize(
    ("sddl", "message"),
    [
        ("D:(A;;ZZ;;;BU)", "unknown right 'ZZ'"),
        ("D:(A;XX;FA;;;BU)", "unknown ACE flag"),
        ("D:(Q;;FA;;;BU)", "unknown ACE type"),
        ("D:(A;;FA;;BU)", "6 fields"),
        ("D:(A;;FA;;;not-a-sid)", "not a SID"),
        ("D:(A;;FA;;;BU", "never closed"),
        ("X:(A;;FA;;;BU)", "expected O:, G:, D: or S:"),
    ],
)
def test_a_bad_sddl_is_refused_saying_where(sddl: str, message: str) -> None:
    with pytest.raises(SddlError, match=message):
        parse_sddl(sddl, where="acl.txt: line 2")


# --------------------------------------------------------------------------- a tree with every kind of ACE

ROOT = [allow(SALES, LIST_TRAVERSE), allow(HR, LIST_TRAVERSE), allow("S-1-3-0", 0x10000000, OI | CI | IO)]
TREE = [
    Node((), explicit=ROOT, protected=True),
    Node(("営業部",), explicit=[allow(SALES, 0x1301BF, OI | CI)]),
    Node(
        ("営業部", "見積"),
    ),
    Node(("営業部", "見積", "2024_見積書.xlsx"), folder=False),
    Node(
        (
            "営業部",
            "社外秘",
        ),
        explicit=[deny(SALES, 0x1200A9, OI | CI), allow(AUDIT, READ_EXECUTE, OI | CI)],
    ),
    Node(("営業部", "提出用"), explicit=[allow(HR, 0x120089, OI | NP)]),  # HR reads its files, not deeper
    Node(
        ("営業部", "提出用", "下書き"),
    ),
    Node(("人事部",), explicit=[allow(HR, 0x1F01FF, OI | CI)], protected=True),
    Node(("人事部", "評価"), explicit=[allow(STRANGER, READ_EXECUTE, OI | CI)]),  # unmapped allow
    Node(("人事部", "給与"), explicit=[deny(STRANGER, 0x80000000, OI | CI)]),  # unmapped deny
    Node(("人事部", "規程.docx"), folder=False, explicit=[allow(SALES, READ_EXECUTE)]),  # file-level, wider
    Node(("共有",), explicit=[allow("S-1-1-0", READ_EXECUTE, OI | CI), allow(SALES, WRITE, OI | CI)]),
    Node(("共有", "一覧のみ"), explicit=[allow(HR, LIST_TRAVERSE, CI)], protected=True),  # HR: list only
]


def test_every_format_of_the_same_tree_imports_to_the_same_map() -> None:
    # Given the same tree exported by icacls, Get-Acl (JSON with Sddl, JSON with Access rules, CSV) and smbcacls
    names = {SALES: "CONTOSO\\営業部", HR: "CONTOSO\\人事部", AUDIT: "CONTOSO\\監査", "S-1-1-0": "Everyone"}
    by_name = (
        f"nas,docindex\nCONTOSO\\営業部,営業部\nCONTOSO\\人事部,人事部\nCONTOSO\\監査,監査\n{STRANGER},-\n"
    ).encode()
    icacls = imported(write_icacls(TREE))
    maps = [
        imported(write_getacl_json(TREE)),
        imported(write_getacl_json(TREE, rules=True)),
        imported(write_getacl_csv(TREE)),
        imported(write_getacl_csv(TREE, encoding="cp932")),
        imported(write_smbcacls(TREE, names), mapping=by_name.replace(f"{STRANGER},-\n".encode(), b"")),
    ]
    # Then every one gives the same rules, key for key
    for other in maps:
        assert [(r["prefix"], r.get("allow"), r.get("deny")) for r in other.rules] == [
            (r["prefix"], r.get("allow"), r.get("deny")) for r in icacls.rules
        ]


def readers(result, key: str) -> set[str]:  # type: ignore[no-untyped-def]
    """Which of the test users the imported map lets read ``key``."""
    access_map = as_map(result)
    users = {"sales": "group:営業部", "hr": "group:人事部", "audit": "group:監査"}
    return {u for u, g in users.items() if access_map.grant("docs", key).permits([EVERYONE, g])}


def test_the_imported_map_gives_each_user_what_the_acls_let_them_read() -> None:
    result = imported(write_icacls(TREE))
    assert readers(result, "nas/営業部/見積/2024_見積書.xlsx") == {"sales"}
    assert readers(result, "nas/営業部/見積/新しい.docx") == {"sales"}  # a file the export did not list
    assert readers(result, "nas/営業部/社外秘/価格.xlsx") == {"audit"}  # the deny is kept
    assert readers(result, "nas/営業部/提出用/案.docx") == {"sales", "hr"}
    assert readers(result, "nas/営業部/提出用/下書き/案.docx") == {"sales"}  # NP: HR's ACE stops one level down
    assert readers(result, "nas/人事部/評価/山田.xlsx") == {"hr"}
    assert readers(result, "nas/共有/就業規則.pdf") == {"sales", "hr", "audit"}
    assert readers(result, "nas/readme.txt") == set()  # the root passes read to nobody (CREATOR OWNER aside)


def findings(result, kind: str) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(f.key, f.trustee) for f in result.findings if f.kind == kind]


def test_an_unmapped_sid_is_reported_and_never_widens() -> None:
    result = imported(write_icacls(TREE))
    # its allow is dropped and said so
    assert ("nas/人事部/評価/", STRANGER) in findings(result, UNMAPPED_ALLOW)
    # its deny closes the folder to all but the administrators, and said so
    assert ("nas/人事部/給与/", STRANGER) in findings(result, UNMAPPED_DENY)
    assert readers(result, "nas/人事部/給与/2024.xlsx") == set()
    assert as_map(result).grant("docs", "nas/人事部/給与/2024.xlsx").allow == ("group:docindex-admins",)


def test_a_file_level_ace_becomes_an_exact_rule_for_that_key() -> None:
    result = imported(write_icacls(TREE))
    file_level = [f for f in result.findings if f.kind == FILE_LEVEL]
    assert [f.key for f in file_level] == ["nas/人事部/規程.docx"]
    assert not file_level[0].restrictive
    assert readers(result, "nas/人事部/規程.docx") == {"hr", "sales"}  # the file server lets sales read this one
    assert readers(result, "nas/人事部/規程.docx.bak") == {"hr"}  # a new file of the folder: the folder's readers


def test_a_list_only_right_is_reported_and_gives_nothing() -> None:
    result = imported(write_icacls(TREE))
    assert ("nas/共有/一覧のみ/", "group:人事部") in findings(result, LIST_ONLY)
    assert readers(result, "nas/共有/一覧のみ/名簿.xlsx") == set()
    # a write-only right gives nothing either: sales reads 共有 through Everyone, not through its write ACE
    assert readers(result, "nas/共有/就業規則.pdf") >= {"sales"}


def test_list_only_is_reported_for_who_may_list_but_not_read_and_no_one_else() -> None:
    export = (
        "share\r\nD:P(A;OICI;0x1200a9;;;WD)\r\n"
        # HR lists it by its own ACE and reads its files as everyone does
        f"share\\a\r\nD:P(A;OICI;0x1200a9;;;WD)(A;;0x1200a9;;;{HR})\r\n"
        # sales is denied the folder and its files: it may not list it either
        f"share\\b\r\nD:P(D;OICI;0x1200a9;;;{SALES})(A;OICI;0x1301bf;;;{SALES})(A;OICI;0x1200a9;;;{AUDIT})\r\n"
        # HR reads on the file server; docindex closes the folder for a deny it cannot attribute
        f"share\\c\r\nD:P(D;OICI;0x1200a9;;;{STRANGER})(A;OICI;0x1200a9;;;{HR})\r\n"
        # HR may list the folder (and its sub-folders) but read none of its files
        f"share\\d\r\nD:P(A;CI;0x1200a9;;;{HR})(A;OICI;0x1200a9;;;{AUDIT})\r\n"
    ).encode("utf-16-le")
    result = imported(export)
    assert findings(result, LIST_ONLY) == [("nas/d/", "group:人事部")]
    assert findings(result, UNMAPPED_DENY) == [("nas/c/", STRANGER)]


# --------------------------------------------------------------------------- property: never wider than the ACLs

TRUSTEES = [SALES, HR, AUDIT, STRANGER, "S-1-1-0", "S-1-5-32-544"]
GROUPS = {SALES: "group:営業部", HR: "group:人事部", AUDIT: "group:監査"}


def test_no_key_is_ever_readable_by_someone_the_acl_denies() -> None:
    # Over generated trees with every ACE kind, for every user (any mix of mapped and unmapped groups),
    # every exported file and a new file in every folder: the map permits only what Windows' access
    # check permits. And it is not vacuous: the map grants most of what the file server does.
    mapping = read_mapping(MAPPING, name="map.csv")
    granted = nas_granted = 0
    for seed in range(40):
        nodes = random_tree(random.Random(seed), TRUSTEES)
        dacls = stored_dacls(nodes)
        entries, _ = read_export(write_icacls(nodes), name="t")
        access_map = as_map(import_acls(entries, mapping, KeyRules(strip=("share",), prefix="nas/")))
        probes = []
        for n in nodes:
            key = "/".join(("nas", *n.path))
            if n.folder:
                for owner in (SALES, "S-1-5-21-1-2-3-1000"):
                    probes.append((key + "/新規.txt", new_file_dacl(dacls, n.path, owner)))
            else:
                probes.append((key, dacls[n.path]))
        for held in itertools.chain.from_iterable(
            itertools.combinations([SALES, HR, AUDIT, STRANGER], k) for k in range(3)
        ):
            sids = {"S-1-1-0", "S-1-5-11", *held}
            principals = {EVERYONE, *(GROUPS[s] for s in held if s in GROUPS)}
            for key, dacl in probes:
                allowed = access_map.grant("docs", key).permits(principals)
                nas = can_read(dacl, sids)
                assert not (allowed and not nas), (seed, key, held, dacl.to_sddl())
                granted += allowed
                nas_granted += nas
    assert granted > 0.5 * nas_granted


def test_the_prefix_index_resolves_exactly_like_testing_every_rule() -> None:
    rng = random.Random(7)
    parts = ["a", "a.txt", "営業部", "b/", "x/"]
    rules = []
    for i in range(200):
        prefix = "".join(rng.choice(parts) for _ in range(rng.randint(0, 4)))
        rules.append(
            {
                "prefix": prefix,
                "bucket": rng.choice([None, "b1"]),
                "inherit": rng.random() < 0.7,
                "allow": {"groups": [f"g{i}"]},
            }
        )
    unique = {(r["bucket"], r["prefix"]): r for r in rules}
    document = {"rules": [{k: v for k, v in r.items() if v is not None} for r in unique.values()]}
    access_map = parse_access_map(json.dumps(document, ensure_ascii=False), admin_group="adm")
    for _ in range(300):
        key = "".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))
        bucket = rng.choice(["b1", "b2"])
        matching = [r for r in access_map.rules if key.startswith(r.prefix) and r.bucket in (None, bucket)]
        matching.sort(key=lambda r: (len(r.prefix), r.bucket is not None), reverse=True)
        allow_set = {"group:adm"}
        for r in matching:
            allow_set |= r.allow
            if not r.inherit:
                break
        assert set(access_map.grant(bucket, key).allow) == allow_set


# --------------------------------------------------------------------------- formats and hardening


def test_icacls_files_are_utf16_without_bom_and_name_the_line_of_an_error() -> None:
    data = write_icacls(TREE)
    assert not data.startswith(b"\xff\xfe")
    assert data[1:2] == b"\x00"
    entries, fmt = read_export(data, name="acl.txt")
    assert fmt == "icacls"
    assert entries[1].path == "share\\人事部"
    broken = data.decode("utf-16-le").replace("(A;OICI;FA;;;", "(A;OICI;FA;;", 1).encode("utf-16-le")
    with pytest.raises(ExportError, match=r"acl.txt: line 4: DACL: ACE 1: an ACE has 6 fields"):
        read_export(broken, name="acl.txt")
    missing = "share\r\nshare\\営業部\r\nD:(A;;FA;;;BA)\r\n".encode("utf-16-le")
    with pytest.raises(ExportError, match="line 2: expected the SDDL"):
        read_export(missing, name="acl.txt")


def test_a_samba_root_entry_and_smbcacls_numeric_output_are_read() -> None:
    save = "\r\nD:PAI(A;OICI;0x1200a9;;;WD)\r\n営業部\r\nD:AI(A;OICIID;0x1200a9;;;WD)\r\n".encode("utf-16-le")
    entries, _ = read_export(save, name="save")
    assert [e.path for e in entries] == ["", "営業部"]
    numeric = "REVISION:1\nCONTROL:0x9404\nOWNER:S-1-5-32-544\nGROUP:S-1-5-21-1-2-3-513\nACL:S-1-1-0:0/0x3/0x001200a9\n"
    (entry,), fmt = read_export(numeric.encode(), name="smb")
    assert fmt == "smbcacls"
    assert entry.dacl.protected
    assert (entry.dacl.aces[0].kind, entry.dacl.aces[0].flags, entry.dacl.aces[0].mask) == ("allow", OI | CI, 0x1200A9)


def test_an_icacls_save_run_inside_the_share_names_it_dot() -> None:
    # `icacls . /save acl.txt /t` writes the folder as '.' and what is in it as '.\\name', as a real
    # export in jvverde/bkit.me (commit 9d0a04af) shows; that file states no licence: not copied here
    export = (
        f".\r\nD:PAI(A;OICI;0x1200a9;;;{SALES})\r\n"
        f".\\営業部\r\nD:AI(A;OICI;0x1200a9;;;{HR})(A;OICIID;0x1200a9;;;{SALES})\r\n"
        f".\\営業部\\見積.xlsx\r\nD:AI(A;ID;0x1200a9;;;{HR})(A;ID;0x1200a9;;;{SALES})\r\n"
    ).encode("utf-16-le")
    result = imported(export)
    assert [r["prefix"] for r in result.rules] == ["nas/", "nas/営業部/"]
    assert readers(result, "nas/営業部/見積.xlsx") == {"sales", "hr"}
    with pytest.raises(ExportError, match=r"'\.\.' in it"):
        imported("..\\共有\r\nD:(A;OICI;FA;;;BA)\r\n".encode("utf-16-le"))


def test_oversized_and_malformed_inputs_are_refused_clearly() -> None:
    from docindex.access.ntfs import exports

    with pytest.raises(ExportError, match="larger than"):
        read_export(b"x" * (exports.MAX_EXPORT_BYTES + 1), name="big")
    with pytest.raises(ExportError, match="not valid JSON"):
        read_export(b'[{"Path": ', name="acl.json")
    with pytest.raises(ExportError, match=r"item 0.*no Path"):
        read_export(b'[{"Sddl": "D:(A;;FA;;;BA)"}]', name="acl.json")
    with pytest.raises(MappingError, match=r"map\.csv: line 2: expected two columns"):
        read_mapping(b"nas,docindex\nS-1-5-21-1-2-3-4\n", name="map.csv")
    with pytest.raises(MappingError, match="is not a SID"):
        read_mapping(b"S-1-5-x,g\n", name="map.csv")


# --------------------------------------------------------------------------- drift


def test_diff_finds_the_one_folder_whose_acl_changed() -> None:
    result = imported(write_icacls(TREE))
    applied = as_map(result)
    assert drift(result, applied, bucket="docs", prefix="nas/").in_step
    # When someone grants sales read on 人事部/評価 on the file server (a leaf folder)
    changed = [
        Node(n.path, n.folder, [*n.explicit, allow(SALES, READ_EXECUTE, OI | CI)], n.protected)
        if n.path == ("人事部", "評価")
        else n
        for n in TREE
    ]
    report = drift(imported(write_icacls(changed)), applied, bucket="docs", prefix="nas/")
    # Then the diff names exactly that folder, as the map being narrower than the file server
    assert [d.key for d in report.differences] == ["nas/人事部/評価/"]
    assert report.differences[0].narrower == ("-allow group:営業部",)
    # And a hand-widened map is shown as the dangerous side
    widened = json.loads(json.dumps(result.access_map(), ensure_ascii=False))
    for rule in widened["rules"]:
        if rule["prefix"] == "nas/人事部/":
            rule["allow"]["groups"].append("営業部")
    report = drift(
        result, parse_access_map(json.dumps(widened), admin_group="docindex-admins"), bucket="docs", prefix="nas/"
    )
    assert report.differences
    assert report.differences[0].wider == ("+allow group:営業部",)


def test_the_cli_imports_diffs_and_exits_by_the_conventions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "acl.txt"
    export.write_bytes(write_icacls(TREE))
    mapping = tmp_path / "groups.csv"
    mapping.write_bytes(MAPPING)
    out = tmp_path / "access-map.json"
    common = ["--mapping", str(mapping), "--strip", "share", "--prefix", "nas/"]
    # import: the map is written; exit 1 because the report has places more restrictive than the NAS
    assert main(["access", "import", str(export), *common, "-o", str(out), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["version"] == 1
    assert report["rules"] == len(json.loads(out.read_text())["rules"])
    assert {f["kind"] for f in report["findings"]} >= {UNMAPPED_ALLOW, UNMAPPED_DENY, FILE_LEVEL, LIST_ONLY}
    # diff: in step (0), then a changed export (1), then an unreadable one (2, one line naming the line)
    assert main(["access", "diff", str(export), str(out), *common]) == 0
    capsys.readouterr()
    export.write_bytes(
        write_icacls([*TREE[:-1], Node(("共有", "一覧のみ"), explicit=[allow(HR, READ_EXECUTE, OI | CI)])])
    )
    assert main(["access", "diff", str(export), str(out), *common, "--json"]) == 1
    diff = json.loads(capsys.readouterr().out)
    assert diff["version"] == 1
    assert [d["key"] for d in diff["differences"]] == ["nas/共有/一覧のみ/"]
    export.write_bytes("share\r\nD:(A;;FA;;;BA\r\n".encode("utf-16-le"))
    assert main(["access", "diff", str(export), str(out), "--strip", "share", "--prefix", "nas/"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "line 2" in err


def test_without_a_mapping_everyone_and_authenticated_users_still_mean_everyone() -> None:
    result = imported(
        b"share\r\nD:PAI(A;OICI;0x1200a9;;;AU)(A;OICI;FA;;;SY)\r\n".decode().encode("utf-16-le"), mapping=b""
    )
    assert result.rules[0]["allow"] == {"everyone": True}
    assert not result.restrictive
    assert isinstance(Mapping().who("S-1-5-18").kind, str)
