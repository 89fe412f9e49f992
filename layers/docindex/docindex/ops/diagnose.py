"""Diagnose: check a deployment for every cause of the incident (docs/architecture.md).

Each check reports OK, WARN, FAIL or SKIP with its evidence and, when
something is wrong, the exact fix. The verdicts are pure functions of the
facts gathered (``judge_*``), unit-tested on their own; ``Diagnoser`` gathers
the facts through AWS and OpenSearch and never changes anything, except that
sampling a queue receives a few messages and makes them visible again at once
(their receive count goes up by one).

Checks, in report order:

``notifications``     exactly one path from the bucket to the ingest queue (incident cause 1)
``visibility``        ingest visibility timeout ≥ 6 × function timeout + batching window (cause 3)
``redrive-*``         redrive policy, maxReceiveCount, DLQ retention (cause 2)
``event-source``      the mapping reports batch item failures, is enabled, bounded concurrency (causes 2, 4)
``dlq-*``             DLQ depth and a sample summarised by message shape
``backlog-*``         queue depth against the consumer's throughput: drains in N hours, or grows
``permissions``       IAM: resources named by URL instead of ARN, policy simulation (cause 5)
``index``             the index exists, its mapping matches, cluster health
``ocr-worker``        the OCR worker service and its scaling bounds
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.aws import error_code, queue_depth, queue_name
from docindex.core.changes import parse_body
from docindex.core.clients import AwsClients
from docindex.core.exceptions import PoisonMessageError
from docindex.index.documents import file_name_parts
from docindex.index.mapping import MAPPINGS
from docindex.ops.deployment import Deployment
from docindex.ops.pause import PauseState, PauseStore

# AWS: at least 6 x the function timeout (Lambda's guidance for SQS event sources).
VISIBILITY_FACTOR = 6
# Lambda's guidance: at least 5, so throttled or partially failed batches do not
# dead-letter messages that would have succeeded.
MIN_MAX_RECEIVE_COUNT = 5
# A backlog that takes longer than this to drain is worth a warning.
SLOW_DRAIN_HOURS = 24.0


class Status(StrEnum):
    OK = "OK"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


_SEVERITY = {Status.SKIP: 0, Status.OK: 0, Status.WARN: 1, Status.FAIL: 2}


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


@dataclass
class Diagnosis:
    deployment: Deployment
    checks: list[Check]

    @property
    def status(self) -> Status:
        worst = max((_SEVERITY[c.status] for c in self.checks), default=0)
        return {0: Status.OK, 1: Status.WARN, 2: Status.FAIL}[worst]

    @property
    def exit_code(self) -> int:
        """0 every check OK or skipped, 1 at least one WARN, 2 at least one FAIL."""
        return _SEVERITY[self.status]

    def to_dict(self) -> dict[str, Any]:
        counts = Counter(c.status.value for c in self.checks)
        return {
            "status": self.status.value,
            "exit_code": self.exit_code,
            "counts": {s.value: counts.get(s.value, 0) for s in Status},
            "deployment": self.deployment.to_dict(),
            "checks": [c.to_dict() for c in self.checks],
        }


class Unsupported(Exception):
    """The endpoint has no such API (a local emulator)."""


def _is_unsupported(exc: Exception) -> bool:
    if isinstance(exc, ClientError):
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        code = error_code(exc)
        return (status in (404, 501) and code in ("", "404", "501", "NotImplemented")) or code in (
            "NotImplemented",
            "InvalidAction",
            "UnknownOperationException",
        )
    # An emulator without the API answers with something botocore cannot parse.
    return type(exc).__name__ in ("ResponseParserError", "UnknownServiceError")


# =========================================================================== verdicts


def _event_overlap(a: str, b: str) -> bool:
    a_stem, b_stem = a.rstrip("*"), b.rstrip("*")
    return a == b or (a.endswith("*") and b.startswith(a_stem)) or (b.endswith("*") and a.startswith(b_stem))


def _filters(config: Mapping[str, Any]) -> tuple[str, str]:
    prefix = suffix = ""
    for rule in config.get("Filter", {}).get("Key", {}).get("FilterRules", []):
        name = str(rule.get("Name", "")).lower()
        if name == "prefix":
            prefix = str(rule.get("Value", ""))
        elif name == "suffix":
            suffix = str(rule.get("Value", ""))
    return prefix, suffix


def _describe_configuration(config: Mapping[str, Any]) -> str:
    prefix, suffix = _filters(config)
    where = "".join(f" {name}={value!r}" for name, value in (("prefix", prefix), ("suffix", suffix)) if value)
    return f"{config.get('Id', '?')} ({', '.join(config.get('Events', []))}{where})"


def overlapping_configurations(configs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of queue configurations that both match some object change (each sends a message)."""
    pairs = []
    for i, first in enumerate(configs):
        for second in configs[i + 1 :]:
            events = any(_event_overlap(a, b) for a in first.get("Events", []) for b in second.get("Events", []))
            (p1, s1), (p2, s2) = _filters(first), _filters(second)
            prefixes = p1.startswith(p2) or p2.startswith(p1)
            suffixes = s1.endswith(s2) or s2.endswith(s1)
            if events and prefixes and suffixes:
                pairs.append((str(first.get("Id", "?")), str(second.get("Id", "?"))))
    return pairs


def _name_matches(matcher: Any, bucket: str) -> bool:
    if isinstance(matcher, str):
        return matcher == bucket
    if isinstance(matcher, dict) and isinstance(matcher.get("prefix"), str):
        return bucket.startswith(matcher["prefix"])
    # anything-but, wildcard...: assume it may match rather than miss a path.
    return isinstance(matcher, dict)


def rule_matches_bucket(pattern_text: str | None, bucket: str) -> bool:
    """Does an EventBridge rule's pattern let this bucket's S3 events through?"""
    try:
        pattern = json.loads(pattern_text or "null")
    except ValueError:
        pattern = None
    if not isinstance(pattern, dict):
        return False
    sources = pattern.get("source")
    if sources is not None and "aws.s3" not in sources:
        return False
    names = pattern.get("detail", {}).get("bucket", {}).get("name")
    if names is None:
        return True
    return any(_name_matches(m, bucket) for m in (names if isinstance(names, list) else [names]))


@dataclass(frozen=True)
class RuleTarget:
    rule: str
    target_id: str
    enabled: bool
    retry_attempts: int | None = None


@dataclass(frozen=True)
class NotificationFacts:
    bucket: str
    queue_arn: str
    configuration: Mapping[str, Any]
    rules: Sequence[RuleTarget] = ()
    sns_subscriptions: Sequence[tuple[str, str]] = ()  # (topic arn, subscription arn)
    observed_shapes: Mapping[str, int] = field(default_factory=dict)
    expected_mode: str | None = None
    rules_checked: bool = True


