"""The file server's ACLs, imported, decide what two employees find, count, download and preview.

A share with every kind of ACE (tests/unit/test_acl_import.py's TREE) is exported as
``icacls /save`` writes it, imported with a mapping of its group SIDs to the token's groups,
and the map is stored where the indexer reads it; files in every folder are indexed by the real
indexer. Each employee's hits must be exactly the files Windows' access check lets their SIDs
read, less the places the import report names as more restrictive — and never more.

And one department's export merged into the company's map as an operator does it (``docindex access
apply``, ``access import``, ``access apply --merge``, run in-process on the stack's env file, the map
in S3): the documents under the tree the import covers carry its readers, every other document keeps
the company map's, and the two employees' searches say the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from devkit.acl_tree import can_read, new_file_dacl, stored_dacls, write_icacls
from devkit.samples.pdf import make_pdf
from docindex.access.ntfs.exports import read_export
from docindex.access.ntfs.importer import KeyRules, import_acls
from docindex.access.ntfs.principals import read_mapping
from tests.conftest import REGION, Stack
from tests.support.search_api import FILES, SearchWorld, build_world
from tests.unit.test_acl_import import HR, MAPPING, SALES, TREE
from tests.unit.test_acl_leaks import icacls

TOKENS = {"sales": {"S-1-1-0", "S-1-5-11", SALES}, "hr": {"S-1-1-0", "S-1-5-11", HR}}
PDFS = {"nas/営業部/見積/月次売上.pdf", "nas/人事部/評価/評価売上.pdf"}


def _keys() -> dict[str, Any]:
    """Every file of the tree, and a new file in every folder: key -> its DACL on the file server."""
    dacls = stored_dacls(TREE)
    keys: dict[str, Any] = {}
    for node in TREE:
        key = "/".join(("nas", *node.path))
        if node.folder:
            keys[f"{key}/売上メモ.txt"] = new_file_dacl(dacls, node.path, "S-1-5-21-1-2-3-1000")
        else:
            keys[key] = dacls[node.path]
    for pdf in PDFS:
        keys[pdf] = new_file_dacl(dacls, tuple(pdf.split("/")[1:-1]), "S-1-5-21-1-2-3-1000")
    return keys


def _employees(stack: Stack, tmp_path: Path) -> SearchWorld:
    """The search world with two employees signed in: sales (営業部) and hr (人事部)."""
    import boto3

    world = build_world(
        stack, tmp_path, boto3.client("cognito-idp", region_name=REGION, endpoint_url=stack.aws.endpoint)
    )
    world.add_user("sales", ["営業部"])
    world.add_user("hr", ["人事部"])
    return world


@pytest.fixture
def world(stack: Stack, tmp_path: Path) -> tuple[SearchWorld, Any]:
    world = _employees(stack, tmp_path)
    # The administrator's round trip: export (icacls /save), import, store the map where the writers read it
    entries, _ = read_export(write_icacls(TREE), name="acl.txt")
    result = import_acls(entries, read_mapping(MAPPING, name="groups.csv"), KeyRules(strip=("share",), prefix="nas/"))
    world.map_path.write_text(json.dumps(result.access_map(), ensure_ascii=False), encoding="utf-8")
    files: dict[str, Any] = {key: f"売上 {key}" for key in _keys() if key not in PDFS}
    world.index_files(files)
    for pdf in PDFS:  # a paged file in a folder each, for the previews
        world.stack.aws.s3.put_object(Bucket=stack.bucket, Key=pdf, Body=make_pdf([f"売上の資料 {pdf}"]))
    from devkit.messages import sqs_event
    from tests.integration.conftest import build_indexer, invoke

    bodies = [{"docindex": "change", "bucket": stack.bucket, "key": k, "action": "created"} for k in PDFS]
    indexer = build_indexer(stack, ACCESS_MAP_URI=str(world.map_path), ACCESS_MAP_TTL_SECONDS="0")
    assert invoke(indexer, sqs_event(*bodies)) == set()
    stack.opensearch.indices.refresh(index=stack.index)
    return world, result


def _visible(world: SearchWorld, user: str) -> tuple[set[str], dict[str, Any]]:
    result = world.search(user, size=50)
    return {hit["path"] for hit in result["hits"]}, result


def test_each_employee_finds_counts_downloads_and_previews_exactly_what_the_acls_allow(
    world: tuple[SearchWorld, Any],
) -> None:
    search_world, imported = world
    keys = _keys()
    # The places the report says the map is more restrictive than the file server
    reported = {f.key for f in imported.restrictive if f.key}
    for user, sids in TOKENS.items():
        readable = {k for k, dacl in keys.items() if can_read(dacl, sids)}
        visible, result = _visible(search_world, user)
        # never more than the file server allows
        assert visible <= readable, (user, visible - readable)
        # and all of it, except where the report says the map is more restrictive
        unexplained = {k for k in readable - visible if not any(k.startswith(p) for p in reported)}
        assert not unexplained, (user, unexplained)
        assert result["total"] == len(visible)
        assert sum(f["count"] for f in result["facets"]["extension"]) == len(visible)
    sales, _ = _visible(search_world, "sales")
    hr, _ = _visible(search_world, "hr")
    assert "nas/営業部/見積/2024_見積書.xlsx" in sales
    assert "nas/営業部/見積/2024_見積書.xlsx" not in hr
    assert "nas/営業部/提出用/売上メモ.txt" in hr  # one level of HR's no-propagate ACE
    assert "nas/営業部/提出用/下書き/売上メモ.txt" not in hr
    assert "nas/人事部/評価/売上メモ.txt" in hr
    # the file-level ACE that lets sales read 人事部/規程.docx: a rule for that key only, nothing else of 人事部
    assert {k for k in sales if k.startswith("nas/人事部/")} == {"nas/人事部/規程.docx"}
    # Downloads and previews (one world for both: building it is the cost of this module)
    from tests.integration.test_pages import _preview

    sales_pdf, hr_pdf = (search_world.id_of(k) for k in sorted(PDFS, reverse=True))  # 営業部 sorts after 人事部
    for user, mine, other in (("sales", sales_pdf, hr_pdf), ("hr", hr_pdf, sales_pdf)):
        token = search_world.tokens[user]["access_token"]
        assert search_world.call(f"/documents/{mine}/download", token)[0] == 200
        assert search_world.call(f"/documents/{other}/download", token) == (404, {"message": "not found"})
        assert _preview(search_world, user, mine, 1)[0] == 200
        assert _preview(search_world, user, other, 1)[0] == 404


# ---- `access apply --merge`: one department's imported map into the company's applied map


def _map_uri(stack: Stack) -> str:
    """Where a deployed stack keeps the map (the template's AccessMapS3Uri): apply reads and writes it there."""
    return f"s3://{stack.bucket}/_docindex/access-map.json"


@pytest.fixture
def operator(stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    """``run(*args)``: ``docindex ARGS --json`` as an operator runs it on the stack's env file (in-process)."""
    from docindex.cli import main
    from docindex.ops.envfile import write_env_file

    env_file = tmp_path / "docindex.env"
    write_env_file(env_file, stack.settings_env(ACCESS_MAP_URI=_map_uri(stack)))

    def run(*args: str, ok: tuple[int, ...] = (0,)) -> Any:
        capsys.readouterr()
        target = ["--env-file", str(env_file)] if args[:2] != ("access", "import") else []  # import reads files only
        code = main([*args, *target, "--json"])
        out, err = capsys.readouterr()
        assert code in ok, f"docindex {' '.join(args)} exited {code}: {err[-800:]}"
        return json.loads(out)

    return run


COMPANY_MAP = {
    "rules": [
        {"prefix": "営業部/", "inherit": False, "allow": {"groups": ["営業部"]}},
        # out of date for 人事部: the department's export replaces both rules under 人事部/
        {"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部", "営業部"]}},
        {"prefix": "人事部/給与/", "allow": {"everyone": True}},
        {"prefix": "人事部_旧/", "inherit": False, "allow": {"groups": ["人事部"]}},  # starts like 人事部/, outside it
        {"prefix": "共有/", "allow": {"everyone": True}},
    ]
}
MERGE_FILES = {
    **FILES,  # 営業部/, 人事部/評価/, 人事部/給与/, 共有/
    "人事部_旧/引継ぎメモ.txt": "旧人事部 引継ぎ 売上 資料",
}
ADMINS = "group:docindex-admins"


