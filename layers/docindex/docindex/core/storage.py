"""Reading objects from S3, bounded so one huge file cannot exhaust memory.

Two bounds: ``max_bytes`` per object (bigger ones are not read here at all),
and, across the records an invocation runs at once, a :class:`ByteBudget`
for the bodies held in memory at the same time, so eight or thirty-two
concurrent records reading large files cannot add up past the function's
memory. A body is held from its GetObject until its extraction ends, not
while its document waits for the bulk write.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.aws import error_code
from docindex.core.exceptions import ObjectArchivedError, TransientError
from docindex.core.filedates import DEFAULT_MTIME_KEYS, FileDate, file_date, parse_keys
from docindex.core.observability import logger

# Errors that mean "this object (version) is not there any more".
_GONE = {"NoSuchKey", "NoSuchVersion", "404", "NotFound", "MethodNotAllowed", "405"}


@dataclass(frozen=True)
class FetchedObject:
    """One object version as read from S3. ``data`` is None when it was too big to read here."""

    bucket: str
    key: str
    size: int
    etag: str | None
    version_id: str | None
    last_modified: str | None
    data: bytes | None
    # Lowercase hex SHA-256 of the bytes: S3's full-object checksum when the object has one,
    # else computed from the body read; None when the body was not read (too large here).
    content_sha256: str | None = None
    # The document's date: the file server's modification time from the object's user metadata,
    # else ``last_modified`` (S3's), and which it is (docindex.core.filedates).
    file_date: FileDate | None = None

    def without_data(self) -> FetchedObject:
        """The same metadata without the body (which can then be freed)."""
        return replace(self, data=None)


def _iso(value: Any) -> str | None:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return None


class ByteBudget:
    """Bytes of object bodies held at once by concurrent readers.

    ``acquire`` blocks while the bytes would not fit beside what others hold;
    a reader holding nothing always gets in (a body larger than the whole
    budget is read alone). ``overdraw`` never blocks: it is for a reader that
    already holds a reservation and learns its object is larger than its
    hint said (blocking then could deadlock two such readers).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._used = 0
        self.peak = 0
        self._cond = threading.Condition()

    def acquire(self, nbytes: int) -> int:
        nbytes = max(0, nbytes)
        with self._cond:
            while self._used and self._used + nbytes > self.capacity:
                self._cond.wait()
            self._used += nbytes
            self.peak = max(self.peak, self._used)
        return nbytes

    def overdraw(self, nbytes: int) -> int:
        nbytes = max(0, nbytes)
        with self._cond:
            self._used += nbytes
            self.peak = max(self.peak, self._used)
        return nbytes

    def release(self, nbytes: int) -> None:
        if nbytes <= 0:
            return
        with self._cond:
            self._used -= nbytes
            self._cond.notify_all()

    @property
    def used(self) -> int:
        with self._cond:
            return self._used


def s3_sha256(response: dict[str, Any]) -> str | None:
    """S3's full-object SHA-256 checksum of a GetObject response as lowercase hex, if it has one.

    A multipart upload's composite checksum (``…-N``, ``ChecksumType: COMPOSITE``) is a hash of
    part hashes, not of the content: it is not used.
    """
    value = response.get("ChecksumSHA256")
    if not value or "-" in value or response.get("ChecksumType") == "COMPOSITE":
        return None
    try:
        digest = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    return digest.hex() if len(digest) == 32 else None


def get_object(s3: Any, bucket: str, key: str, *, version_id: str | None = None) -> dict[str, Any] | None:
    """``GetObject`` (the exact version when given); None when the object or version is gone.

    ``ObjectArchivedError`` when the object is in an archive storage class and not restored;
    every other failure is a ``TransientError``: the record (or job) is retried. The response
    carries S3's checksums (``ChecksumMode``), which botocore verifies against the body.
    """
    params: dict[str, Any] = {"Bucket": bucket, "Key": key, "ChecksumMode": "ENABLED"}
    if version_id:
        params["VersionId"] = version_id
    return _gone_or_transient("GetObject", bucket, key, lambda: s3.get_object(**params))


def _gone_or_transient(
    operation: str, bucket: str, key: str, call: Callable[[], dict[str, Any]]
) -> dict[str, Any] | None:
    """``call()``'s response; None when the object (or version) is gone, ``TransientError`` for the rest."""
    try:
        return call()
    except ClientError as exc:
        code = error_code(exc)
        if code in _GONE:
            return None
        if code == "InvalidObjectState":
            raise ObjectArchivedError(f"{operation} s3://{bucket}/{key}: archived, not restored") from exc
        raise TransientError(f"{operation} s3://{bucket}/{key} failed: {code or exc}") from exc
    except BotoCoreError as exc:
        raise TransientError(f"{operation} s3://{bucket}/{key} failed: {exc}") from exc


