"""Throughput of ``backfill`` and ``reconcile`` on a generated bucket (moto server + a real OpenSearch node).

    .venv/bin/python bench/ops_throughput.py [--objects 20000] [--out bench/ops-results.json]

Starts its own moto server and OpenSearch node (separate processes, as `docindex
local up` does), generates a bucket of N small objects with Japanese and
mixed-case keys, indexes N documents for it directly (with planted missing,
stale and orphaned ones), then times:

- ``backfill --dry-run``: listing and batching only;
- ``backfill`` into an SQS stand-in that accepts every batch at once: the
  backfill machinery alone (batching, bookkeeping, a checkpoint per batch);
- ``backfill``: into a moto queue that a consumer thread drains meanwhile
  (moto's SQS slows down linearly with the number of messages held, so the
  backlog guard keeps it short, as a real consumer would);
- ``reconcile``: the merge of the listing with the index, read-only;
- ``reconcile --fix``: the same, enqueueing the repairs.

Not part of ``make test``; the generated data lives only in the servers' memory.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "docindex"))

from bench.local import servers_running  # noqa: E402
from devkit.local.session import EMBEDDED_CREDENTIALS  # noqa: E402
from docindex.core.changes import doc_id  # noqa: E402
from docindex.core.clients import boto_config  # noqa: E402
from docindex.index.mapping import ensure_index  # noqa: E402
from docindex.ops.backfill.checkpoint import Checkpoint  # noqa: E402
from docindex.ops.backfill.run import Backfill  # noqa: E402
from docindex.ops.backfill.sources import BucketListing  # noqa: E402
from docindex.ops.enqueue import BacklogGuard, ChangeSender  # noqa: E402
from docindex.ops.reconcile import Reconciler  # noqa: E402

FOLDERS = ["営業部/週報", "経理/請求書", "Eng/Design", "eng/notes", "総務/規程", "ｶﾀｶﾅ/半角"]
BUCKET = INDEX = "bench-documents"


class Drainer(threading.Thread):
    """The consumer: receives and deletes as fast as it can."""

    def __init__(self, sqs: Any, url: str) -> None:
        super().__init__(daemon=True)
        self.sqs, self.url, self.count, self.finish = sqs, url, 0, threading.Event()

    def run(self) -> None:
        while True:
            got = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10).get("Messages", [])
            if not got:
                if self.finish.is_set():
                    return
                time.sleep(0.01)
                continue
            self.count += len(got)
            self.sqs.delete_message_batch(
                QueueUrl=self.url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)],
            )

    def stop(self) -> int:
        self.finish.set()
        self.join()
        return self.count


class NullSqs:
    """Accepts every batch at once (measures everything but SQS)."""

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}


def rate(seconds: float, count: int) -> dict[str, Any]:
    return {"seconds": round(seconds, 2), "objects_per_second": round(count / seconds) if seconds else None}


def generate(s3: Any, opensearch: Any, count: int) -> tuple[list[str], dict[str, int]]:
    """The bucket, and an index with 1 % missing, 0.5 % stale and 0.5 % orphaned documents."""
    from opensearchpy import helpers

    s3.create_bucket(Bucket=BUCKET)
    keys = [f"{FOLDERS[i % len(FOLDERS)]}/{i:06d} 資料.txt" for i in range(count)]
    etags: dict[str, str] = {}

    def put(key: str) -> None:
        etags[key] = s3.put_object(Bucket=BUCKET, Key=key, Body=key.encode())["ETag"].strip('"')

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, keys))
    missing = set(keys[::100])
    stale = set(keys[50::200])
    orphans = [f"{FOLDERS[i % len(FOLDERS)]}/{i:06d} 削除済み.txt" for i in range(0, count, 200)]
    ensure_index(opensearch, INDEX)
    actions = [
        {
            "_index": INDEX,
            "_id": doc_id(BUCKET, key),
            "_source": {"bucket": BUCKET, "key": key, "etag": "old" if key in stale else etags.get(key, "gone")},
        }
        for key in [*keys, *orphans]
        if key not in missing
    ]
    helpers.bulk(opensearch, actions, chunk_size=2000, request_timeout=120)
    opensearch.indices.refresh(index=INDEX)
    return keys, {"missing": len(missing), "stale": len(stale), "orphaned": len(orphans)}


def measure(s3: Any, sqs: Any, opensearch: Any, *, state: Path, count: int, concurrency: int) -> dict[str, Any]:
    results: dict[str, Any] = {"objects": count, "concurrency": concurrency}
    started = time.monotonic()
    keys, planted = generate(s3, opensearch, count)
    results["generate_seconds"] = round(time.monotonic() - started, 1)
    print(f"generated {len(keys)} objects in {results['generate_seconds']} s", file=sys.stderr)

    # The listing's one-second wait before its first page is a constant, not throughput: left out.
    source = BucketListing(s3, BUCKET, settle_seconds=0)
    dry = Backfill(source, sender=None, checkpoint=Checkpoint(path=None, identity={})).run()
    results["backfill_dry_run"] = rate(dry.seconds, dry.listed)
    null = Backfill(
        source,
        sender=ChangeSender(NullSqs(), "null"),
        checkpoint=Checkpoint.load(state / "null-checkpoint.json", {"bench": 0}),
        concurrency=concurrency,
    ).run()
    results["backfill_null_sqs"] = rate(null.seconds, null.enqueued)

    url = sqs.create_queue(QueueName="bench-ingest")["QueueUrl"]
    drainer = Drainer(sqs, url)
    drainer.start()
    backfill = Backfill(
        source,
        sender=ChangeSender(sqs, url),
        checkpoint=Checkpoint.load(state / "checkpoint.json", {"bench": 1}),
        concurrency=concurrency,
        backlog=BacklogGuard(sqs, url, max_backlog=50, check_every=0.05),
    ).run()
    consumed = drainer.stop()
    if not backfill.completed or backfill.enqueued != consumed or consumed != len(keys):
        raise RuntimeError(f"backfill incomplete: {backfill} consumed={consumed}")
    results["backfill_moto_sqs"] = rate(backfill.seconds, backfill.enqueued)

    report = Reconciler(s3=s3, opensearch=opensearch, bucket=BUCKET, index=INDEX).run()
    found = {"missing": report.missing, "stale": report.stale, "orphaned": report.orphaned}
    if found != planted:
        raise RuntimeError(f"reconcile found {found}, planted {planted}")
    results["reconcile"] = {
        **rate(report.seconds, report.objects),
        "documents": report.documents,
        "coverage_percent": round(report.coverage, 2),
        **found,
    }
    fix_url = sqs.create_queue(QueueName="bench-fix")["QueueUrl"]
    sender = ChangeSender(sqs, fix_url)
    fixed = Reconciler(s3=s3, opensearch=opensearch, bucket=BUCKET, index=INDEX, sender=sender).run()
    results["reconcile_fix"] = {
        **rate(fixed.seconds, fixed.objects),
        "enqueued": fixed.enqueued_created + fixed.enqueued_removed,
    }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import boto3
    from opensearchpy import OpenSearch

    state = Path(tempfile.mkdtemp(prefix="docindex-bench-"))
    with servers_running(state) as (moto, engine):
        session = boto3.Session(
            aws_access_key_id=EMBEDDED_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=EMBEDDED_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            region_name="us-east-1",
        )
        s3 = session.client("s3", endpoint_url=moto.url, config=boto_config(pool=32))
        sqs = session.client("sqs", endpoint_url=moto.url, config=boto_config(pool=32))
        opensearch = OpenSearch(hosts=[engine.url], timeout=120)
        results = measure(s3, sqs, opensearch, state=state, count=args.objects, concurrency=args.concurrency)
    text = json.dumps(results, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
