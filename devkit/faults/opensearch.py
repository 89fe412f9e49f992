"""Faults in front of OpenSearch (the local node), and the log of every write it accepted."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from devkit.faults.proxy import Behaviour, Draw, FaultCounts, FaultSwitch, Forward, Reply, Request


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
    # the concrete index that took it (a reindex copies a document into the next one at the same version)
    index: str | None = None


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


def _os_error(status: int) -> dict[str, Any]:
    """The ``error`` object OpenSearch gives with ``status`` (its type decides nothing in docindex: the status does)."""
    kind = {429: "es_rejected_execution_exception", 400: "mapper_parsing_exception"}.get(status, "injected_fault")
    return {"type": kind, "reason": f"injected {status}"}


def _os_error_reply(status: int) -> Reply:
    return _json_reply(status, json.dumps({"error": _os_error(status), "status": status}).encode())


def _json_reply(status: int, payload: bytes) -> Reply:
    return Reply(status, [("Content-Type", "application/json")], payload)


class OpenSearchFaults(Behaviour):
    """Faults in front of OpenSearch for one client (a test, a Lambda sandbox slot, or the worker).

    Scripted faults come first and always apply: ``bulk_statuses`` answers the
    next ``_bulk`` requests, one status each; ``item_errors`` fails a
    document's next bulk items (document id -> statuses, one per attempt).
    Random faults need ``rates`` and an active ``switch``.
    """

    def __init__(
        self,
        *,
        client: str = "test",
        switch: FaultSwitch | None = None,
        rates: OpenSearchFaultRates | None = None,
        seed: int = 0,
        log: WriteLog | None = None,
        counts: FaultCounts | None = None,
        on_bulk_written: Callable[[int], None] | None = None,
    ) -> None:
        self.client = client
        self.switch = switch or FaultSwitch()
        self.rates = rates or OpenSearchFaultRates(0, 0, 0, 0, 0)
        self.log = log or WriteLog()
        self.counts = counts or FaultCounts()
        self.on_bulk_written = on_bulk_written
        self._draw = Draw(seed, f"opensearch:{client}")
        self.bulk_statuses: list[int] = []
        self.item_errors: dict[str, list[int]] = {}
        self.bulk_requests = 0  # every _bulk request seen, faulted or not
        self._lock = threading.Lock()

    def handle(self, request: Request, forward: Forward) -> Reply:
        path = request.path
        if path.endswith("/_bulk") and request.method in ("POST", "PUT"):
            return self._bulk(request, forward)
        active = self.switch.active
        segments = [unquote(s) for s in path.strip("/").split("/")]
        if len(segments) == 3 and segments[1] == "_doc" and request.method in ("PUT", "POST"):
            if active and self._draw.chance(self.rates.doc_write_429):
                self.counts.add("opensearch_doc_write_429")
                return _os_error_reply(429)
            reply = forward(request)
            if 200 <= reply.status < 300:
                self._record_doc_write(segments[2], request, reply)
            return reply
        if active and self._draw.chance(self.rates.other_503):
            self.counts.add("opensearch_other_503")
            return _os_error_reply(503)
        return forward(request)

    def _record_doc_write(self, doc_id: str, request: Request, reply: Reply) -> None:
        query = parse_qs(request.query)
        version = int(query["version"][0]) if "version" in query else None
        try:
            source = json.loads(request.body or b"{}")
        except ValueError:
            source = {}
        try:
            index = json.loads(reply.body).get("_index")
        except ValueError:
            index = None
        etag, status = source.get("etag"), source.get("ocr_status")
        self.log.add(Write("doc", "index", doc_id, version, etag, status, self.client, index=index))

    def _bulk(self, request: Request, forward: Forward) -> Reply:
        with self._lock:
            self.bulk_requests += 1
            scripted = self.bulk_statuses.pop(0) if self.bulk_statuses else None
        if scripted:
            self.counts.add(f"opensearch_bulk_{scripted}")
            return _os_error_reply(scripted)
        active = self.switch.active
        if active and self._draw.chance(self.rates.bulk_429):
            self.counts.add("opensearch_bulk_429")
            return _os_error_reply(429)
        if active and self._draw.chance(self.rates.bulk_503):
            self.counts.add("opensearch_bulk_503")
            return _os_error_reply(503)
        items = _bulk_items(request.body)
        rejected = self._scripted_item_errors(items)
        for n in range(len(items)):
            if active and self._draw.chance(self.rates.item_429) and n not in rejected:
                rejected[n] = 429
                self.counts.add("opensearch_item_429")
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
                status = rejected[n]
                error = _os_error(status)
                merged.append(
                    {op: {"_index": meta.get("_index"), "_id": meta.get("_id"), "status": status, "error": error}}
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
                        index=info.get("_index"),
                    )
                )
        payload = {"took": 1, "errors": any("error" in next(iter(m.values())) for m in merged), "items": merged}
        reply = _json_reply(200, json.dumps(payload).encode())
        if written and self.on_bulk_written is not None:
            self.on_bulk_written(written)
        return reply

    def _scripted_item_errors(self, items: list[tuple[dict[str, Any], str | None]]) -> dict[int, int]:
        """Item position -> status, for the documents ``item_errors`` fails this time."""
        injected: dict[int, int] = {}
        with self._lock:
            for n, (action, _) in enumerate(items):
                queue = self.item_errors.get(str(next(iter(action.values())).get("_id")))
                if queue:
                    injected[n] = queue.pop(0)
        for status in injected.values():
            self.counts.add(f"opensearch_item_{status}")
        return injected


def _bulk_items(body: bytes) -> list[tuple[dict[str, Any], str | None]]:
    """A ``_bulk`` body as (action, source line) pairs; deletes have no source."""
    lines = [line for line in body.decode("utf-8").split("\n") if line.strip()]
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
    return items


_NO_KNN_ERROR: dict[str, Any] = {
    "root_cause": [{"type": "parsing_exception", "reason": "unknown query [knn]"}],
    "type": "parsing_exception",
    "reason": "unknown query [knn]",
}


def _asks_knn(body: Any) -> bool:
    if isinstance(body, dict):
        return "knn" in body or any(_asks_knn(value) for value in body.values())
    if isinstance(body, list):
        return any(_asks_knn(value) for value in body)
    return False


class NoKnnPlugin(Behaviour):
    """A cluster without the k-NN plugin, in front of one with it: every search that asks a ``knn`` query is
    refused as OpenSearch refuses an unknown query (400 ``parsing_exception``; in ``_msearch``, that search's
    item), everything else is the upstream's. For the tests of what docindex does on such a cluster when
    its index has vectors (a node without the plugin could not hold that index)."""

    def handle(self, request: Request, forward: Forward) -> Reply:
        if request.method not in ("GET", "POST") or not request.body:
            return forward(request)
        if request.path.endswith("/_search") and _asks_knn(json.loads(request.body)):
            return _json_reply(400, json.dumps({"error": _NO_KNN_ERROR, "status": 400}).encode())
        if not request.path.endswith("/_msearch"):
            return forward(request)
        lines = [line for line in request.body.decode().split("\n") if line.strip()]
        pairs = list(zip(lines[0::2], lines[1::2], strict=True))
        kept = [(n, pair) for n, pair in enumerate(pairs) if not _asks_knn(json.loads(pair[1]))]
        answers: dict[int, Any] = {n: {"error": _NO_KNN_ERROR, "status": 400} for n in range(len(pairs))}
        if kept:
            body = "".join(f"{header}\n{search}\n" for _, (header, search) in kept).encode()
            reply = forward(Request(request.method, request.path, request.query, request.headers, body))
            if reply.status != 200:
                return reply
            for (n, _), answer in zip(kept, json.loads(reply.body)["responses"], strict=True):
                answers[n] = answer
        payload = {"took": 1, "responses": [answers[n] for n in range(len(pairs))]}
        return _json_reply(200, json.dumps(payload).encode())


class SentDocuments(Behaviour):
    """Forwards everything and keeps the JSON of every document written (``_bulk`` index actions and
    single-document writes), by id, last write wins: what the cluster was sent, whatever it stores on disk."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.documents: dict[str, bytes] = {}

    def handle(self, request: Request, forward: Forward) -> Reply:
        reply = forward(request)
        if reply.status >= 300 or request.method not in ("POST", "PUT") or not request.body:
            return reply
        written: list[tuple[str, bytes]] = []
        if request.path.endswith("/_bulk"):
            for action, source in _bulk_items(request.body):
                kind, meta = next(iter(action.items()))
                if kind in ("index", "create") and source is not None:
                    written.append((str(meta.get("_id")), source.encode()))
        elif "/_doc/" in request.path:
            written.append((unquote(request.path.rsplit("/", 1)[1]), request.body))
        with self._lock:
            self.documents.update(written)
        return reply

    def total_bytes(self) -> int:
        with self._lock:
            return sum(len(body) for body in self.documents.values())
