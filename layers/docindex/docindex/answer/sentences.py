"""Sentences of a passage, and how much of a question a sentence holds: the measures an extractive answer is chosen by.

Japanese has no spaces, and the search function has no morphological analyzer (kuromoji runs on the
cluster), so a question's words are compared as its *terms*: the character pairs of each run of kanji,
katakana, letters or digits, and each kanji on its own (a one-kanji word: 梅雨とは何季 → 季). Particles,
verb endings and the question's own words (何, いつ, どこ, いくら) are not terms: they are what the question
asks, not what the answer holds. Text is compared folded as the index folds it (width, case).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

# A sentence: up to and including its end mark and closing brackets, or a line without one.
_SENTENCE = re.compile(r"[^。！？!?\n]*(?:[。！？!?][」』）)]*|\n|$)")
# Runs the terms come from: kanji (and 々), katakana words, letters and digits.
# Digits go with the kanji they count (第2週, 12月29日, 3,000円 → 3000円) and with letters (a4, q3).
_RUN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff々〆ヵヶ0-9]+|[\u30a0-\u30ffー]+|[a-z0-9]+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")
_KANJI = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff]")
# The question's own words, never terms of an answer: what is asked, not what is known.
INTERROGATIVES = frozenset("何誰幾")
_ASKING_RUNS = re.compile(r"何[年月日時回人件個歳度割分倍点]?|幾[つら]?|誰")
# A question that asks for a number, a date, an amount or a count: its answer holds digits or numerals.
_ASKS_NUMBER = re.compile(
    r"いつ|いくら|何[年月日時回人歳割円個件倍度位番世紀点%％]|何パーセント|何キロ|何メートル|どれ(?:くらい|ほど|だけ)|どのくらい"
)
_NUMBER = re.compile(r"[0-9０-９〇一二三四五六七八九十百千万億]")
# The counter a question asks for (何度 → 度, 何日 → 日, いくら → 円): its answer holds a number with it.
_ASKED_COUNTER = re.compile(r"何(か月|ヶ月|[年月日時回人歳割円個件倍度位番世紀点%％箱社台])|(いくら)")
_NUMERAL = "[0-9０-９〇一二三四五六七八九十百千万億,，.]"
# What a question asking for a counted quantity must find in its answer: 何年 → 1995年, 元年, 1470年代; いくら →
# 3,000円, 33,980ドル, 全額; 何度 → 28度, 39.3℃, 135°. A quote without any of them answers another question
# (非常食の賞味期限は何年？ beside a notice that gives only the day it is handed out). 何人 (ポルトガル人) and
# 何時 (何時代) also ask for a kind, not a number, and 何度も, 何年も are "many times", "for years": left out.
_KIND_ASKED = re.compile(
    r"何(か月|ヶ月|カ月|ヵ月|時間|パーセント|キロ|メートル|世紀|[年月日回歳割円個件倍度位番点%％箱社台])(?!も)|(いくら)"
)
_N = "[0-9０-９〇一二三四五六七八九十百千万億数,，.．]+"
_KIND_FORMS: dict[str, str] = {
    "いくら": rf"{_N}\s*(?:円|ドル|ユーロ|ポンド|元|ウォン|フラン|ルピー|セント|万|億|千)|無料|無償|全額",
    "円": rf"{_N}\s*(?:円|万|億)|無料|無償|全額",
    "年": rf"{_N}年|元年",
    "月": rf"{_N}月|[今来翌先前]月",
    "日": rf"{_N}\s*日|末日|[月年]末|月初|[前翌当]日",  # 支払いは何日まで？: 月末まで
    "か月": rf"{_N}\s*(?:[かヶカヵケ箇個]?月|歳|年)",  # 育児休業は何か月: 子が1歳になるまで
    "時間": rf"{_N}\s*(?:時間|分)",
    "度": rf"{_N}\s*(?:度|℃|°|℉)",
    "回": rf"{_N}\s*(?:回|度)",
    "歳": rf"{_N}\s*[歳才]",
    "割": rf"{_N}\s*(?:割|%|％|パーセント)",
    "%": rf"{_N}\s*(?:%|％|パーセント|割)",
    "個": _N,
    "件": _N,
}
_KIND_FORMS.update({"ヶ月": _KIND_FORMS["か月"], "カ月": _KIND_FORMS["か月"], "ヵ月": _KIND_FORMS["か月"]})
_KIND_FORMS.update({"パーセント": _KIND_FORMS["%"], "％": _KIND_FORMS["%"]})
# いつ: any expression of time, loosely (1995年, 江戸時代, 月末, 前日, 毎週, 午後, 〜まで): of JSQuAD's 88 answerable
# questions with いつ, 87 gold answers are one (the other is いつ inside a quoted phrase).
_WHEN = re.compile(
    rf"{_N}\s*(?:年|月|日|時|世紀|週|代)|元年|世紀|時代|年代|時期|期|紀|曜|毎[日週月年朝晩]|[月年週]末|[月年]初|頃|ごろ|旬"
    r"|[春夏秋冬]|以降|以前|直後|直前|当時|現在|今[日年月週]|昔|昨|翌|来[年月週]|前日|当日|後日|戦[前中後]|[朝昼夜]|午[前後]"
    r"|平日|休日|祝日|締め|期限|まで|から"
)
# A sentence shorter than this (characters) says too little alone: the next sentence is quoted with it.
SHORT_SENTENCE = 12


@dataclass(frozen=True)
class Span:
    """A sentence of a text: ``text[start:end]``, stripped."""

    start: int
    end: int


def sentence_spans(text: str) -> list[Span]:
    """The sentences of ``text`` in order (blank ones skipped), each a span of the text itself."""
    spans = []
    for match in _SENTENCE.finditer(text):
        start, end = match.span()
        piece = text[start:end]
        stripped = piece.strip()
        if not stripped:
            continue
        offset = start + len(piece) - len(piece.lstrip())
        spans.append(Span(offset, offset + len(stripped)))
    return spans


@lru_cache(maxsize=8192)
def _folded(text: str) -> str:
    from docindex.text.width import normalize

    return normalize(text).lower()


@lru_cache(maxsize=8192)
def terms(text: str) -> frozenset[str]:
    """The terms of ``text``: character pairs of its runs (a one-character run as itself) and its kanji."""
    found: set[str] = set()
    for run in _RUN.findall(_ASKING_RUNS.sub(" ", _THOUSANDS.sub("", _folded(text)))):
        if len(run) == 1:
            found.add(run)
        else:
            found.update(run[i : i + 2] for i in range(len(run) - 1))
        found.update(ch for ch in run if _KANJI.match(ch) and ch not in INTERROGATIVES)
    return frozenset(found)


def asks_number(question: str) -> bool:
    """Whether the question asks when, how much or how many (its answer holds a number)."""
    return bool(_ASKS_NUMBER.search(question))


def holds_number(text: str) -> bool:
    return bool(_NUMBER.search(text))


@lru_cache(maxsize=1024)
def counted(question: str) -> re.Pattern[str] | None:
    """A number with the counter ``question`` asks for (何度 → ``28度``, いくら → ``3,000円``); None when it asks
    for none. A sentence with a number of another kind (5%, 第2週) is not the answer to 何度."""
    match = _ASKED_COUNTER.search(question)
    if match is None:
        return None
    counter = "円" if match.group(2) else match.group(1)
    return re.compile(f"{_NUMERAL}+{re.escape(counter)}")


@dataclass(frozen=True)
class AskedKind:
    """The kind of answer a question asks for, as the forms it is written in."""

    forms: re.Pattern[str]
    # A counted quantity's forms are exact (3,000円 answers いくら): the file's best sentence holding one may
    # answer in place of its best sentence. The forms of a time are loose (〜まで, 前日): a sentence that holds
    # one answers only if it is the best anyway.
    exact: bool

    def search(self, text: str) -> re.Match[str] | None:
        return self.forms.search(text)


@lru_cache(maxsize=1024)
def asked_kind(question: str) -> AskedKind | None:
    """What the answer to ``question`` must hold when it asks for a counted quantity (何年, いくら, 何日, 何度 ...)
    or a time (いつ): any of the forms it is written in; None when it asks for neither (or its kind is ambiguous)."""
    match = _KIND_ASKED.search(question)
    if match is None:
        return AskedKind(_WHEN, exact=False) if "いつ" in question else None
    counter = "いくら" if match.group(2) else match.group(1)
    form = _KIND_FORMS.get(counter) or rf"{_N}\s*{re.escape(counter)}"
    return AskedKind(re.compile(form), exact=True)


def question_terms(question: str) -> frozenset[str]:
    """The terms of a question (its interrogatives left out)."""
    return terms(question)


@dataclass(frozen=True)
class Weights:
    """How much each of the question's terms counts: rare among the passages read, more."""

    of: dict[str, float]

    @property
    def total(self) -> float:
        return sum(sorted(self.of.values()))

    def coverage(self, held: Iterable[str]) -> float:
        """The weighted share of the question's terms ``held`` has (0..1)."""
        total = self.total
        if not total:
            return 0.0
        # summed in one order: a set's order varies with the process's hash seed, and so would the float sum
        return sum(sorted(self.of.get(term, 0.0) for term in set(held))) / total


# A pair of characters (a word's part) counts this much more than a single kanji.
PAIR_WEIGHT = 1.0
SINGLE_WEIGHT = 0.35


def weights(asked: frozenset[str], texts: Sequence[frozenset[str]]) -> Weights:
    """Each term of the question weighted by its rarity among ``texts`` (the files read: a term every file
    holds tells nothing) and its kind (a pair over a single kanji)."""
    n = len(texts)
    of: dict[str, float] = {}
    for term in asked:
        df = sum(term in held for held in texts)
        rarity = math.log((n + 1) / (df + 0.5)) if n else 1.0
        of[term] = (PAIR_WEIGHT if len(term) > 1 else SINGLE_WEIGHT) * max(0.2, rarity)
    return Weights(of)
