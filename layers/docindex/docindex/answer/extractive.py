"""``ANSWERS=extractive``: the answer is the sentence (or sentences) of the readable passages that answer the
question, quoted verbatim with the file and page — chosen by measurement, no model to buy.

Each sentence of each passage retrieval returned is measured (docindex.answer.sentences, ``AnswerRule``):
how much of the question's terms it holds (weighted by their rarity among the files read), how much the
sentences around it hold, how far its file stands out by meaning (the search's own measure, from the
question's vector and the passages' — the embedding model already in the search function), whether it is
the passage the vector leg scored its file by, and the file's place among those holding most of the words.
The best sentence is the answer when ``AnswerRule.near_enough`` says so; a sentence too short to stand alone
(a heading, 〜とする。) is quoted with the next. A second file is cited only when its best sentence scores
nearly as well (two files that say the same thing). Every quote is a slice of the passage's own text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docindex.answer.models import Answer, Citation, Document, Passage
from docindex.answer.refusal import AnswerRule
from docindex.answer.sentences import (
    KIND_PERSON,
    KIND_PLACE,
    SHORT_SENTENCE,
    AskedKind,
    Focus,
    Span,
    Weights,
    asked_kind,
    asked_place_or_person,
    asks_number,
    asks_what,
    counted,
    focus,
    holds_date,
    holds_day,
    holds_number,
    holds_person,
    holds_place,
    is_date_line,
    question_terms,
    sentence_spans,
    terms,
    weights,
)

# A quote of two sentences stops at this many characters (one sentence is quoted whole, however long).
MAX_QUOTE_CHARS = 240


@dataclass(frozen=True)
class Candidate:
    """A sentence that might answer, with its measures."""

    document: Document
    passage: Passage
    span: Span
    quote: str
    coverage: float  # of the question's terms, the quote's share
    context: float  # the passage's share
    score: float
    # The quote holds the kind of answer the question asks for (何年: a year; いつ: a time); True when it asks for
    # none. ``kind_exact``: that kind's forms are exact (a quantity), so another sentence holding one may answer.
    holds_kind: bool = True
    kind_exact: bool = False
    # The shortest unit that holds the fact: the sentence, table row or line measured (the answer), a slice of
    # the passage inside ``span`` (the quote, which may give the sentence after it for context).
    unit: Span | None = None
    # The unit may be about the question's focus (面談 in 人事評価の面談はいつ？): it, its page or its file's name
    # holds the focus's words, or its file does not name the question's subject (``names_subject``: 人事評価) -
    # a paraphrase, judged by meaning; a file naming the subject without the focus is no answer.
    # ``focus_in_unit``: the unit itself holds the focus.
    about_focus: bool = True
    names_subject: bool = False
    focus_in_unit: bool = False
    # いつ: the unit names a day or a time (not a year alone); it is a line naming its file's date (日時：...).
    holds_day: bool = False
    date_line: bool = False
    # its file names the question's subject (whether or not it holds the focus)
    file_names_subject: bool = False

    @property
    def near(self) -> tuple[bool, float | None]:
        return self.document.offered, self.document.standout

    # The unit holds the kind asked for itself (else the sentence quoted after it does, and answers with it).
    unit_holds_kind: bool = True

    @property
    def answer_text(self) -> str:
        """The answer this candidate gives: its unit (the quote when it has none, or when only the sentence quoted
        after the unit holds the kind of answer asked for)."""
        if self.unit is None or not self.unit_holds_kind:
            return self.quote
        return self.passage.text[self.unit.start : self.unit.end]


def candidates(question: str, documents: list[Document], rule: AnswerRule) -> list[Candidate]:
    """Every sentence of the documents' passages, measured and ranked (best first)."""
    asked = question_terms(question)
    if not asked:
        return []
    weighing = weighed(question, documents)
    number = rule.number_weight if asks_number(question) else 0.0
    counter = counted(question) if rule.counter_weight else None
    kind = asked_kind(question) if rule.kind_required else None
    asked_focus = focus(question) if rule.focus_required and len(question) <= rule.focus_max_chars else None
    # a question asking what its focus is may be answered in other words: only a file holding none of the focus's
    # characters is left out (海外に出張したときの手当は？: the regulation's 日当 shares 当)
    loosely = asked_focus is not None and not rule.focus_for_what and asks_what(question)
    found: list[Candidate] = []
    for document in documents:
        standout = document.standout if document.standout is not None else 0.0
        keyword = 1.0 / (1 + document.keyword_rank) if document.keyword_rank is not None else 0.0
        # A file's name says what every sentence of it is about (出張旅費規程: 日当は1日につき3,000円).
        named = terms(document.name)
        file_terms = named.union(*(terms(p.text) for p in document.passages))
        # a file naming the question's subject (人事評価) that holds none of its focus's words (面談): no answer
        file_names_subject = asked_focus is not None and asked_focus.names_subject(file_terms)
        names_subject = (
            file_names_subject and asked_focus is not None and asked_focus.absent(file_terms, characters=loosely)
        )
        for passage in document.passages:
            page_terms = terms(passage.text)
            context = weighing.coverage(page_terms | named)
            spans = sentence_spans(passage.text)
            # what the page is about: its file's name and its first line (a notice's or a sheet's title)
            heading = terms(passage.text[spans[0].start : spans[0].end]) if spans else frozenset()
            for i in range(len(spans)):
                measured = _measured(spans, i, passage.text)
                quoted = _quoted(spans, i, measured)
                sentence = passage.text[measured.start : measured.end]
                unit_terms = terms(sentence)
                coverage = weighing.coverage(unit_terms | named)
                held, in_unit = _about(asked_focus, unit_terms, page_terms | named, heading | named)
                score = (
                    coverage
                    + rule.context_weight * context
                    + rule.meaning_weight * standout
                    + rule.offered_weight * document.offered
                    + rule.best_weight * passage.best
                    + rule.keyword_weight * keyword
                    + (number if number and holds_number(sentence) else 0.0)
                    + (rule.counter_weight if counter is not None and counter.search(sentence) else 0.0)
                )
                found.append(
                    Candidate(
                        document,
                        passage,
                        quoted,
                        passage.text[quoted.start : quoted.end],
                        coverage,
                        context,
                        score,
                        _holds(kind, sentence, passage.text[quoted.start : quoted.end]),
                        kind is not None and kind.exact,
                        unit=measured,
                        about_focus=held or not names_subject,
                        names_subject=names_subject,
                        focus_in_unit=in_unit,
                        holds_day=holds_day(sentence),
                        date_line=is_date_line(sentence),
                        file_names_subject=file_names_subject,
                        unit_holds_kind=kind is None or kind.search(sentence) is not None,
                    )
                )
    found.sort(key=lambda c: (-c.score, c.document.path, c.passage.page, c.span.start))
    return found


