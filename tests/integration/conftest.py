"""Fixtures for the indexer against moto server and a real OpenSearch node."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from devkit.local.context import LocalLambdaContext
from docindex.core.settings import Settings
from docindex.ingest.indexer import Indexer
from tests.conftest import Stack

if TYPE_CHECKING:
    from docindex.worker.pool import OcrPool
    from tests.support.worker import WorkerFactory


def build_indexer(stack: Stack, opensearch: Any = None, **overrides: str) -> Indexer:
    settings = Settings.from_env(stack.settings_env(**overrides))
    return Indexer(
        settings,
        s3=stack.aws.s3,
        sqs=stack.aws.sqs,
        dynamodb=stack.aws.dynamodb,
        opensearch=opensearch or stack.opensearch,
    )


@pytest.fixture
def indexer(stack: Stack) -> Indexer:
    return build_indexer(stack)


def invoke(indexer: Indexer, event: dict[str, Any], timeout: float = 30.0) -> set[str]:
    """Run the indexer on ``event``; the set of failed messageIds."""
    response = indexer.handle(event, LocalLambdaContext(timeout_seconds=timeout))
    return {f["itemIdentifier"] for f in response["batchItemFailures"]}


@pytest.fixture
def moto_reset(moto_endpoint: str) -> str:
    """A moto server emptied of every resource, for tests that create their own."""
    import urllib.request

    request = urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()
    return moto_endpoint


@pytest.fixture(scope="module")
def ocr_pool() -> Iterator[OcrPool]:
    """One OCR pool of two processes per test module: spawning them and loading models once saves seconds.

    A module that needs another pool (one process, or one of each test's own) overrides this fixture.
    """
    from docindex.worker.pool import OcrPool

    pool = OcrPool(2)
    yield pool
    pool.close()


@pytest.fixture
def make_worker(ocr_pool: OcrPool) -> Iterator[WorkerFactory]:
    """Real OCR workers against the test's stack, on the module's pool."""
    from tests.support.worker import worker_factory  # it builds indexers with this module's helpers

    with worker_factory(ocr_pool) as make:
        yield make
