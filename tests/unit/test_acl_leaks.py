"""Issues 41 and 49: the imported map is never wider than Windows, with unusual and hostile ACLs and mapping lines.

Each test is one example of an issue, written as the export tools write it (icacls /save pairs in
UTF-16 LE, smbcacls listings), with the readers Windows' access check gives by hand in a comment.
The mapping maps ``…-1105`` to 営業部 (sales), ``…-1106`` to 人事部 (hr), ``…-1107`` to 監査 (audit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docindex.access.ntfs.exports import read_export
from docindex.access.ntfs.importer import ImportResult, KeyRules, import_acls
from docindex.access.ntfs.principals import read_mapping
from docindex.access.policy import EVERYONE, parse_access_map
from docindex.cli import main

DOMAIN = "S-1-5-21-1004336348-1177238915-682003330"
SALES, HR, AUDIT = (f"{DOMAIN}-{rid}" for rid in (1105, 1106, 1107))
MAPPING = f"nas,docindex\n{SALES},営業部\n{HR},人事部\n{AUDIT},監査\n".encode()
USERS = {"sales": "group:営業部", "hr": "group:人事部", "audit": "group:監査"}
EVERYBODY = set(USERS)


def icacls(*pairs: tuple[str, str]) -> bytes:
    """Path and SDDL lines as ``icacls /save`` writes them: UTF-16 LE without a BOM, CRLF."""
    return "".join(f"{path}\r\n{sddl}\r\n" for path, sddl in pairs).encode("utf-16-le")


def imported(data: bytes, *, strip: tuple[str, ...] | None = ("share",), prefix: str = "nas/") -> ImportResult:
    entries, _ = read_export(data, name="acl.txt")
    return import_acls(entries, read_mapping(MAPPING, name="groups.csv"), KeyRules(strip=strip, prefix=prefix))


def readers(result: ImportResult, key: str) -> set[str]:
    access_map = parse_access_map(json.dumps(result.access_map(), ensure_ascii=False), admin_group="docindex-admins")
    return {u for u, g in USERS.items() if access_map.grant("docs", key).permits([EVERYONE, g])}


ROOT_EVERYONE = ("share", "D:PAI(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;WD)")


# 1 ----------------------------------------------------------------- names are kept exactly as the server has them


@pytest.mark.parametrize("name", ["人事部\u3000", "報告 ", " 報告", "人事部\u00a0", "報告.", "[旧]人事部"])
def test_a_name_with_trailing_or_leading_spaces_or_dots_keeps_its_own_rule(name: str) -> None:
    # Given a folder whose name ends (or starts) with a space, U+3000, NBSP or a dot, readable by HR only,
    # next to a folder of the name without it that everyone reads
    export = icacls(
        ROOT_EVERYONE,
        (f"share\\{name}", f"D:PAI(A;OICI;0x1200a9;;;{HR})"),
        (f"share\\{name}\\給与.xlsx", f"D:AI(A;ID;0x1200a9;;;{HR})"),
    )
    result = imported(export)
    # Then files under the real folder are HR's only; the look-alike name falls to the root's readers
    assert readers(result, f"nas/{name}/給与.xlsx") == {"hr"}
    assert readers(result, f"nas/{name}/新規.xlsx") == {"hr"}
    assert f"nas/{name}/" in {p.key for p in result.paths}


# 2 ----------------------------------------------------------------- a file with OI/CI flags is still a file


def test_a_file_whose_aces_carry_inheritance_flags_is_read_as_a_file() -> None:
    # Given 人事評価.xlsx (icacls /restore of an edited file) readable by BA and HR, in a root everyone reads
    export = icacls(
        ROOT_EVERYONE,
        ("share\\人事評価.xlsx", f"D:PAI(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;{HR})"),
        ("share\\共有.txt", "D:AI(A;ID;FA;;;BA)(A;ID;0x1200a9;;;WD)"),
    )
    result = imported(export)
    # Then the key itself is HR's only (Windows: the ACEs apply to the file), and a folder of that name would be too
    assert readers(result, "nas/人事評価.xlsx") == {"hr"}
    assert readers(result, "nas/人事評価.xlsx/x") <= {"hr"}
    assert readers(result, "nas/共有.txt") == EVERYBODY


def test_an_inherit_only_reader_ace_on_a_file_reads_nothing() -> None:
    # Given a file with an inherit-only read for sales (it applies to no file) and a plain read for HR
    export = icacls(
        ROOT_EVERYONE,
        ("share\\報告.docx", f"D:PAI(A;OICIIO;0x1200a9;;;{SALES})(A;;0x1200a9;;;{HR})"),
    )
    # Then sales, whose ACE is inherit-only, does not read it
    assert readers(imported(export), "nas/報告.docx") == {"hr"}


# 3 ----------------------------------------------------------------- no-propagate in a folders-only export


def test_no_propagate_stops_at_the_folders_children_in_a_folders_only_export() -> None:
    # Given F whose ACEs are all NP (its files and sub-folders get them, not theirs), F\S with only the inherited ones
    export = icacls(
        ("F", f"D:PAI(A;OICINP;FA;;;BA)(A;OICINP;0x1200a9;;;{SALES})"),
        ("F\\S", f"D:AI(A;ID;FA;;;BA)(A;ID;0x1200a9;;;{SALES})"),
    )
    result = imported(export, strip=())
    # Then sales reads F's own files, not the files of S or of a sub-folder created later
    assert readers(result, "nas/F/x.docx") == {"sales"}
    assert readers(result, "nas/F/S/x.docx") == set()
    assert readers(result, "nas/F/新しいフォルダー/x.docx") == set()


# 4 ----------------------------------------------------------------- a NULL DACL is not inherited


def test_a_null_dacl_folder_closes_the_files_the_export_does_not_list() -> None:
    # Given a folder with no DACL (everyone may do everything with the folder itself) and one listed file with none
    export = icacls(
        ("share", f"D:PAI(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;{HR})"),
        ("share\\公開", "D:NO_ACCESS_CONTROL"),
        ("share\\公開\\a.txt", "D:NO_ACCESS_CONTROL"),
    )
    result = imported(export)
    # Then a new file gets its creator's default DACL, not the folder's nothing: closed
    assert readers(result, "nas/公開/新規.txt") == set()
    assert readers(result, "nas/公開/下/新規.txt") == set()
    assert readers(result, "nas/公開/a.txt") <= EVERYBODY  # Windows lets everyone read it: the map may
    assert any(f.kind == "null-dacl" and f.key == "nas/公開/" for f in result.findings)


def access_rules(*items: tuple[str, list[tuple[str, int, int, bool, int]]]) -> bytes:
    """``Get-Acl | Select-Object Path, Access | ConvertTo-Json -Depth 4`` (no Sddl): per path, its Access rules as
    (identity, FileSystemRights as the Int32 .NET has, AccessControlType, IsInherited, InheritanceFlags)."""
    document = [
        {
            "Path": f"Microsoft.PowerShell.Core\\FileSystem::D:\\Shares\\{path}",
            "Access": [
                {
                    "IdentityReference": {"Value": who},
                    "FileSystemRights": rights,
                    "AccessControlType": kind,
                    "IsInherited": inherited,
                    "InheritanceFlags": flags,
                    "PropagationFlags": 0,
                }
                for who, rights, kind, inherited, flags in rules
            ],
            "AreAccessRulesProtected": False,
        }
        for path, rules in items
    ]
    return json.dumps(document, ensure_ascii=False).encode()


def test_a_null_dacl_as_get_acl_access_rules_show_it_is_not_inherited() -> None:
    # Given Get-Acl's Access rules, where .NET shows a folder without a DACL as Everyone: every bit (-1),
    # inheritable (CommonSecurityDescriptor's CreateAllowEveryoneFullAccess)
    read = ("Everyone", 0x1200A9, 0, True, 3)
    export = access_rules(
        ("share", [("Everyone", 0x1200A9, 0, False, 3)]),
        ("share\\公開", [("Everyone", -1, 0, False, 3)]),
        ("share\\公開\\a.txt", [("Everyone", -1, 0, False, 0)]),
        ("share\\普通", [read]),
    )
    result = imported(export, strip=("D:", "Shares", "share"))
    # Then it is read as the NULL DACL it is: new files get their creator's default DACL (closed), the listed
    # file (no DACL) may be read by everyone, and a folder with a real Everyone ACE is unchanged
    assert readers(result, "nas/公開/新規.txt") == set()
    assert readers(result, "nas/公開/下/新規.txt") == set()
    assert readers(result, "nas/公開/a.txt") <= EVERYBODY
    assert readers(result, "nas/普通/新規.txt") == EVERYBODY
    assert any(f.kind == "null-dacl" and f.key == "nas/公開/" for f in result.findings)


def test_access_rules_say_that_they_show_a_conditional_allow_as_a_plain_one() -> None:
    # Given an export of Access rules (no Sddl), where .NET shows an XA ACE as an ordinary Allow
    result = imported(access_rules(("share", [("Everyone", 0x1200A9, 0, False, 3)])), strip=("D:", "Shares", "share"))
    # Then the report says so, once, and what to export instead
    [note] = [f for f in result.findings if f.kind == "access-rules"]
    assert "Sddl" in note.detail
    assert not note.restrictive


# 5 ----------------------------------------------------------------- every deny-type ACE denies, in every format

SMB_HEAD = "REVISION:1\nCONTROL:SR|PD|DI|DP\nOWNER:BUILTIN\\Administrators\nGROUP:CONTOSO\\Domain Users\n"


@pytest.mark.parametrize("ace_type", ["10", "1", "6", "12", "DENIED"])
def test_a_callback_or_object_deny_in_smbcacls_denies(ace_type: str) -> None:
    # Given HR denied by a callback (10), plain (1), object (6) or callback object (12) deny, then Everyone allowed
    listing = SMB_HEAD + f"ACL:{HR}:{ace_type}/OI|CI/READ\nACL:Everyone:ALLOWED/OI|CI/READ\n"
    result = imported(listing.encode(), strip=())
    # Then HR reads nothing (Windows: a deny whose condition it cannot evaluate denies)
    assert readers(result, "nas/x.docx") == {"sales", "audit"}


@pytest.mark.parametrize("ace_type", ["9", "5", "11"])
def test_a_callback_or_object_allow_in_smbcacls_gives_nothing(ace_type: str) -> None:
    listing = SMB_HEAD + f"ACL:{HR}:{ace_type}/OI|CI/READ\nACL:{SALES}:ALLOWED/OI|CI/READ\n"
    assert readers(imported(listing.encode(), strip=()), "nas/x.docx") == {"sales"}


# 6 ----------------------------------------------------------------- denies to identities docindex does not map


@pytest.mark.parametrize("trustee", ["OW", "S-1-3-4", "AS", "S-1-18-1", "BA", "S-1-5-32-544", "SS", "IU"])
def test_a_deny_for_an_identity_people_hold_closes_the_folder(trustee: str) -> None:
    # Given a deny for OWNER RIGHTS (the owner), asserted identity (every Kerberos logon) or Administrators
    export = icacls(("share", f"D:PAI(D;OICI;0x1200a9;;;{trustee})(A;OICI;0x1200a9;;;{SALES})"))
    result = imported(export)
    # Then a sales member who is the owner, logged on with Kerberos or an administrator would be denied: closed
    assert readers(result, "nas/見積.xlsx") == set()
    assert result.restrictive


def test_a_deny_for_a_machine_account_changes_nothing() -> None:
    export = icacls(("share", f"D:PAI(D;OICI;FA;;;SY)(D;OICI;FA;;;NS)(A;OICI;0x1200a9;;;{SALES})"))
    assert readers(imported(export), "nas/見積.xlsx") == {"sales"}


# 7 ----------------------------------------------------------------- a mandatory label with no-read-up


def test_a_no_read_up_label_above_medium_closes_and_is_reported() -> None:
    # Given a folder labelled High with no-read-up (a medium-integrity logon may not read), and one labelled Medium
    export = icacls(
        ("share", f"D:PAI(A;OICI;0x1200a9;;;{SALES})S:(ML;OICI;NRNW;;;HI)"),
        ("share\\普通", f"D:PAI(A;OICI;0x1200a9;;;{SALES})S:(ML;OICI;NRNW;;;ME)"),
        ("share\\書込のみ", f"D:PAI(A;OICI;0x1200a9;;;{SALES})S:(ML;OICI;NW;;;HI)"),
    )
    result = imported(export)
    # Then only administrators read under the High label; Medium and no-write-up change nothing
    assert readers(result, "nas/秘.xlsx") == set()
    assert readers(result, "nas/普通/a.xlsx") == {"sales"}
    assert readers(result, "nas/書込のみ/a.xlsx") == {"sales"}
    assert any(f.kind == "integrity-label" and f.key == "nas/" for f in result.restrictive)


# 7b ---------------------------------------------------------------- trust labels and access filters (Server 2016+)
# SYSTEM_PROCESS_TRUST_LABEL_ACE (TL, type 0x14) and SYSTEM_ACCESS_FILTER_ACE (FL, 0x15) sit in the SACL and can only
# take rights away from what the DACL grants. [MS-DTYP] defines neither (its SDDL grammar, 2.5.1.1, has no TL or FL),
# so nothing published says one cannot keep a user's logon from reading: the map closes.

TRUST_LABEL = "(TL;;0x1200a9;;;S-1-19-512-8192)"  # a PPL Windows trust level; the mask is not specified: not read
ACCESS_FILTER = "(FL;;0x1200a9;;;WD;(Member_of {SID(BA)}))"  # the TP flag (trust protected) is read too


@pytest.mark.parametrize(
    ("ace", "kind"), [(TRUST_LABEL, "trust-label"), (ACCESS_FILTER, "access-filter")], ids=["TL", "FL"]
)
def test_a_trust_label_or_an_access_filter_closes_and_is_reported(ace: str, kind: str) -> None:
    # Given a share readable by everyone whose folder (inherited by its files) and one file carry the SACL ACE
    inheritable, inherited = (ace.replace(";;", f";{flags};", 1) for flags in ("OICI", "ID"))
    export = icacls(
        ROOT_EVERYONE,
        ("share\\保護", f"D:AI(A;OICIID;0x1200a9;;;WD)S:AI{inheritable}"),
        ("share\\保護\\a.docx", f"D:AI(A;ID;0x1200a9;;;WD)S:AI{inherited}"),
        ("share\\普通", "D:AI(A;OICIID;0x1200a9;;;WD)"),
        ("share\\単独.docx", f"D:AI(A;ID;0x1200a9;;;WD)S:{ace}"),
    )
    # When it is imported (it used to be refused: "unknown ACE type")
    result = imported(export)
    # Then the folder's files, new ones and the labelled file are the administrators' only; the rest is unchanged
    assert readers(result, "nas/保護/a.docx") == set()
    assert readers(result, "nas/保護/新規.docx") == set()
    assert readers(result, "nas/単独.docx") == set()
    assert readers(result, "nas/普通/a.docx") == EVERYBODY
    assert readers(result, "nas/単独.docx.bak") == EVERYBODY
    assert {(f.kind, f.key) for f in result.restrictive} >= {(kind, "nas/保護/"), (kind, "nas/単独.docx")}


def test_an_inherit_only_trust_label_closes_what_is_created_below_not_the_folder_itself() -> None:
    # Given a folder whose trust label is inherit-only, with a file of its own that does not carry it (an old file)
    export = icacls(
        ROOT_EVERYONE,
        ("share\\F", "D:AI(A;OICIID;0x1200a9;;;WD)S:AI(TL;OICIIO;0x1200a9;;;S-1-19-512-8192)"),
        ("share\\F\\old.docx", "D:AI(A;ID;0x1200a9;;;WD)"),
    )
    result = imported(export)
    # Then new files are closed; the file the export shows without the label keeps its readers
    assert readers(result, "nas/F/new.docx") == set()
    assert readers(result, "nas/F/old.docx") == EVERYBODY


def test_smbcacls_types_20_and_21_close_instead_of_failing_the_import() -> None:
    # Given an smbcacls listing with a trust label (20) and an access filter (21) printed by number
    export = (
        "REVISION:1\nCONTROL:SR|DP\nOWNER:BUILTIN\\Administrators\nGROUP:BUILTIN\\Users\n"
        "ACL:Everyone:ALLOWED/OI|CI/READ\n"
        "保護\nREVISION:1\nCONTROL:SR|DP\nOWNER:BUILTIN\\Administrators\nGROUP:BUILTIN\\Users\n"
        "ACL:Everyone:ALLOWED/OI|CI|I/READ\nACL:S-1-19-512-8192:20/OI|CI/0x001200a9\n"
        "フィルタ\nREVISION:1\nCONTROL:SR|DP\nOWNER:BUILTIN\\Administrators\nGROUP:BUILTIN\\Users\n"
        "ACL:Everyone:ALLOWED/OI|CI|I/READ\nACL:Everyone:21/OI|CI/0x001200a9\n"
    ).encode()
    result = imported(export, strip=None, prefix="nas/")
    assert readers(result, "nas/a.docx") == EVERYBODY
    assert readers(result, "nas/保護/a.docx") == set()
    assert readers(result, "nas/フィルタ/a.docx") == set()
    assert {f.kind for f in result.restrictive} >= {"trust-label", "access-filter"}


# 8 ----------------------------------------------------------------- a subtree's export governs that subtree only


def test_importing_one_departments_subtree_governs_that_subtree_only() -> None:
    # Given `icacls D:\Shares\人事部 /save /t`: the department and its sub-folder, and the default --strip
    export = icacls(
        ("人事部", f"D:PAI(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;{HR})"),
        ("人事部\\評価", f"D:AI(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;{HR})"),
    )
    result = imported(export, strip=None, prefix="")
    # Then the map covers 人事部/ and nothing else: another department's keys are closed, not HR's
    assert result.covers == "人事部/"
    assert readers(result, "人事部/評価/山田.xlsx") == {"hr"}
    assert readers(result, "営業部/見積.xlsx") == set()
    assert all(r["prefix"].startswith("人事部/") for r in result.rules)


# also found --------------------------------------------------------- valid exports that were refused


def test_a_utf16_export_without_bom_whose_first_character_is_not_ascii_is_read() -> None:
    export = icacls(("共有", "D:PAI(A;OICI;0x1200a9;;;WD)"), ("共有\\a", "D:AI(A;OICIID;0x1200a9;;;WD)"))
    entries, fmt = read_export(export, name="acl.txt")
    assert fmt == "icacls"
    assert [e.path for e in entries] == ["共有", "共有\\a"]


def test_a_path_that_starts_like_an_sddl_part_is_a_path() -> None:
    export = (
        "D:\\Shares\\営業部(旧)\nD:PAI(A;OICI;0x1200a9;;;WD)\n"
        "D:\\Shares\\営業部(旧)\\O:(A)\nD:AI(A;OICIID;0x1200a9;;;WD)\n"
    ).encode()
    entries, fmt = read_export(export, name="acl.txt")
    assert fmt == "icacls"
    assert [e.path for e in entries] == ["D:\\Shares\\営業部(旧)", "D:\\Shares\\営業部(旧)\\O:(A)"]


def test_a_first_path_starting_with_a_bracket_is_not_json() -> None:
    export = icacls(("[旧]営業部", "D:PAI(A;OICI;0x1200a9;;;WD)"), ("{下書き}", "D:PAI(A;OICI;0x1200a9;;;WD)"))
    entries, fmt = read_export(export, name="acl.txt")
    assert fmt == "icacls"
    assert [e.path for e in entries] == ["[旧]営業部", "{下書き}"]


def test_an_export_cut_at_an_entry_boundary_is_refused_when_the_count_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an icacls file cut after its second entry, and the count icacls printed ("Successfully processed 3 files")
    export = tmp_path / "acl.txt"
    export.write_bytes(icacls(ROOT_EVERYONE, ("share\\営業部", f"D:PAI(A;OICI;0x1200a9;;;{SALES})")))
    mapping = tmp_path / "groups.csv"
    mapping.write_bytes(MAPPING)
    out = tmp_path / "map.json"
    args = ["access", "import", str(export), "--mapping", str(mapping), "--strip", "share", "-o", str(out)]
    # When it is imported with that count
    code = main([*args, "--expect-entries", "3"])
    # Then it is refused, saying why
    assert code == 2
    err = capsys.readouterr().err
    assert "2 entries" in err
    assert "reported 3" in err
    assert not out.exists()
    # And without a count the output says that this format cannot show a cut at an entry boundary
    assert main(args) == 0
    assert "no end marker" in capsys.readouterr().out
    assert main([*args, "--expect-entries", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries_checked"] is True


def test_apply_merge_keeps_the_applied_rules_outside_the_imported_subtree(tmp_path: Path) -> None:
    # Given the company's applied map (a file, as the local run keeps it) and one department's import
    from docindex.cli.access import _merge

    applied = tmp_path / "access-map.json"
    applied.write_text(
        json.dumps({"rules": [{"prefix": "営業部/", "inherit": False, "allow": {"groups": ["営業部"]}}]}),
        encoding="utf-8",
    )
    export = icacls(("人事部", f"D:PAI(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;{HR})"))
    document = json.dumps(imported(export, strip=None, prefix="").access_map(), ensure_ascii=False)
    department = parse_access_map(document, admin_group="docindex-admins")
    # When `access apply --merge` combines them
    result = _merge(str(applied), department, None, "docindex-admins")
    # Then sales keeps its folder, HR gets its own, and nothing else opens
    assert result.grant("docs", "営業部/a.xlsx").permits(["group:営業部"])
    assert result.grant("docs", "人事部/a.xlsx").permits(["group:人事部"])
    assert not result.grant("docs", "経理/a.xlsx").permits(["group:人事部", "group:営業部", EVERYONE])
    # and with no map applied yet, the merge is the department's map alone
    assert [r.prefix for r in _merge(str(tmp_path / "none.json"), department, None, "docindex-admins").rules] == [
        "人事部/"
    ]


# 9 ----------------------------------------------------------------- issue 49: no deny lost to a mapping line
# The mapping file is the admin's word for who is who, and the import trusts it for allows (an allow it narrows is
# narrower than Windows). A deny is different: `BU,-` ("no docindex user is in BUILTIN\Users") or
# `Everyone,all-staff` would let in people Windows refuses. Users here: sales (営業部, and all-staff, as the identity
# provider puts every employee there) and a temp the provider signed in without putting them in any group. Both are
# domain users: Windows gives them Everyone, Authenticated Users, NETWORK, BUILTIN\Users and Domain Users.

STAFF = {"sales": ["group:営業部", "group:all-staff"], "temp": []}


def staff_readers(result: ImportResult, key: str) -> set[str]:
    access_map = parse_access_map(json.dumps(result.access_map(), ensure_ascii=False), admin_group="docindex-admins")
    return {u for u, groups in STAFF.items() if access_map.grant("docs", key).permits([EVERYONE, *groups])}


def imported_with(data: bytes, lines: str, *, domain_sid: str | None = None, strip: tuple[str, ...] = ("share",)):  # type: ignore[no-untyped-def]
    entries, _ = read_export(data, name="acl.txt")
    mapping = read_mapping(MAPPING + lines.encode(), name="groups.csv", domain_sid=domain_sid)
    return import_acls(entries, mapping, KeyRules(strip=strip, prefix="nas/"))


def finding(result: ImportResult, kind: str, key: str = "") -> list[str]:
    """The details of the report's lines of ``kind`` (at ``key``, where given)."""
    return [f.detail for f in result.findings if f.kind == kind and (not key or f.key == key)]


