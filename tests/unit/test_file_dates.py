"""The document's date: what DataSync, rclone and other writers put in an object's metadata, and what is refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from docindex.core.exceptions import SettingsError
from docindex.core.filedates import (
    FILE_SERVER,
    S3,
    datasync_metadata,
    file_date,
    parse_keys,
    rclone_metadata,
)
from docindex.core.settings import Settings

KEYS = parse_keys("file-mtime,mtime")
UPLOADED = "2026-12-01T03:00:00.000000Z"
NOW = datetime(2026, 12, 2, tzinfo=UTC)


def dated(metadata: dict[str, str], keys: tuple[str, ...] = KEYS) -> tuple[str | None, str, str | None]:
    found = file_date(metadata, UPLOADED, keys=keys, now=NOW)
    assert found.s3_value == UPLOADED
    return found.value, found.source, found.problem


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        # DataSync (and FSx for Lustre, S3 File Gateway): nanoseconds, "ns" suffix
        ({"file-mtime": "1727740800123456789ns"}, "2024-10-01T00:00:00.123456Z"),
        # the same key without the suffix is milliseconds (FSx for Lustre reads it so)
        ({"file-mtime": "1727740800123"}, "2024-10-01T00:00:00.123000Z"),
        # rclone: seconds as a decimal; s3fs: whole seconds
        ({"mtime": "1727740800.5"}, "2024-10-01T00:00:00.500000Z"),
        ({"mtime": "1727740800"}, "2024-10-01T00:00:00.000000Z"),
        # SFTP Gateway's text, an ISO time with an offset, an HTTP date
        ({"mtime": "2024-10-01 09:00:00.000000000 +0900"}, "2024-10-01T00:00:00.000000Z"),
        ({"mtime": "2024-10-01T09:00:00+09:00"}, "2024-10-01T00:00:00.000000Z"),
        ({"mtime": "Tue, 01 Oct 2024 00:00:00 GMT"}, "2024-10-01T00:00:00.000000Z"),
        # boto3 gives keys in lower case; a client may keep the header's prefix or case
        ({"X-Amz-Meta-File-Mtime": "1727740800000000000ns"}, "2024-10-01T00:00:00.000000Z"),
    ],
)
def test_each_writers_mtime_is_the_documents_date(metadata: dict[str, str], expected: str) -> None:
    assert dated(metadata) == (expected, FILE_SERVER, None)


def test_the_first_configured_key_present_wins() -> None:
    both = {"mtime": "1577836800", "file-mtime": "1727740800000000000ns"}
    assert dated(both)[0] == "2024-10-01T00:00:00.000000Z"
    assert dated(both, parse_keys("mtime,file-mtime"))[0] == "2020-01-01T00:00:00.000000Z"
    # a scanner's own key, once configured
    assert dated({"scanned-at": "2023-04-01T10:00:00+09:00"}, parse_keys("X-Amz-Meta-Scanned-At"))[1] == FILE_SERVER


def test_without_metadata_the_date_is_s3s() -> None:
    assert dated({}) == (UPLOADED, S3, None)
    assert dated({"other": "1727740800"}) == (UPLOADED, S3, None)
    assert dated({"file-mtime": "1727740800000000000ns"}, keys=()) == (UPLOADED, S3, None)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("garbage", "not a time"),
        ("", "empty"),
        ("12:00 yesterday", "not a time"),
        ("-1727740800", "is before 1980"),
        ("0ns", "is before 1980"),
        ("4102444800000000000ns", "is in the future"),  # 2100
        ("9" * 30 + "ns", "out of range"),
        ("1e400", "not a time"),
        ("nan", "not a time"),
        ("2024-10-01T09:00:00+09:00" * 3, "longer than 64"),
    ],
)
def test_metadata_that_names_no_believable_time_falls_back_and_says_why(value: str, why: str) -> None:
    found, source, problem = dated({"file-mtime": value})
    assert (found, source) == (UPLOADED, S3)
    assert problem is not None
    assert problem.startswith("file-mtime: ")
    assert why in problem
    # a refused first key is not replaced by a later one: the problem is reported, not hidden
    assert dated({"file-mtime": value, "mtime": "1727740800"})[1] == S3


def test_what_the_demo_and_tests_write_reads_back() -> None:
    moment = datetime(2019, 4, 1, 9, 30, tzinfo=UTC)
    assert dated(datasync_metadata(moment))[0] == "2019-04-01T09:30:00.000000Z"
    assert datasync_metadata(moment) == {"file-mtime": "1554111000000000000ns"}
    assert dated(rclone_metadata(moment))[0] == "2019-04-01T09:30:00.000000Z"


def test_the_keys_setting_is_checked_when_read() -> None:
    base = {"OPENSEARCH_ENDPOINT": "http://localhost:9200", "IDEMPOTENCY_TABLE": "t"}
    assert Settings.from_env(base).mtime_keys == ("file-mtime", "mtime")
    assert Settings.from_env({**base, "MTIME_METADATA_KEYS": " X-Amz-Meta-Mtime , scanned-at"}).mtime_keys == (
        "mtime",
        "scanned-at",
    )
    assert Settings.from_env({**base, "MTIME_METADATA_KEYS": ""}).mtime_keys == ()
    with pytest.raises(SettingsError, match="MTIME_METADATA_KEYS"):
        Settings.from_env({**base, "MTIME_METADATA_KEYS": "file mtime"})