def _holds(kind: AskedKind | None, unit: str, quote: str) -> bool:
    """Whether the answer holds the kind asked for: in the unit, or in the sentence quoted after it (the answer is
    then both: ``Candidate.answer_text``)."""
    if kind is None:
        return True
    return kind.search(unit) is not None or kind.search(quote) is not None


def _about(
    asked: Focus | None, unit: frozenset[str], page: frozenset[str], heading: frozenset[str]
) -> tuple[bool, bool]:
    """Whether a unit is about the question's focus (it, its page or its file's name holds the focus's words),
    and whether the unit itself holds them. No focus: every unit is about it."""
    if asked is None:
        return True, True
    if asked.held(unit):
        return True, True
    return asked.held(page) or asked.held(heading), False


def _measured(spans: list[Span], i: int, text: str = "") -> Span:
    """Sentence ``i``, with the next one when it is too short to stand alone (a heading, a fragment)."""
    span = spans[i]
    # a short first line (a title, a file's heading) is read with the line after it; a short line further down
    # (a header row, a label) is a unit of its own
    # (a table's header row, 品名・数量・単価, is never read into the row after it: each row names its cells)
    header_row = "・" in text[span.start : span.end]
    apart = (i > 0 or header_row) and _line_apart(text, span, spans[i + 1]) if i + 1 < len(spans) else True
    if span.end - span.start < SHORT_SENTENCE and i + 1 < len(spans) and not apart:
        return Span(span.start, spans[i + 1].end)
    return span


