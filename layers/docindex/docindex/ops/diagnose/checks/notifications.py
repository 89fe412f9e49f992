"""Notification verdicts: exactly one path from the bucket to the ingest queue (incident cause 1).

Two paths (a queue configuration and EventBridge, two overlapping queue
configurations, two rules, an SNS topic besides) announce every upload twice;
no path means new files are never indexed. Each finding comes with the exact
commands that leave one path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docindex.ops.diagnose.facts.notifications import NotificationFacts, RuleTarget
from docindex.ops.diagnose.report import Check, Status


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
