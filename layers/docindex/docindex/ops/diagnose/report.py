"""The diagnose report: one ``Check`` per verdict, the ``Diagnosis`` that sums them up, the exit status.

The CLI renders it (table, colours, ``--json``); everything it shows comes from
here: each check's status, summary, evidence and fix, the counts per status and
the exit code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from docindex.ops.deployment import Deployment


class Status(StrEnum):
    OK = "OK"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


# A skipped check is no finding: it weighs as much as a passing one.
SEVERITY = {Status.SKIP: 0, Status.OK: 0, Status.WARN: 1, Status.FAIL: 2}


def worst(statuses: Iterable[Status]) -> Status:
    """The most severe of several statuses (the first of equals); at least one is needed."""
    return max(statuses, key=SEVERITY.__getitem__)


def duration(hours: float) -> str:
    """Hours as a reader wants them: minutes under an hour, hours under two days, then days."""
    if hours < 1:
        return f"{max(1, round(hours * 60))} min"
    if hours < 48:
        return f"{hours:.1f} hours"
    return f"{hours / 24:.1f} days"


@dataclass
class Check:
    """One verdict: status, a one-line summary, the evidence, and the fix when needed."""

    id: str
    title: str
    status: Status
    summary: str
    evidence: list[str] = field(default_factory=list)
    fix: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The check as ``--json`` prints it (``fix`` and ``data`` only when present)."""
        out: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "status": self.status.value,
            "summary": self.summary,
            "evidence": self.evidence,
        }
        if self.fix:
            out["fix"] = self.fix
        if self.data:
            out["data"] = self.data
        return out


# The ``--json`` schema's version: bumped when a field changes meaning or disappears (docs/operations.md).
JSON_VERSION = 1


@dataclass
class Diagnosis:
    """Every check of one run, against one deployment."""

    deployment: Deployment
    checks: list[Check]

    @property
    def status(self) -> Status:
        """The worst status of any check (OK when every check passed or was skipped)."""
        worst_severity = max((SEVERITY[c.status] for c in self.checks), default=0)
        return {0: Status.OK, 1: Status.WARN, 2: Status.FAIL}[worst_severity]

    @property
    def nothing_checked(self) -> bool:
        """Every check was skipped: the run says nothing about the deployment."""
        return all(c.status is Status.SKIP for c in self.checks)

    @property
    def exit_code(self) -> int:
        """0 every check OK or skipped, 1 at least one WARN, 2 at least one FAIL or nothing checked."""
        if self.nothing_checked:
            return 2
        return SEVERITY[self.status]

    @property
    def counts(self) -> dict[str, int]:
        """How many checks have each status, every status present (``{"OK": 7, "WARN": 1, ...}``)."""
        counts = Counter(c.status.value for c in self.checks)
        return {s.value: counts.get(s.value, 0) for s in Status}

    def to_dict(self) -> dict[str, Any]:
        """The whole diagnosis as ``--json`` prints it."""
        return {
            "version": JSON_VERSION,
            "status": "FAIL" if self.nothing_checked else self.status.value,
            "exit_code": self.exit_code,
            "counts": self.counts,
            "deployment": self.deployment.to_dict(),
            "checks": [c.to_dict() for c in self.checks],
        }