# The mapping line is the fifth of groups.csv (a header and three groups before it).
@pytest.mark.parametrize("line", ["BU,-", "S-1-5-32-545,-", "BUILTIN\\Users,-", "builtin\\users , -"])
def test_a_deny_to_builtin_users_mapped_to_dash_closes_the_folder(line: str) -> None:
    # Given 役員 denied to BUILTIN\Users (every domain user: Windows refuses every employee), then open to Everyone
    export = icacls(ROOT_EVERYONE, ("share\\役員", "D:PAI(D;OICI;0x1200a9;;;BU)(A;OICI;0x1200a9;;;WD)"))
    result = imported_with(export, line + "\n")
    # Then nobody but the administrators reads its files, old or new; the rest of the share is unchanged
    assert staff_readers(result, "nas/役員/議事録.docx") == set()
    assert staff_readers(result, "nas/役員/下/新規.docx") == set()
    assert staff_readers(result, "nas/お知らせ.txt") == set(STAFF)
    # and the report names the folder and the mapping line, among the places the map is narrower
    [detail] = finding(result, "ignored-trustee-deny", "nas/役員/")
    assert "groups.csv: line 5" in detail
    assert any(f.kind == "ignored-trustee-deny" for f in result.restrictive)


def test_a_deny_to_any_trustee_mapped_to_dash_closes_the_folder() -> None:
    # Given a deny to a contractors' group the admin mapped to '-' (thinking none of them signs in to docindex)
    contractors = f"{DOMAIN}-1300"
    export = icacls(ROOT_EVERYONE, ("share\\見積", f"D:PAI(D;OICI;0x1200a9;;;{contractors})(A;OICI;0x1200a9;;;WD)"))
    result = imported_with(export, f"{contractors},-\n")
    # Then the folder closes, as a deny for a trustee docindex cannot name does: anyone may be a contractor
    assert staff_readers(result, "nas/見積/a.xlsx") == set()
    assert "groups.csv: line 5" in finding(result, "ignored-trustee-deny", "nas/見積/")[0]


