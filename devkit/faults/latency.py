"""Service latencies for the local servers: what a round trip costs in an AWS region.

moto and the local OpenSearch node answer in a few milliseconds on localhost, so a
local run hides what separates a pipeline that overlaps its waits from one that
does not. ``ServiceLatency`` sits in front of either server (``Proxy``) and
holds each answer back until a latency drawn for that call has passed: a
log-normal draw (median, 99th percentile) per service, plus the transfer
time of the body for S3 and a base plus a per-document cost for OpenSearch
``_bulk``. The time the server itself took counts towards the draw, so the
server's own speed does not add to the modelled one (unless it is slower).

The figures (``AWS_REGION_LATENCY``) and where they come from are in
docs/performance.md ("Latency-faithful mode"). Draws come from a seeded
generator: a run can be repeated.
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

from devkit.faults.proxy import Behaviour, Forward, Reply, Request

# The action line of each _bulk item (sources follow on their own lines).
_BULK_ACTION = re.compile(rb'^\{\s*"(?:index|create|update|delete)"\s*:', re.MULTILINE)
# z of the 99th percentile of a normal distribution.
_Z99 = 2.3263


@dataclass(frozen=True)
class Spread:
    """A log-normal latency in seconds, given by its median and 99th percentile."""

    median: float
    p99: float

    def draw(self, rng: random.Random) -> float:
        sigma = math.log(self.p99 / self.median) / _Z99
        return self.median * math.exp(rng.gauss(0.0, sigma))


@dataclass(frozen=True)
class LatencyModel:
    s3_first_byte: Spread
    s3_bytes_per_second: float
    dynamodb: Spread
    sqs: Spread
    opensearch_base: Spread
    opensearch_per_document: float  # seconds per action of a _bulk request


# docs/performance.md cites each figure.
AWS_REGION_LATENCY = LatencyModel(
    s3_first_byte=Spread(median=0.030, p99=0.150),
    s3_bytes_per_second=90e6,
    dynamodb=Spread(median=0.006, p99=0.025),
    sqs=Spread(median=0.012, p99=0.060),
    opensearch_base=Spread(median=0.025, p99=0.120),
    opensearch_per_document=0.002,
)


def classify(request: Request) -> str:
    """Which service a request to moto or OpenSearch is (by its protocol headers and path)."""
    target = request.headers.get("x-amz-target", "")
    if target.startswith("DynamoDB"):
        return "dynamodb"
    if target.startswith("AmazonSQS") or b"Action=" in request.body[:200]:
        return "sqs"
    if request.path.endswith("/_bulk"):
        return "opensearch_bulk"
    if "authorization" in request.headers or "x-amz-date" in request.headers:
        return "s3"
    return "opensearch"


@dataclass
class LatencyLog:
    """Injected seconds per service (thread-safe)."""

    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, service: str, seconds: float) -> None:
        with self._lock:
            self.seconds[service] += seconds
            self.calls[service] += 1

    def snapshot(self) -> dict[str, dict[str, float]]:
        with self._lock:
            return {
                name: {"calls": self.calls[name], "mean_ms": round(self.seconds[name] / self.calls[name] * 1000, 2)}
                for name in sorted(self.calls)
            }


class ServiceLatency(Behaviour):
    """Forwards every request and answers no sooner than the modelled latency of that call."""

    def __init__(self, model: LatencyModel = AWS_REGION_LATENCY, *, seed: int = 21) -> None:
        self.model = model
        self.log = LatencyLog()
        self._rng = random.Random(seed)  # noqa: S311  # latency draws, not crypto  # nosec B311
        self._lock = threading.Lock()

    def latency(self, request: Request, reply: Reply) -> tuple[str, float]:
        service = classify(request)
        m = self.model
        with self._lock:
            if service == "dynamodb":
                return service, m.dynamodb.draw(self._rng)
            if service == "sqs":
                return service, m.sqs.draw(self._rng)
            if service == "s3":
                size = len(reply.body) if request.method == "GET" else len(request.body)
                return service, m.s3_first_byte.draw(self._rng) + size / m.s3_bytes_per_second
            base = m.opensearch_base.draw(self._rng)
        if service == "opensearch_bulk":
            actions = len(_BULK_ACTION.findall(request.body))
            return service, base + actions * m.opensearch_per_document
        if request.method in ("PUT", "POST") and "/_doc" in request.path:
            return service, base + m.opensearch_per_document
        return service, base

    def handle(self, request: Request, forward: Forward) -> Reply:
        started = time.monotonic()
        reply = forward(request)
        service, seconds = self.latency(request, reply)
        self.log.add(service, seconds)
        remaining = seconds - (time.monotonic() - started)
        if remaining > 0:
            time.sleep(remaining)
        return reply
