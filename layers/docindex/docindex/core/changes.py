"""Every accepted message shape, normalized into one ``ObjectChange``.

Accepted SQS bodies (docs/architecture.md, the message):

1. S3 event notification ``{"Records": [{"eventSource": "aws:s3", ...}]}``: ObjectCreated,
   ObjectRemoved, LifecycleExpiration (a removal) and ObjectRestore:Completed (a create)
2. The S3 test event ``{"Service": "Amazon S3", "Event": "s3:TestEvent"}`` (ignored)
3. EventBridge S3 events (``"source": "aws.s3"``, Object Created / Object Deleted / Object
   Restore Completed)
4. SNS-wrapped S3 notifications (``{"Type": "Notification", "Message": "<json>"}``)
5. docindex's own backfill/reconcile messages (``{"docindex": "change", ...}``)

Anything else raises ``PoisonMessageError``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.data_classes.event_bridge_event import EventBridgeEvent
from aws_lambda_powertools.utilities.data_classes.s3_event import (
    S3EventBridgeNotificationEvent,
    S3EventRecord,
)
from aws_lambda_powertools.utilities.data_classes.sns_event import SNSMessage

from docindex.core.exceptions import PoisonMessageError

if TYPE_CHECKING:
    from docindex.core.settings import Settings

# S3 sequencers are hex strings of varying length; S3 says: right-pad the
# shorter one with zeros, then compare as strings. Padding every sequencer to
# one width makes plain string comparison (in Python and in DynamoDB
# condition expressions) do exactly that.
SEQUENCER_WIDTH = 64


# A restored copy of an archived object is readable now: re-index the object. S3 documents the
# sequencer for PUTs and DELETEs only, so a restore is ordered by its event time (as an
# observation), which is after the write it restores; its own time keeps it apart from that
# write for idempotency.
RESTORE_COMPLETED = "ObjectRestore:Completed"


class Action(StrEnum):
    CREATED = "created"
    REMOVED = "removed"


class Origin(StrEnum):
    S3 = "s3"
    EVENTBRIDGE = "eventbridge"
    SNS = "sns"
    BACKFILL = "backfill"


def doc_id(bucket: str, key: str) -> str:
    """The index ``_id``: lowercase hex SHA-256 of ``"{bucket}/{key}"`` (key decoded)."""
    return hashlib.sha256(f"{bucket}/{key}".encode()).hexdigest()


def is_excluded(key: str, settings: Settings | None = None, *, globs: tuple[str, ...] | None = None) -> bool:
    """Whether ``key`` is never indexed (``EXCLUDE_KEYS``): lock files, thumbnail caches, folder markers...

    A glob without "/" is matched against the file name, one with "/" against
    the whole key; case does not matter (Windows file servers). The indexer
    skips such keys before reading them; backfill and reconcile call this too,
    so a skipped file is neither sent nor reported missing.
    """
    if globs is None:
        if settings is None:
            from docindex.core.settings import DEFAULT_EXCLUDE_KEYS

            globs = tuple(g.strip().lower() for g in DEFAULT_EXCLUDE_KEYS.split(","))
        else:
            globs = settings.exclude_globs
    lowered = key.lower()
    name = lowered.rsplit("/", 1)[-1] if not lowered.endswith("/") else lowered
    return any(fnmatch.fnmatchcase(lowered if "/" in glob else name, glob) for glob in globs)


def normalize_sequencer(sequencer: str | None) -> str | None:
    """Upper-case and right-pad with zeros so sequencers compare as strings."""
    if not sequencer:
        return None
    seq = sequencer.strip().upper()
    if not seq or len(seq) > SEQUENCER_WIDTH or any(c not in "0123456789ABCDEF" for c in seq):
        return None
    return seq.ljust(SEQUENCER_WIDTH, "0")


def normalize_time(value: str | datetime | None) -> str:
    """A fixed-width UTC timestamp (microseconds) that sorts as a string."""
    if value is None:
        moment = datetime.now(UTC)
    elif isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    else:
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(text)
        except ValueError as exc:
            raise PoisonMessageError(f"unreadable event time {value!r}") from exc
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def time_until(value: str | None) -> str | None:
    """The last microsecond an event time may stand for, when its text is coarser than that.

    S3 notifications give milliseconds and EventBridge whole seconds: an
    EventBridge ``09:00:05Z`` is any moment up to ``09:00:05.999999``. None
    when the text is exact (microseconds) or there is none.
    """
    if not value:
        return None
    match = re.search(r"T\d{2}:\d{2}:\d{2}(?:[.,](\d+))?", value)
    digits = len(match.group(1) or "") if match else 6
    if digits >= 6:
        return None
    start = datetime.strptime(normalize_time(value), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return normalize_time(start + timedelta(microseconds=10 ** (6 - digits) - 1))


def _clean_etag(etag: str | None) -> str | None:
    if not etag:
        return None
    return etag.strip().strip('"') or None


def _clean_version(version_id: str | None) -> str | None:
    # Unversioned buckets report the literal "null" in some shapes.
    if not version_id or version_id == "null":
        return None
    return version_id


@dataclass(frozen=True)
class ObjectChange:
    """One change to one S3 object, whatever message shape announced it.

    All fields are JSON-friendly so Powertools idempotency can hash the change.
    """

    bucket: str
    key: str
    action: Action
    event_time: str
    sequencer: str | None = None
    version_id: str | None = None
    etag: str | None = None
    size: int | None = None
    delete_marker: bool = False
    origin: Origin = Origin.S3
    event_name: str = ""
    # The latest moment ``event_time`` may stand for (its text had seconds or milliseconds only).
    event_time_until: str | None = None
    dedupe_key: str = field(init=False)

    def __post_init__(self) -> None:
        if not self.bucket or not self.key:
            raise PoisonMessageError("change without bucket or key")
        object.__setattr__(self, "dedupe_key", self._identity())

    def _identity(self) -> str:
        # With a sequencer, (bucket, key, action, sequencer) names the change
        # exactly, whichever shape carried it: EventBridge and S3 report the
        # same sequencer but different timestamps. Without one (backfill, some
        # emulators) the event time and etag stand in.
        parts: list[str] = [self.bucket, self.key, self.action.value]
        if self.sequencer:
            parts.append(self.sequencer)
        else:
            parts += [self.event_time, self.etag or "", self.version_id or ""]
        return "\x1f".join(parts)

    @property
    def doc_id(self) -> str:
        return doc_id(self.bucket, self.key)

    @property
    def is_reprocess(self) -> bool:
        """An operator's ``docindex reprocess``: extract again, whatever the index or the cache hold."""
        return self.event_name == "docindex:reprocess"

    @property
    def is_date_refresh(self) -> bool:
        """An operator's ``docindex reprocess --dates``: the object's date read again from its metadata
        (``HeadObject``); its content only if it is not the indexed one."""
        return self.event_name == "docindex:dates"

    def to_message(self) -> dict[str, Any]:
        """The docindex message shape (used by backfill and reconcile)."""
        body: dict[str, Any] = {
            "docindex": "change",
            "bucket": self.bucket,
            "key": self.key,
            "action": self.action.value,
            "event_time": self.event_time,
        }
        for name in ("sequencer", "version_id", "etag", "size"):
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        return body


