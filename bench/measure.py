"""One measurement, run in a fresh interpreter: ``python -m bench.measure NAME SPEC.json OUT.json``.

``bench/run.py`` starts the local servers once and runs every measurement in
its own process, so each one has a clean heap (peak RSS means something),
its own imports (cold start is not hidden by an earlier one) and no
in-process server sharing the GIL. The spec (JSON) says which servers,
documents and message bodies to use; the result (JSON) holds raw timings,
which the parent turns into the report.

Measurements:

- ``extraction``: the extractors over the documents' bytes already in memory,
  one after another: the CPU bound of one process (one Lambda vCPU).
- ``docindex``: the real handler (``functions/indexer/app.py``) fed SQS
  batches from a real queue by the local event-source emulation, reading S3,
  writing DynamoDB (idempotency + ledger) and OpenSearch ``_bulk``.
- ``baseline``: the incident's worker: one message at a time, receive,
  download, extract (same extractors), ``index`` one document per request,
  delete.
- ``memory``: one batch of 10 large PDFs through the handler; peak RSS.
- ``cold``: import time of the indexer's ``app.py`` in fresh interpreters.
- ``ocr``: seconds per scanned page (the worker's OCR when present, and
  Tesseract's CLI).
- ``servers``: the servers' own cost: moto round trips and the search engine's
  ``_bulk`` of the same documents, without docindex in between.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from docindex.core.aws import queue_depth

REGION = "us-east-1"
REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- helpers


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def server_cpu(spec: dict[str, Any]) -> dict[str, float]:
    """CPU seconds used so far by each local server process (from /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    for name, pid in spec.get("server_pids", {}).items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out[name] = sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks
        except OSError:
            out[name] = 0.0
    out["_machine"] = machine_busy_seconds()
    return out


def server_cpu_since(spec: dict[str, Any], before: dict[str, float]) -> dict[str, float]:
    now = server_cpu(spec)
    out = {name: round(now[name] - before.get(name, 0.0), 3) for name in now if name != "_machine"}
    # Everything the machine ran meanwhile (other users of a shared box included).
    out["machine"] = round(now["_machine"] - before["_machine"], 3)
    return out


def machine_busy_seconds() -> float:
    """CPU seconds all CPUs spent not idle since boot (/proc/stat)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    values = [int(v) for v in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak_rss() -> bool:
    """Reset VmHWM (Linux >= 4.0), so the next peak is this phase's own."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def service_urls(spec: dict[str, Any]) -> tuple[str, str]:
    """(AWS, OpenSearch) endpoints for the measured code: the latency proxies in the latency-faithful mode.

    The harness (setup, checks, the event-source emulation's receive and delete) talks to
    the emulators directly: in AWS that polling is Lambda's, off the function's clock.
    """
    latency = spec.get("latency") or {}
    return latency.get("moto_url", spec["moto_url"]), latency.get("search_url", spec["search_url"])


def aws_env(spec: dict[str, Any]) -> None:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ["AWS_DEFAULT_REGION"] = REGION
    os.environ["AWS_REGION"] = REGION
    os.environ["AWS_ENDPOINT_URL"] = service_urls(spec)[0]
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "docindex")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "DocIndex")


