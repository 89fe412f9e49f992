"""Spelling variants (表記ゆれ): one normalization, applied by docindex itself to documents and queries.

Japanese writes one word many ways (申込書 / 申し込み書, 髙橋 / 高橋, コンピューター / コンピュータ,
ヴァイオリン / バイオリン, 令和5年 / 2023年). :func:`fold` writes each of them one way; the
index document carries the folded text of its title, file name and content in the ``variants``
field (:func:`document_variants`), and the query searches that field with the folded query
(:func:`query_text`). Both sides run this module, not the engine's analysis plugins, so a
search finds the same documents on Amazon OpenSearch Service, on a Serverless collection and
on the local emulator. The field's analyzer is OpenSearch core's standard tokenizer with CJK
bigrams and nothing else (``docindex.index.mapping``); a query word is searched as a phrase of
its bigrams, i.e. as a substring of the folded text (numbers and Latin words whole).

What :func:`fold` does, in order:

1. NFKC and lower case (width, compatibility characters); ideographic variation selectors go.
2. Old and variant kanji forms to the standard one (澤 → 沢, 髙 → 高, 﨑 → 崎), from published
   tables (``data/kanji_variants.tsv``: Unihan's Japanese variant fields, OpenCC's
   Japanese Shinjitai table, Unicode 12.1's z-variants of old forms (渡邉 → 渡辺); see ``data/NOTICE.md``).
3. Iteration marks written out (時々 → 時時, いすゞ → いすず).
4. ヴァ/ヴィ/ヴ/ヴェ/ヴォ → バ/ビ/ブ/ベ/ボ; a dash inside a katakana word is the long-vowel mark
   (サ-バ- → サーバー) and a middle dot between katakana words goes (クリスマス・パーティー);
   ヶ/ヵ/カ/ケ/が as a counter after a number is か (3ヶ月 → 3か月).
5. Dates people search by: kanji numerals before 年/月/日 and after 第 (二〇二四年 → 2024年,
   第三回 → 第3回), Japanese era
   years (令和5年, 令和元年, R5年, H30年 → 2023年, 2019年, 2023年, 2018年).
6. Words written several ways to the one way Sudachi's synonym dictionary calls representative
   (申込み/申込 → 申し込み, 取扱説明書 → 取扱説明書, りんご/リンゴ → 林檎; ``data/word_variants.tsv``):
   entries with a kanji anywhere, katakana entries only on katakana word boundaries,
   hiragana entries only as a whole word (before a particle or a non-hiragana character).
7. One okurigana kana of a verb stem between two kanji goes (売り上げ → 売上げ, 引き渡し日 → 引渡日).
8. The long-vowel mark at the end of a katakana word of three or more letters goes
   (コンピューター → コンピュータ, サーバー → サーバ; カー and キー keep theirs).

The text people see (snippets, highlights) is always the file's own: only ``variants`` is folded.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Bump when fold() or its tables change: an index built with another version answers variant
# queries from documents folded the old way until `docindex reindex` rebuilds it.
# 2: okurigana an entry adds are not added twice (手続き stayed 手続きき); 3: glyph variants of old forms (邉 → 辺)
NORMALIZATION_VERSION = 3

DATA = Path(__file__).with_name("data")
# Of a longer text only the start is folded (about 50 pages): the spellings of a 2,000,000-character
# log would add half to its indexing time for a tier the words and bigrams of the whole text back up.
MAX_FOLDED_CHARS = 100_000

_VARIATION_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_KATAKANA = "\u30a1-\u30fa\u30fc"  # ァ..ヺ and ー (not ・ or the iteration marks)
_KATAKANA_RUN = re.compile(f"[{_KATAKANA}]+")
_HIRAGANA_RUN = re.compile("[\u3041-\u3096]+")
_IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df"
_KANJI = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\u3005\u3006"
# Characters the `variants` field keeps (everything else separates words): ASCII letters and
# digits, hiragana, katakana and the CJK ideographs of Unicode 3.1, which every engine's word
# break tables know. The marker ヿ ends a katakana word.
_KEPT = re.compile(f"[^0-9a-z\u3041-\u3096{_KATAKANA}\u30ff{_IDEOGRAPHS}]+")
_ASCII_WORD = re.compile(" [0-9a-z]+(?= )")
_UNIT_BEFORE_KANA = re.compile(f"(?<=[0-9][{_IDEOGRAPHS}])(?=[\u3041-\u3096])")
_CJK_RUN = re.compile(f"[\u3041-\u3096{_KATAKANA}\u30ff{_IDEOGRAPHS}]+|[0-9a-z]+")
_KANA = re.compile("[\u3041-\u3096\u30a1-\u30fa]")
_JAPANESE = re.compile(f"[\u3041-\u3096{_KATAKANA}{_KANJI}]")
WORD_END = "\u30ff"  # ヿ: NFKC turns a real one into コト, so it never comes from a document
_MIN_COMPOUND_PART = 4
_SYLLABLE_CONTINUES = frozenset("ーァィゥェォャュョッヮ")
_PARTICLES = frozenset("をがはのにでともへやか")
_LONG_PARTICLES = frozenset(("から", "まで", "より"))
_V_SOUNDS = {"ヴァ": "バ", "ヴィ": "ビ", "ヴェ": "ベ", "ヴォ": "ボ", "ヴュ": "ビュ", "ヴ": "ブ"}
_HIRAGANA_TO_KATAKANA = {code: code + 0x60 for code in range(0x3041, 0x3097)}
_KATAKANA_TO_HIRAGANA = {code + 0x60: code for code in range(0x3041, 0x3097)}
_V_PATTERN = re.compile("ヴ[ァィェォュ]?|ゔ[ぁぃぇぉゅ]?")
# (Each pattern starts with the character it looks for, so that ``re`` skips to it quickly.)
_DASH_IN_KATAKANA = re.compile(f"[-\u2010-\u2015\u2212](?<=[{_KATAKANA}].)(?![0-9a-z])")
_DOT_IN_KATAKANA = re.compile(f"\u30fb(?<=[{_KATAKANA}].)(?=[{_KATAKANA}])")
_COUNTER_KA = re.compile("[ヶヵカケかが](?<=[0-9].)(?=[月所国年条])")
_ITERATION = re.compile("(.)([々〻ゝゞヽヾ]+)")
# Kanji numerals where they can only be a number: before 年/月/日, and after 第 (第三回, 第十二条).
_KANJI_NUMBER = re.compile("(?<=第)[〇一二三四五六七八九十百千]+|[〇一二三四五六七八九十百千]+(?=[年月日])")
# Japanese eras by their first year (元年): the year N of an era is first + N - 1.
_ERAS = {"明治": (1868, 45), "大正": (1912, 15), "昭和": (1926, 64), "平成": (1989, 31), "令和": (2019, 99)}
_ERA_INITIALS = {"s": "昭和", "h": "平成", "r": "令和"}
_ERA_YEAR = re.compile("(明治|大正|昭和|平成|令和)(元|[0-9]{1,2})年")
_ERA_INITIAL_YEAR = re.compile("([shr])(?<![0-9a-z].)([0-9]{1,2})年")
# One kana of a verb stem between two kanji is okurigana a compound noun may drop (売り上げ → 売上げ,
# 引き渡し日 → 引渡日); not particles (東京の会社), not る/た/て (見る物 is not 見物), not い (高い山).
_OKURIGANA = re.compile(f"(?<=[{_IDEOGRAPHS}])[りしきちみけげせえれびぎじひ](?=[{_IDEOGRAPHS}])")
# Two kana of a verb stem between kanji (見積もり書, 預かり証): the query also searches the word without
# them, the form fold() gives the one-kana spelling (見積り書, 預り証 -> 見積書, 預証).
_TWO_KANA_OKURIGANA = re.compile(
    f"(?<=[{_IDEOGRAPHS}])([\u3041-\u3096][りしきちみけげせえれびぎじひ])(?=[{_IDEOGRAPHS}])"
)
_ENDING_OKURIGANA = re.compile(f"(.*[{_IDEOGRAPHS}]{{2}})[りしきちみけげせえれびぎじひ]")
_LONG_VOWEL_END = re.compile(f"([{_KATAKANA}]{{3}})ー+(?![{_KATAKANA}])")


def _tsv(name: str) -> Iterable[tuple[str, str]]:
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            source, target = line.split("\t")[:2]
            yield source, target


@functools.cache
def _kanji_table() -> dict[str, str]:
    return dict(_tsv("kanji_variants.tsv"))


@functools.cache
def _kanji_pattern() -> re.Pattern[str]:
    return re.compile("[" + "".join(sorted(_kanji_table())) + "]")


def _iterate(match: re.Match[str]) -> str:
    first, marks = match.group(1), match.group(2)
    kanji = _JAPANESE.match(first) is not None and not _KANA.match(first)
    kana = _KANA.match(first) is not None
    out = first
    for mark in marks:
        if (mark in "々〻" and kanji) or (mark in "ゝヽ" and kana):
            out += first
        elif mark in "ゞヾ" and kana:
            out += unicodedata.normalize("NFC", first + "\u3099")  # the voiced kana
        else:
            out += mark
    return out


def _v_sound(match: re.Match[str]) -> str:
    sound = match.group(0)
    plain = _V_SOUNDS[sound.translate(_HIRAGANA_TO_KATAKANA)]
    return plain if sound[0] == "ヴ" else plain.translate(_KATAKANA_TO_HIRAGANA)


def _kanji_year(match: re.Match[str]) -> str:
    from kanjize import kanji2number

    try:
        return str(kanji2number(match.group(0)))
    except (ValueError, KeyError):
        return match.group(0)


def _era_year(era: str, number: str) -> str | None:
    first, last = _ERAS[era]
    year = 1 if number == "元" else int(number)
    return f"{first + year - 1}年" if 1 <= year <= last else None


def fold_characters(text: str) -> str:
    """Steps 1-5 of :func:`fold` (characters, marks, dates): what the word table's entries go through."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = _VARIATION_SELECTORS.sub("", text.lower())
    table = _kanji_table()
    text = _kanji_pattern().sub(lambda m: table[m.group(0)], text)
    text = _ITERATION.sub(_iterate, text)
    text = _V_PATTERN.sub(_v_sound, text)
    text = _DASH_IN_KATAKANA.sub("ー", text)
    text = _DOT_IN_KATAKANA.sub("", text)
    text = _COUNTER_KA.sub("か", text)
    text = _KANJI_NUMBER.sub(_kanji_year, text)
    text = _ERA_YEAR.sub(lambda m: _era_year(m.group(1), m.group(2)) or m.group(0), text)
    return _ERA_INITIAL_YEAR.sub(lambda m: _era_year(_ERA_INITIALS[m.group(1)], m.group(2)) or m.group(0), text)


