"""Reciprocal-rank fusion of the keyword and vector legs (docindex/index/hybrid.py)."""

from __future__ import annotations

from docindex.index.hybrid import VectorHit, fuse, vector_hits


def _v(*ids: str) -> list[VectorHit]:
    return [VectorHit(doc_id=i, score=1.0 - n / 100) for n, i in enumerate(ids)]


def test_a_document_both_legs_found_beats_one_found_by_one_leg_only() -> None:
    fused = fuse(["k1", "both"], _v("v1", "both"))
    assert fused.order[0] == "both"
    assert set(fused.order) == {"k1", "both", "v1"}


def test_documents_matching_every_word_stay_ahead_of_meaning_only_ones() -> None:
    fused = fuse(["exact"], _v("close1", "close2", "exact"), first={"exact"})
    assert fused.order == ["exact", "close1", "close2"]


def test_the_vector_leg_does_not_reorder_the_exact_matches() -> None:
    # The vector leg likes the keyword leg's second match best: the exact matches keep their order
    fused = fuse(["first", "second"], _v("second", "close", "first"), first={"first", "second"})
    assert fused.order == ["first", "second", "close"]


def test_ties_keep_the_keyword_order_then_the_vector_order() -> None:
    assert fuse(["a", "b"], []).order == ["a", "b"]
    assert fuse([], _v("x", "y")).order == ["x", "y"]
    # Rank 1 of each leg ties: the keyword leg's comes first.
    assert fuse(["k"], _v("v")).order == ["k", "v"]


def test_pages_slice_the_fused_order_and_vector_hits_keep_their_passage() -> None:
    fused = fuse([f"k{i}" for i in range(5)], _v("v0", "k2"))
    assert fused.page(0, 2) == fused.order[:2]
    assert fused.page(6, 10) == []
    assert fused.vector["k2"].score < fused.vector["v0"].score


def test_vector_hits_read_each_documents_best_passage() -> None:
    response = {
        "hits": {
            "hits": [
                {
                    "_id": "d1",
                    "_score": 0.91,
                    "inner_hits": {"passages": {"hits": {"hits": [{"_source": {"text": "旅費の精算", "page": 3}}]}}},
                },
                {"_id": "d2", "_score": 0.80},
            ]
        }
    }
    assert vector_hits(response) == [
        VectorHit("d1", 0.91, "旅費の精算", 3),
        VectorHit("d2", 0.80, "", None),
    ]
