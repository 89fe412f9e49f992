"""Finding a file by its name and its folders' names, ordering results as Explorer does, and where it
lives on the file server: through the search API with real tokens, files indexed by the real indexer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REGION, Stack
from tests.support.search_api import SearchWorld, build_world

FILES = {
    # the name holds 見積, the content does not
    "営業部/見積/2024_見積書_A社.txt": "A社向け 価格表 四半期の数量",
    # the content holds 見積, the name does not
    "営業部/提案/提案書_B社.md": "見積 の 内訳 は 別紙 を ご覧ください 見積",
    # found by its folder's name only
    "営業部/議事録/定例会議_0415.txt": "議題 売上 進捗 確認",
    # 見積 in the name, but in a folder the sales user may not read
    "人事部/見積/給与見積_2025.txt": "昇給 原資",
    # spelling variants in folder and file names, and the characters a path must keep as they are
    "共有/申し込み書/ｻｰﾊﾞｰ 申請 #3 & 50%.txt": "利用 申請 の 様式",
    "共有/.設定./ 先頭と末尾 .txt": "空白 の ある 名前",
    # numbered names, ordered as Explorer orders them (numbers by value, case folded)
    "総務部/回覧/回覧_第10回.txt": "回覧",
    "総務部/回覧/回覧_第2回.txt": "回覧",
    "総務部/回覧/回覧_第1回.txt": "回覧",
    "総務部/回覧/Report_10.txt": "回覧",
    "総務部/回覧/report_9.txt": "回覧",
}
SHARES = "営業部/=\\\\fs01\\営業;共有/=//nas01/共有"


@pytest.fixture
def world(stack: Stack, tmp_path: Path) -> SearchWorld:
    import boto3

    cognito = boto3.client("cognito-idp", region_name=REGION, endpoint_url=stack.aws.endpoint)
    world = build_world(stack, tmp_path, cognito, FILE_SERVER_SHARES=SHARES)
    world.add_user("sales", ["営業部"])
    world.add_user("admin", ["docindex-admins"])
    world.index_files(FILES)
    return world


def paths(result: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in result["hits"]]


def test_a_name_search_finds_the_file_by_part_of_its_name_not_by_its_content(world: SearchWorld) -> None:
    # When the sales user searches 見積 by name, and by content
    by_name = world.search("sales", q="見積", scope="name")
    by_content = world.search("sales", q="見積")
    # Then the name search finds the file whose name holds it, in a folder where its content does not,
    # and neither the file whose content alone holds it nor the other department's file named so
    assert paths(by_name) == ["営業部/見積/2024_見積書_A社.txt"]
    assert by_name["total"] == 1
    # ... with the word marked in the name, as the page shows it
    assert by_name["hits"][0]["filename_highlight"] == [
        {"text": "2024_", "match": False},
        {"text": "見積", "match": True},
        {"text": "書_A社.txt", "match": False},
    ]
    # while the content search finds the file whose text holds it (and names as before)
    assert "営業部/提案/提案書_B社.md" in paths(by_content)
    # a fragment from the middle of the name, and a folder's name, are found too
    assert paths(world.search("sales", q="積書_A", scope="name")) == ["営業部/見積/2024_見積書_A社.txt"]
    assert paths(world.search("sales", q="議事録", scope="name")) == ["営業部/議事録/定例会議_0415.txt"]
    # the administrator finds both files named 見積, whatever their folder
    assert set(paths(world.search("admin", q="見積", scope="name"))) == {
        "営業部/見積/2024_見積書_A社.txt",
        "人事部/見積/給与見積_2025.txt",
    }
    folders = world.search("admin", q="見積", scope="name")["facets"]["folder"]
    assert {f["value"]: f["count"] for f in folders} == {"人事部/": 1, "営業部/": 1}


def test_every_word_must_be_in_the_names_each_in_any_spelling(world: SearchWorld) -> None:
    assert paths(world.search("sales", q="営業部 0415", scope="name")) == ["営業部/議事録/定例会議_0415.txt"]
    assert paths(world.search("sales", q="営業部/議事録", scope="name")) == ["営業部/議事録/定例会議_0415.txt"]
    assert world.search("sales", q="見積 0415", scope="name")["total"] == 0
    # width, the long vowel and okurigana folded as content search folds them
    expected = ["共有/申し込み書/ｻｰﾊﾞｰ 申請 #3 & 50%.txt"]
    for query in ("サーバー", "サーバ", "ｻｰﾊﾞ", "申込書", "申し込み", "申請 #3", "50%"):
        assert paths(world.search("sales", q=query, scope="name")) == expected, query
    # a query with nothing to look for is refused, not answered with everything
    status, body = world.call("/search", world.tokens["sales"]["access_token"], q="%&", scope="name")
    assert status == 400, body


def test_results_sort_by_name_date_and_size(world: SearchWorld) -> None:
    from docindex.index.documents import with_variants

    # Given different modified dates (the sync's upload times are one second apart at most here),
    # written as every writer writes: the whole document with its derived fields (a partial _update
    # would drop `names` and `variants`, which _source does not keep)
    dates = {
        "営業部/見積/2024_見積書_A社.txt": "2024-05-01T00:00:00Z",
        "営業部/提案/提案書_B社.md": "2023-01-01T00:00:00Z",
        "営業部/議事録/定例会議_0415.txt": "2025-04-15T00:00:00Z",
    }
    client, index = world.stack.opensearch, world.stack.index
    for key, when in dates.items():
        source = client.get(index=index, id=world.id_of(key))["_source"]
        client.index(index=index, id=world.id_of(key), body=with_variants({**source, "last_modified": when}))
    client.indices.refresh(index=index)
    everything = ["営業部/見積/2024_見積書_A社.txt", "営業部/提案/提案書_B社.md", "営業部/議事録/定例会議_0415.txt"]

    def order(**params: Any) -> list[str]:
        return [p for p in paths(world.search("sales", prefix="営業部/", **params)) if p in everything]

    # by name: digits before kana and kanji, kanji by code point (2 < 定 < 提), and reversed
    assert order(sort="name") == [
        "営業部/見積/2024_見積書_A社.txt",
        "営業部/議事録/定例会議_0415.txt",
        "営業部/提案/提案書_B社.md",
    ]
    assert order(sort="name", order="desc") == order(sort="name")[::-1]
    # numbers by their value and case folded, as Explorer orders a folder (code points put 第10回 before 第1回
    # and Report_10 before report_9)
    numbered = [p for p in paths(world.search("admin", prefix="総務部/", sort="name")) if p.startswith("総務部/")]
    assert numbered == [
        "総務部/回覧/report_9.txt",
        "総務部/回覧/Report_10.txt",
        "総務部/回覧/回覧_第1回.txt",
        "総務部/回覧/回覧_第2回.txt",
        "総務部/回覧/回覧_第10回.txt",
    ]
    assert [p for p in paths(world.search("admin", prefix="総務部/", sort="name", order="desc"))] == numbered[::-1]
    # by date, newest first, and oldest first
    assert order(sort="date") == [
        "営業部/議事録/定例会議_0415.txt",
        "営業部/見積/2024_見積書_A社.txt",
        "営業部/提案/提案書_B社.md",
    ]
    assert order(sort="date", order="asc") == order(sort="date")[::-1]
    # by size, largest first
    sizes = {key: len(FILES[key].encode()) for key in everything}
    assert order(sort="size") == sorted(everything, key=lambda k: -sizes[k])
    # a name search sorts the same way
    assert paths(world.search("admin", q="見積", scope="name", sort="name")) == [
        "営業部/見積/2024_見積書_A社.txt",
        "人事部/見積/給与見積_2025.txt",
    ]
    # the date range keeps the files modified within it
    ranged = world.search("sales", prefix="営業部/", modified_from="2024-01-01", modified_to="2024-12-31")
    assert paths(ranged) == ["営業部/見積/2024_見積書_A社.txt"]


def test_each_hit_gives_its_path_on_the_file_server_exactly(world: SearchWorld) -> None:
    hits = {hit["path"]: hit for hit in world.search("admin", q="見積", scope="name")["hits"]}
    assert hits["営業部/見積/2024_見積書_A社.txt"]["location"] == {
        "path": "\\\\fs01\\営業\\見積\\2024_見積書_A社.txt",
        "folder": "\\\\fs01\\営業\\見積",
        "smb": "smb://fs01/%E5%96%B6%E6%A5%AD/%E8%A6%8B%E7%A9%8D/2024_%E8%A6%8B%E7%A9%8D%E6%9B%B8_A%E7%A4%BE.txt",
        "smb_folder": "smb://fs01/%E5%96%B6%E6%A5%AD/%E8%A6%8B%E7%A9%8D/",
    }
    # a key under no mapped share has no path rather than a wrong one
    assert hits["人事部/見積/給与見積_2025.txt"]["location"] is None
    shared = world.search("sales", prefix="共有/")["hits"]
    locations = {hit["path"]: hit["location"] for hit in shared}
    assert (
        locations["共有/申し込み書/ｻｰﾊﾞｰ 申請 #3 & 50%.txt"]["path"]
        == "\\\\nas01\\共有\\申し込み書\\ｻｰﾊﾞｰ 申請 #3 & 50%.txt"
    )
    assert locations["共有/申し込み書/ｻｰﾊﾞｰ 申請 #3 & 50%.txt"]["smb"].endswith(
        "/%EF%BD%BB%EF%BD%B0%EF%BE%8A%EF%BE%9E%EF%BD%B0%20%E7%94%B3%E8%AB%8B%20%233%20%26%2050%25.txt"
    )
    assert locations["共有/.設定./ 先頭と末尾 .txt"]["path"] == "\\\\nas01\\共有\\.設定.\\ 先頭と末尾 .txt"
    assert locations["共有/.設定./ 先頭と末尾 .txt"]["folder"] == "\\\\nas01\\共有\\.設定."
    # the document's metadata carries it too
    doc_id = world.id_of("営業部/見積/2024_見積書_A社.txt")
    status, meta = world.call(f"/documents/{doc_id}", world.tokens["sales"]["access_token"])
    assert status == 200
    assert meta["location"]["path"] == "\\\\fs01\\営業\\見積\\2024_見積書_A社.txt"


def test_the_operator_cli_searches_names_sorts_and_prints_the_path(
    world: SearchWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from docindex.cli import main

    env = {**world.stack.settings_env(), "FILE_SERVER_SHARES": SHARES, "EMBEDDINGS": "off"}
    env_file = tmp_path / "local.env"
    env_file.write_text("".join(f"{name}={value}\n" for name, value in env.items()), encoding="utf-8")
    capsys.readouterr()
    # When the operator searches 見積 by name (the CLI reads the whole index: both departments)
    assert main(["search", "--names", "見積", "--sort", "name", "--env-file", str(env_file), "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [hit["key"] for hit in hits] == ["営業部/見積/2024_見積書_A社.txt", "人事部/見積/給与見積_2025.txt"]
    assert hits[0]["location"]["path"] == "\\\\fs01\\営業\\見積\\2024_見積書_A社.txt"
    assert hits[1]["location"] is None
    # the text output prints the path on the file server under the key, exactly
    assert main(["search", "--names", "ｻｰﾊﾞｰ 申請", "--env-file", str(env_file)]) == 0
    out = capsys.readouterr().out
    assert "        \\\\nas01\\共有\\申し込み書\\ｻｰﾊﾞｰ 申請 #3 & 50%.txt\n" in out
    # a content search does not find a file by its folder's name; a name search does
    assert main(["search", "議事録", "--keyword-only", "--env-file", str(env_file)]) == 1
    assert main(["search", "議事録", "--names", "--env-file", str(env_file)]) == 0
    # a name search without letters or digits is refused

    assert main(["search", "--names", "%", "--env-file", str(env_file)]) == 2
    # sorting without a query lists every file, largest first
    capsys.readouterr()
    assert main(["search", "--sort", "size", "--prefix", "営業部/", "--env-file", str(env_file), "--json"]) == 0
    listed = [hit["key"] for hit in json.loads(capsys.readouterr().out)["hits"]]
    assert listed == sorted(listed, key=lambda key: -len(FILES[key].encode()))


def test_an_index_from_before_name_search_is_reported_and_reindex_brings_the_names(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import copy

    from docindex.cli import main
    from docindex.index.mapping import MAPPINGS, index_body
    from docindex.index.search import search
    from docindex.ops.diagnose.checks.index import names_warnings

    # Given an index built before name search (no names field, no analyzer for it) behind its alias
    client = stack.opensearch
    body = index_body()
    del body["settings"]["index"]["analysis"]["analyzer"]["docindex_names"]
    del body["settings"]["index"]["analysis"]["tokenizer"]["docindex_names"]
    body["mappings"] = copy.deepcopy(MAPPINGS) | {"_source": {"excludes": ["variants"]}}
    del body["mappings"]["properties"]["names"]
    del body["mappings"]["properties"]["name_order"]
    body["aliases"] = {"legacy": {"is_write_index": True}}
    client.indices.create(index="legacy-v1", body=body)
    source = {
        "bucket": "b",
        "key": "営業部/見積/2024_御見積書.xlsx",
        "filename": "2024_御見積書.xlsx",
        "content": "価格",
    }
    client.index(index="legacy", id="x", body=source, version=3, version_type="external", refresh=True)
    # Then the operator is told, and a name search finds nothing there yet (content search still works)
    (mapping,) = client.indices.get_mapping(index="legacy").values()
    assert names_warnings(mapping["mappings"]) == [
        "built before name search (no `names` field: a name search finds nothing): run `docindex reindex`"
    ]
    assert list(search(client, "legacy", "見積", names=True)) == []
    # When `docindex reindex` rebuilds it, deriving the field as it copies each document
    for name, value in stack.settings_env().items():
        monkeypatch.setenv(name, value)
    target = ["--opensearch-endpoint", stack.engine_url, "--index", "legacy"]
    assert main(["reindex", *target, "--ledger-table", stack.env["LEDGER_TABLE"], "--settle", "0"]) == 0
    capsys.readouterr()
    # Then the name search finds the file, and nothing is left to report
    assert [h["key"] for h in search(client, "legacy", "見積", names=True)] == ["営業部/見積/2024_御見積書.xlsx"]
    (mapping,) = client.indices.get_mapping(index="legacy").values()
    assert names_warnings(mapping["mappings"]) == []
    assert client.get(index="legacy", id="x")["_version"] == 3
    assert "names" not in client.get(index="legacy", id="x")["_source"]
    # ... and the key that sorts it by name as Explorer does is derived too
    has_order = {"query": {"exists": {"field": "name_order"}}}
    assert client.search(index="legacy", body=has_order)["hits"]["total"]["value"] == 1