def _shape_path(shape: str) -> str | None:
    if shape.startswith("sns+"):
        return "sns"
    return {"s3": "s3", "eventbridge": "eventbridge"}.get(shape)


def _put_notification_command(bucket: str, configuration: Mapping[str, Any]) -> str:
    body = json.dumps(dict(configuration), ensure_ascii=False, separators=(",", ":"))
    return f"aws s3api put-bucket-notification-configuration --bucket {bucket} --notification-configuration '{body}'"


@dataclass
class _Paths:
    """What the notification facts add up to."""

    config: dict[str, Any]
    queue_configs: list[Mapping[str, Any]]
    eventbridge_on: bool
    live_rules: list[RuleTarget]
    paths: list[str]
    observed: set[str]
    evidence: list[str]

    @property
    def data(self) -> dict[str, Any]:
        return {
            "paths": self.paths,
            "observed_paths": sorted(self.observed),
            "eventbridge_enabled": self.eventbridge_on,
        }


def _paths(facts: NotificationFacts) -> _Paths:
    config = {k: v for k, v in facts.configuration.items() if k != "ResponseMetadata"}
    queue_configs = [c for c in config.get("QueueConfigurations", []) if c.get("QueueArn") == facts.queue_arn]
    eventbridge_on = "EventBridgeConfiguration" in config
    live_rules = [r for r in facts.rules if r.enabled]
    paths: list[str] = []
    evidence: list[str] = []
    if queue_configs:
        paths.append("s3")
        ids = ", ".join(_describe_configuration(c) for c in queue_configs)
        evidence.append(f"bucket queue configuration(s) to the ingest queue: {ids}")
    evidence.append(f"bucket EventBridge delivery: {'on' if eventbridge_on else 'off (or not reported)'}")
    if facts.rules:
        evidence.append(
            "EventBridge rules targeting the ingest queue and matching the bucket: "
            + ", ".join(f"{r.rule} ({'enabled' if r.enabled else 'disabled'})" for r in facts.rules)
        )
        # Delivery retries only put the event into SQS; processing retries are SQS's (no stacking).
        evidence += [
            f"rule {r.rule} retries delivery to the queue up to {r.retry_attempts} times"
            for r in facts.rules
            if r.retry_attempts is not None
        ]
    elif not facts.rules_checked:
        evidence.append("EventBridge rules: not checked (the endpoint has no EventBridge API)")
    if live_rules and eventbridge_on:
        paths.append("eventbridge")
    if facts.sns_subscriptions:
        paths.append("sns")
        topics = ", ".join(t for t, _ in facts.sns_subscriptions)
        evidence.append(f"SNS topics of the bucket subscribed by the ingest queue: {topics}")
    observed = {p for shape in facts.observed_shapes if (p := _shape_path(shape))}
    if facts.observed_shapes:
        shapes = ", ".join(f"{n} × {shape}" for shape, n in sorted(facts.observed_shapes.items()))
        evidence.append(f"message shapes sampled in the ingest queue: {shapes}")
    return _Paths(config, queue_configs, eventbridge_on, live_rules, paths, observed, evidence)


def _duplicate_fix(facts: NotificationFacts, view: _Paths) -> str:
    """Commands that remove every path but the one to keep (the stack's mode, else the S3 one)."""
    keep = facts.expected_mode or ("s3" if "s3" in view.paths or "s3" in view.observed else "eventbridge")
    if facts.expected_mode:
        lines = [f"keep NotificationMode={keep} (the template creates exactly that one path) and remove the other:"]
    else:
        lines = [f"keep the {keep} path and remove the other:"]
    eventbridge_seen = "eventbridge" in view.paths or "eventbridge" in view.observed
    if keep == "s3" and eventbridge_seen:
        lines += [f"aws events remove-targets --rule {r.rule} --ids {r.target_id}" for r in view.live_rules]
        if view.eventbridge_on:
            without = {k: v for k, v in view.config.items() if k != "EventBridgeConfiguration"}
            lines.append(
                "or, if nothing else uses the bucket's EventBridge events: "
                + _put_notification_command(facts.bucket, without)
            )
    if keep == "eventbridge" and view.queue_configs:
        others = [c for c in view.config.get("QueueConfigurations", []) if c.get("QueueArn") != facts.queue_arn]
        without = {k: v for k, v in view.config.items() if k != "QueueConfigurations"}
        if others:
            without["QueueConfigurations"] = others
        lines.append(_put_notification_command(facts.bucket, without))
    lines += [f"aws sns unsubscribe --subscription-arn {sub}" for _, sub in facts.sns_subscriptions]
    return "\n".join(lines)


def _duplicate_reason(view: _Paths) -> str:
    if len(view.paths) > 1:
        return f"the bucket reaches the ingest queue by {len(view.paths)} paths ({' + '.join(view.paths)})"
    if view.eventbridge_on and len(view.live_rules) > 1:
        return f"{len(view.live_rules)} EventBridge rules deliver every event to the ingest queue"
    if len(view.observed) > 1:
        return (
            f"messages arrive in {len(view.observed)} shapes ({' + '.join(sorted(view.observed))}): two live paths "
            "(one may not be visible from this account's configuration)"
        )
    return ""


def _no_path_fix(facts: NotificationFacts, view: _Paths) -> str:
    wanted = {
        "Id": "docindex-ingest",
        "QueueArn": facts.queue_arn,
        "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],
    }
    config = {**view.config, "QueueConfigurations": [*view.config.get("QueueConfigurations", []), wanted]}
    return "deploy the stack (it creates the path of NotificationMode), or: " + _put_notification_command(
        facts.bucket, config
    )


