"""The vector leg's acceptance rule and where its files go (docindex/index/hybrid.py)."""

from __future__ import annotations

import pytest

from docindex.index.hybrid import MeaningRule, VectorHit, accept, on_page, query_kind, vector_hits


def _near(*scores: float, keyword: tuple[int, ...] = ()) -> list[VectorHit]:
    return [VectorHit(doc_id=f"d{n}", score=s, keyword=n in keyword) for n, s in enumerate(scores)]


# A crowd of files that share the subject, none an answer: flat scores.
CROWD = (0.915, 0.913, 0.912, 0.912, 0.911, 0.910, 0.910, 0.909, 0.909, 0.908, 0.907, 0.906)
# The same crowd with an answer standing out in front.
ANSWERED = (0.941, *CROWD[1:])


def test_a_fixed_cut_alone_lets_the_crowd_through_and_a_standout_rule_does_not() -> None:
    cut = MeaningRule(min_score=0.905)
    assert len(accept(_near(*CROWD), rule=cut, keyword_total=0, query="出張のお金を返してもらう手続き")) == len(CROWD)
    standout = MeaningRule(min_score=0.905, standout=0.015, reference=10)
    assert accept(_near(*CROWD), rule=standout, keyword_total=0, query="出張のお金を返してもらう手続き") == []
    assert [
        h.doc_id
        for h in accept(_near(*ANSWERED), rule=standout, keyword_total=0, query="出張のお金を返してもらう手続き")
    ] == ["d0"]


def test_files_that_hold_the_query_are_never_offered_again_by_meaning_but_set_the_scale() -> None:
    rule = MeaningRule(min_score=0.9, spread=0.01)
    near = _near(0.95, 0.945, 0.93, keyword=(0,))
    # d0 holds the words (it is a keyword hit already); d1 is within the spread of d0, d2 is not
    assert [h.doc_id for h in accept(near, rule=rule, keyword_total=1, query="出張のお金を返してもらう手続き")] == [
        "d1"
    ]


def test_keyword_evidence_raises_the_bar_or_closes_it() -> None:
    near = _near(0.93, 0.925)
    assert (
        len(accept(near, rule=MeaningRule(min_score=0.92), keyword_total=0, query="出張のお金を返してもらう手続き"))
        == 2
    )
    raised = MeaningRule(min_score=0.92, keyword_margin=0.008)
    assert [h.doc_id for h in accept(near, rule=raised, keyword_total=3, query="出張のお金を返してもらう手続き")] == [
        "d0"
    ]
    closed = MeaningRule(min_score=0.92, keyword_margin=None)
    assert accept(near, rule=closed, keyword_total=3, query="出張のお金を返してもらう手続き") == []


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("福岡県", "keyword"),
        ("内部統制", "keyword"),
        ("テレワーク", "keyword"),
        ("AB-1234", "keyword"),
        ("No.2024-123", "keyword"),
        ("出張のお金を返してもらう手続き", "words"),
        ("ランチの値段", "words"),
        ("社員旅行 行き先", "words"),
        ("quarterly revenue", "words"),
        ("情報セキュリティ基本方針改定計画書", "words"),
    ],
)
def test_a_name_a_code_or_a_single_word_is_a_keyword_search(query: str, kind: str) -> None:
    assert query_kind(query) == kind


def test_single_words_get_files_by_meaning_as_the_rule_says() -> None:
    near = _near(0.95, 0.90, 0.90)
    base = {"min_score": 0.9, "standout": 0.0}
    assert accept(near, rule=MeaningRule(**base, single_words="never"), keyword_total=0, query="福岡県") == []
    unmatched = MeaningRule(**base, single_words="unmatched")
    assert accept(near, rule=unmatched, keyword_total=2, query="福岡県") == []
    assert len(accept(near, rule=unmatched, keyword_total=0, query="福岡県")) == 3
    assert len(accept(near, rule=MeaningRule(**base, max_files=1), keyword_total=0, query="福岡県")) == 1


