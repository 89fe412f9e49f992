"""A fault-injecting HTTP proxy in front of osmem-server (real HTTP on both sides).

Rules are set by the test: answer the next ``_bulk`` requests with an error
status, or make chosen documents fail inside an otherwise successful
``_bulk`` response (those items are not forwarded, their result is an error).
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass
class Faults:
    bulk_statuses: list[int] = field(default_factory=list)  # consumed one per _bulk request
    item_errors: dict[str, list[int]] = field(default_factory=dict)  # doc id -> statuses, one per attempt
    bulk_requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _error_body(status: int) -> dict[str, Any]:
    kind = {429: "es_rejected_execution_exception", 400: "mapper_parsing_exception"}.get(status, "injected_fault")
    return {"type": kind, "reason": f"injected {status}"}


class _Handler(BaseHTTPRequestHandler):
    upstream: str
    faults: Faults

    def log_message(self, *args: Any) -> None:
        pass

    def _forward(self, body: bytes | None) -> tuple[int, dict[str, str], bytes]:
        target = urlsplit(self.upstream)
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        if body is not None:
            headers["Content-Length"] = str(len(body))
        conn.request(self.command, self.path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        out_headers = {k: v for k, v in response.getheaders() if k.lower() not in ("transfer-encoding", "connection")}
        conn.close()
        return response.status, out_headers, data

    def _reply(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            if key.lower() != "content-length":
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if self.headers.get("Content-Encoding") == "gzip" and body:
            import gzip

            body = gzip.decompress(body)
            del self.headers["Content-Encoding"]
        path = urlsplit(self.path).path
        if path.endswith("/_bulk") and body is not None:
            self._bulk(body)
            return
        status, headers, data = self._forward(body)
        self._reply(status, headers, data)

    def _bulk(self, body: bytes) -> None:
        faults = self.faults
        with faults.lock:
            faults.bulk_requests += 1
            status = faults.bulk_statuses.pop(0) if faults.bulk_statuses else None
        if status:
            payload = json.dumps({"error": _error_body(status), "status": status}).encode()
            self._reply(status, {"Content-Type": "application/json"}, payload)
            return
        lines = [line for line in body.decode().split("\n") if line.strip()]
        items: list[tuple[dict[str, Any], str | None]] = []
        i = 0
        while i < len(lines):
            action = json.loads(lines[i])
            op = next(iter(action))
            source = None
            if op != "delete":
                source = lines[i + 1]
                i += 1
            items.append((action, source))
            i += 1
        injected: dict[int, int] = {}
        with faults.lock:
            for n, (action, _) in enumerate(items):
                doc = next(iter(action.values())).get("_id")
                queue = faults.item_errors.get(doc)
                if queue:
                    injected[n] = queue.pop(0)
        forward = [it for n, it in enumerate(items) if n not in injected]
        results: list[dict[str, Any]] = []
        if forward:
            out = "".join(json.dumps(a) + "\n" + (s + "\n" if s is not None else "") for a, s in forward)
            status, _headers, data = self._forward(out.encode())
            results = json.loads(data)["items"]
        merged = []
        for n, (action, _) in enumerate(items):
            op = next(iter(action))
            if n in injected:
                code = injected[n]
                meta = action[op]
                merged.append(
                    {
                        op: {
                            "_index": meta.get("_index"),
                            "_id": meta.get("_id"),
                            "status": code,
                            "error": _error_body(code),
                        }
                    }
                )
            else:
                merged.append(results.pop(0))
        payload = json.dumps(
            {"took": 1, "errors": any("error" in next(iter(m.values())) for m in merged), "items": merged}
        ).encode()
        self._reply(200, {"Content-Type": "application/json"}, payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


@contextmanager
def fault_proxy(upstream: str) -> Iterator[tuple[str, Faults]]:
    """Serve a proxy to ``upstream`` on a free port; yields (url, faults)."""
    faults = Faults()
    handler = type("Handler", (_Handler,), {"upstream": upstream, "faults": faults})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", faults
    finally:
        server.shutdown()
        server.server_close()
