"""A stand-in for OpenSearch's k-NN on the local run: vector search in front of osmem-server.

osmem-server accepts ``knn_vector`` mappings and stores the vectors, but answers any ``knn``
query with "not supported". This proxy sits between docindex and osmem (``docindex local up``
starts it; the tests and benches put it in front of their osmem) and answers the k-NN clauses
docindex sends, in ``_search`` and ``_msearch`` requests:

- a ``knn`` clause inside a ``nested`` query over passages, or a top-level one, with ``k`` and a
  ``filter`` (the permission and user filters): the filter is run on osmem as a query, the
  ``k`` documents nearest among those it lets through are found, and the clause is replaced by
  those documents with their scores (OpenSearch's ``cosinesimil`` score, ``(1 + cos) / 2``, the
  best passage for a nested field); the rest of the request (size, ``_source``, highlighting,
  aggregations, named queries) is osmem's;
- ``inner_hits`` of such a nested clause are answered with each document's best passage.

Two ways to find the nearest, same answers to the same requests:

- ``HnswKnn`` (what ``docindex local up`` runs): an **approximate** HNSW graph per index and
  vector field (faiss, MIT; a development dependency only), kept in step with osmem by each
  document's ``_version``/``_seq_no``, searched with the filter as an allow-list as Lucene does
  (and exactly, as Lucene does too, when the filter lets through fewer passages than the search
  would visit). Its figures are like a cluster's: the filter, a graph walk, no scan.
- ``ExactKnn``: every filtered document's vectors read from osmem and scored — exact, slow, the
  reference the approximate one is measured against in the tests.

How a field's vectors are stored is read from its mapping (``encoding_of``): float32, fp16
(the faiss engine's ``sq``/``fp16`` encoder, ``on_disk`` 2x), 8-bit (Lucene's ``sq``, 4x and
more, ``data_type: byte``). The approximate stand-in scores the vectors as that encoding keeps
them, so a cheaper encoding's loss shows locally as it would on a cluster.

It is a development stand-in, not an implementation of the k-NN plugin; ``docindex analysis
validate --stack NAME`` runs the same queries on a real domain.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from devkit.faults.proxy import Behaviour, Forward, Proxy, Reply, Request

_SEARCH_PATH = re.compile(r"^/(?P<index>[^/_][^/]*)/_search$")
_MSEARCH_PATH = re.compile(r"^(?:/(?P<index>[^/_][^/]*))?/_msearch$")
_INDEX_PATH = re.compile(r"^/(?P<index>[^/_][^/]*)/?$")
# The local stand-in's bound: a local index this large wants a real cluster.
MAX_CANDIDATES = 50_000
PAGE = 1000
# Ids and write stamps only (no vectors): a larger page, fewer requests.
IDS_PAGE = 10_000
# OpenSearch's default ef_search (index.knn.algo_param.ef_search) and the mapping's HNSW figures.
EF_SEARCH = 100
HNSW_M = 16
EF_CONSTRUCTION = 128


class KnnError(ValueError):
    """A k-NN request the stand-in cannot answer (as OpenSearch would refuse a malformed one)."""


# doc id -> (score, offset of the best nested element, that element)
Nearest = dict[str, tuple[float, int, dict[str, Any]]]


@dataclass
class _Scored:
    """The k best documents of one clause."""

    path: str | None
    inner_hits: dict[str, Any] | None
    best: Nearest = field(default_factory=dict)


@dataclass(frozen=True)
class KnnClause:
    """One k-NN clause of a request: where its vectors are and what it asks."""

    index: str
    field_name: str
    path: str | None
    vector: list[float]
    k: int
    filter: dict[str, Any] | None

    @property
    def leaf(self) -> str:
        return self.field_name[len(self.path) + 1 :] if self.path else self.field_name


class Encoder(Protocol):
    """What a vector field in an encoding keeps of a vector (a stored vector, the query), given by the caller."""

    def stored(self, vector: Sequence[float]) -> list[float]: ...

    def query(self, vector: Sequence[float]) -> list[float]: ...


class KnnStandIn(Behaviour):
    """Answers k-NN clauses of ``_search`` and ``_msearch`` requests; everything else goes to osmem unchanged.

    ``encoding``: what the vector field keeps of a vector, when the caller knows it better than the
    field's mapping says (``encoding_of``); None: read from the mapping (the approximate stand-in)
    or the vectors as written (the exact one).
    """

    def __init__(self, encoding: Encoder | None = None) -> None:
        self.knn_queries = 0
        self.encoding = encoding

    def nearest(self, clause: KnnClause, forward: Forward) -> Nearest:
        """The ``clause.k`` documents nearest to its vector among those its filter lets through."""
        raise NotImplementedError

    def forget(self, index: str) -> None:
        """An index was deleted through the proxy: drop what is known of it."""

    def handle(self, request: Request, forward: Forward) -> Reply:
        if request.method == "DELETE" and (deleted := _INDEX_PATH.match(request.path)):
            for name in deleted["index"].split(","):
                self.forget(name)
            return forward(request)
        if request.method not in ("GET", "POST") or b'"knn"' not in request.body:
            return forward(request)
        if match := _SEARCH_PATH.match(request.path):
            return self._search(request, match["index"], forward)
        if match := _MSEARCH_PATH.match(request.path):
            return self._msearch(request, match["index"], forward)
        return forward(request)

    def _search(self, request: Request, index: str, forward: Forward) -> Reply:
        try:
            body = json.loads(request.body)
            scored: list[_Scored] = []
            body["query"] = self._rewrite(body.get("query", {}), index, forward, scored)
        except KnnError as exc:
            return _error(400, str(exc))
        self.knn_queries += 1
        request.body = json.dumps(body).encode()
        reply = forward(request)
        if reply.status == 200 and any(s.inner_hits is not None for s in scored):
            response = json.loads(reply.body)
            _with_inner_hits(response, scored)
            reply.body = json.dumps(response).encode()
        return reply

    def _msearch(self, request: Request, default_index: str | None, forward: Forward) -> Reply:
        lines = [line for line in request.body.decode().split("\n") if line.strip()]
        if len(lines) % 2:
            return _error(400, "an _msearch body is pairs of lines: header, body")
        out: list[str] = []
        scored_per_search: list[list[_Scored]] = []
        for header_line, body_line in zip(lines[::2], lines[1::2], strict=True):
            header, body = json.loads(header_line), json.loads(body_line)
            scored: list[_Scored] = []
            index = header.get("index") or default_index
            if "knn" in body_line and index:
                try:
                    body["query"] = self._rewrite(body.get("query", {}), str(index), forward, scored)
                except KnnError as exc:
                    return _error(400, str(exc))
                self.knn_queries += 1
            scored_per_search.append(scored)
            out += [json.dumps(header), json.dumps(body)]
        request.body = ("\n".join(out) + "\n").encode()
        reply = forward(request)
        if reply.status == 200 and any(s.inner_hits is not None for scored in scored_per_search for s in scored):
            response = json.loads(reply.body)
            for item, scored in zip(response.get("responses", []), scored_per_search, strict=False):
                _with_inner_hits(item, scored)
            reply.body = json.dumps(response).encode()
        return reply

    # -- the query tree ------------------------------------------------------

    def _rewrite(self, node: Any, index: str, forward: Forward, scored: list[_Scored]) -> Any:
        if isinstance(node, list):
            return [self._rewrite(item, index, forward, scored) for item in node]
        if not isinstance(node, dict):
            return node
        if "nested" in node and isinstance(node["nested"].get("query"), dict) and "knn" in node["nested"]["query"]:
            nested = node["nested"]
            result = _Scored(nested["path"], nested.get("inner_hits"))
            result.best = self.nearest(_clause(nested["query"]["knn"], index, nested["path"]), forward)
            scored.append(result)
            return _as_query(result)
        if "knn" in node:
            result = _Scored(None, None)
            result.best = self.nearest(_clause(node["knn"], index, None), forward)
            scored.append(result)
            return _as_query(result)
        if isinstance(node.get("bool"), dict) and node["bool"].get("should") and node["bool"].get("must"):
            return {"bool": self._conjunction(node["bool"], index, forward, scored)}
        return {key: self._rewrite(value, index, forward, scored) for key, value in node.items()}

    def _conjunction(self, clauses: dict[str, Any], index: str, forward: Forward, scored: list[_Scored]) -> Any:
        """A ``bool`` whose ``must`` holds a k-NN clause: its ``should`` clauses (a named flag, a
        boost) are evaluated on the k documents found only, as a cluster does (Lucene scores the
        optional clauses of a conjunction on the required clauses' documents); osmem would
        evaluate them over the whole index."""
        before = len(scored)
        must = self._rewrite(clauses["must"], index, forward, scored)
        found = [doc_id for result in scored[before:] for doc_id in result.best]
        rewritten = {key: self._rewrite(value, index, forward, scored) for key, value in clauses.items()}
        rewritten["must"] = must
        if len(scored) > before:
            narrowed = {"ids": {"values": found}}
            should = rewritten["should"] if isinstance(rewritten["should"], list) else [rewritten["should"]]
            rewritten["should"] = [{"bool": {"filter": [narrowed], "must": [clause]}} for clause in should]
        return rewritten


def _clause(clause: dict[str, Any], index: str, path: str | None) -> KnnClause:
    if len(clause) != 1:
        raise KnnError("a knn clause names exactly one vector field")
    ((field_name, spec),) = clause.items()
    vector = spec.get("vector")
    k = int(spec.get("k", 10))
    if not isinstance(vector, list) or not vector or k < 1:
        raise KnnError(f"knn on {field_name}: a non-empty vector and k >= 1 are required")
    knn_filter = spec.get("filter")
    return KnnClause(index, field_name, path, vector, k, knn_filter if isinstance(knn_filter, dict) else None)


def _search_upstream(forward: Forward, index: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = forward(
        Request("POST", f"/{index}/_search", "", {"content-type": "application/json"}, json.dumps(body).encode())
    )
    if reply.status != 200:
        raise KnnError(f"the knn filter was refused: {reply.body[:300].decode(errors='replace')}")
    return dict(json.loads(reply.body))


def _filtered(forward: Forward, index: str, knn_filter: Any, *, page: int = PAGE, **extra: Any) -> list[dict[str, Any]]:
    """Every document the filter lets through (paged with ``search_after``; bounded), as osmem's hits with ``extra``."""
    query = knn_filter if isinstance(knn_filter, dict) and knn_filter else {"match_all": {}}
    found: list[dict[str, Any]] = []
    after: list[Any] | None = None
    while True:
        body = {"query": query, "size": page, "sort": ["_doc"], **extra}
        if after is not None:
            body["search_after"] = after
        hits = _search_upstream(forward, index, body)["hits"]["hits"]
        found.extend(hits)
        if len(hits) < page:
            return found
        after = hits[-1].get("sort")
        if len(found) >= MAX_CANDIDATES:
            raise KnnError(f"more than {MAX_CANDIDATES} documents pass the filter: the local stand-in stops here")


class ExactKnn(KnnStandIn):
    """Exact nearest neighbours: every filtered document's vectors read and scored (the reference)."""

    def nearest(self, clause: KnnClause, forward: Forward) -> Nearest:
        vector = self.encoding.query(clause.vector) if self.encoding is not None else clause.vector
        query_norm = math.sqrt(math.fsum(x * x for x in vector)) or 1.0
        candidates: list[tuple[float, str, int, dict[str, Any]]] = []
        for hit in _filtered(forward, clause.index, clause.filter, _source=[clause.path or clause.field_name]):
            source = hit.get("_source") or {}
            elements = _elements(source, clause.path) if clause.path else [source]
            best: tuple[float, int, dict[str, Any]] | None = None
            for offset, element in enumerate(elements):
                stored = element.get(clause.leaf) if isinstance(element, dict) else None
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
                candidates.append((best[0], hit["_id"], best[1], best[2]))
        candidates.sort(key=lambda c: (-c[0], c[1]))
        return {doc_id: (score, offset, element) for score, doc_id, offset, element in candidates[: clause.k]}


# -- the approximate stand-in -----------------------------------------------------------------


def encoding_of(field_mapping: dict[str, Any]) -> str:
    """How a ``knn_vector`` field keeps its vectors: ``float``, ``fp16`` or ``int8`` (from its mapping).

    The hook for cheaper encodings: ``data_type: byte`` (vectors written as bytes), an ``sq``
    encoder (the faiss engine's ``fp16``, Lucene's 7-bit), or ``mode: on_disk`` with a
    ``compression_level`` (2x is fp16, more is 8 bits or fewer: scored here as 8 bits).
    """
    if str(field_mapping.get("data_type", "float")) in ("byte", "binary"):
        return "int8"
    method = field_mapping.get("method") or {}
    encoder = (method.get("parameters") or {}).get("encoder") or {}
    if encoder.get("name") == "sq":
        kind = str((encoder.get("parameters") or {}).get("type", ""))
        return "fp16" if kind == "fp16" or (method.get("engine") == "faiss" and not kind) else "int8"
    level = str(field_mapping.get("compression_level", "1x"))
    if field_mapping.get("mode") == "on_disk" or level != "1x":
        return "fp16" if level == "2x" else "int8"
    return "float"


def _encode(vectors: Any, encoding: str) -> Any:
    """Unit vectors as ``encoding`` keeps them (then scored by cosine, as the engines do)."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    if encoding == "fp16":
        unit = unit.astype(np.float16).astype(np.float32)
    elif encoding == "int8":
        unit = np.clip(np.round(unit * 127.0), -128, 127).astype(np.float32) / 127.0
    else:
        return unit.astype(np.float32)
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    return (unit / np.where(norms == 0, 1.0, norms)).astype(np.float32)


@dataclass
class _Doc:
    stamp: tuple[Any, Any]  # (_version, _seq_no): a write changes it
    labels: list[int]
    elements: list[dict[str, Any]]


class _Graph:
    """One index's vector field: an HNSW graph of every passage seen, and who owns each node."""

    def __init__(self, dimension: int, encoding: str, encoder: Encoder | None = None) -> None:
        import faiss

        self.dimension = dimension
        self.encoding = encoding
        self.encoder = encoder
        self.hnsw = faiss.IndexHNSWFlat(dimension, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        self.hnsw.hnsw.efConstruction = EF_CONSTRUCTION
        self.owner: list[tuple[str, int]] = []  # label -> (doc id, offset)
        self.docs: dict[str, _Doc] = {}

    def put(self, doc_id: str, stamp: tuple[Any, Any], elements: list[Any], leaf: str) -> None:
        import numpy as np

        rows, kept = [], []
        for offset, element in enumerate(elements):
            stored = element.get(leaf) if isinstance(element, dict) else None
            if isinstance(stored, list) and len(stored) == self.dimension:
                rows.append(self.encoder.stored(stored) if self.encoder is not None else stored)
                kept.append(offset)
        labels = list(range(len(self.owner), len(self.owner) + len(rows)))
        if rows:
            self.hnsw.add(_encode(np.asarray(rows, dtype=np.float32), self.encoding))
            self.owner.extend((doc_id, offset) for offset in kept)
        # A rewritten document's old nodes stay in the graph, owned by no current version.
        self.docs[doc_id] = _Doc(stamp, labels, [e if isinstance(e, dict) else {} for e in elements])

    def search(self, query: Any, allowed: list[int], k: int) -> Nearest:
        """The ``k`` documents whose best node among ``allowed`` is nearest to ``query``."""
        import faiss
        import numpy as np

        if not allowed:
            return {}
        ef = max(EF_SEARCH, k)
        want = min(len(allowed), max(4 * k, ef))
        while True:
            if len(allowed) <= ef:
                # As Lucene does when the filter lets through fewer documents than the walk would visit.
                want = len(allowed)
                vectors = self.hnsw.reconstruct_batch(np.asarray(allowed, dtype=np.int64))
                scores = vectors @ query[0]
                order = np.argsort(-scores)[:want]
                labels, sims = np.asarray(allowed)[order], scores[order]
            else:
                mask = np.zeros(self.hnsw.ntotal, dtype=bool)
                mask[allowed] = True
                bitmap = np.packbits(mask, bitorder="little")
                params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
                params.efSearch = max(ef, want)
                params.sel = faiss.IDSelectorBitmap(self.hnsw.ntotal, faiss.swig_ptr(bitmap))
                sims_2d, labels_2d = self.hnsw.search(query, want, params=params)
                labels, sims = labels_2d[0], sims_2d[0]
            best: dict[str, tuple[float, int]] = {}
            for label, sim in zip(labels.tolist(), sims.tolist(), strict=True):
                if label < 0:
                    continue
                doc_id, offset = self.owner[label]
                score = (1.0 + float(sim)) / 2.0
                if doc_id not in best or score > best[doc_id][0]:
                    best[doc_id] = (score, offset)
            if len(best) >= k or want >= len(allowed):
                break
            want = min(len(allowed), want * 4)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:k]
        return {
            doc_id: (
                score,
                offset,
                self.docs[doc_id].elements[offset] if offset < len(self.docs[doc_id].elements) else {},
            )
            for doc_id, (score, offset) in ranked
        }


class HnswKnn(KnnStandIn):
    """Approximate nearest neighbours on an HNSW graph per index and field, filter first (faiss).

    Per clause: the filter runs on osmem for ids and write stamps only (``_version``,
    ``_seq_no``: no vectors travel), the documents new or rewritten since the graph last saw them
    are read and added, and the graph is walked with the filter's documents as its allow-list.
    """

    def __init__(self, encoding: Encoder | None = None) -> None:
        super().__init__(encoding)
        self._graphs: dict[tuple[str, str], _Graph] = {}
        self._encodings: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()
        self.documents_read = 0  # documents whose vectors were read from osmem (new or rewritten)

    def forget(self, index: str) -> None:
        with self._lock:
            for key in [key for key in self._graphs if key[0] == index]:
                del self._graphs[key]
            for key in [key for key in self._encodings if key[0] == index]:
                del self._encodings[key]

    def nearest(self, clause: KnnClause, forward: Forward) -> Nearest:
        import numpy as np

        allowed_hits = _filtered(
            forward, clause.index, clause.filter, page=IDS_PAGE, _source=False, version=True, seq_no_primary_term=True
        )
        by_index: dict[str, list[tuple[str, tuple[Any, Any]]]] = {}
        for hit in allowed_hits:
            by_index.setdefault(hit["_index"], []).append((hit["_id"], (hit.get("_version"), hit.get("_seq_no"))))
        vector = self.encoding.query(clause.vector) if self.encoding is not None else clause.vector
        query = np.asarray([vector], dtype=np.float32)
        norm = float(np.linalg.norm(query)) or 1.0
        query = query / norm
        found: Nearest = {}
        for concrete, allowed in by_index.items():
            with self._lock:
                graph = self._graph(concrete, clause, forward)
                stale = [
                    doc_id for doc_id, stamp in allowed if (doc := graph.docs.get(doc_id)) is None or doc.stamp != stamp
                ]
                self._read(graph, concrete, stale, clause, forward)
                labels = [label for doc_id, _ in allowed if doc_id in graph.docs for label in graph.docs[doc_id].labels]
                found.update(graph.search(query, labels, clause.k))
        ranked = sorted(found.items(), key=lambda item: (-item[1][0], item[0]))[: clause.k]
        return dict(ranked)

    def _graph(self, concrete: str, clause: KnnClause, forward: Forward) -> _Graph:
        key = (concrete, clause.field_name)
        graph = self._graphs.get(key)
        if graph is None or graph.dimension != len(clause.vector):
            # A caller's encoder already gives the vectors as the field keeps them: the graph keeps those.
            encoding = "float" if self.encoding is not None else self._encoding(concrete, clause.field_name, forward)
            graph = _Graph(len(clause.vector), encoding, self.encoding)
            self._graphs[key] = graph
        return graph

    def _encoding(self, concrete: str, field_name: str, forward: Forward) -> str:
        key = (concrete, field_name)
        if key not in self._encodings:
            reply = forward(Request("GET", f"/{concrete}/_mapping", "", {}, b""))
            mapping: dict[str, Any] = {}
            if reply.status == 200:
                parts = field_name.split(".")
                for entry in json.loads(reply.body).values():
                    node: Any = (entry.get("mappings") or {}).get("properties") or {}
                    for depth, part in enumerate(parts):
                        node = (node.get(part) or {}) if isinstance(node, dict) else {}
                        if depth < len(parts) - 1:
                            node = (node.get("properties") or {}) if isinstance(node, dict) else {}
                    mapping = node if isinstance(node, dict) else {}
            self._encodings[key] = encoding_of(mapping)
        return self._encodings[key]

    def _read(self, graph: _Graph, concrete: str, doc_ids: list[str], clause: KnnClause, forward: Forward) -> None:
        for start in range(0, len(doc_ids), PAGE):
            batch = doc_ids[start : start + PAGE]
            body = {
                "query": {"ids": {"values": batch}},
                "size": len(batch),
                "_source": [clause.path or clause.field_name],
                "version": True,
                "seq_no_primary_term": True,
            }
            for hit in _search_upstream(forward, concrete, body)["hits"]["hits"]:
                source = hit.get("_source") or {}
                elements = _elements(source, clause.path) if clause.path else [source]
                graph.put(hit["_id"], (hit.get("_version"), hit.get("_seq_no")), elements, clause.leaf)
                self.documents_read += 1


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


def _with_inner_hits(response: dict[str, Any], scored: list[_Scored]) -> None:
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


def _error(status: int, reason: str) -> Reply:
    body = {"error": {"type": "illegal_argument_exception", "reason": reason}, "status": status}
    return Reply(status, [("Content-Type", "application/json")], json.dumps(body).encode())


def serve(upstream: str, port: int, *, exact: bool = False) -> None:
    """Run the stand-in in the foreground (``python -m devkit.local.knn``)."""

    from devkit.local.servers import serve_until_terminated

    serve_until_terminated(Proxy(upstream, ExactKnn() if exact else HnswKnn(), port=port).start().stop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="osmem-server's URL")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--exact", action="store_true", help="exact search over every filtered document (slow)")
    args = parser.parse_args()
    serve(args.upstream, args.port, exact=args.exact)


if __name__ == "__main__":
    main()
