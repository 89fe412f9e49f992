"""The servers a bench run starts for itself, with the clients on them; stopped at the end.

``local_services``: moto and osmem-server (a pipeline's worth); ``search_engine``: osmem-server
alone, with the Japanese analysis plugins, for the search benches.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LocalServices:
    state: Path  # the servers' logs; a bench may keep its own files here
    aws: dict[str, Any]  # s3, sqs, dynamodb clients on moto
    opensearch: Any
    moto_url: str
    osmem_url: str


@contextmanager
def local_services(prefix: str, region: str = "us-east-1") -> Iterator[LocalServices]:
    """Start both servers (moto exits with this process), yield their clients, stop them."""
    import boto3
    from opensearchpy import OpenSearch

    from devkit.local import servers

    state = Path(tempfile.mkdtemp(prefix=prefix))
    with servers.running(state) as (moto, osmem):
        # moto accepts any credentials; these never leave the machine.
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        session = boto3.Session(region_name=region)
        aws = {name: session.client(name, endpoint_url=moto.url) for name in ("s3", "sqs", "dynamodb")}
        yield LocalServices(state, aws, OpenSearch(hosts=[osmem.url], timeout=60), moto.url, osmem.url)


@contextmanager
def search_engine(timeout: float = 120) -> Iterator[tuple[Any, Any]]:
    """osmem-server with kuromoji and ICU (osmem_server.OsmemServer: its ``url``, ``pid``) and a client on it."""
    from opensearchpy import OpenSearch
    from osmem_server import OsmemServer

    with OsmemServer.start(japanese=True) as server:
        yield server, OpenSearch(hosts=[server.url], timeout=timeout)