def test_a_deny_to_administrators_mapped_to_dash_still_closes() -> None:
    # Given `BA,-` and a deny to Administrators (a sales member who is an administrator is refused on Windows)
    export = icacls(("share", f"D:PAI(D;OICI;0x1200a9;;;BA)(A;OICI;0x1200a9;;;{SALES})"))
    result = imported_with(export, "BA,-\n")
    assert readers(result, "nas/見積.xlsx") == set()
    assert result.restrictive


def test_a_deny_to_a_machine_account_mapped_to_dash_is_still_ignored() -> None:
    # Given `SY,-` (redundant: docindex knows SYSTEM is never a person searching) and a deny to SYSTEM
    export = icacls(("share", f"D:PAI(D;OICI;FA;;;SY)(A;OICI;0x1200a9;;;{SALES})"))
    result = imported_with(export, "SY,-\n")
    # Then the deny changes nothing, as without the line
    assert readers(result, "nas/見積.xlsx") == {"sales"}
    assert not result.restrictive


UNIVERSAL = [
    ("WD", "Everyone"),
    ("WD", "S-1-1-0"),
    ("S-1-1-0", "WD"),
    ("AU", "NT AUTHORITY\\Authenticated Users"),
    ("NU", "NU"),
    ("BU", "BUILTIN\\Users"),
    ("DU", "DU"),
    (f"{DOMAIN}-513", f"{DOMAIN}-513"),
    ("S-1-5-15", "NT AUTHORITY\\This Organization"),
]


