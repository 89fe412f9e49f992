"""File server paths: key prefixes mapped back to the shares they were copied from (docindex.access.shares)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docindex.access.ntfs.importer import KeyRules, normalize_prefix
from docindex.access.shares import SharesError, parse_shares

SHARES = "nas/=\\\\fs01\\Shares;synology/営業/=\\\\synology\\営業"


def test_the_examples_of_the_issue_map_keys_to_windows_paths_folders_and_smb_urls() -> None:
    shares = parse_shares(SHARES)
    found = shares.locate("docs", "nas/営業部/見積/2024_見積書.xlsx")
    assert found is not None
    assert found.path == "\\\\fs01\\Shares\\営業部\\見積\\2024_見積書.xlsx"
    assert found.folder == "\\\\fs01\\Shares\\営業部\\見積"
    assert (
        found.smb
        == "smb://fs01/Shares/%E5%96%B6%E6%A5%AD%E9%83%A8/%E8%A6%8B%E7%A9%8D/2024_%E8%A6%8B%E7%A9%8D%E6%9B%B8.xlsx"
    )
    assert found.smb_folder == "smb://fs01/Shares/%E5%96%B6%E6%A5%AD%E9%83%A8/%E8%A6%8B%E7%A9%8D/"
    synology = shares.locate("docs", "synology/営業/2024/報告.pdf")
    assert synology is not None
    assert synology.path == "\\\\synology\\営業\\2024\\報告.pdf"
    assert synology.smb == "smb://synology/%E5%96%B6%E6%A5%AD/2024/%E5%A0%B1%E5%91%8A.pdf"
    # a file at the share's root: its folder is the share
    root = shares.locate("docs", "nas/一覧.xlsx")
    assert root is not None
    assert (root.folder, root.smb_folder) == ("\\\\fs01\\Shares", "smb://fs01/Shares/")


@pytest.mark.parametrize(
    ("name", "smb_name"),
    [
        ("見積 2024 (改).xlsx", "%E8%A6%8B%E7%A9%8D%202024%20%28%E6%94%B9%29.xlsx"),
        ("#3 & 50% off.docx", "%233%20%26%2050%25%20off.docx"),
        (".hidden", ".hidden"),
        ("trailing dot.", "trailing%20dot."),
        (" leading and trailing spaces ", "%20leading%20and%20trailing%20spaces%20"),
        ("a+b=c;d,e'f~g!", "a%2Bb%3Dc%3Bd%2Ce%27f~g%21"),
        (
            "ｶﾀｶﾅ　全角スペース",
            "%EF%BD%B6%EF%BE%80%EF%BD%B6%EF%BE%85%E3%80%80%E5%85%A8%E8%A7%92%E3%82%B9%E3%83%9A%E3%83%BC%E3%82%B9",
        ),
    ],
)
def test_names_are_copied_exactly_and_percent_encoded_for_smb(name: str, smb_name: str) -> None:
    from urllib.parse import unquote

    found = parse_shares(SHARES).locate("docs", f"nas/.設定./{name}")
    assert found is not None
    # the Windows path keeps every character as the key has it: nothing trimmed or encoded
    assert found.path == f"\\\\fs01\\Shares\\.設定.\\{name}"
    assert found.folder == "\\\\fs01\\Shares\\.設定."
    assert found.smb == f"smb://fs01/Shares/.%E8%A8%AD%E5%AE%9A./{smb_name}"
    # and the URL decodes back to exactly the name (RFC 3986: UTF-8, only unreserved characters left as they are)
    assert unquote(found.smb.rsplit("/", 1)[1]) == name


@pytest.mark.parametrize(
    "key",
    [
        "other/営業部/a.xlsx",  # under no mapped prefix
        "nasa/a.xlsx",  # a prefix is a folder, not a string start
        "nas/",  # the folder marker itself
        "nas/a//b.txt",  # an empty name
        "nas/a/../b.txt",
        "nas/a\\b.txt",  # a backslash cannot be in a Windows name
        "nas/a:b.txt",
        "nas/what?.txt",
        "nas/tab\there.txt",
    ],
)
def test_a_key_no_share_can_hold_has_no_path_rather_than_a_wrong_one(key: str) -> None:
    assert parse_shares(SHARES).locate("docs", key) is None


def test_the_longest_prefix_wins_and_a_bucket_bound_mapping_only_applies_to_its_bucket() -> None:
    shares = parse_shares("nas/=//fs01/Shares\ns3://archive/nas/=//fs02/Archive\nnas/経理/=S:\\")
    assert shares.locate("docs", "nas/経理/2024/a.xlsx").path == "S:\\2024\\a.xlsx"  # type: ignore[union-attr]
    assert shares.locate("docs", "nas/経理/a.xlsx").folder == "S:\\"  # type: ignore[union-attr]
    # a mapped drive has no smb:// form (the letter says nothing of the server)
    assert shares.locate("docs", "nas/経理/a.xlsx").smb is None  # type: ignore[union-attr]
    assert shares.locate("docs", "nas/a.xlsx").path == "\\\\fs01\\Shares\\a.xlsx"  # type: ignore[union-attr]
    assert shares.locate("archive", "nas/a.xlsx").path == "\\\\fs02\\Archive\\a.xlsx"  # type: ignore[union-attr]


def test_the_json_form_takes_a_separate_smb_address_and_shares_whose_path_holds_a_semicolon() -> None:
    shares = parse_shares(
        '[{"prefix": "nas/", "share": "\\\\\\\\fs01\\\\Shares;old", "smb": "smb://fs01.corp.example/Shares;old"},'
        ' {"prefix": "x", "bucket": "b", "share": "Microsoft.PowerShell.Core\\\\FileSystem::\\\\\\\\fs02\\\\X"}]'
    )
    found = shares.locate("docs", "nas/a b.txt")
    assert found is not None
    assert found.path == "\\\\fs01\\Shares;old\\a b.txt"
    assert found.smb == "smb://fs01.corp.example/Shares;old/a%20b.txt"
    assert shares.locate("b", "x/y.txt").path == "\\\\fs02\\X\\y.txt"  # type: ignore[union-attr]
    assert shares.locate("c", "x/y.txt") is None


def test_the_prefix_is_read_as_docindex_access_import_reads_its_prefix() -> None:
    # One description of the share serves both: the import's key for a path below the share is the
    # key this mapping turns back into that path, for every way of writing the prefix
    for written in ("nas", "nas/", "\\nas\\", "/nas"):
        shares = parse_shares(f"{written}=\\\\fs01\\Shares")
        assert [s.prefix for s in shares.shares] == [normalize_prefix(written)]
        rules = KeyRules(strip=("D:", "Shares"), prefix=normalize_prefix(written))
        key = rules.key_of(("D:", "Shares", "営業部", "見積 #3.xlsx"), rules.strip or (), "test")
        assert shares.locate(None, key).path == "\\\\fs01\\Shares\\営業部\\見積 #3.xlsx"  # type: ignore[union-attr]
    # and the share is read as the importer reads paths: either separator, \\?\UNC\
    for share in ("//fs01/Shares", "\\\\?\\UNC\\fs01\\Shares", "\\\\fs01\\Shares\\"):
        assert parse_shares(f"nas/={share}").locate(None, "nas/a").path == "\\\\fs01\\Shares\\a"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nas/", "is not PREFIX="),
        ("nas/=fs01/Shares", "is not PREFIX="),
        ("nas/=\\\\fs01", "names a server but no share"),
        ("nas/=//fs01/Sha<res", "is not a Windows name"),
        ("nas/=//a/b;nas=//c/d", "mapped twice"),
        ("[{}]", "an object with prefix and share"),
        ('[{"prefix": "a", "share": "//a/b", "path": "x"}]', "unknown field"),
        ('[{"prefix": "a", "share": "//a/b", "smb": "http://x"}]', "smb must be"),
        ("[1,", "not JSON"),
    ],
)
def test_a_mapping_that_cannot_be_read_says_which_entry_and_why(text: str, message: str) -> None:
    with pytest.raises(SharesError, match=message):
        parse_shares(text)


def test_the_search_api_refuses_to_start_with_an_unreadable_mapping() -> None:
    from docindex.core.exceptions import SettingsError
    from docindex.search_api.settings import SearchApiSettings

    env = {"OPENSEARCH_ENDPOINT": "http://localhost:9200", "FILE_SERVER_SHARES": "nas/=fs01"}
    with pytest.raises(SettingsError, match="FILE_SERVER_SHARES: entry 1"):
        SearchApiSettings.from_env(env)
    assert not SearchApiSettings.from_env({**env, "FILE_SERVER_SHARES": ""}).shares


def test_the_local_env_file_keeps_a_unc_path_exactly(tmp_path: Path) -> None:
    # `docindex local up` writes FILE_SERVER_SHARES to the env file the search page's gateway reads:
    # dotenv reads \\ as \ inside single quotes, so a UNC path lost a backslash there
    from docindex.ops.envfile import read_env_file, write_env_file

    values = {"FILE_SERVER_SHARES": "=\\\\fileserver\\文書;x/=//nas/a b", "OTHER": "it's \\ # $x", "PLAIN": "v"}
    write_env_file(tmp_path / "local.env", values)
    assert read_env_file(tmp_path / "local.env") == values
    assert parse_shares(read_env_file(tmp_path / "local.env")["FILE_SERVER_SHARES"]).locate("b", "a").path == (  # type: ignore[union-attr]
        "\\\\fileserver\\文書\\a"
    )