class _WordTable:
    """Sudachi's spelling variants, each guarded by its script (see :func:`fold`, step 6).

    Entries with a kanji are found with an Aho-Corasick automaton (pyahocorasick, leftmost
    longest): one regular expression of a thousand words is tried word by word at every position
    of the text, and a scan in Python costs about a second per million characters.
    """

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self.kanji: dict[str, str] = {}
        self.katakana: dict[str, str] = {}
        self.hiragana: dict[str, str] = {}
        for source, target in pairs:
            if re.search(f"[{_KANJI}]", source):
                self.kanji[source] = target
            elif _KATAKANA_RUN.fullmatch(source):
                self.katakana[source] = target
            elif _HIRAGANA_RUN.fullmatch(source):
                self.hiragana[source] = target
        self.longest_kana = max((len(k) for k in (*self.katakana, *self.hiragana)), default=0)
        self.automaton = _automaton(self.kanji)
        self.katakana_heads = {k[:2] for k in self.katakana}
        self.katakana_tails = {k[-2:] for k in self.katakana}
        self.hiragana_automaton = _automaton(self.hiragana)

    def apply(self, text: str) -> str:
        text = self._kanji_words(text)
        text = _KATAKANA_RUN.sub(self._katakana_run, text)
        return self._hiragana_words(text)

    def _kanji_words(self, text: str) -> str:
        parts: list[str] = []
        done = 0
        for end, (size, target) in self.automaton.iter_long(text):
            if end + 1 - size < done:
                continue  # inside the okurigana a match below already took in
            parts += [text[done : end + 1 - size], target]
            done = end + 1
            # An entry that adds okurigana (手続 → 手続き) meets text that has them already: the
            # text's own okurigana are the target's, not more (手続き stays 手続き, not 手続きき).
            source = text[end + 1 - size : end + 1]
            added = target[len(source) :] if target.startswith(source) else ""
            if added and text.startswith(added, done):
                done += len(added)
        return "".join(parts) + text[done:] if parts else text

    def _katakana_run(self, match: re.Match[str]) -> str:
        run = match.group(0)
        if run in self.katakana:
            return self.katakana[run]
        if len(run) <= _MIN_COMPOUND_PART or (
            run[:2] not in self.katakana_heads and run[-2:] not in self.katakana_tails
        ):
            return run
        # A word of four letters or more at either end of a compound (コンピュータシステム),
        # or a compound of two words of the table (ユーザインタフェース).
        head, tail = run, ""
        for size in range(min(len(run) - 1, self.longest_kana), _MIN_COMPOUND_PART - 1, -1):
            if run[-size:] in self.katakana:
                head, tail = run[:-size], self.katakana[run[-size:]]
                break
        if tail and head in self.katakana:
            return self.katakana[head] + tail
        for size in range(min(len(head) - 1, self.longest_kana), _MIN_COMPOUND_PART - 1, -1):
            # not inside a syllable: コンピュータ is not the head of コンピューターシステム
            if head[:size] in self.katakana and head[size] not in _SYLLABLE_CONTINUES:
                return self.katakana[head[:size]] + head[size:] + tail
        return head + tail

    def _hiragana_words(self, text: str) -> str:
        parts: list[str] = []
        done = 0
        for end, (size, target) in self.hiragana_automaton.iter_long(text):
            start = end + 1 - size
            if start < done or not _hiragana_word(text, start, end + 1):
                continue
            parts += [text[done:start], target]
            done = end + 1
        return "".join(parts) + text[done:] if parts else text


