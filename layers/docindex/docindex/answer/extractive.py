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

from dataclasses import dataclass

from docindex.answer.models import Answer, Citation, Document, Passage
from docindex.answer.refusal import AnswerRule
from docindex.answer.sentences import (
    SHORT_SENTENCE,
    Span,
    Weights,
    asked_kind,
    asks_number,
    counted,
    holds_number,
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

    @property
    def near(self) -> tuple[bool, float | None]:
        return self.document.offered, self.document.standout


def candidates(question: str, documents: list[Document], rule: AnswerRule) -> list[Candidate]:
    """Every sentence of the documents' passages, measured and ranked (best first)."""
    asked = question_terms(question)
    if not asked:
        return []
    weighing = weighed(question, documents)
    number = rule.number_weight if asks_number(question) else 0.0
    counter = counted(question) if rule.counter_weight else None
    kind = asked_kind(question) if rule.kind_required else None
    found: list[Candidate] = []
    for document in documents:
        standout = document.standout if document.standout is not None else 0.0
        keyword = 1.0 / (1 + document.keyword_rank) if document.keyword_rank is not None else 0.0
        # A file's name says what every sentence of it is about (出張旅費規程: 日当は1日につき3,000円).
        named = terms(document.name)
        for passage in document.passages:
            context = weighing.coverage(terms(passage.text) | named)
            spans = sentence_spans(passage.text)
            for i in range(len(spans)):
                measured = _measured(spans, i)
                quoted = _quoted(spans, i, measured)
                sentence = passage.text[measured.start : measured.end]
                coverage = weighing.coverage(terms(sentence) | named)
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
                        kind is None or kind.search(passage.text[quoted.start : quoted.end]) is not None,
                        kind is not None and kind.exact,
                    )
                )
    found.sort(key=lambda c: (-c.score, c.document.path, c.passage.page, c.span.start))
    return found


def _measured(spans: list[Span], i: int) -> Span:
    """Sentence ``i``, with the next one when it is too short to stand alone (a heading, a fragment)."""
    span = spans[i]
    if span.end - span.start < SHORT_SENTENCE and i + 1 < len(spans):
        return Span(span.start, spans[i + 1].end)
    return span


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
    return compose(candidates(question, documents, rule), rule)


def compose(ranked: list[Candidate], rule: AnswerRule) -> Answer:
    """The answer the ranked sentences give under ``rule``: the best one (and others nearly as good from other
    files, each its own citation) when it is near enough, else a refusal."""
    if not ranked:
        return Answer.refused("extractive", "no_passage")
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
    if not best.holds_kind:
        # The question asks for a counted quantity (何年, いくら) or a time (いつ) and the sentence holds none: it
        # answers another question about the same subject (非常食の賞味期限は何年？: the notice gives only the day of
        # handing out). For a quantity, the same file's best sentence that holds one answers instead, if any.
        instead = next((c for c in ranked if c.document is best.document and c.holds_kind), None)
        if instead is None or not best.kind_exact:
            return Answer.refused("extractive", "kind_not_found")
        best = instead
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
    return Answer(" ".join(c.quote for c in chosen), citations, "extractive")


def leading(ranked: list[Candidate], rule: AnswerRule) -> Document | None:
    """The file that stands out alone by meaning: offered by the meaning rule, and standing out at least
    ``rule.min_lead_gap`` more than the next nearest file (None when none does)."""
    files = {id(c.document): c.document for c in ranked if c.document.standout is not None}
    nearest = sorted(files.values(), key=lambda d: -(d.standout or 0.0))
    if len(nearest) < 2 or not nearest[0].offered:
        return None
    gap = (nearest[0].standout or 0.0) - (nearest[1].standout or 0.0)
    return nearest[0] if gap >= rule.min_lead_gap else None
