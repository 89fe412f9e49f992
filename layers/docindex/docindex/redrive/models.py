"""What a redrive is asked and what it answers: the request, the per-DLQ result, the facts of a queue.

The lowest module of the package (it imports nothing else from ``docindex.redrive``): the
constants and the velocity check that settings, guards and the service share live here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from docindex.core.exceptions import RedriveConfigError
from docindex.core.settings import describe_validation_error

MIN_VELOCITY = 1
# SQS refuses MaxNumberOfMessagesPerSecond above 500.
MAX_VELOCITY = 500
MOVE_TASK_OPERATIONS = frozenset({"StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask"})
UNSUPPORTED_REASON = "unsupported by this endpoint"


def check_velocity(value: int) -> int:
    """Validate a MaxNumberOfMessagesPerSecond value: 1..500 or a clear error."""
    if isinstance(value, bool) or not MIN_VELOCITY <= value <= MAX_VELOCITY:
        raise ValueError(
            f"velocity must be between {MIN_VELOCITY} and {MAX_VELOCITY} messages per second "
            f"(the SQS limit for MaxNumberOfMessagesPerSecond), got {value}"
        )
    return value


def utc_now() -> datetime:
    """The service's default clock."""
    return datetime.now(UTC)


def iso(moment: datetime | None) -> str | None:
    """A moment as the results and the state item write it (UTC, whole seconds)."""
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- request


class RedriveAction(StrEnum):
    START = "start"
    STATUS = "status"
    CANCEL = "cancel"
    RESET = "reset"


class RedriveRequest(BaseModel):
    """The Lambda event (and the CLI's arguments): what to do, to which DLQ(s)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: RedriveAction
    dlq_arn: str | None = None
    velocity: int | None = None
    dry_run: bool = False
    # With start: clear the no-progress state first (a human says the cause is fixed).
    reset: bool = False
    destination_arn: str | None = None

    @field_validator("velocity")
    @classmethod
    def _velocity_in_range(cls, value: int | None) -> int | None:
        return None if value is None else check_velocity(value)

    @model_validator(mode="after")
    def _consistent(self) -> RedriveRequest:
        if self.destination_arn and not self.dlq_arn:
            raise ValueError("destination_arn needs dlq_arn: each DLQ has its own destination")
        if self.reset and self.action is not RedriveAction.START:
            raise ValueError("reset is a flag of start; use action 'reset' on its own to only clear state")
        return self

    @classmethod
    def from_event(cls, event: Any) -> RedriveRequest:
        """Parse a Lambda event (a scheduled run delivers ``{"action": "start"}``)."""
        if not isinstance(event, Mapping):
            raise RedriveConfigError(f"invalid redrive request: expected a JSON object, got {event!r}")
        try:
            return cls.model_validate(dict(event))
        except ValidationError as exc:
            raise RedriveConfigError(f"invalid redrive request: {describe_validation_error(exc)}") from None


# --------------------------------------------------------------------------- results


class Outcome(StrEnum):
    STARTED = "started"
    SKIPPED = "skipped"
    DRY_RUN = "dry_run"
    CANCELLED = "cancelled"
    RESET = "reset"
    IDLE = "idle"
    ERROR = "error"
    # status: the most recent move task's own status, lower-cased
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLING = "cancelling"
    FAILED = "failed"


@dataclass
class DlqResult:
    """What happened to one DLQ, and why; ``to_dict`` is the JSON the caller sees."""

    dlq_arn: str
    status: str = Outcome.ERROR
    reason: str | None = None
    message: str | None = None
    source_arn: str | None = None
    destination_arn: str | None = None
    velocity: int | None = None
    task_handle: str | None = None
    approximate_messages: int | None = None
    moved: int | None = None
    to_move: int | None = None
    failure_reason: str | None = None
    started_at: str | None = None
    fruitless_rounds: int | None = None
    next_attempt_at: str | None = None

    def report_task(self, task: Mapping[str, Any]) -> None:
        """Copy what a ``ListMessageMoveTasks`` entry says about its task into this result."""
        self.task_handle = task.get("TaskHandle")
        self.moved = task.get("ApproximateNumberOfMessagesMoved")
        self.to_move = task.get("ApproximateNumberOfMessagesToMove")
        self.failure_reason = task.get("FailureReason")
        if task.get("MaxNumberOfMessagesPerSecond") is not None:
            self.velocity = int(task["MaxNumberOfMessagesPerSecond"])
        if task.get("DestinationArn"):
            self.destination_arn = task["DestinationArn"]
        started = task.get("StartedTimestamp")
        if started is not None:
            self.started_at = iso(datetime.fromtimestamp(int(started) / 1000, UTC))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = str(self.status)
        return data


@dataclass
class RedriveSummary:
    action: str
    dry_run: bool
    results: list[DlqResult]

    @property
    def has_errors(self) -> bool:
        return any(r.status == Outcome.ERROR for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "dry_run": self.dry_run,
            "results": [r.to_dict() for r in self.results],
        }


# --------------------------------------------------------------------------- queues


@dataclass(frozen=True)
class QueueInfo:
    """One queue as ``GetQueueAttributes`` describes it (a DLQ, its sources or a destination)."""

    arn: str
    url: str
    visible: int = 0
    in_flight: int = 0
    delayed: int = 0
    visibility_timeout: int = 30
    max_receive_count: int = 1

    @property
    def depth(self) -> int:
        return self.visible + self.in_flight + self.delayed
