"""A real OpenSearch node as the tests, benches and soak use it: one node, and spaces on it.

``NodeEngine`` is to a real node what ``osmem_server.OsmemServer`` is to the emulator: ``url``,
``clone()`` and ``close()``. A clone of osmem is an empty copy on a port of its own; a node cannot be
copied, so ``clone()`` gives a ``Space`` on the same node that remembers what the node held when it
was opened, and whose ``close()`` deletes what was made since — indexes (with their aliases), index
and component templates, ingest pipelines, snapshot repositories. Spaces are opened and closed in
stack order by one process (a module's shared stack, then each test's own), so the innermost one owns
what appeared while it was open. Indexes whose names start with a dot (the plugins' own) are left alone.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from devkit.local.servers import ServerInfo


def _request(url: str, method: str = "GET", body: Any = None, timeout: float = 60.0) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)  # noqa: S310  # http only
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310  # our own node on loopback  # nosec B310
        raw = response.read()
    return json.loads(raw) if raw else None


class Space:
    """What a test or a module may change on a shared node, removed again on ``close()``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._before = self._holdings()
        self.closed = False

    def _get(self, path: str) -> Any:
        """GET ``path``; None where the node has none of them (some listings answer 404 when empty)."""
        try:
            return _request(f"{self.url}/{path}")
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise

    def _holdings(self) -> dict[str, set[str]]:
        indexes = {row["index"] for row in self._get("_cat/indices?format=json&h=index&expand_wildcards=all") or []}
        templates = {t["name"] for t in (self._get("_index_template") or {}).get("index_templates") or []}
        legacy = set(self._get("_template") or {})
        components = {t["name"] for t in (self._get("_component_template") or {}).get("component_templates") or []}
        pipelines = set(self._get("_ingest/pipeline") or {})
        repositories = set(self._get("_snapshot") or {})
        return {
            "indexes": indexes,
            "templates": templates,
            "legacy_templates": legacy,
            "components": components,
            "pipelines": pipelines,
            "repositories": repositories,
        }

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            now = self._holdings()
        except (urllib.error.URLError, OSError):
            return  # the node is gone (a drill stopped it): nothing left to remove
        made = {kind: now[kind] - self._before[kind] for kind in now}
        paths = {
            "templates": "_index_template",
            "legacy_templates": "_template",
            "components": "_component_template",
            "pipelines": "_ingest/pipeline",
            "repositories": "_snapshot",
        }
        indexes = sorted(name for name in made["indexes"] if not name.startswith("."))
        for chunk in range(0, len(indexes), 50):
            names = ",".join(urllib.parse.quote(n, safe="") for n in indexes[chunk : chunk + 50])
            self._delete(f"{self.url}/{names}?ignore_unavailable=true")
        for kind, path in paths.items():
            for name in sorted(made[kind]):
                self._delete(f"{self.url}/{path}/{urllib.parse.quote(name, safe='')}")

    @staticmethod
    def _delete(url: str) -> None:
        try:
            _request(url, "DELETE")
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise

    def __enter__(self) -> Space:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class NodeEngine:
    """One real OpenSearch node started for this process (stopped with it): ``url``, ``clone()``, ``close()``."""

    # The vector encoding the node serves: Lucene's (its k-NN plugin has no Faiss library), float32 for the
    # exact scores production's rescored bq4 returns (devkit.local.session.LOCAL_NODE_VECTOR_ENCODING).
    vector_encoding = "fp32"
    name = "opensearch"

    def __init__(self, info: ServerInfo, state_dir: Path) -> None:
        self.info = info
        self.state_dir = state_dir
        self.url = info.url
        self.pid = info.pid

    @classmethod
    def start(cls, state_dir: Path, *, settings: dict[str, Any] | None = None) -> NodeEngine:
        from devkit.opensearch.node import start_node

        return cls(start_node(state_dir, exit_with_parent=True, settings=settings), state_dir)

    def clone(self) -> Space:
        return Space(self.url)

    def close(self) -> None:
        from devkit.opensearch.node import stop

        stop(self.info)
