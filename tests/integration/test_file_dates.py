"""The file server's dates (issue 49): what a sync writes as the object's mtime is the document's date.

Real indexer, search function and operator CLI against moto server and the stack's OpenSearch. Files are
put with the user metadata DataSync writes (``file-mtime``, nanoseconds); S3's own ``LastModified`` is
the day the test runs. Reads of the documents bucket are counted by a thin wrapper around the real
boto3 client, as S3 would bill them.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from devkit.messages import s3_notification, sqs_event
from docindex.core.filedates import datasync_metadata, iso
from tests.conftest import REGION, Stack
from tests.integration.conftest import build_indexer, invoke
from tests.support.search_api import FILE_DATES, FILES, SearchWorld, build_world
from tests.support.worker import metric_total

pytestmark = pytest.mark.integration

SALES_FILES = ["営業部/見積/2024_見積書_A社.txt", "共有/規程/就業規則.txt", "営業部/提案/提案書_B社.md"]


@pytest.fixture
def world(stack: Stack, tmp_path: Path) -> SearchWorld:
    import boto3

    cognito = boto3.client("cognito-idp", region_name=REGION, endpoint_url=stack.aws.endpoint)
    found = build_world(stack, tmp_path, cognito)
    found.add_user("sales", ["営業部"])
    found.add_user("hr", ["人事部"])
    found.index_files(FILES, dates=FILE_DATES)
    return found


def paths(result: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in result["hits"]]


def test_the_file_servers_date_is_shown_sorted_and_filtered_by_through_the_api(world: SearchWorld) -> None:
    today = datetime.now(UTC).date().isoformat()
    # When the sales user searches, newest first
    result = world.search("sales", q="売上", sort="date")
    # Then each hit is dated as the file server dated it, says so, and keeps the day it reached S3 apart
    assert paths(result) == SALES_FILES
    for hit in result["hits"]:
        assert hit["modified"] == iso(FILE_DATES[hit["path"]])
        assert hit["modified_source"] == "file_server"
        assert hit["uploaded"].startswith(today)
    # ... oldest first reverses it
    assert paths(world.search("sales", q="売上", sort="date", order="asc")) == SALES_FILES[::-1]
    # The year facet counts the file server's years, in the caller's time zone (the page sends its own)
    assert {f["value"]: f["count"] for f in world.search("sales", q="売上", tz="+09:00")["facets"]["year"]} == {
        "2024": 1,
        "2021": 1,
        "2020": 1,
    }
    # the proposal was saved on New Year's morning in Japan: 2019 in UTC
    assert {f["value"] for f in world.search("sales", q="売上")["facets"]["year"]} == {"2024", "2021", "2019"}
    # A date range is whole days of the caller's time zone: the estimate saved at 8:30 on 2024/10/01 in Japan
    day = {"modified_from": "2024-10-01", "modified_to": "2024-10-01"}
    assert paths(world.search("sales", q="売上", tz="+09:00", **day)) == ["営業部/見積/2024_見積書_A社.txt"]
    assert paths(world.search("sales", q="売上", **day)) == []  # in UTC it is still 2024-09-30
    assert paths(world.search("sales", modified_from="2021-01-01", modified_to="2024-12-31", tz="+09:00")) == [
        "営業部/見積/2024_見積書_A社.txt",
        "共有/規程/就業規則.txt",
    ]
    # the day they reached S3 (today) dates none of them
    assert world.search("sales", modified_to="2024-12-31", tz="+09:00")["total"] == 3
    assert world.search("sales", modified_from=today, tz="+09:00")["total"] == 0
    # and every count stays the caller's own: HR's files are not in the sales user's years
    hr_years = {f["value"] for f in world.search("hr", q="売上", tz="+09:00")["facets"]["year"]}
    assert hr_years == {"2025", "2021", "2016"}
    # A malformed time zone is the caller's error
    status, body = world.call("/search", world.tokens["sales"]["access_token"], q="売上", tz="Asia/Tokyo")
    assert status == 400
    assert any(problem.startswith("tz:") for problem in body["problems"])


def test_metadata_that_names_no_believable_time_is_not_the_date_and_fails_nothing(
    stack: Stack, world: SearchWorld, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    # Given files whose mtime metadata is garbage, far in the future, negative, and one without any
    bad = {
        "共有/壊れ/文字.txt": {"file-mtime": "yesterday noon"},
        "共有/壊れ/未来.txt": {"file-mtime": "4102444800000000000ns"},  # 2100
        "共有/壊れ/負.txt": {"mtime": "-86400"},
        "共有/壊れ/なし.txt": {},
    }
    indexer = build_indexer(stack, ACCESS_MAP_URI=str(world.map_path), ACCESS_MAP_TTL_SECONDS="0")
    bodies = []
    for key, metadata in bad.items():
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body="壊れた日付 の ファイル".encode(), Metadata=metadata)
        bodies.append({"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"})
    # When they are indexed
    with caplog.at_level(logging.INFO, logger="docindex"):
        assert invoke(indexer, sqs_event(*bodies)) == set()
    # Then every one is searchable, dated by S3 and saying so
    stack.opensearch.indices.refresh(index=stack.index)
    hits = {hit["path"]: hit for hit in world.search("sales", q="壊れた日付")["hits"]}
    assert set(hits) == set(bad)
    for hit in hits.values():
        assert (hit["modified_source"], hit["modified"]) == ("s3", hit["uploaded"])
    # ... and the index and the log say why the metadata's was not used
    problems = {key: stack.doc(key)["_source"].get("last_modified_problem") for key in bad}  # type: ignore[index]
    assert problems["共有/壊れ/文字.txt"] == "file-mtime: not a time ('yesterday noon')"
    assert problems["共有/壊れ/未来.txt"].startswith("file-mtime: 2100-01-01 is in the future")
    assert problems["共有/壊れ/負.txt"].startswith("mtime: 1969-12-31 is before 1980")
    assert problems["共有/壊れ/なし.txt"] is None
    refused = [r for r in caplog.records if r.getMessage().startswith("the file server's date in the object's")]
    assert sorted(r.__dict__["problem"] for r in refused) == sorted(p for p in problems.values() if p)


class CountingS3:
    """The real S3 client, counting GetObject and HeadObject calls."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: Counter[str] = Counter()

    def get_object(self, **params: Any) -> Any:
        self.calls["GetObject"] += 1
        return self._client.get_object(**params)

    def head_object(self, **params: Any) -> Any:
        self.calls["HeadObject"] += 1
        return self._client.head_object(**params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def counting_indexer(stack: Stack, **env: str) -> tuple[Any, CountingS3]:
    indexer = build_indexer(stack, **env)
    counting = CountingS3(stack.aws.s3)
    indexer.store._s3 = counting
    return indexer, counting


def test_a_touch_on_the_file_server_changes_the_date_without_reading_the_content(stack: Stack) -> None:
    key = "総務部/規程/旅費規程.txt"
    first, touched = datetime(2023, 4, 1, 1, 0, tzinfo=UTC), datetime(2026, 11, 30, 2, 0, tzinfo=UTC)
    indexer, counting = counting_indexer(stack)
    put = stack.aws.s3.put_object(
        Bucket=stack.bucket, Key=key, Body="旅費規程 日当".encode(), Metadata=datasync_metadata(first)
    )
    etag = put["ETag"].strip('"')
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer="0A", etag=etag, size=19))) == set()
    assert stack.doc(key)["_source"]["last_modified"] == iso(first)  # type: ignore[index]
    # When the file is touched on the file server and the sync copies only its new metadata (same bytes, same ETag)
    stack.aws.s3.copy_object(
        Bucket=stack.bucket,
        Key=key,
        CopySource={"Bucket": stack.bucket, "Key": key},
        Metadata=datasync_metadata(touched),
        MetadataDirective="REPLACE",
    )
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer="0B", etag=etag, size=19))) == set()
    # Then the document has the new date, and the body was read once in all
    doc = stack.doc(key)
    assert doc is not None
    assert doc["_source"]["last_modified"] == iso(touched)
    assert doc["_source"]["last_modified_source"] == "file_server"
    assert "日当" in doc["_source"]["content"]
    assert counting.calls["GetObject"] == 1
    assert metric_total("UnchangedContentSkipped") == 1
    # And the file server's clock orders nothing: a late event of the first version is stale by S3's sequencer,
    # even though the touch moved the date forward and then a backward-set clock moves it back
    assert invoke(indexer, sqs_event(s3_notification(stack.bucket, key, sequencer="09", etag=etag, size=19))) == set()
    assert stack.doc(key)["_source"]["last_modified"] == iso(touched)  # type: ignore[index]
    assert metric_total("StaleEventsSkipped") == 1


