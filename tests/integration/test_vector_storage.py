"""The vector field as a cluster makes it, read back (issue 36; what ``analysis validate`` reports).

On a real OpenSearch node (int7, one of the Lucene encodings it serves): an index docindex creates keeps its vectors in
the chosen encoding with derived source, and a document read back has its vector (what ``docindex
reindex`` copies and the access re-stamp rewrites). An index whose mapping excludes the vectors from
``_source`` without deriving them is caught: read back, the vector is gone.
"""

from __future__ import annotations

from typing import Any

import pytest

from docindex.embed import VectorSpec
from docindex.index.mapping import create_index, index_body, vector_storage

pytestmark = pytest.mark.integration

SPEC = VectorSpec("multilingual-e5-small-q4", 384, encoding="int7")
DOCUMENT = {"key": "a.txt", "passages": [{"text": "a", "start": 0, "end": 1, "vector": [1.0] + [0.0] * 383}]}


def test_an_index_docindex_creates_gives_its_vectors_back_stored_once(opensearch: Any) -> None:
    name = "validate-storage-derived"
    create_index(opensearch, name, vectors=SPEC)
    try:
        opensearch.index(index=name, id="a", body=DOCUMENT, refresh=True)
        assert vector_storage(opensearch, name, "a", SPEC) == {
            "encoding": "int7",
            "encoding_wanted": "int7",
            "derived_source": True,
            "vector_read_back": True,
        }
    finally:
        opensearch.indices.delete(index=name, ignore=[404])


def test_vectors_excluded_from_source_without_derived_source_are_lost_on_read(opensearch: Any) -> None:
    name = "validate-storage-excluded"
    body = index_body(vectors=SPEC, derived_source=False)
    body["mappings"]["_source"] = {"excludes": ["variants", "passages.vector"]}
    opensearch.indices.create(index=name, body=body)
    try:
        opensearch.index(index=name, id="a", body=DOCUMENT, refresh=True)
        found = vector_storage(opensearch, name, "a", SPEC)
        assert (found["derived_source"], found["vector_read_back"]) == (False, False)
    finally:
        opensearch.indices.delete(index=name, ignore=[404])
