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


_COUNTED_THINGS = frozenset({"台", "個", "本", "件", "箱", "枚", "部", "点"})


@lru_cache(maxsize=1024)
def asked_kind(question: str) -> AskedKind | None:
    """What the answer to ``question`` must hold when it asks for a counted quantity (何年, いくら, 何日, 何度 ...)
    or a time (いつ): any of the forms it is written in; None when it asks for neither (or its kind is ambiguous)."""
    match = _KIND_ASKED.search(question)
    if match is None:
        if "いつ" in question:
            return AskedKind(_WHEN, exact=False)
        if re.search("いくつ(?!か|も)", question):
            return AskedKind(re.compile(_N), exact=True)
        word = focus_word(question) or ""
        if word.endswith(_TIME_WORDS):
            # the word asked about names a time (契約期間は？, 申請期限は？): its answer holds one
            return AskedKind(_WHEN, exact=False)
        # a price's label asked about (ノートPCの単価は？) asks for an amount, as いくら does
        return AskedKind(re.compile(_KIND_FORMS["いくら"]), exact=True) if asks_price(question) else None
    counter = "いくら" if match.group(2) else match.group(1)
    form = _KIND_FORMS.get(counter) or rf"{_N}\s*{re.escape(counter)}"
    if counter in _COUNTED_THINGS:
        # a number in a quantity column counts things too (a sheet's 数量 10 holds no 台)
        form += rf"|(?:数量|個数|台数|本数|件数|枚数|部数)\s*[：:]?\s*{_N}"
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


# -- what the question asks about (its focus) ------------------------------------------------------------------

# The particle after the word a question is about: 面談は, 単価って, 契約期間とは, 誰が, 何を (one or two kana of
# its word's own ending may stand between: 夏休みは, 申し込みは).
_TOPIC = re.compile(r"[ぁ-ゖ]{0,2}?(?:って|とは|は|が|を)")
# A share of the focus's terms (pairs and kanji, by kind only) a text must hold to be about it.
FOCUS_HELD = 0.5
# A share of the question's other terms a file must hold to name the question's subject.
SUBJECT_HELD = 0.5


@dataclass(frozen=True)
class Focus:
    """What a question asks about (``head``: 面談 in 人事評価の面談はいつ？) and the words naming its subject
    (``subject``: 人事評価)."""

    head: frozenset[str]
    subject: frozenset[str]

    def held(self, held: frozenset[str]) -> bool:
        """Whether a text whose terms are ``held`` is about the focus (by words: pairs and kanji, folded)."""
        return _share(self.head, held) >= FOCUS_HELD

    def absent(self, held: frozenset[str], *, characters: bool = False) -> bool:
        """Whether a text whose terms are ``held`` holds none of the focus's words (none of its character pairs:
        面談 nowhere in the evaluation); a focus of one kanji is never judged absent. ``characters``: nor any of its
        kanji - what a question asking what its focus is needs, whose answer may name it in other words that share
        one (手当 - 日当, 動力 - 自動車の原動機)."""
        pairs = {t for t in self.head if len(t) > 1}
        if characters:
            return bool(pairs) and not self.head & held
        return bool(pairs) and not pairs & held

    def names_subject(self, held: frozenset[str]) -> bool:
        """Whether a text whose terms are ``held`` names the question's subject (its other words)."""
        return bool(self.subject) and _share(self.subject, held) >= SUBJECT_HELD


def _share(wanted: frozenset[str], held: frozenset[str]) -> float:
    # summed in one order: a set's order varies with the process's hash seed, and so would a share at its bound
    # (海外に出張した: 出張, 出, 張 are 1.7 of 3.4, exactly SUBJECT_HELD, or a hair under it)
    total = sum(sorted(PAIR_WEIGHT if len(t) > 1 else SINGLE_WEIGHT for t in wanted))
    found = sum(sorted(PAIR_WEIGHT if len(t) > 1 else SINGLE_WEIGHT for t in wanted & held))
    return found / total if total else 0.0


@lru_cache(maxsize=1024)
def focus_word(question: str) -> str | None:
    """The word the question's topic particle follows, as folded (単価 in ノートPCの単価は？); None without one."""
    folded = _ASKING_RUNS.sub(" ", _THOUSANDS.sub("", _folded(question)))
    for run in _RUN.finditer(folded):
        match = _TOPIC.match(folded, run.end())
        if match is not None and match.group().endswith(_THEME):
            return run.group()
    return None


# What a question asks when it asks what its focus is: 何 (not a counter's: 何年, 何日 ask for a kind), or the
# question ends at the topic particle (飛行機の動力は, 手当は？).
_WHAT = re.compile(r"何(?![年月日時回人歳割円個件倍度位番世紀点%％箱社台]|[かヶカヵ]月|パーセント|キロ|メートル)")
_ENDS_AT_TOPIC = re.compile(r"(?:って|とは|は)\s*[?？。．.!！]*\s*$")


