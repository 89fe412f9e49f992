"""The generated analysis settings: normalization table, tiers, vocabulary, and the vocabulary checks."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from docindex.index import vocabulary
from docindex.index.mapping import ANALYSIS_TIERS, index_body, width_mappings
from docindex.text.width import normalize


@pytest.mark.parametrize(
    ("typed", "normalized"),
    [
        ("ｻｰﾊﾞｰ保守", "サーバー保守"),
        ("ﾊﾟｰﾃｨｰ", "パーティー"),
        ("ｳﾞｨｰﾅｽ", "ヴィーナス"),
        ("ＱＵＯＴＥ２０２４", "QUOTE2024"),
        ("①㈱㍉Ⅲ", "1(株)ミリIII"),
        ("ﬁle\u3000⼀覧", "file 一覧"),  # a PDF's ligature, the ideographic space, a Kangxi radical
        ("サーバー quote 漢字", "サーバー quote 漢字"),
    ],
)
def test_normalize_is_nfkc_of_what_people_type(typed: str, normalized: str) -> None:
    assert normalize(typed) == normalized == unicodedata.normalize("NFKC", typed)


def test_the_char_filter_rules_are_the_same_table_written_for_opensearch() -> None:
    rules = width_mappings()
    for rule in ("ｻﾞ => ザ", "ﾊﾟ => パ", "Ｑ => Q"):
        assert rule in rules
    # whitespace and rule syntax characters are escaped: the rule parser trims and splits on them
    assert "\\u3000 => \\u0020" in rules
    assert "\\uff1d => \\u003d" in rules  # full-width '=' -> '='
    for rule in rules:
        source, target = rule.split(" => ")
        assert source
        assert target
        assert " " not in source + target


@pytest.mark.parametrize("tier", ANALYSIS_TIERS)
def test_every_tier_normalizes_before_tokenizing_and_searches_with_synonyms(tier: str) -> None:
    analysis = index_body(tier=tier)["settings"]["index"]["analysis"]
    for name, analyzer in analysis["analyzer"].items():
        if name not in ("docindex_variants", "docindex_names"):  # folded by docindex itself (test_variants.py)
            assert analyzer["char_filter"][0] == "docindex_width", name
    assert ("icu_normalizer" in analysis["analyzer"]["docindex_text"]["char_filter"]) == (tier == "icu+kuromoji")
    # synonyms only at query time
    assert "docindex_synonyms" in analysis["analyzer"]["docindex_search"]["filter"]
    assert "docindex_synonyms" not in analysis["analyzer"]["docindex_text"]["filter"]
    assert analysis["filter"]["docindex_synonyms"]["type"] == "synonym_graph"


def test_the_vocabulary_reaches_kuromoji_and_packages_become_paths(tmp_path: Path) -> None:
    body = index_body(tier="kuromoji")
    tokenizers = body["settings"]["index"]["analysis"]["tokenizer"]
    assert "稟議書,稟議書,リンギショ,カスタム名詞" in tokenizers["docindex_ja"]["user_dictionary_rules"]
    assert tokenizers["docindex_ja_query"]["discard_compound_token"] is True
    mapping = body["mappings"]["properties"]
    assert mapping["content"]["search_analyzer"] == "docindex_search"
    assert mapping["content"]["fields"]["bigram"]["analyzer"] == "docindex_bigram"
    assert mapping["title"]["fields"]["bigram"]["analyzer"] == "docindex_bigram"

    config = tmp_path / "a.toml"
    config.write_text('[user_dictionary]\npackage = "F111111111"\n[synonyms]\npackage = "F222222222"\n')
    packaged = vocabulary.load(config)
    assert vocabulary.check(packaged).ok
    analysis = index_body(tier="kuromoji", vocabulary=packaged)["settings"]["index"]["analysis"]
    assert analysis["tokenizer"]["docindex_ja"]["user_dictionary"] == "analyzers/F111111111"
    assert analysis["filter"]["docindex_synonyms"]["synonyms_path"] == "analyzers/F222222222"


def test_the_shipped_vocabulary_is_valid() -> None:
    findings = vocabulary.check(vocabulary.load())
    assert (findings.errors, findings.warnings) == ([], [])


def test_check_finds_what_a_cluster_would_refuse_or_never_match(tmp_path: Path) -> None:
    config = tmp_path / "a.toml"
    config.write_text(
        "[user_dictionary]\n"
        'package = "nope"\n'
        'rules = ["a,b", "情シス,情シ ス,ジョウシス,名詞", "ﾃｽﾄ,ﾃｽﾄ,テスト,名詞",'
        ' "稟議,稟議,リンギ,名詞", "稟議,稟議,リンギ,名詞"]\n'
        "[synonyms]\n"
        'sets = ["pc", "a, , b", "x => y => z", "ＰＣ, パソコン"]\n',
        encoding="utf-8",
    )
    findings = vocabulary.check(vocabulary.load(config))
    text = "\n".join(findings.errors)
    assert "not a package ID" in text
    assert "both a package and inline entries" in text
    assert "2 fields" in text
    assert "2 segments but 1 readings" in text
    assert "duplicate surface" in text
    assert "one term is not a synonym set" in text
    assert "an empty term" in text
    assert "more than one '=>'" in text
    warnings = "\n".join(findings.warnings)
    assert "write the surface as 'テスト'" in warnings
    assert "write it as 'pc'" in warnings


def test_an_unreadable_file_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[user_dictionary\n")
    with pytest.raises(vocabulary.VocabularyError):
        vocabulary.load(bad)
    bad.write_text("[dictionary]\n")
    with pytest.raises(vocabulary.VocabularyError, match="unknown sections"):
        vocabulary.load(bad)
