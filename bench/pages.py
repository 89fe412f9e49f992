"""What naming pages costs (issue 28): index size, ``_bulk`` time, search latency, preview latency and memory.

    .venv/bin/python -m bench.pages [--docs 10000] [--long 200] [--pages 100] [--repeat 5]

Four measurements, each before → after in the same run:

1. **Index size per 1,000 pages**: long PDFs' documents (``--pages`` pages of ~600 Japanese
   characters each, built from their pages exactly as the indexer builds them,
   ``IndexDocument.with_content``) indexed into two indices of the real mapping, once without
   ``pages`` (before issue 28) and once with them; the figure is the local node's ``store.size``
   (Lucene's files as they stand after a refresh: the ratio is the point) and the ``_source``
   bytes, per 1,000 pages.
2. **``_bulk`` time per document**: the same documents sent through ``_bulk`` (chunks of 10),
   without and with pages.
3. **Search p50/p95 through the search function** (``functions/search/app.py``, as
   ``bench.search_latency`` drives it, meaning search on: ``EMBEDDINGS=local``) on ``--docs``
   documents of which ``--long`` are long PDFs with pages: with page hits (``SEARCH_PAGE_HITS=3``)
   and without (``0``).
4. **Preview p50/p95 and memory**: ``GET /documents/{id}/pages/{n}/preview`` through the
   function, pages of a 120-page text PDF and of an image-only scan PDF read from moto's S3
   (each page asked once: every request renders); memory is the process's peak RSS growth
   over the previews, the first one's imports (pypdfium2, Pillow) included (``VmHWM`` reset
   after the function's first search, Linux), measured in a fresh process. The scan's pages
   are also asked with ``q`` (each page without and with it, in turn): its word boxes come from
   the real OCR of those pages (``docindex.worker.ocr.process_page``), stored in moto's S3
   as the worker stores them, so a marked preview reads them and tints the query's words.
5. **Stored size of word boxes per page**: the gzip JSON entry the worker keeps for each OCR'd
   page (``docindex.ingest.wordboxes``), for every page image of the real-scan corpus in
   ``tests/fixtures/ocr`` (TIFF, PNG, JPEG) and for the bench's generated scan pages.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess  # nosec B404 - our own interpreter running this module
import sys
import time
import warnings
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import urlencode

from bench.report import save_section
from bench.search_latency import LINES, QUERIES, _percentile, function_environment, search_event

REPO = Path(__file__).resolve().parent.parent
WORD = "内部統制"


def _page_text(doc: int, page: int) -> str:
    lines = [LINES[(doc + page + k) % len(LINES)] for k in range(30)]
    if page % 37 == 5:
        lines.append(f"{WORD}の評価 第{page}頁")
    return "".join(lines)[:600]


def _long_document(n: int, pages: int, with_pages: bool) -> dict[str, Any]:
    from docindex.extract.base import PageText
    from docindex.index.documents import IndexDocument

    texts = [PageText(number=p, kind="page", text=_page_text(n, p)) for p in range(1, pages + 1)]
    doc = IndexDocument.for_object(bucket="docs", key=f"報告書/年次報告 {n:05d}.pdf", content_type="application/pdf")
    doc = doc.with_content(
        text="\n\n".join(t.text for t in texts),
        title=f"年次報告 {n}",
        page_count=pages,
        truncated=False,
        error=None,
        pages=tuple(texts) if with_pages else (),
    )
    source = doc.source()
    source["allow_principals"] = ["group:部署3", "everyone"]
    return source


def measure_index(long_docs: int, pages: int) -> dict[str, Any]:
    """Index size and _bulk time of the same long PDFs without and with their pages."""
    from bench.local import search_engine
    from docindex.index.mapping import ensure_index

    figures: dict[str, Any] = {"documents": long_docs, "pages_per_document": pages}
    with search_engine(timeout=300, engine="opensearch") as (_, client):
        for mode in ("before", "after"):
            index = f"bench-{mode}"
            ensure_index(client, index)
            sources = [_long_document(n, pages, with_pages=mode == "after") for n in range(long_docs)]
            per_doc: list[float] = []
            for start in range(0, long_docs, 10):
                lines: list[str] = []
                for n, source in enumerate(sources[start : start + 10], start=start):
                    lines.append(json.dumps({"index": {"_index": index, "_id": f"long-{n}"}}))
                    lines.append(json.dumps(source, ensure_ascii=False))
                body = "\n".join(lines) + "\n"
                started = time.perf_counter()
                response = client.bulk(body=body.encode("utf-8"), request_timeout=300)
                per_doc.append((time.perf_counter() - started) * 1000 / min(10, long_docs - start))
                if response.get("errors"):
                    raise RuntimeError(f"bulk errors in {mode}")
            client.indices.refresh(index=index)
            stats = client.indices.stats(index=index)["_all"]["primaries"]
            total_pages = long_docs * pages
            source_bytes = sum(len(json.dumps(s, ensure_ascii=False).encode("utf-8")) for s in sources)
            figures[mode] = {
                "store_bytes_per_1000_pages": round(stats["store"]["size_in_bytes"] * 1000 / total_pages),
                "source_bytes_per_1000_pages": round(source_bytes * 1000 / total_pages),
                "lucene_docs": int(stats["docs"]["count"]),
                "bulk_ms_per_document_p50": round(statistics.median(per_doc), 1),
                "bulk_ms_per_document_p95": round(_percentile(per_doc, 0.95), 1),
            }
    b, a = figures["before"], figures["after"]
    figures["store_ratio"] = round(a["store_bytes_per_1000_pages"] / b["store_bytes_per_1000_pages"], 2)
    figures["source_ratio"] = round(a["source_bytes_per_1000_pages"] / b["source_bytes_per_1000_pages"], 2)
    figures["bulk_ratio_p50"] = round(a["bulk_ms_per_document_p50"] / b["bulk_ms_per_document_p50"], 2)
    return figures


def measure_search(docs: int, long_docs: int, pages: int, repeat: int) -> dict[str, Any]:
    """Search latency through the function with and without page hits, on ``docs`` documents."""
    from opensearchpy import helpers

    from bench.local import search_engine
    from devkit.local.context import LocalLambdaContext
    from devkit.local.handlers import load_handler
    from docindex.core.observability import logger
    from docindex.index.mapping import ensure_index
    from docindex.search_api import routes

    def short(n: int) -> dict[str, Any]:
        text = "".join(LINES[(n + k) % len(LINES)] for k in range(4)) + f" 管理番号{n}"
        return {
            "bucket": "docs",
            "key": f"部署{n % 20}/文書 {n:06d}.txt",
            "filename": f"文書 {n:06d}.txt",
            "extension": "txt",
            "content": text,
            "allow_principals": ["group:部署3", "everyone"] if n % 5 == 0 else [f"group:部署{n % 20}"],
            "last_modified": f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}T09:00:00Z",
            "ocr_status": "none",
        }

    queries = (*QUERIES, WORD)
    results: dict[str, Any] = {"documents": docs, "long_pdfs": long_docs, "pages_per_long_pdf": pages}
    # the function searches by meaning too (EMBEDDINGS=local): the real node, which answers knn queries
    with search_engine(timeout=300, engine="opensearch") as (server, client):
        ensure_index(client, "documents")

        def actions() -> Any:
            for n in range(docs):
                source = _long_document(n, pages, with_pages=True) if n < long_docs else short(n)
                yield {"_index": "documents", "_id": f"doc-{n}", "_source": source}

        helpers.bulk(client, actions(), chunk_size=200, max_chunk_bytes=8 * 1024 * 1024, request_timeout=600)
        client.indices.refresh(index="documents")
        logger.setLevel("WARNING")
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        for mode, page_hits in (("without_page_hits", "0"), ("with_page_hits", "3")):
            with mock.patch.dict(
                os.environ, function_environment(server.url, SEARCH_PAGE_HITS=page_hits, EMBEDDINGS="local")
            ):
                routes._resolver = None
                handler = load_handler("search")
                latencies: list[float] = []
                named = 0
                for round_number in range(repeat + 1):
                    for query in queries:
                        event = search_event(query, ["部署3"])
                        started = time.perf_counter()
                        response = handler(event, LocalLambdaContext(function_name="docindex-search-bench"))
                        elapsed = (time.perf_counter() - started) * 1000
                        if response["statusCode"] != 200:
                            raise RuntimeError(f"search {query!r}: {response['statusCode']} {response['body']}")
                        if round_number:
                            latencies.append(elapsed)
                            named += sum(len(h["pages"]) for h in json.loads(response["body"])["hits"])
                results[mode] = {
                    "p50_ms": round(statistics.median(latencies), 2),
                    "p95_ms": round(_percentile(latencies, 0.95), 2),
                    "pages_named_per_search": round(named / len(latencies), 1),
                }
                routes._resolver = None
    results["queries"] = len(queries) * repeat
    results["with_vs_without_p50"] = round(
        results["with_page_hits"]["p50_ms"] / results["without_page_hits"]["p50_ms"], 2
    )
    results["with_vs_without_p95"] = round(
        results["with_page_hits"]["p95_ms"] / results["without_page_hits"]["p95_ms"], 2
    )
    return results


def _rss_kib(field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (peak since the last reset) of this process, KiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure_preview(samples: int) -> dict[str, Any]:  # noqa: PLR0915 - one measurement, read top to bottom
    """Preview latency and peak memory growth (run in a fresh process by ``main``)."""
    import base64
    import tempfile

    import boto3

    from bench.local import search_engine
    from devkit.local.context import LocalLambdaContext
    from devkit.local.gateway import http_api_event
    from devkit.local.handlers import load_handler
    from devkit.local.servers import start_moto, stop
    from devkit.samples import make_pdf, make_scan_pdf
    from docindex.core.observability import logger
    from docindex.index.mapping import ensure_index
    from docindex.ingest.wordboxes import WordBoxStore
    from docindex.search_api import routes

    state = Path(tempfile.mkdtemp(prefix="bench-preview-"))
    moto = start_moto(state, exit_with_parent=True)
    results: dict[str, Any] = {"samples_per_kind": samples}
    try:
        s3 = boto3.client(
            "s3",
            endpoint_url=moto.url,
            region_name="us-east-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",  # noqa: S106  # nosec B106 - moto accepts any key
        )
        s3.create_bucket(Bucket="docs")
        s3.create_bucket(Bucket="cache")
        report = make_pdf([_page_text(1, p) for p in range(1, 121)])
        scan = make_scan_pdf([[f"監査メモ 第{p}頁", "指摘事項なし"] for p in range(1, samples + 1)], dpi=200)
        files = {"report": ("報告書.pdf", report, 120), "scan": ("スキャン.pdf", scan, samples)}
        # The scan's pages OCR'd as the worker reads them; their word boxes stored as it stores them.
        scan_sha = hashlib.sha256(scan).hexdigest()
        stored = _ocr_and_store(scan, samples, WordBoxStore(s3, "cache"), scan_sha)
        results["scan_word_boxes_bytes_p50"] = int(statistics.median(stored))
        with search_engine(timeout=60, engine="opensearch") as (server, client):
            ensure_index(client, "documents")
            for name, (key, body, page_count) in files.items():
                s3.put_object(Bucket="docs", Key=key, Body=body)
                client.index(
                    index="documents",
                    id=("a" if name == "report" else "b") * 64,
                    body={
                        "bucket": "docs",
                        "key": key,
                        "content_type": "application/pdf",
                        "page_count": page_count,
                        "allow_principals": ["everyone"],
                        **({"ocr_status": "done", "content_sha256": scan_sha} if name == "scan" else {}),
                    },
                    refresh=True,
                )
            logger.setLevel("WARNING")
            warnings.filterwarnings("ignore", message="No application metrics to publish")
            extra = {
                "AWS_ENDPOINT_URL": moto.url,
                "AWS_ACCESS_KEY_ID": "local",
                "AWS_SECRET_ACCESS_KEY": "local",
                "CONTENT_CACHE_BUCKET": "cache",
            }
            with mock.patch.dict(os.environ, function_environment(server.url, **extra, EMBEDDINGS="local")):
                routes._resolver = None
                handler = load_handler("search")
                claims = {"sub": "bench-user", "username": "bench-user", "cognito:groups": []}
                # One search first (the function's clients and imports); the first preview's
                # imports (pypdfium2, Pillow) count in the memory, its time not.
                handler(search_event(WORD, []), LocalLambdaContext(function_name="docindex-search-bench"))
                # The peak from here on: the samples were generated in this process before.
                Path("/proc/self/clear_refs").write_text("5")
                baseline = _rss_kib("VmRSS")
                warm = http_api_event("GET", f"/documents/{'a' * 64}/pages/1/preview", "", {}, claims)
                handler(warm, LocalLambdaContext(function_name="docindex-search-bench"))

                def preview(doc: str, number: int, query: str) -> tuple[float, bytes]:
                    qs = urlencode({"q": query}) if query else ""
                    event = http_api_event("GET", f"/documents/{doc}/pages/{number}/preview", qs, {}, claims)
                    started = time.perf_counter()
                    response = handler(event, LocalLambdaContext(function_name="docindex-search-bench"))
                    elapsed = (time.perf_counter() - started) * 1000
                    if response["statusCode"] != 200:
                        raise RuntimeError(f"preview {doc[:1]} p.{number}: {response['statusCode']}")
                    return elapsed, base64.b64decode(response["body"])

                for name, (_, _, page_count) in files.items():
                    doc = ("a" if name == "report" else "b") * 64
                    latencies: list[float] = []
                    marked_latencies: list[float] = []
                    sizes: list[int] = []
                    marked_pages = 0
                    for number in range(2, min(page_count, samples) + 1):
                        elapsed, jpeg = preview(doc, number, "")
                        latencies.append(elapsed)
                        sizes.append(len(jpeg))
                        if name == "scan":
                            elapsed, marked = preview(doc, number, "指摘事項")
                            marked_latencies.append(elapsed)
                            marked_pages += int(marked != jpeg)
                    results[name] = {
                        "object_bytes": len(files[name][1]),
                        "p50_ms": round(statistics.median(latencies), 1),
                        "p95_ms": round(_percentile(latencies, 0.95), 1),
                        "jpeg_bytes_p50": int(statistics.median(sizes)),
                    }
                    if marked_latencies:
                        results[name]["marked_p50_ms"] = round(statistics.median(marked_latencies), 1)
                        results[name]["marked_p95_ms"] = round(_percentile(marked_latencies, 0.95), 1)
                        results[name]["pages_marked"] = f"{marked_pages}/{len(marked_latencies)}"
                routes._resolver = None
                peak = _rss_kib("VmHWM")
        results["peak_rss_growth_mib"] = round((peak - baseline) / 1024, 1)
        results["peak_rss_mib"] = round(peak / 1024, 1)
    finally:
        stop(moto)
    return results


def _ocr_and_store(pdf: bytes, pages: int, store: Any, sha: str) -> list[int]:
    """OCR each page of ``pdf`` as the worker does (in a process of its own, so that Tesseract's
    memory is not counted in the previews'), store its word boxes; the bytes stored."""
    import multiprocessing
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    from docindex.ingest.wordboxes import PageWords
    from docindex.worker import ocr

    with tempfile.NamedTemporaryFile(suffix=".pdf") as handle:
        handle.write(pdf)
        handle.flush()
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=context, initializer=ocr.init_process) as pool:
            options = ocr.OcrOptions()
            read = list(
                pool.map(ocr.process_page, [handle.name] * pages, ["pdf"] * pages, range(pages), [options] * pages)
            )
    return [store.put(sha, PageWords.from_result(page.index + 1, page.words)) for page in read]


