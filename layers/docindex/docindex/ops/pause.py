"""Pause and resume: the pipeline's emergency stop, leaving every message in its queue.

``pause`` stops the consumers, not the producers:

- the indexer's SQS event source mapping is disabled (``UpdateEventSourceMapping
  Enabled=false``): Lambda stops polling, invocations in flight finish, and
  every message stays in the ingest queue;
- the OCR worker's ECS service is scaled to zero. Its Application Auto Scaling
  target is first set to min = max = 0, otherwise the scaling policies (the
  "wake" alarm in particular) would start tasks again as soon as OCR jobs wait.
  A stopping task finishes nothing half-way: the unfinished job's message
  reappears in the OCR queue after its visibility timeout.

The previous state (which mappings were enabled, the service's desired count,
the scalable target's bounds) is written once, before anything changes, to the
ledger table as the item ``ops#pause``; a second ``pause`` keeps the first
record, so ``resume`` restores the values from before the first pause.

CloudFormation owns these settings: a ``sam deploy`` while paused re-enables
the mapping and resets the scaling bounds. S3 keeps sending changes while the
pipeline is paused; they wait in the ingest queue for its retention period.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.aws import error_code, error_message, is_conditional_check_failure, queue_name
from docindex.core.clients import AwsClients
from docindex.ops.deployment import Deployment

PAUSE_ITEM_ID = "ops#pause"
ECS_DIMENSION = "ecs:service:DesiredCount"


class StepStatus(StrEnum):
    CHANGED = "changed"
    UNCHANGED = "unchanged"  # already in the requested state
    PLANNED = "planned"  # --dry-run
    SKIPPED = "skipped"  # not present here (local run, not deployed)
    FAILED = "failed"


@dataclass
class Step:
    component: str
    status: StepStatus
    detail: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"component": self.component, "status": self.status.value, "detail": self.detail}
        if self.fix:
            data["fix"] = self.fix
        return data


@dataclass
class OperationReport:
    action: str
    dry_run: bool
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    state: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        """0 done (or nothing to do), 1 some part skipped (e.g. the local run), 2 some part failed."""
        statuses = {s.status for s in self.steps}
        if StepStatus.FAILED in statuses:
            return 2
        if StepStatus.SKIPPED in statuses or not self.steps:
            return 1
        return 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "dry_run": self.dry_run,
            "exit_code": self.exit_code,
            "steps": [s.to_dict() for s in self.steps],
            "notes": self.notes,
            "pause_state": self.state,
        }


@dataclass
class PauseState:
    """What ``pause`` found, so that ``resume`` can put it back."""

    paused_at: str
    mappings: dict[str, bool] = field(default_factory=dict)  # uuid → was enabled
    ecs_cluster: str | None = None
    ecs_service: str | None = None
    desired_count: int | None = None
    min_capacity: int | None = None
    max_capacity: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PauseState:
        def number(name: str) -> int | None:
            value = data.get(name)
            return int(value) if value is not None else None

        return cls(
            paused_at=str(data.get("paused_at") or ""),
            mappings={str(k): bool(v) for k, v in (data.get("mappings") or {}).items()},
            ecs_cluster=data.get("ecs_cluster"),
            ecs_service=data.get("ecs_service"),
            desired_count=number("desired_count"),
            min_capacity=number("min_capacity"),
            max_capacity=number("max_capacity"),
        )


class PauseStore:
    """The ``ops#pause`` item of the ledger table."""

    def __init__(self, dynamodb: Any, table: str) -> None:
        self._ddb = dynamodb
        self._table = table

    def load(self) -> PauseState | None:
        item = self._ddb.get_item(TableName=self._table, Key={"id": {"S": PAUSE_ITEM_ID}}, ConsistentRead=True)
        raw = item.get("Item")
        if not raw:
            return None
        return PauseState.from_dict(json.loads(raw["state"]["S"]))

    def create(self, state: PauseState) -> bool:
        """Record ``state`` unless a pause is already recorded; False when one is."""
        try:
            self._ddb.put_item(
                TableName=self._table,
                Item={
                    "id": {"S": PAUSE_ITEM_ID},
                    "state": {"S": json.dumps(state.to_dict())},
                    "paused_at": {"S": state.paused_at},
                },
                ConditionExpression="attribute_not_exists(id)",
            )
        except ClientError as exc:
            if is_conditional_check_failure(exc):
                return False
            raise
        return True

    def delete(self) -> None:
        self._ddb.delete_item(TableName=self._table, Key={"id": {"S": PAUSE_ITEM_ID}})