def harness_clients(spec: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """Clients for setting up and checking (not the indexer's own clients)."""
    import boto3
    from opensearchpy import OpenSearch

    from docindex.core.clients import boto_config

    session = boto3.Session(region_name=REGION)
    config = boto_config(max_attempts=3)
    s3 = session.client("s3", endpoint_url=spec["moto_url"], config=config)
    sqs = session.client("sqs", endpoint_url=spec["moto_url"], config=config)
    ddb = session.client("dynamodb", endpoint_url=spec["moto_url"], config=config)
    search = OpenSearch(hosts=[spec["search_url"]], timeout=120)
    return s3, sqs, ddb, search


def fresh_stack(spec: dict[str, Any], s3: Any, sqs: Any, ddb: Any, search: Any) -> dict[str, str]:
    from devkit.local.stack import StackNames, StackOptions, provision

    names = StackNames(f"b{uuid.uuid4().hex[:10]}")
    if spec.get("light_index"):
        # Content and title stored but not analysed: the engine's Japanese analysis (the
        # cluster's cost, on this machine's CPUs) leaves the measurement. provision() then
        # finds the alias and keeps this index.
        from docindex.index.mapping import INDEX_VERSION, index_body

        body = index_body(tier="kuromoji")
        for name in ("content", "title", "filename"):
            body["mappings"]["properties"][name] = {"type": "text", "index": False}
        body["aliases"] = {names.index: {"is_write_index": True}}
        search.indices.create(index=f"{names.index}-v{INDEX_VERSION}", body=body)
    # A long simulated function timeout: nothing is redelivered during a run.
    env = provision(
        s3=s3,
        sqs=sqs,
        dynamodb=ddb,
        opensearch=search,
        names=names,
        options=StackOptions(function_timeout=spec.get("function_timeout", 180)),
        region=REGION,
    )
    # The stack's own bucket announced its notification with an S3 test event: clear it,
    # so the queue holds exactly the messages a measurement sends.
    while True:
        got = sqs.receive_message(QueueUrl=env["INGEST_QUEUE_URL"], MaxNumberOfMessages=10, WaitTimeSeconds=0)
        messages = got.get("Messages", [])
        if not messages:
            break
        for message in messages:
            sqs.delete_message(QueueUrl=env["INGEST_QUEUE_URL"], ReceiptHandle=message["ReceiptHandle"])
    return env


def drop_stack(env: dict[str, str], sqs: Any, ddb: Any, search: Any, s3: Any) -> None:
    """Free the emulators' memory between runs (not timed, best effort)."""
    cleanups: list[Callable[[], Any]] = [
        *(lambda t=table: ddb.delete_table(TableName=t) for table in {env["IDEMPOTENCY_TABLE"], env["LEDGER_TABLE"]}),
        *(
            lambda u=url: sqs.delete_queue(QueueUrl=u)
            for url in (env["INGEST_QUEUE_URL"], env["INGEST_DLQ_URL"], env["OCR_QUEUE_URL"], env["OCR_DLQ_URL"])
        ),
        lambda: s3.delete_bucket(Bucket=env["DOCINDEX_BUCKET"]),
        lambda: search.indices.delete(index=env["OPENSEARCH_INDEX"] + "-v1", ignore=[404]),
    ]
    for cleanup in cleanups:
        with contextlib.suppress(Exception):
            cleanup()


def send_bodies(sqs: Any, url: str, bodies: list[str]) -> None:
    for start in range(0, len(bodies), 10):
        chunk = bodies[start : start + 10]
        sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": b} for i, b in enumerate(chunk)])


# ----------------------------------------------------------------------------- stage timers


class Stages:
    """Thread-time spent in named stages of the indexer (perf_counter around a few methods)."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.cpu: defaultdict[str, float] = defaultdict(float)
        self.calls: defaultdict[str, int] = defaultdict(int)
        self.latencies: list[float] = []
        # Actions per _bulk request the writer sent (retries included): the cluster's cost per document.
        self.bulk_sizes: list[int] = []
        self._lock = threading.Lock()
        self._patches: list[tuple[Any, str, Any]] = []

    def add(self, name: str, seconds: float, cpu: float = 0.0) -> None:
        with self._lock:
            self.seconds[name] += seconds
            self.cpu[name] += cpu
            self.calls[name] += 1

    def wrap(self, owner: Any, attribute: str, name: str | Callable[..., str]) -> None:
        original = getattr(owner, attribute)
        stages = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            cpu0 = time.thread_time()
            result: Any = None
            try:
                result = original(*args, **kwargs)
                return result
            finally:
                label = name if isinstance(name, str) else name(result)
                stages.add(label, time.perf_counter() - started, time.thread_time() - cpu0)

        self._patches.append((owner, attribute, original))
        setattr(owner, attribute, timed)

    def install(self) -> None:
        """Time the indexer's stages (class-level wrappers: a perf_counter pair per call)."""
        stages = self
        from aws_lambda_powertools.utilities.idempotency.persistence.dynamodb import DynamoDBPersistenceLayer

        import docindex.ingest.indexer as indexer_module
        import docindex.ingest.reading as reading_module
        from docindex.core.storage import ObjectStore
        from docindex.index.bulk import BulkWriter
        from docindex.index.documents import IndexDocument
        from docindex.ingest.handoff import OcrQueue
        from docindex.ingest.ledger import Ledger

        self.wrap(ObjectStore, "fetch", "s3_get")
        # extract() as the indexer calls it (docindex.ingest.reading imports it by name).
        self.wrap(reading_module, "extract", lambda doc: f"extract:{getattr(doc, 'kind', 'error')}")
        self.wrap(IndexDocument, "extracted", "build_document")
        self.wrap(Ledger, "claim", "ledger_claim")
        self.wrap(DynamoDBPersistenceLayer, "_put_record", "idempotency_put")
        self.wrap(DynamoDBPersistenceLayer, "_update_record", "idempotency_update")
        self.wrap(BulkWriter, "index", "bulk_index_call")
        self.wrap(BulkWriter, "_submit", "bulk_wait")
        self.wrap(BulkWriter, "_send_once", "bulk_request")
        send_once = BulkWriter._send_once

        def counted(writer: Any, batch: list[Any]) -> Any:
            with stages._lock:
                stages.bulk_sizes.append(len(batch))
            return send_once(writer, batch)

        BulkWriter._send_once = counted  # type: ignore[method-assign]
        self.wrap(OcrQueue, "send", "ocr_send")
        self.wrap(indexer_module.Indexer, "handle", "invocation")
        self.wrap(indexer_module, "parse_body", "parse_message")

        original = indexer_module.Indexer._handle_record

        def handle_record(self: Any, record: Any, run: Any) -> Any:
            started = time.perf_counter()
            cpu0 = time.thread_time()
            try:
                return original(self, record, run)
            finally:
                elapsed = time.perf_counter() - started
                stages.add("record", elapsed, time.thread_time() - cpu0)
                with stages._lock:
                    stages.latencies.append(elapsed)

        self._patches.append((indexer_module.Indexer, "_handle_record", original))
        indexer_module.Indexer._handle_record = handle_record  # type: ignore[method-assign]

    def reset(self) -> None:
        with self._lock:
            self.seconds.clear()
            self.cpu.clear()
            self.calls.clear()
            self.latencies.clear()
            self.bulk_sizes.clear()

    def report(self) -> dict[str, Any]:
        return {
            "seconds": dict(self.seconds),
            "cpu": dict(self.cpu),
            "calls": dict(self.calls),
            "bulk_sizes": list(self.bulk_sizes),
        }


@contextmanager
def thread_profiles() -> Iterator[list[Any]]:
    """cProfile in every thread started inside the block (ThreadPoolExecutor workers, the bulk writer)."""
    import cProfile

    profiles: list[Any] = []
    original_run = threading.Thread.run

    def run(self: threading.Thread) -> None:
        profile = cProfile.Profile()
        profiles.append(profile)
        profile.enable()
        try:
            original_run(self)
        finally:
            profile.disable()

    main = cProfile.Profile()
    profiles.append(main)
    threading.Thread.run = run  # type: ignore[method-assign]
    main.enable()
    try:
        yield profiles
    finally:
        main.disable()
        threading.Thread.run = original_run  # type: ignore[method-assign]


# ----------------------------------------------------------------------------- measurements


def measure_extraction(spec: dict[str, Any]) -> dict[str, Any]:
    """The extractors alone over bytes in memory: one process, one document after another."""
    from docindex.extract import ExtractionLimits, extract
    from docindex.index.documents import file_name_parts

    root = Path(spec["corpus_root"])
    limits = ExtractionLimits()
    warm = [(d, (root / d["path"]).read_bytes()) for d in spec["warmup"]]
    docs = [(d, (root / d["path"]).read_bytes()) for d in spec["docs"]]
    for doc, data in warm:
        extract(data, file_name_parts(doc["key"])[0], limits)
    per_doc: list[float] = []
    by_kind: defaultdict[str, float] = defaultdict(float)
    chars = 0
    errors = 0
    ocr = 0
    servers0 = server_cpu(spec)
    cpu0 = cpu_seconds()
    started = time.perf_counter()
    for doc, data in docs:
        t0 = time.perf_counter()
        result = extract(data, file_name_parts(doc["key"])[0], limits)
        elapsed = time.perf_counter() - t0
        per_doc.append(elapsed)
        by_kind[doc["kind"]] += elapsed
        chars += len(result.text)
        errors += bool(result.error)
        ocr += bool(result.ocr_reason)
    wall = time.perf_counter() - started
    return {
        "wall": wall,
        "cpu": cpu_seconds() - cpu0,
        "servers_cpu": server_cpu_since(spec, servers0),
        "latencies": per_doc,
        "by_kind": dict(by_kind),
        "chars": chars,
        "errors": errors,
        "ocr": ocr,
    }


def children_cpu_seconds() -> float:
    """CPU seconds of this process's children: the live ones (from /proc) and those already reaped."""
    me, tick, total = str(os.getpid()), os.sysconf("SC_CLK_TCK"), 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == me:  # ppid; utime and stime are fields 14 and 15 of stat(5)
            total += (int(fields[11]) + int(fields[12])) / tick
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return total + usage.ru_utime + usage.ru_stime


def measure_isolation_cost(spec: dict[str, Any]) -> dict[str, Any]:
    """The extractors over bytes in memory, serial: in this process, then through the isolated child pool.

    The pool is the indexer's (``EXTRACTION_ISOLATION``, the default): PDFs and
    spreadsheets go to warm child processes bounded in memory and time, the rest
    stay in process. CPU counts the children's too.
    """
    from docindex.extract import ExtractionLimits, extract
    from docindex.extract.isolation import ExtractionPool
    from docindex.index.documents import file_name_parts

    root = Path(spec["corpus_root"])
    limits = ExtractionLimits()
    warm = [(d, (root / d["path"]).read_bytes()) for d in spec["warmup"]]
    docs = [(d, (root / d["path"]).read_bytes()) for d in spec["docs"]]
    out: dict[str, Any] = {}
    for mode in ("in_process", "isolated"):
        pool = ExtractionPool.for_function(1536, 1, share=0.5) if mode == "isolated" else None
        try:
            for doc, data in warm:
                extract(data, file_name_parts(doc["key"])[0], limits, pool=pool)
            cpu0 = cpu_seconds() + children_cpu_seconds()
            started = time.perf_counter()
            errors = 0
            for doc, data in docs:
                errors += bool(extract(data, file_name_parts(doc["key"])[0], limits, pool=pool).error)
            out[mode] = {
                "wall": time.perf_counter() - started,
                "cpu": cpu_seconds() + children_cpu_seconds() - cpu0,
                "errors": errors,
            }
        finally:
            if pool is not None:
                pool.close()
    out["docs"] = len(docs)
    return out


def measure_extraction_threads(spec: dict[str, Any]) -> dict[str, Any]:
    """The same, with the indexer's thread count: what threads add inside one process."""
    from concurrent.futures import ThreadPoolExecutor

    from docindex.extract import ExtractionLimits, extract
    from docindex.index.documents import file_name_parts

    root = Path(spec["corpus_root"])
    limits = ExtractionLimits()
    docs = [(d, (root / d["path"]).read_bytes()) for d in spec["docs"]]
    for d in spec["warmup"]:
        extract((root / d["path"]).read_bytes(), file_name_parts(d["key"])[0], limits)
    cpu0 = cpu_seconds()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=spec.get("threads", 8)) as pool:
        list(pool.map(lambda item: extract(item[1], file_name_parts(item[0]["key"])[0], limits), docs))
    return {"wall": time.perf_counter() - started, "cpu": cpu_seconds() - cpu0}


