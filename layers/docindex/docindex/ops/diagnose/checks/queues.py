"""Queue verdicts: visibility timeout, redrive policies and the ingest queue's consumers.

``visibility``    the ingest queue hides a message longer than an invocation can hold it (incident cause 3)
``redrive-*``     a failing message reaches a DLQ that keeps it (cause 2)
``event-source``  the indexer's mapping reports batch item failures, is enabled, bounded (causes 2, 4)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from docindex.core.aws import queue_name
from docindex.ops.diagnose.facts.queues import DEFAULT_RETENTION
from docindex.ops.diagnose.report import Check, Status, worst
from docindex.ops.pause import PauseState

# AWS: at least 6 x the function timeout (Lambda's guidance for SQS event sources).
VISIBILITY_FACTOR = 6
# Lambda's guidance: at least 5, so throttled or partially failed batches do not
# dead-letter messages that would have succeeded.
MIN_MAX_RECEIVE_COUNT = 5


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
    retention = int(source.get("MessageRetentionPeriod", DEFAULT_RETENTION))
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
    dlq_retention = int(dlq.get("MessageRetentionPeriod", DEFAULT_RETENTION))
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
        return Check(
            check_id,
            title,
            worst(p[0] for p in problems),
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
        return Check(
            "event-source",
            "event source mapping",
            worst(p[0] for p in problems),
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


def judge_consumers(function_name: str, mappings: Sequence[Mapping[str, Any]], paused: PauseState | None) -> Check:
    """The ingest queue's consumers: the indexer's own mappings judged, any other function's noted."""
    function_arn_suffix = f":function:{function_name}"
    own = [m for m in mappings if str(m.get("FunctionArn", "")).endswith(function_arn_suffix)]
    others = [m for m in mappings if m not in own]
    # Another function's mapping counts against the indexer's only when the indexer has one.
    check = judge_event_source(own + others if own else own, function_name, paused)
    if not own and others:
        check.evidence.append(
            "other functions consume the ingest queue: " + ", ".join(str(m.get("FunctionArn")) for m in others)
        )
    return check