def _line_apart(text: str, span: Span, following: Span) -> bool:
    """Whether ``following`` starts on a line of its own after ``span`` (a title, a header row, a label line: each
    line is a unit of its own)."""
    return "\n" in text[span.end : following.start]


def _quoted(spans: list[Span], i: int, measured: Span) -> Span:
    """What is quoted for sentence ``i``: it and the sentence after it in the passage. A sentence that holds
    the question's words often restates the question, and what the file says next completes it (これを石油諸
    税と言う。, 期間は〜): measured on JSQuAD's calibration half, the gold answer is in the best sentence for
    85 % of the questions and in it or the next for 90 % (bench.answers)."""
    following = next((s for s in spans[i + 1 :] if s.start >= measured.end), None)
    if following is None or following.end - measured.start > MAX_QUOTE_CHARS:
        return measured
    return Span(measured.start, following.end)


def weighed(question: str, documents: list[Document]) -> Weights:
    """The question's term weights among ``documents`` (what ``candidates`` measures coverage with)."""
    held = [terms(d.name).union(*(terms(p.text) for p in d.passages)) for d in documents if d.passages]
    return weights(question_terms(question), held)


def answer(question: str, documents: list[Document], rule: AnswerRule) -> Answer:
    """The extractive answer to ``question`` from ``documents`` (readable files only), or a refusal."""
    return compose(candidates(question, documents, rule), rule, question)


def compose(ranked: list[Candidate], rule: AnswerRule, question: str = "") -> Answer:
    """The answer the ranked sentences give under ``rule``: the best one (and others nearly as good from other
    files, each its own citation) when it is near enough, else a refusal."""
    if not ranked:
        return Answer.refused("extractive", "no_passage")
    # A file that names the question's subject without its focus (人事評価の面談はいつ？ beside the evaluation, which
    # holds no 面談) is no answer: its sentences are left out, and if only such files hold the subject, refused.
    about = [c for c in ranked if c.about_focus]
    if rule.focus_instead_names_subject and not ranked[0].about_focus:
        # the file that would have answered names the subject without the focus: a file holding the focus about
        # another subject (海外に出張したときの手当は？ beside 在宅勤務手当) answers no better
        about = [c for c in about if c.file_names_subject]
    if not about:
        return Answer.refused("extractive", "focus_not_found")
    excluded = len(about) < len(ranked)
    found = _compose(about, rule, question)
    if found.no_answer and excluded and found.reason == "not_near_enough":
        # the files near enough named the subject without what was asked: say so
        return Answer.refused("extractive", "focus_not_found")
    return found