def _no_mapping_step() -> Step:
    """Pause and resume found no event source mapping to change."""
    return Step(
        "indexer event source mapping",
        StepStatus.SKIPPED,
        "no event source mapping found for the indexer on the ingest queue",
        fix="pass --stack NAME, or --function and --queue-url",
    )


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _error(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return f"{exc.operation_name}: {error_code(exc)}: {error_message(exc)}"
    return f"{type(exc).__name__}: {exc}"


class PipelineControl:
    """Disables/enables the indexer's event source mapping and scales the OCR worker."""

    def __init__(
        self,
        deployment: Deployment,
        clients: AwsClients,
        *,
        wait_seconds: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.deployment = deployment
        self.clients = clients
        self.wait_seconds = wait_seconds
        self._sleep = sleep

    # -- discovery -----------------------------------------------------------

    def _store(self) -> PauseStore | None:
        table = self.deployment.ledger_table
        return PauseStore(self.clients.client("dynamodb"), table) if table else None

    def _ingest_arn(self) -> str | None:
        url = self.deployment.ingest_queue_url
        if not url:
            return None
        attrs = self.clients.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        return str(attrs["Attributes"]["QueueArn"])

    def mappings(self) -> list[dict[str, Any]]:
        """The indexer's event source mappings on the ingest queue."""
        lam = self.clients.client("lambda")
        if self.deployment.event_source_mapping_ids:
            return [lam.get_event_source_mapping(UUID=u) for u in self.deployment.event_source_mapping_ids]
        params: dict[str, Any] = {}
        arn = self._ingest_arn()
        if arn:
            params["EventSourceArn"] = arn
        if self.deployment.function_name:
            params["FunctionName"] = self.deployment.function_name
        if not params:
            return []
        found: list[dict[str, Any]] = []
        for page in lam.get_paginator("list_event_source_mappings").paginate(**params):
            found.extend(page.get("EventSourceMappings", []))
        return found

    def _service(self) -> dict[str, Any] | None:
        d = self.deployment
        if not (d.ecs_cluster and d.ecs_service):
            return None
        services = self.clients.client("ecs").describe_services(cluster=d.ecs_cluster, services=[d.ecs_service])
        active = [s for s in services.get("services", []) if s.get("status") != "INACTIVE"]
        return active[0] if active else None

    def _scalable_target(self) -> dict[str, Any] | None:
        d = self.deployment
        response = self.clients.client("application-autoscaling").describe_scalable_targets(
            ServiceNamespace="ecs",
            ResourceIds=[f"service/{d.ecs_cluster}/{d.ecs_service}"],
            ScalableDimension=ECS_DIMENSION,
        )
        targets = response.get("ScalableTargets", [])
        return targets[0] if targets else None

    # -- pause ---------------------------------------------------------------

    def pause(self, *, dry_run: bool = False) -> OperationReport:
        """Stop consuming: disable the mapping(s), scale the OCR worker to zero."""
        report = OperationReport("pause", dry_run)
        if self.deployment.is_local:
            report.steps += _local_steps("pause")
            return report
        try:
            mappings = self.mappings()
            service = self._service()
            target = self._scalable_target() if service else None
        except (ClientError, BotoCoreError) as exc:
            report.steps.append(Step("discovery", StepStatus.FAILED, _error(exc)))
            return report
        state = PauseState(
            paused_at=_now(),
            mappings={m["UUID"]: m.get("State") in ("Enabled", "Enabling", "Updating") for m in mappings},
            ecs_cluster=self.deployment.ecs_cluster if service else None,
            ecs_service=self.deployment.ecs_service if service else None,
            desired_count=int(service["desiredCount"]) if service else None,
            min_capacity=int(target["MinCapacity"]) if target else None,
            max_capacity=int(target["MaxCapacity"]) if target else None,
        )
        report.state = state.to_dict()
        if not dry_run:
            self._remember(state, report)
        for mapping in mappings:
            report.steps.append(self._set_mapping(mapping, enabled=False, dry_run=dry_run))
        if not mappings:
            report.steps.append(_no_mapping_step())
        report.steps.append(self._scale_worker_down(service, target, dry_run=dry_run))
        report.notes += self._pause_notes()
        return report

    def _remember(self, state: PauseState, report: OperationReport) -> None:
        store = self._store()
        if store is None:
            report.notes.append(
                "no ledger table to remember the previous state in: note the values above "
                "(pause_state) and pass them to `docindex resume --desired N --min N --max N`"
            )
            return
        try:
            if not store.create(state):
                earlier = store.load()
                report.notes.append(
                    f"already paused since {earlier.paused_at if earlier else '?'}: the state recorded "
                    "then is kept, so `resume` restores the values from before the first pause"
                )
                if earlier:
                    report.state = earlier.to_dict()
        except (ClientError, BotoCoreError) as exc:
            report.notes.append(f"could not record the pause state in {self.deployment.ledger_table}: {_error(exc)}")

    def _set_mapping(self, mapping: dict[str, Any], *, enabled: bool, dry_run: bool) -> Step:
        uuid = mapping["UUID"]
        function = str(mapping.get("FunctionArn", "")).rsplit(":", 1)[-1]
        component = f"event source mapping {uuid} ({queue_name(mapping.get('EventSourceArn', '?'))} → {function})"
        wanted = "Enabled" if enabled else "Disabled"
        current = mapping.get("State")
        if current == wanted:
            return Step(component, StepStatus.UNCHANGED, f"already {wanted.lower()}")
        verb = "enable" if enabled else "disable"
        if dry_run:
            return Step(component, StepStatus.PLANNED, f"would {verb} it (now {current})")
        lam = self.clients.client("lambda")
        try:
            lam.update_event_source_mapping(UUID=uuid, Enabled=enabled)
            state = self._wait_mapping(uuid, wanted)
        except (ClientError, BotoCoreError) as exc:
            return Step(
                component,
                StepStatus.FAILED,
                _error(exc),
                fix=f"aws lambda update-event-source-mapping --uuid {uuid} --{'' if enabled else 'no-'}enabled",
            )
        note = "" if state == wanted else f" (still {state} after {self.wait_seconds:.0f} s; it settles by itself)"
        what = "polling the queue again" if enabled else "Lambda stops polling; messages stay in the queue"
        return Step(component, StepStatus.CHANGED, f"{verb}d: {what}{note}")

    def _wait_mapping(self, uuid: str, wanted: str) -> str:
        lam = self.clients.client("lambda")
        waited = 0.0
        while True:
            state = str(lam.get_event_source_mapping(UUID=uuid).get("State"))
            if state == wanted or waited >= self.wait_seconds:
                return state
            self._sleep(2.0)
            waited += 2.0

    def _scale_worker_down(
        self, service: dict[str, Any] | None, target: dict[str, Any] | None, *, dry_run: bool
    ) -> Step:
        d = self.deployment
        component = f"OCR worker service {d.ecs_service or '?'}"
        if service is None:
            return Step(
                component, StepStatus.SKIPPED, "no OCR worker ECS service found (--stack, or --cluster/--service)"
            )
        desired = int(service["desiredCount"])
        bounds = f"min {target['MinCapacity']}, max {target['MaxCapacity']}" if target else "no scalable target"
        if desired == 0 and (target is None or int(target["MaxCapacity"]) == 0):
            return Step(component, StepStatus.UNCHANGED, "already at 0 tasks with scaling bounds 0/0")
        if dry_run:
            return Step(
                component,
                StepStatus.PLANNED,
                f"would set scaling bounds to 0/0 ({bounds}) and desired count {desired} → 0",
            )
        try:
            if target is not None:
                self.clients.client("application-autoscaling").register_scalable_target(
                    ServiceNamespace="ecs",
                    ResourceId=target["ResourceId"],
                    ScalableDimension=ECS_DIMENSION,
                    MinCapacity=0,
                    MaxCapacity=0,
                )
            self.clients.client("ecs").update_service(cluster=d.ecs_cluster, service=d.ecs_service, desiredCount=0)
        except (ClientError, BotoCoreError) as exc:
            return Step(component, StepStatus.FAILED, _error(exc))
        return Step(
            component,
            StepStatus.CHANGED,
            f"desired count {desired} → 0, scaling bounds ({bounds}) → 0/0; "
            "a stopping task's unfinished job reappears in the OCR queue",
        )

    def _pause_notes(self) -> list[str]:
        notes = ["S3 keeps announcing changes: they wait in the ingest queue until `docindex resume`."]
        url = self.deployment.ingest_queue_url
        if url:
            try:
                attrs = self.clients.client("sqs").get_queue_attributes(
                    QueueUrl=url, AttributeNames=["MessageRetentionPeriod"]
                )["Attributes"]
                retention = int(attrs["MessageRetentionPeriod"])
                until = (datetime.now(UTC) + timedelta(seconds=retention)).strftime("%Y-%m-%d %H:%M UTC")
                notes.append(
                    f"messages expire after {retention / 86400:g} days: resume before {until}, or run "
                    "`docindex reconcile --fix` afterwards to catch up on what expired."
                )
            except (ClientError, BotoCoreError, KeyError, ValueError):
                pass
        notes.append("a `sam deploy` while paused re-enables the mapping and resets the scaling bounds.")
        return notes

    # -- resume --------------------------------------------------------------

    def resume(
        self,
        *,
        dry_run: bool = False,
        desired: int | None = None,
        min_capacity: int | None = None,
        max_capacity: int | None = None,
    ) -> OperationReport:
        """Enable the mapping(s) again and give the OCR worker back its capacity."""
        report = OperationReport("resume", dry_run)
        if self.deployment.is_local:
            report.steps += _local_steps("resume")
            return report
        store = self._store()
        try:
            state = store.load() if store else None
            mappings = self.mappings()
            service = self._service()
            target = self._scalable_target() if service else None
        except (ClientError, BotoCoreError) as exc:
            report.steps.append(Step("discovery", StepStatus.FAILED, _error(exc)))
            return report
        report.state = state.to_dict() if state else None
        for mapping in mappings:
            if state and state.mappings.get(mapping["UUID"]) is False:
                report.steps.append(
                    Step(
                        f"event source mapping {mapping['UUID']}",
                        StepStatus.UNCHANGED,
                        "left disabled: it was already disabled before `docindex pause`",
                        fix=f"aws lambda update-event-source-mapping --uuid {mapping['UUID']} --enabled",
                    )
                )
                continue
            report.steps.append(self._set_mapping(mapping, enabled=True, dry_run=dry_run))
        if not mappings:
            report.steps.append(_no_mapping_step())
        report.steps.append(
            self._scale_worker_up(
                service,
                target,
                state,
                desired=desired,
                min_capacity=min_capacity,
                max_capacity=max_capacity,
                dry_run=dry_run,
            )
        )
        failed = any(s.status is StepStatus.FAILED for s in report.steps)
        if store and state and not dry_run and not failed:
            try:
                store.delete()
            except (ClientError, BotoCoreError) as exc:
                report.notes.append(f"could not clear the pause state: {_error(exc)}")
        if not state and not dry_run:
            report.notes.append("no pause state was recorded (paused by hand, or by another tool)")
        return report

    def _scale_worker_up(
        self,
        service: dict[str, Any] | None,
        target: dict[str, Any] | None,
        state: PauseState | None,
        *,
        desired: int | None,
        min_capacity: int | None,
        max_capacity: int | None,
        dry_run: bool,
    ) -> Step:
        d = self.deployment
        component = f"OCR worker service {d.ecs_service or '?'}"
        if service is None:
            return Step(
                component, StepStatus.SKIPPED, "no OCR worker ECS service found (--stack, or --cluster/--service)"
            )
        params = d.parameters
        low = _first(min_capacity, state.min_capacity if state else None, _int(params.get("WorkerMinTasks")))
        high = _first(max_capacity, state.max_capacity if state else None, _int(params.get("WorkerMaxTasks")))
        count = _first(desired, state.desired_count if state else None, low)
        if target is not None and (low is None or high is None):
            return Step(
                component,
                StepStatus.FAILED,
                "the scaling bounds from before the pause are unknown (no pause state recorded)",
                fix="docindex resume --min N --max N [--desired N]",
            )
        count = max(count or 0, low or 0)
        if high is not None:
            count = min(count, high)
        current = int(service["desiredCount"])
        current_bounds = (int(target["MinCapacity"]), int(target["MaxCapacity"])) if target else None
        if current == count and (target is None or current_bounds == (low, high)):
            return Step(component, StepStatus.UNCHANGED, f"already at desired count {count}, bounds {low}/{high}")
        plan = f"scaling bounds {current_bounds} → ({low}, {high}), desired count {current} → {count}"
        if dry_run:
            return Step(component, StepStatus.PLANNED, "would set " + plan)
        try:
            if target is not None:
                self.clients.client("application-autoscaling").register_scalable_target(
                    ServiceNamespace="ecs",
                    ResourceId=target["ResourceId"],
                    ScalableDimension=ECS_DIMENSION,
                    MinCapacity=low,
                    MaxCapacity=high,
                )
            self.clients.client("ecs").update_service(cluster=d.ecs_cluster, service=d.ecs_service, desiredCount=count)
        except (ClientError, BotoCoreError) as exc:
            return Step(component, StepStatus.FAILED, _error(exc))
        return Step(component, StepStatus.CHANGED, plan + "; auto scaling takes over from here")


def _first(*values: int | None) -> int | None:
    for value in values:
        if value is not None:
            return value
    return None


def _int(text: str | None) -> int | None:
    return int(text) if text and text.strip().isdigit() else None


def _local_steps(action: str) -> list[Step]:
    if action == "pause":
        runner = (
            "stop `docindex local run` with Ctrl-C: it finishes the batch in hand and every other message "
            "stays in its queue"
        )
        worker = "the local OCR worker runs inside `docindex local run`; Ctrl-C stops it too"
    else:
        runner = "start `docindex local run` again: it picks up every message waiting in the queues"
        worker = "the local OCR worker starts with `docindex local run` (unless --no-worker)"
    return [
        Step("indexer (local run)", StepStatus.SKIPPED, "no Lambda event source mapping locally: " + runner),
        Step("OCR worker (local run)", StepStatus.SKIPPED, "no ECS service locally: " + worker),
    ]