@lru_cache(maxsize=1024)
def asks_what(question: str) -> bool:
    """Whether ``question`` asks what its focus is - its answer may name the focus in other words (飛行機の動力は:
    ガソリンエンジン; 海外に出張したときの手当は？: 日当) - rather than something of it: when, how much, where, who
    (面談はいつ？, 会場は？), how or whether (夏季休暇は翌年に繰り越せる？), or what a word naming the kind of answer
    says of it (議決権行使の方法は？)."""
    if asked_kind(question) is not None or asked_place_or_person(question) is not None:
        return False
    word = focus_word(question)
    if word is not None and (word in KIND_WORDS or any(len(k) > 1 and word.endswith(k) for k in KIND_WORDS)):
        return False
    return _WHAT.search(question) is not None or _ENDS_AT_TOPIC.search(_folded(question)) is not None


@lru_cache(maxsize=1024)
def focus(question: str) -> Focus | None:
    """The word ``question`` asks about: the word its topic particle follows (面談 in 人事評価の面談はいつ？, 単価
    in ノートPCの単価はいくら？, 年末年始 in 年末年始はいつから休み？), with the words naming its subject (人事評価,
    ノートPC); None when no particle marks one (健診の日に休んでしまった) or it is the question's only word."""
    folded = _ASKING_RUNS.sub(" ", _THOUSANDS.sub("", _folded(question)))
    runs = [r for r in _RUN.finditer(folded) if terms(r.group())]
    marked = [i for i, r in enumerate(runs) if (m := _TOPIC.match(folded, r.end())) and m.group().endswith(_THEME)]
    marked = marked or [i for i, r in enumerate(runs) if _TOPIC.match(folded, r.end())]
    if not marked:
        return None
    at = marked[0]
    # a word naming the kind of answer (名前, 場所, 上限, 方法) is what is asked for, not what it is about: the word
    # before it is the focus (清水建設の本社の場所は？ -> 本社), and a word ending in one is its first part
    # (申請期限 -> 申請, 新聞社名 -> 新聞社)
    while at > 0 and runs[at].group() in KIND_WORDS:
        at -= 1
    word = _without_kind(runs[at].group())
    if not word:
        return None
    head = terms(word)
    others = frozenset().union(*(terms(r.group()) for i, r in enumerate(runs) if i != at)) - head
    return Focus(head, others)


def _without_kind(word: str) -> str:
    if word in KIND_WORDS or word in _PLACE_WORDS or word in _PERSON_WORDS or word in _TIME_WORDS:
        return ""
    for kind in sorted(KIND_WORDS, key=len, reverse=True):
        if len(kind) > 1 and word.endswith(kind) and len(word) - len(kind) >= 2:
            return word[: -len(kind)]
    return word


# The topic particles proper (は, って, とは): the word before one is the focus, before が or を only without one.
_THEME = ("は", "って", "とは")
# Words that name the kind of answer asked for rather than what the question is about.
KIND_WORDS = frozenset(
    {
        "名前",
        "名",
        "名称",
        "氏名",
        "場所",
        "所在地",
        "住所",
        "人物",
        "人",
        "職業",
        "方法",
        "やり方",
        "仕方",
        "手順",
        "内容",
        "理由",
        "原因",
        "目的",
        "時期",
        "日時",
        "日付",
        "日程",
        "期限",
        "期間",
        "上限",
        "下限",
        "金額",
        "値段",
        "費用",
        "料金",
        "連絡先",
        "略称",
        "正式名称",
        "種類",
        "数",
        "人数",
        "割合",
        "特徴",
        "意味",
        "由来",
        "語源",
        "役割",
        "結果",
        "体制",
        "形式",
        "単位",
        "年",
        "月",
        "日",
        "時間",
        "メンバー",
        "担当",
        "担当者",
        "タイトル",
        "題名",
        "出来事",
        "事件",
        "会社",
        "企業",
        "団体",
        "組織",
        "対象",
        "言語",
        "国",
        "地域",
        "都市",
        "人口",
        "パーセント",
        "割",
        "もの",
        "こと",
        "作品",
        "番号",
        "条件",
        "基準",
        "規模",
        "順位",
        "順番",
        "回数",
        "総数",
        "比率",
        "作者",
        "著者",
        "創始者",
        "設立者",
        "代表",
        "最初",
        "最後",
        "誕生日",
        "生年月日",
        "生誕地",
        "出生地",
        "出身地",
        "出身",
        "死因",
        "別名",
        "別称",
        "通称",
        "愛称",
        "異名",
        "本名",
        "フルネーム",
        "言葉",
        "用語",
        "呼び名",
        "記号",
        "存在",
        "公用語",
        "部位",
        "政治家",
        "医師",
        "業種",
        "職種",
        "分野",
        "ジャンル",
    }
)


# -- the kinds of answer a question asks for, beyond counted quantities -----------------------------------------

