"""Legacy Office, Outlook, mail, RTF, ODF and archives through the real pipeline; skipped keys; reprocess."""

from __future__ import annotations

import json

import pytest

from devkit.legacy_samples import make_mail_shift_jis_html, real
from devkit.messages import s3_notification, sqs_event
from docindex.core.observability import metrics
from docindex.extract import dispatch
from docindex.ingest.indexer import Indexer
from docindex.ops.enqueue import ChangeSender, RateLimiter
from docindex.ops.reprocess import ReprocessFilter, matching, reprocess
from tests.conftest import Stack
from tests.integration.conftest import invoke

pytestmark = pytest.mark.integration

# key -> fixture, words a user searches for
CORPUS = {
    "総務部/稟議書.doc": (
        "ringi.doc",
        ["会議室用プロジェクター", "髙橋﨑子", "設置場所は第二会議室", "社外秘ヘッダー"],
    ),
    "営業部/営業会議.ppt": ("gijiroku.ppt", ["十二パーセント増加", "数字は速報値です"]),
    "総務部/稟議書.rtf": ("ringi.rtf", ["会議室用プロジェクター", "見積書は三社から取得済み"]),
    "総務部/稟議書.odt": ("ringi.odt", ["会議室用プロジェクター", "総務部フッター管理番号"]),
    "総務部/社員名簿.ods": ("meibo.ods", ["髙橋﨑子", "鈴木一郎"]),
    "営業部/営業会議.odp": ("gijiroku.odp", ["次回の議題と担当者"]),
    "メール/打ち合わせ.eml": ("uchiawase.eml", ["来週の打ち合わせ日程", "水曜日の午後二時から", "稟議書.doc"]),
    "メール/格式測試.msg": ("apache-tika/testMSG_chinese.msg", ["格式測試", "雲林縣總工會"]),
    "メール/添付.msg": ("apache-tika/testMSG_att_doc.msg", ["test-unicode.doc", "pj1.txt"]),
    "資料/資料.zip": ("shiryou_cp932.zip", ["議事録/稟議書.doc", "社員名簿.ods", "設置場所は第二会議室"]),
    "記事/ゾルゲ.rtf": ("apache-tika/testRTFJapanese.rtf", ["国内最大のスパイ事件"]),
    "経理/集計.xlsb": ("apache-tika/testEXCEL.xlsb", ["This is an example spreadsheet created with Microsoft Excel"]),
}


def _metric(name: str) -> float:
    return float(sum(metrics.metric_set.get(name, {}).get("Value", [])))


def _upload_and_index(stack: Stack, indexer: Indexer, files: dict[str, bytes]) -> set[str]:
    bodies = []
    for number, (key, data) in enumerate(files.items(), start=1):
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=data)
        bodies.append(s3_notification(stack.bucket, key, sequencer=f"{number:016X}", size=len(data)))
    failed: set[str] = set()
    for start in range(0, len(bodies), 10):
        failed |= invoke(indexer, sqs_event(*bodies[start : start + 10]))
    return failed


def test_real_application_files_are_searchable_by_content(stack: Stack, indexer: Indexer) -> None:
    # Given files written by Word-compatible LibreOffice, Outlook, mailers and Info-ZIP, uploaded to the bucket
    files = {key: real(fixture) for key, (fixture, _) in CORPUS.items()}
    files["メール/見積書.eml"] = make_mail_shift_jis_html()
    # When the indexer receives their S3 notifications
    assert _upload_and_index(stack, indexer, files) == set()
    # Then every one is indexed with its words and no extraction error
    for key, (_, words) in CORPUS.items():
        doc = stack.doc(key)
        assert doc is not None, key
        source = doc["_source"]
        assert source.get("extraction_error") is None, (key, source.get("extraction_error"))
        for word in words:
            assert word in source["content"], (key, word)
    assert stack.doc("総務部/稟議書.doc")["_source"]["title"] == "稟議書（備品購入）"
    assert stack.doc("総務部/稟議書.doc")["_source"]["content_type"] == "application/msword"
    mail = stack.doc("メール/見積書.eml")["_source"]
    assert mail["title"] == "①髙橋さんへ：見積書の件"
    # And the files' own properties are fields: who wrote and last saved them, and when
    ringi = stack.doc("総務部/稟議書.doc")["_source"]
    assert (ringi["author"], ringi["last_saved_by"]) == ("山田太郎", "佐藤花子")
    workbook = stack.doc("経理/集計.xlsb")["_source"]
    assert (workbook["created"], workbook["modified"]) == ("2006-03-30T19:39:22Z", "2006-07-13T13:48:56Z")
    stack.opensearch.indices.refresh(index=stack.index)
    by_author = stack.opensearch.search(index=stack.index, body={"query": {"term": {"author": "山田太郎"}}})
    assert {"総務部/稟議書.doc", "総務部/稟議書.odt"} <= {h["_source"]["key"] for h in by_author["hits"]["hits"]}
    since = stack.opensearch.search(index=stack.index, body={"query": {"range": {"created": {"gte": "2011-01-01"}}}})
    assert "メール/格式測試.msg" in {h["_source"]["key"] for h in since["hits"]["hits"]}
    # And a search in Japanese finds the .doc by a word of its text box
    stack.opensearch.indices.refresh(index=stack.index)
    hits = stack.opensearch.search(index=stack.index, body={"query": {"match_phrase": {"content": "第二会議室"}}})
    keys = {hit["_source"]["key"] for hit in hits["hits"]["hits"]}
    assert {"総務部/稟議書.doc", "総務部/稟議書.odt", "総務部/稟議書.rtf", "資料/資料.zip"} <= keys


