"""docindex's own messages: schema versions, and what a consumer makes of one from another release."""

from __future__ import annotations

import json

import pytest

from docindex.core import messages
from docindex.core.changes import Action, parse_body
from docindex.core.messages import (
    DEFERRED_SINCE_ATTRIBUTE,
    SCHEMA_ATTRIBUTE,
    SCHEMAS,
    MessageKind,
    Received,
    message_attributes,
)
from docindex.ingest.handoff import EMBED_REASON, OcrJob

# Bodies exactly as the release before schema versions wrote them (commit 9c5e4dd: backfill's
# change, the indexer's whole-document OCR job, the worker's page-range job): version 1.
# This release, and every later one, must read them.
V1_CHANGE = (
    '{"docindex":"change","bucket":"docs","key":"経理部/請求書 No.1.pdf","action":"created",'
    '"event_time":"2026-11-20T09:00:00.000000Z","etag":"0a1b","size":120,"reason":"backfill"}'
)
V1_OCR_JOB = (
    '{"docindex": "ocr_job", "bucket": "docs", "key": "スキャン/受領書.png", "reason": "image", "generation": 3, '
    '"version_id": null, "etag": "9f", "sequencer": "0062A1B2C3D4E5F601", "size": 5120, "content_type": "image/png"}'
)
V1_RANGE_JOB = (
    '{"docindex": "ocr_job", "bucket": "docs", "key": "スキャン/台帳.pdf", "reason": "scanned_pdf", "generation": 2, '
    '"version_id": null, "etag": "77", "sequencer": null, "size": 900000, "content_type": "application/pdf", '
    '"first_page": 25, "last_page": 50, "page_count": 60, "ranges": 3}'
)


def _lambda_attribute(value: str) -> dict[str, object]:
    return {"stringValue": value, "stringListValues": [], "binaryListValues": [], "dataType": "Number"}


@pytest.mark.parametrize("attributes", [{}, message_attributes(MessageKind.CHANGE)], ids=["none", "schema-1"])
def test_this_release_reads_every_version_1_message_with_or_without_the_attribute(
    attributes: dict[str, object],
) -> None:
    for body in (V1_CHANGE, V1_OCR_JOB, V1_RANGE_JOB):
        assert Received.from_sqs({"Body": body, "MessageAttributes": attributes}).newer_than_understood() is None
    (change,) = parse_body(V1_CHANGE).changes
    assert (change.key, change.action, change.etag) == ("経理部/請求書 No.1.pdf", Action.CREATED, "0a1b")
    assert OcrJob.from_json(V1_OCR_JOB).generation == 3
    ranged = OcrJob.from_json(V1_RANGE_JOB)
    assert (ranged.is_range, ranged.first_page, ranged.last_page) == (True, 25, 50)


def test_what_this_release_sends_is_what_the_release_before_versions_reads() -> None:
    # The old worker built OcrJob(**body): one unknown field made the job poison. The version
    # travels in an attribute, so a version-1 body has exactly the old fields.
    job = OcrJob.from_json(V1_OCR_JOB)
    assert json.loads(job.to_json()) == json.loads(V1_OCR_JOB)
    assert json.loads(OcrJob.from_json(V1_RANGE_JOB).to_json()) == json.loads(V1_RANGE_JOB)
    assert message_attributes(MessageKind.OCR_JOB, job.schema) == {
        SCHEMA_ATTRIBUTE: {"DataType": "Number", "StringValue": "1"}
    }
    assert OcrJob.from_json(V1_RANGE_JOB).schema == 1
    assert set(SCHEMAS) == set(MessageKind)


def test_an_embed_job_is_version_2_and_a_version_1_worker_leaves_it_to_a_newer_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A worker of the release before meaning search would read the body and OCR the document.
    embed = OcrJob(bucket="docs", key="総務/休業のお知らせ.html", reason=EMBED_REASON, generation=4, etag="5e")
    attributes = message_attributes(MessageKind.OCR_JOB, embed.schema)
    assert attributes[SCHEMA_ATTRIBUTE]["StringValue"] == "2"
    received = Received.from_sqs({"Body": embed.to_json(), "MessageAttributes": attributes})
    assert received.newer_than_understood() is None  # this release runs it
    monkeypatch.setattr(messages, "SCHEMAS", {MessageKind.CHANGE: 1, MessageKind.OCR_JOB: 1})
    assert received.newer_than_understood() == "ocr_job schema 2 is newer than this release's 1"
    # ...while the OCR jobs beside it stay version 1, taken by either release
    ocr = Received.from_sqs({"Body": V1_OCR_JOB, "MessageAttributes": message_attributes(MessageKind.OCR_JOB)})
    assert ocr.newer_than_understood() is None
    with pytest.raises(ValueError):
        message_attributes(MessageKind.CHANGE, 2)


def test_a_newer_version_or_an_unknown_kind_is_recognised_in_both_attribute_shapes() -> None:
    newer = str(SCHEMAS[MessageKind.OCR_JOB] + 1)
    from_receive = Received.from_sqs(
        {"Body": V1_OCR_JOB, "MessageAttributes": {SCHEMA_ATTRIBUTE: {"DataType": "Number", "StringValue": newer}}}
    )
    from_lambda = Received.from_lambda(
        {"body": V1_OCR_JOB, "messageAttributes": {SCHEMA_ATTRIBUTE: _lambda_attribute(newer)}}
    )
    for received in (from_receive, from_lambda):
        assert received.schema == int(newer)
        assert received.newer_than_understood() == (
            f"ocr_job schema {newer} is newer than this release's {SCHEMAS[MessageKind.OCR_JOB]}"
        )
        assert received.deferred_since is None
    unknown = Received.from_lambda(
        {
            "body": '{"docindex": "reindex_hint", "key": "a"}',
            "messageAttributes": {SCHEMA_ATTRIBUTE: _lambda_attribute("1")},
        }
    )
    assert unknown.newer_than_understood() == "message kind 'reindex_hint' (schema 1) is unknown to this release"
    # Without the attribute an unreadable body is what it always was: poison, not deferred
    assert Received.from_lambda({"body": '{"docindex": "reindex_hint"}'}).newer_than_understood() is None
    assert Received.from_lambda({"body": "not json"}).newer_than_understood() is None


def test_the_first_deferral_time_is_read_back_from_the_attribute() -> None:
    received = Received.from_lambda(
        {
            "body": V1_CHANGE,
            "messageAttributes": {
                SCHEMA_ATTRIBUTE: _lambda_attribute("2"),
                DEFERRED_SINCE_ATTRIBUTE: _lambda_attribute("1790000000.250"),
            },
        }
    )
    assert received.deferred_since == 1790000000.25
    assert received.attributes[DEFERRED_SINCE_ATTRIBUTE] == {"DataType": "Number", "StringValue": "1790000000.250"}
