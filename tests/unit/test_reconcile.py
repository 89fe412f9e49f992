"""The reconcile merge-join, on in-memory streams."""

from __future__ import annotations

import pytest

from docindex.core.exceptions import ReconcileError
from docindex.ops.backfill.sources import ListedObject, ListingPage
from docindex.ops.reconcile import Difference, IndexedDoc, Kind, ReconcileReport, merge, prefetched


def pages(*keys_per_page: list[tuple[str, str]]) -> list[ListingPage]:
    return [
        ListingPage(
            f"T{n}",
            tuple(ListedObject(key, etag, 1, key, f"T{n}") for key, etag in page),
        )
        for n, page in enumerate(keys_per_page)
    ]


def differences(listing: list[ListingPage], docs: list[IndexedDoc]) -> list[Difference | None]:
    return list(merge(listing, docs))


def test_missing_stale_orphaned_and_in_sync() -> None:
    listing = pages([("a", "1"), ("c", "3")], [("e", "5"), ("g", "7")])
    docs = [
        IndexedDoc("0", "x"),
        IndexedDoc("a", "1"),
        IndexedDoc("b", "2"),
        IndexedDoc("e", "old"),
        IndexedDoc("z", "9"),
    ]
    result = differences(listing, docs)
    assert result == [
        Difference(Kind.ORPHANED, "0", "T0", index_etag="x"),
        None,
        Difference(Kind.ORPHANED, "b", "T0", index_etag="2"),
        Difference(Kind.MISSING, "c", "T0", s3_etag="3", size=1),
        Difference(Kind.STALE, "e", "T1", s3_etag="5", index_etag="old", size=1),
        Difference(Kind.MISSING, "g", "T1", s3_etag="7", size=1),
        # After the last object: absent as of the last page's request
        Difference(Kind.ORPHANED, "z", "T1", index_etag="9"),
    ]


def test_an_orphan_is_dated_by_the_page_that_covers_its_key() -> None:
    # "d" falls between page 0's last key and page 1's first: page 1 (requested at T1) would have listed it
    listing = pages([("a", "1"), ("c", "3")], [("e", "5")])
    result = differences(
        listing, [IndexedDoc("a", "1"), IndexedDoc("c", "3"), IndexedDoc("d", "4"), IndexedDoc("e", "5")]
    )
    assert Difference(Kind.ORPHANED, "d", "T1", index_etag="4") in result


def test_empty_bucket_makes_every_document_an_orphan() -> None:
    result = differences(pages([]), [IndexedDoc("a", "1")])
    assert result == [Difference(Kind.ORPHANED, "a", "T0", index_etag="1")]


def test_japanese_and_mixed_case_keys_merge_in_utf8_order() -> None:
    keys = ["B", "a", "Z", "é", "営業部/週報", "日本", "ｱ", "𝄞", "~", "a b", "a/b", "a-b", "\uffff"]
    ordered = sorted(keys, key=lambda k: k.encode("utf-8"))
    assert ordered == sorted(keys)  # code point order == UTF-8 byte order
    listing = pages([(k, "e") for k in ordered])
    assert differences(listing, [IndexedDoc(k, "e") for k in ordered]) == [None] * len(keys)


def test_streams_out_of_order_stop_the_merge() -> None:
    with pytest.raises(ReconcileError, match="bucket listing"):
        differences(pages([("b", "1"), ("a", "1")]), [])
    with pytest.raises(ReconcileError, match="index"):
        differences(pages([("z", "1")]), [IndexedDoc("b", "1"), IndexedDoc("a", "1")])
    with pytest.raises(ReconcileError, match="index"):
        differences(pages([("z", "1")]), [IndexedDoc("b", "1"), IndexedDoc("b", "1")])


def test_coverage() -> None:
    report = ReconcileReport("b", "", "i", objects=200, in_sync=150, missing=30, stale=20, orphaned=3)
    assert report.coverage == 75.0
    assert not report.in_step
    assert ReconcileReport("b", "", "i").coverage == 100.0


def test_prefetched_keeps_order_and_propagates_errors() -> None:
    assert list(prefetched(iter(range(100)), buffer=3)) == list(range(100))

    def broken():  # type: ignore[no-untyped-def]
        yield 1
        raise RuntimeError("listing failed")

    stream = prefetched(broken())
    assert next(stream) == 1
    with pytest.raises(RuntimeError, match="listing failed"):
        next(stream)
    early = prefetched(iter(range(1000)), buffer=1)
    assert next(early) == 0
    early.close()
