"""The local stack's session: start or reuse the servers, provision, write the env file, drive the handlers.

``docindex local`` and ``docindex demo`` (and the soak and bench) call these; they need a checkout
with the dev install, since the local servers and the handlers' source live there.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

DEFAULT_STATE_DIR = Path(".docindex")
# The local node's k-NN plugin comes without Faiss's native library (Maven Central's zip): its vectors are
# Lucene's float32. The default bq4 returns each hit's exact cosine (its binary codes only pick the candidates,
# the full vectors rescore them), and so does fp32, where int7 would score with its 7-bit codes: the scores
# meaning search's rule is fitted on are the production ones (docs/meaning-search.md).
LOCAL_NODE_VECTOR_ENCODING = "fp32"
# moto accepts any keys; these are not secrets and never reach AWS.
EMBEDDED_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}  # nosec


def default_env_file(state_dir: Path) -> Path:
    return state_dir / "local.env"


def local_up(
    *,
    state_dir: Path = DEFAULT_STATE_DIR,
    env_file: Path | None = None,
    aws_endpoint: str | None = None,
    opensearch_endpoint: str | None = None,
    prefix: str = "docindex",
    region: str = "us-east-1",
    function_timeout: int = 10,
    max_receive_count: int = 5,
    visibility_timeout: int = 0,
    ocr_visibility_timeout: int = 120,
    log_level: str = "WARNING",
    notes: list[str] | None = None,
    serve_api: bool = False,
    embeddings: str = "local",
    file_server_shares: str | None = None,
    vector_encoding: str | None = None,
) -> dict[str, str]:
    """Start or reuse the servers, provision the stack, write the env file; return the env.

    With ``serve_api`` it also serves the search API and page (the local gateway) and returns
    their address as ``SEARCH_PAGE_URL``. ``file_server_shares`` (else an exported
    ``FILE_SERVER_SHARES``): which key prefix is which file server share, for the hits' paths.
    What serves as OpenSearch when no endpoint is given is a real OpenSearch node (devkit.opensearch:
    2.19.1 with k-NN, its data kept under the state directory). A server recorded in ``servers.json``
    that no longer answers is started afresh: moto comes back empty (it keeps its state in memory), and
    ``notes`` then gets a sentence when the index still holds documents, since the index and the
    emulated bucket no longer agree; the node comes back with the index it kept on disk.
    ``vector_encoding``: the index's VECTOR_ENCODING (default: what the node started here serves, else
    the product's default).
    """
    import boto3

    from devkit.local.servers import load_servers, save_servers
    from devkit.local.stack import StackNames, StackOptions, provision
    from docindex.core.clients import boto_config

    state_dir.mkdir(parents=True, exist_ok=True)
    servers = load_servers(state_dir)
    env: dict[str, str] = {}
    restarted: list[str] = []
    aws_endpoint, opensearch_endpoint = _embedded_servers(
        state_dir, servers, aws_endpoint, opensearch_endpoint, env=env, restarted=restarted
    )
    save_servers(state_dir, servers)

    credentials = {
        "aws_access_key_id": env.get("AWS_ACCESS_KEY_ID") or os.environ.get("AWS_ACCESS_KEY_ID"),
        "aws_secret_access_key": env.get("AWS_SECRET_ACCESS_KEY") or os.environ.get("AWS_SECRET_ACCESS_KEY"),
    }
    session = boto3.Session(region_name=region, **{k: v for k, v in credentials.items() if v})

    def client(service: str) -> Any:
        return session.client(service, endpoint_url=aws_endpoint, config=boto_config())

    from opensearchpy import OpenSearch

    opensearch = OpenSearch(hosts=[opensearch_endpoint], timeout=30)
    provisioned = provision(
        s3=client("s3"),
        sqs=client("sqs"),
        dynamodb=client("dynamodb"),
        opensearch=opensearch,
        names=StackNames(prefix),
        options=StackOptions(
            function_timeout=function_timeout,
            max_receive_count=max_receive_count,
            visibility_timeout=visibility_timeout,
            ocr_visibility_timeout=ocr_visibility_timeout,
            embeddings=embeddings,
            vector_encoding=vector_encoding or env.get("VECTOR_ENCODING"),
        ),
        region=region,
    )
    env.update(provisioned)
    if restarted and notes is not None:
        notes.extend(_disagreement(restarted, opensearch, provisioned["OPENSEARCH_INDEX"]))
    env.update(
        {
            "AWS_ENDPOINT_URL": aws_endpoint,
            "AWS_REGION": region,
            "AWS_DEFAULT_REGION": region,
            "OPENSEARCH_ENDPOINT": opensearch_endpoint,
            "OPENSEARCH_AUTH": "none",
            "POWERTOOLS_SERVICE_NAME": "docindex",
            "POWERTOOLS_METRICS_NAMESPACE": "DocIndex",
            "POWERTOOLS_LOG_LEVEL": log_level,
            # No X-Ray daemon locally.
            "POWERTOOLS_TRACE_DISABLED": "true",
        }
    )
    shares = file_server_shares if file_server_shares is not None else os.environ.get("FILE_SERVER_SHARES", "")
    if shares:
        env["FILE_SERVER_SHARES"] = shares
    from devkit.local.signin import provision_user_pool

    # Local sign-in for the search page and API: a Cognito user pool on moto server.
    env.update(
        provision_user_pool(
            client("cognito-idp"),
            prefix=prefix,
            admin_group=env.get("DOCINDEX_ADMIN_GROUP", "docindex-admins"),
            region=region,
        )
    )
    from docindex.ops.envfile import write_env_file

    path = env_file or default_env_file(state_dir)
    write_env_file(path, env)
    if serve_api:
        from devkit.local.servers import start_gateway, stop

        known = servers.get("gateway")
        if known:
            stop(known)  # it read the previous env file
        servers["gateway"] = start_gateway(state_dir, path)
        save_servers(state_dir, servers)
        env["SEARCH_PAGE_URL"] = servers["gateway"].url + "/"
    return env


def _embedded_servers(
    state_dir: Path,
    servers: dict[str, Any],
    aws_endpoint: str | None,
    opensearch_endpoint: str | None,
    *,
    env: dict[str, str],
    restarted: list[str],
) -> tuple[str, str]:
    """Start (or reuse) moto and a real OpenSearch node for the endpoints not given; their URLs."""
    from devkit.local.servers import responds, start_converse, start_moto

    if aws_endpoint is None:
        known = servers.get("moto")
        if not (known and responds(known.url, "/moto-api/")):
            if known:
                restarted.append("moto")
            servers["moto"] = start_moto(state_dir)
        aws_endpoint = servers["moto"].url
        env.update(EMBEDDED_CREDENTIALS)
        # moto has no Converse: the stand-in answers ANSWERS=bedrock (devkit/local/converse.py)
        converse = servers.get("converse")
        if not (converse and responds(converse.url)):
            servers["converse"] = start_converse(state_dir)
        env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = servers["converse"].url
    if opensearch_endpoint is None:
        opensearch_endpoint = _local_node(state_dir, servers, env)
    return aws_endpoint, opensearch_endpoint


def _local_node(state_dir: Path, servers: dict[str, Any], env: dict[str, str]) -> str:
    """Start (or reuse) the real OpenSearch node, stopping the emulator an older release's ``up`` left; its URL."""
    from devkit.local.servers import responds, stop
    from devkit.opensearch.node import start_node
    from devkit.opensearch.node import stop as stop_node

    # a state directory an older release's `up` filled: osmem-server and the k-NN stand-in in front of it
    for emulator in ("knn", "osmem"):
        if emulator in servers:
            stop(servers.pop(emulator))
    known = servers.get("opensearch")
    if not (known and responds(known.url, "/_cluster/health")):
        if known:
            stop_node(known)
        # its data is on disk (<state dir>/opensearch): a restarted node still holds the index
        servers["opensearch"] = start_node(state_dir)
    # The node has the k-NN plugin without Faiss's native library: vectors in a Lucene encoding.
    env["VECTOR_ENCODING"] = LOCAL_NODE_VECTOR_ENCODING
    return str(servers["opensearch"].url)


