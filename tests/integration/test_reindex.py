"""`docindex reindex` while the pipeline keeps writing: nothing lost, stale or resurrected.

The real indexer applies S3 events (creates, updates, deletes) through the
alias at every stage of a reindex: after the copy (they land on the old
index), during the settle wait after the switch (they land on the new one,
with the new index forgetting delete tombstones at once), and after it; then
the rollback and the clean-up. The index behind the alias must hold exactly
the bucket's files, each with its last content.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Iterator
from typing import Any

import pytest

from devkit.messages import s3_notification, sqs_event
from docindex.ingest.ledger import Ledger
from docindex.ops import reindex as reindex_module
from docindex.ops.reindex import cleanup, reindex, rollback, versions, write_index
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke

_sequencers = itertools.count(0x10)


@pytest.fixture(autouse=True)
def _log_stream_outlives_capsys() -> Iterator[None]:
    """``docindex.cli.main`` points the log handler at the current stderr (capsys's here); put it back."""
    import logging
    import sys

    from docindex.core.observability import logger

    yield
    handler = logger.registered_handler
    if isinstance(handler, logging.StreamHandler):
        handler.stream = sys.__stderr__


class Files:
    """The bucket as the test changes it, applied through the real indexer; the expected index."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.indexer = build_indexer(stack)
        self.expected: dict[str, str] = {}

    def _apply(self, *events: dict[str, Any]) -> None:
        assert invoke(self.indexer, sqs_event(*events), timeout=60) == set(), "a write failed"

    def put(self, *pairs: tuple[str, str]) -> None:
        events = []
        for key, text in pairs:
            self.stack.aws.s3.put_object(Bucket=self.stack.bucket, Key=key, Body=text.encode())
            events.append(s3_notification(self.stack.bucket, key, sequencer=f"{next(_sequencers):016X}"))
            self.expected[key] = text
        self._apply(*events)

    def delete(self, *keys: str) -> None:
        events = []
        for key in keys:
            self.stack.aws.s3.delete_object(Bucket=self.stack.bucket, Key=key)
            events.append(
                s3_notification(
                    self.stack.bucket, key, event="ObjectRemoved:Delete", sequencer=f"{next(_sequencers):016X}"
                )
            )
            self.expected.pop(key, None)
        self._apply(*events)

    def assert_index_matches(self, index: str) -> None:
        """``index`` (an alias or a concrete index) holds exactly the expected files, each current."""
        client = self.stack.opensearch
        client.indices.refresh(index=index)
        hits = client.search(index=index, body={"size": 1000, "query": {"match_all": {}}})["hits"]["hits"]
        found = {hit["_source"]["key"]: hit["_source"].get("content", "") for hit in hits}
        assert set(found) == set(self.expected), (
            f"lost: {sorted(set(self.expected) - set(found))}, resurrected: {sorted(set(found) - set(self.expected))}"
        )
        stale = {key for key, text in self.expected.items() if found[key].strip() != text}
        assert not stale, f"stale: {sorted(stale)}"


def _ledger(stack: Stack) -> Ledger:
    return Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])


def test_writes_updates_and_deletes_during_a_reindex_are_neither_lost_stale_nor_resurrected(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = stack.opensearch
    files = Files(stack)
    # Given an index of 40 files behind the alias
    files.put(*[(f"部署/文書{n:02d}.txt", f"初版 {n}") for n in range(40)])
    source = write_index(client, stack.index)
    assert source == f"{stack.index}-v1"

    def during_copy_window() -> None:
        # after their documents were copied, before the switch: these land on the old index
        files.put(*[(f"部署/文書{n:02d}.txt", f"改訂 {n}") for n in range(0, 10)])
        files.delete(*[f"部署/文書{n:02d}.txt" for n in range(10, 16)])
        files.put(("部署/新規A.txt", "新規 A"), ("部署/文書12.txt", "再作成 12"))
        assert write_index(client, stack.index) == source

    def during_settle(seconds: float) -> None:
        # after the switch, before the catch-up: these land on the new index, which forgets
        # delete tombstones at once, so only the ledger can stop the catch-up resurrecting them
        target = write_index(client, stack.index)
        assert target == f"{stack.index}-v2"
        client.indices.put_settings(index=target, body={"index": {"gc_deletes": "0s"}})
        files.delete("部署/文書00.txt", "部署/文書01.txt", "部署/新規A.txt")  # updated on the old index just before
        files.put(("部署/文書02.txt", "三版 2"), ("部署/新規B.txt", "新規 B"))
        files.delete("部署/文書20.txt")  # never touched during the copy

    monkeypatch.setattr(reindex_module, "time", types.SimpleNamespace(sleep=during_settle))

    # When the index is rebuilt while the pipeline keeps writing
    result = reindex(client, stack.index, _ledger(stack), settle_seconds=1, after_copy=during_copy_window)

    # Then the alias writes to the new index, which holds exactly the bucket's files, each current
    assert (result.source, result.target) == (source, f"{stack.index}-v2")
    assert result.copied == 40
    # caught up: the updates of 03..09 and the re-created 12; refused by the ledger: 00, 01 and A
    # (deleted since), 02 (newer since) and 20 (deleted since; every file is in the catch-up margin)
    assert (result.caught_up, result.skipped_stale) == (8, 5)
    assert result.deleted == 5  # 文書10, 11, 13, 14, 15 were deleted on the old index after their copy
    assert client.indices.get_alias(name=stack.index) == {
        f"{stack.index}-v2": {"aliases": {stack.index: {"is_write_index": True}}}
    }
    files.assert_index_matches(stack.index)
    # and the pipeline goes on writing through the alias
    files.put(("部署/文書03.txt", "三版 3"))
    files.delete("部署/文書04.txt")
    files.assert_index_matches(stack.index)
    assert set(versions(client, stack.index).values()) == {source, f"{stack.index}-v2"}

    # When it is rolled back (with what was written since the switch)
    monkeypatch.setattr(reindex_module, "time", types.SimpleNamespace(sleep=lambda seconds: None))
    back = rollback(client, stack.index, _ledger(stack), settle_seconds=0)

    # Then the old index is behind the alias again, in step with the bucket
    assert (back.source, back.target) == (f"{stack.index}-v2", source)
    assert write_index(client, stack.index) == source
    files.assert_index_matches(stack.index)
    files.put(("部署/新規C.txt", "新規 C"))
    files.assert_index_matches(stack.index)

    # When the unused version is cleaned up, only the one behind the alias is left
    assert cleanup(client, stack.index) == [f"{stack.index}-v2"]
    assert versions(client, stack.index) == {1: source}
    files.assert_index_matches(stack.index)


def test_a_second_reindex_builds_the_next_version_and_search_sees_one_copy(stack: Stack) -> None:
    client = stack.opensearch
    files = Files(stack)
    files.put(("a/見積書.txt", "サーバー保守の見積"), ("a/quote.txt", "quote for server maintenance"))
    first = reindex(client, stack.index, _ledger(stack), settle_seconds=0)
    second = reindex(client, stack.index, _ledger(stack), settle_seconds=0)
    assert (first.target, second.source, second.target) == (
        f"{stack.index}-v2",
        f"{stack.index}-v2",
        f"{stack.index}-v3",
    )
    from docindex.index.search import search

    assert [h["key"] for h in search(client, stack.index, "ｻｰﾊﾞｰ保守")] == ["a/見積書.txt"]
    files.assert_index_matches(stack.index)


def test_reindex_refuses_an_index_that_is_not_behind_an_alias(opensearch: Any, stack: Stack) -> None:
    from docindex.core.exceptions import ReindexError

    opensearch.indices.create(index="plain")
    with pytest.raises(ReindexError, match="not an alias"):
        reindex(opensearch, "plain", _ledger(stack), settle_seconds=0)
    with pytest.raises(ReindexError, match="not built by"):
        rollback(opensearch, stack.index, _ledger(stack), settle_seconds=0)


def test_the_cli_reindexes_rolls_back_and_cleans_up(stack: Stack, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    import json

    from docindex.cli import main

    files = Files(stack)
    files.put(("営業部/御見積.txt", "サーバー保守 御見積"))
    for name, value in stack.settings_env().items():
        monkeypatch.setenv(name, value)
    target = [
        "--opensearch-endpoint",
        stack.engine_url,
        "--index",
        stack.index,
        "--ledger-table",
        stack.env["LEDGER_TABLE"],
    ]

    assert main(["reindex", *target, "--settle", "0", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert (done["target"], done["copied"], done["analysis"]) == (f"{stack.index}-v2", 1, "icu+kuromoji")
    assert main(["reindex", *target, "--settle", "0", "--rollback", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == f"{stack.index}-v1"
    assert main(["reindex", *target, "--cleanup", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == [f"{stack.index}-v2"]
    files.assert_index_matches(stack.index)
    # nothing left to roll back to
    assert main(["reindex", *target, "--settle", "0", "--rollback"]) == 2
    assert "not built by" in capsys.readouterr().err


def test_analysis_validate_checks_the_file_and_tries_it_on_the_cluster(
    stack: Stack, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    import json

    from docindex.cli import main

    monkeypatch.setenv("OPENSEARCH_AUTH", "none")
    monkeypatch.setenv("EMBEDDINGS", "off")  # meaning search's part: tests/integration/test_meaning_search.py
    good = tmp_path / "good.toml"
    good.write_text(
        '[user_dictionary]\nrules = ["情シス,情シス,ジョウシス,カスタム名詞"]\n[synonyms]\nsets = ["pc, パソコン"]\n',
        encoding="utf-8",
    )
    assert (
        main(["analysis", "validate", "--config", str(good), "--opensearch-endpoint", stack.engine_url, "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["cluster"]["analysis"] == "icu+kuromoji"
    assert report["cluster"]["tokens"]["情シス"] == ["情シス"]  # kept whole by the user dictionary
    assert stack.opensearch.indices.get(index="docindex-validate-*") == {}  # the throwaway index is gone

    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[user_dictionary]\nrules = ["情シス,情 シス,ジョウシス,カスタム名詞", "ｻｰﾊﾞｰ,ｻｰﾊﾞｰ,サーバー,カスタム名詞"]\n'
        '[synonyms]\nsets = ["pc", "a => b => c"]\n',
        encoding="utf-8",
    )
    assert main(["analysis", "validate", "--config", str(bad)]) == 2
    out = capsys.readouterr().out
    assert "1 segments but 2 readings" not in out
    assert "2 segments but 1 readings" in out
    assert "write the surface as 'サーバー'" in out
    assert "one term is not a synonym set" in out
    assert "more than one '=>'" in out