def _as_an_older_release_wrote_it(stack: Stack, key: str) -> None:
    """The document as a docindex before issue 49 wrote it: S3's LastModified as its date, no date fields."""
    from docindex.core.changes import doc_id

    doc = stack.doc(key)
    assert doc is not None
    source = dict(doc["_source"])
    source["last_modified"] = source.pop("s3_last_modified")
    source.pop("last_modified_source")
    source.pop("last_modified_problem", None)
    from docindex.index.documents import with_variants

    stack.opensearch.index(
        index=stack.index,
        id=doc_id(stack.bucket, key),
        body=with_variants(source),
        version=doc["_version"],
        version_type="external_gte",
        refresh=True,
    )


def test_reprocess_dates_brings_the_file_servers_dates_to_documents_indexed_before_without_reading_them(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from docindex.cli import main

    # Given files synced with their mtimes and indexed by a docindex that kept only S3's date
    files = {f"経理部/{year}年度/決算書.txt": (f"{year}年度 決算書 売上".encode(), year) for year in (2012, 2018, 2024)}
    files["経理部/メモ.txt"] = ("メモ 売上".encode(), 0)  # no mtime: nothing to bring
    dates = {key: datetime(year, 3, 31, 9, 0, tzinfo=UTC) for key, (_, year) in files.items() if year}
    indexer, counting = counting_indexer(stack)
    bodies = []
    for key, (body, _) in files.items():
        metadata = datasync_metadata(dates[key]) if key in dates else {}
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body, Metadata=metadata)
        bodies.append({"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"})
    assert invoke(indexer, sqs_event(*bodies)) == set()
    for key in files:
        _as_an_older_release_wrote_it(stack, key)
    versions = {key: stack.doc(key)["_version"] for key in files}  # type: ignore[index]
    # ... and one changed on the file server since (a new body no event announced), one deleted
    changed, deleted = "経理部/2018年度/決算書.txt", "経理部/2012年度/決算書.txt"
    stack.aws.s3.put_object(
        Bucket=stack.bucket,
        Key=changed,
        Body="2018年度 決算書 訂正".encode(),
        Metadata=datasync_metadata(dates[changed]),
    )
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=deleted)
    stack.messages("INGEST_QUEUE_URL", delete=True)
    counting.calls.clear()
    for name, value in stack.settings_env().items():
        monkeypatch.setenv(name, value)
    target = ["--bucket", stack.bucket, "--queue-url", stack.env["INGEST_QUEUE_URL"], "--index", stack.index]
    target += ["--opensearch-endpoint", stack.engine_url]
    # When the operator asks how many documents have no file server date yet, then brings them
    capsys.readouterr()
    assert main(["reprocess", *target, "--dates", "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matched"] == len(files)
    assert main(["reprocess", *target, "--dates", "--rate", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sent"] == len(files)
    queued = [json.loads(m["Body"]) for m in stack.messages("INGEST_QUEUE_URL", delete=True)]
    assert {body["reason"] for body in queued} == {"dates"}
    assert invoke(indexer, sqs_event(*queued)) == set()
    # Then the unchanged files have the file server's date, at a newer version, and their bodies were not read
    unchanged = [key for key in files if key not in (changed, deleted)]
    for key in unchanged:
        doc = stack.doc(key)
        assert doc is not None
        assert doc["_version"] == versions[key] + 1
        assert doc["_source"]["last_modified_source"] == ("file_server" if key in dates else "s3")
        assert doc["_source"]["last_modified"] == (
            iso(dates[key]) if key in dates else doc["_source"]["s3_last_modified"]
        )
    assert metric_total("UnchangedContentSkipped") == len(unchanged)
    # ... the changed one was read (its new text, its date), the deleted one's document is gone
    assert "訂正" in stack.doc(changed)["_source"]["content"]  # type: ignore[index]
    assert stack.doc(changed)["_source"]["last_modified"] == iso(dates[changed])  # type: ignore[index]
    assert stack.doc(deleted) is None
    assert counting.calls["GetObject"] == 2  # the changed file, and the deleted one's read that found it gone
    # And a second run finds nothing left to date
    assert main(["reprocess", *target, "--dates", "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matched"] == 0
    # The operator's search sorts, filters and shows by those dates too
    index = ["--index", stack.index, "--opensearch-endpoint", stack.engine_url]
    assert main(["search", "決算書", *index, "--sort", "date", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [hit["key"] for hit in hits] == ["経理部/2024年度/決算書.txt", changed]
    assert [hit["last_modified_source"] for hit in hits] == ["file_server", "file_server"]
    assert main(["search", "決算書", *index, "--modified-before", "2020-01-01"]) == 0
    out = capsys.readouterr().out
    assert "2018-03-31  s3://" in out
    assert "2024年度" not in out