def judge_notifications(facts: NotificationFacts) -> Check:
    """Exactly one path from the bucket to the ingest queue."""
    view = _paths(facts)

    def check(status: Status, summary: str, fix: str | None = None) -> Check:
        return Check("notifications", "one notification path", status, summary, view.evidence, fix, view.data)

    overlaps = overlapping_configurations(view.queue_configs)
    if overlaps:
        dropped = {b for _, b in overlaps}
        kept = [c for c in view.config.get("QueueConfigurations", []) if c.get("Id") not in dropped]
        pairs = ", ".join(f"{a} & {b}" for a, b in overlaps)
        return check(
            Status.FAIL,
            f"queue configurations overlap ({pairs}): every matching change is sent twice",
            _put_notification_command(facts.bucket, {**view.config, "QueueConfigurations": kept})
            + f"  # drops {sorted(dropped)}",
        )
    reason = _duplicate_reason(view)
    if reason:
        return check(
            Status.FAIL,
            reason + ": every upload is announced twice (incident cause 1)",
            _duplicate_fix(facts, view),
        )
    if not view.paths and not view.observed:
        dead = " (a rule targets the queue, but EventBridge delivery is off on the bucket)" if view.live_rules else ""
        return check(
            Status.FAIL,
            "no path from the bucket to the ingest queue: new files are never indexed" + dead,
            _no_path_fix(facts, view),
        )
    path = (view.paths or sorted(view.observed))[0]
    if view.live_rules and not view.eventbridge_on and "s3" in view.paths:
        return check(
            Status.WARN,
            "one live path (s3), but an EventBridge rule also targets the ingest queue: turning on EventBridge "
            "for the bucket, for any other purpose, would announce every change twice",
            "\n".join(f"aws events remove-targets --rule {r.rule} --ids {r.target_id}" for r in view.live_rules),
        )
    if facts.expected_mode and path != facts.expected_mode:
        return check(
            Status.WARN,
            f"one path, but it is {path} while the stack's NotificationMode is {facts.expected_mode}",
            "redeploy with the mode in use, or switch as docs/deploy.md, 'Switching notification modes safely', says",
        )
    return check(Status.OK, f"exactly one path ({path})")


def judge_visibility(visibility: int, function_timeout: int, batching_window: int, *, local: bool = False) -> Check:
    """The ingest queue hides a message longer than any invocation can hold it."""
    minimum = function_timeout + batching_window
    recommended = VISIBILITY_FACTOR * function_timeout + batching_window
    evidence = [
        f"ingest queue VisibilityTimeout: {visibility} s",
        f"{'simulated ' if local else ''}function timeout: {function_timeout} s, batching window: {batching_window} s",
        f"recommended: ≥ {VISIBILITY_FACTOR} × {function_timeout} + {batching_window} = {recommended} s",
    ]
    data = {"visibility": visibility, "function_timeout": function_timeout, "batching_window": batching_window}
    fix = (
        f"aws sqs set-queue-attributes --queue-url <ingest queue url> --attributes VisibilityTimeout={recommended}"
        "\n(the template derives it from IndexerTimeout; `sam deploy` restores it)"
    )
    if local:
        fix = f"docindex local up --visibility-timeout {recommended}  (or leave it unset: 6 × --function-timeout)"
    if visibility < minimum:
        return Check(
            "visibility",
            "visibility timeout",
            Status.FAIL,
            f"{visibility} s is shorter than one invocation ({minimum} s): messages reappear while still being "
            "processed and are processed twice (incident cause 3)",
            evidence,
            fix,
            data,
        )
    if visibility < recommended:
        return Check(
            "visibility",
            "visibility timeout",
            Status.WARN,
            f"{visibility} s is below {VISIBILITY_FACTOR} × the function timeout + batching window ({recommended} s): "
            "retries of throttled invocations can overlap",
            evidence,
            fix,
            data,
        )
    return Check(
        "visibility",
        "visibility timeout",
        Status.OK,
        f"{visibility} s ≥ {recommended} s ({VISIBILITY_FACTOR} × {function_timeout} s + {batching_window} s)",
        evidence,
        data=data,
    )


def judge_redrive(label: str, url: str, source: Mapping[str, str], dlq: Mapping[str, str] | None) -> Check:
    """A redrive policy that dead-letters a failing message before it expires, into a DLQ that keeps it."""
    check_id, title = f"redrive-{label}", f"{label} redrive policy"
    raw = source.get("RedrivePolicy")
    retention = int(source.get("MessageRetentionPeriod", "345600"))
    visibility = int(source.get("VisibilityTimeout", "30"))
    if not raw:
        return Check(
            check_id,
            title,
            Status.FAIL,
            "no redrive policy: a message that always fails comes back forever (incident cause 2)",
            [f"{queue_name(url)}: no RedrivePolicy"],
            fix=f"aws sqs set-queue-attributes --queue-url {url} --attributes "
            '\'{"RedrivePolicy":"{\\"deadLetterTargetArn\\":\\"<dlq arn>\\",\\"maxReceiveCount\\":\\"5\\"}"}\'',
        )
    policy = json.loads(raw)
    max_receive = int(policy.get("maxReceiveCount", 0))
    dlq_arn = str(policy.get("deadLetterTargetArn", ""))
    evidence = [f"maxReceiveCount {max_receive}, DLQ {queue_name(dlq_arn)}"]
    data: dict[str, Any] = {"max_receive_count": max_receive, "dlq_arn": dlq_arn, "retention": retention}
    if dlq is None:
        return Check(check_id, title, Status.FAIL, f"the DLQ {dlq_arn} does not exist", evidence, data=data)
    dlq_retention = int(dlq.get("MessageRetentionPeriod", "345600"))
    evidence.append(f"retention: queue {retention / 86400:g} d, DLQ {dlq_retention / 86400:g} d")
    data["dlq_retention"] = dlq_retention
    problems: list[tuple[Status, str, str]] = []
    if ("FifoQueue" in source) != ("FifoQueue" in dlq):
        problems.append((Status.FAIL, "the DLQ is not of the same type (standard/FIFO) as the queue", ""))
    if max_receive * visibility >= retention:
        problems.append(
            (
                Status.FAIL,
                f"a failing message expires before its {max_receive} receives "
                f"({max_receive} × {visibility} s ≥ retention {retention} s): it never reaches the DLQ",
                f"aws sqs set-queue-attributes --queue-url {url} --attributes MessageRetentionPeriod=1209600",
            )
        )
    if max_receive < MIN_MAX_RECEIVE_COUNT:
        problems.append(
            (
                Status.WARN,
                f"maxReceiveCount {max_receive} < {MIN_MAX_RECEIVE_COUNT}: throttled or partially failed batches "
                "dead-letter messages that would have succeeded",
                "set maxReceiveCount to 5 (template: Queues.Settings.MaxReceiveCount)",
            )
        )
    if dlq_retention <= retention:
        problems.append(
            (
                Status.WARN,
                "the DLQ keeps messages no longer than the queue: expiry counts from the first enqueue, so "
                "dead-lettered messages can expire before anyone redrives them",
                f"aws sqs set-queue-attributes --queue-url <dlq url of {queue_name(dlq_arn)}> "
                "--attributes MessageRetentionPeriod=1209600",
            )
        )
    if problems:
        worst = max(problems, key=lambda p: _SEVERITY[p[0]])[0]
        return Check(
            check_id,
            title,
            worst,
            "; ".join(p[1] for p in problems),
            evidence,
            fix="\n".join(p[2] for p in problems if p[2]) or None,
            data=data,
        )
    return Check(
        check_id,
        title,
        Status.OK,
        f"maxReceiveCount {max_receive}, DLQ keeps messages {dlq_retention / 86400:g} d > {retention / 86400:g} d",
        evidence,
        data=data,
    )


