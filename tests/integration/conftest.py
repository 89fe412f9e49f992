"""Shared integration fixtures: moto in server mode, reached over real HTTP.

osmem-server's pytest plugin (installed with the package) provides
``osmem_server`` / ``osmem_clone`` for the OpenSearch side.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest
from moto.server import ThreadedMotoServer


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """One moto server per test session (per xdist worker); its base URL."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def moto_reset(moto_endpoint: str) -> str:
    """A moto server emptied of every resource, for tests that create their own."""
    request = urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()
    return moto_endpoint
