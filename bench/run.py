"""``make bench``: generate the corpus, start the local servers, run every measurement, report.

    .venv/bin/python -m bench.run [--docs 300] [--repeat 3] [--only docindex,baseline] [--env KEY=VALUE]

One run, one machine, the same servers for everything: moto server and the
search engine (``--engine``: a real OpenSearch 2.19.1 node by default, or
osmem-server) are started once as separate processes (an in-process moto
would share the benchmark's GIL), and every measurement runs in a fresh
interpreter (``bench/measure.py``). The throughput measurements are
interleaved round by round (docindex, baseline, extraction, docindex...) so
a slow moment of the machine hits all of them alike; the median round is
reported. The servers' own CPU time is read from /proc around each
measurement, so the report can tell docindex's cost from the servers': the
engine's CPU is the cluster's in AWS, never docindex's budget.

Writes ``bench/results.json`` and prints the table (see ``bench/report.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from bench import corpus as corpus_module
from bench import report
from bench.local import servers_running

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
REGION = "us-east-1"
THROUGHPUT = ("docindex_b10", "docindex_b100", "baseline", "extraction")
MODES = ("cpu", "latency")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (and its waited-for children) from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    # After the ")": state is field 3; utime, stime, cutime, cstime are 14-17.
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks


@contextmanager
def latency_proxies(moto_url: str, search_url: str, wanted: bool) -> Iterator[dict[str, Any] | None]:
    """The latency-faithful mode's proxies in front of moto and the engine (in this process, off the measured one)."""
    if not wanted:
        yield None
        return
    from devkit.faults import Proxy
    from devkit.faults.latency import AWS_REGION_LATENCY, ServiceLatency

    aws, search = ServiceLatency(seed=1), ServiceLatency(seed=2)
    with Proxy(moto_url, aws) as aws_proxy, Proxy(search_url, search) as search_proxy:
        yield {
            "moto_url": aws_proxy.url,
            "search_url": search_proxy.url,
            "model": asdict(AWS_REGION_LATENCY),
            "logs": (aws.log, search.log),
        }


def clients(moto_url: str, search_url: str) -> tuple[Any, Any, Any, Any]:
    import boto3
    from opensearchpy import OpenSearch

    from docindex.core.clients import boto_config

    session = boto3.Session(
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - moto's fake credentials
    )
    config = boto_config(max_attempts=3, pool=16)
    return (
        session.client("s3", endpoint_url=moto_url, config=config),
        session.client("sqs", endpoint_url=moto_url, config=config),
        session.client("dynamodb", endpoint_url=moto_url, config=config),
        OpenSearch(hosts=[search_url], timeout=120),
    )


