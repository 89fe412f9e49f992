"""Shared fixtures: moto in server mode and a real OpenSearch node, real clients over HTTP.

The search engine of every test is a real OpenSearch node (devkit.opensearch: one per test process, each
test in a space of its own that is emptied after it). No test runs on the osmem-server emulator: what
judges relevance, scores or meaning search is judged on the real node alone.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.scheduling import SharedRunScheduling, write_groups

# Fake credentials for moto; set before any boto3 client exists.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "DocIndex")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "docindex")

REPO_ROOT = Path(__file__).resolve().parents[1]
EVENTS_DIR = REPO_ROOT / "events"
REGION = "us-east-1"


@pytest.fixture(autouse=True)
def _isolated_environment() -> Iterator[None]:
    """Each test gets the process environment back as it found it.

    The CLI, run in-process by many tests (``main([...])``), fills ``os.environ`` from an env
    file, as a CLI process should. Without this, one test's ``OPENSEARCH_ENDPOINT`` and
    ``OPENSEARCH_INDEX`` (its own, gone when that test ends) outlive it: a later ``docindex local run``
    started as a subprocess inherits them and keeps them over its own env file (an exported variable
    wins), talking to a server or an index that is not its own.
    """
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def load_event(name: str) -> dict[str, Any]:
    """A sample event from events/ (the files `sam local invoke -e` uses)."""
    return json.loads((EVENTS_DIR / name).read_text())


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto in server mode (one per test process): real boto3 over HTTP, real S3→SQS notifications."""
    from devkit.local.servers import start_moto, stop

    server = start_moto(tmp_path_factory.mktemp("moto"), exit_with_parent=True)
    yield server.url
    stop(server)


class Aws:
    """boto3 clients bound to the moto server."""

    def __init__(self, endpoint: str) -> None:
        import boto3

        from docindex.core.clients import boto_config

        self.endpoint = endpoint
        session = boto3.Session(region_name=REGION)
        self.s3 = session.client("s3", endpoint_url=endpoint, config=boto_config(max_attempts=2))
        self.sqs = session.client("sqs", endpoint_url=endpoint, config=boto_config(max_attempts=2))
        self.dynamodb = session.client("dynamodb", endpoint_url=endpoint, config=boto_config(max_attempts=2))

    def client(self, service: str) -> Any:
        """Another service's client on the same server (the dev kit's moto serves them all)."""
        import boto3

        from docindex.core.clients import boto_config

        return boto3.Session(region_name=REGION).client(
            service, endpoint_url=self.endpoint, config=boto_config(max_attempts=2)
        )


@pytest.fixture(scope="session")
def opensearch_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real OpenSearch node (one per test process; devkit.opensearch): ``url``, ``clone()`` gives a space.

    A space removes what was made on the node while it was open (``devkit.opensearch.engine.Space``).
    """
    from devkit.opensearch.engine import NodeEngine

    engine = NodeEngine.start(tmp_path_factory.mktemp("opensearch"))
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def search_engine(opensearch_engine: Any) -> Any:
    """The engine the suites judge search on: the real node. (Session-scoped, so a test using it stays a
    unit of its own for the scheduler: tests/support/scheduling.py.)"""
    return opensearch_engine


@pytest.fixture
def engine_space(search_engine: Any) -> Iterator[Any]:
    """A space of the test's own on the module's engine (``url``), emptied after the test."""
    with search_engine.clone() as space:
        yield space


@pytest.fixture
def engine_url(engine_space: Any) -> str:
    return str(engine_space.url)


@pytest.fixture(scope="session")
def aws(moto_endpoint: str) -> Aws:
    return Aws(moto_endpoint)


@pytest.fixture
def opensearch(engine_url: str) -> Any:
    """An opensearch-py client on the test's own space of the engine."""
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[engine_url], timeout=30)