def _is_hiragana(char: str) -> bool:
    return "\u3041" <= char <= "\u3096"


def _hiragana_word(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is a whole hiragana word: it starts its run of hiragana, or follows
    a particle that does (りんごとみかん; 赤いりんご is not matched), and a particle or no hiragana follows."""
    if end < len(text) and _is_hiragana(text[end]) and text[end] not in _PARTICLES:
        return False
    for lead in (0, 1, 2):
        head = text[max(0, start - lead) : start]
        if len(head) == lead and (lead == 0 or head in _PARTICLES or head in _LONG_PARTICLES):
            before = start - lead - 1
            if before < 0 or not _is_hiragana(text[before]):
                return True
    return False


def _automaton(words: dict[str, str]) -> Any:
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for source, target in words.items():
        automaton.add_word(source, (len(source), target))
    automaton.make_automaton()
    return automaton


@functools.cache
def _word_table() -> _WordTable:
    return _WordTable(_tsv("word_variants.tsv"))


def fold(text: str) -> str:
    """``text`` with each spelling variant written one way (the steps in the module docstring)."""
    text = _word_table().apply(fold_characters(text))
    text = _OKURIGANA.sub("", text)
    return _LONG_VOWEL_END.sub(r"\1", text)


def folded_spans(text: str, target: str) -> list[tuple[int, int]]:
    """Where ``target`` (folded) is in ``text`` as written: the [start, end) of the characters of ``text`` that
    fold to each occurrence, left to right. Folding changes lengths (申込 ← 申し込み, サーバ ← サーバー), so each
    span is the shortest prefix of the rest that holds the target, then the latest start that still does."""
    out: list[tuple[int, int]] = []
    start = 0
    while target and start < len(text) and target in fold(text[start:]):
        # Both bounds by bisection (a longer span holds what a shorter one does; folding is local, so a few
        # folds of short pieces instead of one per character), checked, and found one by one if folding
        # was not local after all.
        end = _shortest_end(text, target, start)
        first = _latest_start(text, target, start, end)
        if target not in fold(text[first:end]):
            end = next(j for j in range(start + 1, len(text) + 1) if target in fold(text[start:j]))
            first = max(i for i in range(start, end) if target in fold(text[i:end]))
        out.append((first, end))
        start = end
    return out


def _shortest_end(text: str, target: str, start: int) -> int:
    """The least end for which ``text[start:end]`` folds to something holding ``target`` (it does at the end)."""
    low, high = start + 1, len(text)
    while low < high:
        middle = (low + high) // 2
        if target in fold(text[start:middle]):
            high = middle
        else:
            low = middle + 1
    return high


def _latest_start(text: str, target: str, start: int, end: int) -> int:
    """The greatest first for which ``text[first:end]`` folds to something holding ``target`` (it does at start)."""
    low, high = start, end - 1
    while low < high:
        middle = (low + high + 1) // 2
        if target in fold(text[middle:end]):
            low = middle
        else:
            high = middle - 1
    return low


def variant_text(text: str) -> str:
    """What the ``variants`` field indexes of ``text``: the folded words that contain Japanese,
    separated by spaces, each katakana word followed by the word-end marker ``ヿ``.

    Only ASCII letters and digits, kana and kanji remain: the engine's tokens of it are
    :func:`tokens` of it.
    """
    text = _KEPT.sub(" ", fold(text))
    # A counter or unit after a number is a word of its own before kana (2022年の → 2022年 の), so
    # that "2022年" finds it: CJK bigrams would index 年の, never 年 alone.
    text = _UNIT_BEFORE_KANA.sub(" ", text)
    text = _KATAKANA_RUN.sub("\\g<0>" + WORD_END, text)
    return " ".join(_ASCII_WORD.sub(" ", f" {text} ").split())


def document_variants(title: str | None, filename: str | None, content: str | None) -> list[str]:
    """The ``variants`` field of a document: the variant text of its title, file name and the
    first :data:`MAX_FOLDED_CHARS` of its content (one value each, so that no phrase spans two of
    them); empty when none has Japanese."""
    values = [variant_text(text) for text in (title, filename, (content or "")[:MAX_FOLDED_CHARS]) if text]
    return [value for value in values if value]


def query_text(word: str) -> str:
    """A query word's variant text, searched as a phrase of ``variants``; "" without Japanese, or
    for one kanji alone (the other fields answer those)."""
    text = variant_text(word)
    found = tokens(text)
    return text if len(found) > 1 or (found and len(found[0]) > 1 and _JAPANESE.match(found[0])) else ""


def stem(word: str) -> str:
    """A query word's folded form without the okurigana it ends with (売り上げ → 売上, 貸し出し → 貸出),
    or "": a file that writes the noun without them still has it."""
    match = _ENDING_OKURIGANA.fullmatch(fold(word))
    return match.group(1) if match else ""


def without_okurigana(word: str) -> str:
    """A query word's folded form without two kana of a verb stem between kanji (見積もり書 → 見積書,
    預かり証 → 預証: what fold() makes of 見積り書 and 預り証), or "". For the query only; a particle
    between two words (東京より大阪, 資料の件) is no okurigana."""
    folded = fold(word)

    def drop(match: re.Match[str]) -> str:
        kana = match.group(1)
        return match.group(0) if kana in _LONG_PARTICLES or kana[0] in _PARTICLES - {"か", "も"} else ""

    shorter = _TWO_KANA_OKURIGANA.sub(drop, folded)
    return shorter if shorter != folded else ""


def two_kana_other_script(word: str) -> str:
    """A word of two kana in the other kana script (ネジ ↔ ねじ), or "": searched as a word of the
    morphological fields (``content``, ``title``, ``filename``), never as a substring — ねじ inside
    running hiragana, or から and ます, which those fields' analysis drops as particles and endings."""
    folded = fold(word)
    return _in_the_other_script(folded) if len(folded) == 2 else ""


