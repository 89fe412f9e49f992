"""The vector field a new index gets (issue 36): the chosen encoding, stored once, and the fallbacks.

A cluster that refuses derived source (OpenSearch before 2.19) keeps the vectors in ``_source``; one
that refuses the encoding gets fp32; one without k-NN gets no vectors. Each refusal is answered the way
OpenSearch answers (a 400 naming the setting or parameter), by a client that records what was asked.
"""

from __future__ import annotations

from typing import Any

import pytest
from opensearchpy.exceptions import RequestError

from docindex.embed import VectorSpec
from docindex.index.encodings import ENCODINGS, encoding
from docindex.index.mapping import create_index, index_body

SPEC = VectorSpec("multilingual-e5-small-q4", 384, encoding="bq4")


class Cluster:
    """``indices.create`` of a cluster that refuses what ``refuses`` names in a body."""

    def __init__(self, *refuses: str) -> None:
        self.refuses = refuses
        self.created: list[dict[str, Any]] = []
        self.indices = self

    def create(self, index: str, body: dict[str, Any]) -> None:
        text = str(body["settings"]) + str(body["mappings"]["properties"])  # not the _meta
        for word in self.refuses:
            if word in text:
                raise RequestError(400, "illegal_argument_exception", {"error": f"unknown parameter [{word}]"})
        self.created.append(body)


def vectors_meta(body: dict[str, Any]) -> Any:
    return body["mappings"]["_meta"]["docindex"].get("vectors")


def test_a_new_index_stores_its_vectors_once_in_the_chosen_encoding() -> None:
    body = index_body(vectors=SPEC)
    assert body["settings"]["index"]["knn.derived_source.enabled"] is True
    field = body["mappings"]["properties"]["passages"]["properties"]["vector"]
    # the 4-bit binary codes in memory, rescored from the full-precision vectors on disk
    assert (field["mode"], field["compression_level"], field["space_type"]) == ("on_disk", "8x", "cosinesimil")
    int7 = index_body(vectors=VectorSpec("m", 384, encoding="int7"))["mappings"]["properties"]["passages"]
    assert int7["properties"]["vector"]["method"]["parameters"]["encoder"] == {"name": "sq"}
    # the vectors are not excluded from _source: derived source keeps them out and gives them back
    assert "passages" not in str(body["mappings"].get("_source"))


@pytest.mark.parametrize(
    ("refuses", "expected"),
    [
        ((), {"encoding": "bq4", "derived_source": True}),
        (("derived_source",), {"encoding": "bq4", "derived_source": False}),
        (("compression_level",), {"encoding": "fp32", "derived_source": True}),
        (("derived_source", "compression_level"), {"encoding": "fp32", "derived_source": False}),
        (("knn",), None),
    ],
    ids=["everything", "no-derived-source", "no-on-disk-mode", "neither", "no-knn"],
)
def test_a_cluster_that_refuses_part_of_the_vector_field_gets_the_next_best(refuses, expected) -> None:
    cluster = Cluster(*refuses)
    assert create_index(cluster, "documents-v1", vectors=SPEC) is not None  # type: ignore[arg-type]
    (body,) = cluster.created
    meta = vectors_meta(body)
    if expected is None:
        assert meta is None
        assert "passages" not in body["mappings"]["properties"]
    else:
        assert {k: meta[k] for k in expected} == expected


def test_memory_and_disk_bytes_follow_opensearchs_estimate() -> None:
    # 1.1 x (bytes per vector + 8 m), m = 16, for 384 dimensions
    assert round(ENCODINGS["fp32"].memory_bytes(384)) == round(1.1 * (1536 + 128))
    assert round(ENCODINGS["int7"].memory_bytes(384)) == round(1.1 * (384 + 128))
    assert round(ENCODINGS["bq1"].memory_bytes(384)) == round(1.1 * (48 + 128))
    # int7 keeps the raw vectors beside its codes (Lucene), on disk
    assert ENCODINGS["int7"].disk_bytes(384) > ENCODINGS["fp32"].disk_bytes(384)
    with pytest.raises(ValueError, match="VECTOR_ENCODING"):
        encoding("int4")


class Records:
    """The lines ``docindex.index.mapping`` logs, as (level, message)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, message: str, **_: Any) -> None:
        self.lines.append(("INFO", message))

    def warning(self, message: str, **_: Any) -> None:
        self.lines.append(("WARNING", message))


def test_a_cluster_without_icu_takes_the_kuromoji_tier_with_one_info_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a cluster without analysis-icu (the local engine)
    cluster, records = Cluster("icu_normalizer"), Records()
    monkeypatch.setattr("docindex.index.mapping.logger", records)
    # When an index with vectors is created
    assert create_index(cluster, "documents-v1", vectors=SPEC) == "kuromoji"  # type: ignore[arg-type]
    # Then the tier is refused once (not once per vector variant), as information, not a warning
    assert [line for line in records.lines if "analysis tier" in line[1]] == [
        ("INFO", "analysis tier icu+kuromoji not available on this cluster; trying the next tier")
    ]
    (body,) = cluster.created
    assert vectors_meta(body)["encoding"] == "bq4"


def test_a_cluster_without_kuromoji_is_warned_about_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster, records = Cluster("icu_normalizer", "kuromoji"), Records()
    monkeypatch.setattr("docindex.index.mapping.logger", records)
    assert create_index(cluster, "documents-v1", vectors=SPEC) == "cjk"  # type: ignore[arg-type]
    assert [level for level, message in records.lines if "analysis tier" in message] == ["INFO", "WARNING"]
