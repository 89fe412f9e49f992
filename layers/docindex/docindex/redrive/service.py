"""DLQ redrive: move dead-lettered messages back with SQS ``StartMessageMoveTask``, only when it is safe.

One service backs the ``redrive`` Lambda (scheduled and manual) and ``docindex redrive``.
For every configured DLQ a ``start`` run checks the guards (``docindex.redrive.guards``, in
order) and reports the first that stops it (``skipped`` with a ``reason``); ``status``,
``cancel`` and ``reset`` report on, cancel, or clear the no-progress state
(``docindex.redrive.state``) of each DLQ.

Clients are passed in: ``sqs`` for queue attributes and dead-letter sources (queue URLs
are built from the ARNs, so no ``sqs:GetQueueUrl`` is needed), ``move_tasks`` for the
three message-move operations (the same SQS client in production; tests stub it, since
the local AWS endpoint has no such API), a DynamoDB client for the state and an optional
consumer health check. ``docindex.redrive.wiring`` builds them from the environment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.aws import queue_name
from docindex.core.exceptions import RedriveSkipped
from docindex.redrive import guards
from docindex.redrive.errors import classify_error
from docindex.redrive.models import (
    MIN_VELOCITY,
    MOVE_TASK_OPERATIONS,
    DlqResult,
    Outcome,
    QueueInfo,
    RedriveAction,
    RedriveRequest,
    RedriveSummary,
    iso,
    utc_now,
)
from docindex.redrive.probes import ConsumerHealth, HealthReport, ThroughputProbe
from docindex.redrive.queues import describe_queue, source_queues
from docindex.redrive.settings import RedriveSettings
from docindex.redrive.state import RedriveState, RedriveStateStore, settle_time

logger = Logger(child=True)


class MoveTaskApi(Protocol):
    """The three SQS message-move operations (a boto3 SQS client has them)."""

    def start_message_move_task(self, **kwargs: Any) -> dict[str, Any]: ...

    def list_message_move_tasks(self, **kwargs: Any) -> dict[str, Any]: ...

    def cancel_message_move_task(self, **kwargs: Any) -> dict[str, Any]: ...


class RedriveService:
    """Decides, per DLQ, whether to start, report, cancel or reset a message move task."""

    def __init__(
        self,
        *,
        settings: RedriveSettings,
        sqs: Any,
        move_tasks: MoveTaskApi,
        state: RedriveStateStore,
        health: ConsumerHealth | None = None,
        clock: Callable[[], datetime] = utc_now,
        throughput: ThroughputProbe | None = None,
    ) -> None:
        self.settings = settings
        self._sqs = sqs
        self._moves = move_tasks
        self._state = state
        self._health = health
        self._clock = clock
        self._throughput = throughput
        self._health_report: HealthReport | None = None

    # -- entry point

    def run(self, request: RedriveRequest) -> RedriveSummary:
        """Handle every DLQ of the request; one DLQ's failure never stops the others."""
        dlqs = (request.dlq_arn,) if request.dlq_arn else self.settings.configured_dlqs()
        self._health_report = None
        results = [self._handle(request, dlq) for dlq in dlqs]
        return RedriveSummary(action=str(request.action), dry_run=request.dry_run, results=results)

    def _handle(self, request: RedriveRequest, dlq_ref: str) -> DlqResult:
        result = DlqResult(dlq_arn=dlq_ref)
        try:
            dlq = describe_queue(self._sqs, dlq_ref)
            result.dlq_arn = dlq.arn
            result.approximate_messages = dlq.visible
            actions = {
                RedriveAction.START: self._start,
                RedriveAction.STATUS: self._status,
                RedriveAction.CANCEL: self._cancel,
                RedriveAction.RESET: self._reset,
            }
            actions[request.action](request, dlq, result)
        except Exception as exc:  # one DLQ's failure must not stop the others
            error = classify_error(exc, self._endpoint_for(exc))
            if error.reason == "internal_error":
                logger.exception("redrive failed unexpectedly", extra={"dlq_arn": result.dlq_arn})
            result.status = Outcome.ERROR
            result.reason = error.reason
            result.message = error.message
        logger.info("redrive decision", extra={"action": str(request.action), "result": result.to_dict()})
        return result

    def _endpoint_for(self, exc: Exception) -> str | None:
        operation = getattr(exc, "operation_name", None)
        client = self._moves if operation in MOVE_TASK_OPERATIONS else self._sqs
        meta = getattr(client, "meta", None)
        return getattr(meta, "endpoint_url", None)

    # -- facts

    def _sources(self, dlq: QueueInfo, result: DlqResult) -> list[QueueInfo]:
        sources = source_queues(self._sqs, dlq)
        result.source_arn = sources[0].arn
        return sources

    def _latest_task(self, dlq_arn: str) -> dict[str, Any] | None:
        tasks = self._moves.list_message_move_tasks(SourceArn=dlq_arn, MaxResults=1).get("Results", [])
        return tasks[0] if tasks else None

    def _consumer_health(self) -> HealthReport | None:
        if self._health is None:
            return None
        if self._health_report is None:  # once per run, shared by every DLQ
            self._health_report = self._health.check()
        return self._health_report

    def _save(self, request: RedriveRequest, state: RedriveState) -> None:
        if not request.dry_run:
            self._state.save(replace(state, updated_at=self._clock()))

    # -- actions

    def _start(self, request: RedriveRequest, dlq: QueueInfo, result: DlqResult) -> None:
        now = self._clock()
        sources = self._sources(dlq, result)
        destination = self._destination(request, dlq, sources)
        result.destination_arn = destination
        targets = [describe_queue(self._sqs, destination)] if destination else sources
        velocity, basis = self._velocity(request, dlq, targets)
        result.velocity = velocity

        state = self._state.load(dlq.arn)
        if request.reset:
            if not request.dry_run:
                self._state.delete(dlq.arn)
            state = RedriveState(dlq_arn=dlq.arn)
        save = partial(self._save, request)
        try:
            state = guards.check_not_empty(dlq, state, now, self.settings, save)
            guards.check_not_halted(state, dlq)
            guards.check_no_task_running(self._latest_task(dlq.arn), state, result)
            state = guards.check_backoff(dlq, state, now, self.settings, save)
            guards.check_source_backlog(state, targets, self.settings.max_source_backlog)
            guards.check_consumer_health(state, self._consumer_health())
        except RedriveSkipped as skip:
            result.status, result.reason, result.message = Outcome.SKIPPED, skip.reason, skip.message
            result.fruitless_rounds = skip.state.fruitless_rounds
            result.next_attempt_at = iso(skip.next_attempt_at or skip.state.next_attempt_at)
            return
        result.fruitless_rounds = state.fruitless_rounds
        if request.dry_run:
            result.status, result.reason = Outcome.DRY_RUN, "would_start"
            result.message = f"every guard passed: would move about {dlq.visible} messages at {velocity}/s{basis}"
            return

        params: dict[str, Any] = {"SourceArn": dlq.arn, "MaxNumberOfMessagesPerSecond": velocity}
        if destination:
            params["DestinationArn"] = destination
        handle = self._moves.start_message_move_task(**params)["TaskHandle"]
        result.status, result.task_handle, result.started_at = Outcome.STARTED, handle, iso(now)
        result.to_move = dlq.visible
        result.message = f"moving about {dlq.visible} messages at {velocity}/s{basis}"
        state = replace(
            state,
            pending=True,
            depth_at_start=dlq.depth,
            started_at=now,
            task_handle=handle,
            velocity=velocity,
            judge_after=now + settle_time(dlq.depth, velocity, targets),
            next_attempt_at=None,
        )
        try:
            self._save(request, state)
        except (ClientError, BotoCoreError) as exc:
            # The task runs; only the no-progress bookkeeping of this round is lost.
            logger.exception("redrive started but its state was not saved", extra={"dlq_arn": dlq.arn})
            result.message += f"; warning: state not saved ({classify_error(exc).message})"

    def _destination(self, request: RedriveRequest, dlq: QueueInfo, sources: list[QueueInfo]) -> str | None:
        """Where the messages go: always named explicitly when it can be.

        The request's ``destination_arn``, else ``REDRIVE_DESTINATIONS``, else the DLQ's only
        source queue. A message that never came from an SQS queue (EventBridge dead-letters
        undeliverable events straight into the ingest DLQ) has no original source, and a
        task without ``DestinationArn`` fails on it. Only a DLQ with several sources and no
        configured destination is left to SQS (back to each message's own source).
        """
        configured = request.destination_arn or self.settings.destinations.get(dlq.arn)
        if configured:
            return configured
        return sources[0].arn if len(sources) == 1 else None

    def _velocity(self, request: RedriveRequest, dlq: QueueInfo, targets: list[QueueInfo]) -> tuple[int, str]:
        """The velocity for this start, and a few words on where it comes from."""
        configured = self.settings.velocity_for(dlq.arn)
        fraction = self.settings.adaptive_fraction
        if request.velocity is not None:
            return request.velocity, ""
        if self._throughput is None or fraction <= 0:
            return configured, ""
        try:
            rate = sum(self._throughput.per_second(queue_name(t.arn)) for t in targets)
        except (ClientError, BotoCoreError) as exc:
            logger.warning("no consumer throughput; configured velocity used", extra={"error": str(exc)})
            return configured, " (configured; consumer throughput unavailable)"
        if rate <= 0:
            return configured, " (configured; no deletes measured in the window)"
        velocity = max(MIN_VELOCITY, min(configured, int(rate * fraction)))
        return velocity, f" (adaptive: {fraction:g} of the consumer's {rate:.1f}/s, at most {configured}/s)"

    def _status(self, request: RedriveRequest, dlq: QueueInfo, result: DlqResult) -> None:
        self._sources(dlq, result)
        state = self._state.load(dlq.arn)
        result.fruitless_rounds = state.fruitless_rounds
        result.next_attempt_at = iso(state.next_attempt_at or (state.judge_after if state.pending else None))
        task = self._latest_task(dlq.arn)
        if task is None:
            result.status = Outcome.IDLE
            result.message = "no message move task has run for this DLQ"
        else:
            result.report_task(task)
            result.status = str(task.get("Status", "unknown")).lower()
            result.reason = result.failure_reason
        if state.halted:
            result.reason = "no_progress"
            result.message = "redrive stopped after fruitless rounds; `reset` once the cause is fixed"

    def _cancel(self, request: RedriveRequest, dlq: QueueInfo, result: DlqResult) -> None:
        self._sources(dlq, result)
        task = self._latest_task(dlq.arn)
        if task is None or task.get("Status") != "RUNNING":
            if task is not None:
                result.report_task(task)
            result.status, result.reason = Outcome.SKIPPED, "no_running_task"
            result.message = "no message move task is running for this DLQ"
            return
        result.report_task(task)
        if request.dry_run:
            result.status, result.reason = Outcome.DRY_RUN, "would_cancel"
            return
        response = self._moves.cancel_message_move_task(TaskHandle=task["TaskHandle"])
        result.status = Outcome.CANCELLED
        result.moved = response.get("ApproximateNumberOfMessagesMoved", result.moved)
        result.message = "cancelled; messages already moved stay moved"

    def _reset(self, request: RedriveRequest, dlq: QueueInfo, result: DlqResult) -> None:
        previous = self._state.load(dlq.arn)
        result.fruitless_rounds = previous.fruitless_rounds
        if request.dry_run:
            result.status, result.reason = Outcome.DRY_RUN, "would_reset"
            return
        self._state.delete(dlq.arn)
        result.status = Outcome.RESET
        result.message = (
            f"no-progress state cleared (was {previous.fruitless_rounds} fruitless rounds"
            f"{', halted' if previous.halted else ''}); the next start may redrive"
        )
