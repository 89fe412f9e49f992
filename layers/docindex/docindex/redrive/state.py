"""The no-progress state of each DLQ (DynamoDB) and the judgement of a redrive round.

The no-loop rule (docs/dlq-redrive.md, "Why a redrive can stop itself"): when a redrive
starts, the DLQ's depth is recorded in DynamoDB. Once its messages have had time to fail
again (``maxReceiveCount`` x visibility timeout of the source, plus the move itself), the
next run compares: a DLQ holding no fewer messages than before is a *fruitless round*.
Each fruitless round doubles the wait before the next attempt; after
``REDRIVE_MAX_FRUITLESS_ROUNDS`` of them the DLQ is halted (``no_progress``) until a human
resets it (``action: reset`` / ``docindex redrive reset``). A round that drained the DLQ
clears the count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from docindex.redrive.models import QueueInfo, iso
from docindex.redrive.settings import RedriveSettings

STATE_ID_PREFIX = "redrive#"
# Never judge a redrive sooner than this after it started, whatever the queues say.
MIN_SETTLE = timedelta(minutes=1)


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
        """The DynamoDB item (id ``redrive#<dlq arn>``) this state is stored as."""
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
            "started_at": iso(self.started_at),
            "task_handle": self.task_handle,
            "judge_after": iso(self.judge_after),
            "next_attempt_at": iso(self.next_attempt_at),
            "last_outcome": self.last_outcome,
            "updated_at": iso(self.updated_at),
        }
        item.update({k: {"S": v} for k, v in optional.items() if v})
        if self.velocity is not None:
            item["velocity"] = {"N": str(self.velocity)}
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Mapping[str, Any]]) -> RedriveState:
        """The state a stored item holds (missing attributes take their defaults)."""

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
        """The DLQ's state; a fresh one when none is stored."""
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
