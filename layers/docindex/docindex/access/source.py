"""Where the indexer and the OCR worker get the access map: S3 or a file, cached with a TTL.

``ACCESS_MAP_URI`` is ``s3://bucket/key`` (deployed; the template parameter
``AccessMapS3Uri``) or a file path (the local run). Unset, every document is
stamped for the administrators' group only. The map is read again at most
every ``ACCESS_MAP_TTL_SECONDS`` (an S3 conditional GET: an unchanged map costs
a 304), so a new map reaches every writer within that time; ``docindex access
apply`` waits that long before its last pass. A map that cannot be read or
parsed fails the write as transient (the change comes back; nothing is
stamped with a guess), unless an earlier good map is cached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from docindex.access.policy import AccessGrant, AccessMap, AccessMapError, parse_access_map
from docindex.core.exceptions import TransientError
from docindex.core.observability import logger

if TYPE_CHECKING:
    from docindex.core.settings import AccessSettings


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` → (bucket, key)."""
    parsed = urlparse(uri)
    if parsed.scheme != "s3" or not parsed.netloc or not parsed.path.strip("/"):
        raise AccessMapError(f"not an s3://bucket/key URI: {uri!r}")
    return parsed.netloc, unquote(parsed.path.lstrip("/"))


def read_map_bytes(uri: str, s3: Any, *, etag: str | None = None) -> tuple[bytes | None, str | None]:
    """The map's bytes and ETag (S3) or mtime tag (file); ``(None, etag)`` when unchanged since ``etag``."""
    if uri.startswith("s3://"):
        from botocore.exceptions import ClientError

        bucket, key = split_s3_uri(uri)
        kwargs: dict[str, Any] = {"Bucket": bucket, "Key": key}
        if etag:
            kwargs["IfNoneMatch"] = etag
        try:
            response = s3.get_object(**kwargs)
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status == 304 or exc.response.get("Error", {}).get("Code") in ("304", "NotModified"):
                return None, etag
            raise
        return response["Body"].read(), response.get("ETag")
    path = Path(uri.removeprefix("file://"))
    stat = path.stat()
    tag = f"{stat.st_mtime_ns}-{stat.st_size}"
    if etag == tag:
        return None, etag
    return path.read_bytes(), tag


class AccessMapSource:
    """The current access map for a process; thread-safe, refreshed at most every ``ttl_seconds``."""

    def __init__(
        self,
        uri: str | None,
        *,
        admin_group: str,
        ttl_seconds: float = 60.0,
        s3: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.uri = uri or None
        self.admin_group = admin_group
        self.ttl_seconds = ttl_seconds
        self._s3 = s3
        self._clock = clock
        self._lock = threading.Lock()
        self._map: AccessMap | None = None if self.uri else AccessMap.admins_only(admin_group)
        self._etag: str | None = None
        self._checked_at = float("-inf")

    def current(self) -> AccessMap:
        """The map to stamp with now."""
        if self.uri is None:
            assert self._map is not None  # set in __init__ when there is no URI  # nosec B101
            return self._map
        with self._lock:
            if self._map is not None and self._clock() - self._checked_at < self.ttl_seconds:
                return self._map
            try:
                data, etag = read_map_bytes(self.uri, self._s3, etag=self._etag if self._map else None)
                if data is not None:
                    self._map = parse_access_map(data, admin_group=self.admin_group, name=self.uri)
                    self._etag = etag
                    logger.info("access map loaded", extra={"access_map_version": self._map.version})
                self._checked_at = self._clock()
            except Exception as exc:  # any failure: keep the last good map, never guess
                if self._map is None:
                    raise TransientError(f"the access map {self.uri} cannot be used: {exc}") from exc
                logger.error("access map not refreshed; the last good one stays", extra={"error": str(exc)[:300]})
                self._checked_at = self._clock()
            if self._map is None:  # a 304 for a map never loaded cannot happen; never stamp without one
                raise TransientError(f"the access map {self.uri} was not loaded")
            return self._map

    @classmethod
    def from_settings(cls, settings: AccessSettings, s3: Any) -> AccessMapSource:
        return cls(
            settings.access_map_uri,
            admin_group=settings.admin_group,
            ttl_seconds=settings.access_map_ttl_seconds,
            s3=s3,
        )

    def grant(self, bucket: str, key: str) -> AccessGrant:
        return self.current().grant(bucket, key)
