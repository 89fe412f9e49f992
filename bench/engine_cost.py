"""What the real engine costs: indexing CPU, bulk throughput, bytes on disk, and search at scale (issue 47).

    .venv/bin/python -m bench.engine_cost [--office-docs 2000] [--scale 100000,1000000] [--repeat 3]

A real OpenSearch 2.19.1 node (devkit.opensearch: the production analysis tier icu+kuromoji, k-NN with
Lucene HNSW) of its own, heap ``--heap-mb``, on this machine. Its CPU is the JVM's own counters
(``/proc/<pid>/stat``), not this process's.

1. **Indexing cost** of documents as docindex writes them (``IndexDocument.source()``: content, pages,
   the spelling-variant and name fields, the access stamp): the meaning bench's office corpus
   (``--office-docs`` Japanese office texts), without and with meaning search's passages (one vector per
   passage the splitter makes; the vectors random unit vectors in float32, Lucene's HNSW: what it costs does
   not depend on what they mean). Per document: the node's CPU for the ``_bulk`` requests and the refresh
   after them (and, apart, the merges a force-merge to one segment adds); the JSON bytes sent; Lucene's
   bytes on disk (after a flush, and merged to one segment). Bulk throughput: documents per second with two
   bulk clients, and per vCPU-second of the node.
2. **Search at scale**: ``--scale`` documents actually indexed (generated file-server paths and office
   lines as ``bench.search_latency`` makes them, each with one passage's random vector, stamped by
   department), then keyword, hybrid, name and answer search through the search function itself
   (``functions/search/app.py`` in a process of its own, ``bench.search_latency.Worker``), as an employee of
   one department: p50/p95 wall, the function's CPU, the engine's share; the node's bytes per document.

The figures re-base ``docindex plan`` (``cluster_cpu_seconds_per_sent_mb``, ``cluster_cpu_seconds_per_passage``,
``index_bytes_per_sent_byte``:
docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.report import save_section

REPO = Path(__file__).resolve().parent.parent
DIMENSION = 384
SCALE_GROUP = "部署3"


def node_cpu_seconds(pid: int) -> float:
    """The CPU the process ``pid`` (the node's JVM, every thread) has used: user + system."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def unit_vector(rng: random.Random) -> list[float]:
    vector = [rng.gauss(0.0, 1.0) for _ in range(DIMENSION)]
    norm = sum(x * x for x in vector) ** 0.5
    return [round(x / norm, 6) for x in vector]


def _office_sources(count: int, *, vectors: bool, seed: int = 47) -> list[dict[str, Any]]:
    """The meaning bench's office corpus as docindex writes it; with passages when ``vectors``."""
    from bench.meaning import BUCKET, corpus
    from docindex.access.policy import AccessGrant, group_principal
    from docindex.core.changes import doc_id
    from docindex.embed.chunks import passages
    from docindex.index.documents import IndexDocument

    rng = random.Random(seed)  # noqa: S311  # nosec B311 - bench data
    out = []
    for key, text in corpus(count):
        doc = IndexDocument.for_object(bucket=BUCKET, key=key, size=len(text.encode()), etag="e", version_id=None)
        doc = doc.with_content(text=text, title=None, page_count=None, truncated=False, error=None)
        doc = doc.with_access(AccessGrant(allow=(group_principal(key.split("/", 1)[0]),)))
        source = doc.source()
        if vectors:
            source["embedding_model"] = "multilingual-e5-small-q4"
            source["passages"] = [
                {"text": p.text, "start": p.start, "end": p.end, "vector": unit_vector(rng)}
                for p in passages(text, max_passages=16, max_chars=400)
            ]
        out.append({"_id": doc_id(BUCKET, key), "_source": source})
    return out


def _bulk(client: Any, index: str, documents: list[dict[str, Any]], *, clients: int = 2, chunk: int = 200) -> float:
    """Send ``documents`` as ``_bulk`` requests of ``chunk`` from ``clients`` threads; the wall seconds."""
    from concurrent.futures import ThreadPoolExecutor

    from opensearchpy import helpers

    chunks = [documents[n : n + chunk] for n in range(0, len(documents), chunk)]

    def send(part: list[dict[str, Any]]) -> None:
        actions = ({"_index": index, **d} for d in part)
        helpers.bulk(client, actions, chunk_size=chunk, request_timeout=600, max_retries=5)

    started = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(send, chunks))
    return time.monotonic() - started