def _compose(ranked: list[Candidate], rule: AnswerRule, question: str) -> Answer:
    # A file flagged at indexing time as carrying instructions aimed at an assistant is never the only source
    # when another readable file holds an answer; alone, it is no answer either.
    trusted = [c for c in ranked if not c.document.flagged]
    if not trusted:
        return Answer.refused("extractive", "flagged_file")
    ranked = trusted
    best = ranked[0]
    if best.coverage < rule.min_coverage:
        # Not held up by its words: the file that leads by meaning, if one does, answers
        lead = leading(ranked, rule)
        if lead is not None:
            best = next(c for c in ranked if c.document is lead)
        elif not rule.near_enough(best.coverage, offered=best.document.offered, standout=best.document.standout):
            return Answer.refused("extractive", "not_near_enough")
    # A sentence holding the question's words in a file about something else (パスワードを忘れた: パスワードは他人と
    # 共有しない): its file itself is not near the question by meaning
    # (judged only when the vector leg ran, and only a file with vectors: one not embedded yet has no score)
    if rule.kind_required:
        kind_found = _of_kind(ranked, best, question)
        if kind_found is None:
            return Answer.refused("extractive", "kind_not_found")
        best = kind_found
    judged = any(c.document.meaning_score is not None for c in ranked)
    if not rule.near_by_meaning(best.document.meaning_score, judged=judged and best.document.embedded):
        return Answer.refused("extractive", "not_near_enough")
    chosen = [best]
    for other in ranked[1:]:
        if len(chosen) >= rule.max_citations or best.score - other.score > rule.second_within:
            break
        if other.document.doc_id in {c.document.doc_id for c in chosen} or other.quote == best.quote:
            continue
        if not other.holds_kind:
            continue
        if rule.near_enough(
            other.coverage, offered=other.document.offered, standout=other.document.standout
        ) and rule.near_by_meaning(other.document.meaning_score, judged=judged and other.document.embedded):
            chosen.append(other)
    citations = tuple(Citation(c.document.doc_id, c.document.path, c.passage.page, c.quote) for c in chosen)
    # a question of no particular kind: a short unit is read on with the sentence after it; one asking where or who
    # (short_unit_reads_on_for_place_or_person) only in running text (a line of its own - 出席者：髙橋、山﨑、佐藤 -
    # names them)
    wanted = asked_place_or_person(question)
    plain = asked_kind(question) is None and wanted is None
    in_text = asked_kind(question) is None and wanted is not None and rule.short_unit_reads_on_for_place_or_person
    answered = (_answered(c, plain=plain, in_text=in_text, question=question) for c in chosen)
    return Answer(" ".join(answered), citations, "extractive")


# A sentence that goes on from the one before it: what it says completes that one (これを石油諸税と言う。).
_GOES_ON = re.compile(
    r"\s*(?:これ|それ|この|その|こう|そう|そこ|ここ|同[じ社年氏]|また|なお|ただし|しかし|さらに|彼|彼女)"
)
# 誰: a unit naming a person answers in place of the best unit only when it holds at least this share of the best
# unit's share of the question's words (chosen on JSQuAD's calibration sets: 0.5 to 0.9 alike, 0.3 answers fewer).
PERSON_INSTEAD_COVERAGE = 0.5
# A unit shorter than this, answering a question that asks for no particular kind, is answered with the sentence
# quoted after it (a sentence that restates the question, and the one that answers it).
SHORT_UNIT = 80


# A question asking what a thing is called (何と呼ぶ, 何という): a unit that does not itself name it (と呼ばれる,
# という) restates the question, and the sentence after it often names it (日本では、これらの空域は…と呼ばれる).
_ASKS_NAME = re.compile(r"何と(?:呼|よ|い|言|称)|なんと(?:呼|よ|い|言)")
_NAMES = re.compile(r"と(?:呼|よ[ばぶ]|い[うい]|言|称|名付)|(?:名|名称|別名|通称)(?:は|を|で|が)")
# いつ answered by a date, a year or a century (19世紀以降, 1870年), not by a loose time word (時代, 当時) alone.
_WHEN = re.compile(r"[0-9０-９〇一二三四五六七八九十百千]+\s*(?:年|月|日|世紀|時|年代)|元年")


def _reads_ahead(question: str, unit: str, rest: str) -> bool:
    """Whether a unit answering ``question`` is read on with the sentence quoted after it (``rest``): when it asks
    what a thing is called or when, and only the sentence after the unit names it or dates it."""
    if _ASKS_NAME.search(question):
        return _NAMES.search(unit) is None and _NAMES.search(rest) is not None
    if "いつ" in question:
        return _WHEN.search(unit) is None and _WHEN.search(rest) is not None
    return False


def _answered(candidate: Candidate, *, plain: bool, in_text: bool = False, question: str = "") -> str:
    """The candidate's answer: its unit, with the sentence quoted after it when that one goes on from it, or when
    the question asks for no kind in particular and the unit is short (SHORT_UNIT: chosen on JSQuAD's calibration
    half, where 40 kept the gold answer in the answer for 0.879 of the answerable questions and 80 for 0.885;
    before, every answer was two sentences: 0.890); ``in_text``: so when the unit is short and the sentence after it
    is on the same line (running text, not a line of its own)."""
    unit = candidate.answer_text
    rest = candidate.quote[len(unit) :] if candidate.quote.startswith(unit) else ""
    same_line = "\n" not in rest[: len(rest) - len(rest.lstrip())]
    short = len(unit) < SHORT_UNIT and (plain or (in_text and same_line))
    if rest.strip() and (_GOES_ON.match(rest) or short or _reads_ahead(question, unit, rest)):
        return candidate.quote
    return unit


