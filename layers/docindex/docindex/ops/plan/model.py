"""The plan: index size, k-NN memory, a domain, the fleets, hours and dollars, from a census and a sample.

Every number the plan uses that is not counted from the bucket is an :class:`Assumption` with its
source, printed with the plan and overridable (``--assume NAME=VALUE``). The throughput figures are
what ``make bench`` measures on its machine (docs/performance.md); prices are on-demand list prices
of us-east-1 at the time of writing (check yours, and override). The domain follows AWS's published
sizing rules ("Sizing Amazon OpenSearch Service domains", docs.aws.amazon.com/opensearch-service/
latest/developerguide/sizing-domains.html and bp-storage.html):

- storage = source data x (1 + replicas) / (1 - 0.05 Linux reserved) / (1 - 0.2 service overhead),
  i.e. x 1.32 per copy, where the source data is what Lucene keeps on disk: the documents' JSON times
  ``index_bytes_per_sent_byte`` (measured on a real OpenSearch node: ``bench.engine_cost``; AWS's rule
  of thumb for it is x 1.1) plus the vectors in their encoding;
- primary shards of 10-30 GiB for a search workload (``shard_gib``);
- at least three data nodes in three Availability Zones, in a multiple of three, and three dedicated
  master nodes for a production domain;
- k-NN: every vector of every copy (primary and replicas) in memory — the HNSW graph and the vectors
  it compares, ``1.1 x (bytes per vector + 8 x m)`` each (OpenSearch's "Memory estimation",
  docs.opensearch.org, k-NN vector quantization) — within half the memory outside the JVM heap
  (the k-NN circuit breaker's default ``knn.memory.circuit_breaker.limit`` 50 %), the heap being half
  the node's memory up to 32 GiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from docindex.ops.plan.census import Census
from docindex.ops.plan.sample import SampleRun

GIB = 1024**3
HOURS_PER_MONTH = 730
# What a real OpenSearch node spends on make bench's corpus (python -m bench.engine_cost, 2026-12-02: 2.19.1,
# the icu+kuromoji tier, docs/performance.md#the-real-engine, on a quiet 2-vCPU machine): the node's CPU per MB
# of document JSON for _bulk and refresh (78 ms per 198 KB document) plus the merges (16 ms), per passage's
# vector (Lucene's HNSW on Java 17, without SIMD: 2,000 office texts with and without one vector each, 4.6 ms),
# and Lucene's bytes per JSON byte after a flush (1.00; 1.09 on short office texts, whose fixed fields weigh
# more). The same bench under a load average of 2.5-9 read 0.77 s per MB and 5.2 ms per vector.
CLUSTER_CPU_SECONDS_PER_SENT_MB = 0.47
CLUSTER_CPU_SECONDS_PER_PASSAGE = 0.0046
INDEX_BYTES_PER_SENT_BYTE = 1.0


@dataclass
class Assumption:
    value: float
    unit: str
    source: str
    overridden: bool = False


def default_assumptions() -> dict[str, Assumption]:
    """Every assumption, by name (``--assume NAME=VALUE``)."""
    from docindex.index.encodings import DEFAULT_ENCODING, ENCODINGS

    chosen = ENCODINGS[DEFAULT_ENCODING]
    perf = "docs/performance.md (make bench)"
    engine = "docs/performance.md (bench.engine_cost, OpenSearch 2.19.1 icu+kuromoji)"
    price = "us-east-1 list price"
    return {
        # the pipeline's throughput (make bench)
        "indexer_docs_per_second": Assumption(24.2, "docs/s per Lambda instance", f"{perf}: latency-faithful"),
        # PP-OCR (the default engine): 1.74 x Tesseract's 1.14 s on a dense upright A4 page
        "ocr_seconds_per_page": Assumption(1.98, "s of one vCPU per scanned page", f"{perf}: OCR engines, PP-OCR"),
        "embed_seconds_per_passage": Assumption(0.090, "s of one vCPU per passage", "docs/meaning-search.md"),
        "cluster_cpu_seconds_per_sent_mb": Assumption(
            CLUSTER_CPU_SECONDS_PER_SENT_MB,
            "s of a data-node vCPU per MB of document JSON",
            f"{engine}: the node's CPU for _bulk, refreshes and merges (osmem: 1.05 in the same run)",
        ),
        "cluster_cpu_seconds_per_passage": Assumption(
            CLUSTER_CPU_SECONDS_PER_PASSAGE,
            "s of a data-node vCPU per vector",
            f"{engine}: Lucene HNSW on Java 17 (no SIMD; AOS's faiss is faster)",
        ),
        "cluster_cpu_share": Assumption(0.5, "of data-node vCPUs for indexing", "headroom for searches and merges"),
        "scan_chars_per_page": Assumption(770, "characters OCR reads per scanned A4 page", "docs/performance.md"),
        # the pipeline's settings (template.yaml defaults)
        "lambda_memory_mb": Assumption(1536, "MB", "template.yaml IndexerMemorySize"),
        "lambda_max_concurrency": Assumption(100, "instances at most", "template.yaml IndexerMaxConcurrency can go to"),
        "worker_vcpus": Assumption(2, "vCPU per OCR task", "template.yaml WorkerCpu 2048"),
        "worker_max_tasks": Assumption(100, "tasks", "template.yaml WorkerMaxTasks"),
        "embeddings_local": Assumption(1, "1 = multilingual-e5-small on the worker, 0 = Bedrock", "EMBEDDINGS"),
        "embeddings_off": Assumption(0, "1 = no meaning search", "EMBEDDINGS=off"),
        "max_passages": Assumption(16, "passages per file", "EMBED_MAX_PASSAGES"),
        "passage_chars": Assumption(400, "characters per passage", "EMBED_PASSAGE_CHARS"),
        # the index
        "replicas": Assumption(1, "replica per primary", "AWS: at least one"),
        "shard_gib": Assumption(30, "GiB per primary shard", "AWS: 10-30 GiB for search workloads"),
        "index_bytes_per_sent_byte": Assumption(
            INDEX_BYTES_PER_SENT_BYTE, "bytes on disk per byte of document JSON sent", f"{engine}: after a flush"
        ),
        "storage_factor": Assumption(1 / 0.95 / 0.8, "x source data per copy", "AWS sizing: / 0.95 / 0.8"),
        "vector_dimension": Assumption(384, "dimensions", "multilingual-e5-small (Bedrock: 1024)"),
        "hnsw_m": Assumption(16, "links per vector", "docindex/index/mapping.py"),
        "vector_bytes": Assumption(
            384 * chosen.bits / 8,
            "bytes per vector the graph compares (in memory)",
            f"VECTOR_ENCODING {chosen.name} (docs/meaning-search.md)",
        ),
        "vector_disk_bytes": Assumption(
            round(chosen.disk_bytes(384)), "bytes per vector on disk, links included", f"{chosen.name}, stored once"
        ),
        "knn_memory_share": Assumption(0.5, "of the memory outside the JVM heap", "k-NN circuit breaker default"),
        # prices
        "price_lambda_gb_second": Assumption(0.0000133334, "$ per GB-s", f"{price}, Lambda arm64"),
        "price_lambda_million_requests": Assumption(0.20, "$", price),
        "price_fargate_task_hour": Assumption(0.079, "$ per 2 vCPU / 4 GB task-hour", f"{price}, Fargate ARM"),
        "price_bedrock_million_tokens": Assumption(0.02, "$", f"{price}, Titan Text Embeddings v2"),
        "tokens_per_passage": Assumption(400, "tokens", "docs/meaning-search.md"),
        "price_sqs_million_requests": Assumption(0.40, "$", price),
        "sqs_requests_per_file": Assumption(1.8, "requests", "docs/performance.md capacity table"),
        "price_dynamodb_million_writes": Assumption(0.625, "$ per million WRU", price),
        "dynamodb_writes_per_file": Assumption(3.3, "WRU", "docs/performance.md capacity table"),
        "price_s3_thousand_gets": Assumption(0.0004, "$", price),
        "price_s3_thousand_puts": Assumption(0.005, "$ (content cache entries)", price),
        "price_s3_gb_month": Assumption(0.023, "$", f"{price}, S3 Standard"),
        "cache_bytes_per_sent_byte": Assumption(0.15, "gzip'd cache entry per index byte", "content cache (gzip)"),
        "log_bytes_per_file": Assumption(624, "bytes", "docs/performance.md"),
        "price_logs_gb": Assumption(0.50, "$ per GB ingested", price),
        "price_ebs_gb_month": Assumption(0.122, "$ per GB-month gp3", f"{price}, OpenSearch Service"),
        "price_dynamodb_gb_month": Assumption(0.25, "$", price),
        "ledger_bytes_per_file": Assumption(500, "bytes", "docs/operations.md"),
        # answers (GET /answer; docs/search-api.md#answers)
        "answer_function_ms": Assumption(250, "ms of the search function per answer", "bench.answers (1,024 MB)"),
        "answer_input_tokens": Assumption(2600, "tokens per Bedrock answer", "bench.answers: 6 passages + prompt"),
        "answer_output_tokens": Assumption(120, "tokens per Bedrock answer", "bench.answers"),
        "price_answer_input_million_tokens": Assumption(0.80, "$", f"{price}, Claude 3.5 Haiku input"),
        "price_answer_output_million_tokens": Assumption(4.00, "$", f"{price}, Claude 3.5 Haiku output"),
    }


# Data-node instance types (OpenSearch Service, us-east-1 on-demand, Graviton): vCPU, memory GiB,
# the largest EBS volume per node (GiB, AWS's EBS volume size quotas), $ per hour.
INSTANCE_TYPES: dict[str, tuple[int, int, int, float]] = {
    "m6g.large.search": (2, 8, 512, 0.128),
    "r6g.large.search": (2, 16, 1024, 0.167),
    "m6g.xlarge.search": (4, 16, 1024, 0.256),
    "r6g.xlarge.search": (4, 32, 1536, 0.335),
    "m6g.2xlarge.search": (8, 32, 1536, 0.511),
    "r6g.2xlarge.search": (8, 64, 3072, 0.670),
    "m6g.4xlarge.search": (16, 64, 3072, 1.022),
    "r6g.4xlarge.search": (16, 128, 6144, 1.340),
    "r6g.8xlarge.search": (32, 256, 7680, 2.679),
}
MASTER_TYPE = ("m6g.large.search", 0.128)


@dataclass
class KindFigures:
    """Per-file figures of one kind (from the sample, else defaults), and the kind's totals."""

    files: int
    bytes: int
    pages: float
    scanned_pages: float
    passages: float
    sent_bytes: float
    measured: int  # sampled files that were measured for this kind
    source: str


