"""Grants = calls: each role of template.yaml allows exactly what its component does.

The indexer and the OCR worker run a scenario covering their paths with clients
limited to their role (tests/support/roles.py): a call the role does not grant
fails as IAM would (AccessDenied / 403), and every grant a call used is recorded.
The scenario must see nothing refused, and every grant used, except the few only
the runtime exercises (listed below, each with its reason): a grant the code never
needs fails the test until it is removed from the template.

OpenSearch requests are checked by method and path against the granted ARNs of a
managed domain (``es:ESHttp<Method>`` on ``${OpenSearchArn}/<path>``); a Serverless
collection has a single action (``aoss:APIAccessAll``) narrowed by its data access
policy instead (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch

from devkit import samples
from devkit.messages import s3_notification, sqs_event
from docindex.core.messages import SCHEMA_ATTRIBUTE
from docindex.core.settings import Settings
from docindex.index.mapping import INDEX_VERSION, ensure_index
from docindex.ingest.handoff import EMBED_REASON, OcrJob
from docindex.ingest.indexer import Indexer
from docindex.worker.config import WorkerSettings
from docindex.worker.pool import OcrPool
from docindex.worker.service import Worker
from tests.conftest import Stack
from tests.integration.conftest import invoke
from tests.support.roles import Grant, Role
from tests.support.scans import LAYOUT, REPORT_LINES
from tests.support.template_model import REQUIRED_PARAMETERS

pytestmark = pytest.mark.integration

DOMAIN_ARN = REQUIRED_PARAMETERS["OpenSearchArn"]

LOGS_AND_TRACES = {
    "logs:CreateLogStream": "the Lambda runtime / the awslogs driver writes the logs, not our code",
    "logs:PutLogEvents": "the Lambda runtime / the awslogs driver writes the logs, not our code",
    "xray:PutTraceSegments": "Tracing: Active - the Lambda service and the X-Ray SDK's daemon send segments",
    "xray:PutTelemetryRecords": "Tracing: Active - as above",
}
# The SQS event source mapping polls the ingest queue with the function's role: Lambda's
# pollers call these, the indexer's code never touches the ingest queue.
EVENT_SOURCE_MAPPING = {
    Grant(action, "IngestQueue"): "the event source mapping (Lambda's poller)"
    for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility")
}


def role_for(stack: Stack, name: str) -> Role:
    names = {
        "IdempotencyTable": stack.env["IDEMPOTENCY_TABLE"],
        "LedgerTable": stack.env["LEDGER_TABLE"],
        "IngestQueue": stack.env["INGEST_QUEUE_URL"],
        "OcrQueue": stack.env["OCR_QUEUE_URL"],
        "EmbedQueue": stack.env["EMBED_QUEUE_URL"],
    }
    return Role.from_template(name, names, OpenSearchIndex=stack.index)


def limited_opensearch(stack: Stack, role: Role) -> Any:
    return role.opensearch(OpenSearch(hosts=[stack.engine_url], timeout=30), DOMAIN_ARN)


def put(stack: Stack, key: str, body: bytes) -> dict[str, Any]:
    return dict(stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body))


def created(stack: Stack, key: str, sequencer: str, response: dict[str, Any] | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if response is not None:
        extra["etag"] = response["ETag"].strip('"')
        if response.get("VersionId"):
            extra["version_id"] = response["VersionId"]
    return s3_notification(stack.bucket, key, sequencer=sequencer, **extra)


def removed(stack: Stack, key: str, sequencer: str, **extra: Any) -> dict[str, Any]:
    return s3_notification(stack.bucket, key, event="ObjectRemoved:Delete", sequencer=sequencer, **extra)


def unused_grants(role: Role, runtime_only: dict[Any, str]) -> set[str]:
    return {str(g) for g in role.unused() if g.action not in runtime_only and g not in runtime_only}


# ----------------------------------------------------------------- the indexer


def test_the_indexer_role_grants_exactly_what_the_indexer_calls(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an indexer whose clients hold IndexerRole, on a cluster without the index yet
    stack.opensearch.indices.delete(index=f"{stack.index}-v{INDEX_VERSION}")
    role = role_for(stack, "IndexerRole")
    settings = Settings.from_env(stack.settings_env(QUARANTINE_AFTER_FAILURES="2"))
    indexer = Indexer(
        settings,
        s3=role.client(stack.aws.s3),
        sqs=role.client(stack.aws.sqs),
        dynamodb=role.client(stack.aws.dynamodb),
        opensearch=limited_opensearch(stack, role),
    )

    def deliver(body: dict[str, Any]) -> set[str]:
        return invoke(indexer, sqs_event(body))

    # When it creates the index and a document, sees the change again (duplicate) and an older one (stale)
    first = put(stack, "notes/議事録.txt", "第3回 経営会議".encode())
    assert deliver(created(stack, "notes/議事録.txt", "0001", first)) == set()
    assert deliver(created(stack, "notes/議事録.txt", "0001", first)) == set()
    assert deliver(created(stack, "notes/議事録.txt", "0000", first)) == set()
    # ... deletes it
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key="notes/議事録.txt")
    assert deliver(removed(stack, "notes/議事録.txt", "0002")) == set()
    # ... hands a scan to the OCR worker
    scan = put(stack, "scans/報告書.png", samples.make_scan_png(REPORT_LINES[:1], dpi=150, page=(4.0, 1.0), **LAYOUT))
    assert deliver(created(stack, "scans/報告書.png", "0001", scan)) == set()
    # ... learns that an announced object is gone
    assert deliver(s3_notification(stack.bucket, "notes/never.txt", sequencer="0001")) == set()
    # ... quarantines a change that keeps failing (its retry first looks for its own write)
    put(stack, "crash/図面.txt", b"never extracted")

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the extractor crashed")

    with monkeypatch.context() as patched:
        patched.setattr("docindex.ingest.reading.extract", crash)
        for _ in range(2):
            assert len(deliver(created(stack, "crash/図面.txt", "0001"))) == 1
        assert deliver(created(stack, "crash/図面.txt", "0001")) == set()
    # ... leaves a change from a newer release to a newer indexer (a delayed copy on the ingest queue)
    newer = sqs_event({"docindex": "change", "bucket": stack.bucket, "key": "future.txt", "action": "created"})
    newer["Records"][0]["messageAttributes"] = {SCHEMA_ATTRIBUTE: {"stringValue": "99", "dataType": "Number"}}
    assert invoke(indexer, newer) == set()
    # ... and, in a versioned bucket, indexes a version, then the older one when the newer is deleted
    stack.aws.s3.put_bucket_versioning(Bucket=stack.bucket, VersioningConfiguration={"Status": "Enabled"})
    old = put(stack, "versions/規程.txt", "旧版の規程".encode())
    new = put(stack, "versions/規程.txt", "新版の規程".encode())
    assert deliver(created(stack, "versions/規程.txt", "0001", old)) == set()
    assert deliver(created(stack, "versions/規程.txt", "0002", new)) == set()
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key="versions/規程.txt", VersionId=new["VersionId"])
    assert deliver(removed(stack, "versions/規程.txt", "0003", version_id=new["VersionId"])) == set()
    # ... and, with meaning search on, queues a text document's embed job on the embed queue
    meaning = Indexer(
        Settings.from_env(stack.settings_env(EMBEDDINGS="local")),
        s3=role.client(stack.aws.s3),
        sqs=role.client(stack.aws.sqs),
        dynamodb=role.client(stack.aws.dynamodb),
        opensearch=limited_opensearch(stack, role),
    )
    meant = put(stack, "notes/休業.txt", "年末年始の休業のお知らせ".encode())
    assert invoke(meaning, sqs_event(created(stack, "notes/休業.txt", "0001", meant))) == set()
    (embed,) = stack.messages("EMBED_QUEUE_URL", delete=True)
    assert OcrJob.from_json(embed["Body"]).reason == EMBED_REASON

    # Then the index shows every path ran
    assert stack.doc("notes/議事録.txt") is None
    assert stack.doc("scans/報告書.png")["_source"]["ocr_status"] == "pending"
    assert stack.doc("notes/never.txt") is None
    assert stack.doc("crash/図面.txt")["_source"]["extraction_error"] == "quarantined"
    assert "旧版" in stack.doc("versions/規程.txt")["_source"]["content"]
    assert len(stack.messages("OCR_QUEUE_URL")) == 1
    # And nothing was refused, and every grant was needed
    assert role.denied == []
    assert unused_grants(role, {**LOGS_AND_TRACES, **EVENT_SOURCE_MAPPING}) == set()


def test_the_indexer_role_may_not_delete_or_touch_other_indices(stack: Stack) -> None:
    # The guard itself: what a compromised parser in the indexer might try is refused
    from opensearchpy.exceptions import AuthorizationException

    role = role_for(stack, "IndexerRole")
    client = limited_opensearch(stack, role)
    for attempt in (
        lambda: client.indices.delete(index=stack.index),
        lambda: client.delete(index=stack.index, id="x"),
        lambda: client.indices.create(index="other-index"),
        lambda: client.search(index="other-index", body={"query": {"match_all": {}}}),
        lambda: client.bulk(body=[{"delete": {"_index": stack.index, "_id": "x"}}]),  # /_bulk, not /{index}/_bulk
    ):
        with pytest.raises(AuthorizationException):
            attempt()
    assert len(role.denied) == 5
    assert stack.opensearch.indices.exists(index=stack.index)


# ----------------------------------------------------------------- the worker


@pytest.fixture(scope="module")
def pool() -> Iterator[OcrPool]:
    pool = OcrPool(1)
    yield pool
    pool.close()


def test_the_worker_task_role_grants_exactly_what_the_worker_calls(stack: Stack, pool: OcrPool) -> None:
    role = role_for(stack, "WorkerTaskRole")
    indexer = Indexer(
        Settings.from_env(stack.settings_env()),
        s3=stack.aws.s3,
        sqs=stack.aws.sqs,
        dynamodb=stack.aws.dynamodb,
        opensearch=stack.opensearch,
    )
    workers: list[Worker] = []

    def worker(**env: str) -> Worker:
        # A fresh worker (process) each time, its clients holding WorkerTaskRole.
        settings = WorkerSettings.from_env(
            stack.settings_env(
                WORKER_CONCURRENCY="1", WORKER_HEARTBEAT_SECONDS="5", WORKER_RETRY_DELAY_SECONDS="0", **env
            )
        )
        made = Worker(
            settings,
            s3=role.client(stack.aws.s3),
            sqs=role.client(stack.aws.sqs),
            dynamodb=role.client(stack.aws.dynamodb),
            opensearch=limited_opensearch(stack, role),
            pool=pool,
            flush_metrics=False,
        )
        made.start()
        workers.append(made)
        return made

    def hand_off(key: str, sequencer: str) -> None:
        # Each scan its own content: a copy of one already OCR'd is indexed from the content cache.
        line = REPORT_LINES[len(workers) % len(REPORT_LINES)]
        png = samples.make_scan_png([line], dpi=200, page=(6.0, 1.0), **LAYOUT)
        response = put(stack, key, png)
        assert invoke(indexer, sqs_event(created(stack, key, sequencer, response))) == set()

    try:
        # When the worker reads a scan (unversioned bucket)
        hand_off("scans/a.png", "0001")
        assert worker().poll_once(wait_seconds=1) == 1
        assert stack.doc("scans/a.png")["_source"]["ocr_status"] == "done"
        # ... drops a job whose object was deleted meanwhile
        hand_off("scans/gone.png", "0001")
        stack.aws.s3.delete_object(Bucket=stack.bucket, Key="scans/gone.png")
        assert worker().poll_once(wait_seconds=1) == 1
        assert stack.doc("scans/gone.png")["_source"]["ocr_status"] == "pending"  # its delete event removes it
        # ... hands back a job while the index is missing, then runs it once the index is back
        stack.aws.s3.put_bucket_versioning(Bucket=stack.bucket, VersioningConfiguration={"Status": "Enabled"})
        hand_off("scans/b.png", "0001")
        stack.opensearch.indices.delete(index=f"{stack.index}-v{INDEX_VERSION}")
        assert worker().poll_once(wait_seconds=1) == 1
        ensure_index(stack.opensearch, stack.index)
        assert worker().poll_once(wait_seconds=1) == 1
        # ... splits a two-page scan into page-range jobs and writes it when the last one lands
        pages = [[REPORT_LINES[0]], [REPORT_LINES[1]]]
        response = put(stack, "scans/c.pdf", samples.make_scan_pdf(pages, dpi=200, **LAYOUT))
        assert invoke(indexer, sqs_event(created(stack, "scans/c.pdf", "0001", response))) == set()
        splitting = worker(WORKER_RANGE_PAGES="1")
        for _ in range(3):  # the job, then its two ranges
            assert splitting.poll_once(wait_seconds=1) == 1
        # ... on the embed queue, leaves a newer release's embed job to a newer worker and refuses
        # an OCR job (only embed jobs come that way; it goes back for its retries, then the DLQ)
        embed_queue = stack.env["EMBED_QUEUE_URL"]
        for reason, schema in ((EMBED_REASON, 99), ("image", 1)):
            job = OcrJob(bucket=stack.bucket, key="notes/x.txt", reason=reason, generation=1)
            stack.aws.sqs.send_message(
                QueueUrl=embed_queue,
                MessageBody=job.to_json(),
                MessageAttributes={SCHEMA_ATTRIBUTE: {"DataType": "Number", "StringValue": str(schema)}},
            )
            assert worker().poll_once(wait_seconds=1) == 1
        left = stack.messages("EMBED_QUEUE_URL", delete=True)
        assert [OcrJob.from_json(m["Body"]).reason for m in left] == ["image"]  # the deferred copy is delayed
    finally:
        for made in workers:
            made.close()

    # Then the job that waited for the index is done too, and the split scan
    assert stack.doc("scans/b.png")["_source"]["ocr_status"] == "done"
    assert stack.doc("scans/c.pdf")["_source"]["ocr_status"] == "done"
    # And nothing was refused, and every grant was needed
    assert role.denied == []
    assert unused_grants(role, LOGS_AND_TRACES) == set()
