"""osmem-server as an engine of the same shape as the real node's (devkit.opensearch.engine.NodeEngine).

``EmulatorEngine`` wraps a running ``osmem_server.OsmemServer``: ``clone()`` gives a space of its own
(an empty osmem clone) with the k-NN stand-in (devkit.local.knn) in front, so meaning search answers
there as on the real node; ``url`` of the space is the stand-in's. Where the emulator still serves —
for speed, or in the differential test that shows where it agrees with the real node — this is how.
"""

from __future__ import annotations

from typing import Any


class EmulatorSpace:
    """An osmem clone behind the k-NN stand-in; ``close()`` drops both."""

    def __init__(self, server: Any) -> None:
        from devkit.faults.proxy import Proxy
        from devkit.local.knn import HnswKnn

        self._clone = server.clone()
        self.clone_url = self._clone.url
        self._proxy = Proxy(self._clone.url, HnswKnn()).start()
        self.url = self._proxy.url
        self.closed = False

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._proxy.stop()
        self._clone.close()

    def __enter__(self) -> EmulatorSpace:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class EmulatorEngine:
    """osmem-server (``server``: an OsmemServer) as an engine: ``url``, ``pid``, ``clone()``."""

    # the stand-in emulates every encoding the mapping names
    vector_encoding: str | None = None
    name = "osmem"

    def __init__(self, server: Any) -> None:
        self.server = server
        self.url = server.url
        self.pid = getattr(server, "pid", None)

    def clone(self) -> EmulatorSpace:
        return EmulatorSpace(self.server)

    def close(self) -> None:  # the server's owner stops it
        return None
