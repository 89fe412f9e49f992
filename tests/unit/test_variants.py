"""The spelling-variant normalization (docindex.text.variants): each class folds both ways, nothing else does."""

from __future__ import annotations

import re

import pytest

from docindex.index.mapping import ANALYSIS_TIERS, MAPPINGS, index_body
from docindex.text import variants
from docindex.text.variants import document_variants, fold, fold_characters, query_text, tokens, variant_text

# (class, one spelling, another spelling of the same word)
SAME = [
    ("okurigana", "申し込み書", "申込書"),
    ("okurigana", "申込み書", "申込書"),
    ("okurigana", "取り扱い説明書", "取扱説明書"),
    ("okurigana", "問合せ", "問い合わせ"),
    ("okurigana", "売り上げ", "売上げ"),
    ("okurigana", "引き渡し日", "引渡日"),
    ("itaiji", "髙橋", "高橋"),
    ("itaiji", "山﨑", "山崎"),
    ("itaiji", "齋藤", "斎藤"),
    ("old form", "渡邊", "渡辺"),
    ("glyph variant of an old form", "渡邉", "渡辺"),
    ("glyph variant of an old form", "剱道", "剣道"),
    ("old form", "澤田", "沢田"),
    ("old form", "廣瀬", "広瀬"),
    ("variation selector", "葛\U000e0100飾", "葛飾"),
    ("iteration mark", "佐々木", "佐佐木"),
    ("iteration mark", "いすゞ", "いすず"),
    ("long vowel", "コンピューター", "コンピュータ"),
    ("long vowel", "サーバー保守", "サーバ保守"),
    ("ヴ/バ", "ヴァイオリン", "バイオリン"),
    ("ヴ/バ", "ヴィンテージ", "ビンテージ"),
    ("hiragana/katakana", "りんご", "リンゴ"),
    ("hiragana/katakana", "りんご", "林檎"),
    ("width", "ｻｰﾊﾞｰ", "サーバー"),
    ("width/digits", "２０２４年度", "2024年度"),
    ("era year", "令和5年度", "2023年度"),
    ("era year", "令和元年", "2019年"),
    ("era year", "平成三十年", "2018年"),
    ("era year", "R5年度", "2023年度"),
    ("era year", "昭和64年", "1989年"),
    ("kanji numerals", "二〇二四年", "2024年"),
    ("kanji numerals", "十二月二十五日", "12月25日"),
    ("kanji numerals", "第三回", "第3回"),
    ("dash", "サ-バ-", "サーバー"),
    ("middle dot", "クリスマス・パーティー", "クリスマスパーティー"),
    ("counter", "3ヶ月", "3か月"),
    ("case", "PC用品", "pc用品"),
]

# Pairs that must stay apart: different words, or a fold that would reach into another word.
APART = [
    ("申込", "申告"),  # a one-letter difference is another word
    ("保守", "保守り"),  # the one-letter entry 守 → 守り is not applied inside words
    ("21度", "2一度"),  # numbers in entries are not applied
    ("カラー", "から"),  # katakana is not folded into hiragana (the particle から)
    ("パーティー", "パーティション"),  # see test_katakana_words_keep_their_end
    ("斎藤", "斉藤"),  # two standard kanji: the tables never merge them
    ("叶", "協"),  # standard kanji are never rewritten
    ("尨", "竜"),  # Unicode 12.1 made them z-variants through 龍; no shared reading: another word
    ("十分", "10分"),  # kanji numerals only before 年, 月 and 日
    ("見る物", "見物"),  # a verb ending between kanji is no okurigana of a compound
    ("大きい会議", "大会議"),
    ("東京の会社", "東京会社"),
]


@pytest.mark.parametrize(("kind", "one", "other"), SAME, ids=[f"{k}:{a}" for k, a, _ in SAME])
def test_spellings_of_one_word_fold_to_one_text(kind: str, one: str, other: str) -> None:
    assert fold(one) == fold(other)
    assert variant_text(one) == variant_text(other)
    assert query_text(one) == query_text(other) != ""


@pytest.mark.parametrize(("one", "other"), APART)
def test_different_words_stay_apart(one: str, other: str) -> None:
    assert fold(one) != fold(other)


def test_a_fold_never_reaches_into_the_neighbouring_word() -> None:
    assert fold("保守契約") == "保守契約"
    assert fold("気温は21度") == "気温は21度"
    assert fold("統一位置") == "統一位置"
    # hiragana entries only as a whole word: かぎり is not かぎ (鍵) + り
    assert fold("できるかぎり") == "できるかぎり"
    assert fold("りんごを食べる") == "林檎を食べる"
    assert fold("りんごたっぷり") == "りんごたっぷり"


def test_the_query_also_searches_the_other_kana_and_the_noun_without_its_ending() -> None:
    assert variants.other_script("メガネ") == "めがね"
    assert variants.other_script("めがね") == "メガネ"
    assert variants.other_script("カラ") == ""  # two kana: から is everywhere
    assert variants.stem("売り上げ") == "売上"
    assert variants.stem("貸し出し") == "貸出"
    assert variants.stem("高い") == ""