def _indexer_env(spec: dict[str, Any], env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ["OPENSEARCH_ENDPOINT"] = service_urls(spec)[1]
    os.environ["OPENSEARCH_AUTH"] = "none"
    for key, value in spec.get("env", {}).items():
        os.environ[key] = str(value)


def _drive(runner: Any, expected: int, stall_seconds: float = 60.0) -> None:
    """Poll the queue into the handler until ``expected`` records were handled."""
    last_progress = time.monotonic()
    while runner.stats.records < expected:
        got = runner.poll_once(wait_seconds=0)
        if got:
            last_progress = time.monotonic()
        elif time.monotonic() - last_progress > stall_seconds:
            raise RuntimeError(f"no progress: {runner.stats.records}/{expected} records handled")


def measure_docindex(spec: dict[str, Any], *, profile: bool = False, memory: bool = False) -> dict[str, Any]:
    """The real handler on SQS batches from a real (local) queue."""
    aws_env(spec)
    s3, sqs, ddb, search = harness_clients(spec)
    env = fresh_stack(spec, s3, sqs, ddb, search)
    _indexer_env(spec, env)
    from devkit.local.handlers import load_handler
    from devkit.local.runner import LocalRunner

    handler = load_handler("indexer")
    stages = Stages()
    stages.install()

    from devkit.local.context import LocalLambdaContext

    def context() -> LocalLambdaContext:
        # The template's defaults: IndexerTimeout 180 s, IndexerMemorySize 1536 MB.
        return LocalLambdaContext(timeout_seconds=spec.get("function_timeout", 180), memory_limit_in_mb=1536)

    def runner() -> LocalRunner:
        return LocalRunner(
            sqs=sqs,
            handler=handler,
            queue_url=env["INGEST_QUEUE_URL"],
            queue_arn=env["INGEST_QUEUE_ARN"],
            region=REGION,
            batch_size=spec["batch_size"],
            function_timeout=spec.get("function_timeout", 180),
            context_factory=context,
        )

    # Warm container: imports, clients, the index check, one document of each kind.
    warm = runner()
    send_bodies(sqs, env["INGEST_QUEUE_URL"], spec["warmup_bodies"])
    _drive(warm, len(spec["warmup_bodies"]))
    stages.reset()

    bodies = spec["bodies"]
    send_bodies(sqs, env["INGEST_QUEUE_URL"], bodies)
    timed = runner()
    rss_before = rss_mb()
    peak_reset = reset_peak_rss() if memory else False
    servers0 = server_cpu(spec)
    cpu0 = cpu_seconds()
    started = time.perf_counter()
    profiles: list[Any] = []
    if profile:
        with thread_profiles() as profiles:
            _drive(timed, len(bodies))
    else:
        _drive(timed, len(bodies))
    wall = time.perf_counter() - started
    cpu = cpu_seconds() - cpu0
    servers_used = server_cpu_since(spec, servers0)
    peak = rss_mb("VmHWM")

    search.indices.refresh(index=env["OPENSEARCH_INDEX"])
    indexed = int(search.count(index=env["OPENSEARCH_INDEX"])["count"]) - len(spec["warmup_bodies"])
    ocr_jobs = queue_depth(sqs, env["OCR_QUEUE_URL"])
    result: dict[str, Any] = {
        "wall": wall,
        "cpu": cpu,
        "servers_cpu": servers_used,
        "latencies": stages.latencies,
        "stages": stages.report(),
        "records": timed.stats.records,
        "failures": timed.stats.failures,
        "batches": timed.stats.batches,
        "indexed": indexed,
        "ocr_jobs": ocr_jobs,
        "metrics": dict(timed.stats.metrics),
        "rss_before_mb": rss_before,
        "peak_rss_mb": peak,
        "peak_reset": peak_reset,
    }
    if profile:
        result["profile"] = _summarise_profile(profiles, spec.get("profile_out"))
    drop_stack(env, sqs, ddb, search, s3)
    return result


_WAITING = {
    "acquire",
    "wait",
    "recv_into",
    "recv",
    "select",
    "poll",
    "sleep",
    "result",
    "sendall",
    "connect",
    "readinto",
}


def _summarise_profile(profiles: list[Any], out: str | None) -> dict[str, Any]:
    """Own time per library and the top functions, over every thread."""
    import pstats

    stats = pstats.Stats(profiles[0])
    for profile in profiles[1:]:
        stats.add(profile)
    if out:
        stats.dump_stats(out)
    groups: defaultdict[str, float] = defaultdict(float)
    top: list[tuple[float, float, int, str]] = []
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in raw.items():
        groups[_library(filename, func)] += tt
        top.append((tt, ct, nc, f"{_short(filename)}:{line}({func})"))
    top.sort(reverse=True)
    return {
        "own_seconds_by_library": dict(sorted(groups.items(), key=lambda kv: -kv[1])),
        "top_own": [{"own_s": round(t, 3), "cum_s": round(c, 3), "calls": n, "function": f} for t, c, n, f in top[:25]],
    }


def _short(filename: str) -> str:
    for marker in ("site-packages/", "layers/docindex/", "lib/python3"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


_LIBRARIES = (
    "botocore",
    "boto3",
    "urllib3",
    "opensearchpy",
    "aws_lambda_powertools",
    "pypdfium2",
    "python_calamine",
    "lxml",
    "selectolax",
    "charset_normalizer",
    "filetype",
    "dateutil",
    "jmespath",
    "pydantic",
)
_STDLIB = ("json", "logging", "gzip", "zlib", "threading", "concurrent", "http", "ssl", "socket", "zipfile", "re")


def _builtin_group(func: str) -> str:
    # "<method 'acquire' of '_thread.lock' objects>", "<built-in method zlib.compress>"
    name = func.split("'")[1] if "'" in func else func.strip("<>").split()[-1]
    short = name.rsplit(".", 1)[-1]
    groups = [
        (short in _WAITING or "SimpleQueue" in func, "waiting (locks, sockets, sleeps)"),
        # moto closes every connection: each AWS call resolves, opens and closes a socket.
        (short in {"getaddrinfo", "close", "settimeout", "socket"}, "new connections (GIL waits included)"),
        (short == "urandom", "os.urandom (uuid4 per AWS call)"),
        ("compress" in name or "zlib" in func, "zlib"),
        ("pdfium" in func.lower() or "FPDF" in func, "pypdfium2"),
        ("Calamine" in func, "python_calamine"),
        ("json" in func, "json"),
    ]
    return next((group for matched, group in groups if matched), "builtins (C)")


def _library(filename: str, func: str) -> str:
    if filename == "~":
        return _builtin_group(func)
    path = _short(filename)
    library = next((name for name in _LIBRARIES if path.startswith(name)), None)
    if library:
        return library
    if path.startswith("docindex/extract"):
        return "docindex.extract"
    if path.startswith("docindex"):
        return "docindex (core)"
    if "bench/" in filename:
        return "bench harness"
    std = next((name for name in _STDLIB if f"/{name}/" in path or path.split("/")[-1].startswith(name)), None)
    return f"stdlib {std}" if std else "stdlib (other)"


class IncidentWorker:
    """The incident's worker shape: one message, one download, one extraction, one index request, one delete.

    Same extractors and document fields as docindex; plain clients as a hand-written worker creates them.
    """

    def __init__(self, spec: dict[str, Any], queue_url: str, index: str) -> None:
        import boto3
        from opensearchpy import OpenSearch

        from docindex.extract import ExtractionLimits

        aws_url, search_url = service_urls(spec)
        self.s3 = boto3.client("s3", region_name=REGION, endpoint_url=aws_url)
        self.sqs = boto3.client("sqs", region_name=REGION, endpoint_url=aws_url)
        self.search = OpenSearch(hosts=[search_url], timeout=60)
        self.queue_url = queue_url
        self.index = index
        self.limits = ExtractionLimits()

    def one(self) -> bool:
        """Handle one message; False when none was received."""
        from urllib.parse import unquote_plus

        from docindex.core.changes import doc_id, parse_body
        from docindex.core.storage import FetchedObject
        from docindex.extract import extract
        from docindex.index.documents import IndexDocument, file_name_parts

        got = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=1, WaitTimeSeconds=0)
        if not got.get("Messages"):
            return False
        message = got["Messages"][0]
        record = json.loads(message["Body"])["Records"][0]
        bucket, key = record["s3"]["bucket"]["name"], unquote_plus(record["s3"]["object"]["key"])
        obj = self.s3.get_object(Bucket=bucket, Key=key)
        data = obj["Body"].read()
        extracted = extract(data, file_name_parts(key)[0], self.limits)
        change = parse_body(message["Body"]).changes[0]  # only to build the same document fields
        fetched = FetchedObject(bucket, key, len(data), obj.get("ETag", "").strip('"'), None, None, data)
        self.search.index(
            index=self.index, id=doc_id(bucket, key), body=IndexDocument.extracted(change, fetched, extracted).source()
        )
        self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
        return True

    def run(self, expected: int, latencies: list[float] | None = None) -> None:
        handled = 0
        while handled < expected:
            started = time.perf_counter()
            if self.one():
                handled += 1
                if latencies is not None:
                    latencies.append(time.perf_counter() - started)


def measure_baseline(spec: dict[str, Any]) -> dict[str, Any]:
    """The incident-style worker over the same messages, against the same servers."""
    aws_env(spec)
    s3, sqs, ddb, search = harness_clients(spec)
    env = fresh_stack(spec, s3, sqs, ddb, search)
    worker = IncidentWorker(spec, env["INGEST_QUEUE_URL"], env["OPENSEARCH_INDEX"])
    send_bodies(sqs, env["INGEST_QUEUE_URL"], spec["warmup_bodies"])
    worker.run(len(spec["warmup_bodies"]))
    send_bodies(sqs, env["INGEST_QUEUE_URL"], spec["bodies"])
    latencies: list[float] = []
    servers0 = server_cpu(spec)
    cpu0 = cpu_seconds()
    started = time.perf_counter()
    worker.run(len(spec["bodies"]), latencies)
    wall = time.perf_counter() - started
    cpu = cpu_seconds() - cpu0
    servers_used = server_cpu_since(spec, servers0)
    search.indices.refresh(index=env["OPENSEARCH_INDEX"])
    indexed = int(search.count(index=env["OPENSEARCH_INDEX"])["count"]) - len(spec["warmup_bodies"])
    drop_stack(env, sqs, ddb, search, s3)
    return {
        "wall": wall,
        "cpu": cpu,
        "servers_cpu": servers_used,
        "latencies": latencies,
        "indexed": indexed,
        "records": len(spec["bodies"]),
    }


def measure_cold(spec: dict[str, Any]) -> dict[str, Any]:
    """Import time of functions/indexer/app.py in fresh interpreters (median of ``runs``)."""
    import subprocess

    code = "import time; t = time.perf_counter(); import app; print(round((time.perf_counter() - t) * 1000, 2))"
    root = Path(spec.get("code_root", REPO))
    base_env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": f"{root / 'layers' / 'docindex'}:{root / 'functions' / 'indexer'}",
        "AWS_REGION": REGION,
        "POWERTOOLS_SERVICE_NAME": "docindex",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    modes = {
        # As in Lambda with Tracing: Active (the Tracer finds LAMBDA_TASK_ROOT and patches boto3).
        "lambda": {**base_env, "LAMBDA_TASK_ROOT": str(root / "functions" / "indexer")},
        # Outside Lambda (worker, CLI, local run): tracing off, but the X-Ray SDK still loads and
        # builds its sampler's botocore client at import.
        "outside_lambda": {**base_env, "POWERTOOLS_TRACE_DISABLED": "true"},
    }
    out: dict[str, Any] = {}
    for mode, env in modes.items():
        samples = []
        # One unmeasured run first: the page cache, not docindex, makes the very first one slow.
        for run in range(spec.get("runs", 7) + 1):
            done = subprocess.run(  # noqa: S603 - our interpreter, fixed code
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60
            )
            if run:
                samples.append(float(done.stdout.strip().splitlines()[-1]))
        out[mode] = {"ms": samples, "median_ms": statistics.median(samples)}
        # Where the time goes, once, with -X importtime (cumulative µs per top-level package).
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import app"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        out[mode]["self_ms_by_package"] = _importtime(done.stderr)
    return out


def _importtime(stderr: str) -> dict[str, float]:
    totals: defaultdict[str, float] = defaultdict(float)
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line.split("|")
        try:
            self_value = float(parts[0].split(":")[-1])
        except (ValueError, IndexError):
            continue
        totals[parts[-1].strip().split(".")[0]] += self_value / 1000
    top = sorted(totals.items(), key=lambda kv: -kv[1])[:12]
    return {name: round(ms, 1) for name, ms in top}


def measure_servers(spec: dict[str, Any]) -> dict[str, Any]:
    """The servers alone: moto round trips, and the engine indexing the same documents via raw _bulk."""
    import http.client
    from urllib.parse import urlsplit

    from docindex.core.changes import doc_id, parse_body
    from docindex.core.storage import FetchedObject
    from docindex.extract import ExtractionLimits, extract
    from docindex.index.documents import IndexDocument, file_name_parts

    aws_env(spec)
    s3, sqs, ddb, search = harness_clients(spec)
    env = fresh_stack(spec, s3, sqs, ddb, search)
    table = env["IDEMPOTENCY_TABLE"]
    calls = spec.get("calls", 200)

    def timed_calls(fn: Callable[[int], Any]) -> dict[str, float]:
        fn(-1)
        wall: list[float] = []
        cpu0 = cpu_seconds()
        for i in range(calls):
            t0 = time.perf_counter()
            fn(i)
            wall.append(time.perf_counter() - t0)
        cpu = cpu_seconds() - cpu0
        return {
            "median_ms": statistics.median(wall) * 1000,
            "p95_ms": percentile(wall, 0.95) * 1000,
            "client_cpu_ms": cpu / calls * 1000,
        }

    small_key = spec["docs"][0]["key"]
    moto = {
        "dynamodb_put_item_conditional": timed_calls(
            lambda i: (
                ddb.put_item(
                    TableName=table,
                    Item={"id": {"S": f"k{i}"}, "status": {"S": "INPROGRESS"}, "expiration": {"N": "1"}},
                    ConditionExpression="attribute_not_exists(id) OR expiration < :now",
                    ExpressionAttributeValues={":now": {"N": "2"}},
                )
                if i >= 0
                else None
            )
        ),
        "dynamodb_update_item": timed_calls(
            lambda i: ddb.update_item(
                TableName=table,
                Key={"id": {"S": f"k{max(i, 0)}"}},
                UpdateExpression="SET #s = :s",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":s": {"S": "COMPLETED"}},
            )
        ),
        "s3_get_object_small": timed_calls(
            lambda i: s3.get_object(Bucket=spec["bucket"], Key=small_key)["Body"].read()
        ),
        "sqs_send_message": timed_calls(lambda i: sqs.send_message(QueueUrl=env["OCR_QUEUE_URL"], MessageBody="{}")),
    }

    # the engine: the corpus's documents, extracted beforehand, posted as raw _bulk bodies.
    root = Path(spec["corpus_root"])
    limits = ExtractionLimits()
    lines: list[tuple[bytes, bytes]] = []
    for doc, body in zip(spec["docs"], spec["bodies"], strict=True):
        data = (root / doc["path"]).read_bytes()
        extracted = extract(data, file_name_parts(doc["key"])[0], limits)
        change = parse_body(body).changes[0]
        fetched = FetchedObject(change.bucket, change.key, len(data), None, None, None, data)
        source = json.dumps(IndexDocument.extracted(change, fetched, extracted).source(), ensure_ascii=False).encode()
        action = json.dumps({"index": {"_id": doc_id(change.bucket, change.key)}}).encode()
        lines.append((action, source))
    target = urlsplit(spec["search_url"])
    index = env["OPENSEARCH_INDEX"]
    engine: dict[str, Any] = {}
    for per_request in spec.get("bulk_sizes", [1, 10, 100]):
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=300)
        servers0 = server_cpu(spec)
        started = time.perf_counter()
        for start in range(0, len(lines), per_request):
            chunk = lines[start : start + per_request]
            payload = b"".join(a + b"\n" + s + b"\n" for a, s in chunk)
            conn.request("POST", f"/{index}/_bulk", body=payload, headers={"Content-Type": "application/x-ndjson"})
            response = conn.getresponse()
            response.read()
            if response.status >= 300:
                raise RuntimeError(f"the engine's _bulk answered {response.status}")
        wall = time.perf_counter() - started
        conn.close()
        engine[f"bulk_{per_request}"] = {
            "wall": wall,
            "docs": len(lines),
            "docs_per_s": len(lines) / wall,
            "engine_cpu_s": server_cpu_since(spec, servers0).get("engine"),
        }
    engine["source_bytes"] = sum(len(s) for _, s in lines)
    drop_stack(env, sqs, ddb, search, s3)
    return {"moto": moto, "engine": engine, "engine_name": spec.get("engine", "opensearch")}


