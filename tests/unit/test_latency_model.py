"""The bench's latency-faithful mode: which service a request is, and what its modelled latency is made of."""

from __future__ import annotations

import random

from devkit.faults.latency import AWS_REGION_LATENCY, LatencyModel, ServiceLatency, Spread, classify
from devkit.faults.proxy import Reply, Request


def request(path: str, *, headers: dict[str, str] | None = None, body: bytes = b"", method: str = "POST") -> Request:
    return Request(method, path, "", headers or {}, body)


def test_requests_are_told_apart_by_their_protocol() -> None:
    assert classify(request("/", headers={"x-amz-target": "DynamoDB_20120810.PutItem"})) == "dynamodb"
    assert classify(request("/", headers={"x-amz-target": "AmazonSQS.ReceiveMessage"})) == "sqs"
    assert classify(request("/", body=b"Action=SendMessage&QueueUrl=x")) == "sqs"
    signed = {"authorization": "AWS4-HMAC-SHA256 ...", "x-amz-date": "20260101T000000Z"}
    assert classify(request("/bucket/key.pdf", headers=signed, method="GET")) == "s3"
    assert classify(request("/documents/_bulk")) == "opensearch_bulk"
    assert classify(request("/documents/_doc/abc", method="PUT")) == "opensearch"


def test_log_normal_spread_has_the_given_median_and_p99() -> None:
    rng = random.Random(7)
    draws = sorted(Spread(median=0.03, p99=0.15).draw(rng) for _ in range(20000))
    assert 0.028 < draws[10000] < 0.032
    assert 0.13 < draws[19800] < 0.17


def test_bulk_latency_grows_with_its_documents_and_s3_with_the_body() -> None:
    fixed = Spread(median=0.01, p99=0.0100001)
    model = LatencyModel(
        s3_first_byte=fixed,
        s3_bytes_per_second=1e6,
        dynamodb=fixed,
        sqs=fixed,
        opensearch_base=fixed,
        opensearch_per_document=0.002,
    )
    behaviour = ServiceLatency(model)
    lines = b"".join(b'{"index":{"_id":"%d"}}\n{"content":"x"}\n' % i for i in range(50))
    _, bulk = behaviour.latency(request("/documents/_bulk", body=lines), Reply(200))
    assert abs(bulk - (0.01 + 50 * 0.002)) < 1e-3
    signed = {"authorization": "AWS4-HMAC-SHA256 ..."}
    _, get = behaviour.latency(request("/b/k", headers=signed, method="GET"), Reply(200, body=b"x" * 500_000))
    assert abs(get - (0.01 + 0.5)) < 1e-3


def test_the_default_model_is_slower_than_localhost_but_sub_second() -> None:
    m = AWS_REGION_LATENCY
    assert 0.001 < m.dynamodb.median < m.sqs.median < m.s3_first_byte.median < 1.0
