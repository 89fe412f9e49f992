"""The file server's ACLs, imported, decide what two employees find, count, download and preview.

A share with every kind of ACE (tests/unit/test_acl_import.py's TREE) is exported as
``icacls /save`` writes it, imported with a mapping of its group SIDs to the token's groups,
and the map is stored where the indexer reads it; files in every folder are indexed by the real
indexer. Each employee's hits must be exactly the files Windows' access check lets their SIDs
read, less the places the import report names as more restrictive — and never more.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devkit.acl_tree import can_read, new_file_dacl, stored_dacls, write_icacls
from devkit.samples.pdf import make_pdf
from docindex.access.ntfs.exports import read_export
from docindex.access.ntfs.importer import KeyRules, import_acls
from docindex.access.ntfs.principals import read_mapping
from tests.conftest import REGION, Stack
from tests.support.search_api import SearchWorld, build_world
from tests.unit.test_acl_import import HR, MAPPING, SALES, TREE

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


@pytest.fixture
def world(stack: Stack, tmp_path: Path) -> tuple[SearchWorld, Any]:
    import boto3

    cognito = boto3.client("cognito-idp", region_name=REGION, endpoint_url=stack.aws.endpoint)
    world = build_world(stack, tmp_path, cognito)
    world.add_user("sales", ["営業部"])
    world.add_user("hr", ["人事部"])
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
