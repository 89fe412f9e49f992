"""Backlog verdicts: does each queue drain, and in how long, at the consumer's recent throughput?"""

from __future__ import annotations

from typing import Any

from docindex.ops.diagnose.facts.queues import BacklogFacts
from docindex.ops.diagnose.report import Check, Status, duration

# A backlog that takes longer than this to drain is worth a warning.
SLOW_DRAIN_HOURS = 24.0


def judge_backlog(facts: BacklogFacts) -> Check:
    """Queue depth now against the consumer's recent throughput: drains in N hours, or grows."""
    check_id, title = f"backlog-{facts.label}", f"{facts.label} backlog"
    evidence = [f"depth now: {facts.depth} (visible + in flight + delayed)"]
    data: dict[str, Any] = {"depth": facts.depth}
    if facts.inflow_per_minute is not None and facts.outflow_per_minute is not None:
        evidence.append(
            f"{facts.window}: {facts.inflow_per_minute:.1f}/min sent, {facts.outflow_per_minute:.1f}/min processed"
        )
        net = facts.inflow_per_minute - facts.outflow_per_minute
        data.update(inflow_per_minute=facts.inflow_per_minute, outflow_per_minute=facts.outflow_per_minute)
    elif facts.net_per_minute is not None:
        evidence.append(f"{facts.window}: depth changes by {facts.net_per_minute:+.1f}/min")
        net = facts.net_per_minute
    else:
        net = None
    data["net_per_minute"] = net
    status, summary, needs_fix = _backlog_verdict(facts, net, data)
    fix = None
    if needs_fix:
        if facts.paused:
            fix = "docindex resume"
        elif facts.local:
            fix = "run the consumers: docindex local run"
        else:
            fix = (
                "raise the consumer's throughput (IndexerMaxConcurrency / WorkerMaxTasks), or find why it fails: "
                "see the dlq and event-source checks"
            )
    return Check(check_id, title, status, summary, evidence, fix, data)


def _backlog_verdict(facts: BacklogFacts, net: float | None, data: dict[str, Any]) -> tuple[Status, str, bool]:
    """(status, summary, whether the consumer needs attention)."""
    paused_note = f" (paused by `docindex pause` since {facts.paused.paused_at})" if facts.paused else ""
    if facts.depth == 0:
        return Status.OK, "empty", False
    if net is None:
        return Status.WARN, f"{facts.depth} messages waiting; no throughput data", False
    if net > 0:
        status = Status.WARN if facts.paused else Status.FAIL
        return (
            status,
            f"growing by {net:.1f}/min: the consumers cannot keep up, the backlog never drains{paused_note}",
            True,
        )
    if net == 0:
        stuck = "arrive as fast as they are processed" if facts.outflow_per_minute else "are not consumed"
        return Status.WARN, f"not shrinking: messages {stuck}{paused_note}", True
    hours = facts.depth / -net / 60
    retention_hours = facts.retention_seconds / 3600
    data["drain_hours"] = round(hours, 2)
    summary = f"drains in {duration(hours)} ({-net:.1f}/min net)"
    status = Status.OK
    if hours > retention_hours:
        status = Status.FAIL
        summary += f": longer than the {duration(retention_hours)} retention, messages will expire unprocessed"
    elif hours > SLOW_DRAIN_HOURS:
        status = Status.WARN
    return status, summary, status is not Status.OK