def judge_event_source(mappings: Sequence[Mapping[str, Any]], function_name: str, paused: PauseState | None) -> Check:
    """The indexer's mapping on the ingest queue: partial batch responses, enabled, bounded concurrency."""
    if not mappings:
        return Check(
            "event-source",
            "event source mapping",
            Status.FAIL,
            f"{function_name} has no event source mapping on the ingest queue: nothing consumes it",
            fix="deploy the stack (IndexerFunction's SQS event), or: aws lambda create-event-source-mapping "
            f"--function-name {function_name} --event-source-arn <ingest queue arn> "
            "--function-response-types ReportBatchItemFailures --scaling-config MaximumConcurrency=20",
        )
    problems: list[tuple[Status, str, str]] = []
    evidence = []
    for m in mappings:
        uuid = m.get("UUID", "?")
        state = m.get("State", "?")
        types = m.get("FunctionResponseTypes") or []
        concurrency = (m.get("ScalingConfig") or {}).get("MaximumConcurrency")
        evidence.append(
            f"{uuid}: {state}, batch size {m.get('BatchSize')}, window {m.get('MaximumBatchingWindowInSeconds', 0)} s, "
            f"response types {types or 'none'}, maximum concurrency {concurrency or 'unbounded'}"
        )
        if "ReportBatchItemFailures" not in types:
            problems.append(
                (
                    Status.FAIL,
                    f"{uuid} does not report batch item failures: one bad record fails and retries its whole "
                    "batch (duplicates, retries stacked on retries)",
                    f"aws lambda update-event-source-mapping --uuid {uuid} "
                    "--function-response-types ReportBatchItemFailures",
                )
            )
        if state not in ("Enabled", "Enabling", "Updating", "Creating"):
            if paused:
                problems.append(
                    (
                        Status.WARN,
                        f"{uuid} is {state}: paused by `docindex pause` since {paused.paused_at}",
                        "docindex resume",
                    )
                )
            else:
                problems.append(
                    (
                        Status.FAIL,
                        f"{uuid} is {state}: nothing consumes the ingest queue",
                        f"aws lambda update-event-source-mapping --uuid {uuid} --enabled",
                    )
                )
        if not concurrency:
            problems.append(
                (
                    Status.WARN,
                    f"{uuid} has no maximum concurrency: a backlog can start enough indexers to overload OpenSearch",
                    f"aws lambda update-event-source-mapping --uuid {uuid} --scaling-config MaximumConcurrency=20"
                    " (template parameter IndexerMaxConcurrency)",
                )
            )
    functions = {str(m.get("FunctionArn", "")).rsplit(":", 1)[-1] for m in mappings}
    if len(mappings) > 1:
        problems.append(
            (
                Status.WARN,
                f"{len(mappings)} mappings consume the ingest queue ({', '.join(sorted(functions))})",
                "keep only the indexer's mapping",
            )
        )
    data = {"mappings": [m.get("UUID") for m in mappings]}
    if problems:
        worst = max(problems, key=lambda p: _SEVERITY[p[0]])[0]
        return Check(
            "event-source",
            "event source mapping",
            worst,
            "; ".join(p[1] for p in problems),
            evidence,
            fix="\n".join(p[2] for p in problems),
            data=data,
        )
    return Check(
        "event-source",
        "event source mapping",
        Status.OK,
        "enabled, reports batch item failures, maximum concurrency "
        + ", ".join(str((m.get("ScalingConfig") or {}).get("MaximumConcurrency")) for m in mappings),
        evidence,
        data=data,
    )


@dataclass(frozen=True)
class BacklogFacts:
    label: str
    depth: int
    retention_seconds: int
    inflow_per_minute: float | None = None  # CloudWatch NumberOfMessagesSent
    outflow_per_minute: float | None = None  # CloudWatch NumberOfMessagesDeleted
    net_per_minute: float | None = None  # from two depth samples (no CloudWatch data)
    window: str = ""
    paused: PauseState | None = None
    local: bool = False


def _duration(hours: float) -> str:
    if hours < 1:
        return f"{max(1, round(hours * 60))} min"
    if hours < 48:
        return f"{hours:.1f} hours"
    return f"{hours / 24:.1f} days"


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
    summary = f"drains in {_duration(hours)} ({-net:.1f}/min net)"
    status = Status.OK
    if hours > retention_hours:
        status = Status.FAIL
        summary += f": longer than the {_duration(retention_hours)} retention, messages will expire unprocessed"
    elif hours > SLOW_DRAIN_HOURS:
        status = Status.WARN
    return status, summary, status is not Status.OK


def describe_message(body: str | None) -> str:
    """A short label for a message's shape: ``s3 created pdf``, ``poison: ...``, ``ocr_job scanned_pdf``."""
    try:
        payload = json.loads(body or "")
    except ValueError:
        payload = None
    if isinstance(payload, dict) and payload.get("docindex") == "ocr_job":
        return f"ocr_job {payload.get('reason', '?')} .{file_name_parts(str(payload.get('key', '')))[1] or '-'}"
    try:
        parsed = parse_body(body)
    except PoisonMessageError as exc:
        return f"poison: {str(exc)[:80]}"
    if not parsed.changes:
        return parsed.shape
    change = parsed.changes[0]
    extension = file_name_parts(change.key)[1] or "-"
    return f"{parsed.shape} {change.action.value} .{extension}"


def summarise_messages(messages: Iterable[Mapping[str, Any]], now_ms: int) -> tuple[list[str], dict[str, Any]]:
    """Group sampled messages by shape; report receive counts and the oldest message's age."""
    shapes: Counter[str] = Counter()
    receives: list[int] = []
    oldest: int | None = None
    for m in messages:
        shapes[describe_message(m.get("Body"))] += 1
        attrs = m.get("Attributes", {})
        if attrs.get("ApproximateReceiveCount", "").isdigit():
            receives.append(int(attrs["ApproximateReceiveCount"]))
        if attrs.get("SentTimestamp", "").isdigit():
            sent = int(attrs["SentTimestamp"])
            oldest = sent if oldest is None else min(oldest, sent)
    lines = [f"{n} × {shape}" for shape, n in shapes.most_common()]
    data: dict[str, Any] = {"shapes": dict(shapes)}
    if receives:
        lines.append(f"receive counts {min(receives)}..{max(receives)}")
    if oldest is not None:
        age_hours = max(0.0, (now_ms - oldest) / 3_600_000)
        data["oldest_age_hours"] = round(age_hours, 2)
        lines.append(f"oldest sampled message sent {_duration(age_hours)} ago")
    return lines, data