def other_script(word: str) -> str:
    """A word of three kana or more written in the other kana script (メガネ ↔ めがね), or "".

    For the query only: a katakana word written in hiragana is found inside running hiragana
    (めがねを), which a fold of every katakana word into hiragana would make of から and カラ too.
    """
    folded = fold(word)
    return _in_the_other_script(folded) if len(folded) >= 3 else ""


def _in_the_other_script(folded: str) -> str:
    """A folded word all hiragana or all katakana, written in the other script; "" for anything else."""
    if _HIRAGANA_RUN.fullmatch(folded):
        return folded.translate(_HIRAGANA_TO_KATAKANA)
    if re.fullmatch("[\u30a1-\u30f6]+", folded):
        return folded.translate(_KATAKANA_TO_HIRAGANA)
    return ""


def tokens(text: str) -> list[str]:
    """The tokens the ``variants`` field's analyzer makes of :func:`variant_text` output.

    OpenSearch's standard tokenizer keeps a run of ASCII letters and digits as one word and
    splits kana and kanji into letters; CJK bigrams pairs adjacent letters and keeps a lone one.
    """
    found: list[str] = []
    for word in text.split():
        for run in _CJK_RUN.findall(word):
            if not _JAPANESE.match(run) or len(run) == 1:
                found.append(run)
            else:
                found += [run[i : i + 2] for i in range(len(run) - 1)]
    return found
