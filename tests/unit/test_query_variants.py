"""The vocabulary's synonyms on the query side: what a typed query is also searched as."""

from __future__ import annotations

import json

from docindex.index.search import VARIANT_MATCH_TIER
from docindex.index.vocabulary import MAX_QUERY_VARIANTS, Vocabulary, query_variants, synonym_rules
from docindex.search_api.query import text_query

RULES = synonym_rules(
    Vocabulary(synonym_sets=("見積書, 見積り, 御見積", "pc, パソコン", "稟議書, 稟議", "社長, 代表 => 代表取締役"))
)


def test_a_term_of_a_set_is_also_searched_as_the_others() -> None:
    assert query_variants("見積り", RULES) == ["見積り", "見積書", "御見積"]
    assert query_variants("PC 購入", RULES) == ["pc 購入", "パソコン 購入"]
    assert query_variants("パソコン", RULES) == ["パソコン", "pc"]


def test_one_way_rules_only_go_one_way() -> None:
    assert query_variants("社長 挨拶", RULES) == ["社長 挨拶", "代表取締役 挨拶"]
    assert query_variants("代表取締役", RULES) == ["代表取締役"]


def test_a_longer_term_is_not_rewritten_through_a_shorter_one_inside_it() -> None:
    # 稟議 is inside 稟議書: the query 稟議書 becomes 稟議, never 稟議書書
    assert query_variants("稟議書", RULES) == ["稟議書", "稟議"]


def test_ascii_terms_match_whole_words_only() -> None:
    assert query_variants("epcot pcs", RULES) == ["epcot pcs"]


def test_variants_are_bounded() -> None:
    many = synonym_rules(Vocabulary(synonym_sets=tuple(f"t{n}, u{n}, v{n}" for n in range(10))))
    assert len(query_variants(" ".join(f"t{n}" for n in range(10)), many)) == MAX_QUERY_VARIANTS


def test_the_user_text_is_never_turned_into_query_syntax() -> None:
    # Operators and field syntax stay text; only vocabulary terms are swapped in
    typed = 'PC title:secret OR "x" -y*'
    variants = query_variants(typed, RULES)
    assert variants == [typed.lower(), typed.lower().replace("pc", "パソコン", 1)]


def test_the_search_api_searches_every_variant_as_text() -> None:
    body = json.dumps(text_query("PC"), ensure_ascii=False)
    assert '"query": "pc"' in body
    assert '"query": "パソコン"' in body
    # a query without vocabulary terms keeps the single clause
    should = text_query("議事録")["bool"]["should"]
    assert "simple_query_string" in should[0]
    assert "filename.ngram" in should[1]["match"]
    # and its spellings, ranked below the spelling typed (test_variants.py)
    assert next(c for c in should if "constant_score" in c)["constant_score"]["boost"] == VARIANT_MATCH_TIER
