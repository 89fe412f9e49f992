"""Kill a local OpenSearch node once the process that started it is gone.

``python -m devkit.opensearch.watchdog PARENT NODE``:

A JVM cannot watch its parent, and a test run or a bench that dies must not leave nodes behind
(``devkit.opensearch.node.launch`` with ``exit_with_parent``). The watchdog checks both every half
second and exits with the node; once the parent is gone it asks the node to stop (SIGTERM), then
kills it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except OSError:
        return True


def watch(parent: int, node: int, *, grace: float = 10.0, every: float = 0.5) -> None:
    while _alive(node):
        if not _alive(parent):
            with contextlib.suppress(OSError):
                os.kill(node, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while _alive(node) and time.monotonic() < deadline:
                time.sleep(0.1)
            with contextlib.suppress(OSError):
                os.killpg(node, signal.SIGKILL)
            return
        time.sleep(every)


if __name__ == "__main__":
    watch(int(sys.argv[1]), int(sys.argv[2]))
