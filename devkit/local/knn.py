"""A stand-in for OpenSearch's k-NN on the local run: exact nearest neighbours in front of osmem-server.

osmem-server accepts ``knn_vector`` mappings and stores the vectors, but answers any ``knn``
query with "not supported". This proxy sits between docindex and osmem (``docindex local up``
starts it; the tests put it in front of their osmem clone) and answers the k-NN clauses
docindex sends, exactly instead of approximately:

- a ``knn`` clause inside a ``nested`` query over passages, or a top-level one, with ``k`` and a
  ``filter`` (the permission and user filters): the filter is run on osmem as a query, every
  matching document's vectors are scored against the query vector, and the clause is replaced by
  the ``k`` best documents with their scores (OpenSearch's ``cosinesimil`` score, ``(1 + cos) / 2``,
  the best passage for a nested field); the rest of the request (size, ``_source``, highlighting,
  aggregations) is osmem's;
- ``inner_hits`` of such a nested clause are answered with each document's best passage.

It is a development stand-in, not an implementation of the k-NN plugin: exact search over every
filtered document is what a small local index can afford, and it is the reference an approximate
HNSW search is measured against. ``docindex analysis validate --stack NAME`` runs the same queries
on a real domain.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from devkit.faults.proxy import Behaviour, Forward, Proxy, Reply, Request
from devkit.local.encodings import VectorEncoder

_SEARCH_PATH = re.compile(r"^/(?P<index>[^/_][^/]*)/_search$")
# The local stand-in's bound: a local index this large wants a real cluster.
MAX_CANDIDATES = 50_000
PAGE = 1000


class KnnError(ValueError):
    """A k-NN request the stand-in cannot answer (as OpenSearch would refuse a malformed one)."""


@dataclass
class _Scored:
    """The k best documents of one clause: id -> (score, best nested offset, the nested element)."""

    path: str | None
    inner_hits: dict[str, Any] | None
    best: dict[str, tuple[float, int, dict[str, Any]]] = field(default_factory=dict)


class ExactKnn(Behaviour):
    """Answers k-NN clauses of ``_search`` requests exactly; everything else goes to osmem unchanged."""

    def __init__(self, encoding: VectorEncoder | None = None) -> None:
        self.knn_queries = 0
        # What the cluster's vector field keeps of a vector (devkit.local.encodings): scored as the
        # engine scores it. None: the vectors as written (float32).
        self.encoding = encoding

    def handle(self, request: Request, forward: Forward) -> Reply:
        match = _SEARCH_PATH.match(request.path)
        if request.method not in ("GET", "POST") or not match or b'"knn"' not in request.body:
            return forward(request)
        try:
            body = json.loads(request.body)
            scored: list[_Scored] = []
            body["query"] = self._rewrite(body.get("query", {}), match["index"], forward, scored)
        except KnnError as exc:
            return _error(400, str(exc))
        self.knn_queries += 1
        request.body = json.dumps(body).encode()
        reply = forward(request)
        if reply.status == 200 and any(s.inner_hits is not None for s in scored):
            reply.body = _with_inner_hits(reply.body, scored)
        return reply

    # -- the query tree ------------------------------------------------------

    def _rewrite(self, node: Any, index: str, forward: Forward, scored: list[_Scored]) -> Any:
        if isinstance(node, list):
            return [self._rewrite(item, index, forward, scored) for item in node]
        if not isinstance(node, dict):
            return node
        if "nested" in node and isinstance(node["nested"].get("query"), dict) and "knn" in node["nested"]["query"]:
            nested = node["nested"]
            result = self._score(nested["query"]["knn"], index, forward, path=nested["path"])
            result.inner_hits = nested.get("inner_hits")
            scored.append(result)
            return _as_query(result)
        if "knn" in node:
            result = self._score(node["knn"], index, forward, path=None)
            scored.append(result)
            return _as_query(result)
        return {key: self._rewrite(value, index, forward, scored) for key, value in node.items()}

    def _score(self, clause: dict[str, Any], index: str, forward: Forward, *, path: str | None) -> _Scored:
        if len(clause) != 1:
            raise KnnError("a knn clause names exactly one vector field")
        ((field_name, spec),) = clause.items()
        vector = spec.get("vector")
        k = int(spec.get("k", 10))
        if not isinstance(vector, list) or not vector or k < 1:
            raise KnnError(f"knn on {field_name}: a non-empty vector and k >= 1 are required")
        if self.encoding is not None:
            vector = self.encoding.query(vector)
        query_norm = math.sqrt(math.fsum(x * x for x in vector)) or 1.0
        result = _Scored(path=path, inner_hits=None)
        candidates: list[tuple[float, str, int, dict[str, Any]]] = []
        for doc_id, source in self._candidates(index, spec.get("filter"), field_name, path, forward):
            elements = _elements(source, path) if path else [source]
            leaf = field_name[len(path) + 1 :] if path else field_name
            best: tuple[float, int, dict[str, Any]] | None = None
            for offset, element in enumerate(elements):
                stored = element.get(leaf) if isinstance(element, dict) else None
                if not isinstance(stored, list) or len(stored) != len(vector):
                    continue
                if self.encoding is not None:
                    stored = self.encoding.stored(stored)
                norm = math.sqrt(math.fsum(x * x for x in stored)) or 1.0
                cosine = math.fsum(a * b for a, b in zip(vector, stored, strict=True)) / (norm * query_norm)
                score = (1.0 + cosine) / 2.0
                if best is None or score > best[0]:
                    best = (score, offset, element)
            if best is not None:
                candidates.append((best[0], doc_id, best[1], best[2]))
        candidates.sort(key=lambda c: (-c[0], c[1]))
        for score, doc_id, offset, element in candidates[:k]:
            result.best[doc_id] = (score, offset, element)
        return result

    @staticmethod
    def _candidates(
        index: str, knn_filter: Any, field_name: str, path: str | None, forward: Forward
    ) -> list[tuple[str, dict[str, Any]]]:
        """Every document the filter lets through, with its vectors (paged; bounded)."""
        query = knn_filter if isinstance(knn_filter, dict) and knn_filter else {"match_all": {}}
        found: list[tuple[str, dict[str, Any]]] = []
        start = 0
        while True:
            body = {"query": query, "_source": [path or field_name], "size": PAGE, "from": start, "sort": ["_doc"]}
            reply = forward(
                Request(
                    "POST", f"/{index}/_search", "", {"content-type": "application/json"}, json.dumps(body).encode()
                )
            )
            if reply.status != 200:
                raise KnnError(f"the knn filter was refused: {reply.body[:300].decode(errors='replace')}")
            hits = json.loads(reply.body)["hits"]["hits"]
            found.extend((hit["_id"], hit.get("_source") or {}) for hit in hits)
            if len(hits) < PAGE:
                return found
            start += PAGE
            if start >= MAX_CANDIDATES:
                raise KnnError(f"more than {MAX_CANDIDATES} documents pass the filter: the local stand-in stops here")


def _elements(source: dict[str, Any], path: str) -> list[Any]:
    value: Any = source
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, dict):
        return [value]
    return value if isinstance(value, list) else []


def _as_query(result: _Scored) -> dict[str, Any]:
    if not result.best:
        return {"bool": {"must_not": [{"match_all": {}}]}}
    return {
        "bool": {
            "should": [
                {"constant_score": {"filter": {"ids": {"values": [doc_id]}}, "boost": score}}
                for doc_id, (score, _, _) in result.best.items()
            ],
            "minimum_should_match": 1,
        }
    }


def _with_inner_hits(body: bytes, scored: list[_Scored]) -> bytes:
    response = json.loads(body)
    for hit in response.get("hits", {}).get("hits", []):
        for result in scored:
            if result.inner_hits is None or result.path is None or hit["_id"] not in result.best:
                continue
            score, offset, element = result.best[hit["_id"]]
            includes = (result.inner_hits.get("_source") or {}) if isinstance(result.inner_hits, dict) else {}
            source = element
            if isinstance(includes, dict) and includes.get("includes"):
                keep = {name[len(result.path) + 1 :] for name in includes["includes"]}
                source = {key: value for key, value in element.items() if key in keep}
            elif includes is False:
                source = {}
            name = result.inner_hits.get("name", result.path)
            hit.setdefault("inner_hits", {})[name] = {
                "hits": {
                    "total": {"value": 1, "relation": "eq"},
                    "max_score": score,
                    "hits": [
                        {
                            "_index": hit.get("_index"),
                            "_id": hit["_id"],
                            "_nested": {"field": result.path, "offset": offset},
                            "_score": score,
                            "_source": source,
                        }
                    ],
                }
            }
    return json.dumps(response).encode()


def _error(status: int, reason: str) -> Reply:
    body = {"error": {"type": "illegal_argument_exception", "reason": reason}, "status": status}
    return Reply(status, [("Content-Type", "application/json")], json.dumps(body).encode())


def serve(upstream: str, port: int) -> None:
    """Run the stand-in in the foreground (``python -m devkit.local.knn``)."""
    import signal
    import threading

    proxy = Proxy(upstream, ExactKnn(), port=port).start()
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        proxy.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="osmem-server's URL")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    serve(args.upstream, args.port)


if __name__ == "__main__":
    main()