def measure_word_boxes() -> dict[str, Any]:
    """The stored word boxes of every page image of the real-scan corpus (tests/fixtures/ocr)."""
    from docindex.ingest.wordboxes import PageWords
    from docindex.worker import ocr

    os.environ["OMP_THREAD_LIMIT"] = "1"
    sizes: list[int] = []
    words: list[int] = []
    for path in sorted((REPO / "tests" / "fixtures" / "ocr").iterdir()):
        if path.suffix.lower() not in (".tif", ".png", ".jpg"):
            continue
        info = ocr.probe(str(path), "image", ocr.OcrOptions())
        for index in range(info.page_count):
            page = ocr.process_page(str(path), "image", index, ocr.OcrOptions())
            if page.words:
                sizes.append(len(PageWords.from_result(index + 1, page.words).pack()))
                words.append(len(page.words))
    return {
        "pages": len(sizes),
        "words_per_page_p50": int(statistics.median(words)),
        "bytes_per_page_p50": int(statistics.median(sizes)),
        "bytes_per_page_max": max(sizes),
        "bytes_per_word": round(sum(sizes) / max(1, sum(words)), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.pages", description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--long", type=int, default=200, help="long PDFs among --docs")
    parser.add_argument("--pages", type=int, default=100, help="pages per long PDF")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--preview-samples", type=int, default=20)
    parser.add_argument("--preview-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    if args.preview_only:
        print(json.dumps(measure_preview(args.preview_samples)))
        return 0
    index = measure_index(min(args.long, 50), args.pages)
    b, a = index["before"], index["after"]
    print(
        f"index per 1,000 pages (the node's store.size / _source): before {b['store_bytes_per_1000_pages']:,} / "
        f"{b['source_bytes_per_1000_pages']:,} bytes -> after {a['store_bytes_per_1000_pages']:,} / "
        f"{a['source_bytes_per_1000_pages']:,} bytes (x{index['store_ratio']} / x{index['source_ratio']}); "
        f"_bulk per {args.pages}-page document p50 {b['bulk_ms_per_document_p50']} -> "
        f"{a['bulk_ms_per_document_p50']} ms (x{index['bulk_ratio_p50']})"
    )
    search = measure_search(args.docs, args.long, args.pages, args.repeat)
    w, o = search["with_page_hits"], search["without_page_hits"]
    print(
        f"search through the function on {search['documents']:,} documents ({search['long_pdfs']} PDFs of "
        f"{args.pages} pages): without page hits p50 {o['p50_ms']} / p95 {o['p95_ms']} ms; with page hits "
        f"p50 {w['p50_ms']} / p95 {w['p95_ms']} ms ({w['pages_named_per_search']} pages named per search); "
        f"x{search['with_vs_without_p50']} / x{search['with_vs_without_p95']}"
    )
    child = subprocess.run(  # noqa: S603 - this interpreter, this module  # nosec B603
        [sys.executable, "-m", "bench.pages", "--preview-only", "--preview-samples", str(args.preview_samples)],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    preview = json.loads(child.stdout.strip().splitlines()[-1])
    r, s = preview["report"], preview["scan"]
    print(
        f"preview through the function: text PDF page p50 {r['p50_ms']} / p95 {r['p95_ms']} ms "
        f"({r['jpeg_bytes_p50']:,} bytes); scanned page p50 {s['p50_ms']} / p95 {s['p95_ms']} ms "
        f"({s['jpeg_bytes_p50']:,} bytes); peak RSS growth {preview['peak_rss_growth_mib']} MiB "
        f"(process peak {preview['peak_rss_mib']} MiB)"
    )
    print(
        f"scanned page with q (query's words marked from the stored word boxes): p50 {s['p50_ms']} -> "
        f"{s['marked_p50_ms']} ms, p95 {s['p95_ms']} -> {s['marked_p95_ms']} ms ({s['pages_marked']} pages marked)"
    )
    boxes = measure_word_boxes()
    print(
        f"word boxes stored per OCR'd page: real scans ({boxes['pages']} pages of tests/fixtures/ocr, "
        f"{boxes['words_per_page_p50']} words p50) p50 {boxes['bytes_per_page_p50']:,} / max "
        f"{boxes['bytes_per_page_max']:,} bytes ({boxes['bytes_per_word']} bytes a word); the bench's "
        f"two-line scan pages {preview['scan_word_boxes_bytes_p50']:,} bytes"
    )
    save_section(args.results, "pages", {"index": index, "search": search, "preview": preview, "word_boxes": boxes})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