@pytest.mark.parametrize(("trustee", "left"), UNIVERSAL, ids=[f"{t}={m}" for t, m in UNIVERSAL])
def test_a_deny_to_a_universal_trustee_mapped_to_a_group_denies_everyone(trustee: str, left: str) -> None:
    # Given 社外秘 denied to a trustee every employee's logon holds, then open to Everyone and Authenticated Users
    # (one of them stays `everyone`), and the line `<trustee>,all-staff` (the identity provider's group of
    # employees; the temp is not in it)
    opened = "(A;OICI;0x1200a9;;;WD)(A;OICI;0x1200a9;;;AU)"
    export = icacls(ROOT_EVERYONE, ("share\\社外秘", f"D:PAI(D;OICI;0x1200a9;;;{trustee}){opened}"))
    result = imported_with(export, f"{left},all-staff\n")
    # Then Windows refuses both, and so does the map: the deny denies everyone, not only all-staff
    assert staff_readers(result, "nas/社外秘/価格表.xlsx") == set()
    assert staff_readers(result, "nas/社外秘/新規.xlsx") == set()
    # and the report says so per folder and once for the line
    assert "groups.csv: line 5" in finding(result, "universal-deny", "nas/社外秘/")[0]
    [summary] = [f for f in result.findings if f.kind == "universal-mapping"]
    assert summary.where == "groups.csv: line 5"
    assert "group:all-staff" in summary.detail


