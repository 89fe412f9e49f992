"""Spelling variants through the real pipeline: a file written one way is found by the other, both ways.

Files are uploaded to the local S3 (moto server), announced by S3 notifications and indexed by
the real indexer into a real OpenSearch node; queries go through ``docindex search``'s function and the
search API's query. One stack for the module: the files are indexed once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from devkit.messages import s3_notification, sqs_event
from docindex.core.changes import doc_id
from docindex.index.search import search
from docindex.search_api.query import text_query
from docindex.text.variants import document_variants, tokens, variant_text
from tests.conftest import Aws, Stack, shared_stack
from tests.integration.conftest import build_indexer, invoke

# (class, the word as one file writes it, the same word as another file writes it)
CASES = [
    ("okurigana", "申し込み書", "申込書"),
    ("okurigana", "取り扱い説明書", "取扱説明書"),
    ("itaiji", "髙橋", "高橋"),
    ("itaiji", "山﨑", "山崎"),
    ("old form", "渡邊", "渡辺"),
    ("long vowel", "コンピューター", "コンピュータ"),
    ("ヴ/バ", "ヴァイオリン", "バイオリン"),
    ("hiragana/katakana", "りんご", "リンゴ"),
    ("width/digits", "２０２４年度", "2024年度"),
    ("era year", "令和5年度", "2023年度"),
    ("kanji numerals", "二〇二二年", "2022年"),
    ("dash", "ﾌﾟﾘﾝﾀ-", "プリンター"),
    ("iteration mark", "佐々木", "佐佐木"),
    ("two kana of okurigana", "見積もり書", "見積書"),
    ("two kana", "ねじ", "ネジ"),
    ("glyph variant of an old form", "渡邉", "渡辺"),
]
# Spellings the index itself makes one: its width char filter (full-width digits, half-width kana) and
# kuromoji's stemmer (the long-vowel mark a katakana word ends with) index both files' words alike, so
# the two files tie (on the emulator, which skipped the char filter when indexing, the query's own
# spelling used to rank first).
SAME_WHEN_INDEXED = ("width/digits", "dash")
# Around each word, a sentence of its own, so that no case finds another's files.
CONTEXT = [
    "提出",
    "改訂",
    "署名",
    "押印",
    "承認",
    "更新",
    "購入",
    "発注",
    "計画",
    "決算",
    "統計",
    "交換",
    "面談",
    "送付",
    "点検",
    "回覧",
]
# Files sharing characters with 申込書 that are other words: never found by it.
NEAR_MISSES = {"near/申告書.txt": "申告書の提出期限", "near/振込.txt": "振込手数料と込み合う窓口"}
# Files a two-kana word in the other script must not reach: ネジ inside a longer katakana word, から
# and ます (a particle, an ending) in running hiragana.
KANA_NEAR_MISSES = {
    "near/マネジメント.txt": "マネジメント研修の案内",
    "near/から.txt": "東京から大阪へ移動しました",
    "near/ます.txt": "会議を開催します",
}


def _key(case: int, side: str) -> str:
    return f"variants/{case:02d}-{side}.txt"


@pytest.fixture(scope="module")
def indexed(aws: Aws, search_engine: Any) -> Iterator[Stack]:
    with shared_stack(aws, search_engine, "variants") as stack:
        files = {**NEAR_MISSES, **KANA_NEAR_MISSES}
        for number, (_, one, other) in enumerate(CASES):
            files[_key(number, "one")] = f"{one}の{CONTEXT[number]}について"
            files[_key(number, "other")] = f"{other}の{CONTEXT[number]}について"
        for key, text in files.items():
            aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=text.encode())
        failed = invoke(build_indexer(stack), sqs_event(*(s3_notification(stack.bucket, key) for key in files)))
        assert failed == set()
        stack.opensearch.indices.refresh(index=stack.index)
        yield stack


def _ranked(stack: Stack, query: str) -> list[str]:
    return [hit["key"] for hit in search(stack.opensearch, stack.index, query) if hit["key"].startswith("variants/")]


@pytest.mark.parametrize(("number", "case"), list(enumerate(CASES)), ids=[f"{k}:{a}" for k, a, _ in CASES])
def test_each_spelling_finds_the_other_and_ranks_its_own_first(indexed: Stack, number: int, case: Any) -> None:
    kind, one, other = case
    both = [_key(number, "one"), _key(number, "other")]
    forward = _ranked(indexed, f"{other} {CONTEXT[number]}")
    found = _ranked(indexed, f"{one} {CONTEXT[number]}")
    if kind in SAME_WHEN_INDEXED:
        # the index's char filter and the query's normalization make one word of both: they tie
        assert sorted(forward) == sorted(found) == both
    else:
        # Query written the other way: the file written this way is found, below the exact spelling
        assert forward == [_key(number, "other"), _key(number, "one")]
        # and the reverse direction
        assert found == both


@pytest.mark.parametrize(("number", "case"), list(enumerate(CASES)), ids=[f"{k}:{a}" for k, a, _ in CASES])
def test_the_search_api_query_finds_both_spellings(indexed: Stack, number: int, case: Any) -> None:
    kind, other = case[0], case[2]
    body = {"query": text_query(f"{other} {CONTEXT[number]}"), "size": 10}
    hits = indexed.opensearch.search(index=indexed.index, body=body)["hits"]["hits"]
    keys = [h["_source"]["key"] for h in hits]
    if kind in SAME_WHEN_INDEXED:
        assert sorted(keys[:2]) == [_key(number, "one"), _key(number, "other")]
    else:
        assert keys[:2] == [_key(number, "other"), _key(number, "one")]


def test_a_variant_never_reaches_a_word_that_only_shares_characters(indexed: Stack) -> None:
    keys = [hit["key"] for hit in search(indexed.opensearch, indexed.index, "申込書")]
    assert keys == [_key(0, "other"), _key(0, "one")]
    assert not set(keys) & set(NEAR_MISSES)


def test_a_two_kana_word_in_the_other_script_is_a_word_not_a_substring(indexed: Stack) -> None:
    """ねじ finds a file's ネジ as a word, never マネジメント; カラ and マス are no から or ます.
    (ネジ as typed is a substring search of the bigram fields, as before: it does reach マネジメント.)"""
    assert _ranked(indexed, "ねじ") == [_key(14, "one"), _key(14, "other")]
    assert _ranked(indexed, "ネジ") == [_key(14, "other"), _key(14, "one")]
    for query in ("ねじ", "カラ", "マス"):
        keys = [hit["key"] for hit in search(indexed.opensearch, indexed.index, query)]
        assert not set(keys) & set(KANA_NEAR_MISSES), query


def test_snippets_show_what_the_file_says(indexed: Stack) -> None:
    hits = search(indexed.opensearch, indexed.index, "髙橋")
    source = indexed.opensearch.get(index=indexed.index, id=doc_id(indexed.bucket, _key(2, "other")))["_source"]
    # the folded text is indexed but neither stored nor shown: the file's own words are
    assert "variants" not in source
    assert source["content"] == "高橋の署名について"
    assert hits[0]["key"] == _key(2, "one")
    assert "髙橋" in hits[0]["snippet"].replace("[", "").replace("]", "")


def test_the_engine_indexes_the_tokens_the_shipped_settings_make(indexed: Stack) -> None:
    # What the engine indexed is what the shipped analyzer makes of the text (_analyze) and what
    # docindex.text.variants says any engine makes of it: the analyzer is OpenSearch core's standard
    # tokenizer and CJK bigrams, nothing an engine may skip or vary.
    client, index = indexed.opensearch, indexed.index
    text = "令和5年度の申込み書を髙橋がｻｰﾊﾞｰ室で受け付け、ヴァイオリンとりんごを佐々木へ。PC用品"
    client.index(index=index, id="tokens", body={"key": "tokens.txt", "variants": document_variants(None, None, text)})
    client.indices.refresh(index=index)
    expected = tokens(variant_text(text))
    analyzed = client.indices.analyze(index=index, body={"analyzer": "docindex_variants", "text": variant_text(text)})
    assert [t["token"] for t in analyzed["tokens"]] == expected
    assert [t["position"] for t in analyzed["tokens"]] == list(range(len(expected)))

    # (`variants` is not in _source, so term vectors cannot be rebuilt from it: each term is asked of
    # the index instead, and a term the text does not make is not there)
    def indexed_term(term: str) -> bool:
        query = {"bool": {"filter": [{"ids": {"values": ["tokens"]}}, {"term": {"variants": term}}]}}
        return bool(client.count(index=index, body={"query": query})["count"])

    assert all(indexed_term(term) for term in expected), [t for t in expected if not indexed_term(t)]
    assert not indexed_term("髙橋")
    assert not indexed_term("ｻｰﾊﾞｰ")
    assert {"2023", "年度", "高橋", "林檎", "佐佐", "pc", "用品"} <= set(expected)


def test_an_index_from_before_keeps_answering_and_reindex_brings_the_variants(
    indexed: Stack, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    import copy

    from docindex.cli import main
    from docindex.index.mapping import MAPPINGS, index_body

    # Given an index built before spelling variants (no variants field, no analyzer for it) holding
    # a file that writes 髙橋, behind its alias as the pipeline writes it
    client = indexed.opensearch
    body = index_body()
    del body["settings"]["index"]["analysis"]["analyzer"]["docindex_variants"]
    body["mappings"] = {k: v for k, v in copy.deepcopy(MAPPINGS).items() if k != "_source"}
    del body["mappings"]["properties"]["variants"]
    body["aliases"] = {"legacy": {"is_write_index": True}}
    client.indices.create(index="legacy-v1", body=body)
    source = {"bucket": "b", "key": "人事/髙橋.txt", "filename": "髙橋.txt", "content": "髙橋の評価"}
    client.index(index="legacy", id="x", body=source, version=3, version_type="external", refresh=True)
    # When someone searches 高橋 before the operator reindexes: it works, the variant is not found
    assert [h["key"] for h in search(client, "legacy", "高橋")] == []
    assert [h["key"] for h in search(client, "legacy", "髙橋")] == ["人事/髙橋.txt"]
    # Then `docindex reindex` rebuilds it with the field, folding every document as it copies it
    for name, value in indexed.settings_env().items():
        monkeypatch.setenv(name, value)
    target = ["--opensearch-endpoint", indexed.engine_url, "--index", "legacy"]
    assert main(["reindex", *target, "--ledger-table", indexed.env["LEDGER_TABLE"], "--settle", "0"]) == 0
    capsys.readouterr()
    assert [h["key"] for h in search(client, "legacy", "高橋")] == ["人事/髙橋.txt"]
    assert client.get(index="legacy", id="x")["_version"] == 3
