"""The OpenSearch client's request compression and how it reads answers."""

from __future__ import annotations

import gzip
import json
import random

from docindex.core.clients import GZIP_LEVEL, fast_gzip_connection, fast_json_serializer, opensearch_client
from docindex.core.settings import Settings


def test_request_bodies_are_gzip_at_the_fast_level() -> None:
    connection = fast_gzip_connection()(host="localhost", port=9200, http_compress=True)
    body = ('{"index":{}}\n{"content":"四半期売上報告 quarterly revenue"}\n' * 200).encode()
    compressed = connection._gzip_compress(body)
    assert gzip.decompress(compressed) == body
    assert compressed == gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
    assert len(compressed) < len(body) / 4
    # str bodies (opensearch-py passes some) are encoded as UTF-8
    assert gzip.decompress(connection._gzip_compress(body.decode())) == body


def test_the_client_uses_the_fast_gzip_connection() -> None:
    settings = Settings.from_env(
        {"OPENSEARCH_ENDPOINT": "http://127.0.0.1:9200", "OPENSEARCH_AUTH": "none", "IDEMPOTENCY_TABLE": "t"}
    )
    client = opensearch_client(settings)
    connection = client.transport.get_connection()
    assert isinstance(connection, fast_gzip_connection())
    assert connection.http_compress


def test_answers_read_as_json_loads_reads_them() -> None:
    """The client reads answers with pydantic-core's parser: the same values as ``json.loads`` —
    floats to the last bit, big integers, Japanese text, duplicate keys — and what it refuses (a lone
    surrogate escape) still reads."""
    settings = Settings.from_env(
        {"OPENSEARCH_ENDPOINT": "http://127.0.0.1:9200", "OPENSEARCH_AUTH": "none", "IDEMPOTENCY_TABLE": "t"}
    )
    deserializer = opensearch_client(settings).transport.deserializer
    assert deserializer.serializers["application/json"] is fast_json_serializer()
    rng = random.Random(7)
    vectors = [[rng.uniform(-1, 1) * 10 ** rng.randint(-9, 2) for _ in range(384)] for _ in range(20)]
    answers = [
        json.dumps({"hits": {"hits": [{"_source": {"vector": v}} for v in vectors]}}),
        json.dumps({"total": 123456789012345678901234567890, "text": "東京都の売上 é", "x": -0.0}, ensure_ascii=False),
        '{"a": 1, "a": 2}',
        '{"text": "broken \\ud800 surrogate"}',
    ]
    for answer in answers:
        assert deserializer.loads(answer, "application/json") == json.loads(answer)
    assert deserializer.loads('{"text": "\\ud800"}', "application/json") == {"text": "\ud800"}


def test_a_services_own_endpoint_wins_over_the_shared_one(monkeypatch) -> None:
    from docindex.core.clients import AwsClients

    # the local run: moto for everything, the Converse stand-in for bedrock-runtime (boto3's own variable)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:4599")
    clients = AwsClients("us-east-1", endpoint_url="http://127.0.0.1:5000")
    assert clients.client("bedrock-runtime").meta.endpoint_url == "http://127.0.0.1:4599"
    assert clients.client("s3").meta.endpoint_url == "http://127.0.0.1:5000"
