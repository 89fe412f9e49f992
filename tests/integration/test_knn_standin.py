"""The local k-NN stand-in answers docindex's vector queries, filter first (devkit/local/knn.py).

Both ways of finding the nearest — the approximate HNSW graph ``docindex local up`` runs and the
exact scan — answer the same requests; the exact one is the reference the approximate one is
held to.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import RequestError

from devkit.faults.proxy import Proxy
from devkit.local.knn import ExactKnn, HnswKnn, KnnStandIn, encoding_of

pytestmark = pytest.mark.integration

DIM = 8
MAPPING = {
    "settings": {"index": {"knn": True}},
    "mappings": {
        "properties": {
            "title": {"type": "keyword"},
            "allow": {"type": "keyword"},
            "passages": {
                "type": "nested",
                "properties": {
                    "vector": {
                        "type": "knn_vector",
                        "dimension": DIM,
                        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
                    },
                    "start": {"type": "integer"},
                },
            },
        }
    },
}


@pytest.fixture(params=["hnsw", "exact"])
def knn(request: pytest.FixtureRequest, osmem_url: str) -> Iterator[tuple[OpenSearch, KnnStandIn]]:
    behaviour: KnnStandIn = HnswKnn() if request.param == "hnsw" else ExactKnn()
    with Proxy(osmem_url, behaviour) as proxy:
        yield OpenSearch(hosts=[proxy.url], timeout=30), behaviour


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def _nested_knn(vector: list[float], k: int, allow: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"vector": vector, "k": k}
    if allow:
        spec["filter"] = {"term": {"allow": allow}}
    return {
        "size": k,
        "_source": ["title"],
        "query": {
            "nested": {
                "path": "passages",
                "score_mode": "max",
                "query": {"knn": {"passages.vector": spec}},
                "inner_hits": {"size": 1, "_source": {"includes": ["passages.start"]}},
            }
        },
    }


def _best(query: list[float], vectors: list[list[float]]) -> tuple[float, int]:
    scores = [(1 + sum(a * b for a, b in zip(query, v, strict=True))) / 2 for v in vectors]
    return max(scores), scores.index(max(scores))


def test_nearest_documents_by_their_best_passage_within_the_filter(knn: tuple[OpenSearch, KnnStandIn]) -> None:
    client, behaviour = knn
    rng = random.Random(7)
    client.indices.create(index="docs", body=MAPPING)
    documents = {}
    for n in range(30):
        vectors = [_unit([rng.gauss(0, 1) for _ in range(DIM)]) for _ in range(rng.randint(1, 4))]
        documents[f"d{n}"] = (("sales" if n % 3 else "hr"), vectors)
        client.index(
            index="docs",
            id=f"d{n}",
            body={
                "title": f"doc {n}",
                "allow": documents[f"d{n}"][0],
                "passages": [{"vector": v, "start": 100 * i} for i, v in enumerate(vectors)],
            },
        )
    client.indices.refresh(index="docs")
    query = _unit([rng.gauss(0, 1) for _ in range(DIM)])

    # Given the exact answer, computed here
    expected = sorted(
        ((_best(query, v)[0], doc) for doc, (allow, v) in documents.items() if allow == "sales"), reverse=True
    )[:5]

    # When docindex's vector query runs through the stand-in with the permission filter
    response = client.search(index="docs", body=_nested_knn(query, 5, allow="sales"))

    # Then the k nearest permitted documents come back in order, with OpenSearch's cosine scores
    hits = response["hits"]["hits"]
    assert [h["_id"] for h in hits] == [doc for _, doc in expected]
    assert [round(h["_score"], 5) for h in hits] == [round(score, 5) for score, _ in expected]
    assert all(documents[h["_id"]][0] == "sales" for h in hits)
    # and each names its best passage
    for hit in hits:
        (inner,) = hit["inner_hits"]["passages"]["hits"]["hits"]
        offset = _best(query, documents[hit["_id"]][1])[1]
        assert inner["_nested"] == {"field": "passages", "offset": offset}
        assert inner["_source"] == {"start": 100 * offset}
    assert behaviour.knn_queries == 1


def test_a_filter_nothing_passes_finds_nothing_and_plain_searches_pass_through(
    knn: tuple[OpenSearch, KnnStandIn],
) -> None:
    client, behaviour = knn
    client.indices.create(index="docs", body=MAPPING)
    client.index(index="docs", id="a", body={"title": "a", "allow": "hr", "passages": [{"vector": [1.0] * DIM}]})
    client.indices.refresh(index="docs")
    assert client.search(index="docs", body=_nested_knn([1.0] * DIM, 3, allow="sales"))["hits"]["hits"] == []
    assert client.search(index="docs", body={"query": {"term": {"title": "a"}}})["hits"]["total"]["value"] == 1
    assert behaviour.knn_queries == 1
    with pytest.raises(RequestError):
        client.search(index="docs", body=_nested_knn([], 3))


def test_the_graph_finds_what_the_exact_reference_finds_and_follows_rewrites(osmem_url: str) -> None:
    # Given 900 documents of one to three passages, two thirds of them readable by "sales": enough
    # that the approximate stand-in walks its graph instead of scanning the allowed passages
    rng = random.Random(11)
    dim = 16
    mapping = json.loads(json.dumps(MAPPING).replace(f'"dimension": {DIM}', f'"dimension": {dim}'))
    OpenSearch(hosts=[osmem_url], timeout=60).indices.create(index="docs", body=mapping)
    documents = {
        f"d{n}": ("sales" if n % 3 else "hr", [_unit([rng.gauss(0, 1) for _ in range(dim)]) for _ in range(1 + n % 3)])
        for n in range(900)
    }
    actions = [
        {"_index": "docs", "_id": doc, "_source": {"allow": allow, "passages": [{"vector": v} for v in vectors]}}
        for doc, (allow, vectors) in documents.items()
    ]
    helpers.bulk(OpenSearch(hosts=[osmem_url], timeout=60), actions, refresh=True)
    queries = [_unit([rng.gauss(0, 1) for _ in range(dim)]) for _ in range(12)]
    hnsw, exact = HnswKnn(), ExactKnn()
    with Proxy(osmem_url, hnsw) as approximate, Proxy(osmem_url, exact) as reference:
        fast, slow = OpenSearch(hosts=[approximate.url], timeout=60), OpenSearch(hosts=[reference.url], timeout=60)

        def ids(client: OpenSearch, query: list[float]) -> list[str]:
            return [h["_id"] for h in client.search(index="docs", body=_nested_knn(query, 10, "sales"))["hits"]["hits"]]

        # When the same permission-filtered queries go to both
        found = [(ids(fast, q), ids(slow, q)) for q in queries]
        # Then the graph finds nearly every one of the exact ten nearest (recall@10), and only readable ones
        recall = sum(len(set(a) & set(e)) for a, e in found) / sum(len(e) for _, e in found)
        assert recall >= 0.95, recall
        assert all(documents[doc][0] == "sales" for approx, _ in found for doc in approx)
        assert hnsw.documents_read == 600  # the readable documents' vectors, read once
        # When the nearest document is rewritten far away, and another is deleted
        nearest, second = found[0][1][0], found[0][1][1]
        far = [-x for x in queries[0]]
        fast.index(index="docs", id=nearest, body={"allow": "sales", "passages": [{"vector": far}]}, refresh=True)
        fast.delete(index="docs", id=second, refresh=True)
        # Then the graph follows: only the rewritten document is read again, and neither is found
        after = ids(fast, queries[0])
        assert nearest not in after
        assert second not in after
        assert after == ids(slow, queries[0])
        assert hnsw.documents_read == 601


def test_an_msearch_with_a_knn_search_is_answered_beside_a_plain_one(knn: tuple[OpenSearch, KnnStandIn]) -> None:
    client, behaviour = knn
    client.indices.create(index="docs", body=MAPPING)
    near, far = _unit([1.0] + [0.0] * (DIM - 1)), _unit([-1.0] + [0.1] * (DIM - 1))
    client.index(index="docs", id="near", body={"title": "n", "allow": "x", "passages": [{"vector": near, "start": 5}]})
    client.index(index="docs", id="far", body={"title": "f", "allow": "x", "passages": [{"vector": far, "start": 9}]})
    client.indices.refresh(index="docs")
    vector_search = _nested_knn(near, 1, allow="x")
    # the vector search also says which of its hits match a keyword query (a named clause, no score)
    vector_search["query"] = {
        "bool": {
            "must": [vector_search["query"]],
            "should": [{"constant_score": {"filter": {"term": {"title": "n"}}, "boost": 0, "_name": "keyword"}}],
        }
    }
    response = client.msearch(
        body=[{"index": "docs"}, {"query": {"term": {"title": "f"}}}, {"index": "docs"}, vector_search]
    )
    plain, vector = response["responses"]
    assert [h["_id"] for h in plain["hits"]["hits"]] == ["far"]
    (hit,) = vector["hits"]["hits"]
    assert hit["_id"] == "near"
    assert hit["_score"] == pytest.approx(1.0)
    assert hit["matched_queries"] == ["keyword"]
    assert hit["inner_hits"]["passages"]["hits"]["hits"][0]["_source"] == {"start": 5}
    assert behaviour.knn_queries == 1


@pytest.mark.parametrize(
    ("field", "encoding"),
    [
        ({"type": "knn_vector", "dimension": 4}, "float"),
        ({"type": "knn_vector", "dimension": 4, "data_type": "byte"}, "int8"),
        ({"type": "knn_vector", "method": {"engine": "faiss", "parameters": {"encoder": {"name": "sq"}}}}, "fp16"),
        (
            {"type": "knn_vector", "method": {"parameters": {"encoder": {"name": "sq", "parameters": {"bits": 7}}}}},
            "int8",
        ),
        ({"type": "knn_vector", "mode": "on_disk", "compression_level": "2x"}, "fp16"),
    ],
)
def test_the_encoding_is_read_from_the_fields_mapping(field: dict[str, Any], encoding: str) -> None:
    assert encoding_of(field) == encoding


def test_an_8_bit_field_is_scored_as_8_bits_keep_it(osmem_url: str) -> None:
    # Given a field whose vectors the engine keeps in 8 bits (Lucene's scalar quantization)
    mapping = json.loads(json.dumps(MAPPING))
    mapping["mappings"]["properties"]["passages"]["properties"]["vector"]["method"]["parameters"] = {
        "encoder": {"name": "sq", "parameters": {"bits": 7}}
    }
    stored = _unit([0.3, 0.001, 0.2, 0.0, 0.5, 0.002, 0.1, 0.7])
    with Proxy(osmem_url, HnswKnn()) as proxy:
        client = OpenSearch(hosts=[proxy.url], timeout=30)
        client.indices.create(index="docs", body=mapping)
        client.index(index="docs", id="a", body={"allow": "x", "passages": [{"vector": stored}]}, refresh=True)
        (hit,) = client.search(index="docs", body=_nested_knn(stored, 1))["hits"]["hits"]
    # Then a vector's score against itself carries the rounding of its 8-bit copy: close to 1, not 1
    assert 0.99 < hit["_score"] < 1.0 - 1e-7


class _Tenths:
    """An encoder that keeps one decimal of each value (what a caller's encoding looks like to the stand-in)."""

    def stored(self, vector: Any) -> list[float]:
        return [round(x, 1) for x in vector]

    def query(self, vector: Any) -> list[float]:
        return list(vector)


def test_a_callers_encoder_is_scored_alike_by_both_stand_ins(osmem_url: str) -> None:
    stored = _unit([0.33, 0.02, 0.21, 0.04, 0.52, 0.03, 0.12, 0.71])
    OpenSearch(hosts=[osmem_url], timeout=30).indices.create(index="docs", body=MAPPING)
    OpenSearch(hosts=[osmem_url], timeout=30).index(
        index="docs", id="a", body={"allow": "x", "passages": [{"vector": stored}]}, refresh=True
    )
    scores = []
    for behaviour in (HnswKnn(_Tenths()), ExactKnn(_Tenths())):
        with Proxy(osmem_url, behaviour) as proxy:
            client = OpenSearch(hosts=[proxy.url], timeout=30)
            (hit,) = client.search(index="docs", body=_nested_knn(stored, 1))["hits"]["hits"]
            scores.append(hit["_score"])
    rounded = _Tenths().stored(stored)
    expected = (1 + sum(a * b for a, b in zip(stored, _unit(rounded), strict=True))) / 2
    assert scores == pytest.approx([expected, expected], abs=1e-6)
    assert expected < 1.0 - 1e-5
