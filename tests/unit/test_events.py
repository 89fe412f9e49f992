"""Normalizing every accepted message shape into one ObjectChange."""

from __future__ import annotations

import json

import pytest

from devkit.messages import eventbridge, s3_notification, sns
from docindex.core.changes import Action, Origin, doc_id, normalize_sequencer, normalize_time, parse_body
from docindex.core.exceptions import PoisonMessageError

BUCKET = "docs-bucket"


def parse_one(payload: object):
    parsed = parse_body(json.dumps(payload))
    assert len(parsed.changes) == 1
    return parsed.changes[0]


@pytest.mark.parametrize(
    ("encoded", "decoded"),
    [
        ("a+b.txt", "a b.txt"),
        ("a%2Bb.txt", "a+b.txt"),
        ("%E8%B3%87%E6%96%99/%E5%A0%B1%E5%91%8A+%281%29.pdf", "資料/報告 (1).pdf"),
        ("100%25+done.txt", "100% done.txt"),
        ("dir%2Fsub/file.txt", "dir/sub/file.txt"),
    ],
)
def test_s3_keys_are_url_decoded(encoded: str, decoded: str) -> None:
    record = s3_notification(BUCKET, "placeholder")
    record["Records"][0]["s3"]["object"]["key"] = encoded
    assert parse_one(record).key == decoded


def test_s3_notification_fields() -> None:
    change = parse_one(
        s3_notification(
            BUCKET,
            "報告 書.docx",
            sequencer="0055AED6DCD90281E5",
            etag="abc",
            size=12,
            version_id="v1",
            time="2026-11-20T09:00:00.123Z",
        )
    )
    assert (change.bucket, change.key, change.action) == (BUCKET, "報告 書.docx", Action.CREATED)
    assert change.sequencer == normalize_sequencer("0055AED6DCD90281E5")
    assert (change.etag, change.size, change.version_id) == ("abc", 12, "v1")
    assert change.event_time == "2026-11-20T09:00:00.123000Z"
    assert change.origin is Origin.S3


def test_delete_marker_and_permanent_delete() -> None:
    marker = parse_one(s3_notification(BUCKET, "k", event="ObjectRemoved:DeleteMarkerCreated"))
    permanent = parse_one(s3_notification(BUCKET, "k", event="ObjectRemoved:Delete"))
    assert marker.action is Action.REMOVED
    assert marker.delete_marker
    assert permanent.action is Action.REMOVED
    assert not permanent.delete_marker
    eb = parse_one(eventbridge(BUCKET, "k", detail_type="Object Deleted", deletion_type="Delete Marker Created"))
    assert eb.action is Action.REMOVED
    assert eb.delete_marker


def test_same_change_in_every_shape_has_one_identity() -> None:
    kwargs = {"sequencer": "0062A1B2C3D4E5F601", "etag": "e1", "size": 3}
    s3_change = parse_one(s3_notification(BUCKET, "会議 資料.pptx", time="2026-11-20T09:00:00.456Z", **kwargs))
    eb_change = parse_one(eventbridge(BUCKET, "会議 資料.pptx", time="2026-11-20T09:00:01Z", **kwargs))
    sns_change = parse_one(sns(s3_notification(BUCKET, "会議 資料.pptx", **kwargs)))
    assert s3_change.dedupe_key == eb_change.dedupe_key == sns_change.dedupe_key
    assert s3_change.doc_id == doc_id(BUCKET, "会議 資料.pptx")
    assert sns_change.origin is Origin.SNS


def test_different_changes_have_different_identities() -> None:
    a = parse_one(s3_notification(BUCKET, "k", sequencer="01"))
    b = parse_one(s3_notification(BUCKET, "k", sequencer="02"))
    c = parse_one(s3_notification(BUCKET, "k", sequencer="01", event="ObjectRemoved:Delete"))
    assert len({a.dedupe_key, b.dedupe_key, c.dedupe_key}) == 3


def test_without_sequencer_time_and_etag_identify_the_change() -> None:
    a = parse_one(s3_notification(BUCKET, "k", etag="e1", time="2026-11-20T09:00:00.000Z"))
    b = parse_one(s3_notification(BUCKET, "k", etag="e2", time="2026-11-20T09:00:00.000Z"))
    c = parse_one(s3_notification(BUCKET, "k", etag="e1", time="2026-11-20T09:00:00.001Z"))
    assert len({a.dedupe_key, b.dedupe_key, c.dedupe_key}) == 3


def test_s3_test_event_has_no_changes() -> None:
    parsed = parse_body(json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent", "Bucket": BUCKET}))
    assert parsed.changes == ()
    assert parsed.shape == "s3_test_event"


def test_multi_record_notification() -> None:
    payload = s3_notification(BUCKET, "a")
    payload["Records"].append(s3_notification(BUCKET, "b")["Records"][0])
    assert [c.key for c in parse_body(json.dumps(payload)).changes] == ["a", "b"]


@pytest.mark.parametrize(
    "body",
    [
        "",
        "not json",
        "[1, 2]",
        '"a string"',
        "{}",
        '{"Records": []}',
        '{"Records": [{"eventSource": "aws:dynamodb"}]}',
        json.dumps({"Records": [{**s3_notification(BUCKET, "k")["Records"][0], "eventName": "ObjectRestore:Post"}]}),
        json.dumps({"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put"}]}),
        json.dumps({"source": "aws.s3", "detail-type": "Object Restore Completed", "detail": {}}),
        json.dumps({"Type": "Notification", "Message": "not json"}),
        json.dumps({"Type": "Notification", "Message": json.dumps({"Type": "Notification", "Message": "{}"})}),
        json.dumps({"docindex": "change", "bucket": BUCKET}),
        json.dumps(s3_notification(BUCKET, "k", time="yesterday")),
    ],
)
def test_anything_else_is_poison(body: str) -> None:
    with pytest.raises(PoisonMessageError):
        parse_body(body)


def test_sequencer_padding_compares_like_s3() -> None:
    # S3: right-pad the shorter sequencer with zeros, then compare as strings
    short, long_ = normalize_sequencer("0055AED6DCD90281E5"), normalize_sequencer("0055AED6DCD90281E50A")
    assert short is not None
    assert long_ is not None
    assert short < long_
    assert normalize_sequencer("0055aed6dcd90281e5") == short
    assert normalize_sequencer("not-hex") is None
    assert normalize_sequencer("") is None


def test_times_sort_as_strings() -> None:
    assert normalize_time("2026-11-20T09:00:00Z") < normalize_time("2026-11-20T09:00:00.001Z")
    assert normalize_time("2026-11-20T18:00:00+09:00") == normalize_time("2026-11-20T09:00:00Z")


def test_time_until_is_the_last_moment_a_coarse_time_may_stand_for() -> None:
    from docindex.core.changes import time_until

    assert time_until("2026-11-20T09:00:05Z") == "2026-11-20T09:00:05.999999Z"  # EventBridge: seconds
    assert time_until("2026-11-20T09:00:05.123Z") == "2026-11-20T09:00:05.123999Z"  # S3: milliseconds
    assert time_until("2026-11-20T09:00:05.123456Z") is None  # exact
    assert time_until(None) is None
