"""The OpenSearch client's request compression."""

from __future__ import annotations

import gzip

from docindex.core.clients import GZIP_LEVEL, fast_gzip_connection, opensearch_client
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
