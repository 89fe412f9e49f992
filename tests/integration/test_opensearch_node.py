"""The real OpenSearch node of the local run (devkit/opensearch): built from Maven Central, as AOS runs it.

What it must be for the tests and figures on it to stand for Amazon OpenSearch Service: OpenSearch
2.19 with the k-NN plugin and Japanese and ICU analysis under the names docindex's mapping uses, the
production tier icu+kuromoji created for real, Lucene's kuromoji reading Japanese, and the local run
and `docindex analysis validate` on it.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from devkit.opensearch.engine import NodeEngine
from tests.support.cli import docindex


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _tokens(client: Any, index: str, analyzer: str, text: str) -> list[str]:
    return [
        t["token"] for t in client.indices.analyze(index=index, body={"analyzer": analyzer, "text": text})["tokens"]
    ]


@pytest.fixture
def client(opensearch_engine: NodeEngine) -> Any:
    from opensearchpy import OpenSearch

    with opensearch_engine.clone() as space:
        yield OpenSearch(hosts=[space.url], timeout=60)


def test_the_node_is_the_version_aos_runs_with_k_nn_and_the_japanese_analysis(opensearch_engine: NodeEngine) -> None:
    root = _get(opensearch_engine.url)
    plugins = {row["component"] for row in _get(f"{opensearch_engine.url}/_cat/plugins?format=json")}
    assert root["version"]["number"] == "2.19.1"
    assert root["version"]["lucene_version"] == "9.12.1"
    assert {"opensearch-knn", "docindex-analysis-kuromoji", "docindex-analysis-icu"} <= plugins
    # bound to loopback only
    nodes = _get(f"{opensearch_engine.url}/_nodes/http")["nodes"]
    assert all(node["http"]["publish_address"].startswith("127.0.0.1:") for node in nodes.values())


def test_the_production_tier_icu_kuromoji_is_created_and_reads_japanese_as_lucene_does(client: Any) -> None:
    from docindex.index.mapping import create_index

    # Given the index docindex creates (every tier tried, best first)
    tier = create_index(client, "probe-v1", alias="probe")
    # Then the cluster took the production tier
    assert tier == "icu+kuromoji"
    meta = client.indices.get_mapping(index="probe-v1")["probe-v1"]["mappings"]["_meta"]["docindex"]
    assert meta["analysis"] == "icu+kuromoji"
    # kuromoji's search mode: a compound and its parts
    assert _tokens(client, "probe", "docindex_text", "関西国際空港") == ["関西", "関西国際空港", "国際", "空港"]
    # the user dictionary of analysis.toml keeps 稟議書 whole; half-width katakana is one word (stemmed)
    assert "稟議書" in _tokens(client, "probe", "docindex_text", "稟議書を提出")
    assert _tokens(client, "probe", "docindex_text", "ｻｰﾊﾞｰ") == ["サーバ"]
    # icu_normalizer (nfkc_cf) runs before the tokenizer: ß case-folds to ss, which no other filter does
    assert _tokens(client, "probe", "docindex_text", "Straße") == ["strasse"]
    # the synonyms apply at search time only
    assert "パソコン" in _tokens(client, "probe", "docindex_search", "PC")
    assert "パソコン" not in _tokens(client, "probe", "docindex_text", "PC")


def test_a_user_dictionary_term_given_twice_is_refused_as_analysis_kuromoji_refuses_it(client: Any) -> None:
    from opensearchpy.exceptions import RequestError

    body = {
        "settings": {
            "analysis": {
                "tokenizer": {
                    "ja": {
                        "type": "kuromoji_tokenizer",
                        "user_dictionary_rules": [
                            "稟議書,稟議書,リンギショ,カスタム名詞",
                            "稟議書,稟議 書,リンギ ショ,カスタム名詞",
                        ],
                    }
                }
            }
        }
    }
    with pytest.raises(RequestError, match="duplicate term"):
        client.indices.create(index="dup", body=body)


def test_meaning_search_vectors_use_the_lucene_engine_and_are_found_through_the_permission_filter(client: Any) -> None:
    from docindex.embed import VectorSpec
    from docindex.index.mapping import create_index

    spec = VectorSpec("test-model", 4, encoding=NodeEngine.vector_encoding)
    create_index(client, "vec-v1", alias="vec", vectors=spec)
    vector = [0.5, 0.5, 0.5, 0.5]
    for key, principals in (("open", ["group:all"]), ("closed", ["group:hr"])):
        passage = {"vector": vector, "text": key, "start": 0, "end": 1, "page": 1}
        client.index(index="vec", id=key, body={"key": key, "allow_principals": principals, "passages": [passage]})
    client.indices.refresh(index="vec")
    knn = {"vector": vector, "k": 5, "filter": {"terms": {"allow_principals": ["group:all"]}}}
    hits = client.search(
        index="vec", body={"query": {"nested": {"path": "passages", "query": {"knn": {"passages.vector": knn}}}}}
    )
    assert [hit["_id"] for hit in hits["hits"]["hits"]] == ["open"]
    # the vector comes back from the vector field when the document is read
    assert client.get(index="vec", id="open")["_source"]["passages"][0]["vector"] == pytest.approx(vector, abs=0.02)


def test_analysis_validate_on_the_node_reports_the_icu_kuromoji_tier(
    opensearch_engine: NodeEngine, tmp_path: Path
) -> None:
    # Given the environment `docindex local up` writes for the node (vectors in its Lucene encoding)
    env_file = tmp_path / "local.env"
    with opensearch_engine.clone() as space:
        env_file.write_text(
            f"OPENSEARCH_ENDPOINT={space.url}\nOPENSEARCH_AUTH=none\nVECTOR_ENCODING={NodeEngine.vector_encoding}\n"
        )
        # When the vocabulary is validated on it
        result = docindex("analysis", "validate", "--env-file", str(env_file), "--json", cwd=tmp_path, ok=(0,))
    # Then the settings were created with the production tier, and meaning search works on the node
    found = json.loads(result.stdout)
    assert found["cluster"]["analysis"] == "icu+kuromoji", found
    assert found["cluster"]["meaning_search"]["query"] is True
    assert found["cluster"]["meaning_search"]["encoding"] == NodeEngine.vector_encoding


def test_a_vector_field_the_node_cannot_serve_is_refused_and_docindex_falls_back_to_lucene(client: Any) -> None:
    from opensearchpy.exceptions import RequestError

    from docindex.embed import VectorSpec
    from docindex.index.mapping import create_index, index_vectors

    # A Faiss field (no native library in Maven Central's k-NN zip) is refused with a 400, not accepted
    # and then fatal to the node at the first document
    with pytest.raises(RequestError, match="Lucene engine"):
        client.indices.create(
            index="raw", body={"mappings": {"properties": {"v": {"type": "knn_vector", "dimension": 3}}}}
        )
    # docindex's default encoding (bq4, Faiss's on-disk binary codes) falls back to its Lucene one
    create_index(client, "bq-v1", alias="bq", vectors=VectorSpec("test-model", 4, encoding="bq4"))
    spec = index_vectors(client, "bq")
    assert spec is not None
    assert spec.encoding == "fp32"
    client.index(index="bq", id="1", body={"passages": [{"vector": [1.0, 0.0, 0.0, 0.0]}]}, refresh=True)
    assert client.count(index="bq")["count"] == 1


def test_the_demo_starts_its_index_afresh_when_the_node_kept_it_and_the_bucket_is_new(stack: Any) -> None:
    from docindex.cli.demo import _fresh_index

    env = stack.settings_env()
    # Given the index of a previous demo, kept on the node's disk, and a bucket that is new (moto restarted)
    stack.opensearch.index(index=stack.index, id="old", body={"key": "old.txt"}, refresh=True)
    # When the demo starts, it starts the index afresh, with docindex's mapping, behind the alias
    assert _fresh_index(env) is True
    assert stack.count() == 0
    mapping = next(iter(stack.opensearch.indices.get_mapping(index=stack.index).values()))["mappings"]
    assert mapping["_meta"]["docindex"]["analysis"] == "icu+kuromoji"
    # ... but never an index whose bucket has files (the demo's own run, or someone's upload)
    stack.aws.s3.put_object(Bucket=stack.bucket, Key="kept.txt", Body=b"x")
    stack.opensearch.index(index=stack.index, id="kept", body={"key": "kept.txt"}, refresh=True)
    assert _fresh_index(env) is False
    assert stack.count() == 1