def measure_ocr(spec: dict[str, Any]) -> dict[str, Any]:
    """Seconds per scanned page: the worker's OCR (docindex.worker.ocr) when it exists, and Tesseract's CLI."""
    root = Path(spec["corpus_root"])
    return {"worker": _worker_figure(root, spec["scans"]), "tesseract_cli": _tesseract_cli_figure(root, spec["scans"])}


def _worker_figure(root: Path, scans: list[dict[str, Any]]) -> dict[str, Any]:
    import importlib

    try:
        ocr = importlib.import_module("docindex.worker.ocr")
    except ImportError as exc:
        return {"available": False, "why": f"not available (docindex.worker.ocr: {exc})"}
    needed = ("OcrOptions", "probe", "process_page", "init_process", "check_setup")
    missing = [name for name in needed if not hasattr(ocr, name)]
    if missing:
        return {"available": False, "why": f"not available (docindex.worker.ocr has no {', '.join(missing)})"}
    try:
        return _ocr_worker(ocr, root, scans)
    except Exception as exc:  # noqa: BLE001 - report it, the other figures still count
        return {"available": False, "why": f"failed: {type(exc).__name__}: {exc}"[:300]}


def _tesseract_cli_figure(root: Path, scans: list[dict[str, Any]]) -> dict[str, Any]:
    import shutil
    import subprocess

    from devkit.samples import char_accuracy

    tesseract = shutil.which("tesseract")
    if not tesseract:
        return {"available": False, "why": "tesseract not installed (make system-deps)"}
    pages = [s for s in scans if s["fmt"] == "png"]
    seconds: list[float] = []
    accuracy: list[float] = []
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    for scan in pages:
        started = time.perf_counter()
        done = subprocess.run(  # noqa: S603 - fixed argv
            [tesseract, str(root / scan["path"]), "stdout", "-l", "jpn+eng", "--psm", "3", "--dpi", str(scan["dpi"])],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=300,
        )
        if done.returncode != 0:
            return {"available": False, "why": f"tesseract failed: {done.stderr.strip()[-300:]}"}
        seconds.append(time.perf_counter() - started)
        accuracy.append(char_accuracy(scan["truth"][0], done.stdout))
    return {
        "available": True,
        "engine": "tesseract CLI (jpn+eng, psm 3, OMP_THREAD_LIMIT=1), model load included",
        "pages": len(seconds),
        "dpi": pages[0]["dpi"] if pages else None,
        "seconds_per_page": seconds,
        "median_s_per_page": statistics.median(seconds) if seconds else None,
        "accuracy": statistics.mean(accuracy) if accuracy else None,
    }


