"""Queue facts: timeouts, redrive policies, the consumers, the dead letters and the backlog's trend.

Read from SQS (attributes, a few sampled messages, the depth), Lambda (the
function's timeout, the event source mappings) and CloudWatch (messages sent
and deleted); without CloudWatch data, from the depth watched for a few seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.aws import queue_name
from docindex.core.exceptions import Unsupported
from docindex.ops.diagnose.facts.reader import Reader
from docindex.ops.pause import PauseState

# SQS's default MessageRetentionPeriod (4 days), for a queue that does not report it.
DEFAULT_RETENTION = "345600"


@dataclass(frozen=True)
class VisibilityFacts:
    """How long the ingest queue hides a message, against how long one invocation may hold it."""

    visibility: int
    function_timeout: int
    batching_window: int
    local: bool  # the local runner's simulated timeout, not a Lambda function's


@dataclass(frozen=True)
class RedriveFacts:
    """A queue's attributes and its dead-letter queue's (None when the DLQ does not exist)."""

    label: str
    url: str
    queue: Mapping[str, str]
    dlq: Mapping[str, str] | None


@dataclass(frozen=True)
class ConsumerFacts:
    """The indexer function and every event source mapping on the ingest queue (any function's)."""

    function_name: str
    mappings: Sequence[Mapping[str, Any]]
    paused: PauseState | None


@dataclass(frozen=True)
class DlqFacts:
    """A dead-letter queue's depth and, when it is not empty, a sample of its messages."""

    label: str
    queue: str  # the DLQ's name
    depth: int
    sample: Sequence[Mapping[str, Any]] = ()
    now_ms: int = 0  # when the sample was read, to age its messages
    retention_seconds: int = 0


@dataclass(frozen=True)
class BacklogFacts:
    """A queue's depth and how fast it changes, from CloudWatch or from two depth samples."""

    label: str
    depth: int
    retention_seconds: int
    inflow_per_minute: float | None = None  # CloudWatch NumberOfMessagesSent
    outflow_per_minute: float | None = None  # CloudWatch NumberOfMessagesDeleted
    net_per_minute: float | None = None  # from two depth samples (no CloudWatch data)
    window: str = ""
    paused: PauseState | None = None
    local: bool = False


def visibility_facts(reader: Reader) -> VisibilityFacts:
    """The ingest queue's visibility timeout and the indexer's timeout and batching window."""
    d = reader.deployment
    if not d.ingest_queue_url:
        raise Unsupported("no ingest queue (--stack or --queue-url)")
    visibility = int(reader.attrs(d.ingest_queue_url)["VisibilityTimeout"])
    if d.is_local or not d.function_name:
        if d.local_function_timeout is None:
            raise Unsupported("no function timeout known (--function, --stack, or LOCAL_FUNCTION_TIMEOUT)")
        # The local runner invokes as soon as it has received messages: no batching window.
        return VisibilityFacts(visibility, d.local_function_timeout, 0, local=True)
    config = reader.client("lambda").get_function_configuration(FunctionName=d.function_name)
    window = max((int(m.get("MaximumBatchingWindowInSeconds") or 0) for m in reader.mappings()), default=0)
    return VisibilityFacts(visibility, int(config["Timeout"]), window, local=False)


def redrive_facts(reader: Reader, label: str, url: str | None) -> RedriveFacts:
    """A queue's redrive policy and retention, and its DLQ's."""
    if not url:
        raise Unsupported(f"no {label} queue configured")
    dlq = reader.dlq_url(url)
    return RedriveFacts(label, url, reader.attrs(url), reader.attrs(dlq) if dlq else None)


def consumer_facts(reader: Reader) -> ConsumerFacts:
    """The event source mappings that consume the ingest queue."""
    d = reader.deployment
    if d.is_local:
        raise Unsupported("no Lambda locally: `docindex local run` drives the indexer with partial batch responses")
    if not d.function_name or not d.ingest_queue_url:
        raise Unsupported("needs the indexer function and the ingest queue (--stack, or --function and --queue-url)")
    return ConsumerFacts(d.function_name, reader.mappings(), reader.paused)


def dlq_facts(reader: Reader, label: str, source_url: str | None, dlq_url: str | None) -> DlqFacts:
    """A DLQ's depth; when it holds messages, a sample of them (made visible again at once)."""
    url = dlq_url or (reader.dlq_url(source_url) if source_url else None)
    if not url:
        raise Unsupported(f"no {label} DLQ known")
    depth = reader.depth(url)
    if depth == 0:
        return DlqFacts(label, queue_name(url), 0)
    sample = reader.peek(url, reader.sample) if reader.sample else []
    now_ms = int(reader.clock().timestamp() * 1000)
    retention = int(reader.attrs(url).get("MessageRetentionPeriod", DEFAULT_RETENTION))
    return DlqFacts(label, queue_name(url), depth, sample, now_ms, retention)


def backlog_facts(reader: Reader, label: str, url: str | None) -> BacklogFacts:
    """A queue's depth and its trend: CloudWatch's throughput, else the depth watched for a few seconds."""
    if not url:
        raise Unsupported(f"no {label} queue configured")
    depth = reader.depth(url)
    retention = int(reader.attrs(url).get("MessageRetentionPeriod", DEFAULT_RETENTION))
    paused, local = reader.paused, reader.deployment.is_local
    if depth == 0:
        return BacklogFacts(label, 0, retention, paused=paused, local=local)
    inflow, outflow = _throughput(reader, queue_name(url))
    if inflow is not None and outflow is not None and (inflow or outflow):
        return BacklogFacts(
            label,
            depth,
            retention,
            inflow_per_minute=inflow,
            outflow_per_minute=outflow,
            window=f"CloudWatch, last {reader.window_minutes} min",
            paused=paused,
            local=local,
        )
    # No metrics (a local endpoint, or a queue idle for hours): watch the depth instead.
    reader.sleep(reader.sample_seconds)
    later = reader.depth(url)
    net = (later - depth) / (reader.sample_seconds / 60) if reader.sample_seconds > 0 else 0.0
    return BacklogFacts(
        label,
        later,
        retention,
        net_per_minute=net,
        window=f"depth sampled {reader.sample_seconds:g} s apart (no CloudWatch data)",
        paused=paused,
        local=local,
    )


def _throughput(reader: Reader, name: str) -> tuple[float | None, float | None]:
    """Messages sent and deleted per minute over the window (None, None without CloudWatch)."""
    cloudwatch = reader.client("cloudwatch")
    end = reader.clock()
    start = end - timedelta(minutes=reader.window_minutes)
    totals: list[float | None] = []
    for metric in ("NumberOfMessagesSent", "NumberOfMessagesDeleted"):
        try:
            points = cloudwatch.get_metric_statistics(
                Namespace="AWS/SQS",
                MetricName=metric,
                Dimensions=[{"Name": "QueueName", "Value": name}],
                StartTime=start,
                EndTime=end,
                Period=60,
                Statistics=["Sum"],
            ).get("Datapoints", [])
        except (ClientError, BotoCoreError):
            return None, None
        totals.append(sum(float(p.get("Sum", 0.0)) for p in points) / reader.window_minutes if points else None)
    return totals[0], totals[1]