def upload(corpus: corpus_module.Corpus, moto_url: str, search_url: str) -> tuple[str, dict[str, str]]:
    """Put every file in one bucket whose notifications go to a queue; collect the real S3 event bodies."""
    from concurrent.futures import ThreadPoolExecutor

    from devkit.local.stack import StackNames, StackOptions, provision

    s3, sqs, ddb, search = clients(moto_url, search_url)
    env = provision(
        s3=s3,
        sqs=sqs,
        dynamodb=ddb,
        opensearch=search,
        names=StackNames("corpus"),
        options=StackOptions(function_timeout=900),
        region=REGION,
    )
    bucket = env["DOCINDEX_BUCKET"]
    everything = [*corpus.docs, *corpus.warmup, *corpus.large]

    def put(doc: corpus_module.Doc) -> None:
        s3.put_object(Bucket=bucket, Key=doc.key, Body=doc.read(corpus.root))

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(put, everything))
    bodies: dict[str, str] = {}
    deadline = time.monotonic() + 120
    while len(bodies) < len(everything) and time.monotonic() < deadline:
        got = sqs.receive_message(QueueUrl=env["INGEST_QUEUE_URL"], MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in got.get("Messages", []):
            payload = json.loads(message["Body"])
            for record in payload.get("Records", []):
                bodies[unquote_plus(record["s3"]["object"]["key"])] = message["Body"]
            sqs.delete_message(QueueUrl=env["INGEST_QUEUE_URL"], ReceiptHandle=message["ReceiptHandle"])
    missing = [d.key for d in everything if d.key not in bodies]
    if missing:
        raise RuntimeError(f"no S3 notification for {len(missing)} objects, e.g. {missing[0]}")
    return bucket, bodies


def run_measurement(
    name: str, spec: dict[str, Any], servers: dict[str, Any], work: Path, code: Path | None = None
) -> dict[str, Any]:
    """One measurement in a fresh interpreter; adds the servers' CPU seconds spent meanwhile."""
    spec_path = work / f"{name}-spec.json"
    out_path = work / f"{name}-out.json"
    log_path = work / f"{name}.log"
    spec_path.write_text(json.dumps(spec, ensure_ascii=False))
    before = {k: proc_cpu_seconds(v.pid) for k, v in servers.items()}
    started = time.perf_counter()
    # The layer first: an installed (editable) docindex may be another checkout's.
    path = [str((code or REPO).resolve() / "layers" / "docindex"), str(REPO)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "POWERTOOLS_TRACE_DISABLED": "true"}
    with log_path.open("wb") as out:
        done = subprocess.run(  # noqa: S603 - our interpreter, our module
            [sys.executable, "-m", "bench.measure", spec["measure"], str(spec_path), str(out_path)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"measurement {name} failed (exit {done.returncode}); log {log_path}:\n{tail}")
    result: dict[str, Any] = json.loads(out_path.read_text())
    result["server_cpu_s"] = {k: proc_cpu_seconds(v.pid) - before[k] for k, v in servers.items()}
    # What the handler printed (its JSON logs): CloudWatch Logs volume per document.
    result["log_bytes"] = log_path.stat().st_size
    result["process_wall_s"] = elapsed
    return result


MEASUREMENTS = (
    *("docindex", "baseline", "extraction", "isolation", "isolation_cost"),
    *("servers", "profile", "memory", "cold", "ocr"),
)
# The tuned row: the same code with more records in flight (bigger _bulk requests).
TUNED_CONCURRENCY = 32


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--docs", type=int, default=300, help="corpus size (default 300)")
    parser.add_argument("--seed", type=int, default=corpus_module.DEFAULT_SEED)
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the docindex and extraction runs (median)")
    parser.add_argument("--baseline-repeat", type=int, default=1, help="rounds of the (slow) baseline (default 1)")
    parser.add_argument("--only", default="", help="comma-separated subset of: " + ",".join(MEASUREMENTS))
    parser.add_argument("--batch-sizes", default="10,100", help="SQS batch sizes for docindex (default 10,100)")
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="indexer settings, e.g. INDEXER_CONCURRENCY=4"
    )
    parser.add_argument(
        "--tuned-repeat",
        type=int,
        default=1,
        help=f"rounds of the INDEXER_CONCURRENCY={TUNED_CONCURRENCY} row (default 1, 0 skips it)",
    )
    parser.add_argument("--light-index", action="store_true", help="use an index without Japanese analysis throughout")
    parser.add_argument(
        "--engine",
        choices=("opensearch", "osmem"),
        default="opensearch",
        help="the search engine (default: a real node)",
    )
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="cpu (emulators on this machine's CPUs), latency (AWS round trips injected; see docs/performance.md)",
    )
    parser.add_argument(
        "--code", type=Path, default=None, metavar="CHECKOUT", help="measure another checkout's layers/ and functions/"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        default=None,
        metavar="CHECKOUT",
        help="also run docindex from another checkout, interleaved in the same rounds (before/after)",
    )
    parser.add_argument("--out", type=Path, default=BENCH / "results.json")
    parser.add_argument("--corpus-dir", type=Path, default=BENCH / "corpus")
    return parser.parse_args(argv)


Plan = list[tuple[str, dict[str, Any], "Path | None"]]


def _doc_entry(doc: corpus_module.Doc) -> dict[str, Any]:
    return {"key": doc.key, "kind": doc.kind, "fmt": doc.fmt, "size": doc.size, "path": doc.path}


def build_plan(
    args: argparse.Namespace, wanted: set[str], base: dict[str, Any], corpus: Any, bodies: dict[str, str]
) -> Plan:
    """Every measurement to run, in order: throughput runs interleaved round by round, then the rest."""
    latency = base.get("latency")
    base = {k: v for k, v in base.items() if k != "latency"}
    return _throughput_plan(args, wanted, base, latency) + _single_plan(args, wanted, base, corpus, bodies)