# Figures per file when a kind has no measured sample: (pages, scanned pages, passages, sent bytes).
KIND_DEFAULTS: dict[str, tuple[float, float, float, float]] = {
    "pdf": (8, 2.4, 12, 60_000),
    "word": (3, 0, 9, 40_000),
    "excel": (2, 0, 10, 120_000),
    "powerpoint": (15, 0, 10, 35_000),
    "text": (1, 0, 8, 30_000),
    "image": (1, 1, 2, 7_500),
    "mail": (2, 0, 3, 12_000),
    "archive": (2, 0, 8, 40_000),
    "other": (1, 0, 0, 600),
}


def figures_by_kind(
    census: Census,
    run: SampleRun | None,
    assumptions: dict[str, Assumption],
    known: dict[str, dict[str, Any]] | None = None,
    known_source: str = "",
) -> dict[str, KindFigures]:
    """Per kind, per-stratum means of the measured sample weighted by each stratum's count.

    A kind without a measured sample takes its per-file figures from ``known`` (the ``kinds`` of an
    earlier plan's JSON, e.g. of a representative prefix: ``--kind-figures``), else the defaults.
    """
    scan_chars = assumptions["scan_chars_per_page"].value
    measured_by_key = {m.key: m for m in (run.measured if run else [])}
    # bytes sent per character of OCR'd text: from the measured text files, else ~9 (content, a page,
    # spelling variants: three copies of 3-byte UTF-8)
    text_docs = [m for m in measured_by_key.values() if m.chars and not m.scanned_pages]
    per_char = (sum(m.sent_bytes for m in text_docs) / sum(m.chars for m in text_docs)) if text_docs else 9.0
    kinds: dict[str, KindFigures] = {}
    for kind in sorted({s.kind for s in census.strata.values()}):
        strata = [s for s in census.strata.values() if s.kind == kind]
        files = sum(s.count for s in strata)
        total_bytes = sum(s.bytes for s in strata)
        sums = [0.0, 0.0, 0.0, 0.0]
        covered = 0
        measured = 0
        kind_samples = [measured_by_key[k] for s in strata for k, _ in s.sample if k in measured_by_key]
        for stratum in strata:
            samples = [measured_by_key[k] for k, _ in stratum.sample if k in measured_by_key]
            if not samples:
                samples = kind_samples  # a stratum without a sample: the kind's other strata
            if not samples:
                continue
            measured += sum(1 for k, _ in stratum.sample if k in measured_by_key)
            covered += stratum.count
            n = len(samples)
            means = (
                sum(m.pages for m in samples) / n,
                sum(m.scanned_pages for m in samples) / n,
                sum(m.passages for m in samples) / n,
                sum(m.sent_bytes + m.scanned_pages * scan_chars * per_char for m in samples) / n,
            )
            for i, mean in enumerate(means):
                sums[i] += mean * stratum.count
        if covered:
            pages, scanned, passages, sent = (v / covered for v in sums)
            source = f"{measured} sampled"
        elif known and kind in known:
            entry = known[kind]
            pages, scanned, passages, sent = (
                float(entry[name]) for name in ("pages", "scanned_pages", "passages", "sent_bytes")
            )
            source = f"per file from {known_source}"
        else:
            pages, scanned, passages, sent = KIND_DEFAULTS.get(kind, KIND_DEFAULTS["other"])
            source = "default (no sample)"
        kinds[kind] = KindFigures(files, total_bytes, pages, scanned, passages, sent, measured, source)
    return kinds


