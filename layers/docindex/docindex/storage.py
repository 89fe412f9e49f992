"""Reading objects from S3, bounded so one huge file cannot exhaust memory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.exceptions import TransientError

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


def _iso(value: Any) -> str | None:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return None


class ObjectStore:
    """GetObject with a size bound; ``None`` when the object no longer exists."""

    def __init__(self, s3: Any) -> None:
        self._s3 = s3

    def exists(self, bucket: str, key: str) -> bool:
        """Whether the object (its current version) exists."""
        try:
            self._s3.head_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _GONE:
                return False
            raise TransientError(f"HeadObject s3://{bucket}/{key} failed: {code or exc}") from exc
        except BotoCoreError as exc:
            raise TransientError(f"HeadObject s3://{bucket}/{key} failed: {exc}") from exc
        return True

    def fetch(self, bucket: str, key: str, *, version_id: str | None, max_bytes: int) -> FetchedObject | None:
        """Read the object; bodies above ``max_bytes`` are not read (``data`` is None)."""
        params: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if version_id:
            params["VersionId"] = version_id
        try:
            response = self._s3.get_object(**params)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _GONE:
                return None
            raise TransientError(f"GetObject s3://{bucket}/{key} failed: {code or exc}") from exc
        except BotoCoreError as exc:
            raise TransientError(f"GetObject s3://{bucket}/{key} failed: {exc}") from exc
        body = response["Body"]
        size = int(response.get("ContentLength") or 0)
        try:
            data: bytes | None
            if size > max_bytes:
                data = None
            else:
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
        )
