"""DLQ redrive: move dead-lettered messages back with SQS ``StartMessageMoveTask``, only when it is safe.

One service backs the ``redrive`` Lambda (scheduled and manual) and ``docindex redrive``.
For every configured DLQ a ``start`` run checks, in this order, and reports the first
guard that stops it (``skipped`` with a ``reason``):

``dlq_empty``           nothing to move.
``no_progress``         earlier redrives of this DLQ kept coming back; stopped until ``reset``.
``task_running``        a move task is already ``RUNNING`` for the DLQ (its progress is reported).
``backoff``             waiting: for the last redrive's messages to settle, or the doubling
                        wait after a fruitless round.
``source_backlog``      the queue the messages would go to already holds more than
                        ``REDRIVE_MAX_SOURCE_BACKLOG`` messages (visible + in flight).
``consumer_unhealthy``  OpenSearch is red or unreachable: the consumers would only burn receives.

The no-loop rule (docs/dlq-redrive.md, "Why a redrive can stop itself"): when a redrive
starts, the DLQ's depth is recorded in DynamoDB. Once its messages have had time to fail
again (``maxReceiveCount`` x visibility timeout of the source, plus the move itself), the
next run compares: a DLQ holding no fewer messages than before is a *fruitless round*.
Each fruitless round doubles the wait before the next attempt; after
``REDRIVE_MAX_FRUITLESS_ROUNDS`` of them the DLQ is halted (``no_progress``) until a human
resets it (``action: reset`` / ``docindex redrive reset``). A round that drained the DLQ
clears the count.

Clients are passed in: ``sqs`` for queue attributes and dead-letter sources (queue URLs
are built from the ARNs, so no ``sqs:GetQueueUrl`` is needed), ``move_tasks`` for the
three message-move operations (the same SQS client in production; tests stub it, since
the local AWS endpoint has no such API), a DynamoDB client for the state and an optional
consumer health check.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import lru_cache
from typing import Any, ClassVar, Literal, Protocol

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from docindex.core.settings import EnvSettings, check_endpoint, describe_validation_error

logger = Logger(child=True)

MIN_VELOCITY = 1
# SQS refuses MaxNumberOfMessagesPerSecond above 500.
MAX_VELOCITY = 500
STATE_ID_PREFIX = "redrive#"
# An hourly schedule does not fire at exactly the same second every hour; an attempt
# due a few minutes from now is treated as due, so jitter never costs a whole period.
SCHEDULE_SLACK = timedelta(minutes=5)
# Never judge a redrive sooner than this after it started, whatever the queues say.
MIN_SETTLE = timedelta(minutes=1)
MOVE_TASK_OPERATIONS = frozenset({"StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask"})
UNSUPPORTED_REASON = "unsupported by this endpoint"
# Only one active move task per queue: a cancelling task still blocks a new one.
ACTIVE_TASK_STATUSES = frozenset({"RUNNING", "CANCELLING"})
# Where an operator finds the permissions the redrive needs (named in access_denied messages).
PERMISSIONS_DOC = 'docs/dlq-redrive.md, "Metrics and permissions"'


class RedriveConfigError(ValueError):
    """The environment or the request does not describe a usable redrive."""


# --------------------------------------------------------------------------- settings


def check_velocity(value: int) -> int:
    """Validate a MaxNumberOfMessagesPerSecond value: 1..500 or a clear error."""
    if isinstance(value, bool) or not MIN_VELOCITY <= value <= MAX_VELOCITY:
        raise ValueError(
            f"velocity must be between {MIN_VELOCITY} and {MAX_VELOCITY} messages per second "
            f"(the SQS limit for MaxNumberOfMessagesPerSecond), got {value}"
        )
    return value


class RedriveSettings(EnvSettings):
    """Redrive configuration; field aliases are the environment variable names."""

    config_error: ClassVar[type[ValueError]] = RedriveConfigError
    config_label: ClassVar[str] = "redrive"

    # Comma-separated DLQ ARNs (or URLs). Empty: the ingest and OCR DLQs below.
    dlq_arns: tuple[str, ...] = Field((), alias="REDRIVE_DLQ_ARNS")
    ingest_dlq_arn: str | None = Field(None, alias="INGEST_DLQ_ARN")
    ocr_dlq_arn: str | None = Field(None, alias="OCR_DLQ_ARN")
    # What `docindex local up` writes; used when no ARN is configured.
    ingest_dlq_url: str | None = Field(None, alias="INGEST_DLQ_URL")
    ocr_dlq_url: str | None = Field(None, alias="OCR_DLQ_URL")

    velocity: int = Field(10, alias="REDRIVE_VELOCITY")
    # JSON object {"<dlq arn>": velocity}: per-DLQ overrides of REDRIVE_VELOCITY.
    velocities: dict[str, int] = Field(default_factory=dict, alias="REDRIVE_VELOCITIES")
    # JSON object {"<dlq arn>": "<destination arn>"}; a DLQ not named here is redriven to its
    # only source queue (named as DestinationArn), or, with several, back to each message's own.
    destinations: dict[str, str] = Field(default_factory=dict, alias="REDRIVE_DESTINATIONS")

    state_table: str = Field(alias="REDRIVE_STATE_TABLE")
    max_source_backlog: int = Field(1000, alias="REDRIVE_MAX_SOURCE_BACKLOG", ge=0)
    max_fruitless_rounds: int = Field(3, alias="REDRIVE_MAX_FRUITLESS_ROUNDS", ge=1)
    # Wait after the first fruitless round; doubled after each further one.
    backoff_seconds: int = Field(3600, alias="REDRIVE_BACKOFF_SECONDS", ge=0)

    opensearch_endpoint: str | None = Field(None, alias="OPENSEARCH_ENDPOINT")
    opensearch_index: str = Field("documents", alias="OPENSEARCH_INDEX")
    opensearch_auth: Literal["sigv4", "none"] = Field("sigv4", alias="OPENSEARCH_AUTH")
    opensearch_service: Literal["es", "aoss"] = Field("es", alias="OPENSEARCH_SERVICE")
    health_timeout_seconds: float = Field(5.0, alias="REDRIVE_HEALTH_TIMEOUT_SECONDS", gt=0)
    # Adaptive velocity: 0 = off; else a redrive adds at most this fraction of what the
    # consumer proved it can take (CloudWatch NumberOfMessagesDeleted over the window),
    # never more than the configured velocity.
    adaptive_fraction: float = Field(0.0, alias="REDRIVE_ADAPTIVE_FRACTION", ge=0, le=1)
    adaptive_window_seconds: int = Field(3600, alias="REDRIVE_ADAPTIVE_WINDOW_SECONDS", ge=60)

    aws_region: str = Field("us-east-1", alias="AWS_REGION")

    @field_validator("dlq_arns", mode="before")
    @classmethod
    def _split_arns(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("velocities", "destinations", mode="before")
    @classmethod
    def _parse_json_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                return {}
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ValueError(f"must be a JSON object keyed by DLQ ARN ({exc})") from None
        return value

    @field_validator("velocity")
    @classmethod
    def _velocity_in_range(cls, value: int) -> int:
        return check_velocity(value)

    @field_validator("velocities")
    @classmethod
    def _velocities_in_range(cls, value: dict[str, int]) -> dict[str, int]:
        for arn, velocity in value.items():
            try:
                check_velocity(velocity)
            except ValueError as exc:
                raise ValueError(f"{arn}: {exc}") from None
        return value

    @field_validator("opensearch_endpoint")
    @classmethod
    def _endpoint_has_scheme(cls, value: str | None) -> str | None:
        return check_endpoint(value)

    def configured_dlqs(self) -> tuple[str, ...]:
        """The DLQs a run without ``dlq_arn`` covers, in order."""
        if self.dlq_arns:
            return self.dlq_arns
        found = tuple(
            q for q in (self.ingest_dlq_arn or self.ingest_dlq_url, self.ocr_dlq_arn or self.ocr_dlq_url) if q
        )
        if not found:
            raise RedriveConfigError(
                "no DLQ configured: set REDRIVE_DLQ_ARNS (comma-separated ARNs) or INGEST_DLQ_ARN / OCR_DLQ_ARN"
            )
        return found

    def velocity_for(self, dlq_arn: str) -> int:
        return self.velocities.get(dlq_arn, self.velocity)


# --------------------------------------------------------------------------- request and results


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


# --------------------------------------------------------------------------- collaborators


class MoveTaskApi(Protocol):
    """The three SQS message-move operations (a boto3 SQS client has them)."""

    def start_message_move_task(self, **kwargs: Any) -> dict[str, Any]: ...

    def list_message_move_tasks(self, **kwargs: Any) -> dict[str, Any]: ...

    def cancel_message_move_task(self, **kwargs: Any) -> dict[str, Any]: ...


@dataclass(frozen=True)
class HealthReport:
    healthy: bool
    detail: str


class ConsumerHealth(Protocol):
    def check(self) -> HealthReport: ...


class OpenSearchHealth:
    """Is OpenSearch able to take writes? Red or unreachable means no."""

    def __init__(self, client: Any, service: Literal["es", "aoss"] = "es", index: str = "documents") -> None:
        self._client = client
        self._service = service
        self._index = index

    def check(self) -> HealthReport:
        from opensearchpy.exceptions import OpenSearchException

        try:
            if self._service == "aoss":
                # Serverless collections have no cluster health API: an answer means reachable.
                self._client.indices.exists(index=self._index)
                return HealthReport(True, "OpenSearch Serverless is reachable")
            status = str(self._client.cluster.health().get("status", "unknown"))
        except (OpenSearchException, BotoCoreError, OSError) as exc:
            return HealthReport(False, f"OpenSearch is unreachable: {type(exc).__name__}: {exc}")
        if status in ("green", "yellow"):
            return HealthReport(True, f"OpenSearch cluster health is {status}")
        return HealthReport(False, f"OpenSearch cluster health is {status}")


class ThroughputProbe:
    """What a queue's consumer has proven it can take: CloudWatch ``NumberOfMessagesDeleted``.

    One ``GetMetricStatistics`` call per target queue (the action template.yaml's RedriveRole grants).
    """

    def __init__(self, cloudwatch: Any, window: timedelta, clock: Callable[[], datetime]) -> None:
        self._cloudwatch = cloudwatch
        self._window = window
        self._clock = clock

    def per_second(self, queue_name: str) -> float:
        """Messages deleted per second over the window (0.0 without data)."""
        end = self._clock()
        seconds = int(self._window.total_seconds())
        response = self._cloudwatch.get_metric_statistics(
            Namespace="AWS/SQS",
            MetricName="NumberOfMessagesDeleted",
            Dimensions=[{"Name": "QueueName", "Value": queue_name}],
            StartTime=end - self._window,
            EndTime=end,
            Period=seconds,
            Statistics=["Sum"],
        )
        deleted = sum(float(p.get("Sum", 0.0)) for p in response.get("Datapoints", []))
        return deleted / seconds


# --------------------------------------------------------------------------- state


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds")


def _parse_time(text: str | None) -> datetime | None:
    return None if not text else datetime.fromisoformat(text)


@dataclass
class RedriveState:
    """The no-progress bookkeeping of one DLQ (one DynamoDB item)."""

    dlq_arn: str
    fruitless_rounds: int = 0
    halted: bool = False
    # A redrive was started and has not been judged yet.
    pending: bool = False
    depth_at_start: int = 0
    started_at: datetime | None = None
    task_handle: str | None = None
    velocity: int | None = None
    judge_after: datetime | None = None
    next_attempt_at: datetime | None = None
    last_outcome: str | None = None
    updated_at: datetime | None = None

    def to_item(self) -> dict[str, dict[str, Any]]:
        item: dict[str, dict[str, Any]] = {
            "id": {"S": STATE_ID_PREFIX + self.dlq_arn},
            "kind": {"S": "redrive_state"},
            "dlq_arn": {"S": self.dlq_arn},
            "fruitless_rounds": {"N": str(self.fruitless_rounds)},
            "halted": {"BOOL": self.halted},
            "pending": {"BOOL": self.pending},
            "depth_at_start": {"N": str(self.depth_at_start)},
        }
        optional: dict[str, str | None] = {
            "started_at": _iso(self.started_at),
            "task_handle": self.task_handle,
            "judge_after": _iso(self.judge_after),
            "next_attempt_at": _iso(self.next_attempt_at),
            "last_outcome": self.last_outcome,
            "updated_at": _iso(self.updated_at),
        }
        item.update({k: {"S": v} for k, v in optional.items() if v})
        if self.velocity is not None:
            item["velocity"] = {"N": str(self.velocity)}
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Mapping[str, Any]]) -> RedriveState:
        def text(name: str) -> str | None:
            return item[name]["S"] if name in item else None

        return cls(
            dlq_arn=item["dlq_arn"]["S"],
            fruitless_rounds=int(item.get("fruitless_rounds", {"N": "0"})["N"]),
            halted=bool(item.get("halted", {"BOOL": False})["BOOL"]),
            pending=bool(item.get("pending", {"BOOL": False})["BOOL"]),
            depth_at_start=int(item.get("depth_at_start", {"N": "0"})["N"]),
            started_at=_parse_time(text("started_at")),
            task_handle=text("task_handle"),
            velocity=int(item["velocity"]["N"]) if "velocity" in item else None,
            judge_after=_parse_time(text("judge_after")),
            next_attempt_at=_parse_time(text("next_attempt_at")),
            last_outcome=text("last_outcome"),
            updated_at=_parse_time(text("updated_at")),
        )


class RedriveStateStore:
    """Redrive state in the shared DynamoDB table (ids ``redrive#<dlq arn>``)."""

    def __init__(self, dynamodb: Any, table: str) -> None:
        self._dynamodb = dynamodb
        self._table = table

    @staticmethod
    def key(dlq_arn: str) -> dict[str, dict[str, str]]:
        return {"id": {"S": STATE_ID_PREFIX + dlq_arn}}

    def load(self, dlq_arn: str) -> RedriveState:
        response = self._dynamodb.get_item(TableName=self._table, Key=self.key(dlq_arn), ConsistentRead=True)
        item = response.get("Item")
        return RedriveState.from_item(item) if item else RedriveState(dlq_arn=dlq_arn)

    def save(self, state: RedriveState) -> None:
        self._dynamodb.put_item(TableName=self._table, Item=state.to_item())

    def delete(self, dlq_arn: str) -> None:
        self._dynamodb.delete_item(TableName=self._table, Key=self.key(dlq_arn))


# --------------------------------------------------------------------------- judging rounds


@dataclass(frozen=True)
class Judgement:
    state: RedriveState
    fruitless: bool


def judge_round(state: RedriveState, depth_now: int, now: datetime, settings: RedriveSettings) -> Judgement:
    """Decide whether the last redrive made progress, and what that means for the next one.

    Fruitless: the DLQ holds no fewer messages than when the redrive started (what was
    moved came back, or the consumer keeps failing new work). Each fruitless round
    doubles the wait (``backoff_seconds`` x 2^(rounds-1)); the ``max_fruitless_rounds``-th
    halts the DLQ. Progress clears the count.
    """
    fruitless = depth_now >= state.depth_at_start
    if not fruitless:
        judged = replace(state, pending=False, fruitless_rounds=0, next_attempt_at=None, last_outcome="progress")
        return Judgement(judged, fruitless=False)
    rounds = state.fruitless_rounds + 1
    halted = rounds >= settings.max_fruitless_rounds
    wait = timedelta(seconds=settings.backoff_seconds * 2 ** (rounds - 1))
    judged = replace(
        state,
        pending=False,
        fruitless_rounds=rounds,
        halted=halted,
        next_attempt_at=None if halted else now + wait,
        last_outcome="fruitless",
    )
    return Judgement(judged, fruitless=True)


def settle_time(depth: int, velocity: int, targets: list[QueueInfo]) -> timedelta:
    """How long until a redriven message that keeps failing is back in the DLQ.

    The move itself (depth / velocity), then up to maxReceiveCount receives, each
    ending when the visibility timeout runs out.
    """
    cycle = max((t.visibility_timeout * max(t.max_receive_count, 1) for t in targets), default=0)
    return max(MIN_SETTLE, timedelta(seconds=math.ceil(depth / velocity) + cycle))


# --------------------------------------------------------------------------- errors


class _Skip(Exception):
    """A guard stopped the redrive of one DLQ."""

    def __init__(self, reason: str, message: str, state: RedriveState, next_attempt_at: datetime | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.state = state
        self.next_attempt_at = next_attempt_at


class DlqError(Exception):
    """One DLQ cannot be handled; ``reason`` goes to the result."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


_NOT_FOUND = {"ResourceNotFoundException", "QueueDoesNotExist", "NonExistentQueue"}
_THROTTLED = {"RequestThrottled", "ThrottlingException", "Throttling", "TooManyRequestsException"}
_DENIED = {
    "AccessDenied",
    "AccessDeniedException",
    "InvalidSecurity",
    "UnauthorizedOperation",
    "KmsAccessDenied",
    "KMS.AccessDeniedException",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
}
_UNKNOWN_OPERATION = {
    "InvalidAction",
    "UnknownOperation",
    "UnknownOperationException",
    "NotImplemented",
    "NotImplementedException",
}
_STATE_OPERATIONS = frozenset({"GetItem", "PutItem", "DeleteItem"})
_INVALID = {"InvalidParameterValue", "InvalidParameterValueException", "InvalidAddress", "ValidationError"}


def _is_aws_endpoint(endpoint_url: str | None) -> bool:
    return not endpoint_url or ".amazonaws.com" in endpoint_url


def _unsupported(operation: str, status: int, code: str, codes: set[str], endpoint_url: str | None) -> bool:
    if codes & _UNKNOWN_OPERATION or status == 501:
        return True
    # An emulator without the API answers with a bare HTTP error page, not an AWS error code.
    return operation in MOVE_TASK_OPERATIONS and status >= 400 and code.isdigit() and not _is_aws_endpoint(endpoint_url)


def _classify_client_error(exc: ClientError, endpoint_url: str | None) -> DlqError:
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    codes = {code, code.removeprefix("AWS.SimpleQueueService."), str(error.get("QueryErrorCode", ""))}
    text = str(error.get("Message", ""))
    lowered = text.lower()
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    operation = exc.operation_name
    where = f"{operation}: {code}: {text}".strip()
    if _unsupported(operation, status, code, codes, endpoint_url):
        return DlqError(
            UNSUPPORTED_REASON,
            f"{operation} is unsupported by this endpoint ({endpoint_url}): local emulators such "
            "as moto have no message-move API; redrive against AWS, or move the messages by hand",
        )
    on_state = operation in _STATE_OPERATIONS
    rules: list[tuple[bool, str, str]] = [
        (on_state and bool(codes & _NOT_FOUND), "state_table_not_found", f"{where} (REDRIVE_STATE_TABLE)"),
        (bool(codes & _NOT_FOUND), "queue_not_found", where),
        (bool(codes & _THROTTLED), "throttled", f"{where} (the next run tries again)"),
        (bool(codes & _DENIED), "access_denied", f"{where} ({PERMISSIONS_DOC} lists the permissions)"),
        (
            "dead" in lowered and "letter" in lowered and bool(codes & (_INVALID | {"UnsupportedOperation"})),
            "not_a_dlq",
            where,
        ),
        (
            "UnsupportedOperation" in codes and any(w in lowered for w in ("running", "active", "already")),
            "task_already_running",
            where,
        ),
        (bool(codes & _INVALID), "invalid_request", where),
        ("UnsupportedOperation" in codes, "unsupported_operation", where),
    ]
    for matched, reason, message in rules:
        if matched:
            return DlqError(reason, message)
    return DlqError("api_error", where)


def classify_error(exc: Exception, endpoint_url: str | None = None) -> DlqError:
    """Turn an SQS/DynamoDB failure into a per-DLQ reason a human can act on."""
    if isinstance(exc, DlqError):
        return exc
    if isinstance(exc, ClientError):
        return _classify_client_error(exc, endpoint_url)
    if isinstance(exc, EndpointConnectionError):
        return DlqError("endpoint_unreachable", str(exc))
    if isinstance(exc, NoCredentialsError):
        return DlqError("access_denied", str(exc))
    if isinstance(exc, BotoCoreError):
        return DlqError("api_error", f"{type(exc).__name__}: {exc}")
    return DlqError("internal_error", f"{type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------- queues


@dataclass(frozen=True)
class QueueInfo:
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


_QUEUE_ATTRIBUTES = [
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "VisibilityTimeout",
    "RedrivePolicy",
]


def _arn_parts(arn: str) -> tuple[str, str, str]:
    """(region, account, queue name) of an SQS queue ARN."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs":
        raise DlqError("invalid_request", f"not an SQS queue ARN or URL: {arn!r}")
    return parts[3], parts[4], parts[5]


def queue_url_from_arn(arn: str, sqs: Any) -> str:
    """The queue URL of an SQS queue ARN, without an API call (so no ``sqs:GetQueueUrl``).

    A queue URL is the client's endpoint + ``/<account>/<name>``: on AWS
    ``https://sqs.<region>.amazonaws.com/<account>/<name>``; against a local endpoint
    (``AWS_ENDPOINT_URL``, e.g. moto server) ``http://host:port/<account>/<name>``, which
    is the URL the emulator itself hands out. A queue in another region than the client's
    cannot be reached by it (and cannot be this region's DLQ or source either).
    """
    region, account, name = _arn_parts(arn)
    meta = getattr(sqs, "meta", None)
    client_region = getattr(meta, "region_name", None) or region
    if region != client_region:
        raise DlqError(
            "queue_not_found",
            f"{arn} is in region {region}, this SQS client in {client_region}: a DLQ, its sources and "
            "the redrive must be in one region",
        )
    endpoint = getattr(meta, "endpoint_url", None) or f"https://sqs.{region}.amazonaws.com"
    return f"{endpoint.rstrip('/')}/{account}/{name}"


# --------------------------------------------------------------------------- the service


def _now() -> datetime:
    return datetime.now(UTC)


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
        clock: Callable[[], datetime] = _now,
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
            dlq = self._describe(dlq_ref)
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

    # -- queue facts

    def _describe(self, ref: str) -> QueueInfo:
        url = ref if ref.startswith(("http://", "https://")) else queue_url_from_arn(ref, self._sqs)
        attrs = self._sqs.get_queue_attributes(QueueUrl=url, AttributeNames=_QUEUE_ATTRIBUTES)["Attributes"]
        policy = json.loads(attrs.get("RedrivePolicy") or "{}")
        return QueueInfo(
            arn=attrs["QueueArn"],
            url=url,
            visible=int(attrs.get("ApproximateNumberOfMessages", 0)),
            in_flight=int(attrs.get("ApproximateNumberOfMessagesNotVisible", 0)),
            delayed=int(attrs.get("ApproximateNumberOfMessagesDelayed", 0)),
            visibility_timeout=int(attrs.get("VisibilityTimeout", 30)),
            max_receive_count=int(policy.get("maxReceiveCount", 1)),
        )

    def _sources(self, dlq: QueueInfo, result: DlqResult) -> list[QueueInfo]:
        urls: list[str] = []
        kwargs: dict[str, Any] = {"QueueUrl": dlq.url}
        while True:
            page = self._sqs.list_dead_letter_source_queues(**kwargs)
            urls.extend(page.get("queueUrls", []))
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
        if not urls:
            raise DlqError(
                "not_a_dlq",
                f"no queue names {dlq.arn} as its dead-letter queue (ListDeadLetterSourceQueues is empty)",
            )
        sources = sorted((self._describe(u) for u in urls), key=lambda q: q.arn)
        result.source_arn = sources[0].arn
        return sources

    def _latest_task(self, dlq_arn: str) -> dict[str, Any] | None:
        tasks = self._moves.list_message_move_tasks(SourceArn=dlq_arn, MaxResults=1).get("Results", [])
        return tasks[0] if tasks else None

    @staticmethod
    def _report_task(task: Mapping[str, Any], result: DlqResult) -> None:
        result.task_handle = task.get("TaskHandle")
        result.moved = task.get("ApproximateNumberOfMessagesMoved")
        result.to_move = task.get("ApproximateNumberOfMessagesToMove")
        result.failure_reason = task.get("FailureReason")
        if task.get("MaxNumberOfMessagesPerSecond") is not None:
            result.velocity = int(task["MaxNumberOfMessagesPerSecond"])
        if task.get("DestinationArn"):
            result.destination_arn = task["DestinationArn"]
        started = task.get("StartedTimestamp")
        if started is not None:
            result.started_at = _iso(datetime.fromtimestamp(int(started) / 1000, UTC))

    def _save(self, request: RedriveRequest, state: RedriveState) -> None:
        if not request.dry_run:
            self._state.save(replace(state, updated_at=self._clock()))

    # -- actions

    def _start(self, request: RedriveRequest, dlq: QueueInfo, result: DlqResult) -> None:
        now = self._clock()
        sources = self._sources(dlq, result)
        destination = self._destination(request, dlq, sources)
        result.destination_arn = destination
        targets = [self._describe(destination)] if destination else sources
        velocity, basis = self._velocity(request, dlq, targets)
        result.velocity = velocity

        state = self._state.load(dlq.arn)
        if request.reset:
            if not request.dry_run:
                self._state.delete(dlq.arn)
            state = RedriveState(dlq_arn=dlq.arn)
        try:
            state = self._guard_empty(request, dlq, state, now)
            self._guard_halted(state, dlq)
            self._guard_running(dlq, state, result)
            state = self._guard_backoff(request, dlq, state, now)
            self._guard_backlog(state, targets)
            self._guard_health(state)
        except _Skip as skip:
            result.status, result.reason, result.message = Outcome.SKIPPED, skip.reason, skip.message
            result.fruitless_rounds = skip.state.fruitless_rounds
            result.next_attempt_at = _iso(skip.next_attempt_at or skip.state.next_attempt_at)
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
        result.status, result.task_handle, result.started_at = Outcome.STARTED, handle, _iso(now)
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
            rate = sum(self._throughput.per_second(t.arn.rsplit(":", 1)[-1]) for t in targets)
        except (ClientError, BotoCoreError) as exc:
            logger.warning("no consumer throughput; configured velocity used", extra={"error": str(exc)})
            return configured, " (configured; consumer throughput unavailable)"
        if rate <= 0:
            return configured, " (configured; no deletes measured in the window)"
        velocity = max(MIN_VELOCITY, min(configured, int(rate * fraction)))
        return velocity, f" (adaptive: {fraction:g} of the consumer's {rate:.1f}/s, at most {configured}/s)"

    # -- the guards of start, in order; each raises _Skip or lets the redrive go on

    def _guard_empty(self, request: RedriveRequest, dlq: QueueInfo, state: RedriveState, now: datetime) -> RedriveState:
        if dlq.visible > 0:
            return state
        # An empty DLQ after a settled redrive is the clearest progress there is.
        if state.pending and not state.halted and state.judge_after and now >= state.judge_after:
            state = judge_round(state, dlq.depth, now, self.settings).state
            self._save(request, state)
        raise _Skip("dlq_empty", "the DLQ holds no visible message", state)

    @staticmethod
    def _guard_halted(state: RedriveState, dlq: QueueInfo) -> None:
        if state.halted:
            raise _Skip(
                "no_progress",
                f"{state.fruitless_rounds} redrives in a row did not shrink this DLQ (now {dlq.depth} "
                "messages): stopped so poison messages are not cycled forever. Fix the cause, "
                "then `reset` (or start with reset)",
                state,
            )

    def _guard_running(self, dlq: QueueInfo, state: RedriveState, result: DlqResult) -> None:
        task = self._latest_task(dlq.arn)
        if task is not None and task.get("Status") in ACTIVE_TASK_STATUSES:
            self._report_task(task, result)
            raise _Skip("task_running", "a message move task is already running for this DLQ", state)
        if task is not None and task.get("Status") == "FAILED":
            # Whatever happens next, the operator should see why the last move failed.
            result.failure_reason = task.get("FailureReason")

    def _guard_backoff(
        self, request: RedriveRequest, dlq: QueueInfo, state: RedriveState, now: datetime
    ) -> RedriveState:
        settings = self.settings
        if state.pending:
            if state.judge_after and now < state.judge_after:
                raise _Skip(
                    "backoff",
                    "waiting for the last redrive's messages to be processed before judging it",
                    state,
                    next_attempt_at=state.judge_after,
                )
            judgement = judge_round(state, dlq.depth, now, settings)
            state = judgement.state
            self._save(request, state)
            if state.halted:
                raise _Skip(
                    "no_progress",
                    f"the DLQ holds {dlq.depth} messages, {state.depth_at_start} when the last redrive "
                    f"started: {state.fruitless_rounds} fruitless rounds, redrive stopped until `reset`",
                    state,
                )
            if judgement.fruitless:
                raise _Skip(
                    "backoff",
                    f"the last redrive did not shrink the DLQ ({state.depth_at_start} -> {dlq.depth} "
                    f"messages): fruitless round {state.fruitless_rounds} of "
                    f"{settings.max_fruitless_rounds}, waiting before the next attempt",
                    state,
                )
        if state.next_attempt_at and now < state.next_attempt_at - SCHEDULE_SLACK:
            raise _Skip("backoff", "waiting before the next attempt after a fruitless redrive", state)
        return state

    def _guard_backlog(self, state: RedriveState, targets: list[QueueInfo]) -> None:
        limit = self.settings.max_source_backlog
        backed_up = [t for t in targets if t.visible + t.in_flight > limit]
        if backed_up:
            worst = max(backed_up, key=lambda t: t.visible + t.in_flight)
            raise _Skip(
                "source_backlog",
                f"{worst.arn} already holds {worst.visible} visible + {worst.in_flight} in-flight "
                f"messages (limit REDRIVE_MAX_SOURCE_BACKLOG={limit})",
                state,
            )

    def _guard_health(self, state: RedriveState) -> None:
        if self._health is None:
            return
        if self._health_report is None:  # once per run, shared by every DLQ
            self._health_report = self._health.check()
        if not self._health_report.healthy:
            raise _Skip("consumer_unhealthy", self._health_report.detail, state)

    def _status(self, request: RedriveRequest, dlq: QueueInfo, result: DlqResult) -> None:
        self._sources(dlq, result)
        state = self._state.load(dlq.arn)
        result.fruitless_rounds = state.fruitless_rounds
        result.next_attempt_at = _iso(state.next_attempt_at or (state.judge_after if state.pending else None))
        task = self._latest_task(dlq.arn)
        if task is None:
            result.status = Outcome.IDLE
            result.message = "no message move task has run for this DLQ"
        else:
            self._report_task(task, result)
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
                self._report_task(task, result)
            result.status, result.reason = Outcome.SKIPPED, "no_running_task"
            result.message = "no message move task is running for this DLQ"
            return
        self._report_task(task, result)
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


# --------------------------------------------------------------------------- metrics


def emit_metrics(metrics: Any, summary: RedriveSummary) -> None:
    """``RedrivesStarted``, ``RedrivesSkipped`` (also per ``Reason``), ``RedriveErrors``.

    Only real start runs count; status, cancel, reset and dry runs emit nothing.
    """
    from aws_lambda_powertools.metrics import MetricUnit, single_metric

    if summary.action != RedriveAction.START or summary.dry_run:
        return
    statuses = Counter(str(r.status) for r in summary.results)
    metrics.add_metric(name="RedrivesStarted", unit=MetricUnit.Count, value=statuses[Outcome.STARTED])
    metrics.add_metric(name="RedrivesSkipped", unit=MetricUnit.Count, value=statuses[Outcome.SKIPPED])
    metrics.add_metric(name="RedriveErrors", unit=MetricUnit.Count, value=statuses[Outcome.ERROR])
    by_reason = Counter(
        (str(r.status), r.reason or "none") for r in summary.results if r.status in (Outcome.SKIPPED, Outcome.ERROR)
    )
    for (status, reason), count in sorted(by_reason.items()):
        name = "RedrivesSkipped" if status == Outcome.SKIPPED else "RedriveErrors"
        with single_metric(name=name, unit=MetricUnit.Count, value=count) as metric:
            metric.add_dimension(name="Reason", value=reason)


# --------------------------------------------------------------------------- wiring


class _UnconfiguredHealth:
    """No OPENSEARCH_ENDPOINT: refuse rather than redrive blind."""

    def check(self) -> HealthReport:
        return HealthReport(False, "OPENSEARCH_ENDPOINT is not set, so consumer health is unknown")


def build_service(settings: RedriveSettings) -> RedriveService:
    """Create the clients once (boto3 honours AWS_ENDPOINT_URL) and the service around them."""
    import boto3

    from docindex.core.clients import boto_config, make_opensearch

    session = boto3.session.Session(region_name=settings.aws_region)
    config = boto_config(max_attempts=3)
    sqs = session.client("sqs", config=config)
    dynamodb = session.client("dynamodb", config=config)
    health: ConsumerHealth = (
        OpenSearchHealth(
            make_opensearch(
                settings.opensearch_endpoint,
                auth=settings.opensearch_auth,
                service=settings.opensearch_service,
                region=settings.aws_region,
                timeout=settings.health_timeout_seconds,
            ),
            settings.opensearch_service,
            settings.opensearch_index,
        )
        if settings.opensearch_endpoint
        else _UnconfiguredHealth()
    )
    throughput = None
    if settings.adaptive_fraction > 0:
        window = timedelta(seconds=settings.adaptive_window_seconds)
        throughput = ThroughputProbe(session.client("cloudwatch", config=config), window, _now)
    return RedriveService(
        settings=settings,
        sqs=sqs,
        move_tasks=sqs,
        state=RedriveStateStore(dynamodb, settings.state_table),
        health=health,
        throughput=throughput,
    )


@lru_cache(maxsize=1)
def get_service() -> RedriveService:
    """The process-wide service, built on first use from the environment."""
    return build_service(RedriveSettings.from_env())