RESET_BOTH = "docindex local down && rm -rf .docindex && docindex local up"


def _disagreement(restarted: list[str], opensearch: Any, index: str) -> list[str]:
    """What the user must know when moto came back empty and the index (kept on the node's disk) did not."""
    notes = []
    if "moto" in restarted:
        documents = int(opensearch.count(index=index).get("count", 0))
        if documents:
            notes.append(
                f"the local AWS emulator (moto) had stopped: a new, empty one was started, but index {index} still "
                f"holds {documents:,} documents: the index and the emulators disagree. Reset both: {RESET_BOTH} "
                "(or upload the documents again and run `docindex reconcile --fix`)"
            )
    return notes


def run_local(
    env_file: Path,
    *,
    once: bool,
    batch_size: int = 10,
    max_seconds: float | None = None,
    with_worker: bool = True,
    on_progress: Any = None,
    progress_every: float = 2.0,
) -> Any:
    """Apply the env file and poll the local queues into the real handlers.

    ``on_progress(stats, elapsed, depths)`` is called every couple of seconds (``depths``: messages
    waiting in the ingest and OCR queues)."""
    from docindex.ops.envfile import apply_env_file

    env = apply_env_file(env_file)
    import boto3

    from devkit.local.handlers import load_handler
    from devkit.local.runner import LocalRunner
    from docindex.core.clients import boto_config

    sqs = boto3.client("sqs", region_name=env.get("AWS_REGION", "us-east-1"), config=boto_config())
    worker = None
    if with_worker:
        worker = local_worker()
    runner = LocalRunner(
        sqs=sqs,
        handler=load_handler("indexer"),
        queue_url=env["INGEST_QUEUE_URL"],
        queue_arn=env["INGEST_QUEUE_ARN"],
        region=env.get("AWS_REGION", "us-east-1"),
        batch_size=batch_size,
        function_timeout=float(env.get("LOCAL_FUNCTION_TIMEOUT", "10")),
        worker=worker,
    )
    report = None
    if on_progress is not None:

        def report(stats: Any, elapsed: float) -> None:
            try:
                depths = list(runner.depths().values())
            except Exception:  # noqa: BLE001 - a progress line without the depth is still a progress line
                depths = []
            on_progress(stats, elapsed, depths)

    stats = runner.run(once=once, max_seconds=max_seconds, on_progress=report, progress_every=progress_every)
    if stats.drained:
        refresh_index(env)
    return stats


