"""``docindex local up|run|down``: the pipeline without an AWS account or Docker."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

DEFAULT_STATE_DIR = Path(".docindex")
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
) -> dict[str, str]:
    """Start or reuse the servers, provision the stack, write the env file; return the env."""
    import boto3

    from docindex.clients import boto_config
    from docindex.local.servers import load_servers, responds, save_servers, start_moto, start_osmem
    from docindex.local.stack import StackNames, StackOptions, provision

    state_dir.mkdir(parents=True, exist_ok=True)
    servers = load_servers(state_dir)
    env: dict[str, str] = {}
    if aws_endpoint is None:
        known = servers.get("moto")
        if not (known and responds(known.url, "/moto-api/")):
            servers["moto"] = start_moto(state_dir)
        aws_endpoint = servers["moto"].url
        env.update(EMBEDDED_CREDENTIALS)
    if opensearch_endpoint is None:
        known = servers.get("osmem")
        if not (known and responds(known.url)):
            servers["osmem"] = start_osmem(state_dir)
        opensearch_endpoint = servers["osmem"].url
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
        ),
        region=region,
    )
    env.update(provisioned)
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
    from docindex.local.envfile import write_env_file

    write_env_file(env_file or default_env_file(state_dir), env)
    return env


def _up(args: argparse.Namespace) -> int:
    env = local_up(
        state_dir=args.state_dir,
        env_file=args.env_file,
        aws_endpoint=args.aws_endpoint,
        opensearch_endpoint=args.opensearch_endpoint,
        prefix=args.prefix,
        region=args.region,
        function_timeout=args.function_timeout,
        max_receive_count=args.max_receive_count,
        visibility_timeout=args.visibility_timeout,
    )
    env_file = args.env_file or default_env_file(args.state_dir)
    if args.json:
        print(json.dumps({"env_file": str(env_file), **env}, indent=2))
        return 0
    print(f"AWS endpoint        {env['AWS_ENDPOINT_URL']}")
    print(f"OpenSearch endpoint {env['OPENSEARCH_ENDPOINT']}")
    print(f"bucket              s3://{env['DOCINDEX_BUCKET']}  (notifications → {env['INGEST_QUEUE_URL']})")
    print(f"index               {env['OPENSEARCH_INDEX']}")
    print(f"env file            {env_file}")
    print("next: docindex local run --once   (or: docindex demo)")
    return 0


def run_local(
    env_file: Path,
    *,
    once: bool,
    batch_size: int = 10,
    max_seconds: float | None = None,
    with_worker: bool = True,
) -> Any:
    """Apply the env file and poll the local queues into the real handlers."""
    from docindex.local.envfile import apply_env_file

    env = apply_env_file(env_file)
    import boto3

    from docindex.clients import boto_config
    from docindex.local.handlers import load_handler
    from docindex.local.runner import LocalRunner

    sqs = boto3.client("sqs", region_name=env.get("AWS_REGION", "us-east-1"), config=boto_config())
    worker = None
    if with_worker:
        worker = _local_worker()
    runner = LocalRunner(
        sqs=sqs,
        handler=load_handler("indexer"),
        queue_url=env["INGEST_QUEUE_URL"],
        queue_arn=env["INGEST_QUEUE_ARN"],
        region=env.get("AWS_REGION", "us-east-1"),
        batch_size=batch_size,
        function_timeout=float(env.get("LOCAL_FUNCTION_TIMEOUT", "10")),
        worker=worker,
        ocr_queue_url=env.get("OCR_QUEUE_URL"),
    )
    return runner.run(once=once, max_seconds=max_seconds)


def _local_worker() -> Any:
    """The OCR worker when this build has one (``docindex.worker``)."""
    try:
        from docindex.worker import build_local_worker
    except ImportError:
        return None
    return build_local_worker()


def _run(args: argparse.Namespace) -> int:
    env_file = args.env_file or default_env_file(args.state_dir)
    if not env_file.exists():
        print(f"{env_file} not found: run `docindex local up` first", file=sys.stderr)
        return 2
    stats = run_local(
        env_file,
        once=args.once,
        batch_size=args.batch_size,
        max_seconds=args.max_seconds,
        with_worker=not args.no_worker,
    )
    summary = {
        "batches": stats.batches,
        "records": stats.records,
        "failed_records": stats.failures,
        "ocr_jobs": stats.ocr_jobs,
        "drained": stats.drained,
        "seconds": round(stats.seconds, 2),
        "metrics": dict(sorted(stats.metrics.items())),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"{stats.records} records in {stats.batches} batches, {stats.failures} failed, "
            f"{stats.ocr_jobs} OCR jobs, {stats.seconds:.1f} s" + (" — queues drained" if stats.drained else "")
        )
        for name, value in summary["metrics"].items():
            print(f"  {name:<22} {value:g}")
    return 0 if (stats.drained or not args.once) else 1


def _down(args: argparse.Namespace) -> int:
    from docindex.local.servers import load_servers, save_servers, stop

    servers = load_servers(args.state_dir)
    for info in servers.values():
        stop(info)
        print(f"stopped {info.name} ({info.url})")
    save_servers(args.state_dir, {})
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("local", help="run the pipeline locally (moto server + osmem-server)")
    sub = parser.add_subparsers(dest="local_command", metavar="SUBCOMMAND", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR, help="local state (default .docindex)")
        p.add_argument("--env-file", type=Path, default=None, help="env file (default <state-dir>/local.env)")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    up = sub.add_parser("up", help="start/reuse the local servers and provision the stack")
    common(up)
    up.add_argument("--aws-endpoint", help="use this AWS endpoint instead of starting moto server")
    up.add_argument("--opensearch-endpoint", help="use this OpenSearch instead of starting osmem-server")
    up.add_argument("--prefix", default="docindex", help="resource name prefix (default docindex)")
    up.add_argument("--region", default="us-east-1")
    up.add_argument("--function-timeout", type=int, default=10, help="simulated indexer timeout, seconds")
    up.add_argument("--max-receive-count", type=int, default=5, help="receives before a message is dead-lettered")
    up.add_argument(
        "--visibility-timeout", type=int, default=0, help="ingest queue visibility (default 6 × function timeout)"
    )
    up.set_defaults(func=_up)

    run = sub.add_parser("run", help="poll the queues into the handlers, like the SQS event source mapping")
    common(run)
    run.add_argument("--once", action="store_true", help="exit when the queues are drained")
    run.add_argument("--batch-size", type=int, default=10)
    run.add_argument("--max-seconds", type=float, default=None, help="stop after this long")
    run.add_argument("--no-worker", action="store_true", help="do not run the OCR worker")
    run.set_defaults(func=_run)

    down = sub.add_parser("down", help="stop the servers `local up` started")
    common(down)
    down.set_defaults(func=_down)