def test_everyone_mapped_to_a_group_narrows_its_allows_as_the_line_says() -> None:
    # Given `Everyone,all-staff` (keep the temp out of what the file server shares with Everyone) and no deny
    export = icacls(ROOT_EVERYONE, ("share\\共有", "D:AI(A;OICIID;0x1200a9;;;WD)"))
    result = imported_with(export, "Everyone,all-staff\n")
    # Then the line is used, not refused: all-staff reads, the temp does not (narrower than Windows, as asked)
    assert staff_readers(result, "nas/共有/a.docx") == {"sales"}
    # and it is reported even though nothing is denied
    [summary] = [f for f in result.findings if f.kind == "universal-mapping"]
    assert "Everyone" in summary.trustee
    assert not finding(result, "universal-deny")


def test_domain_users_by_alias_with_the_domain_sid_is_universal() -> None:
    # Given --domain-sid, so `DU` in the mapping file and the export's SID of Domain Users are one trustee
    export = icacls(ROOT_EVERYONE, ("share\\社外秘", f"D:PAI(D;OICI;0x1200a9;;;{DOMAIN}-513)(A;OICI;0x1200a9;;;WD)"))
    result = imported_with(export, "DU,all-staff\n", domain_sid=DOMAIN)
    assert staff_readers(result, "nas/社外秘/a.xlsx") == set()


