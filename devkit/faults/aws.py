"""Faults in front of moto server: S3 GetObject faults, giant objects, and the log of SQS sends."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from devkit.faults.proxy import Behaviour, Draw, FaultCounts, FaultSwitch, Forward, Reply, Request


class GiantObjects(Behaviour):
    """Serves chosen S3 keys from (sparse) local files, as big as they are; forwards everything else.

    moto keeps every object in its own process; a 2 GiB upload would take a
    minute and gigabytes there. An object that is only *announced* as huge is
    what the indexer's size guard is about: it must decide from the headers
    and never read the body. ``served`` counts the body bytes that actually
    left, so a test can prove the body was not read.
    """

    def __init__(self, objects: dict[str, str], *, chunk: int = 1 << 20) -> None:
        self.objects = objects  # "/bucket/key" (decoded) -> local file
        self.chunk = chunk
        self.served: dict[str, int] = {}
        self._lock = threading.Lock()

    def handle(self, request: Request, forward: Forward) -> Reply:
        path = unquote(request.path)
        source = self.objects.get(path)
        if source is None or request.method not in ("GET", "HEAD"):
            return forward(request)
        size = os.path.getsize(source)
        headers = [
            ("Content-Type", "application/octet-stream"),
            ("Content-Length", str(size)),
            ("ETag", '"' + "0" * 32 + '"'),
            ("Last-Modified", "Fri, 20 Nov 2026 09:00:00 GMT"),
            ("Accept-Ranges", "bytes"),
        ]

        def stream(out: Any) -> None:
            with open(source, "rb") as handle:
                while block := handle.read(self.chunk):
                    out.write(block)
                    with self._lock:
                        self.served[path] = self.served.get(path, 0) + len(block)

        return Reply(200, headers, stream=stream if request.method == "GET" else None)


@dataclass(frozen=True)
class SentMessage:
    queue_url: str
    body: str
    client: str
    at: float = field(default_factory=time.time)


class SendLog:
    """Every message SQS accepted through a proxy (or recorded by the harness itself)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.messages: list[SentMessage] = []

    def add(self, message: SentMessage) -> None:
        with self._lock:
            self.messages.append(message)

    def snapshot(self) -> list[SentMessage]:
        with self._lock:
            return list(self.messages)


@dataclass
class S3FaultRates:
    throttle_503: float = 0.05
    error_500: float = 0.02
    dropped: float = 0.01
    truncated: float = 0.01


def _s3_error(code: str, message: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f"<Error><Code>{code}</Code><Message>{message}</Message><RequestId>soak</RequestId></Error>"
    ).encode()


class AwsFaults(Behaviour):
    """Faults in front of moto for one client group; records SQS sends."""

    decode_gzip_requests = False

    def __init__(
        self,
        *,
        client: str,
        switch: FaultSwitch,
        rates: S3FaultRates | None,
        seed: int,
        sends: SendLog,
        counts: FaultCounts,
        on_get_object: Callable[[str], None] | None = None,
    ) -> None:
        self.client = client
        self.switch = switch
        self.rates = rates
        self.sends = sends
        self.counts = counts
        self.on_get_object = on_get_object
        self._draw = Draw(seed, f"aws:{client}")
        # Faults for the next GetObject requests, in order, before any random ones
        # ("throttle", "error", "drop", "truncate", or "" for none): for tests.
        self.scripted: list[str] = []
        self._scripted_lock = threading.Lock()

    def _next_scripted(self) -> str | None:
        with self._scripted_lock:
            return self.scripted.pop(0) if self.scripted else None

    def handle(self, request: Request, forward: Forward) -> Reply:
        target = request.headers.get("x-amz-target", "")
        if target.startswith("AmazonSQS."):
            return self._sqs(target.removeprefix("AmazonSQS."), request, forward)
        if request.method == "GET" and self._is_get_object(request):
            return self._get_object(request, forward)
        return forward(request)

    @staticmethod
    def _is_get_object(request: Request) -> bool:
        # Path-style /bucket/key: a key is there, and it is not a listing or a sub-resource.
        segments = request.path.lstrip("/").split("/", 1)
        if len(segments) < 2 or not segments[1]:
            return False
        query = parse_qs(request.query, keep_blank_values=True)
        return not any(name in query for name in ("list-type", "uploads", "tagging", "acl", "attributes"))

    def _get_object(self, request: Request, forward: Forward) -> Reply:
        if self.on_get_object is not None:
            self.on_get_object(unquote(request.path))
        fault = self._next_scripted()
        if fault is None:
            fault = self._random_fault()
        if fault == "throttle":
            self.counts.add("s3_get_throttled_503")
            return Reply(503, [("Content-Type", "application/xml")], _s3_error("SlowDown", "Please reduce your rate."))
        if fault == "error":
            self.counts.add("s3_get_error_500")
            return Reply(500, [("Content-Type", "application/xml")], _s3_error("InternalError", "injected"))
        if fault == "drop":
            self.counts.add("s3_get_connection_dropped")
            return Reply(0, drop=True)
        reply = forward(request)
        if fault == "truncate" and reply.status == 200 and len(reply.body) > 1:
            self.counts.add("s3_get_body_truncated")
            reply.truncate_at = len(reply.body) // 2
        return reply

    def _random_fault(self) -> str:
        rates, draw = self.rates, self._draw
        if not (self.switch.active and rates):
            return ""
        for name, rate in (
            ("throttle", rates.throttle_503),
            ("error", rates.error_500),
            ("drop", rates.dropped),
            ("truncate", rates.truncated),
        ):
            if draw.chance(rate):
                return name
        return ""

    def _sqs(self, operation: str, request: Request, forward: Forward) -> Reply:
        reply = forward(request)
        if reply.status != 200 or operation not in ("SendMessage", "SendMessageBatch"):
            return reply
        try:
            sent = json.loads(request.body)
            answer = json.loads(reply.body or b"{}")
        except ValueError:
            return reply
        url = str(sent.get("QueueUrl", ""))
        if operation == "SendMessage":
            self.sends.add(SentMessage(url, str(sent.get("MessageBody", "")), self.client))
        else:
            ok = {str(entry.get("Id")) for entry in answer.get("Successful", [])}
            for entry in sent.get("Entries", []):
                if str(entry.get("Id")) in ok:
                    self.sends.add(SentMessage(url, str(entry.get("MessageBody", "")), self.client))
        return reply
