"""A document's date: the file server's modification time when the object carries one, else S3's.

S3's ``LastModified`` is the moment the object reached the bucket: after a backfill every file of
the company would carry the backfill's day. A sync can carry each file's own modification time as
object user metadata (``x-amz-meta-<key>``, which boto3 returns as ``Metadata[<key>]``):

- AWS DataSync (``Mtime: PRESERVE``, its default) stores it in the form S3 File Gateway and FSx
  for Lustre read: ``file-mtime``, nanoseconds since the epoch followed by ``ns``
  (``1727740800000000000ns``; without the suffix FSx reads milliseconds);
- rclone stores ``mtime``, seconds since the epoch as a decimal (``1727740800.123456789``); s3fs
  writes whole seconds, SFTP Gateway a text (``2024-10-01 09:00:00.000000000 +0900``).

``MTIME_METADATA_KEYS`` lists the keys to look for, first found wins (default ``file-mtime,mtime``).
Values are read whatever the writer: ``<digits>ns``; a plain number, whose size says its unit
(seconds below 10^11, milliseconds below 10^14, microseconds below 10^17, nanoseconds above: every
date from 1973 to 5138 reads the same in all four); an ISO 8601 / RFC 3339 time or an HTTP date
(a time without an offset is UTC). A value that is not a time, is before 1980 (no file server of
an office writes such dates: a reset clock does) or more than a day ahead of now is not used: the
document takes S3's ``LastModified`` and says why (``last_modified_problem``), and the record is
indexed as any other.

The date is for showing, sorting and filtering only. The ordering ledger and idempotency keep
using S3's own identity of the object (sequencer, ETag, version id): a file server's clock never
decides which change of an object wins.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Literal

DEFAULT_MTIME_KEYS = "file-mtime,mtime"
# The user metadata prefix S3 puts before each key in HTTP; boto3 strips it.
METADATA_PREFIX = "x-amz-meta-"
# Earliest and latest believable modification times (see the module docstring).
EARLIEST = datetime(1980, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)
# A value longer than this is not a time anyone wrote.
MAX_VALUE_CHARS = 64
# What a metadata key may be (HTTP header token characters, as S3 keeps them).
KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")

Source = Literal["file_server", "s3"]
FILE_SERVER: Source = "file_server"
S3: Source = "s3"

_NS = re.compile(r"^(\d{1,30})ns$")
_NUMBER = re.compile(r"^-?\d{1,30}(?:\.\d{1,30})?$")
_FRACTION = re.compile(r"([.,])(\d+)")
# "2024-10-01 09:00:00 +0900" (SFTP Gateway, Go's time.String()): the offset after a space.
_SPACED_OFFSET = re.compile(r"\s+([+-]\d{2}):?(\d{2})(?:\s+\S+)?$")


def iso(moment: datetime) -> str:
    """As the index stores dates: UTC, microseconds, ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_keys(text: str) -> tuple[str, ...]:
    """``MTIME_METADATA_KEYS`` as lower-case keys without ``x-amz-meta-``; ValueError naming a bad one."""
    keys: list[str] = []
    for raw in text.split(","):
        key = raw.strip().lower().removeprefix(METADATA_PREFIX)
        if not key:
            continue
        if not KEY_PATTERN.match(key):
            raise ValueError(f"{raw.strip()!r} is not an S3 user metadata key (letters, digits, '-', '_', '.')")
        if key not in keys:
            keys.append(key)
    return tuple(keys)


def _from_epoch(number: float) -> datetime:
    if not math.isfinite(number):
        raise ValueError("not a finite number")
    magnitude = abs(number)
    seconds = (
        number
        if magnitude < 1e11
        else number / 1e3
        if magnitude < 1e14
        else number / 1e6
        if magnitude < 1e17
        else number / 1e9
    )
    try:
        return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)
    except OverflowError:
        raise ValueError("out of range") from None


def parse_mtime(value: str) -> datetime:
    """The moment a metadata value names (UTC); ValueError saying why it names none."""
    text = value.strip()
    if not text:
        raise ValueError("empty")
    if len(text) > MAX_VALUE_CHARS:
        raise ValueError(f"longer than {MAX_VALUE_CHARS} characters")
    nanoseconds = _NS.match(text)
    if nanoseconds:
        try:
            return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(nanoseconds.group(1)) // 1000)
        except OverflowError:
            raise ValueError("out of range") from None
    if _NUMBER.match(text):
        return _from_epoch(float(text))
    return _parse_text(text)


def _parse_text(text: str) -> datetime:
    moment: datetime | None = None
    candidate = text.replace("Z", "+00:00").replace("z", "+00:00")
    candidate = _SPACED_OFFSET.sub(lambda m: f"{m.group(1)}:{m.group(2)}", candidate)
    # Python reads at most six digits of a fraction: nanoseconds are cut to microseconds.
    candidate = _FRACTION.sub(lambda m: "." + m.group(2)[:6].ljust(6, "0"), candidate, count=1)
    try:
        moment = datetime.fromisoformat(candidate)
    except ValueError:
        try:
            moment = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            moment = None
    if moment is None:
        raise ValueError("not a time")
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _shown(value: str) -> str:
    printable = "".join(c if c.isprintable() else "?" for c in value[:40])
    return printable + ("…" if len(value) > 40 else "")


@dataclass(frozen=True)
class FileDate:
    """The document's date (``value``), where it came from, and S3's own ``LastModified``.

    ``key``: the metadata key the value was read from (or the one whose value was refused);
    ``problem``: why a key's value was not used (S3's date was then).
    """

    value: str | None
    source: Source
    s3_value: str | None
    key: str | None = None
    problem: str | None = None

    @classmethod
    def from_s3(cls, s3_value: str | None) -> FileDate:
        return cls(value=s3_value, source=S3, s3_value=s3_value)


def file_date(
    metadata: Mapping[str, str] | None,
    s3_last_modified: str | None,
    *,
    keys: tuple[str, ...],
    now: datetime | None = None,
) -> FileDate:
    """The document's date from an object's user ``metadata`` (``keys`` in order), else ``s3_last_modified``."""
    lowered = {str(k).lower().removeprefix(METADATA_PREFIX): str(v) for k, v in (metadata or {}).items()}
    latest = (now or datetime.now(UTC)) + FUTURE_SLACK
    for key in keys:
        if key not in lowered:
            continue
        raw = lowered[key]
        try:
            moment = parse_mtime(raw)
        except ValueError as exc:
            problem = f"{key}: {exc} ({_shown(raw)!r})"
        else:
            if moment < EARLIEST:
                problem = f"{key}: {iso(moment)[:10]} is before {EARLIEST.year} ({_shown(raw)!r})"
            elif moment > latest:
                problem = f"{key}: {iso(moment)[:10]} is in the future ({_shown(raw)!r})"
            else:
                return FileDate(value=iso(moment), source=FILE_SERVER, s3_value=s3_last_modified, key=key)
        # The first key present decides: a refused value is not replaced by a later key's.
        return FileDate(value=s3_last_modified, source=S3, s3_value=s3_last_modified, key=key, problem=problem)
    return FileDate.from_s3(s3_last_modified)


def datasync_metadata(moment: datetime) -> dict[str, str]:
    """The user metadata DataSync writes for a file modified at ``moment`` (``file-mtime``, in ns)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    delta = aware.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    nanoseconds = (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
    return {"file-mtime": f"{nanoseconds}ns"}


def rclone_metadata(moment: datetime) -> dict[str, str]:
    """The user metadata rclone writes for a file modified at ``moment`` (``mtime``, seconds as a decimal)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return {"mtime": f"{aware.timestamp():.9f}"}
