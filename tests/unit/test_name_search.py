"""Name search's field and query (docindex.index.names) and the result orders (docindex.index.sorting)."""

from __future__ import annotations

import pytest

from docindex.index.mapping import ANALYSIS_TIERS, MAPPINGS, index_body
from docindex.index.names import NameQueryError, document_names, name_query, name_words
from docindex.index.sorting import sort_clause


@pytest.mark.parametrize("tier", ANALYSIS_TIERS)
def test_the_names_field_is_cut_into_grams_by_core_opensearch_alone_on_every_tier(tier: str) -> None:
    analysis = index_body(tier=tier)["settings"]["index"]["analysis"]
    # no char filter, no plugin: docindex normalizes the names itself, so every engine makes the same tokens
    assert analysis["analyzer"]["docindex_names"] == {"type": "custom", "tokenizer": "docindex_names"}
    assert analysis["tokenizer"]["docindex_names"] == {
        "type": "ngram",
        "min_gram": 1,
        "max_gram": 2,
        "token_chars": ["letter", "digit"],
    }
    assert MAPPINGS["properties"]["names"] == {"type": "text", "analyzer": "docindex_names", "index_options": "docs"}
    assert "names" in MAPPINGS["_source"]["excludes"]


def test_a_documents_names_are_its_path_folded_and_as_written() -> None:
    # width, case and spelling folded as content search folds them; the written form kept where it differs
    assert document_names("共有/申し込み書/ｻｰﾊﾞｰ 設定 ＡＢＣ.xlsx") == [
        "共有/申込書/サーバ 設定 abc.xlsx",
        "共有/申し込み書/サーバー 設定 abc.xlsx",
    ]
    assert document_names("nas/report 2024.PDF") == ["nas/report 2024.pdf"]
    assert document_names("") == []


def test_every_word_must_match_in_one_of_its_spellings() -> None:
    query = name_query("営業部/見積 ｻｰﾊﾞｰ")
    words = query["bool"]["must"]
    assert len(words) == 3  # a path separator cuts words as a space does
    forms = [[c["match"]["names"]["query"] for c in w["bool"]["should"]] for w in words]
    assert forms == [["営業部"], ["見積"], ["サーバ", "サーバー"]]
    for word in words:
        for clause in word["bool"]["should"]:
            assert clause["match"]["names"]["minimum_should_match"] == "100%"  # every gram: no wildcard
    # kana words also in the other script
    assert [c["match"]["names"]["query"] for c in name_query("めがね")["bool"]["must"][0]["bool"]["should"]] == [
        "めがね",
        "メガネ",
    ]


@pytest.mark.parametrize("query", ["", "   ", "% & #", "_", "/ \\"])
def test_a_name_query_without_letters_or_digits_is_refused(query: str) -> None:
    with pytest.raises(NameQueryError):
        name_query(query)


def test_a_name_query_keeps_at_most_sixteen_words() -> None:
    assert len(name_words(" ".join("a" * 16))) == 16
    with pytest.raises(NameQueryError, match="at most 16"):
        name_words(" ".join("a" * 17))


def test_results_order_as_explorer_orders_a_folder_and_end_with_the_key() -> None:
    assert sort_clause("relevance", scored=True) == [
        "_score",
        {"last_modified": {"order": "desc", "missing": "_last"}},
        {"key": {"order": "asc"}},
    ]
    # without a query nothing ranks: newest first
    assert sort_clause("relevance", scored=False)[0] == {"last_modified": {"order": "desc", "missing": "_last"}}
    assert sort_clause("name")[:2] == [
        {"name_order": {"order": "asc", "missing": "_last"}},
        {"filename.keyword": {"order": "asc", "missing": "_last"}},
    ]
    assert sort_clause("date")[0] == {"last_modified": {"order": "desc", "missing": "_last"}}
    assert sort_clause("size")[0] == {"size": {"order": "desc", "missing": "_last"}}
    assert sort_clause("size", "asc") == [
        {"size": {"order": "asc", "missing": "_last"}},
        "_score",
        {"key": {"order": "asc"}},
    ]
    with pytest.raises(ValueError, match="sort must be"):
        sort_clause("key")
    with pytest.raises(ValueError, match="order must be"):
        sort_clause("name", "up")


def test_names_order_by_the_value_of_their_numbers_with_case_and_width_folded() -> None:
    from docindex.index.names import name_order

    names = ["報告10.txt", "報告2.txt", "報告１.txt", "報告01a.txt", "Report_10.txt", "report_9.txt", "報告.txt"]
    assert sorted(names, key=lambda n: name_order(n) or "") == [
        "report_9.txt",
        "Report_10.txt",
        "報告.txt",
        "報告１.txt",
        "報告01a.txt",
        "報告2.txt",
        "報告10.txt",
    ]
    assert name_order("") is None


def test_a_name_search_marks_the_words_in_the_file_name_in_the_spelling_it_has() -> None:
    from docindex.index.names import name_marks

    def marked(filename: str, query: str) -> list[str]:
        return [s["text"] for s in name_marks(filename, query) if s["match"]]

    assert marked("2024_見積書_A社.txt", "見積") == ["見積"]
    # spelling variants, width, the other kana script and case, marked as the name writes them
    assert marked("申し込み書.docx", "申込書") == ["申し込み書"]
    assert marked("ｻｰﾊﾞｰ 申請 #3 & 50%.txt", "サーバ 50%") == ["ｻｰﾊﾞ", "50%"]
    assert marked("メガネ一覧.xlsx", "めがね") == ["メガネ"]
    assert marked("220208_株式会社ｻﾝﾌﾟﾙ様_提案書.pptx", "サンプル") == ["ｻﾝﾌﾟﾙ"]  # ﾌﾟ: one character, written two
    assert marked("ABC報告.txt", "abc 報告") == ["ABC報告"]
    # the segments are the name itself, and a word found in a folder's name only marks nothing
    assert "".join(s["text"] for s in name_marks("2024_見積書_A社.txt", "見積")) == "2024_見積書_A社.txt"
    assert name_marks("定例会議_0415.txt", "議事録") == []
    assert name_marks("x.txt", "%&") == []
