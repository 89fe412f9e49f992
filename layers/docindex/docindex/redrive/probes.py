"""What the redrive asks of the consumers before and while it starts: OpenSearch health, throughput."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from botocore.exceptions import BotoCoreError


@dataclass(frozen=True)
class HealthReport:
    healthy: bool
    detail: str


class ConsumerHealth(Protocol):
    def check(self) -> HealthReport: ...


class OpenSearchHealth:
    """Is OpenSearch able to take writes? Red or unreachable means no."""

    def __init__(self, client: Any, service: Literal["es", "aoss"] = "es", index: str = "documents") -> None:
        self._client = client
        self._service = service
        self._index = index

    def check(self) -> HealthReport:
        """One cluster health call (an index-exists call on Serverless), never an exception."""
        from opensearchpy.exceptions import OpenSearchException

        try:
            if self._service == "aoss":
                # Serverless collections have no cluster health API: an answer means reachable.
                self._client.indices.exists(index=self._index)
                return HealthReport(True, "OpenSearch Serverless is reachable")
            status = str(self._client.cluster.health().get("status", "unknown"))
        except (OpenSearchException, BotoCoreError, OSError) as exc:
            return HealthReport(False, f"OpenSearch is unreachable: {type(exc).__name__}: {exc}")
        if status in ("green", "yellow"):
            return HealthReport(True, f"OpenSearch cluster health is {status}")
        return HealthReport(False, f"OpenSearch cluster health is {status}")


class UnconfiguredHealth:
    """No OPENSEARCH_ENDPOINT: refuse rather than redrive blind."""

    def check(self) -> HealthReport:
        return HealthReport(False, "OPENSEARCH_ENDPOINT is not set, so consumer health is unknown")


class ThroughputProbe:
    """What a queue's consumer has proven it can take: CloudWatch ``NumberOfMessagesDeleted``.

    One ``GetMetricStatistics`` call per target queue (the action template.yaml's RedriveRole grants).
    """

    def __init__(self, cloudwatch: Any, window: timedelta, clock: Callable[[], datetime]) -> None:
        self._cloudwatch = cloudwatch
        self._window = window
        self._clock = clock

    def per_second(self, queue_name: str) -> float:
        """Messages deleted per second over the window (0.0 without data)."""
        end = self._clock()
        seconds = int(self._window.total_seconds())
        response = self._cloudwatch.get_metric_statistics(
            Namespace="AWS/SQS",
            MetricName="NumberOfMessagesDeleted",
            Dimensions=[{"Name": "QueueName", "Value": queue_name}],
            StartTime=end - self._window,
            EndTime=end,
            Period=seconds,
            Statistics=["Sum"],
        )
        deleted = sum(float(p.get("Sum", 0.0)) for p in response.get("Datapoints", []))
        return deleted / seconds
