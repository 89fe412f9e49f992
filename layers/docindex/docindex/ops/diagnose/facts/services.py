"""Service facts: the OpenSearch index and cluster, and the OCR worker's ECS service."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from docindex.core.exceptions import Unsupported
from docindex.ops.diagnose.facts.reader import Reader
from docindex.ops.pause import PauseState


@dataclass(frozen=True)
class IndexFacts:
    """The index (or alias) as OpenSearch describes it: mappings and settings per concrete index."""

    endpoint: str | None
    index: str
    exists: bool
    mappings: Mapping[str, Any] = field(default_factory=dict)  # concrete index -> GET _mapping body
    # OpenSearch Serverless has neither index settings nor cluster health: None there.
    settings: Mapping[str, Any] | None = None  # concrete index -> GET _settings body
    health: Mapping[str, Any] | None = None
    count: int = 0


@dataclass(frozen=True)
class WorkerFacts:
    """The OCR worker's ECS service, its auto scaling bounds and the jobs waiting for it."""

    cluster: str
    service: str
    found: bool  # an ACTIVE service of that name exists
    desired: int = 0
    running: int = 0
    bounds: tuple[int, int] | None = None  # (min, max) tasks; None without a scalable target
    waiting: int = 0  # OCR queue depth
    paused: PauseState | None = None


def index_facts(reader: Reader) -> IndexFacts:
    """Whether the index exists, its mappings, analysis settings, the cluster's health and the count."""
    d = reader.deployment
    if reader.opensearch is None:
        raise Unsupported("no OpenSearch endpoint (--opensearch-endpoint, OPENSEARCH_ENDPOINT or --stack)")
    client = reader.opensearch
    index = d.opensearch_index
    if not client.indices.exists(index=index):
        return IndexFacts(d.opensearch_endpoint, index, exists=False)
    mappings = client.indices.get_mapping(index=index)
    settings = health = None
    if d.opensearch_service != "aoss":
        settings = client.indices.get_settings(index=index)
        health = client.cluster.health()
    count = client.count(index=index)["count"]
    return IndexFacts(d.opensearch_endpoint, index, True, mappings, settings, health, count)


def worker_facts(reader: Reader) -> WorkerFacts:
    """The worker service's desired and running tasks, its scaling bounds and the OCR queue's depth."""
    d = reader.deployment
    if d.is_local:
        raise Unsupported("no ECS locally: the OCR worker runs inside `docindex local run`")
    if not (d.ecs_cluster and d.ecs_service):
        raise Unsupported("needs the worker's cluster and service (--stack, or --cluster and --service)")
    services = reader.client("ecs").describe_services(cluster=d.ecs_cluster, services=[d.ecs_service])
    active = [s for s in services.get("services", []) if s.get("status") == "ACTIVE"]
    if not active:
        return WorkerFacts(d.ecs_cluster, d.ecs_service, found=False)
    service = active[0]
    targets = reader.client("application-autoscaling").describe_scalable_targets(
        ServiceNamespace="ecs",
        ResourceIds=[f"service/{d.ecs_cluster}/{d.ecs_service}"],
        ScalableDimension="ecs:service:DesiredCount",
    )["ScalableTargets"]
    return WorkerFacts(
        d.ecs_cluster,
        d.ecs_service,
        found=True,
        desired=int(service.get("desiredCount", 0)),
        running=int(service.get("runningCount", 0)),
        bounds=(int(targets[0]["MinCapacity"]), int(targets[0]["MaxCapacity"])) if targets else None,
        waiting=reader.depth(d.ocr_queue_url) if d.ocr_queue_url else 0,
        paused=reader.paused,
    )