def _store_bytes(client: Any, index: str) -> int:
    stats = client.indices.stats(index=index, metric="store")
    return int(stats["_all"]["primaries"]["store"]["size_in_bytes"])


def indexing_cost(
    client: Any, pid: int, documents: list[dict[str, Any]], index: str, *, vectors: Any
) -> dict[str, Any]:
    """The node's cost of indexing ``documents`` into a fresh docindex index (see the module's docstring)."""
    from docindex.index.mapping import create_index

    tier = create_index(client, f"{index}-v1", alias=index, vectors=vectors)
    sent = sum(len(json.dumps(d["_source"], ensure_ascii=False).encode()) for d in documents)
    cpu0 = node_cpu_seconds(pid)
    wall = _bulk(client, index, documents)
    client.indices.refresh(index=index)
    cpu_index = node_cpu_seconds(pid) - cpu0
    client.indices.flush(index=index)
    flushed = _store_bytes(client, index)
    cpu1 = node_cpu_seconds(pid)
    client.indices.forcemerge(index=index, max_num_segments=1, request_timeout=1800)
    merge_cpu = node_cpu_seconds(pid) - cpu1
    # the segments the merge replaced stay on disk until a refresh lets go of the readers that hold them
    client.indices.refresh(index=index)
    client.indices.flush(index=index)
    merged = _store_bytes(client, index)
    n = len(documents)
    return {
        "analysis": tier,
        "documents": n,
        "cpu_ms_per_doc": round(cpu_index / n * 1000, 2),
        "force_merge_cpu_ms_per_doc": round(merge_cpu / n * 1000, 2),
        "docs_per_second": round(n / wall, 1),
        "docs_per_node_cpu_second": round(n / max(cpu_index, 1e-9), 1),
        "node_cpu_share_of_wall": round(cpu_index / wall, 2),
        "sent_bytes_per_doc": round(sent / n),
        "disk_bytes_per_doc": round(flushed / n),
        "disk_bytes_per_doc_merged": round(merged / n),
        "disk_bytes_per_sent_byte": round(flushed / sent, 3),
        "disk_bytes_per_sent_byte_merged": round(merged / sent, 3),
    }


def bench_corpus_sources(docs: int) -> list[dict[str, Any]]:
    """``make bench``'s corpus (bench.corpus: PDF, Word, Excel, PowerPoint, text), extracted and written as
    the indexer writes it: the documents ``docindex plan``'s cluster CPU per document was measured on."""
    from bench import corpus as corpus_module
    from docindex.core.changes import Action, ObjectChange, doc_id
    from docindex.core.storage import FetchedObject
    from docindex.extract import ExtractionLimits, extract
    from docindex.index.documents import IndexDocument, file_name_parts

    built = corpus_module.build(REPO / "bench" / "corpus", docs, large=0, scans=0, log=lambda _: None)
    limits = ExtractionLimits()
    out = []
    for doc, data in built.load():
        change = ObjectChange(
            bucket="bench", key=doc.key, action=Action.CREATED, event_time="2026-12-01T00:00:00.000Z", size=len(data)
        )
        fetched = FetchedObject(change.bucket, change.key, len(data), None, None, None, data)
        extracted = extract(data, file_name_parts(doc.key)[0], limits)
        out.append(
            {"_id": doc_id("bench", doc.key), "_source": IndexDocument.extracted(change, fetched, extracted).source()}
        )
    return out


