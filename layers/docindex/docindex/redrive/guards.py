"""The guards of a ``start``, in the order the service runs them; each returns or raises ``RedriveSkipped``.

``dlq_empty``           nothing to move.
``no_progress``         earlier redrives of this DLQ kept coming back; stopped until ``reset``.
``task_running``        a move task is already ``RUNNING`` for the DLQ (its progress is reported).
``backoff``             waiting: for the last redrive's messages to settle, or the doubling
                        wait after a fruitless round.
``source_backlog``      the queue the messages would go to already holds more than
                        ``REDRIVE_MAX_SOURCE_BACKLOG`` messages (visible + in flight).
``consumer_unhealthy``  OpenSearch is red or unreachable: the consumers would only burn receives.

A guard that judges the last round hands the judged state to ``save`` before it stops the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from docindex.core.exceptions import RedriveSkipped
from docindex.redrive.models import DlqResult, QueueInfo
from docindex.redrive.probes import HealthReport
from docindex.redrive.settings import RedriveSettings
from docindex.redrive.state import RedriveState, judge_round

# An hourly schedule does not fire at exactly the same second every hour; an attempt
# due a few minutes from now is treated as due, so jitter never costs a whole period.
SCHEDULE_SLACK = timedelta(minutes=5)
# Only one active move task per queue: a cancelling task still blocks a new one.
ACTIVE_TASK_STATUSES = frozenset({"RUNNING", "CANCELLING"})

Save = Callable[[RedriveState], None]


def check_not_empty(
    dlq: QueueInfo, state: RedriveState, now: datetime, settings: RedriveSettings, save: Save
) -> RedriveState:
    """``dlq_empty`` when no message is visible (judging a settled round first: empty is progress)."""
    if dlq.visible > 0:
        return state
    # An empty DLQ after a settled redrive is the clearest progress there is.
    if state.pending and not state.halted and state.judge_after and now >= state.judge_after:
        state = judge_round(state, dlq.depth, now, settings).state
        save(state)
    raise RedriveSkipped("dlq_empty", "the DLQ holds no visible message", state)


def check_not_halted(state: RedriveState, dlq: QueueInfo) -> None:
    """``no_progress`` while the DLQ is halted after too many fruitless rounds."""
    if state.halted:
        raise RedriveSkipped(
            "no_progress",
            f"{state.fruitless_rounds} redrives in a row did not shrink this DLQ (now {dlq.depth} "
            "messages): stopped so poison messages are not cycled forever. Fix the cause, "
            "then `reset` (or start with reset)",
            state,
        )


def check_no_task_running(task: Mapping[str, Any] | None, state: RedriveState, result: DlqResult) -> None:
    """``task_running`` while the DLQ's latest move task is active; a failed one's reason goes to ``result``."""
    if task is not None and task.get("Status") in ACTIVE_TASK_STATUSES:
        result.report_task(task)
        raise RedriveSkipped("task_running", "a message move task is already running for this DLQ", state)
    if task is not None and task.get("Status") == "FAILED":
        # Whatever happens next, the operator should see why the last move failed.
        result.failure_reason = task.get("FailureReason")


def check_backoff(
    dlq: QueueInfo, state: RedriveState, now: datetime, settings: RedriveSettings, save: Save
) -> RedriveState:
    """``backoff`` (or ``no_progress``): judge a settled round, and wait out a fruitless one."""
    if state.pending:
        if state.judge_after and now < state.judge_after:
            raise RedriveSkipped(
                "backoff",
                "waiting for the last redrive's messages to be processed before judging it",
                state,
                next_attempt_at=state.judge_after,
            )
        judgement = judge_round(state, dlq.depth, now, settings)
        state = judgement.state
        save(state)
        if state.halted:
            raise RedriveSkipped(
                "no_progress",
                f"the DLQ holds {dlq.depth} messages, {state.depth_at_start} when the last redrive "
                f"started: {state.fruitless_rounds} fruitless rounds, redrive stopped until `reset`",
                state,
            )
        if judgement.fruitless:
            raise RedriveSkipped(
                "backoff",
                f"the last redrive did not shrink the DLQ ({state.depth_at_start} -> {dlq.depth} "
                f"messages): fruitless round {state.fruitless_rounds} of "
                f"{settings.max_fruitless_rounds}, waiting before the next attempt",
                state,
            )
    if state.next_attempt_at and now < state.next_attempt_at - SCHEDULE_SLACK:
        raise RedriveSkipped("backoff", "waiting before the next attempt after a fruitless redrive", state)
    return state


def check_source_backlog(state: RedriveState, targets: list[QueueInfo], limit: int) -> None:
    """``source_backlog`` when a target queue holds more than ``limit`` visible + in-flight messages."""
    backed_up = [t for t in targets if t.visible + t.in_flight > limit]
    if backed_up:
        worst = max(backed_up, key=lambda t: t.visible + t.in_flight)
        raise RedriveSkipped(
            "source_backlog",
            f"{worst.arn} already holds {worst.visible} visible + {worst.in_flight} in-flight "
            f"messages (limit REDRIVE_MAX_SOURCE_BACKLOG={limit})",
            state,
        )


def check_consumer_health(state: RedriveState, report: HealthReport | None) -> None:
    """``consumer_unhealthy`` when the health check failed (no check configured: no guard)."""
    if report is not None and not report.healthy:
        raise RedriveSkipped("consumer_unhealthy", report.detail, state)
