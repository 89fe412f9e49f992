"""Where a backfill run stands: the watermark, the batches sent ahead of it and those in doubt.

Saved atomically (write, then rename) after every batch, so an interrupted run
resumes after the watermark and skips what it already sent; see the package
docstring for why a batch in doubt is resent with identical bodies.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docindex.core.exceptions import BackfillError
from docindex.ops.backfill.sources import Position, now_iso

CHECKPOINT_VERSION = 1


def _position_from_json(value: Any) -> Position | None:
    if value is None:
        return None
    if isinstance(value, list):
        return (int(value[0]), int(value[1]))
    return str(value)


def _position_to_json(value: Position | None) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _less(a: Position, b: Position) -> bool:
    # Keys compare by code point, which is UTF-8 byte order: S3's listing order.
    return a < b  # type: ignore[operator]


@dataclass
class BatchRange:
    """The positions of one batch's first and last object (inclusive)."""

    first: Position
    last: Position
    observed_at: str = ""

    def covers(self, position: Position) -> bool:
        return not _less(position, self.first) and not _less(self.last, position)

    def to_json(self) -> list[Any]:
        return [_position_to_json(self.first), _position_to_json(self.last), self.observed_at]

    @classmethod
    def from_json(cls, value: list[Any]) -> BatchRange:
        first, last = _position_from_json(value[0]), _position_from_json(value[1])
        if first is None or last is None:
            raise ValueError("empty batch range")
        return cls(first, last, str(value[2]) if len(value) > 2 else "")


def default_checkpoint_path(state_dir: Path, identity: dict[str, Any]) -> Path:
    """One checkpoint file per backfill identity (bucket, prefix, source, queue) under ``state_dir``."""
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    return state_dir / "backfill" / f"{identity['bucket']}-{digest}.json"


@dataclass
class Checkpoint:
    """Where a backfill run stands; saved atomically after every batch."""

    path: Path | None
    identity: dict[str, Any]
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started_at: str = field(default_factory=now_iso)
    updated_at: str = ""
    completed_at: str | None = None
    # Every object up to and including this position has been sent.
    position: Position | None = None
    # Batches sent beyond the watermark (they finished before an earlier one).
    sent_ahead: list[BatchRange] = field(default_factory=list)
    # Batches handed to SQS whose outcome is unknown (a hard kill mid-send).
    in_doubt: list[BatchRange] = field(default_factory=list)
    enqueued: int = 0
    batches: int = 0
    invocations: int = 0

    @classmethod
    def load(cls, path: Path, identity: dict[str, Any]) -> Checkpoint:
        """The checkpoint at ``path`` (a fresh one when the file does not exist)."""
        if not path.exists():
            return cls(path=path, identity=identity)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != CHECKPOINT_VERSION:
                raise BackfillError(f"{path}: checkpoint version {data.get('version')!r} is not supported")
            if data.get("identity") != identity:
                raise BackfillError(
                    f"{path} belongs to another backfill ({data.get('identity')}); "
                    "use --restart to start over, or another --checkpoint"
                )
            return cls(
                path=path,
                identity=identity,
                run_id=str(data["run_id"]),
                started_at=str(data["started_at"]),
                updated_at=str(data.get("updated_at", "")),
                completed_at=data.get("completed_at"),
                position=_position_from_json(data.get("position")),
                sent_ahead=[BatchRange.from_json(r) for r in data.get("sent_ahead", [])],
                in_doubt=[BatchRange.from_json(r) for r in data.get("in_doubt", [])],
                enqueued=int(data.get("enqueued", 0)),
                batches=int(data.get("batches", 0)),
                invocations=int(data.get("invocations", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, BackfillError):
                raise
            raise BackfillError(f"{path}: unreadable checkpoint ({exc}); use --restart to start over") from None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": CHECKPOINT_VERSION,
            "identity": self.identity,
            "run_id": self.run_id,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "completed_at": self.completed_at,
            "position": _position_to_json(self.position),
            "sent_ahead": [r.to_json() for r in self.sent_ahead],
            "in_doubt": [r.to_json() for r in self.in_doubt],
            "enqueued": self.enqueued,
            "batches": self.batches,
            "invocations": self.invocations,
        }

    def save(self) -> None:
        """Write the checkpoint atomically (nothing for a dry run, which has no path)."""
        if self.path is None:
            return
        self.updated_at = now_iso()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    def already_sent(self, position: Position) -> bool:
        """Was the object at this position sent by an earlier invocation of this run?"""
        if self.position is not None and not _less(self.position, position):
            return True
        return any(r.covers(position) for r in self.sent_ahead)

    def doubtful_time(self, position: Position) -> str | None:
        """The event time a batch in doubt used for this position (to resend identical bodies)."""
        for r in self.in_doubt:
            if r.covers(position):
                return r.observed_at or None
        return None

    def prune(self) -> None:
        """Forget ranges at or below the watermark."""
        if self.position is None:
            return
        watermark = self.position
        self.sent_ahead = [r for r in self.sent_ahead if _less(watermark, r.last)]
        self.in_doubt = [r for r in self.in_doubt if _less(watermark, r.last)]