def _throughput_plan(
    args: argparse.Namespace, wanted: set[str], base: dict[str, Any], latency: dict[str, str] | None = None
) -> Plan:
    batch_sizes = [int(b) for b in args.batch_sizes.split(",") if b]
    biggest = max(batch_sizes)
    variants: list[tuple[str, Path | None]] = [("", args.code)]
    if args.compare:
        variants.insert(0, ("before:", args.compare))
    docindex: list[tuple[str, dict[str, Any]]] = [
        (f"docindex_b{size}", {**base, "measure": "docindex", "batch_size": size}) for size in batch_sizes
    ]
    env = {**base["env"], "INDEXER_CONCURRENCY": str(TUNED_CONCURRENCY)}
    tuned = (
        f"docindex_b{biggest}_c{TUNED_CONCURRENCY}",
        {**base, "measure": "docindex", "batch_size": biggest, "env": env},
    )
    plan: Plan = []
    for number in range(args.repeat):
        if "docindex" in wanted:
            rows = docindex + ([tuned] if number < args.tuned_repeat else [])
            plan += [(f"{prefix}{name}#{number}", spec, code) for prefix, code in variants for name, spec in rows]
        if "baseline" in wanted and number < args.baseline_repeat:
            plan.append((f"baseline#{number}", {**base, "measure": "baseline"}, args.code))
        if "extraction" in wanted:
            plan.append((f"extraction#{number}", {**base, "measure": "extraction"}, args.code))
        if latency:
            plan += _latency_rows(args, wanted, {**base, "latency": latency}, number, variants)
    if "isolation" in wanted:
        # An index without Japanese analysis: docindex and the baseline without the
        # emulator's kuromoji competing for this machine's CPUs.
        light = {**base, "light_index": True}
        for prefix, code in variants:
            spec = {**light, "measure": "docindex", "batch_size": biggest}
            plan.append((f"{prefix}docindex_light_b{biggest}", spec, code))
        plan.append(("baseline_light", {**light, "measure": "baseline"}, args.code))
    return plan


def _cpu_mode_row(name: str) -> bool:
    bare = name.split("#", maxsplit=1)[0].rsplit(":", maxsplit=1)[-1]
    return (bare.startswith("docindex_b") or bare == "baseline") and "_lat" not in bare


def _latency_rows(
    args: argparse.Namespace,
    wanted: set[str],
    base: dict[str, Any],
    number: int,
    variants: list[tuple[str, Path | None]],
) -> Plan:
    """The latency-faithful rows of one round: docindex at the template's defaults and the baseline.

    The index is not analysed (the cluster's per-document cost is a modelled latency, not
    the engine's Japanese analysis on this machine's CPUs); the servers answer through ``ServiceLatency``.
    """
    spec = {**base, "light_index": True}
    rows: Plan = []
    if "docindex" in wanted:
        for prefix, code in variants:
            # Each checkout at its own template's batch size (before/after at their defaults).
            batch = report.template_default("IndexerBatchSize", (code or REPO) / "template.yaml")
            name = f"{prefix}docindex_lat_b{batch}#{number}"
            rows.append((name, {**spec, "measure": "docindex", "batch_size": batch}, code))
    if "baseline" in wanted and number < args.baseline_repeat:
        rows.append((f"baseline_lat#{number}", {**spec, "measure": "baseline"}, args.code))
    return rows