def _ocr_worker(ocr: Any, root: Path, scans: list[dict[str, Any]]) -> dict[str, Any]:
    from devkit.samples import char_accuracy

    ocr.init_process()
    options = ocr.OcrOptions()
    t0 = time.perf_counter()
    setup = ocr.check_setup(options)
    setup_s = time.perf_counter() - t0
    if getattr(setup, "missing", ()):
        return {"available": False, "why": f"Tesseract models missing: {setup.missing}"}
    seconds: list[float] = []
    accuracy: list[float] = []
    for scan in scans:
        kind = "pdf" if scan["fmt"] == "pdf" else "image"
        path = str(root / scan["path"])
        info = ocr.probe(path, kind, options)
        for index in range(info.page_count):
            started = time.perf_counter()
            page = ocr.process_page(path, kind, index, options)
            seconds.append(time.perf_counter() - started)
            if index < len(scan["truth"]):
                accuracy.append(char_accuracy(scan["truth"][index], page.text))
    return {
        "available": True,
        "engine": f"docindex.worker.ocr.process_page ({options.languages}, {options.dpi} dpi), engine reused",
        "setup_s": setup_s,
        "pages": len(seconds),
        "dpi": options.dpi,
        "seconds_per_page": seconds,
        "median_s_per_page": statistics.median(seconds) if seconds else None,
        "accuracy": statistics.mean(accuracy) if accuracy else None,
    }


MEASUREMENTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "extraction": measure_extraction,
    "extraction_threads": measure_extraction_threads,
    "isolation_cost": measure_isolation_cost,
    "docindex": measure_docindex,
    "profile": lambda spec: measure_docindex(spec, profile=True),
    "memory": lambda spec: measure_docindex(spec, memory=True),
    "baseline": measure_baseline,
    "cold": measure_cold,
    "servers": measure_servers,
    "ocr": measure_ocr,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    name, spec_path, out_path = args
    spec = json.loads(Path(spec_path).read_text())
    result = MEASUREMENTS[name](spec)
    result["process_cpu_s"] = cpu_seconds()
    result["process_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    Path(out_path).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
