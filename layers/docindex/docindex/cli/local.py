"""``docindex local up|run|down``: the pipeline without an AWS account or Docker.

Argument parsing and rendering only: the work is in ``devkit.local`` (a checkout with the dev install).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

DEFAULT_STATE_DIR = Path(".docindex")
# The ``--json`` schema's version (docs/operations.md, "JSON output").
JSON_VERSION = 1


def local_session() -> Any:
    try:
        from devkit.local import session
    except ImportError as exc:  # a deployed install has no devkit
        raise CommandError("docindex local needs a checkout with the dev install (`make venv`): " + str(exc)) from exc
    return session


def _up(args: argparse.Namespace) -> int:
    session = local_session()
    notes: list[str] = []
    env = session.local_up(
        notes=notes,
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
        file_server_shares=args.file_server_shares,
    )
    env_file = args.env_file or session.default_env_file(args.state_dir)
    for note in notes:
        print(f"docindex local up: warning: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps({"env_file": str(env_file), **env, "warnings": notes}, indent=2))
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


def _progress_printer(enabled: bool) -> Any:
    """A status line on stderr: rewritten in place on a terminal, one line each time otherwise."""
    if not enabled:
        return None
    tty = sys.stderr.isatty()

    def show(stats: Any, elapsed: float, depths: list[int]) -> None:
        rate = stats.records / elapsed if elapsed > 0 else 0.0
        queues = "?" if not depths else f"{depths[0]:,}" + (f" (OCR {depths[1]:,})" if len(depths) > 1 else "")
        line = (
            f"local run: {stats.records:,} messages ({stats.failures:,} failed), "
            f"{stats.metrics.get('DocumentsIndexed', 0):,.0f} documents, {stats.ocr_jobs:,} OCR jobs, "
            f"{rate:,.1f} msg/s, {queues} waiting, {elapsed:,.0f} s"
        )
        print(("\r\x1b[2K" + line) if tty else line, end="" if tty else "\n", file=sys.stderr, flush=True)

    return show


def _verdict(stats: Any, args: argparse.Namespace) -> tuple[str, int]:
    """The one-line verdict and the exit code: 0 drained (or a continuous run stopped), 1 --once not drained."""
    left = "an unknown number of" if stats.left is None else f"{stats.left:,}"
    failed = f", {stats.failures:,} failed (see `docindex diagnose --check dlq`)" if stats.failures else ""
    done = f"{stats.records:,} messages, {stats.ocr_jobs:,} OCR jobs in {stats.seconds:,.1f} s{failed}"
    if stats.drained:
        return f"drained: {done}", 0
    if stats.stopped == "time limit":
        verdict = f"stopped at --max-seconds {args.max_seconds:g} with {left} messages left: {done}"
    elif stats.stopped == "interrupted":
        verdict = f"stopped by Ctrl-C with {left} messages left: {done}"
    else:
        verdict = f"stopped with {left} messages left: {done}"
    if args.once:
        # --once promised a drained queue: not having one is the answer "no" (1), Ctrl-C is 130.
        return verdict + "; run it again to continue", 130 if stats.stopped == "interrupted" else 1
    return verdict, 0


def _run(args: argparse.Namespace) -> int:
    session = local_session()
    env_file = args.env_file or session.default_env_file(args.state_dir)
    if not env_file.exists():
        raise CommandError(f"{env_file} not found: run `docindex local up` first")
    stats = session.run_local(
        env_file,
        once=args.once,
        batch_size=args.batch_size,
        max_seconds=args.max_seconds,
        with_worker=not args.no_worker,
        on_progress=_progress_printer(not (args.json or args.no_progress)),
        progress_every=args.progress_interval or (1.0 if sys.stderr.isatty() else 10.0),
    )
    if not (args.json or args.no_progress) and sys.stderr.isatty():
        print(file=sys.stderr)  # end the status line
    verdict, code = _verdict(stats, args)
    summary = {
        "version": JSON_VERSION,
        "verdict": verdict,
        "stopped": stats.stopped or None,
        "drained": stats.drained,
        "left": stats.left,
        "batches": stats.batches,
        "records": stats.records,
        "failed_records": stats.failures,
        "ocr_jobs": stats.ocr_jobs,
        "seconds": round(stats.seconds, 2),
        "metrics": dict(sorted(stats.metrics.items())),
        "exit_code": code,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{stats.records} records in {stats.batches} batches, {stats.failures} failed, {stats.ocr_jobs} OCR jobs")
        for name, value in summary["metrics"].items():
            print(f"  {name:<22} {value:g}")
        print(verdict)
    return code


def _down(args: argparse.Namespace) -> int:
    for info in local_session().local_down(args.state_dir):
        print(f"stopped {info.name} ({info.url})")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("local", help="run the pipeline locally (moto server + a real OpenSearch node)")
    sub = parser.add_subparsers(dest="local_command", metavar="SUBCOMMAND", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR, help="local state (default .docindex)")
        p.add_argument("--env-file", type=Path, default=None, help="env file (default <state-dir>/local.env)")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    up = sub.add_parser("up", help="start/reuse the local servers and provision the stack")
    common(up)
    up.add_argument("--aws-endpoint", help="use this AWS endpoint instead of starting moto server")
    up.add_argument(
        "--opensearch-endpoint",
        help="use this OpenSearch instead of starting the local node (2.19.1 with k-NN, kuromoji and ICU; "
        "`make opensearch` builds it)",
    )
    up.add_argument("--prefix", default="docindex", help="resource name prefix (default docindex)")
    up.add_argument("--region", default="us-east-1")
    up.add_argument(
        "--function-timeout", type=_ops.bounded_int(1, 900), default=10, help="simulated indexer timeout, seconds"
    )
    up.add_argument(
        "--max-receive-count",
        type=_ops.bounded_int(1, 1000),
        default=5,
        help="receives before a message is dead-lettered",
    )
    up.add_argument(
        "--visibility-timeout",
        type=_ops.bounded_int(0, 43_200),
        default=0,
        help="ingest queue visibility (default 6 × function timeout)",
    )
    up.add_argument(
        "--file-server-shares",
        metavar="MAP",
        help="which key prefix is which file server share, e.g. 'nas/=\\\\fs01\\Shares' (default: the exported "
        "FILE_SERVER_SHARES; docs/search-api.md#file-server-paths): the search page shows each hit's path",
    )
    up.set_defaults(func=_up)

    run = sub.add_parser("run", help="poll the queues into the handlers, like the SQS event source mapping")
    common(run)
    run.add_argument("--once", action="store_true", help="exit when the queues are drained")
    run.add_argument("--batch-size", type=_ops.bounded_int(1, 10_000), default=10)
    run.add_argument("--max-seconds", type=_ops.bounded_float(0), default=None, help="stop after this long")
    run.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    run.add_argument(
        "--progress-interval",
        type=_ops.bounded_float(0.1, 3600),
        metavar="S",
        help="seconds between progress lines (default 1 on a terminal, 10 otherwise)",
    )
    run.add_argument("--no-worker", action="store_true", help="do not run the OCR worker")
    run.set_defaults(func=_run)

    down = sub.add_parser("down", help="stop the servers `local up` started")
    common(down)
    down.set_defaults(func=_down)