def test_universal_trustees_mapped_to_dash_close_and_are_reported_once() -> None:
    # Given the issue's export: `BU,-` and a deny to BU; and `Everyone,-` too (its allows give nothing)
    export = icacls(ROOT_EVERYONE, ("share\\役員", "D:PAI(D;OICI;0x1200a9;;;BU)(A;OICI;0x1200a9;;;AU)"))
    result = imported_with(export, "BU,-\nEveryone,-\n")
    assert staff_readers(result, "nas/役員/a.docx") == set()
    assert staff_readers(result, "nas/a.docx") == set()  # Everyone's allow gives nothing, as the line says
    lines = sorted(f.where for f in result.findings if f.kind == "universal-mapping")
    assert lines == ["groups.csv: line 5", "groups.csv: line 6"]


NAMED = [
    ("Everyone", "Everyone"),
    ("BUILTIN\\Users", "BUILTIN\\Users"),
    ("BUILTIN\\Users", "S-1-5-32-545"),
    ("CONTOSO\\Domain Users", "CONTOSO\\Domain Users"),
    ("Jeder", "Jeder"),  # a German server: Everyone
    ("VORDEFINIERT\\Benutzer", "S-1-5-32-545"),  # German BUILTIN\Users
    ("NT-AUTORITÄT\\Authentifizierte Benutzer", "AU"),
    ("CONTOSO\\Domänen-Benutzer", "CONTOSO\\Domänen-Benutzer"),
    ("Tout le monde", "Tout le monde"),  # French
    ("CONTOSO\\Utilisateurs du domaine", "CONTOSO\\Utilisateurs du domaine"),
    ("Todos", "WD"),  # Spanish
]