def refresh_index(env: dict[str, str]) -> None:
    """Make what a drained run indexed searchable when it returns: the node refreshes its index every second, and
    a search or a reconcile started at once could miss the last batch (best effort: the node may be gone)."""
    endpoint, index = env.get("OPENSEARCH_ENDPOINT"), env.get("OPENSEARCH_INDEX")
    if not endpoint or not index or env.get("OPENSEARCH_AUTH", "none") != "none":
        return
    try:
        from opensearchpy import OpenSearch

        OpenSearch(hosts=[endpoint], timeout=30).indices.refresh(index=index)
    except Exception as exc:  # noqa: BLE001 - the documents are indexed; only their visibility waits a second
        logging.getLogger(__name__).warning("could not refresh the index", extra={"error": str(exc)[:200]})


def local_worker() -> Any:
    """The OCR worker when this build has one (``docindex.worker``)."""
    try:
        from docindex.worker import build_local_worker
    except ImportError:
        return None
    return build_local_worker()


def local_down(state_dir: Path) -> list[Any]:
    """Stop the servers ``local_up`` started; the ones stopped."""
    from devkit.local.servers import load_servers, save_servers, stop
    from devkit.opensearch.node import stop as stop_node

    servers = load_servers(state_dir)
    for name, info in servers.items():
        (stop_node if name == "opensearch" else stop)(info)
    save_servers(state_dir, {})
    return list(servers.values())
