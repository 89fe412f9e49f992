"""Notification facts: every path from the bucket to the ingest queue (S3, EventBridge, SNS).

Read from the bucket's notification configuration, the EventBridge rules that
target the queue, the bucket's SNS topics, and the shapes of a few messages
sampled in the queue (a path this account cannot see still shows in them).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.changes import parse_body
from docindex.core.exceptions import PoisonMessageError, Unsupported
from docindex.ops.diagnose.facts.reader import Reader, is_unsupported


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
    """An EventBridge rule matching the bucket, one of whose targets is the ingest queue."""

    rule: str
    target_id: str
    enabled: bool
    retry_attempts: int | None = None


@dataclass(frozen=True)
class NotificationFacts:
    """Every way the bucket's changes can reach the ingest queue, as configured and as observed."""

    bucket: str
    queue_arn: str
    configuration: Mapping[str, Any]
    rules: Sequence[RuleTarget] = ()
    sns_subscriptions: Sequence[tuple[str, str]] = ()  # (topic arn, subscription arn)
    observed_shapes: Mapping[str, int] = field(default_factory=dict)
    expected_mode: str | None = None
    rules_checked: bool = True


def notification_facts(reader: Reader) -> NotificationFacts:
    """Read the bucket's paths to the ingest queue, and sample the queue for the shapes that arrive."""
    d = reader.deployment
    if not (d.bucket and d.ingest_queue_url):
        raise Unsupported("needs the bucket and the ingest queue (--stack, or --bucket and --queue-url)")
    queue_arn = reader.attrs(d.ingest_queue_url)["QueueArn"]
    config = reader.client("s3").get_bucket_notification_configuration(Bucket=d.bucket)
    rules: list[RuleTarget] = []
    rules_checked = True
    try:
        rules = _rules_to(reader, queue_arn, d.bucket)
    except (ClientError, BotoCoreError) as exc:
        if not is_unsupported(exc):
            raise
        rules_checked = False
    subscriptions = _sns_paths(reader, config, queue_arn)
    shapes: Counter[str] = Counter()
    if reader.sample and int(reader.attrs(d.ingest_queue_url).get("ApproximateNumberOfMessages", "0")):
        for message in reader.peek(d.ingest_queue_url, reader.sample):
            try:
                shapes[parse_body(message.get("Body")).shape] += 1
            except PoisonMessageError:
                shapes["poison"] += 1
    return NotificationFacts(
        bucket=d.bucket,
        queue_arn=queue_arn,
        configuration=config,
        rules=rules,
        sns_subscriptions=subscriptions,
        observed_shapes=dict(shapes),
        expected_mode=d.notification_mode,
        rules_checked=rules_checked,
    )


def _rules_to(reader: Reader, queue_arn: str, bucket: str) -> list[RuleTarget]:
    events = reader.client("events")
    names: list[str] = []
    for page in events.get_paginator("list_rule_names_by_target").paginate(TargetArn=queue_arn):
        names += page.get("RuleNames", [])
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


def _sns_paths(reader: Reader, config: Mapping[str, Any], queue_arn: str) -> list[tuple[str, str]]:
    found = []
    for topic_config in config.get("TopicConfigurations", []):
        topic = topic_config.get("TopicArn")
        try:
            subs = reader.client("sns").list_subscriptions_by_topic(TopicArn=topic).get("Subscriptions", [])
        except (ClientError, BotoCoreError):
            continue
        found += [(topic, s["SubscriptionArn"]) for s in subs if s.get("Endpoint") == queue_arn]
    return found
