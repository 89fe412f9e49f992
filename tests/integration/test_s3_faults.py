"""S3 GetObject throttled, failing, dropped or cut short, through a fault-injecting proxy in front of moto."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from devkit.faults import AwsFaults, FaultCounts, FaultSwitch, Proxy, SendLog
from devkit.messages import s3_notification, sqs_event
from docindex.core.clients import boto_config
from docindex.core.settings import Settings
from docindex.ingest.indexer import Indexer
from tests.conftest import REGION, Stack
from tests.integration.conftest import invoke

TEXT = ("四半期売上報告 quarterly revenue " * 400 + "末尾の管理番号 TAIL-7781").encode()


@pytest.fixture
def s3_faults(stack: Stack) -> Iterator[tuple[Indexer, AwsFaults]]:
    import boto3

    switch = FaultSwitch()
    switch.active = False  # only the scripted faults below
    faults = AwsFaults(client="test", switch=switch, rates=None, seed=0, sends=SendLog(), counts=FaultCounts())
    proxy = Proxy(stack.aws.endpoint, faults).start()
    try:
        s3 = boto3.Session(region_name=REGION).client("s3", endpoint_url=proxy.url, config=boto_config(max_attempts=3))
        settings = Settings.from_env(stack.settings_env())
        indexer = Indexer(settings, s3=s3, sqs=stack.aws.sqs, dynamodb=stack.aws.dynamodb, opensearch=stack.opensearch)
        yield indexer, faults
    finally:
        proxy.stop()


def _upload(stack: Stack, key: str) -> dict[str, Any]:
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=TEXT)
    return s3_notification(stack.bucket, key, sequencer="00A1")


def test_a_body_cut_short_fails_the_record_instead_of_indexing_half_a_file(stack: Stack, s3_faults) -> None:
    indexer, faults = s3_faults
    event = sqs_event(_upload(stack, "cut/報告.txt"))
    # Given S3 answers with the full Content-Length but closes the connection halfway through the body
    faults.scripted = ["truncate"]
    # When the indexer reads it
    failed = invoke(indexer, event)
    # Then the record fails (SQS delivers it again) and nothing half-read is indexed
    assert failed == {event["Records"][0]["messageId"]}
    assert stack.doc("cut/報告.txt") is None
    # ...and the redelivery indexes the whole file
    assert invoke(indexer, event) == set()
    doc = stack.doc("cut/報告.txt")
    assert doc is not None
    assert "TAIL-7781" in doc["_source"]["content"]


@pytest.mark.parametrize("fault", ["throttle", "error", "drop"])
def test_throttled_failing_or_dropped_getobject_is_retried_in_the_invocation(
    stack: Stack, s3_faults, fault: str
) -> None:
    indexer, faults = s3_faults
    faults.scripted = [fault, fault]
    event = sqs_event(_upload(stack, f"retry/{fault}.txt"))
    assert invoke(indexer, event) == set()
    doc = stack.doc(f"retry/{fault}.txt")
    assert doc is not None
    assert "TAIL-7781" in doc["_source"]["content"]
    assert faults.counts.snapshot()  # the faults really happened


def test_getobject_failing_past_the_sdk_retries_fails_only_that_record(stack: Stack, s3_faults) -> None:
    indexer, faults = s3_faults
    first, second = _upload(stack, "many/a.txt"), _upload(stack, "many/b.txt")
    event = sqs_event(first, second)
    # Every attempt the client's retry budget allows (max_attempts=3 retries: four) throttled
    faults.scripted = ["throttle"] * 4
    failed = invoke(indexer, {"Records": event["Records"][:1]})
    assert failed == {event["Records"][0]["messageId"]}
    assert invoke(indexer, {"Records": event["Records"][1:]}) == set()
    assert stack.doc("many/a.txt") is None
    assert stack.doc("many/b.txt") is not None


def test_the_fault_proxy_stores_a_gzip_encoded_object_as_sent(stack: Stack, s3_faults) -> None:
    # The worker stores page-range parts gzip-compressed with Content-Encoding: gzip (object
    # metadata): the proxy in front of S3 must not decompress them on the way in, as it does for
    # OpenSearch's compressed _bulk requests (the rolling-upgrade soak read parts it had altered).
    import gzip

    indexer, _faults = s3_faults
    packed = gzip.compress(b'{"first_page": 0}')
    through_proxy = indexer.store._s3
    through_proxy.put_object(Bucket=stack.bucket, Key="parts/0.json.gz", Body=packed, ContentEncoding="gzip")
    stored = stack.aws.s3.get_object(Bucket=stack.bucket, Key="parts/0.json.gz")
    assert stored["Body"].read() == packed
    assert stored["ContentEncoding"] == "gzip"
