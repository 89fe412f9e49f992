"""Every query form people type finds its file in the top 3, on a real OpenSearch node.

The query set is tests/support/relevance.py (also measured by ``make bench``). The node applies the
production analysis (icu+kuromoji: the ``mapping`` char filter, ICU normalization, kuromoji with the
user dictionary, cjk_width, bigrams) when indexing, and the search analyzer's ``synonym_graph`` when
searching; the query side also applies ``normalize`` and the vocabulary's synonyms as query variants
(for clusters that do not), so both paths are exercised.
"""

from __future__ import annotations

from typing import Any

import pytest

from docindex.text.width import normalize
from tests.support import relevance


def _applies_synonyms(client: Any, index: str) -> bool:
    """Whether this cluster's search applies the search analyzer's synonyms (OpenSearch does; osmem did not)."""
    hits = client.search(index=index, body={"query": {"match": {"content": "pc"}}})["hits"]["hits"]
    return any(h["_source"]["key"].startswith("営業部/御見積書") for h in hits)


def _tokens(client: Any, index: str, analyzer: str, text: str) -> list[str]:
    response = client.indices.analyze(index=index, body={"analyzer": analyzer, "text": text})
    return [t["token"] for t in response["tokens"]]


@pytest.fixture
def loaded(opensearch: Any) -> Any:
    relevance.load(opensearch, "docs")
    return opensearch


def test_every_query_finds_its_file_in_the_top_3(loaded: Any) -> None:
    # (the search analyzer's synonym_graph answers on its own: a plain match query for pc finds the quotation)
    assert _applies_synonyms(loaded, "docs")
    outcomes = relevance.run(loaded, "docs", relevance.QUERIES)
    missed = [(o.query.text, o.query.kind, o.rank) for o in outcomes if not o.in_top3]
    assert missed == []
    assert len(outcomes) >= 18


@pytest.mark.parametrize("query", [q for q in relevance.QUERIES if q.needs == "synonyms"], ids=lambda q: q.text)
def test_synonym_queries_reach_the_words_of_their_file(loaded: Any, query: relevance.Query) -> None:
    # the search analyzer turns the query into (among others) a word the expected file's content has
    content = relevance.DOCUMENTS[query.expected][1]
    indexed = set(_tokens(loaded, "docs", "docindex_text", content))
    expanded = set(_tokens(loaded, "docs", "docindex_search", normalize(query.text)))
    assert expanded & indexed, f"{query.text} -> {expanded}; the file has {indexed}"
    # and without the synonyms it would not
    plain = set(_tokens(loaded, "docs", "docindex_text", normalize(query.text)))
    assert not plain & indexed


@pytest.mark.parametrize(
    ("typed", "written"),
    [
        ("ｻｰﾊﾞｰ保守", "サーバー保守"),
        ("ＱＵＯＴＥ", "quote"),
        ("ﾊﾟｰﾃｨｰ", "パーティー"),
        ("２０２４年度", "2024年度"),
        ("㈱山田", "(株)山田"),
    ],
)
def test_the_index_analyzers_normalize_before_tokenizing(loaded: Any, typed: str, written: str) -> None:
    for analyzer in ("docindex_text", "docindex_search", "docindex_bigram"):
        assert _tokens(loaded, "docs", analyzer, typed) == _tokens(loaded, "docs", analyzer, written), analyzer


def test_words_rank_above_characters(loaded: Any) -> None:
    from docindex.index.search import search

    # 京都 is a word of one file and only two characters of 東京都 in the other (which says it twice)
    loaded.index(index="docs", id="kyoto", body={"key": "出張/報告.txt", "content": "京都 出張 報告"})
    loaded.index(index="docs", id="tokyo", body={"key": "出張/都庁.txt", "content": "東京都庁 訪問。東京都の窓口。"})
    loaded.indices.refresh(index="docs")
    hits = search(loaded, "docs", "京都")
    assert [h["key"] for h in hits] == ["出張/報告.txt", "出張/都庁.txt"]
    hits = search(loaded, "docs", "守契")
    assert [h["key"] for h in hits] == ["営業部/サーバー保守契約 2026.docx"]
    assert "守契" in hits[0]["snippet"].replace("[", "").replace("]", "")  # characters highlighted without a word


def test_the_word_tier_is_what_puts_word_matches_first(loaded: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from docindex.index import search as search_module

    # One file has the word 京都 once, deep in a long text; the other says 東京都 over and over in
    # a short one, in its title too: by BM25 alone its characters (bigrams) outscore the word
    filler = "。".join(f"会議{n}の議事録を確認した" for n in range(60))
    loaded.index(index="docs", id="word", body={"key": "出張/京都.txt", "content": f"{filler}。京都に出張した。"})
    loaded.index(
        index="docs",
        id="chars",
        body={"key": "総務/都庁.txt", "title": "東京都 東京都", "content": "東京都 " * 40},
    )
    loaded.indices.refresh(index="docs")

    def order() -> list[str]:
        return [
            h["key"]
            for h in search_module.search(loaded, "docs", "京都")
            if h["key"] in ("出張/京都.txt", "総務/都庁.txt")
        ]

    # With the tier the word match ranks first
    assert order() == ["出張/京都.txt", "総務/都庁.txt"]
    # and the tier is what does it: without it the character matches would come first
    monkeypatch.setattr(search_module, "WORD_MATCH_TIER", 0.0)
    assert order() == ["総務/都庁.txt", "出張/京都.txt"]