def _stamps(stack: Stack, keys: Iterable[str] = MERGE_FILES) -> dict[str, tuple[list[str], list[str]]]:
    """Each key's (allow_principals, deny_principals) in the index, as the search API filters on them."""
    out = {}
    for key in keys:
        doc = stack.doc(key)
        assert doc is not None, key
        source = doc["_source"]
        out[key] = (sorted(source.get("allow_principals") or ()), sorted(source.get("deny_principals") or ()))
    return out


def test_apply_merge_replaces_the_company_maps_rules_under_the_departments_tree_only(
    stack: Stack, tmp_path: Path, operator: Any
) -> None:
    # Given an index of files of two departments, a shared folder and a folder named like 人事部, and two employees
    world = _employees(stack, tmp_path)
    world.index_files(MERGE_FILES)
    # and the company's map applied the way an operator applies it
    company = tmp_path / "company-map.json"
    company.write_text(json.dumps(COMPANY_MAP, ensure_ascii=False), encoding="utf-8")
    operator("access", "apply", str(company), "--settle", "0")
    before = _stamps(stack)
    assert before["人事部/評価/2024_人事評価_山田.txt"] == (sorted([ADMINS, "group:人事部", "group:営業部"]), [])
    assert before["人事部/給与/給与テーブル.csv"][0] == sorted([ADMINS, "everyone", "group:人事部", "group:営業部"])
    assert {"人事部/評価/2024_人事評価_山田.txt", "人事部/給与/給与テーブル.csv"} <= _visible(world, "sales")[0]

    # When 人事部 exports its folder (icacls D:\Shares\人事部 /save acl.txt /t: 評価 also denies sales),
    # the operator imports it and applies it with --merge
    export = tmp_path / "acl.txt"
    export.write_bytes(
        icacls(
            ("人事部", f"D:PAI(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;{HR})"),
            ("人事部\\評価", f"D:AI(D;OICI;0x1200a9;;;{SALES})(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;{HR})"),
            ("人事部\\給与", f"D:AI(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;{HR})"),
        )
    )
    mapping = tmp_path / "groups.csv"
    mapping.write_bytes(MAPPING)
    department = tmp_path / "人事部-map.json"
    report = operator(
        "access", "import", str(export), "--mapping", str(mapping), "-o", str(department), "--expect-entries", "3"
    )
    assert report["covers"] == "人事部/"
    applied = operator("access", "apply", str(department), "--merge", "--settle", "0")

    # Then documents under 人事部/ carry the import's readers (the company's two rules there are gone) ...
    after = _stamps(stack)
    assert after["人事部/評価/2024_人事評価_山田.txt"] == (sorted([ADMINS, "group:人事部"]), ["group:営業部"])
    assert after["人事部/給与/給与テーブル.csv"] == (sorted([ADMINS, "group:人事部"]), [])
    # ... and every other document keeps the company map's readers (its rules outside 人事部/ are kept)
    outside = {k for k in MERGE_FILES if not k.startswith("人事部/")}
    assert {k: after[k] for k in outside} == {k: before[k] for k in outside}
    assert after["人事部_旧/引継ぎメモ.txt"] == (sorted([ADMINS, "group:人事部"]), [])
    assert after["営業部/見積/2024_見積書_A社.txt"] == (sorted([ADMINS, "group:営業部"]), [])
    assert applied["passes"][-1]["failed"] == 0
    # and the map stored where the writers read it is the merge: a file indexed later is stamped the same
    world.index_files({"人事部/評価/2025_人事評価_佐藤.txt": "人事評価 佐藤 売上"}, map_uri=_map_uri(stack))
    assert _stamps(stack, ["人事部/評価/2025_人事評価_佐藤.txt"]) == {
        "人事部/評価/2025_人事評価_佐藤.txt": after["人事部/評価/2024_人事評価_山田.txt"]
    }
    # And what the two employees find through the search API says the same
    assert _visible(world, "sales")[0] == {
        "営業部/見積/2024_見積書_A社.txt",
        "営業部/提案/提案書_B社.md",
        "共有/規程/就業規則.txt",
    }
    assert _visible(world, "hr")[0] == {
        "人事部/評価/2024_人事評価_山田.txt",
        "人事部/評価/2025_人事評価_佐藤.txt",
        "人事部/給与/給与テーブル.csv",
        "人事部_旧/引継ぎメモ.txt",
        "共有/規程/就業規則.txt",
    }
