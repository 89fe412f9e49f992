"""The servers a bench run starts for itself, with the clients on them; stopped at the end.

``local_services``: moto and a search engine (a pipeline's worth); ``search_engine``: a search engine
alone for the search benches — a real OpenSearch node (``engine="opensearch"``, devkit.opensearch:
2.19.1 with k-NN, kuromoji and ICU) or osmem-server with its Japanese analysis (``engine="osmem"``), which
answers no ``knn`` query: a comparison engine for the keyword benches only (bench.relevance, bench.variants;
bench.run's pipeline starts it through ``servers_running``). ``ENGINES`` and ``engine_name()``
(``DOCINDEX_BENCH_ENGINE``) let such a bench run on either; the benches whose search runs by meaning
(bench.meaning, bench.answers, bench.search_latency, bench.pages) ask for the real node by name.
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
    search_url: str


@contextmanager
def servers_running(state_dir: Path, engine: str = "opensearch") -> Iterator[tuple[Any, Any]]:
    """moto and a search engine for one run, both exiting with this process: ``(moto, engine)``.

    ``engine``: ``opensearch`` (a real node of the run's own: devkit.opensearch) or ``osmem`` (the emulator,
    keyword search only: it answers no k-NN query). What a benchmark starts when it needs the two servers
    only for itself (``docindex local up`` keeps them running instead: devkit.local.session).
    """
    from devkit.local.servers import start_moto, start_osmem, stop
    from devkit.opensearch.node import start_node
    from devkit.opensearch.node import stop as stop_node

    moto = start_moto(state_dir, exit_with_parent=True)
    try:
        if engine == "opensearch":
            found, stopper = start_node(state_dir, exit_with_parent=True), stop_node
        else:
            found, stopper = start_osmem(state_dir), stop
        try:
            yield moto, found
        finally:
            stopper(found)
    finally:
        stop(moto)


@contextmanager
def local_services(prefix: str, region: str = "us-east-1") -> Iterator[LocalServices]:
    """Start moto and the engine (``engine_name()``: a real node by default), yield their clients, stop them."""
    import boto3
    from opensearchpy import OpenSearch

    state = Path(tempfile.mkdtemp(prefix=prefix))
    with servers_running(state, engine=engine_name()) as (moto, engine):
        # moto accepts any credentials; these never leave the machine.
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
        session = boto3.Session(region_name=region)
        aws = {name: session.client(name, endpoint_url=moto.url) for name in ("s3", "sqs", "dynamodb")}
        yield LocalServices(state, aws, OpenSearch(hosts=[engine.url], timeout=60), moto.url, engine.url)


ENGINES = ("opensearch", "osmem")


def engine_name(name: str | None = None) -> str:
    """The engine a bench runs on: ``name``, else ``DOCINDEX_BENCH_ENGINE``, else the real node."""
    chosen = name or os.environ.get("DOCINDEX_BENCH_ENGINE") or "opensearch"
    if chosen not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {chosen!r}")
    return chosen


@dataclass(frozen=True)
class Engine:
    """A running engine: ``url`` (what docindex talks to), ``pid`` (the process whose CPU is the engine's)."""

    name: str
    url: str
    pid: int | None
    # VECTOR_ENCODING the engine serves (the real node: Lucene's only); None: no vectors searched (osmem)
    vector_encoding: str | None = None


@contextmanager
def search_engine(timeout: float = 120, engine: str | None = None) -> Iterator[tuple[Engine, Any]]:
    """A search engine for one run (``engine_name``) and an opensearch-py client on it; stopped after.

    ``opensearch``: a real node of its own (heap: ``DOCINDEX_OPENSEARCH_HEAP_MB``). ``osmem``: osmem-server
    with kuromoji and ICU; it stores ``knn_vector`` fields but answers no ``knn`` query (keyword search only).
    """
    from opensearchpy import OpenSearch

    chosen = engine_name(engine)
    if chosen == "opensearch":
        from devkit.opensearch.engine import NodeEngine

        node = NodeEngine.start(Path(tempfile.mkdtemp(prefix="bench-opensearch-")))
        try:
            yield (
                Engine(chosen, node.url, node.pid, NodeEngine.vector_encoding),
                OpenSearch(hosts=[node.url], timeout=timeout),
            )
        finally:
            node.close()
        return
    from osmem_server import OsmemServer

    with OsmemServer.start(japanese=True) as server:
        yield Engine(chosen, server.url, server.pid), OpenSearch(hosts=[server.url], timeout=timeout)
