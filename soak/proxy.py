"""Fault-injecting HTTP proxies: real HTTP from the client, real HTTP to the server.

One small forwarding server (keep-alive on both sides) with a pluggable
behaviour:

- ``OpenSearchFaults`` in front of osmem-server answers a share of ``_bulk``
  requests with 429 or 503 (nothing forwarded), rejects single bulk items
  with 429 (those items are not forwarded), fails a share of the other calls
  with 503, and records every write OpenSearch accepted (``WriteLog``): the
  judge counts them per document version and per change.
- ``AwsFaults`` in front of moto server throttles (503 SlowDown), fails (500
  InternalError), drops (connection closed) or truncates a share of S3
  ``GetObject`` responses, and records every message sent to SQS
  (``SendLog``), which is the ground truth of the changes announced.

Faults apply only while ``FaultSwitch.active``; the soak turns them off before
its redrive run.
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import json
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

_HOP_BY_HOP = {
    "host",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "accept-encoding",
    "expect",
    "proxy-connection",
    "te",
    "upgrade",
}


@dataclass
class Request:
    method: str
    path: str  # without the query
    query: str
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    # Send the headers and only this many body bytes, then close: a body cut short.
    truncate_at: int | None = None
    # Close the connection without answering at all.
    drop: bool = False
    # Writes the body itself (give its Content-Length in ``headers``); for bodies too big to hold.
    stream: Callable[[Any], None] | None = None


Forward = Callable[[Request], Reply]


class Behaviour:
    """Decides what a request gets; the default forwards everything."""

    def handle(self, request: Request, forward: Forward) -> Reply:
        return forward(request)


class FaultSwitch:
    """Faults on or off, shared by every proxy of a run."""

    def __init__(self) -> None:
        self.active = True


class Draw:
    """A seeded random draw per fault kind, safe from any thread (a failing run can be replayed)."""

    def __init__(self, seed: int, name: str) -> None:
        self._rng = random.Random(f"{seed}:{name}")  # noqa: S311  # fault injection, not crypto  # nosec B311
        self._lock = threading.Lock()

    def chance(self, probability: float) -> bool:
        if probability <= 0:
            return False
        with self._lock:
            return self._rng.random() < probability

    def uniform(self, low: float, high: float) -> float:
        with self._lock:
            return self._rng.uniform(low, high)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    behaviour: Behaviour
    upstream: str

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients killed mid-request (the soak kills them on purpose) reset their connections.
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    _local = threading.local()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            target = urlsplit(self.server.upstream)
            conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
            self._local.conn = conn
        return conn

    def _forward(self, request: Request) -> Reply:
        headers = {k: v for k, v in request.headers.items() if k not in _HOP_BY_HOP}
        headers["Content-Length"] = str(len(request.body))
        url = request.path + (f"?{request.query}" if request.query else "")
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(request.method, url, body=request.body or None, headers=headers)
                response = conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException):
                # A kept-alive upstream connection closed under us: reconnect once.
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
                continue
            out = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP]
            if request.method == "HEAD":
                length = response.getheader("Content-Length")
                if length is not None:
                    out.append(("Content-Length", length))
            return Reply(response.status, out, data)
        raise AssertionError("unreachable")

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        if headers.get("content-encoding") == "gzip" and body:
            body = gzip.decompress(body)
            del headers["content-encoding"]
        parts = urlsplit(self.path)
        request = Request(self.command, parts.path, parts.query, headers, body)
        try:
            reply = self.server.behaviour.handle(request, self._forward)
        except Exception as exc:  # noqa: BLE001 - the upstream is down or the behaviour broke: say so, in HTTP
            reply = Reply(502, [("Content-Type", "text/plain")], f"soak proxy: {type(exc).__name__}: {exc}".encode())
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        if reply.drop:
            self.close_connection = True
            return
        self.send_response(reply.status)
        has_length = False
        for key, value in reply.headers:
            if key.lower() == "content-length":
                if self.command != "HEAD" and reply.stream is None:
                    continue
                has_length = True
            self.send_header(key, value)
        if self.command != "HEAD" and reply.stream is None:
            self.send_header("Content-Length", str(len(reply.body)))
        elif not has_length:
            self.send_header("Content-Length", "0")
        if reply.truncate_at is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command == "HEAD":
            return
        if reply.stream is not None:
            self.close_connection = True
            # The client hanging up is exactly what one that does not read the body does.
            with contextlib.suppress(ConnectionError, TimeoutError):
                reply.stream(self.wfile)
            return
        body = reply.body if reply.truncate_at is None else reply.body[: reply.truncate_at]
        self.wfile.write(body)
        self.wfile.flush()

    def finish(self) -> None:
        super().finish()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


class Proxy:
    """A proxy to ``upstream`` on a free local port, running in daemon threads."""

    def __init__(self, upstream: str, behaviour: Behaviour | None = None) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.behaviour = behaviour or Behaviour()
        self._server.upstream = upstream
        self._thread = threading.Thread(target=self._server.serve_forever, name="soak-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Proxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


# --------------------------------------------------------------------------- OpenSearch


@dataclass(frozen=True)
class Write:
    """One write OpenSearch accepted."""

    writer: str  # "bulk" (the indexer) or "doc" (the OCR worker's single-document writes)
    op: str  # index or delete
    doc_id: str
    version: int | None
    etag: str | None
    ocr_status: str | None
    client: str
    at: float = field(default_factory=time.time)


class WriteLog:
    """Every accepted write, in the order the proxy saw the answers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.writes: list[Write] = []

    def add(self, write: Write) -> None:
        with self._lock:
            self.writes.append(write)

    def snapshot(self) -> list[Write]:
        with self._lock:
            return list(self.writes)


