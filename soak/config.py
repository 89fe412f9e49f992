"""What a soak run is given and works on, shared by the run (``run.py``) and its drills (``drills.py``).

Its own module so that the drills need nothing of the run but what they are handed: the run starts
the drills, and the drills never import the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devkit.faults import OpenSearchFaultRates, S3FaultRates
from soak.delivery import DeliveryFaults

KiB = 1024
# The disaster drills (soak/drills.py, each a method of its Drills), in the order a run takes them.
DRILLS = ("idempotency_lost", "snapshot_restored", "ledger_restored", "index_deleted")


@dataclass
class SoakConfig:
    """Everything a run depends on; the same config and seed replay the same workload and fault odds."""

    seed: int = 1
    documents: int = 2000
    storm_ratio: float = 0.75  # storm operations per initial document
    function_timeout: int = 4
    visibility_timeout: int = 0  # 0: six times the function timeout, as the template sets it
    max_receive_count: int = 5
    lambdas: int = 2  # concurrent invocations of the event source mapping
    batch_size: int = 10
    record_concurrency: int = 8
    kill_probability: float = 0.03  # of an invocation being killed after its first accepted write
    worker_kill_probability: float = 0.25  # of an OCR job's worker (or pool process) dying mid-job
    worker_concurrency: int = 2
    max_object_bytes: int = 256 * KiB
    opensearch: OpenSearchFaultRates = field(default_factory=OpenSearchFaultRates)
    s3: S3FaultRates = field(default_factory=S3FaultRates)
    delivery: DeliveryFaults = field(default_factory=DeliveryFaults)
    backfill: bool = True
    reconcile_fix: bool = True  # `docindex reconcile --fix` at three quarters of the storm
    poison: bool = True  # poison messages on both queues (each needs maxReceiveCount receives, twice)
    resync: bool = True  # the re-sync phase (unchanged re-uploads, copies, renames), judged
    # The commit of the release the pipeline starts on; replaced by the current code during the load
    # (a rolling upgrade: both consume the queues between a third and two thirds of it). None: current only.
    previous_release: str | None = None
    worker_range_pages: int | None = None  # WORKER_RANGE_PAGES of every worker (None: its default)
    # The disaster drills after the other phases, in this order (soak/drills.py); () skips them.
    drills: tuple[str, ...] = DRILLS
    drill_share: float = 0.025  # of the documents changed during a drill, and re-announced in the first
    # ("duplicates",): prove the judge catches duplicate writes; several break several guards in one run.
    sabotage: tuple[str, ...] = ()
    state_dir: Path = Path(".docindex/soak")
    drain_timeout: float = 1200.0
    # OpenSearch forgets a delete's version after index.gc_deletes (60 s on a domain); short here, and
    # some document writes held longer than that between their claim and their write: a create
    # overtaken by its delete must still not come back (the ledger check before every write).
    gc_deletes_seconds: float = 1.0
    write_delay_probability: float = 0.03
    write_delay_seconds: tuple[float, float] = (1.2, 2.2)
    storm_weights: dict[str, int] = field(default_factory=dict)  # odds replacing Workload.STORM's
    kind_weights: dict[str, int] = field(default_factory=dict)  # odds replacing workload.KINDS' weights
    resync_share: float = 0.025  # of the documents, re-uploaded, copied and renamed each in the last phase

    @property
    def resync_objects(self) -> int:
        return max(2, round(self.documents * self.resync_share))

    @property
    def ingest_visibility(self) -> int:
        return self.visibility_timeout or 6 * self.function_timeout

    @property
    def storm_operations(self) -> int:
        return round(self.documents * self.storm_ratio)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "documents": self.documents,
            "storm_operations": self.storm_operations,
            "function_timeout_s": self.function_timeout,
            "ingest_visibility_timeout_s": self.ingest_visibility,
            "max_receive_count": self.max_receive_count,
            "lambdas": self.lambdas,
            "batch_size": self.batch_size,
            "record_concurrency": self.record_concurrency,
            "kill_probability": self.kill_probability,
            "worker_kill_probability": self.worker_kill_probability,
            "worker_concurrency": self.worker_concurrency,
            "max_object_bytes": self.max_object_bytes,
            "opensearch_faults": dict(self.opensearch.__dict__),
            "s3_faults": dict(self.s3.__dict__),
            "delivery_faults": dict(self.delivery.__dict__),
            "backfill": self.backfill,
            "reconcile_fix": self.reconcile_fix,
            "poison": self.poison,
            "sabotage": list(self.sabotage),
            "resync_objects": self.resync_objects,
            "previous_release": self.previous_release,
            "worker_range_pages": self.worker_range_pages,
            "drills": list(self.drills),
            "drill_share": self.drill_share,
            "gc_deletes_s": self.gc_deletes_seconds,
            "write_delay_probability": self.write_delay_probability,
            "write_delay_s": list(self.write_delay_seconds),
            "storm_weights": self.storm_weights,
            "kind_weights": self.kind_weights,
        }


class SoakError(RuntimeError):
    """The run could not finish (a queue never drained, a component died)."""


@dataclass
class Stack:
    env: dict[str, str]
    s3: Any
    sqs: Any
    dynamodb: Any

    @property
    def moto(self) -> str:
        return self.env["AWS_ENDPOINT_URL"]

    @property
    def opensearch(self) -> str:
        return self.env["OPENSEARCH_ENDPOINT"]
