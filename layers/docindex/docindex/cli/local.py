"""``docindex local up|run|down``: the pipeline without an AWS account or Docker.

Argument parsing and rendering only: the work is in ``devkit.local`` (a checkout with the dev install).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_STATE_DIR = Path(".docindex")


def local_session() -> Any:
    try:
        from devkit.local import session
    except ImportError as exc:  # a deployed install has no devkit
        raise SystemExit("docindex local needs a checkout with the dev install (`make venv`): " + str(exc)) from exc
    return session


def _up(args: argparse.Namespace) -> int:
    session = local_session()
    env = session.local_up(
        state_dir=args.state_dir,
        env_file=args.env_file,
        aws_endpoint=args.aws_endpoint,
        opensearch_endpoint=args.opensearch_endpoint,
        prefix=args.prefix,
        region=args.region,
        function_timeout=args.function_timeout,
        max_receive_count=args.max_receive_count,
        visibility_timeout=args.visibility_timeout,
        serve_api=True,
    )
    env_file = args.env_file or session.default_env_file(args.state_dir)
    if args.json:
        print(json.dumps({"env_file": str(env_file), **env}, indent=2))
        return 0
    print(f"AWS endpoint        {env['AWS_ENDPOINT_URL']}")
    print(f"OpenSearch endpoint {env['OPENSEARCH_ENDPOINT']}")
    print(f"bucket              s3://{env['DOCINDEX_BUCKET']}  (notifications → {env['INGEST_QUEUE_URL']})")
    print(f"index               {env['OPENSEARCH_INDEX']}")
    print(f"env file            {env_file}")
    print(
        f"search page         {env.get('SEARCH_PAGE_URL', '-')}  "
        f"(users: the local user pool {env['COGNITO_USER_POOL_ID']})"
    )
    print("next: docindex local run --once   (or: docindex demo)")
    return 0


def _run(args: argparse.Namespace) -> int:
    session = local_session()
    env_file = args.env_file or session.default_env_file(args.state_dir)
    if not env_file.exists():
        print(f"{env_file} not found: run `docindex local up` first", file=sys.stderr)
        return 2
    stats = session.run_local(
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
    for info in local_session().local_down(args.state_dir):
        print(f"stopped {info.name} ({info.url})")
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