def policy_problems(document: Any, where: str) -> list[str]:
    """Statements naming a resource that is not an ARN (the incident's queue URLs, cause 5)."""
    if isinstance(document, str):
        from urllib.parse import unquote

        try:
            document = json.loads(unquote(document))
        except ValueError:
            return [f"{where}: unreadable policy document"]
    statements = document.get("Statement", []) if isinstance(document, dict) else []
    if isinstance(statements, dict):
        statements = [statements]
    problems = []
    for i, statement in enumerate(statements):
        resources = statement.get("Resource", [])
        for resource in [resources] if isinstance(resources, str) else resources:
            if resource == "*" or str(resource).startswith("arn:"):
                continue
            hint = (
                " (a URL: IAM needs the ARN, arn:aws:sqs:REGION:ACCOUNT:QUEUE for a queue)"
                if "://" in str(resource)
                else ""
            )
            problems.append(f"{where} statement {statement.get('Sid', i)}: resource {resource!r} is not an ARN{hint}")
    return problems


def mapping_differences(actual: Mapping[str, Any], expected: Mapping[str, Any] = MAPPINGS) -> list[str]:
    """Fields of the contract's mapping that the index lacks or types differently."""
    problems = []
    props = actual.get("properties", {})
    for name, spec in expected.get("properties", {}).items():
        have = props.get(name)
        if have is None:
            problems.append(f"field {name} is missing (expected {spec['type']})")
            continue
        if have.get("type", "object") != spec["type"]:
            problems.append(f"field {name} is {have.get('type', 'object')}, expected {spec['type']}")
        for sub, sub_spec in spec.get("fields", {}).items():
            sub_have = have.get("fields", {}).get(sub)
            if sub_have is None or sub_have.get("type") != sub_spec["type"]:
                problems.append(
                    f"field {name}.{sub} is {sub_have and sub_have.get('type')}, expected {sub_spec['type']}"
                )
    return problems


# =========================================================================== gathering


def _error_check(check_id: str, title: str, exc: Exception) -> Check:
    """The verdict when a check's facts could not be gathered."""
    from opensearchpy.exceptions import OpenSearchException

    if _is_unsupported(exc):
        return Check(check_id, title, Status.SKIP, f"not supported by this endpoint ({type(exc).__name__})")
    if isinstance(exc, OpenSearchException):
        return Check(check_id, title, Status.FAIL, f"OpenSearch: {type(exc).__name__}: {exc}")
    if isinstance(exc, ClientError):
        code = error_code(exc)
        if any(word in code for word in ("NonExistent", "DoesNotExist", "NoSuch", "NotFound")):
            return Check(check_id, title, Status.FAIL, f"not found: {code}: {exc}")
    return Check(check_id, title, Status.WARN, f"could not check: {type(exc).__name__}: {exc}")