@dataclass(frozen=True)
class ObjectHead:
    """An object version's identity and date as ``HeadObject`` gives them (no body)."""

    size: int
    etag: str | None
    version_id: str | None
    file_date: FileDate


def object_date(response: dict[str, Any], keys: tuple[str, ...]) -> FileDate:
    """The document's date of a GetObject/HeadObject ``response`` (its user metadata's ``keys``, else
    its ``LastModified``); metadata that names no believable time is logged and S3's date is used."""
    found = file_date(response.get("Metadata"), _iso(response.get("LastModified")), keys=keys)
    if found.problem:
        logger.info(
            "the file server's date in the object's metadata is not usable; S3's LastModified is used",
            extra={"metadata_key": found.key, "problem": found.problem},
        )
    return found


class ObjectStore:
    """GetObject with a size bound; ``None`` when the object no longer exists.

    ``mtime_keys``: the user metadata keys that hold the file server's modification time
    (``MTIME_METADATA_KEYS``).
    """

    def __init__(self, s3: Any, *, mtime_keys: tuple[str, ...] | None = None) -> None:
        self._s3 = s3
        self.mtime_keys = parse_keys(DEFAULT_MTIME_KEYS) if mtime_keys is None else mtime_keys

    def head(self, bucket: str, key: str, *, version_id: str | None = None) -> ObjectHead | None:
        """``HeadObject`` (the exact version when given): identity and date; None when it is gone."""
        params: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if version_id:
            params["VersionId"] = version_id
        response = _gone_or_transient("HeadObject", bucket, key, lambda: self._s3.head_object(**params))
        if response is None:
            return None
        return ObjectHead(
            size=int(response.get("ContentLength") or 0),
            etag=(response.get("ETag") or "").strip('"') or None,
            version_id=response.get("VersionId") if response.get("VersionId") != "null" else None,
            file_date=object_date(response, self.mtime_keys),
        )

    def exists(self, bucket: str, key: str) -> bool:
        """Whether the object (its current version) exists."""
        return (
            _gone_or_transient("HeadObject", bucket, key, lambda: self._s3.head_object(Bucket=bucket, Key=key))
            is not None
        )

    @contextmanager
    def reading(
        self,
        bucket: str,
        key: str,
        *,
        version_id: str | None,
        max_bytes: int,
        budget: ByteBudget,
        size_hint: int | None = None,
    ) -> Iterator[FetchedObject | None]:
        """:meth:`fetch` with the body's bytes held in ``budget`` until the block ends.

        The reservation is taken before the request when the size is known
        from the event (so a waiting reader holds no open connection), and
        corrected from ``ContentLength`` once the response arrives.
        """
        held = 0
        if size_hint is not None and size_hint <= max_bytes:
            held = budget.acquire(size_hint)

        def before_read(length: int) -> None:
            nonlocal held
            if held == 0:
                held = budget.acquire(length)
            elif length > held:
                held += budget.overdraw(length - held)
            else:
                budget.release(held - length)
                held = length

        try:
            yield self.fetch(bucket, key, version_id=version_id, max_bytes=max_bytes, before_read=before_read)
        finally:
            budget.release(held)

    def fetch(
        self,
        bucket: str,
        key: str,
        *,
        version_id: str | None,
        max_bytes: int,
        before_read: Callable[[int], None] | None = None,
    ) -> FetchedObject | None:
        """Read the object; bodies above ``max_bytes`` are not read (``data`` is None).

        ``before_read`` is called with the body's length just before a body is read.
        """
        response = get_object(self._s3, bucket, key, version_id=version_id)
        if response is None:
            return None
        body = response["Body"]
        size = int(response.get("ContentLength") or 0)
        try:
            data: bytes | None
            if size > max_bytes:
                data = None
            else:
                if before_read is not None:
                    before_read(size)
                # Read at most one byte more than allowed: a body longer than
                # its ContentLength is not trusted either.
                data = body.read(max_bytes + 1)
                if len(data) > max_bytes:
                    data = None
                elif len(data) != size and response.get("ContentLength") is not None:
                    # One read() returns what arrived before the connection closed,
                    # without an error: a body cut short must not be indexed as the file.
                    raise TransientError(f"s3://{bucket}/{key}: read {len(data)} of {size} bytes (body cut short)")
        except (BotoCoreError, OSError) as exc:
            raise TransientError(f"reading s3://{bucket}/{key} failed: {exc}") from exc
        finally:
            body.close()
        return FetchedObject(
            bucket=bucket,
            key=key,
            size=size,
            etag=(response.get("ETag") or "").strip('"') or None,
            version_id=response.get("VersionId") if response.get("VersionId") != "null" else None,
            last_modified=_iso(response.get("LastModified")),
            data=data,
            content_sha256=s3_sha256(response) or (hashlib.sha256(data).hexdigest() if data is not None else None),
            file_date=object_date(response, self.mtime_keys),
        )
