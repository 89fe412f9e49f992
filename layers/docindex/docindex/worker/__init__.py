"""The OCR worker: long OCR and large-file jobs from the OCR queue, on ECS (``python -m docindex.worker``).

- ``config``: the worker's settings (environment variables).
- ``leases``: heartbeats that keep a running job's message invisible.
- ``pool``: the process pool the CPU-bound work runs in.
- ``job``: one job, from S3 object to indexed document, applied at most once.
- ``service``: receive / dispatch / delete and graceful shutdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docindex.worker.config import WorkerSettings
    from docindex.worker.service import Worker


def build_worker(settings: WorkerSettings | None = None, *, flush_metrics: bool = True) -> Worker:
    """A worker with clients for ``settings`` (default: from the environment)."""
    from docindex.core.clients import Clients
    from docindex.worker.config import WorkerSettings
    from docindex.worker.service import Worker

    settings = settings or WorkerSettings.from_env()
    clients = Clients(settings.common)
    return Worker(
        settings,
        s3=clients.s3,
        sqs=clients.sqs,
        dynamodb=clients.dynamodb,
        opensearch=clients.opensearch,
        flush_metrics=flush_metrics,
        # Only meaning search with EMBEDDINGS=bedrock calls it.
        bedrock=clients.bedrock_runtime if settings.common.embeddings == "bedrock" else None,
    )


def build_local_worker() -> Worker:
    """The worker for ``docindex local run`` (the env file is already in ``os.environ``).

    Metrics are not printed by the worker there: the local runner collects
    them from the indexer's invocations, which flush the process-wide set.
    """
    return build_worker(flush_metrics=False)


__all__ = ["build_local_worker", "build_worker"]