# A number in a priced column or after a price's label: 単価 128000, 金額：158,000, 保守費用 1,200,000円.
_PRICE_WORDS = r"(?:単価|価格|金額|料金|費用|代金|合計|小計|税込|税別|見積額|請求額|請求金額|定価|売価|額)"
_PRICED = rf"{_PRICE_WORDS}\s*[：:]?\s*[¥￥]?\s*{_N}"
# A place: a place's label, an address or a room, a building's parts, a direction from a landmark.
_PLACE = re.compile(
    r"場所|会場|所在地|住所|集合場所|設置場所|出張先|訪問先|納品先|提出先|宛先|窓口|受付|"
    r"[都道府県市区町村郡州国島]|[室階館棟駅港]|本社|支社|支店|営業所|工場|倉庫|ロビー|会議室|事務所|"
    r"[前後横隣奥側所場]|[東西南北]|[ァ-ヴー]{3,}"
)
# A person: a person's label, an honorific or a role, a katakana name.
_PERSON = re.compile(
    r"担当|出席者|申請者|責任者|講師|氏名|名前|作成者|管理者|連絡先|議長|委員|本人|"
    r"さん|様|氏|殿|先生|社長|部長|課長|係長|主任|者|員|長|家|[ァ-ヴー]{2,}"
)
# いつ answered by a day or a time, not a year alone: 10月15日, 十一月二十日, 9:00, 午前九時, 月末, 前日, 曜日.
# ... of them, the forms that date it (a day's or a time's number, 午前, 上旬, 曜), not the words (今日, 前日, 日程).
_DATED = rf"{_N}\s*(?:月\s*{_N}\s*日|日|時|:[0-9])|[上中下]旬|曜|午[前後]|正午"
_DATE = re.compile(_DATED)
_DAY = re.compile(rf"{_DATED}|[月年]末|月初|[前翌当後]日|今日|明日|毎[日週月]|日時|日程|期日|開催日|実施日")
# A line naming the date of what a notice or minutes is about: 日時　十一月二十日, 期日：10月10日.
_DATE_LABEL = re.compile(
    r"\s*(?:日時|日程|期日|開催日|実施日|日付|開催|実施|期限|締切|締め切り)\s*(?:[：:\s]|(?=[0-9０-９〇一二三四五六七八九十]))"
)

# ``asked_kind``'s kinds, by name (reported with a refusal's reason, and chosen by in ``compose``).
KIND_PLACE = "place"
KIND_PERSON = "person"


# Words asked about that name a time, a place or a person (契約期間, 会場, 担当者): the kind of answer they need.
_TIME_WORDS = ("期間", "期限", "日時", "日程", "時期", "日付", "締め切り", "締切", "誕生日", "開催日", "発売日")
_PLACE_WORDS = ("場所", "所在地", "住所", "会場", "集合場所", "設置場所", "提出先", "窓口")
_PERSON_WORDS = ("担当者", "人物", "氏名", "講師", "責任者", "出席者", "作成者", "申請者")


@lru_cache(maxsize=1024)
def asked_place_or_person(question: str) -> str | None:
    """``place`` for どこ (or a place's label asked about: 会場は？), ``person`` for 誰 (どなた, 担当者は？): what the
    answer must name; None otherwise."""
    word = focus_word(question) or ""
    if "どこ" in question or "どちら" in question or word.endswith(_PLACE_WORDS):
        return KIND_PLACE
    if "誰" in question or "どなた" in question or "だれ" in question or word.endswith(_PERSON_WORDS):
        return KIND_PERSON
    return None


def holds_place(text: str) -> bool:
    return _PLACE.search(text) is not None


def holds_person(text: str) -> bool:
    return _PERSON.search(text) is not None


def holds_date(text: str) -> bool:
    """Whether ``text`` names a day or a time by its date (10月15日, 十一月二十日, 9:00, 午前, 上旬) - not by a word
    that only sounds like one (今日のエクソンモービル, 前日)."""
    return _DATE.search(text) is not None


def holds_day(text: str) -> bool:
    """Whether ``text`` names a day or a time of day (not a year alone)."""
    return _DAY.search(text) is not None


def is_date_line(text: str) -> bool:
    """Whether ``text`` is a line naming the date of what its file is about (日時　十一月二十日（木）...)."""
    return _DATE_LABEL.match(text) is not None and holds_day(text)


def asks_price(question: str) -> bool:
    """Whether the question asks for an amount: いくら, or a price's label is what it asks about (ノートPCの単価は？,
    not 原油価格が上がるとどうなるか)."""
    if "いくら" in question:
        return True
    word = focus_word(question)
    return word is not None and re.search(f"{_PRICE_WORDS}$", word) is not None


# いくら and 何円 also accept a number in a priced column (a sheet's 単価 128000 holds no 円).
_KIND_FORMS["いくら"] += f"|{_PRICED}"
_KIND_FORMS["円"] += f"|{_PRICED}"