@dataclass(frozen=True)
class ParsedMessage:
    """What one SQS body announced: zero changes for the S3 test event."""

    changes: tuple[ObjectChange, ...]
    shape: str


def parse_body(body: str | None) -> ParsedMessage:
    """Turn an SQS message body into the changes it announces.

    Raises ``PoisonMessageError`` for anything that is not an accepted shape.
    """
    if not body:
        raise PoisonMessageError("empty message body")
    try:
        payload = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise PoisonMessageError(f"body is not JSON: {exc}") from None
    return parse_payload(payload)


def parse_payload(payload: Any, *, _depth: int = 0) -> ParsedMessage:
    if not isinstance(payload, dict):
        raise PoisonMessageError(f"body is a JSON {type(payload).__name__}, not an object")
    try:
        if payload.get("Event") == "s3:TestEvent":
            return ParsedMessage((), "s3_test_event")
        if "Records" in payload:
            return ParsedMessage(_from_s3_notification(payload), "s3")
        if payload.get("source") == "aws.s3" and "detail-type" in payload:
            return ParsedMessage((_from_eventbridge(payload),), "eventbridge")
        if payload.get("Type") == "Notification" and "Message" in payload:
            if _depth:
                raise PoisonMessageError("nested SNS notification")
            inner = _parse_sns(payload)
            return ParsedMessage(inner.changes, f"sns+{inner.shape}")
        if payload.get("docindex") == "change":
            return ParsedMessage((_from_docindex(payload),), "docindex")
    except PoisonMessageError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PoisonMessageError(f"malformed message: {type(exc).__name__}: {exc}") from None
    raise PoisonMessageError("not an S3, EventBridge, SNS or docindex message")