def test_lock_files_and_folder_markers_are_skipped_not_indexed(stack: Stack, indexer: Indexer) -> None:
    # Given an Office lock file, a thumbnail cache, desktop metadata, a folder marker and a real file
    files = {
        "営業部/~$見積書.xlsx": b"\x00" * 162,
        "営業部/Thumbs.db": real("ringi.doc"),
        "営業部/desktop.ini": b"[.ShellClassInfo]\r\n",
        "営業部/.DS_Store": b"\x00\x00\x00\x01Bud1",
        "営業部/": b"",
        "営業部/見積書.rtf": real("ringi.rtf"),
    }
    # When they are announced
    assert _upload_and_index(stack, indexer, files) == set()
    # Then only the real file is indexed; the others are counted as skipped, not as errors
    assert stack.doc("営業部/見積書.rtf") is not None
    for key in list(files)[:5]:
        assert stack.doc(key) is None, key
    assert _metric("ObjectsSkipped") == 5
    assert _metric("ExtractionFailures") == 0
    assert _metric("RecordsFailed") == 0


def test_reprocess_re_extracts_documents_indexed_before_the_upgrade(
    stack: Stack, indexer: Indexer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a .doc and a .txt indexed by a docindex that could not read .doc
    with monkeypatch.context() as old_version:
        old_version.delitem(dispatch._EXTRACTORS, "doc")
        files = {"総務部/稟議書.doc": real("ringi.doc"), "総務部/メモ.txt": "古いメモ".encode()}
        assert _upload_and_index(stack, indexer, files) == set()
    assert stack.doc("総務部/稟議書.doc")["_source"]["extraction_error"] == "unsupported"
    stack.messages("INGEST_QUEUE_URL", delete=True)  # the bucket's own notifications, delivered above by hand
    stack.opensearch.indices.refresh(index=stack.index)
    # When reprocess sends the documents indexed as unsupported through the ingest queue
    selection = ReprocessFilter(extraction_error="unsupported", bucket=stack.bucket)
    assert list(matching(stack.opensearch, stack.index, selection)) == [(stack.bucket, "総務部/稟議書.doc")]
    dry = reprocess(matching(stack.opensearch, stack.index, selection), sender=None, rate=RateLimiter(None))
    assert (dry.matched, dry.sent) == (1, 0)
    assert stack.messages("INGEST_QUEUE_URL") == []
    sender = ChangeSender(stack.aws.sqs, stack.env["INGEST_QUEUE_URL"])
    result = reprocess(matching(stack.opensearch, stack.index, selection), sender=sender, rate=RateLimiter(100))
    assert (result.matched, result.sent, result.error) == (1, 1, None)
    # And the indexer receives what the queue holds
    queued = stack.messages("INGEST_QUEUE_URL", delete=True)
    assert [json.loads(m["Body"])["reason"] for m in queued] == ["reprocess"]
    assert invoke(indexer, sqs_event(*[json.loads(m["Body"]) for m in queued])) == set()
    # Then the document has its content now, at a newer version, and is no duplicate of its first change
    doc = stack.doc("総務部/稟議書.doc")
    assert doc["_source"].get("extraction_error") is None
    assert "設置場所は第二会議室" in doc["_source"]["content"]
    assert doc["_version"] == 2
    # And a late duplicate of the original upload event cannot take the content away again
    stale = s3_notification(
        stack.bucket, "総務部/稟議書.doc", sequencer=f"{1:016X}", size=len(files["総務部/稟議書.doc"])
    )
    assert invoke(indexer, sqs_event(stale)) == set()
    assert "設置場所は第二会議室" in stack.doc("総務部/稟議書.doc")["_source"]["content"]


def test_reprocess_command_dry_run_then_send(
    stack: Stack, indexer: Indexer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from docindex.cli import main

    # Given two .ppt files indexed as unsupported by an older docindex, and a .txt
    with monkeypatch.context() as old_version:
        old_version.delitem(dispatch._EXTRACTORS, "ppt")
        files = {f"営業部/会議{n}.ppt": real("gijiroku.ppt") for n in range(2)} | {"営業部/メモ.txt": b"memo"}
        assert _upload_and_index(stack, indexer, files) == set()
    stack.messages("INGEST_QUEUE_URL", delete=True)
    stack.opensearch.indices.refresh(index=stack.index)
    for name, value in stack.settings_env().items():
        monkeypatch.setenv(name, value)
    target = ["--bucket", stack.bucket, "--queue-url", stack.env["INGEST_QUEUE_URL"], "--index", stack.index]
    target += ["--opensearch-endpoint", stack.engine_url]
    # When the operator asks for a dry run, then for the real thing
    assert main(["reprocess", *target, "--extension", "ppt", "--dry-run", "--json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert (dry["matched"], dry["sent"], dry["dry_run"]) == (2, 0, True)
    assert stack.messages("INGEST_QUEUE_URL") == []
    assert main(["reprocess", *target, "--extraction-error", "unsupported", "--rate", "0", "--json"]) == 0
    sent = json.loads(capsys.readouterr().out)
    # Then both presentations, and only they, are in the ingest queue, and get their text
    queued = stack.messages("INGEST_QUEUE_URL", delete=True)
    assert sent["sent"] == 2
    assert sorted(json.loads(m["Body"])["key"] for m in queued) == ["営業部/会議0.ppt", "営業部/会議1.ppt"]
    assert invoke(indexer, sqs_event(*[json.loads(m["Body"]) for m in queued])) == set()
    assert "数字は速報値です" in stack.doc("営業部/会議1.ppt")["_source"]["content"]
    # And a command without any filter is refused rather than re-sending the whole index
    assert main(["reprocess", *target]) == 2