class Diagnoser:
    """Gathers the facts for every check; read-only apart from sampling queues."""

    def __init__(
        self,
        deployment: Deployment,
        clients: AwsClients,
        *,
        opensearch: Any = None,
        sample: int = 10,
        sample_seconds: float = 10.0,
        window_minutes: int = 15,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.d = deployment
        self.clients = clients
        self.opensearch = opensearch
        self.sample = sample
        self.sample_seconds = sample_seconds
        self.window_minutes = window_minutes
        self.clock = clock
        self.sleep = sleep
        self._attrs: dict[str, dict[str, str]] = {}
        self._paused: PauseState | None = None
        self._mappings: list[dict[str, Any]] | None = None

    # -- helpers -------------------------------------------------------------

    @property
    def sqs(self) -> Any:
        return self.clients.client("sqs")

    def attrs(self, url: str) -> dict[str, str]:
        if url not in self._attrs:
            self._attrs[url] = dict(self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"])
        return self._attrs[url]

    def dlq_url(self, source_url: str) -> str | None:
        raw = self.attrs(source_url).get("RedrivePolicy")
        if not raw:
            return None
        arn = json.loads(raw)["deadLetterTargetArn"]
        parts = arn.split(":")
        try:
            return str(self.sqs.get_queue_url(QueueName=parts[5], QueueOwnerAWSAccountId=parts[4])["QueueUrl"])
        except ClientError as exc:
            if "NonExistent" in error_code(exc) or "QueueDoesNotExist" in error_code(exc):
                return None
            raise

    def depth(self, url: str) -> int:
        return queue_depth(self.sqs, url)

    def peek(self, url: str, count: int) -> list[dict[str, Any]]:
        """Receive up to ``count`` messages and make them visible again at once."""
        found: list[dict[str, Any]] = []
        try:
            while len(found) < count:
                got = self.sqs.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=min(10, count - len(found)),
                    VisibilityTimeout=30,
                    WaitTimeSeconds=1 if not found else 0,
                    AttributeNames=["All"],
                ).get("Messages", [])
                if not got:
                    break
                found.extend(got)
        finally:
            for start in range(0, len(found), 10):
                chunk = found[start : start + 10]
                self.sqs.change_message_visibility_batch(
                    QueueUrl=url,
                    Entries=[
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                        for i, m in enumerate(chunk)
                    ],
                )
        return found

    def _load_pause(self) -> None:
        if not self.d.ledger_table:
            return
        try:
            self._paused = PauseStore(self.clients.client("dynamodb"), self.d.ledger_table).load()
        except (ClientError, BotoCoreError):
            self._paused = None

    def mappings(self) -> list[dict[str, Any]]:
        if self._mappings is None:
            lam = self.clients.client("lambda")
            arn = self.attrs(str(self.d.ingest_queue_url))["QueueArn"]
            found: list[dict[str, Any]] = []
            for page in lam.get_paginator("list_event_source_mappings").paginate(EventSourceArn=arn):
                found.extend(page.get("EventSourceMappings", []))
            self._mappings = found
        return self._mappings

    def _guard(self, check_id: str, title: str, run: Callable[[], Check]) -> Check:
        """Run one check; a failure to gather its facts becomes its verdict, never a crash."""
        try:
            return run()
        except Unsupported as exc:
            return Check(check_id, title, Status.SKIP, str(exc))
        except Exception as exc:
            from opensearchpy.exceptions import OpenSearchException

            known = (ClientError, BotoCoreError, OSError, ValueError, KeyError, OpenSearchException)
            if not isinstance(exc, known) and not _is_unsupported(exc):
                raise
            return _error_check(check_id, title, exc)

    # -- the run -------------------------------------------------------------

    def run(self, only: Sequence[str] | None = None) -> Diagnosis:
        self._load_pause()
        plan: list[tuple[str, str, Callable[[], Check]]] = [
            ("notifications", "one notification path", self.check_notifications),
            ("visibility", "visibility timeout", self.check_visibility),
            ("redrive-ingest", "ingest redrive policy", lambda: self.check_redrive("ingest", self.d.ingest_queue_url)),
            ("redrive-ocr", "ocr redrive policy", lambda: self.check_redrive("ocr", self.d.ocr_queue_url)),
            ("event-source", "event source mapping", self.check_event_source),
            (
                "dlq-ingest",
                "ingest DLQ",
                lambda: self.check_dlq("ingest", self.d.ingest_queue_url, self.d.ingest_dlq_url),
            ),
            ("dlq-ocr", "ocr DLQ", lambda: self.check_dlq("ocr", self.d.ocr_queue_url, self.d.ocr_dlq_url)),
            ("backlog-ingest", "ingest backlog", lambda: self.check_backlog("ingest", self.d.ingest_queue_url)),
            ("backlog-ocr", "ocr backlog", lambda: self.check_backlog("ocr", self.d.ocr_queue_url)),
            ("permissions", "function permissions", self.check_permissions),
            ("index", "index and cluster", self.check_index),
            ("ocr-worker", "OCR worker service", self.check_ocr_worker),
        ]
        checks = [
            self._guard(check_id, title, run)
            for check_id, title, run in plan
            if not only or any(check_id == o or check_id.startswith(o + "-") for o in only)
        ]
        return Diagnosis(self.d, checks)

    # -- checks --------------------------------------------------------------

    def check_notifications(self) -> Check:
        d = self.d
        if not (d.bucket and d.ingest_queue_url):
            raise Unsupported("needs the bucket and the ingest queue (--stack, or --bucket and --queue-url)")
        queue_arn = self.attrs(d.ingest_queue_url)["QueueArn"]
        config = self.clients.client("s3").get_bucket_notification_configuration(Bucket=d.bucket)
        rules: list[RuleTarget] = []
        rules_checked = True
        try:
            rules = self._rules_to(queue_arn, d.bucket)
        except (ClientError, BotoCoreError) as exc:
            if not _is_unsupported(exc):
                raise
            rules_checked = False
        subscriptions = self._sns_paths(config, queue_arn)
        shapes: Counter[str] = Counter()
        if self.sample and int(self.attrs(d.ingest_queue_url).get("ApproximateNumberOfMessages", "0")):
            for message in self.peek(d.ingest_queue_url, self.sample):
                try:
                    shapes[parse_body(message.get("Body")).shape] += 1
                except PoisonMessageError:
                    shapes["poison"] += 1
        return judge_notifications(
            NotificationFacts(
                bucket=d.bucket,
                queue_arn=queue_arn,
                configuration=config,
                rules=rules,
                sns_subscriptions=subscriptions,
                observed_shapes=dict(shapes),
                expected_mode=d.notification_mode,
                rules_checked=rules_checked,
            )
        )

    def _rules_to(self, queue_arn: str, bucket: str) -> list[RuleTarget]:
        events = self.clients.client("events")
        names: list[str] = []
        params: dict[str, Any] = {"TargetArn": queue_arn}
        while True:
            page = events.list_rule_names_by_target(**params)
            names += page.get("RuleNames", [])
            if not page.get("NextToken"):
                break
            params["NextToken"] = page["NextToken"]
        found = []
        for name in names:
            rule = events.describe_rule(Name=name)
            if not rule_matches_bucket(rule.get("EventPattern"), bucket):
                continue
            for target in events.list_targets_by_rule(Rule=name).get("Targets", []):
                if target.get("Arn") == queue_arn:
                    found.append(
                        RuleTarget(
                            name,
                            str(target.get("Id")),
                            rule.get("State") == "ENABLED",
                            (target.get("RetryPolicy") or {}).get("MaximumRetryAttempts"),
                        )
                    )
        return found

    def _sns_paths(self, config: Mapping[str, Any], queue_arn: str) -> list[tuple[str, str]]:
        found = []
        for topic_config in config.get("TopicConfigurations", []):
            topic = topic_config.get("TopicArn")
            try:
                subs = self.clients.client("sns").list_subscriptions_by_topic(TopicArn=topic).get("Subscriptions", [])
            except (ClientError, BotoCoreError):
                continue
            found += [(topic, s["SubscriptionArn"]) for s in subs if s.get("Endpoint") == queue_arn]
        return found

    def _function_timeout_and_window(self) -> tuple[int, int, bool]:
        d = self.d
        if d.is_local or not d.function_name:
            if d.local_function_timeout is None:
                raise Unsupported("no function timeout known (--function, --stack, or LOCAL_FUNCTION_TIMEOUT)")
            # The local runner invokes as soon as it has received messages: no batching window.
            return d.local_function_timeout, 0, True
        config = self.clients.client("lambda").get_function_configuration(FunctionName=d.function_name)
        window = max((int(m.get("MaximumBatchingWindowInSeconds") or 0) for m in self.mappings()), default=0)
        return int(config["Timeout"]), window, False

    def check_visibility(self) -> Check:
        if not self.d.ingest_queue_url:
            raise Unsupported("no ingest queue (--stack or --queue-url)")
        visibility = int(self.attrs(self.d.ingest_queue_url)["VisibilityTimeout"])
        timeout, window, local = self._function_timeout_and_window()
        return judge_visibility(visibility, timeout, window, local=local)

    def check_redrive(self, label: str, url: str | None) -> Check:
        if not url:
            raise Unsupported(f"no {label} queue configured")
        dlq = self.dlq_url(url)
        return judge_redrive(label, url, self.attrs(url), self.attrs(dlq) if dlq else None)

    def check_event_source(self) -> Check:
        d = self.d
        if d.is_local:
            raise Unsupported("no Lambda locally: `docindex local run` drives the indexer with partial batch responses")
        if not d.function_name or not d.ingest_queue_url:
            raise Unsupported(
                "needs the indexer function and the ingest queue (--stack, or --function and --queue-url)"
            )
        function_arn_suffix = f":function:{d.function_name}"
        own = [m for m in self.mappings() if str(m.get("FunctionArn", "")).endswith(function_arn_suffix)]
        others = [m for m in self.mappings() if m not in own]
        check = judge_event_source(own + others if own else own, d.function_name, self._paused)
        if not own and others:
            check.evidence.append(
                "other functions consume the ingest queue: " + ", ".join(str(m.get("FunctionArn")) for m in others)
            )
        return check

    def check_dlq(self, label: str, source_url: str | None, dlq_url: str | None) -> Check:
        check_id, title = f"dlq-{label}", f"{label} DLQ"
        url = dlq_url or (self.dlq_url(source_url) if source_url else None)
        if not url:
            raise Unsupported(f"no {label} DLQ known")
        depth = self.depth(url)
        if depth == 0:
            return Check(check_id, title, Status.OK, "empty", [f"{queue_name(url)}: 0 messages"])
        sample = self.peek(url, self.sample) if self.sample else []
        lines, data = summarise_messages(sample, int(self.clock().timestamp() * 1000))
        retention = int(self.attrs(url).get("MessageRetentionPeriod", "345600"))
        if "oldest_age_hours" in data:
            left = retention / 3600 - data["oldest_age_hours"]
            lines.append(f"the oldest sampled message expires in {_duration(max(left, 0))} (DLQ retention)")
        data["depth"] = depth
        return Check(
            check_id,
            title,
            Status.WARN,
            f"{depth} dead-lettered message(s)" + (f"; sample of {len(sample)}: {lines[0]}" if lines else ""),
            [f"{queue_name(url)}: {depth} messages", *lines],
            fix="find the cause (poison shapes, extraction errors in the logs); once fixed: docindex redrive start",
            data=data,
        )

    def check_backlog(self, label: str, url: str | None) -> Check:
        if not url:
            raise Unsupported(f"no {label} queue configured")
        depth = self.depth(url)
        retention = int(self.attrs(url).get("MessageRetentionPeriod", "345600"))
        paused = self._paused
        if depth == 0:
            return judge_backlog(BacklogFacts(label, 0, retention, paused=paused, local=self.d.is_local))
        inflow, outflow = self._throughput(queue_name(url))
        if inflow is not None and outflow is not None and (inflow or outflow):
            return judge_backlog(
                BacklogFacts(
                    label,
                    depth,
                    retention,
                    inflow_per_minute=inflow,
                    outflow_per_minute=outflow,
                    window=f"CloudWatch, last {self.window_minutes} min",
                    paused=paused,
                    local=self.d.is_local,
                )
            )
        # No metrics (a local endpoint, or a queue idle for hours): watch the depth instead.
        self.sleep(self.sample_seconds)
        later = self.depth(url)
        net = (later - depth) / (self.sample_seconds / 60) if self.sample_seconds > 0 else 0.0
        return judge_backlog(
            BacklogFacts(
                label,
                later,
                retention,
                net_per_minute=net,
                window=f"depth sampled {self.sample_seconds:g} s apart (no CloudWatch data)",
                paused=paused,
                local=self.d.is_local,
            )
        )

    def _throughput(self, name: str) -> tuple[float | None, float | None]:
        cloudwatch = self.clients.client("cloudwatch")
        end = self.clock()
        start = end - timedelta(minutes=self.window_minutes)
        totals: list[float | None] = []
        for metric in ("NumberOfMessagesSent", "NumberOfMessagesDeleted"):
            try:
                points = cloudwatch.get_metric_statistics(
                    Namespace="AWS/SQS",
                    MetricName=metric,
                    Dimensions=[{"Name": "QueueName", "Value": name}],
                    StartTime=start,
                    EndTime=end,
                    Period=60,
                    Statistics=["Sum"],
                ).get("Datapoints", [])
            except (ClientError, BotoCoreError):
                return None, None
            totals.append(sum(float(p.get("Sum", 0.0)) for p in points) / self.window_minutes if points else None)
        return totals[0], totals[1]

    def check_permissions(self) -> Check:
        d = self.d
        if d.is_local:
            raise Unsupported("no IAM roles locally: the local run uses the endpoint's test credentials")
        if not d.function_name:
            raise Unsupported("needs the indexer function (--stack or --function)")
        iam = self.clients.client("iam")
        role_arn = self.clients.client("lambda").get_function_configuration(FunctionName=d.function_name)["Role"]
        role = role_arn.rsplit("/", 1)[-1]
        problems: list[str] = []
        evidence = [f"indexer role: {role_arn}"]
        for name in iam.list_role_policies(RoleName=role).get("PolicyNames", []):
            document = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
            problems += policy_problems(document, f"{role} inline policy {name}")
        for attached in iam.list_attached_role_policies(RoleName=role).get("AttachedPolicies", []):
            policy = iam.get_policy(PolicyArn=attached["PolicyArn"])["Policy"]
            version = iam.get_policy_version(PolicyArn=attached["PolicyArn"], VersionId=policy["DefaultVersionId"])
            problems += policy_problems(
                version["PolicyVersion"]["Document"], f"managed policy {attached['PolicyName']}"
            )
        for url in filter(None, [d.ingest_queue_url, d.ingest_dlq_url, d.ocr_queue_url, d.ocr_dlq_url]):
            policy = self.attrs(url).get("Policy")
            if policy:
                problems += policy_problems(policy, f"queue policy of {queue_name(url)}")
        denied, simulated = self._simulate(role_arn)
        problems += denied
        if simulated != "ran":
            evidence.append(f"policy simulation: {simulated}")
        elif not denied:
            evidence.append("policy simulation: every required action allowed")
        if problems:
            return Check(
                "permissions",
                "function permissions",
                Status.FAIL,
                f"{len(problems)} problem(s): {problems[0]}",
                evidence + problems,
                fix="name resources by ARN (arn:aws:sqs:REGION:ACCOUNT:QUEUE, not the queue URL) and grant the "
                "actions above; the template's IndexerRole has the exact list",
            )
        if simulated != "ran":
            return Check(
                "permissions",
                "function permissions",
                Status.SKIP,
                "no resource named by URL; the policy simulator is not available here, so the grants are unverified",
                evidence,
            )
        return Check(
            "permissions", "function permissions", Status.OK, "the role can call what the indexer needs", evidence
        )

    def _required_actions(self) -> list[tuple[list[str], list[str]]]:
        d = self.d
        sqs_arn = self.attrs(str(d.ingest_queue_url))["QueueArn"] if d.ingest_queue_url else None
        needs: list[tuple[list[str], list[str]]] = []
        if sqs_arn:
            needs.append(
                (
                    [
                        "sqs:ReceiveMessage",
                        "sqs:DeleteMessage",
                        "sqs:GetQueueAttributes",
                        "sqs:ChangeMessageVisibility",
                    ],
                    [sqs_arn],
                )
            )
        if d.ocr_queue_url:
            needs.append((["sqs:SendMessage"], [self.attrs(d.ocr_queue_url)["QueueArn"]]))
        if d.bucket:
            needs.append((["s3:GetObject", "s3:GetObjectVersion"], [f"arn:aws:s3:::{d.bucket}/docindex-probe"]))
            needs.append((["s3:ListBucket"], [f"arn:aws:s3:::{d.bucket}"]))
        ddb = self.clients.client("dynamodb")
        tables = [
            ddb.describe_table(TableName=t)["Table"]["TableArn"] for t in {d.idempotency_table, d.ledger_table} if t
        ]
        if tables:
            needs.append(
                (["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"], tables)
            )
        if d.opensearch_arn:
            if d.opensearch_service == "aoss":
                needs.append((["aoss:APIAccessAll"], [d.opensearch_arn]))
            else:
                needs.append((["es:ESHttpPost", "es:ESHttpPut", "es:ESHttpGet"], [f"{d.opensearch_arn}/*"]))
        return needs

    def _simulate(self, role_arn: str) -> tuple[list[str], str]:
        """The denied (action, resource) pairs, and "ran" or why the simulation could not run."""
        iam = self.clients.client("iam")
        denied: list[str] = []
        try:
            for actions, resources in self._required_actions():
                results = iam.simulate_principal_policy(
                    PolicySourceArn=role_arn, ActionNames=actions, ResourceArns=resources
                )["EvaluationResults"]
                denied += [
                    f"{r['EvalActionName']} on {r.get('EvalResourceName')}: {r.get('EvalDecision')}"
                    for r in results
                    if r.get("EvalDecision") != "allowed"
                ]
        except Exception as exc:
            # (an emulator without the API answers with what botocore cannot parse: not a BotoCoreError)
            if _is_unsupported(exc):
                return [], "not available on this endpoint"
            if isinstance(exc, ClientError) and "AccessDenied" in error_code(exc):
                return [], "not available: the caller may not call iam:SimulatePrincipalPolicy"
            raise
        return denied, "ran"

    def check_index(self) -> Check:
        d = self.d
        if self.opensearch is None:
            raise Unsupported("no OpenSearch endpoint (--opensearch-endpoint, OPENSEARCH_ENDPOINT or --stack)")
        client = self.opensearch
        index = d.opensearch_index
        evidence = [f"endpoint {d.opensearch_endpoint}, index {index}"]
        if not client.indices.exists(index=index):
            return Check(
                "index",
                "index and cluster",
                Status.FAIL,
                f"index or alias {index!r} does not exist",
                evidence,
                fix="the indexer creates it on its first batch; or create it with the mapping in search_index.py",
            )
        problems: list[str] = []
        warnings: list[str] = []
        mappings = client.indices.get_mapping(index=index)
        for concrete, body in mappings.items():
            evidence.append(f"concrete index {concrete}")
            problems += [f"{concrete}: {p}" for p in mapping_differences(body.get("mappings", {}))]
        if d.opensearch_service != "aoss":
            settings = client.indices.get_settings(index=index)
            for concrete, body in settings.items():
                tokenizers = body.get("settings", {}).get("index", {}).get("analysis", {}).get("tokenizer", {})
                if not any(t.get("type") == "kuromoji_tokenizer" for t in tokenizers.values()):
                    warnings.append(
                        f"{concrete}: no kuromoji tokenizer (CJK bigram fallback): Japanese search is coarser"
                    )
            health = client.cluster.health()
            status = str(health.get("status"))
            evidence.append(
                f"cluster health {status}: {health.get('number_of_nodes')} node(s), "
                f"{health.get('unassigned_shards')} unassigned shard(s)"
            )
            if status == "red":
                problems.append("cluster health is red: some primary shards are unassigned, writes fail")
            elif status == "yellow":
                evidence.append("yellow: replicas unassigned (normal on a single node); reads and writes work")
        count = client.count(index=index)["count"]
        evidence.append(f"{count} documents")
        if problems:
            return Check(
                "index",
                "index and cluster",
                Status.FAIL,
                "; ".join(problems[:3]),
                evidence + problems + warnings,
                fix="create a new index with the mapping of search_index.py, reindex, and move the alias "
                f"{index!r} to it (the pipeline writes through the alias)",
            )
        if warnings:
            return Check("index", "index and cluster", Status.WARN, "; ".join(warnings), evidence)
        return Check("index", "index and cluster", Status.OK, f"mapping matches, {count} documents", evidence)

    def check_ocr_worker(self) -> Check:
        d = self.d
        if d.is_local:
            raise Unsupported("no ECS locally: the OCR worker runs inside `docindex local run`")
        if not (d.ecs_cluster and d.ecs_service):
            raise Unsupported("needs the worker's cluster and service (--stack, or --cluster and --service)")
        services = self.clients.client("ecs").describe_services(cluster=d.ecs_cluster, services=[d.ecs_service])
        active = [s for s in services.get("services", []) if s.get("status") == "ACTIVE"]
        if not active:
            return Check("ocr-worker", "OCR worker service", Status.FAIL, f"service {d.ecs_service} not found")
        service = active[0]
        desired, running = int(service.get("desiredCount", 0)), int(service.get("runningCount", 0))
        evidence = [f"{d.ecs_cluster}/{d.ecs_service}: desired {desired}, running {running}"]
        targets = self.clients.client("application-autoscaling").describe_scalable_targets(
            ServiceNamespace="ecs",
            ResourceIds=[f"service/{d.ecs_cluster}/{d.ecs_service}"],
            ScalableDimension="ecs:service:DesiredCount",
        )["ScalableTargets"]
        bounds = (int(targets[0]["MinCapacity"]), int(targets[0]["MaxCapacity"])) if targets else None
        evidence.append(f"auto scaling bounds: {bounds[0]}..{bounds[1]}" if bounds else "no scalable target")
        waiting = self.depth(d.ocr_queue_url) if d.ocr_queue_url else 0
        evidence.append(f"OCR queue depth {waiting}")
        if bounds and bounds[1] == 0:
            if self._paused:
                return Check(
                    "ocr-worker",
                    "OCR worker service",
                    Status.WARN,
                    f"scaled to zero by `docindex pause` since {self._paused.paused_at}",
                    evidence,
                    fix="docindex resume",
                )
            return Check(
                "ocr-worker",
                "OCR worker service",
                Status.FAIL,
                "maximum capacity is 0: no OCR job will ever run",
                evidence,
                fix="docindex resume --min 0 --max 10, or redeploy (WorkerMaxTasks)",
            )
        if waiting and running == 0 and desired == 0:
            return Check(
                "ocr-worker",
                "OCR worker service",
                Status.WARN,
                f"{waiting} OCR jobs wait and no task runs (the wake alarm starts one within minutes)",
                evidence,
            )
        return Check("ocr-worker", "OCR worker service", Status.OK, f"{running} task(s) running", evidence)
