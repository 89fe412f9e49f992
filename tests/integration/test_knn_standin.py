"""The local k-NN stand-in answers docindex's vector queries exactly, filter first (devkit/local/knn.py)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch
from opensearchpy.exceptions import RequestError

from devkit.faults.proxy import Proxy
from devkit.local.knn import ExactKnn

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


@pytest.fixture
def knn(osmem_url: str) -> Iterator[tuple[OpenSearch, ExactKnn]]:
    behaviour = ExactKnn()
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


def test_nearest_documents_by_their_best_passage_within_the_filter(knn: tuple[OpenSearch, ExactKnn]) -> None:
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
    def best(vectors: list[list[float]]) -> tuple[float, int]:
        scores = [(1 + sum(a * b for a, b in zip(query, v, strict=True))) / 2 for v in vectors]
        return max(scores), scores.index(max(scores))

    expected = sorted(((best(v)[0], doc) for doc, (allow, v) in documents.items() if allow == "sales"), reverse=True)[
        :5
    ]

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
        offset = best(documents[hit["_id"]][1])[1]
        assert inner["_nested"] == {"field": "passages", "offset": offset}
        assert inner["_source"] == {"start": 100 * offset}
    assert behaviour.knn_queries == 1


def test_a_filter_nothing_passes_finds_nothing_and_plain_searches_pass_through(
    knn: tuple[OpenSearch, ExactKnn],
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