def _of_kind(ranked: list[Candidate], best: Candidate, question: str) -> Candidate | None:
    """The unit answering with the kind of answer asked for: ``best``, or another unit of its file that holds the
    kind; None when its file holds none (``kind_not_found``)."""
    if not best.holds_kind:
        # The question asks for a counted quantity (何年, いくら) or a time (いつ) and the sentence holds none: it
        # answers another question about the same subject (非常食の賞味期限は何年？: the notice gives only the day of
        # handing out). For a quantity, the same file's best sentence that holds one answers instead, if any.
        same = (c for c in ranked if c.document is best.document and c.holds_kind and c.about_focus)
        instead = next(same, None) if best.kind_exact else None
        if instead is None:
            instead = _dated(ranked, best) if "いつ" in question else None
            if instead is None:
                return None
        best = instead
    elif "いつ" in question and not best.holds_day:
        # いつ is answered by the day of the asked event, not by any year expression (令和八年度の定期健康診断を…):
        # the line naming its file's date (日時　十一月二十日) answers when the file is about the focus.
        best = _dated(ranked, best) or best
    if "いつ" in question and not best.focus_in_unit and not best.holds_day:
        # a loose time (下期, 次回) in a unit that does not itself hold the focus is not the asked event's time
        return None
    wanted = asked_place_or_person(question)
    if wanted is not None and not _names(best, wanted):
        # どこ needs a place, 誰 a person: the same file's best unit about the focus naming one answers instead; a
        # place is refused without one, a person not (a name written alone - 徳川吉宗 - has no form to know it by).
        # So a person's unit answers instead only when it holds at least PERSON_INSTEAD_COVERAGE of the best unit's
        # share of the question's words: the best unit may name one without a form (称徳天皇が発願して, 新井白石から),
        # and another line of the file that has one (a title, ヨハネス・グーテンベルク) answers another question.
        named = (
            c
            for c in ranked
            if c.document is best.document
            and c.about_focus
            and _names(c, wanted)
            and (wanted == KIND_PLACE or c.coverage >= PERSON_INSTEAD_COVERAGE * best.coverage)
        )
        return next(named, None if wanted == KIND_PLACE else best)
    return best


def _dated(ranked: list[Candidate], best: Candidate) -> Candidate | None:
    """For いつ: the best unit of ``best``'s file naming a day about the focus — the line naming the file's date
    (日時　十一月二十日（木）...) where the file's name or heading holds the focus, else a unit holding the focus
    and a day. None when the file has neither."""
    same = [c for c in ranked if c.document is best.document and c.about_focus]
    return next((c for c in same if c.date_line), None) or next(
        (c for c in same if c.focus_in_unit and c.holds_day and holds_date(c.answer_text)), None
    )


def _names(candidate: Candidate, wanted: str) -> bool:
    text = candidate.answer_text
    return holds_place(text) if wanted == KIND_PLACE else holds_person(text) if wanted == KIND_PERSON else True


def leading(ranked: list[Candidate], rule: AnswerRule) -> Document | None:
    """The file that stands out alone by meaning: offered by the meaning rule, and standing out at least
    ``rule.min_lead_gap`` more than the next nearest file (None when none does)."""
    files = {id(c.document): c.document for c in ranked if c.document.standout is not None}
    nearest = sorted(files.values(), key=lambda d: -(d.standout or 0.0))
    if len(nearest) < 2 or not nearest[0].offered:
        return None
    gap = (nearest[0].standout or 0.0) - (nearest[1].standout or 0.0)
    return nearest[0] if gap >= rule.min_lead_gap else None