def _parse_sns(payload: dict[str, Any]) -> ParsedMessage:
    message = SNSMessage(payload).message
    try:
        inner = json.loads(message)
    except (TypeError, ValueError) as exc:
        raise PoisonMessageError(f"SNS Message is not JSON: {exc}") from None
    parsed = parse_payload(inner, _depth=1)
    return ParsedMessage(
        tuple(_with_origin(c, Origin.SNS) for c in parsed.changes),
        parsed.shape,
    )


def _with_origin(change: ObjectChange, origin: Origin) -> ObjectChange:
    return ObjectChange(
        bucket=change.bucket,
        key=change.key,
        action=change.action,
        event_time=change.event_time,
        sequencer=change.sequencer,
        version_id=change.version_id,
        etag=change.etag,
        size=change.size,
        delete_marker=change.delete_marker,
        origin=origin,
        event_name=change.event_name,
        event_time_until=change.event_time_until,
    )


def _from_s3_notification(payload: dict[str, Any]) -> tuple[ObjectChange, ...]:
    records = payload["Records"]
    if not isinstance(records, list) or not records:
        raise PoisonMessageError("S3 notification without records")
    changes = []
    for raw in records:
        record = S3EventRecord(raw)
        if record.event_source != "aws:s3":
            raise PoisonMessageError(f"record from {record.get('eventSource')!r}, not aws:s3")
        event_name = record.event_name
        if event_name.startswith("ObjectCreated:") or event_name == RESTORE_COMPLETED:
            action = Action.CREATED
        elif event_name.startswith(("ObjectRemoved:", "LifecycleExpiration:")):
            # A lifecycle rule's expiration removes the object (or adds a delete marker) like a DELETE.
            action = Action.REMOVED
        else:
            raise PoisonMessageError(f"unsupported S3 event {event_name!r}")
        obj = record.s3.get_object
        size = obj.get("size")
        restored = event_name == RESTORE_COMPLETED
        changes.append(
            ObjectChange(
                bucket=record.s3.bucket.name,
                # S3 URL-encodes keys with spaces as '+': unquote_plus, not unquote.
                key=unquote_plus(obj.key),
                action=action,
                event_time=normalize_time(record.event_time),
                # A restore is not a write: it is ordered by its time (see RESTORE_COMPLETED).
                sequencer=None if restored else normalize_sequencer(obj.get("sequencer")),
                version_id=_clean_version(obj.version_id),
                etag=_clean_etag(obj.etag),
                size=int(size) if size is not None else None,
                delete_marker=event_name.endswith(":DeleteMarkerCreated"),
                origin=Origin.S3,
                event_name=event_name,
                event_time_until=time_until(record.event_time),
            )
        )
    return tuple(changes)


def _from_eventbridge(payload: dict[str, Any]) -> ObjectChange:
    event = S3EventBridgeNotificationEvent(payload)
    detail_type = EventBridgeEvent(payload).detail_type
    if detail_type in ("Object Created", "Object Restore Completed"):
        action = Action.CREATED
    elif detail_type == "Object Deleted":  # also a lifecycle expiration (reason "Lifecycle Expiration")
        action = Action.REMOVED
    else:
        raise PoisonMessageError(f"unsupported EventBridge S3 event {detail_type!r}")
    detail = event.detail
    obj = detail.object
    raw_obj = detail["object"]
    deletion_type = detail.get("deletion-type") or ""
    return ObjectChange(
        bucket=detail.bucket.name,
        key=obj.key,  # Powertools decodes the key (unquote_plus)
        action=action,
        event_time=normalize_time(event.time),
        sequencer=None if detail_type == "Object Restore Completed" else normalize_sequencer(raw_obj.get("sequencer")),
        version_id=_clean_version(raw_obj.get("version-id")),
        etag=_clean_etag(raw_obj.get("etag")),
        size=int(raw_obj["size"]) if raw_obj.get("size") is not None else None,
        delete_marker=deletion_type == "Delete Marker Created",
        origin=Origin.EVENTBRIDGE,
        event_name=f"{detail_type}:{detail.get('reason') or deletion_type}".rstrip(":"),
        event_time_until=time_until(event.time),
    )


def _from_docindex(payload: dict[str, Any]) -> ObjectChange:
    size = payload.get("size")
    return ObjectChange(
        bucket=str(payload["bucket"]),
        key=str(payload["key"]),
        action=Action(payload.get("action", "created")),
        event_time=normalize_time(payload.get("event_time")),
        sequencer=normalize_sequencer(payload.get("sequencer")),
        version_id=_clean_version(payload.get("version_id")),
        etag=_clean_etag(payload.get("etag")),
        size=int(size) if size is not None else None,
        origin=Origin.BACKFILL,
        event_name="docindex:" + str(payload.get("reason", "backfill")),
    )