@dataclass
class OpenSearchFaultRates:
    bulk_429: float = 0.06
    bulk_503: float = 0.04
    item_429: float = 0.03
    other_503: float = 0.01
    doc_write_429: float = 0.08


@dataclass
class FaultCounts:
    """How many faults of each kind were injected (thread-safe increments)."""

    counts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self.counts.items()))


def _os_error(status: int) -> bytes:
    kind = "es_rejected_execution_exception" if status == 429 else "soak_injected_fault"
    return json.dumps({"error": {"type": kind, "reason": f"injected {status}"}, "status": status}).encode()


def _json_reply(status: int, payload: bytes) -> Reply:
    return Reply(status, [("Content-Type", "application/json")], payload)


class OpenSearchFaults(Behaviour):
    """Faults in front of OpenSearch for one client (a Lambda sandbox slot, or the worker)."""

    def __init__(
        self,
        *,
        client: str,
        switch: FaultSwitch,
        rates: OpenSearchFaultRates,
        seed: int,
        log: WriteLog,
        counts: FaultCounts,
        on_bulk_written: Callable[[int], None] | None = None,
    ) -> None:
        self.client = client
        self.switch = switch
        self.rates = rates
        self.log = log
        self.counts = counts
        self.on_bulk_written = on_bulk_written
        self._draw = Draw(seed, f"opensearch:{client}")

    def handle(self, request: Request, forward: Forward) -> Reply:
        path = request.path
        if path.endswith("/_bulk") and request.method in ("POST", "PUT"):
            return self._bulk(request, forward)
        active = self.switch.active
        segments = [unquote(s) for s in path.strip("/").split("/")]
        if len(segments) == 3 and segments[1] == "_doc" and request.method in ("PUT", "POST"):
            if active and self._draw.chance(self.rates.doc_write_429):
                self.counts.add("opensearch_doc_write_429")
                return _json_reply(429, _os_error(429))
            reply = forward(request)
            if 200 <= reply.status < 300:
                self._record_doc_write(segments[2], request)
            return reply
        if active and self._draw.chance(self.rates.other_503):
            self.counts.add("opensearch_other_503")
            return _json_reply(503, _os_error(503))
        return forward(request)

    def _record_doc_write(self, doc_id: str, request: Request) -> None:
        query = parse_qs(request.query)
        version = int(query["version"][0]) if "version" in query else None
        try:
            source = json.loads(request.body or b"{}")
        except ValueError:
            source = {}
        self.log.add(Write("doc", "index", doc_id, version, source.get("etag"), source.get("ocr_status"), self.client))

    def _bulk(self, request: Request, forward: Forward) -> Reply:
        active = self.switch.active
        if active and self._draw.chance(self.rates.bulk_429):
            self.counts.add("opensearch_bulk_429")
            return _json_reply(429, _os_error(429))
        if active and self._draw.chance(self.rates.bulk_503):
            self.counts.add("opensearch_bulk_503")
            return _json_reply(503, _os_error(503))
        lines = [line for line in request.body.decode("utf-8").split("\n") if line.strip()]
        items: list[tuple[dict[str, Any], str | None]] = []
        i = 0
        while i < len(lines):
            action = json.loads(lines[i])
            source = None
            if next(iter(action)) != "delete":
                source = lines[i + 1]
                i += 1
            items.append((action, source))
            i += 1
        rejected = {n for n in range(len(items)) if active and self._draw.chance(self.rates.item_429)}
        if rejected:
            self.counts.add("opensearch_item_429", len(rejected))
        forwarded = [item for n, item in enumerate(items) if n not in rejected]
        results: list[dict[str, Any]] = []
        if forwarded:
            body = "".join(json.dumps(a) + "\n" + (s + "\n" if s is not None else "") for a, s in forwarded)
            upstream = forward(Request(request.method, request.path, request.query, request.headers, body.encode()))
            if upstream.status != 200:
                return upstream
            results = list(json.loads(upstream.body)["items"])
        merged: list[dict[str, Any]] = []
        written = 0
        for n, (action, source) in enumerate(items):
            op = next(iter(action))
            meta = action[op]
            if n in rejected:
                error = json.loads(_os_error(429))["error"]
                merged.append(
                    {op: {"_index": meta.get("_index"), "_id": meta.get("_id"), "status": 429, "error": error}}
                )
                continue
            result = results.pop(0)
            merged.append(result)
            info = next(iter(result.values()))
            if 200 <= int(info.get("status", 0)) < 300:
                written += 1
                doc = json.loads(source) if source else {}
                version = meta.get("version")
                self.log.add(
                    Write(
                        "bulk",
                        op,
                        str(meta.get("_id")),
                        int(version) if version is not None else None,
                        doc.get("etag"),
                        doc.get("ocr_status"),
                        self.client,
                    )
                )
        payload = {"took": 1, "errors": any("error" in next(iter(m.values())) for m in merged), "items": merged}
        reply = _json_reply(200, json.dumps(payload).encode())
        if written and self.on_bulk_written is not None:
            self.on_bulk_written(written)
        return reply


# --------------------------------------------------------------------------- AWS (moto)


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