@pytest.mark.parametrize(("name", "left"), NAMED, ids=[f"{n}={m}" for n, m in NAMED])
@pytest.mark.parametrize("target", ["all-staff", "-"])
def test_a_universal_trustee_by_name_is_known_in_exports_that_print_names(name: str, left: str, target: str) -> None:
    # Given Get-Acl's Access rules (NTAccount names, in the server's language) with a deny to a universal trustee,
    # then a read for Everyone and Authenticated Users (one of the two stays `everyone` whatever the line maps)
    opened = [("Everyone", 0x1200A9, 0), ("NT AUTHORITY\\Authenticated Users", 0x1200A9, 0)]
    export = access_rules(
        ("share", [(name, 0x1200A9, 1, False, 3), *((w, m, k, False, 3) for w, m, k in opened)]),
        ("share\\a", [(name, 0x1200A9, 1, True, 3), *((w, m, k, True, 3) for w, m, k in opened)]),
    )
    result = imported_with(export, f"{left},{target}\n", strip=("D:", "Shares", "share"))
    # Then the deny refuses everyone, whatever the line maps the trustee to, and the report names the line
    assert staff_readers(result, "nas/a/x.docx") == set()
    assert staff_readers(result, "nas/x.docx") == set()
    kind = "universal-deny" if target != "-" else "ignored-trustee-deny"
    assert "groups.csv: line 5" in finding(result, kind, "nas/a/")[0]