@dataclass
class Plan:
    figures: dict[str, Any] = field(default_factory=dict)
    domain: dict[str, Any] = field(default_factory=dict)
    fleet: dict[str, Any] = field(default_factory=dict)
    hours: dict[str, float] = field(default_factory=dict)
    once: dict[str, float] = field(default_factory=dict)
    monthly: dict[str, float] = field(default_factory=dict)
    # Dollars per 1,000 answers (ANSWERS=extractive: the function's time; bedrock: and the model's tokens).
    answers: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def knn_bytes_per_vector(assumptions: dict[str, Assumption]) -> float:
    """OpenSearch's estimate for HNSW: 1.1 x (vector bytes + 8 x m) per vector."""
    return 1.1 * (assumptions["vector_bytes"].value + 8 * assumptions["hnsw_m"].value)


def make_plan(kinds: dict[str, KindFigures], assumptions: dict[str, Assumption]) -> Plan:
    a = {name: item.value for name, item in assumptions.items()}
    plan = Plan()
    files = sum(k.files for k in kinds.values())
    total_bytes = sum(k.bytes for k in kinds.values())
    pages = sum(k.files * k.pages for k in kinds.values())
    scanned = sum(k.files * k.scanned_pages for k in kinds.values())
    meaning = not a["embeddings_off"]
    passages = sum(k.files * k.passages for k in kinds.values()) if meaning else 0.0
    sent = sum(k.files * k.sent_bytes for k in kinds.values())
    replicas = int(a["replicas"])
    copies = 1 + replicas
    # What the cluster stores per copy: the documents as Lucene keeps them (vectors out of _source:
    # docs/meaning-search.md) plus the vectors once, in their encoding.
    documents_disk = sent * a["index_bytes_per_sent_byte"]
    source_bytes = documents_disk + passages * a["vector_disk_bytes"]
    storage = source_bytes * copies * a["storage_factor"]
    knn = passages * knn_bytes_per_vector(assumptions) * copies
    plan.figures = {
        "files": files,
        "bytes": total_bytes,
        "pages": round(pages),
        "scanned_pages": round(scanned),
        "passages": round(passages),
        "index_documents_bytes": round(sent),
        "index_documents_disk_bytes": round(documents_disk),
        "vectors_bytes": round(passages * a["vector_disk_bytes"]),
        "source_data_bytes": round(source_bytes),
        "storage_bytes_with_replicas": round(storage),
        "knn_memory_bytes_with_replicas": round(knn),
    }
    # -- the domain: the cheapest type whose count covers storage, k-NN memory and indexing CPU
    options: list[tuple[float, str, int, dict[str, float]]] = []
    for name, (vcpu, memory, ebs, hourly) in INSTANCE_TYPES.items():
        heap = min(memory / 2, 32)
        knn_per_node = (memory - heap) * a["knn_memory_share"] * GIB
        # AWS's starting point: 2 vCPU and 8 GiB of memory per 100 GiB of storage
        storage_gib = storage / GIB
        needs = {
            "storage": storage / (ebs * GIB),
            "k-NN memory": knn / knn_per_node if knn else 0.0,
            "memory per storage": storage_gib / 100 * 8 / memory,
            "vCPU per storage": storage_gib / 100 * 2 / vcpu,
        }
        count = max(3, math.ceil(max(needs.values())))
        count = 3 * math.ceil(count / 3)
        volume = max(10, math.ceil(storage / GIB / count * 1.1))  # per node, 10 % room
        monthly = count * hourly * HOURS_PER_MONTH + count * volume * a["price_ebs_gb_month"]
        options.append((monthly, name, count, {"volume_gib": volume, **needs}))
    # The cheapest, or a type with fewer nodes that costs at most 10 % more (fewer shards to spread).
    cheapest = min(option[0] for option in options)
    _, instance, count, detail = min((o for o in options if o[0] <= cheapest * 1.1), key=lambda o: (o[2], o[0]))
    vcpu, memory, _, hourly = INSTANCE_TYPES[instance]
    # Shards of at most shard_gib, and at least one copy per node (a node without a shard holds no graph).
    primaries = max(1, math.ceil(source_bytes / (a["shard_gib"] * GIB)), math.ceil(count / copies))
    plan.domain = {
        "data_nodes": count,
        "instance_type": instance,
        "vcpu_per_node": vcpu,
        "memory_gib_per_node": memory,
        "ebs_gib_per_node": detail["volume_gib"],
        "dedicated_masters": f"3 x {MASTER_TYPE[0]}",
        "primary_shards": primaries,
        "replicas": replicas,
        "bound_by": max(("storage", "k-NN memory", "memory per storage", "vCPU per storage"), key=detail.__getitem__),
        "availability_zones": 3,
    }
    # -- the fleets and hours
    # The node's CPU per file: its JSON (analysis grows with the text) and its vectors' graph insertions.
    cpu_per_file = (
        sent / 1e6 * a["cluster_cpu_seconds_per_sent_mb"] + passages * a["cluster_cpu_seconds_per_passage"]
    ) / max(files, 1)
    cluster_docs_per_second = count * vcpu * a["cluster_cpu_share"] / cpu_per_file if cpu_per_file else 0.0
    concurrency = int(
        min(a["lambda_max_concurrency"], max(2, math.ceil(cluster_docs_per_second / a["indexer_docs_per_second"])))
    )
    indexer_rate = concurrency * a["indexer_docs_per_second"]
    worker_cpu_seconds = scanned * a["ocr_seconds_per_page"] + (
        passages * a["embed_seconds_per_passage"] if a["embeddings_local"] else 0.0
    )
    tasks = int(a["worker_max_tasks"])
    plan.fleet = {
        "indexer_max_concurrency": concurrency,
        "indexer_docs_per_second": round(indexer_rate, 1),
        "cluster_docs_per_second": round(cluster_docs_per_second, 1),
        "worker_max_tasks": tasks,
        "worker_vcpus": int(a["worker_vcpus"]),
    }
    plan.hours = {
        "indexers": files / indexer_rate / 3600 if indexer_rate else 0.0,
        "cluster": files / cluster_docs_per_second / 3600 if cluster_docs_per_second else 0.0,
        "ocr_and_embedding_workers": worker_cpu_seconds / (tasks * a["worker_vcpus"]) / 3600,
    }
    plan.hours["backfill"] = max(plan.hours.values())
    # -- dollars once
    gb_seconds = files / a["indexer_docs_per_second"] * a["lambda_memory_mb"] / 1024
    task_hours = worker_cpu_seconds / a["worker_vcpus"] / 3600
    plan.once = {
        "lambda": gb_seconds * a["price_lambda_gb_second"] + files / 100 / 1e6 * a["price_lambda_million_requests"],
        "fargate_ocr_and_embedding": task_hours * a["price_fargate_task_hour"],
        "bedrock": 0.0
        if a["embeddings_local"] or not meaning
        else passages * a["tokens_per_passage"] / 1e6 * a["price_bedrock_million_tokens"],
        "sqs": files * a["sqs_requests_per_file"] / 1e6 * a["price_sqs_million_requests"],
        "dynamodb": files * a["dynamodb_writes_per_file"] / 1e6 * a["price_dynamodb_million_writes"],
        "s3_requests": files / 1000 * (a["price_s3_thousand_gets"] + a["price_s3_thousand_puts"]),
        "logs": files * a["log_bytes_per_file"] / 1e9 * a["price_logs_gb"],
        "domain_during_backfill": plan.hours["backfill"] * (count * hourly + 3 * MASTER_TYPE[1]),
    }
    plan.once["total"] = sum(plan.once.values())
    # -- dollars per month
    plan.monthly = {
        "domain_data_nodes": count * hourly * HOURS_PER_MONTH,
        "domain_storage": count * detail["volume_gib"] * a["price_ebs_gb_month"],
        "domain_masters": 3 * MASTER_TYPE[1] * HOURS_PER_MONTH,
        "content_cache": sent * a["cache_bytes_per_sent_byte"] / 1e9 * a["price_s3_gb_month"],
        "ledger_table": files * a["ledger_bytes_per_file"] / 1e9 * a["price_dynamodb_gb_month"] * 2,  # with PITR
        "queues_idle": 0.3,
    }
    plan.monthly["total"] = sum(plan.monthly.values())
    plan.answers = answer_costs(a)
    if plan.hours["backfill"] == plan.hours["cluster"]:
        plan.notes.append(
            "the cluster bounds the backfill: more data nodes (or a larger type) while it runs, then scale back"
        )
    return plan


def answer_costs(a: dict[str, float]) -> dict[str, float]:
    """Dollars per 1,000 answers: the search function's time (1,024 MB) and one request to Lambda for each;
    with Bedrock, the model's input and output tokens at its list price too."""
    function = 1000 * (
        a["answer_function_ms"] / 1000 * 1.0 * a["price_lambda_gb_second"] + a["price_lambda_million_requests"] / 1e6
    )
    model = (
        1000
        * (
            a["answer_input_tokens"] * a["price_answer_input_million_tokens"]
            + a["answer_output_tokens"] * a["price_answer_output_million_tokens"]
        )
        / 1e6
    )
    return {"extractive": function, "bedrock": function + model, "bedrock_tokens_only": model}
