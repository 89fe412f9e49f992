"""What an OCR process death costs the jobs beside it: before → after "one death, one job" (issue 29).

    .venv/bin/python -m bench.ocr_deaths [--innocent 3] [--pages 4] [--before 9d939ac] [--out FILE]

On one worker (``WORKER_CONCURRENCY`` 2, the real worker code, moto server and the search engine), a
poison scan whose pool process is killed whenever it works for it (as the kernel's OOM killer
picks the process that allocates) runs beside ``--innocent`` scans of ``--pages`` pages each, until
the poison is quarantined and every innocent scan is indexed. The same jobs run twice in the same
run: on the pool of ``--before`` (the commit before the change: a ``ProcessPoolExecutor``, which
one death breaks for every job in flight; its module is read from git) and on this checkout's
pool (independent processes, one task each). Reported: the kills, the innocent jobs' attempts
broken, and the pages they had read and read again (``OcrPagesRedone``), per death.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

REGION = "us-east-1"
BEFORE = "9d939ac"
POOL_PATH = "layers/docindex/docindex/worker/pool.py"
LINES = ["会議の議事録です。", "売上の報告です。", "契約の確認です。", "出張の報告です。", "経費の精算です。"]


def before_pool(commit: str, into: Path) -> Any:
    """The ``OcrPool`` class of ``commit``, importable by the spawned processes (``sys.path``)."""
    argv = ["git", "show", f"{commit}:{POOL_PATH}"]  # git from PATH, as a developer runs it
    source = subprocess.run(argv, capture_output=True, text=True, check=True).stdout  # noqa: S603  # nosec B603 B607
    (into / "_pool_before.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(into))  # spawn passes the parent's sys.path to its children
    spec = importlib.util.spec_from_file_location("_pool_before", into / "_pool_before.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_pool_before"] = module
    spec.loader.exec_module(module)
    return module.OcrPool


class Killer:
    """SIGKILL to each pool process that has worked ``after`` seconds for one of ``owners`` (the pool's marks).

    As the OOM killer would: once the page has grown for a while, when the pages of the jobs
    beside it are under way.
    """

    def __init__(self, marks: str, owners: set[str], after: float) -> None:
        self.marks, self.owners, self.after = Path(marks), owners, after
        self.killed: set[int] = set()
        self._since: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def kills(self) -> int:
        return len(self.killed)

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            for mark in self.marks.iterdir():
                try:
                    pid = int(mark.name)
                    if pid in self.killed or mark.read_text(encoding="utf-8") not in self.owners:
                        self._since.pop(pid, None)
                        continue
                    if now - self._since.setdefault(pid, now) >= self.after:
                        os.kill(pid, signal.SIGKILL)
                        self.killed.add(pid)
                except (OSError, ValueError):
                    continue
            time.sleep(0.002)

    def __enter__(self) -> Killer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def scenario(  # noqa: PLR0915  # one scenario, told in order
    aws: dict[str, Any],
    opensearch: Any,
    urls: dict[str, str],
    pool: Any,
    *,
    poisons: int,
    innocent: int,
    pages: int,
    kill_after: float,
) -> dict[str, Any]:
    """The poison and the innocent scans on one worker with ``pool``: what the deaths cost."""
    from devkit import samples
    from devkit.local.context import LocalLambdaContext
    from devkit.local.stack import StackNames, StackOptions, provision
    from devkit.messages import s3_notification, sqs_event
    from docindex.core.changes import doc_id
    from docindex.core.observability import metrics
    from docindex.core.settings import Settings
    from docindex.ingest.indexer import Indexer
    from docindex.worker.config import WorkerSettings
    from docindex.worker.service import Worker

    env = provision(
        s3=aws["s3"],
        sqs=aws["sqs"],
        dynamodb=aws["dynamodb"],
        opensearch=opensearch,
        names=StackNames(f"d{uuid.uuid4().hex[:10]}"),
        options=StackOptions(),
        region=REGION,
    )
    env.update({"OPENSEARCH_ENDPOINT": urls["engine"], "OPENSEARCH_AUTH": "none", "AWS_ENDPOINT_URL": urls["moto"]})
    bucket = env["DOCINDEX_BUCKET"]
    # Full pages (long enough to be killed in), each its own content; the innocent ones at 300 dpi.
    poison = {f"スキャン/毒入り {n}.png" for n in range(poisons)}
    files = {
        key: samples.make_scan_png([f"領収書 {n}", *LINES * 8], dpi=300, page=(8.0, 10.0))
        for n, key in enumerate(sorted(poison))
    }
    for n in range(innocent):
        lines = [[f"{LINES[(n + p) % len(LINES)]} {n}-{p}"] for p in range(pages)]
        files[f"スキャン/無実 {n}.pdf"] = samples.make_scan_pdf(lines, dpi=300)
    indexer = Indexer(
        Settings.from_env(env), s3=aws["s3"], sqs=aws["sqs"], dynamodb=aws["dynamodb"], opensearch=opensearch
    )
    records = []
    for n, (key, body) in enumerate(files.items()):
        etag = aws["s3"].put_object(Bucket=bucket, Key=key, Body=body)["ETag"].strip('"')
        message = s3_notification(bucket, key, sequencer=f"0062A1B2C3D4{n + 1:06X}", etag=etag)
        records.append(message)
    event = sqs_event(*records, queue_arn=env["INGEST_QUEUE_ARN"])
    if indexer.handle(event, LocalLambdaContext(timeout_seconds=120))["batchItemFailures"]:
        raise RuntimeError("the indexer failed a record")

    tallied: Counter[str] = Counter()
    real_add = metrics.add_metric

    def tally(name: str, unit: Any, value: float, **kwargs: Any) -> None:
        tallied[name] += value
        real_add(name=name, unit=unit, value=value, **kwargs)

    metrics.add_metric = tally  # type: ignore[method-assign,assignment]
    settings = WorkerSettings.from_env(
        {**env, "WORKER_CONCURRENCY": "2", "WORKER_RETRY_DELAY_SECONDS": "0", "WORKER_QUARANTINE_AFTER_FAILURES": "2"}
    )
    worker = Worker(
        settings,
        s3=aws["s3"],
        sqs=aws["sqs"],
        dynamodb=aws["dynamodb"],
        opensearch=opensearch,
        pool=pool,
        flush_metrics=False,
    )
    broken: Counter[str] = Counter()
    real_run = worker.runner.run

    def run(job: Any, lease: Any) -> Any:
        try:
            return real_run(job, lease)
        except Exception:
            broken[job.key] += 1
            raise

    worker.runner.run = run  # type: ignore[method-assign]
    started = time.monotonic()
    try:
        with Killer(pool.marks, {f"{doc_id(bucket, key)}#1" for key in poison}, kill_after) as killer:
            idle = 0
            while idle < 3 and time.monotonic() - started < 900:
                idle = idle + 1 if worker.poll_once(wait_seconds=1) == 0 else 0
    finally:
        metrics.add_metric = real_add  # type: ignore[method-assign]
        worker.close()
    opensearch.indices.refresh(index=env["OPENSEARCH_INDEX"])
    statuses = {
        key: (opensearch.get(index=env["OPENSEARCH_INDEX"], id=doc_id(bucket, key))["_source"] or {}).get("ocr_status")
        for key in files
    }
    innocent_broken = sum(n for key, n in broken.items() if key not in poison)
    redone = int(tallied.get("OcrPagesRedone", 0))
    return {
        "kills": killer.kills,
        "innocent_attempts_broken": innocent_broken,
        "poison_attempts_broken": sum(broken[key] for key in poison),
        "pages_redone": redone,
        "pages_redone_per_death": round(redone / killer.kills, 2) if killer.kills else None,
        "innocent_attempts_broken_per_death": round(innocent_broken / killer.kills, 2) if killer.kills else None,
        "innocent_indexed": sum(1 for key, status in statuses.items() if key not in poison and status == "done"),
        "poison_quarantined": sum(1 for key in poison if statuses[key] == "failed"),
        "seconds": round(time.monotonic() - started, 1),
    }


def run(poisons: int, innocent: int, pages: int, before: str, kill_after: float) -> dict[str, Any]:
    from bench.local import local_services
    from docindex.worker.pool import OcrPool

    with local_services("bench-ocr-deaths-", REGION) as local:
        aws, opensearch, state = local.aws, local.opensearch, local.state
        urls = {"moto": local.moto_url, "engine": local.search_url}
        results: dict[str, Any] = {
            "poison_scans": poisons,
            "innocent_scans": innocent,
            "pages_each": pages,
            "kill_after_seconds": kill_after,
            "before_commit": before,
        }
        for name, make in (("before", lambda: before_pool(before, state)(2)), ("after", lambda: OcrPool(2))):
            pool = make()
            try:
                results[name] = scenario(
                    aws, opensearch, urls, pool, poisons=poisons, innocent=innocent, pages=pages, kill_after=kill_after
                )
            finally:
                pool.close()
        return results


def render(data: dict[str, Any]) -> str:
    rows = [
        ("pool process deaths (the poisons')", "kills"),
        ("innocent job attempts broken", "innocent_attempts_broken"),
        ("  per death", "innocent_attempts_broken_per_death"),
        ("pages read again (OcrPagesRedone)", "pages_redone"),
        ("  per death", "pages_redone_per_death"),
        ("innocent scans indexed", "innocent_indexed"),
        ("poison scans quarantined", "poison_quarantined"),
        ("seconds", "seconds"),
    ]
    lines = [
        f"one death, one job: {data['poison_scans']} poison scans killed whenever they run, beside "
        f"{data['innocent_scans']} scans of "
        f"{data['pages_each']} pages (WORKER_CONCURRENCY 2; killed {data['kill_after_seconds']} s into its page)",
        f"{'':38}{'before (' + data['before_commit'] + ')':>18}{'after':>10}",
    ]
    for label, key in rows:
        lines.append(f"{label:38}{data['before'][key]!s:>18}{data['after'][key]!s:>10}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--poisons", type=int, default=3, help="poison scans, each killed until quarantined (default 3)"
    )
    parser.add_argument("--innocent", type=int, default=3, help="innocent scans beside the poison (default 3)")
    parser.add_argument("--pages", type=int, default=4, help="pages of each innocent scan (default 4)")
    parser.add_argument("--before", default=BEFORE, help=f"the commit whose pool is the baseline (default {BEFORE})")
    parser.add_argument(
        "--kill-after", type=float, default=0.2, help="seconds a poison page runs before it is killed (default 0.2)"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args()
    data = run(args.poisons, args.innocent, args.pages, args.before, args.kill_after)
    print(render(data))
    if args.out:
        args.out.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