def test_the_issues_two_exports_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given the issue's two exports: a deny to BUILTIN\Users with `BU,-`, a deny to Everyone with `Everyone,all-staff`
    export = tmp_path / "acl.txt"
    export.write_bytes(
        icacls(
            ROOT_EVERYONE,
            ("share\\役員", "D:PAI(D;OICI;0x1200a9;;;BU)(A;OICI;0x1200a9;;;WD)"),
            ("share\\社外秘", "D:PAI(D;OICI;0x1200a9;;;WD)(A;OICI;0x1200a9;;;WD)"),
        )
    )
    mapping = tmp_path / "groups.csv"
    mapping.write_bytes(MAPPING + b"BU,-\nEveryone,all-staff\n")
    out = tmp_path / "map.json"
    args = ["access", "import", str(export), "--mapping", str(mapping), "--strip", "share", "--prefix", "nas/"]
    # When it is imported
    code = main([*args, "-o", str(out)])
    # Then the map is written, narrower than the file server somewhere (exit 1), and the report has both kinds
    assert code == 1
    text = capsys.readouterr().out
    assert "ignored-trustee-deny: 1 (more restrictive than the file server)" in text
    assert "universal-mapping: 2" in text
    access_map = parse_access_map(out.read_bytes(), admin_group="docindex-admins")
    for key in ("nas/役員/a.docx", "nas/社外秘/a.docx"):
        for groups in STAFF.values():
            assert not access_map.grant("docs", key).permits([EVERYONE, *groups])
    # and, in full, which folder each deny closes and which mapping line is why
    assert main([*args, "-o", str(out), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    by_kind = {(f["kind"], f["key"]): f for f in findings}
    assert f"{mapping}: line 5" in by_kind["ignored-trustee-deny", "nas/役員/"]["detail"]
    assert f"{mapping}: line 6" in by_kind["universal-deny", "nas/社外秘/"]["detail"]
    assert sorted(f["where"] for f in findings if f["kind"] == "universal-mapping") == [
        f"{mapping}: line 5",
        f"{mapping}: line 6",
    ]


def test_access_diff_shows_a_map_imported_before_as_wider(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a map imported before issue 49 from the issue's two exports (the importer took the lines' word for denies)
    from docindex.access.ntfs import principals
    from docindex.access.ntfs.drift import drift

    export = icacls(
        ROOT_EVERYONE,
        ("share\\役員", "D:PAI(D;OICI;0x1200a9;;;BU)(A;OICI;0x1200a9;;;WD)"),
        ("share\\社外秘", "D:PAI(D;OICI;0x1200a9;;;WD)(A;OICI;0x1200a9;;;AU)"),
    )
    lines = "BU,-\nEveryone,all-staff\n"

    def trusting(self: principals.Mapping, key: str, label: str, *, universal: bool) -> principals.Who:
        found = self.entries[key]
        return principals.Who(principals.MAPPED if found else principals.IGNORED, found, label, denies=found)

    with monkeypatch.context() as patched:
        patched.setattr(principals.Mapping, "_by_line", trusting)
        before = imported_with(export, lines)
    applied = parse_access_map(json.dumps(before.access_map(), ensure_ascii=False), admin_group="docindex-admins")
    assert staff_readers(before, "nas/役員/a.docx") == {"sales"}  # the leak as it was: Windows refuses everyone
    assert staff_readers(before, "nas/社外秘/a.docx") == {"temp"}
    # When `docindex access diff` compares the same export with it now
    report = drift(imported_with(export, lines), applied, bucket="", prefix="nas/")
    # Then both folders are differences on the dangerous side: re-import and apply
    wider = {d.key for d in report.differences if d.wider}
    assert {"nas/役員/", "nas/社外秘/"} <= wider


@pytest.mark.parametrize("line", ["", "Everyone,all-staff\n"], ids=["no line", "Everyone,all-staff"])
def test_an_allow_before_a_deny_to_everyone_is_reported(line: str) -> None:
    # Given 見積 whose explicit read for sales stands before the deny to Everyone it inherits (Windows: sales reads)
    export = icacls(
        ("share", "D:PAI(D;OICI;0x1200a9;;;WD)(A;OICI;0x1200a9;;;WD)"),
        ("share\\見積", f"D:AI(A;OICI;0x1200a9;;;{SALES})(D;OICIID;0x1200a9;;;WD)(A;OICIID;0x1200a9;;;WD)"),
    )
    result = imported_with(export, line)
    # Then the map denies (the deny wins), and the report says it is narrower there
    assert staff_readers(result, "nas/見積/a.xlsx") == set()
    assert any(f.kind == "allow-before-deny" and f.key == "nas/見積/" for f in result.restrictive)