def _single_plan(
    args: argparse.Namespace, wanted: set[str], base: dict[str, Any], corpus: Any, bodies: dict[str, str]
) -> Plan:
    biggest = max(int(b) for b in args.batch_sizes.split(",") if b)
    subset = min(len(base["docs"]), 60)
    specs: dict[str, dict[str, Any]] = {
        "extraction": {**base, "measure": "extraction_threads", "threads": 8},
        # Extraction in bounded child processes (the default) against in process, serial.
        "isolation_cost": {**base, "measure": "isolation_cost"},
        "servers": {**base, "measure": "servers", "docs": base["docs"][:subset], "bodies": base["bodies"][:subset]},
        # cProfile in every thread, on the index without Japanese analysis: docindex's own CPU.
        "profile": {
            **base,
            "measure": "profile",
            "batch_size": biggest,
            "light_index": True,
            "profile_out": str(BENCH / "profile.prof"),
        },
        "memory": {
            **base,
            "measure": "memory",
            "batch_size": 10,
            "docs": [_doc_entry(d) for d in corpus.large],
            "bodies": [bodies[d.key] for d in corpus.large],
        },
        "cold": {"measure": "cold", "runs": 7, "code_root": str((args.code or REPO).resolve())},
        "ocr": {
            "measure": "ocr",
            "corpus_root": str(corpus.root),
            "scans": [
                {"key": s.key, "fmt": s.fmt, "pages": s.pages, "dpi": s.dpi, "path": s.path, "truth": s.truth}
                for s in corpus.scans
            ],
        },
    }
    names = {"extraction": "extraction_threads"}
    return [(names.get(key, key), spec, args.code) for key, spec in specs.items() if key in wanted]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    wanted = set(filter(None, args.only.split(","))) or set(MEASUREMENTS)
    unknown = wanted - set(MEASUREMENTS)
    if unknown:
        raise SystemExit(f"unknown measurement(s): {', '.join(sorted(unknown))}")
    overrides = dict(item.split("=", 1) for item in args.env)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

    started = time.perf_counter()
    log(f"corpus: {args.docs} documents, seed {args.seed} (cached in {args.corpus_dir})")
    corpus = corpus_module.build(
        args.corpus_dir, args.docs, seed=args.seed, large=10 if "memory" in wanted else 0, log=log
    )
    description = corpus_module.describe(corpus)
    elapsed = time.perf_counter() - started
    log(f"  {description['docs']} documents, {description['bytes'] / 1e6:.1f} MB ({elapsed:.0f} s)")

    results: dict[str, Any] = {"runs": {}}
    with tempfile.TemporaryDirectory(prefix="docindex-bench-") as tmp:
        work = Path(tmp)
        modes = set(filter(None, args.modes.split(",")))
        with (
            servers_running(work, engine=args.engine) as (moto, engine),
            latency_proxies(moto.url, engine.url, "latency" in modes) as latency,
        ):
            log(f"servers: moto {moto.url} (pid {moto.pid}), {args.engine} {engine.url} (pid {engine.pid})")
            t0 = time.perf_counter()
            bucket, bodies = upload(corpus, moto.url, engine.url)
            log(f"  uploaded {len(bodies)} objects in {time.perf_counter() - t0:.0f} s")
            base = {
                "moto_url": moto.url,
                "search_url": engine.url,
                "engine": args.engine,
                "corpus_root": str(corpus.root),
                "bucket": bucket,
                "docs": [_doc_entry(d) for d in corpus.docs],
                "bodies": [bodies[d.key] for d in corpus.docs],
                "warmup": [_doc_entry(d) for d in corpus.warmup],
                "warmup_bodies": [bodies[d.key] for d in corpus.warmup],
                "env": overrides,
                "function_timeout": 180,
                "server_pids": {"moto": moto.pid, "engine": engine.pid},
                "light_index": args.light_index,
            }
            if latency:
                base["latency"] = {"moto_url": latency["moto_url"], "search_url": latency["search_url"]}
                # The proxies run in this process: their CPU is the bench's, not docindex's nor AWS's.
                base["server_pids"]["proxies"] = os.getpid()
            for name, spec, code in build_plan(args, wanted, base, corpus, bodies):
                if "cpu" not in modes and _cpu_mode_row(name):
                    continue
                t0 = time.perf_counter()
                file_name = name.replace("#", "-").replace(":", "-")
                try:
                    results["runs"][name] = run_measurement(
                        file_name, spec, {"moto": moto, "engine": engine}, work, code
                    )
                except RuntimeError as exc:
                    # One measurement failing (an emulator timing out on a loaded machine) keeps the others.
                    results.setdefault("failed", {})[name] = str(exc)[-2000:]
                    log(f"  {name:<34} FAILED: {str(exc).splitlines()[0]}")
                    continue
                log(f"  {name:<34} {time.perf_counter() - t0:6.1f} s")
            if latency:
                results["latency_model"] = {
                    "model": latency["model"],
                    "injected": {"aws": latency["logs"][0].snapshot(), "opensearch": latency["logs"][1].snapshot()},
                }

    results["corpus"] = description
    results["settings"] = {
        "env": overrides,
        "batch_sizes": args.batch_sizes,
        "repeat": args.repeat,
        "baseline_repeat": args.baseline_repeat,
        "tuned_repeat": args.tuned_repeat,
        "light_index": args.light_index,
        "code": str(args.code) if args.code else "this checkout",
        "compare": str(args.compare) if args.compare else None,
    }
    results["machine"] = report.machine()
    summary = report.summarise(results)
    results["summary"] = summary
    results["bench_seconds"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(report.render(summary, results))
    log(f"results: {args.out} ({results['bench_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
