"""The one factory of AWS and OpenSearch clients, created once per process and passed in.

boto3 honours ``AWS_ENDPOINT_URL`` itself, so the same code talks to AWS or to
the local moto server. One retry policy for every AWS client of every
component: botocore's standard mode (exponential backoff with jitter,
throttling-aware, ``RETRY_ATTEMPTS`` attempts) rather than hand-written loops.
OpenSearch clients do not retry in the transport: the bulk writer and the
document store retry with their own time budget (one retry layer per hop).
"""

from __future__ import annotations

import os
import threading
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from docindex.core.settings import OpenSearchSettings

# Retries per AWS call after the first attempt (botocore's ``max_attempts`` in a Config's ``retries`` counts
# the retries, unlike AWS_MAX_ATTEMPTS and ``total_max_attempts``): six attempts in all, for every component.
RETRY_ATTEMPTS = 5


def boto_config(
    max_attempts: int = RETRY_ATTEMPTS,
    *,
    read_timeout: float = 30.0,
    connect_timeout: float = 5.0,
    pool: int = 32,
    total_attempts: int | None = None,
) -> Any:
    """The botocore config of every docindex client (``max_attempts`` is for test harnesses only). A call that
    must fit a caller's deadline (Bedrock's Converse inside an API request) gives ``total_attempts`` (botocore's
    ``total_max_attempts``: the first attempt included — its ``max_attempts`` counts the retries only) and its
    timeouts."""
    from botocore.config import Config

    retries: dict[str, Any] = {"mode": "standard", "max_attempts": max_attempts}
    if total_attempts is not None:
        retries = {"mode": "standard", "total_max_attempts": total_attempts}
    return Config(
        retries=retries,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=pool,
    )


# gzip level of request bodies. opensearch-py compresses at level 9: 23 MB/s on
# Japanese _bulk bodies here, 3.5 ms of CPU per document, as much as extracting
# it. Level 1 compresses 165 MB/s and still shrinks the body 5x (level 9: 7.4x).
GZIP_LEVEL = 1


@cache
def fast_gzip_connection() -> type:
    """opensearch-py's urllib3 connection, compressing request bodies at ``GZIP_LEVEL``."""
    import gzip

    from opensearchpy import Urllib3HttpConnection

    class FastGzipConnection(Urllib3HttpConnection):
        def _gzip_compress(self, body: Any) -> bytes:
            data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
            return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)

    return FastGzipConnection


@cache
def fast_json_serializer() -> Any:
    """opensearch-py's JSON serializer, reading answers with pydantic-core's parser (in the layer already,
    for pydantic): 5x faster than ``json.loads`` on the numbers of a response — the vector leg's
    20 best-passage vectors are 7,680 of them, ~3 ms of ``json.loads`` per hybrid search, 0.6 ms here
    (docs/performance.md). What it cannot read (a lone surrogate escape, which ``json.loads``
    accepts) goes to ``json.loads``, so every answer reads as before."""
    from opensearchpy.serializer import JSONSerializer
    from pydantic_core import from_json

    class FastJSONSerializer(JSONSerializer):
        def loads(self, s: str) -> Any:
            try:
                return from_json(s)
            except ValueError:
                return super().loads(s)

    return FastJSONSerializer()


def make_opensearch(
    endpoint: str,
    *,
    auth: str = "sigv4",
    service: str = "es",
    region: str = "us-east-1",
    timeout: float = 30.0,
) -> OpenSearch:
    """An opensearch-py client; SigV4 with refreshing credentials unless ``auth`` is ``none``."""
    from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth

    kwargs: dict[str, Any] = {
        "hosts": [endpoint],
        "timeout": timeout,
        "connection_class": fast_gzip_connection(),
        # docindex does its own bounded retries around _bulk (index/bulk.py);
        # the transport retrying too would stack retries on retries.
        "max_retries": 0,
        "retry_on_timeout": False,
        "http_compress": True,
        "pool_maxsize": 32,
        "serializer": fast_json_serializer(),
    }
    if auth == "sigv4":
        import boto3

        # The session's credentials object refreshes itself (Lambda role,
        # ECS task role), so the signer never holds expired keys.
        credentials = boto3.Session().get_credentials()
        kwargs["http_auth"] = Urllib3AWSV4SignerAuth(credentials, region, service)
        kwargs["use_ssl"] = endpoint.startswith("https://")
        kwargs["verify_certs"] = True
    return OpenSearch(**kwargs)


def opensearch_client(settings: OpenSearchSettings, *, timeout: float | None = None) -> OpenSearch:
    """The client for ``settings`` (``OPENSEARCH_*``, ``AWS_REGION``)."""
    return make_opensearch(
        settings.opensearch_endpoint,
        auth=settings.opensearch_auth,
        service=settings.opensearch_service,
        region=settings.aws_region,
        timeout=timeout or settings.opensearch_timeout_seconds,
    )


class AwsClients:
    """boto3 clients for one region (and profile, endpoint), each created on first use."""

    def __init__(self, region: str, *, profile: str | None = None, endpoint_url: str | None = None) -> None:
        self.region = region
        self.profile = profile
        self.endpoint_url = endpoint_url
        self._clients: dict[tuple[str, int | None, float, float], Any] = {}
        self._lock = threading.Lock()

    @cached_property
    def session(self) -> Any:
        import boto3

        return boto3.Session(region_name=self.region, profile_name=self.profile)

    def client(
        self,
        service: str,
        *,
        total_attempts: int | None = None,
        read_timeout: float = 30.0,
        connect_timeout: float = 5.0,
    ) -> Any:
        """The client of ``service`` (one per process, service and bounds: ``total_attempts`` and the timeouts for
        a call that must fit a deadline, e.g. ``AnswerSettings.converse_bounds``; else the shared retry policy)."""
        key = (service, total_attempts, read_timeout, connect_timeout)
        with self._lock:
            if key not in self._clients:
                config = boto_config(
                    total_attempts=total_attempts, read_timeout=read_timeout, connect_timeout=connect_timeout
                )
                kwargs: dict[str, Any] = {"config": config}
                # boto3's own per-service override first (AWS_ENDPOINT_URL_BEDROCK_RUNTIME: the local run's
                # Converse stand-in), as botocore reads it when no endpoint is given
                specific = os.environ.get("AWS_ENDPOINT_URL_" + service.upper().replace("-", "_"))
                if specific or self.endpoint_url:
                    kwargs["endpoint_url"] = specific or self.endpoint_url
                self._clients[key] = self.session.client(service, **kwargs)
            return self._clients[key]


class Clients:
    """The clients of a deployed component (a Lambda container or the worker), from its settings."""

    def __init__(self, settings: OpenSearchSettings) -> None:
        self.settings = settings
        # boto3 reads AWS_ENDPOINT_URL from the environment itself.
        self.aws = AwsClients(settings.aws_region)

    @property
    def s3(self) -> Any:
        return self.aws.client("s3")

    @property
    def sqs(self) -> Any:
        return self.aws.client("sqs")

    @property
    def dynamodb(self) -> Any:
        return self.aws.client("dynamodb")

    @property
    def bedrock_runtime(self) -> Any:
        """Only with ``EMBEDDINGS=bedrock`` (meaning search's embedder)."""
        return self.aws.client("bedrock-runtime")

    @cached_property
    def opensearch(self) -> OpenSearch:
        return opensearch_client(self.settings)