def test_files_by_meaning_follow_the_last_keyword_match_across_pages() -> None:
    by_meaning = _near(0.95, 0.94, 0.93)
    # 12 matches, pages of 10: page 1 is all matches, page 2 has the last 2 and then the 3 by meaning
    assert on_page(10, 12, by_meaning, start=0, size=10) == []
    assert [h.doc_id for h in on_page(2, 12, by_meaning, start=10, size=10)] == ["d0", "d1", "d2"]
    # 8 matches, pages of 5: page 2 has 3 matches and 2 by meaning, page 3 the last by meaning
    assert [h.doc_id for h in on_page(3, 8, by_meaning, start=5, size=5)] == ["d0", "d1"]
    assert [h.doc_id for h in on_page(0, 8, by_meaning, start=10, size=5)] == ["d2"]


def test_vector_hits_read_each_documents_best_passage_and_whether_it_holds_the_words() -> None:
    response = {
        "hits": {
            "hits": [
                {
                    "_id": "d1",
                    "_score": 0.91,
                    "_source": {"key": "a/b.txt"},
                    "matched_queries": ["keyword"],
                    "inner_hits": {"passages": {"hits": {"hits": [{"_source": {"text": "旅費の精算", "page": 3}}]}}},
                },
                {"_id": "d2", "_score": 0.80},
            ]
        }
    }
    first, second = vector_hits(response)
    assert first == VectorHit("d1", 0.91, "旅費の精算", 3, keyword=True)
    assert first.source == {"key": "a/b.txt"}
    assert second == VectorHit("d2", 0.80, "", None, keyword=False)


def _unit_vector(*weights: float) -> tuple[float, ...]:
    norm = sum(w * w for w in weights) ** 0.5
    return tuple(w / norm for w in weights)


def _placed(scores: tuple[float, ...], vectors: list[tuple[float, ...]]) -> list[VectorHit]:
    return [VectorHit(doc_id=f"d{n}", score=s, vector=v) for n, (s, v) in enumerate(zip(scores, vectors, strict=True))]


# Six minutes of one series (each near the others) and an answer on its own, in a 4-dimensional toy space.
SERIES = [_unit_vector(1.0, 0.1 * n, 0.05, 0.0) for n in range(6)]
ALONE = _unit_vector(0.1, 0.0, 1.0, 0.3)


def test_crowding_is_how_near_a_file_is_to_the_other_nearest_files_copies_left_out() -> None:
    from docindex.index.hybrid import crowding

    near = _placed((0.93,) * 8, [*SERIES, ALONE, SERIES[0]])
    crowd = crowding(near, neighbours=3)
    # each of the series is crowded; the answer on its own is not
    assert min(crowd[:6]) > crowd[6] + 0.1
    # d7 is a copy of d0 (cosine 1.0): it does not crowd d0 more than d0's other fellows do
    assert crowd[7] == pytest.approx(crowd[0])
    # a hit the cluster returned without a vector gets the others' mean: no discount, no bonus
    bare = [*near[:7], VectorHit("d8", 0.93)]
    assert crowding(bare, neighbours=3)[7] == pytest.approx(sum(crowding(bare, 3)[:7]) / 7)


def test_a_crowded_nearest_file_is_discounted_and_an_answer_on_its_own_is_offered_first() -> None:
    # Given the nearest files: the series scoring a little higher than the answer on its own
    near = _placed((0.935, 0.934, 0.933, 0.932, 0.931, 0.930, 0.929), [*SERIES, ALONE])
    query = "出張のお金を返してもらう手続き"
    plain = MeaningRule(standout=0.002, reference=7)
    weighed = MeaningRule(standout=0.02, reference=7, crowding=0.75, neighbours=3, lead=0.05)
    # Without crowding the series leads and the answer is last; weighed, the answer stands out alone
    assert accept(near, rule=plain, keyword_total=0, query=query)[0].doc_id == "d0"
    assert [h.doc_id for h in accept(near, rule=weighed, keyword_total=0, query=query)] == ["d6"]
    # A crowd with nothing on its own: the best does not lead by enough, so nothing is offered
    crowd = _placed((0.935, 0.934, 0.933, 0.932, 0.931, 0.930), SERIES)
    assert accept(crowd, rule=weighed, keyword_total=0, query=query) == []


def test_a_name_is_a_keyword_search_only_when_the_rule_says_so() -> None:
    assert MeaningRule(single_words="unmatched").keyword_search("福岡県")
    assert MeaningRule(single_words="never").keyword_search("AB-1234")
    assert not MeaningRule(single_words="always").keyword_search("福岡県")
    assert not MeaningRule(single_words="unmatched").keyword_search("出張のお金を返してもらう手続き")