def emulator_cost(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """osmem-server's CPU and store for the same documents, 100 per ``_bulk`` (how docs/performance.md measured
    the 74 ms the plan assumed): the before of the move to the real engine."""
    from opensearchpy import OpenSearch
    from osmem_server import OsmemServer

    from docindex.index.mapping import create_index

    with OsmemServer.start(japanese=True) as server:
        client = OpenSearch(hosts=[server.url], timeout=600)
        tier = create_index(client, "office-v1", alias="office")
        sent = sum(len(json.dumps(d["_source"], ensure_ascii=False).encode()) for d in documents)
        cpu0 = node_cpu_seconds(server.pid)
        wall = _bulk(client, "office", documents, clients=1, chunk=100)
        client.indices.refresh(index="office")
        cpu = node_cpu_seconds(server.pid) - cpu0
        stored = _store_bytes(client, "office")
    n = len(documents)
    return {
        "analysis": tier,
        "documents": n,
        "cpu_ms_per_doc": round(cpu / n * 1000, 2),
        "docs_per_second": round(n / wall, 1),
        "sent_bytes_per_doc": round(sent / n),
        "store_bytes_per_doc": round(stored / n),
    }


def scale_documents(count: int, *, seed: int = 7) -> Iterator[dict[str, Any]]:
    """``count`` generated documents (``bench.search_latency.name_document``), each with one passage's vector."""
    import numpy as np

    from bench.search_latency import name_document
    from docindex.index.names import name_order

    rng = np.random.default_rng(seed)
    batch = 1000
    for first in range(0, count, batch):
        # random unit vectors a thousand at a time (numpy: the 2 vCPUs are the node's, not the generator's)
        vectors = rng.standard_normal((min(batch, count - first), DIMENSION), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for n, vector in enumerate(vectors.round(6).tolist(), start=first):
            source = name_document(n)
            source["name_order"] = name_order(source["filename"])
            source["embedding_model"] = "multilingual-e5-small-q4"
            text = source["content"]
            source["passages"] = [{"text": text[:120], "start": 0, "end": min(len(text), 120), "vector": vector}]
            yield {"_id": f"doc-{n}", "_source": source}


def _load_scale(client: Any, index: str, count: int, vectors: Any, ef_construction: int) -> dict[str, Any]:
    from unittest import mock

    from opensearchpy import helpers

    from docindex.index import encodings
    from docindex.index.mapping import create_index

    # The graph's build effort alone may differ from the mapping's (docindex.index.encodings.EF_CONSTRUCTION):
    # Lucene 9.12 on Java 17 compares vectors without SIMD (Panama's vector API needs Java 21), and random
    # 384-dimension vectors are HNSW's worst case - a million at 128 take hours of this machine's 2 vCPUs.
    # m, the dimension, the encoding and every search parameter stay the mapping's.
    with mock.patch.object(encodings, "EF_CONSTRUCTION", ef_construction):
        create_index(client, f"{index}-v1", alias=index, vectors=vectors)
    started = time.monotonic()
    actions = ({"_index": index, **d} for d in scale_documents(count))
    for ok, item in helpers.parallel_bulk(client, actions, thread_count=2, chunk_size=1000, request_timeout=600):
        if not ok:
            raise RuntimeError(f"a document was refused: {item}")
    client.indices.refresh(index=index)
    seconds = time.monotonic() - started
    client.indices.flush(index=index)
    return {
        "documents": count,
        "ef_construction": ef_construction,
        "load_seconds": round(seconds, 1),
        "docs_per_second": round(count / seconds, 1),
        "disk_bytes_per_doc": round(_store_bytes(client, index) / count),
    }


SCALE_ROWS = {
    "keyword": ({}, "queries"),
    "hybrid": ({"EMBEDDINGS": "local"}, "queries"),
    "name": ({}, "names"),
    "answer": ({"EMBEDDINGS": "local", "ANSWERS": "extractive"}, "questions"),
}


def search_at_scale(url: str, index: str, repeat: int) -> dict[str, Any]:
    """The four rows through the search function, interleaved (``bench.search_latency.interleaved``)."""
    from bench.search_latency import NAME_QUERIES, QUERIES, QUESTIONS, Worker, function_environment, interleaved

    asked = {"queries": QUERIES, "names": NAME_QUERIES, "questions": QUESTIONS}
    params: dict[str, dict[str, str]] = {
        "keyword": {},
        "hybrid": {},
        "name": {"scope": "name"},
        "answer": {"route": "/answer"},
    }
    workers: dict[str, Any] = {}
    try:
        for name, (extra, _) in SCALE_ROWS.items():
            # answers not kept (ANSWER_CACHE_SECONDS=0): each one retrieved and chosen again
            environment = function_environment(url, index, VECTOR_ENCODING="fp32", ANSWER_CACHE_SECONDS="0", **extra)
            workers[name] = Worker(REPO, environment)
        return interleaved(
            {name: (worker, params[name]) for name, worker in workers.items()},
            repeat,
            queries={name: asked[kind] for name, (_, kind) in SCALE_ROWS.items()},
            groups=(SCALE_GROUP,),
        )
    finally:
        for worker in workers.values():
            worker.close()


def _indexing_figures(
    figures: dict[str, Any], client: Any, pid: int, *, bench_docs: int, office_docs: int, spec: Any
) -> None:
    """Part 1: make bench's corpus on both engines, the office corpus without and with vectors."""
    files = bench_corpus_sources(bench_docs)
    figures["bench_corpus"] = {
        "opensearch": indexing_cost(client, pid, files, "bench-files", vectors=None),
        "osmem": emulator_cost(files),
    }
    figures["indexing"] = {
        "without_vectors": indexing_cost(
            client, pid, _office_sources(office_docs, vectors=False), "office-text", vectors=None
        ),
        "with_vectors": indexing_cost(
            client, pid, _office_sources(office_docs, vectors=True), "office-vectors", vectors=spec
        ),
    }


def measure(
    office_docs: int,
    scales: list[int],
    repeat: int,
    heap_mb: int,
    bench_docs: int = 300,
    *,
    ef_construction: int = 128,
    save: Any = None,
    costs: bool = True,
) -> dict[str, Any]:
    """Every figure (see the module's docstring); ``save(figures)`` after each part, so a long run keeps
    what it measured before it is stopped."""
    from opensearchpy import OpenSearch

    from devkit.opensearch.engine import NodeEngine
    from docindex.embed import VectorSpec

    save = save or (lambda _: None)
    os.environ["DOCINDEX_OPENSEARCH_HEAP_MB"] = str(heap_mb)
    spec = VectorSpec("multilingual-e5-small-q4", DIMENSION, encoding=NodeEngine.vector_encoding)
    figures: dict[str, Any] = {"heap_mb": heap_mb, "cpus": os.cpu_count(), "load_average_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as scratch:
        node = NodeEngine.start(Path(scratch))
        try:
            client = OpenSearch(hosts=[node.url], timeout=600)
            assert node.pid is not None
            if costs:
                _indexing_figures(figures, client, node.pid, bench_docs=bench_docs, office_docs=office_docs, spec=spec)
                save(figures)
            figures["scale"] = {}
            for count in scales:
                index = f"scale-{count}"
                loaded = _load_scale(client, index, count, spec, ef_construction)
                loaded["load_average"] = os.getloadavg()
                loaded["search"] = search_at_scale(node.url, index, repeat)
                figures["scale"][str(count)] = loaded
                save(figures)
                client.indices.delete(index=f"{index}-v1")
        finally:
            node.close()
    figures["load_average_end"] = os.getloadavg()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.engine_cost", description=__doc__)
    parser.add_argument("--office-docs", type=int, default=2000)
    parser.add_argument("--bench-docs", type=int, default=300, help="make bench's corpus, on both engines")
    parser.add_argument("--scale", default="100000", help="comma-separated document counts (e.g. 100000,1000000)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--heap-mb", type=int, default=2048)
    parser.add_argument(
        "--scale-ef-construction",
        type=int,
        default=128,
        help="the scale indexes' HNSW build effort (the mapping's 128; lower loads a million faster on Java 17)",
    )
    parser.add_argument("--skip-costs", action="store_true", help="only the search at scale")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    scales = [int(x) for x in args.scale.split(",") if x.strip()]
    figures = measure(
        args.office_docs,
        scales,
        args.repeat,
        args.heap_mb,
        args.bench_docs,
        ef_construction=args.scale_ef_construction,
        save=lambda found: save_section(args.results, "engine_cost", found),
        costs=not args.skip_costs,
    )
    save_section(args.results, "engine_cost", figures)
    print(json.dumps(figures, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
