"""The forwarding server every fault behaviour plugs into, and what the behaviours share.

``Proxy`` listens on a free local port and forwards each request to its
upstream over a kept-alive connection; its ``Behaviour`` decides what the
client gets instead (an injected error, a dropped connection, a body cut
short, or the upstream's answer).
"""

from __future__ import annotations

import contextlib
import gzip
import http.client
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

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

    # A gzip request body (Content-Encoding: gzip) is handed over decompressed: OpenSearch's
    # compressed _bulk requests are read by the faults. Not for S3, where Content-Encoding is the
    # object's own metadata and the stored bytes must stay as sent.
    decode_gzip_requests = True

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
        if headers.get("content-encoding") == "gzip" and body and self.server.behaviour.decode_gzip_requests:
            body = gzip.decompress(body)
            del headers["content-encoding"]
        parts = urlsplit(self.path)
        request = Request(self.command, parts.path, parts.query, headers, body)
        try:
            reply = self.server.behaviour.handle(request, self._forward)
        except Exception as exc:  # noqa: BLE001 - the upstream is down or the behaviour broke: say so, in HTTP
            reply = Reply(502, [("Content-Type", "text/plain")], f"fault proxy: {type(exc).__name__}: {exc}".encode())
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
    """A proxy to ``upstream`` on a free local port, running in daemon threads.

    ``start()`` / ``stop()``, or ``with Proxy(...) as proxy:`` for both.
    """

    def __init__(self, upstream: str, behaviour: Behaviour | None = None, *, port: int = 0) -> None:
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.behaviour = behaviour or Behaviour()
        self._server.upstream = upstream
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Proxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
