"""Which tests share a process under pytest-xdist, and in what order they start (`make test`).

`make test` runs ``pytest -n auto --dist loadgroup``. pytest-xdist's modes cannot do here what
the suite needs:

- ``worksteal`` gives each process a contiguous slice of the collection: every end-to-end test
  (the soaks, the demo, the CLI runs) landed in the first process and ran one after another, and
  that process alone set the wall time of the run while the other one finished early and stole
  from its tail;
- ``load`` and ``loadscope`` spread tests one at a time or a module at a time, so a module's
  fixture (an OCR pool, a module's indexed world) is set up again in every process that gets one
  of its tests;
- ``loadgroup`` no longer groups anything on pytest 9.2 (pytest-dev/pytest-xdist#1386: it renames
  node ids, which pytest 9.2 ignores), so two tests reading one shared run (``xdist_group``) could
  each pay for it in a different process.

So each worker, while collecting, writes which tests go together (``write_groups``), and the
controller's scheduler (``SharedRunScheduling``, installed by ``pytest_xdist_make_scheduler`` in
tests/conftest.py) reads it:

- tests marked ``xdist_group(name)`` are one unit, run by one process (a shared run: the demo, a soak);
- tests using a module- or class-scoped fixture are one unit with the rest of their module: the
  fixture is set up once;
- every other test is a unit of its own.

Units are handed out in collection order (tests/conftest.py starts the long modules first) to
whichever process is free, each process holding at most one unit beyond the test it runs, so a
long test never waits behind another while a process is idle.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

GROUPS_FILE = "xdist-groups.json"
_SHARED_SCOPES = {"module", "class", "package"}


def group_of(item: pytest.Item) -> str | None:
    """The unit ``item`` runs in with other tests, or None when it can run anywhere on its own."""
    marks = item.iter_markers("xdist_group")
    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")) for mark in marks})
    if names:
        return "group:" + "_".join(names)
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        definitions = info.name2fixturedefs.get(name) if info is not None else None
        if definitions and definitions[-1].scope in _SHARED_SCOPES:
            return "module:" + item.nodeid.split("::", 1)[0]
    return None


def write_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker: the groups of the collection, where the controller's scheduler reads them.

    Every worker collects the same tests and writes the same content (atomically); the controller
    schedules once every worker has finished collecting, so the file is complete by then.
    """
    basetemp = config.getoption("basetemp", None)
    if not basetemp:
        return
    path = Path(basetemp).parent / GROUPS_FILE
    groups = {item.nodeid: group for item in items if (group := group_of(item))}
    partial = path.with_name(f"{GROUPS_FILE}.{os.getpid()}")
    partial.write_text(json.dumps(groups, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)


class SharedRunScheduling(LoadScopeScheduling):
    """xdist's scope scheduling, with the scopes of ``write_groups`` and one unit held ahead per process."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:
            path = self.config._tmp_path_factory.getbasetemp() / GROUPS_FILE
            self._groups = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return self._groups.get(nodeid, nodeid)

    def _reschedule(self, node: Any) -> None:
        """Give ``node`` the next unit once it holds at most one test beyond the one it runs.

        A process must know its next test before it runs one (pytest's ``nextitem``), so it holds
        at least two; xdist's own heuristic (more than two) can leave a long test queued behind
        another long one while a process is idle.
        """
        if node.shutting_down:
            return
        if not self.workqueue:
            node.shutdown()
            return
        if self._pending_of(self.assigned_work[node]) > 1:
            return
        self._assign_work_unit(node)
