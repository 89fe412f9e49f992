"""DLQ verdicts: what was dead-lettered, summarised by message shape, and when it expires."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from docindex.core.changes import parse_body
from docindex.core.exceptions import PoisonMessageError
from docindex.index.documents import file_name_parts
from docindex.ops.diagnose.facts.queues import DlqFacts
from docindex.ops.diagnose.report import Check, Status, duration


def judge_dlq(facts: DlqFacts) -> Check:
    """A DLQ is fine empty; with messages, a warning that says what they are and when they expire."""
    check_id, title = f"dlq-{facts.label}", f"{facts.label} DLQ"
    if facts.depth == 0:
        return Check(check_id, title, Status.OK, "empty", [f"{facts.queue}: 0 messages"])
    lines, data = summarise_messages(facts.sample, facts.now_ms)
    if "oldest_age_hours" in data:
        left = facts.retention_seconds / 3600 - data["oldest_age_hours"]
        lines.append(f"the oldest sampled message expires in {duration(max(left, 0))} (DLQ retention)")
    data["depth"] = facts.depth
    return Check(
        check_id,
        title,
        Status.WARN,
        f"{facts.depth} dead-lettered message(s)" + (f"; sample of {len(facts.sample)}: {lines[0]}" if lines else ""),
        [f"{facts.queue}: {facts.depth} messages", *lines],
        fix="find the cause (poison shapes, extraction errors in the logs); once fixed: docindex redrive start",
        data=data,
    )


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
        lines.append(f"oldest sampled message sent {duration(age_hours)} ago")
    return lines, data
