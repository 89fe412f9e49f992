"""When a passage is near enough to answer from, and how sentences are ranked: ``AnswerRule``.

An answer is refused rather than guessed. It extends the rule that decides what the search offers by meaning
(``MeaningRule``, docs/meaning-search.md), which looks at files only, with what only an answer can look at — the
sentence it would quote:

- a sentence is **held up by its words** when it (with the passage around it) holds at least ``min_coverage``
  of the question's terms, weighted by their rarity among the files read (docindex.answer.sentences);
- or **by meaning** when its file is one the meaning rule offers (it stands out from the crowd of nearest
  files) *and* the sentence holds at least ``min_coverage_near`` of the terms, or its file stands out at least
  ``min_standout_alone`` with at least ``min_coverage_alone`` of them;
- or **its file leads**: offered by the meaning rule and standing out ``min_lead_gap`` more than the next
  nearest file — a paraphrase shares few words with its answer (お正月は何日から休み？ / 年末年始休業のお知らせ),
  but its file stands out alone. Its best sentence is then the answer, even when another file's sentence
  shares more words (会社, 何日: words every office file has).

Neither a crowd of files that merely share the subject (their standout is small) nor a single word no file
holds (no sentence holds it) gets an answer, however small the folder: there is no floor of "the nearest
files" here, every quoted sentence must carry the question's words or stand out by meaning. The figures
are chosen by ``bench.meaning`` on JSQuAD's calibration half and the office questions (docs/search-api.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerRule:
    """How sentences are ranked and when the best of them is near enough (``ANSWER_*`` settings)."""

    # Ranking: a sentence's own share of the question's terms, plus these times ...
    context_weight: float = 0.5  # ... the share its passage (the sentences around it) holds
    meaning_weight: float = 10.0  # ... how far its file stands out by meaning (MeaningRule's standout, ~0..0.1)
    offered_weight: float = 0.2  # ... 1 when the meaning rule offers its file (near enough to be worth a look)
    best_weight: float = 0.05  # ... 1 for the passage the vector leg scored its file by
    keyword_weight: float = 0.05  # ... 1 / (1 + rank) among the files that hold most of the words
    number_weight: float = 0.1  # ... 1 when the question asks when or how much and the sentence holds a number
    counter_weight: float = 0.2  # ... 1 when it holds a number with the counter asked for (何度: 28度, not 5%)
    # Near enough: held up by its words ...
    min_coverage: float = 0.4
    # ... or by meaning: its file offered by the meaning rule and the sentence holding this much ...
    min_coverage_near: float = 0.3
    # ... or its file standing out this far with the sentence holding this much.
    min_standout_alone: float = 0.06
    min_coverage_alone: float = 0.0
    # ... or its file leads by meaning: offered, and standing out this much more than the next nearest file
    # (a file that stands out alone: its best sentence answers even when few words are shared).
    min_lead_gap: float = 0.025
    # ... and, whichever of those holds it up, its file is near the question by meaning itself: among the
    # nearest files, its best passage scoring at least this (the embedding model's cosine; 0: no such bar). Only
    # when the vector leg ran (no vectors: words alone decide).
    min_score: float = 0.91
    # A question asking for a counted quantity (何年, いくら, 何日) is answered only by a sentence that holds one
    # (docindex.answer.sentences.asked_kind): the file's best such sentence, else a refusal (``kind_not_found``).
    kind_required: bool = True
    # A file that names the question's subject but not its focus (人事評価 but no 面談) is no answer
    # (docindex.answer.sentences.focus): ``focus_not_found`` when only such files hold the subject.
    focus_required: bool = True
    # ... for a question of at most this many characters: a short question hinges on its focus word (面談, 契約期間);
    # a long one restates its passage in other words, and its topic word is often a paraphrase (動力 for an engine)
    focus_max_chars: int = 24
    # ... a question asking what its focus is (飛行機の動力は, 海外出張の手当は？, 〜を何と呼ぶか) may be answered in
    # other words (ガソリンエンジン, 日当): only a file holding none of the focus's characters is left out, where one
    # asking something of it (when, how much, where, who, how, whether: 面談はいつ？, 夏季休暇は繰り越せる？) needs its
    # words. True: every question needs its focus's words (issue 48's first rule).
    focus_for_what: bool = False
    # When the best unit's file names the subject without the focus, another file answers only if it names the
    # subject too (a file holding the focus about another subject - 在宅勤務手当 for 海外出張の手当 - is no answer).
    focus_instead_names_subject: bool = True
    # A short unit answering どこ or 誰 is answered with the sentence after it in running text, as for a question of
    # no particular kind (火災報知器が鳴ったら…1階へ降りる。集合場所は正門前の駐車場。); a line of its own is the answer
    # alone (出席者：髙橋、山﨑、佐藤). False: the unit alone.
    short_unit_reads_on_for_place_or_person: bool = True
    # At most this many files cited; another file's sentence only when it scores within this of the best (and
    # its file is as near by meaning: ``min_score``).
    max_citations: int = 1
    second_within: float = 0.05

    @classmethod
    def from_settings(cls, settings: object) -> AnswerRule:
        """The rule the ``ANSWER_*`` settings name (docindex.answer.settings.AnswerSettings)."""
        return cls(
            min_coverage=float(getattr(settings, "answer_min_coverage", cls.min_coverage)),
            min_coverage_near=float(getattr(settings, "answer_min_coverage_near", cls.min_coverage_near)),
            min_standout_alone=float(getattr(settings, "answer_min_standout_alone", cls.min_standout_alone)),
            min_coverage_alone=float(getattr(settings, "answer_min_coverage_alone", cls.min_coverage_alone)),
            max_citations=int(getattr(settings, "answer_max_citations", cls.max_citations)),
            min_lead_gap=float(getattr(settings, "answer_min_lead_gap", cls.min_lead_gap)),
            min_score=float(getattr(settings, "answer_min_score", cls.min_score)),
        )

    def near_by_meaning(self, score: float | None, *, judged: bool) -> bool:
        """Whether a file whose best passage scores ``score`` (None: not among the nearest files) may be cited;
        ``judged``: the vector leg ran for this question."""
        return not judged or self.min_score <= 0 or (score is not None and score >= self.min_score)

    def near_enough(self, coverage: float, *, offered: bool, standout: float | None) -> bool:
        """Whether a sentence holding ``coverage`` of the question's terms, in a file ``offered`` by the
        meaning rule that stands out ``standout`` (None: not among the nearest files), may be quoted."""
        if coverage >= self.min_coverage:
            return True
        if offered and coverage >= self.min_coverage_near:
            return True
        return standout is not None and standout >= self.min_standout_alone and coverage >= self.min_coverage_alone