class Stack:
    """A provisioned local stack (what template.yaml defines), unique per test."""

    def __init__(self, aws: Aws, opensearch: Any, engine_url: str, env: dict[str, str]) -> None:
        self.aws = aws
        self.opensearch = opensearch
        self.engine_url = engine_url
        self.env = env
        self.bucket = env["DOCINDEX_BUCKET"]
        self.index = env["OPENSEARCH_INDEX"]

    def settings_env(self, **overrides: str) -> dict[str, str]:
        env = {
            **self.env,
            "OPENSEARCH_ENDPOINT": self.engine_url,
            "OPENSEARCH_AUTH": "none",
            "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL": self.aws.endpoint,
        }
        env.update(overrides)
        return env

    def messages(self, queue_env: str, *, wait: int = 0, delete: bool = False) -> list[dict[str, Any]]:
        """Every message currently visible in a queue (bodies parsed when JSON)."""
        url = self.env[queue_env]
        found: list[dict[str, Any]] = []
        while True:
            got = self.aws.sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=wait, VisibilityTimeout=30
            ).get("Messages", [])
            if not got:
                break
            found.extend(got)
            wait = 0
        for m in found:
            if delete:
                self.aws.sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            else:
                self.aws.sqs.change_message_visibility(
                    QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                )
        return found

    def doc(self, key: str, bucket: str | None = None) -> dict[str, Any] | None:
        from docindex.core.changes import doc_id

        self.opensearch.indices.refresh(index=self.index)
        got = self.opensearch.get(index=self.index, id=doc_id(bucket or self.bucket, key), ignore=[404])
        return got if got.get("found") else None

    def count(self) -> int:
        self.opensearch.indices.refresh(index=self.index)
        return int(self.opensearch.count(index=self.index)["count"])


def provision_stack(
    aws: Aws, opensearch: Any, engine_url: str, prefix: str | None = None, *, engine: Any = None, **options: Any
) -> Stack:
    """Provision what template.yaml defines on moto and ``opensearch``, under ``prefix`` (default: unique).

    ``engine``: what serves ``opensearch`` (its vector encoding, if it takes only some, becomes the stack's).
    """
    from devkit.local.stack import StackNames, StackOptions, provision

    if engine is not None and engine.vector_encoding:
        options.setdefault("vector_encoding", engine.vector_encoding)
    env = provision(
        s3=aws.s3,
        sqs=aws.sqs,
        dynamodb=aws.dynamodb,
        opensearch=opensearch,
        names=StackNames(prefix or f"t{uuid.uuid4().hex[:10]}"),
        options=StackOptions(**options),
        region=REGION,
    )
    return Stack(aws, opensearch, engine_url, env)


@contextmanager
def shared_stack(aws: Aws, search_engine: Any, prefix: str | None = None, **options: Any) -> Iterator[Stack]:
    """A stack in a space of its own on the engine, for a fixture wider than one test (``scope="module"``).

    For tests that only read what their module's fixture indexed once (or add what no other test of
    the module looks for): the set-up is paid once, not per test.
    """
    from opensearchpy import OpenSearch

    with search_engine.clone() as space:
        client = OpenSearch(hosts=[space.url], timeout=30)
        yield provision_stack(aws, client, space.url, prefix, engine=search_engine, **options)


@pytest.fixture
def make_stack(aws: Aws, opensearch: Any, engine_url: str, search_engine: Any) -> Callable[..., Stack]:
    def make(prefix: str | None = None, **options: Any) -> Stack:
        return provision_stack(aws, opensearch, engine_url, prefix, engine=search_engine, **options)

    return make


@pytest.fixture
def stack(make_stack: Callable[..., Stack]) -> Stack:
    return make_stack()


@pytest.fixture(autouse=True)
def _fresh_metrics() -> Iterator[None]:
    """Metrics are process-global in Powertools; tests that call the indexer directly never flush them."""
    from docindex.core.observability import metrics

    metrics.clear_metrics()
    yield
    metrics.clear_metrics()


# ---- The order tests start in, and which share a process under xdist (tests/support/scheduling.py)

# Started first, in this order, so that none of them starts late and makes a tail: the longest
# modules of `make test` (a soak, the demo and the commands run against it, the long OCR jobs).
FIRST = (
    "tests/e2e/test_soak_short.py",
    "tests/integration/test_cluster_drills.py",
    "tests/e2e/test_demo.py",
    "tests/e2e/test_doc_examples.py",
    "tests/e2e/test_operations_cli.py",
    "tests/integration/test_worker_lifecycle.py",
    "tests/e2e/test_cli_long_runs.py",
    "tests/integration/test_bad_input.py",
    "tests/integration/test_ocr_defects.py",
    "tests/e2e/test_local_run.py",
    "tests/integration/test_backfill.py",
    "tests/integration/test_bounded_extraction.py",
    "tests/e2e/test_search_page.py",
    "tests/integration/test_worker_bombs.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(FIRST)))  # stable: modules stay whole
    if os.environ.get("PYTEST_XDIST_WORKER"):
        write_groups(config, items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> SharedRunScheduling | None:
    """`--dist loadgroup` (make test): xdist groups, module fixtures set up once, long tests first."""
    if config.getvalue("dist") != "loadgroup":
        return None
    config.option.loadscopereorder = False  # collection order: FIRST above
    return SharedRunScheduling(config, log)