def test_the_vector_leg_asks_for_the_best_passages_vector_only_when_crowding_is_weighed() -> None:
    from docindex.index.hybrid import vector_body

    def fields(body: dict[str, object]) -> list[str]:
        return body["query"]["nested"]["inner_hits"]["_source"]["includes"]  # type: ignore[index]

    assert "passages.vector" not in fields(vector_body([0.1] * 4, k=10, filters=[]))
    assert "passages.vector" in fields(vector_body([0.1] * 4, k=10, filters=[], vectors=True))
    response = {
        "hits": {
            "hits": [
                {
                    "_id": "d1",
                    "_score": 0.9,
                    "inner_hits": {"passages": {"hits": {"hits": [{"_source": {"text": "t", "vector": [0.5, 0.5]}}]}}},
                }
            ]
        }
    }
    assert vector_hits(response)[0].vector == (0.5, 0.5)


def test_a_warm_process_embeds_a_query_once_and_keeps_only_the_last_ones() -> None:
    import time

    from docindex.embed import VectorSpec
    from docindex.embed.local import LocalE5
    from docindex.index import hybrid

    class Counting:
        """The real model, counting what it is asked to embed."""

        def __init__(self) -> None:
            self.model = LocalE5()
            self.model_id, self.dimension, self.asked = self.model.model_id, self.model.dimension, 0

        def query(self, text: str) -> list[float]:
            self.asked += 1
            return self.model.query(text)

    client, embedder = object(), Counting()
    hybrid._query_vectors.clear()  # what earlier tests in this process asked
    hybrid._index_vectors[(id(client), "docs")] = (time.monotonic(), VectorSpec(embedder.model_id, 384))
    first = hybrid.query_vector(client, "docs", "出張のお金を返してもらう手続き", embedder)  # type: ignore[arg-type]
    again = hybrid.query_vector(client, "docs", "出張のお金を返してもらう手続き ", embedder)  # type: ignore[arg-type]
    # the same query again (the next page, another facet): the same vector, not embedded again
    assert embedder.asked == 1
    assert again == pytest.approx(first, abs=1e-6)
    # the cache is bounded: the oldest query falls out first
    kept = hybrid.QUERY_VECTORS_KEPT
    try:
        hybrid.QUERY_VECTORS_KEPT = 2
        for text in ("有休は何日もらえる", "給料日はいつ"):
            hybrid.query_vector(client, "docs", text, embedder)  # type: ignore[arg-type]
        hybrid.query_vector(client, "docs", "出張のお金を返してもらう手続き", embedder)  # type: ignore[arg-type]
    finally:
        hybrid.QUERY_VECTORS_KEPT = kept
    assert embedder.asked == 4


def test_a_small_folders_file_unlike_the_rest_no_longer_lets_half_the_folder_stand_out() -> None:
    """Issue 42: in a folder of about twenty files, a single word no file holds got files by meaning, because the
    small-folder rule measured the standout above the *last* file — often one unlike the rest (an English memo, a
    CSV, a scan known by its name). Now above the 10th, with a lead for the best."""
    from dataclasses import replace

    from docindex.core.settings import EmbeddingSettings

    rule = MeaningRule.from_settings(EmbeddingSettings.from_env({}))
    # nineteen readable files: a crowd near 0.92, three a little nearer, and one far off (a CSV)
    scores = [0.931, 0.929, 0.927, *[0.921 - i * 0.0005 for i in range(15)], 0.862]
    folder = [VectorHit(doc_id=f"f{i:02d}", score=s, passage="社内の行事と研修の予定") for i, s in enumerate(scores)]
    assert accept(folder, rule=rule, keyword_total=0, query="ブロックチェーン") == []
    # issue 35's small-folder rule (above the last file, no lead) offered the three
    assert rule.sparse is not None
    before = replace(rule, sparse=replace(rule.sparse, reference=20, lead=None))
    assert len(accept(folder, rule=before, keyword_total=0, query="ブロックチェーン")) == 3
    # a file that stands out by meaning is still offered
    leading = [VectorHit(doc_id="notice", score=0.952, passage="年末年始休業のお知らせ"), *folder[3:]]
    assert [h.doc_id for h in accept(leading, rule=rule, keyword_total=0, query="お正月は何日から休み？")] == ["notice"]
