"""The re-sync scenario: what a file server's non-new traffic costs (issue 14).

    .venv/bin/python -m bench.resync [--files 40] [--scans 8] [--out bench/resync.json]

N files (office documents, PDFs, text, and ``--scans`` of them scanned pages) are indexed by the
real indexer and OCR worker on moto server and the bench's engine (a real OpenSearch node by default). Then, each
measured alone:

- (a) **re-sync**: the same N objects rewritten unchanged and announced again;
- (b) **rename**: the folder renamed (S3: a copy to the new key and a delete of the old one, both
  announced);
- (c) **copy**: every file copied into a second folder.

For each: GetObject calls and body bytes read from the documents bucket, extractions in the indexer,
OCR pages, and an estimated AWS cost. It measures whatever ``docindex`` package is importable, so
``PYTHONPATH=<a checkout of main>/layers/docindex python -m bench.resync`` gives the figures before
this feature (a package without the content cache ignores ``CONTENT_CACHE_BUCKET``).

Cost model (us-east-1 list prices; docs/performance.md): S3 GET $0.0004 and PUT $0.005 per 1,000
requests; the indexer's extraction time on a 1536 MB Lambda at $0.0000166667 per GB-s; OCR at the
worker's measured ~1 s of one vCPU per page on Fargate ($0.04048 per vCPU-hour plus 2 GB at
$0.004445 per GB-hour per vCPU).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

REGION = "us-east-1"
GET_PER_REQUEST = 0.0004 / 1000
PUT_PER_REQUEST = 0.005 / 1000
LAMBDA_GB_SECOND = 0.0000166667
LAMBDA_GB = 1.5
OCR_SECONDS_PER_PAGE = 1.0
FARGATE_VCPU_SECOND = (0.04048 + 2 * 0.004445) / 3600


class CountingS3:
    """The real client; counts GetObject/PutObject per bucket and the body bytes GetObject returned."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.gets: Counter[str] = Counter()
        self.puts: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()

    def get_object(self, **params: Any) -> Any:
        self.gets[params["Bucket"]] += 1  # a miss (NoSuchKey) is a billed request too
        response = self._client.get_object(**params)
        self.bytes[params["Bucket"]] += int(response.get("ContentLength") or 0)
        return response

    def put_object(self, **params: Any) -> Any:
        self.puts[params["Bucket"]] += 1
        return self._client.put_object(**params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def corpus(files: int, scans: int) -> list[tuple[str, bytes]]:
    from devkit import samples

    lines = ["株式会社サンプル 業務報告", "売上高は前年同期比で増加しました。"]
    out: list[tuple[str, bytes]] = []
    for i in range(files):
        if i < scans:
            body = samples.make_scan_png([f"{lines[0]} 第{i}号", lines[1]], dpi=300, page=(5.0, 2.0))
            out.append((f"scan-{i:04d}.png", body))
        elif i % 3 == 0:
            out.append((f"report-{i:04d}.docx", samples.make_docx([f"報告書 {i}", *lines, "明細 " * 200])))
        elif i % 3 == 1:
            out.append((f"slides-{i:04d}.pdf", samples.make_pdf([f"資料 {i} " + lines[0], lines[1] * 20])))
        else:
            out.append((f"memo-{i:04d}.txt", (f"メモ {i}\n" + "\n".join(lines) * 30).encode()))
    return out


class Pipeline:
    """The real indexer and OCR worker on one local stack, with counters around them."""

    def __init__(self, aws: dict[str, Any], opensearch: Any, search_url: str, moto_url: str) -> None:
        # The indexer reads content through docindex.ingest.reading, which calls extract().
        import docindex.ingest.reading as reading_module
        from devkit.local.stack import StackNames, StackOptions, provision
        from docindex.core.settings import Settings
        from docindex.ingest.indexer import Indexer
        from docindex.worker.config import WorkerSettings
        from docindex.worker.pool import OcrPool
        from docindex.worker.service import Worker

        names = StackNames(f"b{uuid.uuid4().hex[:10]}")
        self.env = provision(
            s3=aws["s3"],
            sqs=aws["sqs"],
            dynamodb=aws["dynamodb"],
            opensearch=opensearch,
            names=names,
            options=StackOptions(),
            region=REGION,
        )
        self.env.update({"OPENSEARCH_ENDPOINT": search_url, "OPENSEARCH_AUTH": "none", "AWS_ENDPOINT_URL": moto_url})
        self.bucket = self.env["DOCINDEX_BUCKET"]
        self.s3 = CountingS3(aws["s3"])
        self.raw_s3 = aws["s3"]
        self.sqs = aws["sqs"]
        self.extractions = 0
        self.extraction_seconds = 0.0
        real_extract = reading_module.extract

        def counted_extract(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return real_extract(*args, **kwargs)
            finally:
                self.extractions += 1
                self.extraction_seconds += time.perf_counter() - started

        reading_module.extract = counted_extract  # type: ignore[assignment]
        # Powertools flushes a metric once it holds 100 values: tally every value as it is added.
        from docindex.core.observability import metrics

        self.counted: Counter[str] = Counter()
        real_add = metrics.add_metric

        def tallied(name: str, unit: Any, value: float, **kwargs: Any) -> None:
            self.counted[name] += value
            real_add(name=name, unit=unit, value=value, **kwargs)

        metrics.add_metric = tallied  # type: ignore[method-assign]
        settings = Settings.from_env(self.env)
        self.indexer = Indexer(settings, s3=self.s3, sqs=aws["sqs"], dynamodb=aws["dynamodb"], opensearch=opensearch)
        worker_settings = WorkerSettings.from_env({**self.env, "WORKER_CONCURRENCY": "2"})
        self.pool = OcrPool(2)
        self.worker = Worker(
            worker_settings,
            s3=self.s3,
            sqs=aws["sqs"],
            dynamodb=aws["dynamodb"],
            opensearch=opensearch,
            pool=self.pool,
            flush_metrics=False,
        )
        self.sequence = 0x100

    def close(self) -> None:
        self.worker.close()
        self.pool.close()

    def announce(self, changes: list[tuple[str, str, bytes | None]]) -> None:
        """Send ``(event, key, body)`` notifications to the indexer in batches of 10, as SQS would."""
        from devkit.local.context import LocalLambdaContext
        from devkit.messages import s3_notification, sqs_event

        records = []
        for event, key, body in changes:
            self.sequence += 1
            extra: dict[str, Any] = {}
            if body is not None:
                head = self.raw_s3.head_object(Bucket=self.bucket, Key=key)
                extra = {"etag": head["ETag"].strip('"'), "size": head["ContentLength"]}
            message = s3_notification(
                self.bucket, key, event=event, sequencer=f"0062A1B2C3D4{self.sequence:06X}", **extra
            )
            records.append(message)
        for start in range(0, len(records), 10):
            event = sqs_event(*records[start : start + 10], queue_arn=self.env["INGEST_QUEUE_ARN"])
            response = self.indexer.handle(event, LocalLambdaContext(timeout_seconds=120))
            if response["batchItemFailures"]:
                raise RuntimeError(f"indexer failures: {response['batchItemFailures']}")

    def drain_ocr(self) -> None:
        idle = 0
        while idle < 2:
            idle = idle + 1 if self.worker.poll_once(wait_seconds=1) == 0 else 0

    def measured(self, name: str, action: Any) -> dict[str, Any]:
        self.counted.clear()
        self.s3.gets.clear()
        self.s3.bytes.clear()
        self.s3.puts.clear()
        self.extractions, self.extraction_seconds = 0, 0.0
        started = time.perf_counter()
        action()
        self.drain_ocr()
        seconds = time.perf_counter() - started

        def metric(metric_name: str) -> float:
            return float(self.counted[metric_name])

        gets = sum(self.s3.gets.values())
        puts = sum(self.s3.puts.values())
        ocr_pages = metric("OcrPagesProcessed")
        cost = (
            gets * GET_PER_REQUEST
            + puts * PUT_PER_REQUEST
            + self.extraction_seconds * LAMBDA_GB * LAMBDA_GB_SECOND
            + ocr_pages * OCR_SECONDS_PER_PAGE * FARGATE_VCPU_SECOND
        )
        return {
            "scenario": name,
            "get_object_documents": self.s3.gets[self.bucket],
            "body_bytes_read": self.s3.bytes[self.bucket],
            "cache_gets": gets - self.s3.gets[self.bucket],
            "cache_puts": puts,
            "extractions": self.extractions,
            "extraction_seconds": round(self.extraction_seconds, 3),
            "ocr_jobs": metric("OcrJobsQueued"),
            "ocr_pages": ocr_pages,
            "unchanged_skipped": metric("UnchangedContentSkipped"),
            "estimated_cost_usd": round(cost, 8),
            "wall_seconds": round(seconds, 2),
        }


def run(files: int, scans: int) -> dict[str, Any]:
    import docindex
    from bench.local import local_services

    with local_services("bench-resync-", REGION) as local:
        aws, opensearch = local.aws, local.opensearch
        pipeline = Pipeline(aws, opensearch, local.search_url, local.moto_url)
        try:
            files_ = corpus(files, scans)
            s3 = pipeline.raw_s3
            bucket = pipeline.bucket

            def initial() -> None:
                for name, body in files_:
                    s3.put_object(Bucket=bucket, Key=f"営業部/{name}", Body=body)
                pipeline.announce([("ObjectCreated:Put", f"営業部/{name}", body) for name, body in files_])

            def resync() -> None:
                for name, body in files_:
                    s3.put_object(Bucket=bucket, Key=f"営業部/{name}", Body=body)
                pipeline.announce([("ObjectCreated:Put", f"営業部/{name}", body) for name, body in files_])

            def rename() -> None:
                changes: list[tuple[str, str, bytes | None]] = []
                for name, body in files_:
                    old, new = f"営業部/{name}", f"営業本部/{name}"
                    s3.copy_object(Bucket=bucket, Key=new, CopySource={"Bucket": bucket, "Key": old})
                    s3.delete_object(Bucket=bucket, Key=old)
                    changes += [("ObjectRemoved:Delete", old, None), ("ObjectCreated:Copy", new, body)]
                pipeline.announce(changes)

            def copy() -> None:
                for name, _ in files_:
                    s3.copy_object(
                        Bucket=bucket, Key=f"共有/{name}", CopySource={"Bucket": bucket, "Key": f"営業本部/{name}"}
                    )
                pipeline.announce([("ObjectCreated:Copy", f"共有/{name}", body) for name, body in files_])

            results = [
                pipeline.measured("initial index", initial),
                pipeline.measured("(a) re-sync unchanged", resync),
                pipeline.measured("(b) folder renamed", rename),
                pipeline.measured("(c) copied to a 2nd folder", copy),
            ]
        finally:
            pipeline.close()
    return {
        "package": str(Path(docindex.__file__).parent),
        "files": files,
        "scans": scans,
        "corpus_bytes": sum(len(b) for _, b in files_),
        "results": results,
    }


def render(data: dict[str, Any]) -> str:
    head = ["scenario", "GetObject", "body bytes", "extractions", "OCR jobs", "OCR pages", "unchanged", "cost USD"]
    rows = [
        [
            r["scenario"],
            str(r["get_object_documents"]),
            f"{r['body_bytes_read']:,}",
            str(r["extractions"]),
            f"{r['ocr_jobs']:.0f}",
            f"{r['ocr_pages']:.0f}",
            f"{r['unchanged_skipped']:.0f}",
            f"{r['estimated_cost_usd']:.6f}",
        ]
        for r in data["results"]
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    lines = [f"re-sync scenario: {data['files']} files ({data['scans']} scans), package {data['package']}"]
    for row in [head, *rows]:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--scans", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args()
    data = run(args.files, min(args.scans, args.files))
    print(render(data))
    if args.out:
        args.out.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
