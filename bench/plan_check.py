"""``make bench``: ``docindex plan`` checked against what the local pipeline really produces (issue 36).

    .venv/bin/python -m bench.plan_check [--files 10000] [--distinct 2000] [--inventory-rows 5000000]

1. **A generated bucket** of ``--files`` objects with the bench corpus's mix (``bench.corpus``:
   PDF with a text layer, Word, Excel, PowerPoint, text/CSV/HTML; 85 % Japanese) plus scans (3 % PNG
   pages, 3 % image-only PDFs of 1-4 pages). ``--distinct`` documents are generated (without the
   corpus's incompressible "photos": they only make files bigger, never their index documents) and
   each is stored under several folders, as file servers keep copies; the scans are 80 distinct
   ones. Generated documents are cached under ``bench/corpus/plan-check/``.
2. **The plan**: ``docindex plan`` on the bucket (a listing, ``--sample`` files opened).
3. **The pipeline**: every object announced to the real indexer (batches of 100, as the template's
   event source mapping), the real OCR worker drains the OCR queue; ``EMBEDDINGS=off`` (the model's
   90 ms of CPU a passage would take hours here): passages are counted by the worker's own cut
   (``docindex.embed.document``) over the text the pipeline indexed. The index is the real mapping on
   the real node (``icu+kuromoji``): its store after a refresh and a flush is Lucene's files, what the
   plan's ``index_documents_disk_bytes`` predicts (osmem-server's ``store.size`` was the JSON sent, so
   before issue 47 the text fields were left unanalysed and the JSON compared).
4. **Predicted against measured**: files, pages, scanned pages, passages and index bytes, each
   within 20 % (index bytes: the documents' bytes on disk, vectors apart).
5. **The 5-million-file plan**: a generated S3 Inventory report (CSV, gzip'd, as S3 writes it) of
   ``--inventory-rows`` rows with the incident's file server's mix and sizes (about 10 TB), planned
   with the per-kind figures measured in step 2 (``--kind-figures``); its wall time is reported.

Figures go to ``bench/results.json`` under ``plan_check``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import subprocess  # docindex plan runs as the operator runs it, fixed argv  # nosec B404
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import quote_plus

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / "corpus" / "plan-check"
REGION = "us-east-1"
TOLERANCE = 0.20


# ------------------------------------------------------------------ the bucket


def _document(index: int) -> tuple[str, bytes]:
    """Corpus document ``index`` without photos (cached)."""
    from bench import corpus

    path = CACHE / f"doc-{index:05d}.bin"
    meta = CACHE / f"doc-{index:05d}.json"
    if path.exists() and meta.exists():
        return json.loads(meta.read_text())["key"], path.read_bytes()
    with mock.patch.object(corpus, "_photos", return_value=[]):
        info, data = corpus.make_doc(index)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    meta.write_text(json.dumps({"key": info["key"]}, ensure_ascii=False))
    return info["key"], data


def _scan(index: int) -> tuple[str, bytes]:
    """Scan ``index``: a PNG page (even) or an image-only PDF of 1-4 pages (odd), cached."""
    from bench.corpus import scan_pages
    from devkit import samples

    fmt = "png" if index % 2 == 0 else "pdf"
    path = CACHE / f"scan-{index:03d}.{fmt}"
    key = f"スキャン/受領書 {index:03d}.{fmt}"
    if path.exists():
        return key, path.read_bytes()
    pages = scan_pages(1000 + index, 1 if fmt == "png" else 1 + index % 4)
    body = samples.make_scan_png(pages[0], dpi=150) if fmt == "png" else samples.make_scan_pdf(pages, dpi=150)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return key, body


def bucket_objects(files: int, distinct: int, scans: int = 80) -> Iterator[tuple[str, bytes]]:
    """``files`` objects: 6 % scans, the rest corpus documents, each stored under ``copy-N/`` folders."""
    scan_every = 16  # one file in 16 is a scan (6 %)
    for number in range(files):
        copy = f"copy-{number // max(distinct, 1)}"
        if number % scan_every == scan_every - 1:
            key, body = _scan((number // scan_every) % scans)
        else:
            key, body = _document(number % distinct)
        yield f"{copy}/{key}", body


# ------------------------------------------------------------------ the pipeline


def run_pipeline(local: Any, objects: list[tuple[str, bytes]]) -> dict[str, Any]:
    """Upload, index and OCR ``objects`` on a fresh local stack; what the index then holds."""
    from devkit.local.context import LocalLambdaContext
    from devkit.local.stack import StackNames, StackOptions, provision
    from devkit.messages import sqs_event
    from docindex.core.settings import Settings
    from docindex.ingest.indexer import Indexer
    from docindex.worker.config import WorkerSettings
    from docindex.worker.pool import OcrPool
    from docindex.worker.service import Worker

    names = StackNames(f"p{uuid.uuid4().hex[:10]}")
    env = provision(
        s3=local.aws["s3"],
        sqs=local.aws["sqs"],
        dynamodb=local.aws["dynamodb"],
        opensearch=local.opensearch,
        names=names,
        options=StackOptions(),
        region=REGION,
    )
    env |= {"OPENSEARCH_ENDPOINT": local.search_url, "OPENSEARCH_AUTH": "none", "AWS_ENDPOINT_URL": local.moto_url}
    env |= {"AWS_REGION": REGION, "POWERTOOLS_LOG_LEVEL": "ERROR"}
    s3, bucket = local.aws["s3"], env["DOCINDEX_BUCKET"]
    indexer = Indexer(
        Settings.from_env(env), s3=s3, sqs=local.aws["sqs"], dynamodb=local.aws["dynamodb"], opensearch=local.opensearch
    )
    started = time.monotonic()
    records: list[dict[str, Any]] = []

    def flush() -> None:
        event = sqs_event(*records, queue_arn=env["INGEST_QUEUE_ARN"])
        response = indexer.handle(event, LocalLambdaContext(timeout_seconds=900))
        if response["batchItemFailures"]:
            raise RuntimeError(f"indexer failures: {response['batchItemFailures'][:3]}")
        records.clear()

    for number, (key, body) in enumerate(objects):
        etag = s3.put_object(Bucket=bucket, Key=key, Body=body)["ETag"].strip('"')
        message = {"docindex": "change", "bucket": bucket, "key": key, "action": "created"}
        message |= {"etag": etag, "size": len(body), "event_time": "2026-11-27T00:00:00.000Z"}
        records.append(message)
        if len(records) == 100:
            flush()
            print(f"  indexed {number + 1:,} of {len(objects):,}", file=sys.stderr, flush=True)
    if records:
        flush()
    indexed = time.monotonic() - started
    pool = OcrPool(2)
    worker = Worker(
        WorkerSettings.from_env({**env, "WORKER_CONCURRENCY": "2"}),
        s3=s3,
        sqs=local.aws["sqs"],
        dynamodb=local.aws["dynamodb"],
        opensearch=local.opensearch,
        pool=pool,
        flush_metrics=False,
    )
    try:
        idle = 0
        while idle < 3:
            idle = idle + 1 if worker.poll_once(wait_seconds=1) == 0 else 0
    finally:
        worker.close()
        pool.close()
    return {"env": env, "index": names.index, "index_seconds": indexed, "ocr_seconds": time.monotonic() - started}


def measured(opensearch: Any, index: str) -> dict[str, Any]:
    """What the pipeline indexed: files, pages, scanned pages, passages (the worker's cut), bytes."""
    from opensearchpy import helpers

    from docindex.extract.base import PageText
    from docindex.ops.plan.sample import passages_of

    opensearch.indices.refresh(index=index)
    files = pages = scanned = passages = pending = 0
    for hit in helpers.scan(opensearch, index=index, query={"query": {"match_all": {}}}, size=500):
        source = hit["_source"]
        files += 1
        count = max(1, int(source.get("page_count") or 1))
        pages += count
        if source.get("ocr_status") == "done":
            scanned += count
        if source.get("ocr_status") == "pending":
            pending += 1
        page_texts = tuple(
            PageText(number=int(p.get("n") or 0), kind=str(p.get("kind") or "page"), text=str(p.get("text") or ""))
            for p in source.get("pages") or []
        )
        passages += passages_of(
            str(source.get("content") or ""), page_texts, title=source.get("title"), max_passages=16, max_chars=400
        )
    # Lucene's files after a flush (a refresh first: the segments merged away are released with it).
    opensearch.indices.flush(index=index)
    opensearch.indices.refresh(index=index)
    stats = opensearch.indices.stats(index=index)["_all"]["primaries"]
    return {
        "files": files,
        "pages": pages,
        "scanned_pages": scanned,
        "passages": passages,
        "pending_ocr": pending,
        "index_bytes": int(stats["store"]["size_in_bytes"]),
    }


def docindex_plan(*args: str) -> dict[str, Any]:
    """``docindex plan ARGS --json`` as the operator runs it: its own process (a harness never imports the CLI)."""
    argv = [sys.executable, "-m", "docindex.cli", "plan", *args, "--json", "--no-progress"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=3600)  # noqa: S603 - fixed argv
    if done.returncode != 0:
        raise RuntimeError(f"docindex plan exited {done.returncode}: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def plan(env: dict[str, str], *extra: str) -> dict[str, Any]:
    """``docindex plan --json`` with the stack's env file."""
    import tempfile

    from docindex.ops.envfile import write_env_file

    with tempfile.TemporaryDirectory() as tmp:
        env_file = Path(tmp) / "docindex.env"
        write_env_file(env_file, env)
        return docindex_plan("--env-file", str(env_file), *extra)


# ------------------------------------------------------------------ the 5-million-row inventory

# The incident's file server: 10 TB, 5 million files, mostly Japanese office documents, PDFs and scans.
INVENTORY_MIX = {
    "pdf": 35,
    "docx": 14,
    "doc": 4,
    "xlsx": 12,
    "xls": 3,
    "pptx": 7,
    "txt": 3,
    "csv": 2,
    "jpg": 4,
    "png": 2,
    "tif": 4,
    "msg": 2,
    "zip": 2,
    "dat": 6,
}


def write_inventory(root: Path, rows: int, *, seed: int = 36) -> Path:
    """An S3 Inventory report as S3 writes it: manifest.json and gzip'd CSV data files without a header."""
    rng = random.Random(seed)  # noqa: S311 - generated data
    extensions = [ext for ext, share in INVENTORY_MIX.items() for _ in range(share)]
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    files, per_file = [], 1_000_000
    for part in range(math.ceil(rows / per_file)):
        name = f"data/{uuid.UUID(int=rng.getrandbits(128))}.csv.gz"
        with gzip.open(root / name, "wt", encoding="utf-8", compresslevel=1, newline="") as out:
            for number in range(part * per_file, min(rows, (part + 1) * per_file)):
                ext = extensions[number % len(extensions)]
                key = quote_plus(f"部署{number % 40:02d}/{2010 + number % 16}年度/文書 {number:07d}.{ext}")
                size = int(min(5e9, rng.lognormvariate(math.log(500_000), 1.6)))
                out.write(f'"corp-file-server","{key}","{size}","2026-11-01T00:00:00.000Z","STANDARD"\n')
        files.append({"key": f"corp-file-server/docindex/{name}", "size": 0, "MD5checksum": ""})
    manifest = {
        "sourceBucket": "corp-file-server",
        "destinationBucket": "arn:aws:s3:::corp-inventory",
        "version": "2016-11-30",
        "creationTimestamp": "1764547200000",
        "fileFormat": "CSV",
        "fileSchema": "Bucket, Key, Size, LastModifiedDate, StorageClass",
        "files": files,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return root / "manifest.json"


def plan_inventory(manifest: Path, kind_figures: Path) -> tuple[dict[str, Any], float]:
    """The plan of a generated inventory, and the seconds the command took (its start-up included)."""
    started = time.monotonic()
    figures = docindex_plan("--inventory", str(manifest), "--sample", "0", "--kind-figures", str(kind_figures))
    return figures, time.monotonic() - started


# ------------------------------------------------------------------ the run


def compare(predicted: dict[str, Any], actual: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rows = {
        "files": (predicted["files"], actual["files"]),
        "pages": (predicted["figures"]["pages"], actual["pages"]),
        "scanned_pages": (predicted["figures"]["scanned_pages"], actual["scanned_pages"]),
        "passages": (predicted["figures"]["passages"], actual["passages"]),
        "index_bytes": (predicted["figures"]["index_documents_disk_bytes"], actual["index_bytes"]),
    }
    return {
        name: {"predicted": p, "measured": m, "error": round((p - m) / m, 4) if m else None}
        for name, (p, m) in rows.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.plan_check", description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--distinct", type=int, default=2_000)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--inventory-rows", type=int, default=5_000_000)
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    from bench.local import local_services
    from bench.report import save_section

    started = time.monotonic()
    objects = list(bucket_objects(args.files, min(args.distinct, args.files)))
    generated = time.monotonic() - started
    print(f"plan check: {len(objects):,} objects ({generated:.0f} s to generate or read from the cache)")
    with local_services("bench-plan-", REGION) as local:
        pipeline = run_pipeline(local, objects)
        actual = measured(local.opensearch, pipeline["index"])
        started = time.monotonic()
        predicted = plan(pipeline["env"], "--sample", str(args.sample), "--max-list", str(args.files + 1))
        plan_seconds = time.monotonic() - started
    rows = compare(predicted, actual)
    figures: dict[str, Any] = {
        "files": args.files,
        "distinct": args.distinct,
        "sample": args.sample,
        "plan_seconds": round(plan_seconds, 1),
        "pipeline_seconds": round(pipeline["ocr_seconds"], 1),
        "pending_ocr_left": actual["pending_ocr"],
        "rows": rows,
        "within_tolerance": all(r["error"] is not None and abs(r["error"]) <= TOLERANCE for r in rows.values()),
        "kinds": predicted["kinds"],
    }
    print(f"  docindex plan on the bucket: {plan_seconds:.1f} s; pipeline {pipeline['ocr_seconds']:.0f} s")
    print(f"  {'':<14} {'predicted':>14} {'measured':>14} {'error':>8}")
    for name, row in rows.items():
        error = f"{row['error'] * 100:+.1f} %" if row["error"] is not None else "-"
        print(f"  {name:<14} {row['predicted']:>14,} {row['measured']:>14,} {error:>8}")
    print(f"  every figure within {TOLERANCE:.0%}: {figures['within_tolerance']}")
    if args.inventory_rows:
        root = REPO / "bench" / "corpus" / f"plan-inventory-{args.inventory_rows}"
        manifest = root / "manifest.json"
        if not manifest.exists():
            write_inventory(root, args.inventory_rows)
        kind_figures = root / "kind-figures.json"
        kind_figures.write_text(json.dumps({"kinds": predicted["kinds"]}, ensure_ascii=False))
        big, seconds = plan_inventory(manifest, kind_figures)
        figures["inventory"] = {"rows": args.inventory_rows, "seconds": round(seconds, 1), "plan": big}
        print(f"  docindex plan on a {args.inventory_rows:,}-row inventory: {seconds:.1f} s")
        print(
            f"    {big['files']:,} files, {big['bytes'] / 1e12:.1f} TB; domain {big['domain']['data_nodes']} x "
            f"{big['domain']['instance_type']}; backfill {big['hours']['backfill']:.1f} h; "
            f"${big['dollars_once']['total']:,.0f} once, ${big['dollars_per_month']['total']:,.0f} per month"
        )
    save_section(args.results, "plan_check", figures)
    return 0 if figures["within_tolerance"] else 1


if __name__ == "__main__":
    sys.exit(main())
