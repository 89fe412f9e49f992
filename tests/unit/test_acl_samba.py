"""Real ACL exports written by Samba (tests/fixtures/acl/samba-*, scripts/make_samba_acl_fixtures.sh).

A private smbd with ``vfs_acl_xattr`` held a small Japanese share whose ACLs were set with smbcacls
and exported by smbcacls (the listing, ``--numeric``, ``--sddl``, ``--save``) and samba-tool. The
readers below are what those ACLs let each group read, written by hand from the commands in the
script (its comments say which ACE each folder got), not from what the importer makes of the files.

The share (NAS01; BUILTIN\\Administrators have full control everywhere, and the root's CREATOR OWNER
reaches everything but 人事部)::

    /                 protected; Everyone may list the root itself (no inheritance): list-only
      お知らせ.txt
      営業部/         sales: change (OI|CI)
        見積/2024_見積書.xlsx
        社外秘/       sales: denied read (OI|CI) before its inherited change; auditors: read
          価格表.xlsx
        提出用/       HR: read, files of this folder only (OI|NP)
          申請書.docx
          下書き/案.docx
      人事部/         protected, HR: full
        規程.docx     file-level: sales may read this one file
        給与/         a deny for a SID nobody resolves (a deleted domain's account)
          2024年度.xlsx
        評価/         an allow for that SID; empty (the folder whose ACL changes: auditors may read)
      共有/           Everyone: read; sales: write without read (0x00100116)
        全社/就業規則.pdf
        全社/給与規程.pdf   file-level: sales denied
        名簿/         protected (inheritance copied, then edited): auditors read, HR may only list (CI)
          名簿.xlsx
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docindex.access.ntfs.drift import drift
from docindex.access.ntfs.exports import read_export, split_path
from docindex.access.ntfs.importer import ImportResult, KeyRules, import_acls
from docindex.access.ntfs.principals import read_mapping
from docindex.access.ntfs.readers import (
    CREATOR_OWNER,
    FILE_LEVEL,
    LIST_ONLY,
    UNMAPPED_ALLOW,
    UNMAPPED_DENY,
)
from docindex.access.policy import EVERYONE, AccessMap, parse_access_map
from docindex.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "acl"
NAS = "S-1-5-21-3041914418-2917245436-1871946452"  # NAS01's own SID (net setlocalsid in the script)
SALES, HR, AUDIT, ADMIN = (f"{NAS}-{rid}" for rid in (1105, 1106, 1107, 1000))
ORPHAN = "S-1-5-21-1993962763-492894223-1202660629-2117"  # in no mapping: the unmapped SID
BY_SID = f"nas,docindex\n{SALES},営業部\n{HR},人事部\n{AUDIT},監査\n{ADMIN},-\n".encode()
# smbcacls prints names where the NAS resolves them: the mapping names them the same way
BY_NAME = "nas,docindex\nNAS01\\営業部,営業部\nNAS01\\人事部,人事部\nNAS01\\監査,監査\nNAS01\\dxacl_admin,-\n".encode()

# (export, the format it is, the mapping that names its trustees)
EXPORTS = [
    ("samba-save.txt", "icacls", BY_SID),  # smbcacls --recurse --save: UTF-16 LE, CRLF, like icacls /save
    ("samba-listing.txt", "smbcacls", BY_NAME),
    ("samba-listing-numeric.txt", "smbcacls", BY_SID),
    ("samba-sddl.txt", "icacls", BY_SID),  # path and SDDL pairs in UTF-8
    ("samba-ntacl-sddl.txt", "icacls", BY_SID),
]
USERS = {"sales": "group:営業部", "hr": "group:人事部", "audit": "group:監査"}
ALL = {"sales", "hr", "audit"}

# key under nas/ -> (who the NAS lets read it, who docindex lets read it). Where they differ the
# import report names the key (or its folder) and docindex is the narrower. 新規.* are files the
# export does not list: what a file created there inherits.
READERS: dict[str, tuple[set[str], set[str]]] = {
    "お知らせ.txt": (set(), set()),  # the root passes read to the administrators and the owner only
    "新規.txt": (set(), set()),
    "営業部/見積/2024_見積書.xlsx": ({"sales"}, {"sales"}),
    "営業部/見積/新規.xlsx": ({"sales"}, {"sales"}),
    "営業部/社外秘/価格表.xlsx": ({"audit"}, {"audit"}),  # sales' deny stands before its inherited change
    "営業部/社外秘/新規.xlsx": ({"audit"}, {"audit"}),
    "営業部/提出用/申請書.docx": ({"sales", "hr"}, {"sales", "hr"}),
    "営業部/提出用/新規.docx": ({"sales", "hr"}, {"sales", "hr"}),
    "営業部/提出用/下書き/案.docx": ({"sales"}, {"sales"}),  # OI|NP: HR's read stops one level down
    "営業部/提出用/下書き/新規.docx": ({"sales"}, {"sales"}),
    "人事部/規程.docx": ({"sales", "hr"}, {"sales", "hr"}),  # file-level allow for sales: a rule for this key only
    "人事部/新規.docx": ({"hr"}, {"hr"}),
    "人事部/給与/2024年度.xlsx": ({"hr"}, set()),  # a deny docindex cannot attribute: administrators only
    "人事部/給与/新規.xlsx": ({"hr"}, set()),
    "人事部/評価/新規.xlsx": ({"hr"}, {"hr"}),  # and the unmapped SID, whose allow is dropped
    "共有/新規.txt": (ALL, ALL),  # Everyone reads; sales' write adds nothing
    "共有/全社/就業規則.pdf": (ALL, ALL),
    "共有/全社/給与規程.pdf": ({"hr", "audit"}, {"hr", "audit"}),  # file-level deny for sales: kept
    "共有/名簿/名簿.xlsx": ({"audit"}, {"audit"}),  # HR may list the folder, not read its files
    "共有/名簿/新規.xlsx": ({"audit"}, {"audit"}),
}

# Every place the map is narrower than the NAS, and why: (kind, key, trustee)
REPORTED = {
    (UNMAPPED_DENY, "nas/人事部/給与/", ORPHAN),
    (UNMAPPED_DENY, "nas/人事部/給与/2024年度.xlsx", ORPHAN),
    (UNMAPPED_ALLOW, "nas/人事部/評価/", ORPHAN),
    (LIST_ONLY, "nas/", EVERYONE),  # Everyone may list the root, whose files nobody reads
    (LIST_ONLY, "nas/共有/名簿/", "group:人事部"),
}


def _import(name: str, mapping: bytes, fmt: str | None = None) -> ImportResult:
    entries, found = read_export((FIXTURES / name).read_bytes(), name=name)
    if fmt is not None:
        assert found == fmt
    return import_acls(entries, read_mapping(mapping, name="groups.csv"), KeyRules(prefix="nas/"))


def _map(result: ImportResult) -> AccessMap:
    return parse_access_map(json.dumps(result.access_map(), ensure_ascii=False), admin_group="docindex-admins")


def _readers(access_map: AccessMap, key: str) -> set[str]:
    return {u for u, g in USERS.items() if access_map.grant("docs", key).permits([EVERYONE, g])}


def test_smbcacls_save_writes_the_icacls_format_and_every_export_lists_the_same_paths() -> None:
    data = (FIXTURES / "samba-save.txt").read_bytes()
    # UTF-16 LE without a BOM, CRLF, the share's root as an empty path line: as icacls /save writes
    assert not data.startswith(b"\xff\xfe")
    text = data.decode("utf-16-le")
    assert text.startswith("\r\nD:PAI(")
    assert "人事部\\給与\\2024年度.xlsx\r\n" in text
    assert "Version 4.22" in (FIXTURES / "samba-version.txt").read_text()
    paths = []
    for name, fmt, _ in EXPORTS:
        entries, found = read_export((FIXTURES / name).read_bytes(), name=name)
        assert found == fmt, name
        paths.append(sorted(split_path(e.path) for e in entries))
    assert len(paths[0]) == 22  # the root, 11 folders, 10 files
    assert all(p == paths[0] for p in paths)


@pytest.mark.parametrize(("name", "fmt", "mapping"), EXPORTS, ids=[e[0] for e in EXPORTS])
def test_each_group_reads_exactly_what_the_samba_acls_let_it(name: str, fmt: str, mapping: bytes) -> None:
    result = _import(name, mapping, fmt)
    access_map = _map(result)
    reported = {key for _, key, _ in REPORTED}
    for key, (nas, docindex) in READERS.items():
        got = _readers(access_map, "nas/" + key)
        assert got == docindex, (name, key, got)
        assert got <= nas, (name, key)  # never wider than the NAS
        if got != nas:  # narrower only where the report says so, on the key or its folder
            assert any(("nas/" + key).startswith(r) and r != "nas/" for r in reported), (name, key)


@pytest.mark.parametrize(("name", "fmt", "mapping"), EXPORTS, ids=[e[0] for e in EXPORTS])
def test_the_report_names_each_place_the_map_is_narrower_and_no_other(name: str, fmt: str, mapping: bytes) -> None:
    result = _import(name, mapping, fmt)
    restrictive = {(f.kind, f.key, f.trustee) for f in result.restrictive if f.kind != CREATOR_OWNER}
    assert restrictive == REPORTED
    # CREATOR OWNER (the root's, inherited everywhere): reported, and it gives nobody anything
    assert (CREATOR_OWNER, "nas/") in {(f.kind, f.key) for f in result.restrictive}
    # the two file-level ACLs are exact rules for their keys, listed but not narrower
    assert {f.key for f in result.findings if f.kind == FILE_LEVEL} == {
        "nas/人事部/規程.docx",
        "nas/共有/全社/給与規程.pdf",
    }
    # the denies are in the rules: sales' on 社外秘 and on the one file of 全社
    rules = {r["prefix"]: r for r in result.rules}
    assert rules["nas/営業部/社外秘/"]["deny"] == {"groups": ["営業部"]}
    assert rules["nas/営業部/社外秘/"]["allow"] == {"groups": ["監査"]}
    assert rules["nas/共有/全社/給与規程.pdf"]["deny"] == {"groups": ["営業部"]}
    assert "allow" not in rules["nas/人事部/給与/"]  # closed: administrators only


def test_every_samba_export_of_the_share_imports_to_the_same_rules() -> None:
    results = [_import(name, mapping) for name, _, mapping in EXPORTS]
    first = [(r["prefix"], r.get("allow"), r.get("deny")) for r in results[0].rules]
    for (name, _, _), result in zip(EXPORTS, results, strict=True):
        assert [(r["prefix"], r.get("allow"), r.get("deny")) for r in result.rules] == first, name


@pytest.mark.parametrize(("name", "fmt", "mapping"), EXPORTS, ids=[e[0] for e in EXPORTS])
def test_diff_finds_the_one_folder_whose_acl_changed_on_the_nas(name: str, fmt: str, mapping: bytes) -> None:
    applied = _map(_import(name, mapping))
    # The export the map came from is in step with it
    assert drift(_import(name, mapping), applied, bucket="docs", prefix="nas/").in_step
    # After smbcacls --add gave the auditors read on 人事部/評価, a second real export
    report = drift(_import(name.replace(".txt", "-changed.txt"), mapping), applied, bucket="docs", prefix="nas/")
    assert [d.key for d in report.differences] == ["nas/人事部/評価/"]
    assert report.differences[0].narrower == ("-allow group:監査",)
    assert report.differences[0].wider == ()
    assert report.stale_rules == []


def test_the_cli_imports_a_samba_save_file_and_diffs_the_next_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mapping = tmp_path / "groups.csv"
    mapping.write_bytes(BY_SID)
    out = tmp_path / "access-map.json"
    export, changed = FIXTURES / "samba-save.txt", FIXTURES / "samba-save-changed.txt"
    common = ["--mapping", str(mapping), "--prefix", "nas/"]
    # exit 1: the map is written, and the report has places narrower than the NAS
    assert main(["access", "import", str(export), *common, "-o", str(out), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["format"], report["folders"], report["files"]) == ("icacls", 12, 10)
    assert main(["access", "diff", str(export), str(out), *common]) == 0
    capsys.readouterr()
    assert main(["access", "diff", str(changed), str(out), *common, "--json"]) == 1
    diff = json.loads(capsys.readouterr().out)
    assert [d["key"] for d in diff["differences"]] == ["nas/人事部/評価/"]