def test_two_kana_words_and_two_kana_of_okurigana_have_query_spellings() -> None:
    # a two-kana word in the other script, searched as a word of the morphological fields
    assert variants.two_kana_other_script("ネジ") == "ねじ"
    assert variants.two_kana_other_script("ねじ") == "ネジ"
    assert variants.two_kana_other_script("メガネ") == ""  # three kana: other_script's
    assert variants.two_kana_other_script("渡辺") == ""
    # two kana of a verb stem between kanji go, as fold() takes one (見積り書 -> 見積書)
    assert variants.without_okurigana("見積もり書") == "見積書" == variants.fold("見積り書")
    assert variants.without_okurigana("預かり証") == "預証" == variants.fold("預り証")
    assert variants.without_okurigana("東京より大阪") == ""  # a particle, not okurigana
    assert variants.without_okurigana("資料の件") == ""
    assert variants.without_okurigana("見積書") == ""


def test_katakana_words_keep_their_end() -> None:
    # The long vowel goes at a word's end; the word-end mark keeps the shorter word from
    # matching inside a longer one (メモリ is not in メモリアル, パーティ not in パーティション)
    assert variant_text("メモリー") == "メモリヿ"
    assert "メモリヿ" not in variant_text("メモリアル展")
    assert "パーティヿ" not in variant_text("パーティション")
    assert fold("カー") == "カー"  # two letters keep their long vowel
    # a compound keeps its word boundary: コンピュータ is a word of コンピューターシステム
    assert fold("コンピュータシステム") == fold("コンピューターシステム")


def test_variant_text_is_only_the_japanese_words_letters_and_digits() -> None:
    text = variant_text("【重要】2024年度 予算（案）: Quote for ACME — サーバー保守、髙橋")
    assert text == "重要 2024年度 予算 案 サーバヿ保守 高橋"
    assert re.fullmatch(r"[0-9a-z\u3041-\u3096\u30a1-\u30fc\u30ff\u3400-\u9fff ]*", text)
    assert variant_text("English only, 12345") == ""
    assert query_text("PC") == ""
    assert query_text("髙") == ""


def test_tokens_are_bigrams_of_japanese_and_whole_numbers_and_words() -> None:
    assert tokens("サーバヿ保守 2023年度 pc用品 高") == [
        "サー",
        "ーバ",
        "バヿ",
        "ヿ保",
        "保守",
        "2023",
        "年度",
        "pc",
        "用品",
        "高",
    ]


def test_document_variants_keeps_title_name_and_content_apart() -> None:
    assert document_variants("申込書", "申し込み書.docx", "本文は髙橋が書いた") == [
        "申込書",
        "申込書",
        "本文は高橋が書いた",
    ]
    assert document_variants(None, "report.pdf", "quarterly revenue") == []


def test_the_tables_match_folded_text() -> None:
    # Every entry is written as fold_characters writes text, or it would never match:
    # rebuild the tables (scripts/build_variant_tables.py) after changing the character fold
    table = variants._word_table()
    for source, target in {**table.kanji, **table.katakana, **table.hiragana}.items():
        assert fold_characters(source) == source, source
        assert fold_characters(target) == target, target
    kanji = variants._kanji_table()
    assert len(kanji) > 400
    assert len(table.kanji) + len(table.katakana) + len(table.hiragana) > 4000
    assert not set(kanji) & set(kanji.values())  # a standard form is never rewritten again


def test_okurigana_an_entry_adds_are_never_added_twice() -> None:
    # 手続 → 手続き met 手続き itself and wrote 手続きき: folding was not idempotent
    table = variants._word_table()
    extending = {s: t for s, t in table.kanji.items() if t.startswith(s) and len(t) > len(s)}
    assert len(extending) > 40
    for source, target in extending.items():
        assert fold(target) == fold(source), (source, target)
        assert fold(fold(target)) == fold(target), target
    assert fold("お手続きのご案内") == "お手続きのご案内"
    assert fold("支払い期日と支払方法") == "支払い期日と支払い方法"


def test_the_notice_names_every_table_and_its_licence() -> None:
    notice = (variants.DATA / "NOTICE.md").read_text(encoding="utf-8")
    for table in variants.DATA.glob("*.tsv"):
        assert f"`{table.name}`" in notice
        assert "scripts/build_variant_tables.py" in table.read_text(encoding="utf-8").splitlines()[1]
    for licence in ("LICENSE-Unicode-3.0.txt", "LICENSE-Apache-2.0.txt"):
        assert (variants.DATA / licence).is_file()
        assert licence in notice


@pytest.mark.parametrize("tier", ANALYSIS_TIERS)
def test_the_variants_field_is_indexed_with_core_bigrams_only(tier: str) -> None:
    # what makes the tokens the same on every engine: no char filter, no plugin, core bigrams only
    analysis = index_body(tier=tier)["settings"]["index"]["analysis"]
    assert analysis["analyzer"]["docindex_variants"] == {
        "type": "custom",
        "tokenizer": "standard",
        "filter": ["cjk_bigram"],
    }
    assert MAPPINGS["properties"]["variants"] == {"type": "text", "analyzer": "docindex_variants"}
    # derived from the text, so not stored: the index keeps the text once
    assert MAPPINGS["_source"] == {"excludes": ["variants", "names", "name_order"]}
