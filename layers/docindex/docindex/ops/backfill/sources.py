"""What a backfill announces: the bucket's own listing, or the rows of an S3 Inventory report.

Each source yields ``ListedObject``s in a stable order with a *position* (a key
for a listing, (file, row) for an inventory) from which a later run resumes.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote_plus, urlparse

from docindex.core.changes import normalize_time
from docindex.core.exceptions import BackfillError

# A listing position is a key; an inventory position is (file index, row index).
Position = str | tuple[int, int]

# How long a listing waits before its first request (see ``BucketListing``).
SETTLE_SECONDS = 1.0


@dataclass(frozen=True)
class ListedObject:
    """One object as a listing (or an inventory report) saw it."""

    key: str
    etag: str | None
    size: int | None
    position: Position
    observed_at: str


def now_iso() -> str:
    """The current time in the form of an ``event_time`` (UTC, microseconds)."""
    return normalize_time(datetime.now(UTC))


def s3_clock(response: dict[str, Any]) -> datetime | None:
    """When S3 answered, by S3's clock: the response's ``Date`` header (whole seconds), if any.

    Observations compared with S3's own event times (notification ``eventTime``,
    EventBridge ``time``) are stamped with S3's clock, never this machine's: an
    operator's laptop running an hour ahead would otherwise date a repair after
    every real change of that hour, and the ledger would let it win.
    """
    headers = response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    text = headers.get("date")
    if not text:
        return None
    try:
        answered = parsedate_to_datetime(str(text))
    except (TypeError, ValueError):
        return None
    return answered if answered.tzinfo else answered.replace(tzinfo=UTC)


def _etag(value: str | None) -> str | None:
    return (value or "").strip().strip('"') or None


@dataclass(frozen=True)
class ListingPage:
    """One ``ListObjectsV2`` page and the time just before it was requested."""

    observed_at: str
    objects: tuple[ListedObject, ...]


def list_pages(
    s3: Any,
    bucket: str,
    *,
    prefix: str = "",
    start_after: str | None = None,
    page_size: int = 1000,
    clock: Callable[[], str] = now_iso,
) -> Iterator[ListingPage]:
    """Stream a bucket's listing page by page, in S3's key order (UTF-8 binary).

    ``observed_at`` is S3's clock when it answered (the ``Date`` header, whole
    seconds; this machine's clock, taken before the request, only when S3 sent
    none). The page holds every object written before S3 listed it (S3 lists
    strongly consistently). A repair dated so is a ``created`` change, which
    reads the object when it is applied: whichever real change comes before or
    after it, the document ends with what S3 holds. Removals are dated by
    their own confirmation instead (``Reconciler``: a HEAD, S3's clock).
    """
    params: dict[str, Any] = {"Bucket": bucket, "PaginationConfig": {"PageSize": page_size}}
    if prefix:
        params["Prefix"] = prefix
    if start_after:
        params["StartAfter"] = start_after
    pages = iter(s3.get_paginator("list_objects_v2").paginate(**params))
    while True:
        before = clock()
        response = next(pages, None)
        if response is None:
            return
        answered = s3_clock(response)
        observed_at = normalize_time(answered) if answered else before
        objects = tuple(
            ListedObject(
                key=item["Key"],
                etag=_etag(item.get("ETag")),
                size=item.get("Size"),
                position=item["Key"],
                observed_at=observed_at,
            )
            for item in response.get("Contents", [])
        )
        yield ListingPage(observed_at, objects)


class ObjectSource(Protocol):
    """Where the objects to backfill come from."""

    @property
    def bucket(self) -> str: ...

    def describe(self) -> str: ...

    def identity(self) -> dict[str, Any]: ...

    def objects(self, after: Position | None) -> Iterator[ListedObject]: ...


@dataclass
class BucketListing:
    """The bucket's own listing (``ListObjectsV2``), resumable by key.

    Its first request waits ``settle_seconds`` (one second) after the run began. A page is
    dated by S3's ``Date`` header, whole seconds, rounded down; a change applied before the
    run began happened before it, so after a whole second every page is dated later than
    it. Without the wait, a file changed in the very second the listing began is dated
    *after* its observation, the ledger judges the observation stale, and when the index
    was deleted since (the runbook's ``backfill --restart``), that file stays out of the
    rebuilt index.
    """

    s3: Any
    source_bucket: str
    prefix: str = ""
    page_size: int = 1000
    settle_seconds: float = SETTLE_SECONDS

    @property
    def bucket(self) -> str:
        return self.source_bucket

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def identity(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "prefix": self.prefix, "source": "list"}

    def objects(self, after: Position | None) -> Iterator[ListedObject]:
        if after is not None and not isinstance(after, str):
            raise BackfillError("checkpoint position is not a key; was it written for an inventory?")
        time.sleep(self.settle_seconds)
        for page in list_pages(self.s3, self.bucket, prefix=self.prefix, start_after=after, page_size=self.page_size):
            yield from page.objects


@dataclass(frozen=True)
class InventoryManifest:
    """An S3 Inventory ``manifest.json`` (CSV format)."""

    source_bucket: str
    destination_bucket: str
    created_at: str
    columns: tuple[str, ...]
    files: tuple[str, ...]
    location: str

    @classmethod
    def parse(cls, text: str, location: str) -> InventoryManifest:
        try:
            data = json.loads(text)
            destination = str(data["destinationBucket"])
            created_ms = int(data["creationTimestamp"])
            columns = tuple(c.strip() for c in str(data["fileSchema"]).split(","))
            files = tuple(str(f["key"]) for f in data["files"])
            source_bucket = str(data["sourceBucket"])
            file_format = str(data.get("fileFormat", ""))
        except (KeyError, TypeError, ValueError) as exc:
            raise BackfillError(f"inventory {location}: not an S3 Inventory manifest ({exc!r})") from None
        if file_format.upper() != "CSV":
            raise BackfillError(
                f"inventory {location}: fileFormat {file_format!r} is not supported (CSV only); "
                "configure a CSV inventory or backfill from the listing (omit --inventory)"
            )
        if "Key" not in columns:
            raise BackfillError(f"inventory {location}: fileSchema has no Key column")
        return cls(
            source_bucket=source_bucket,
            # arn:aws:s3:::bucket → bucket
            destination_bucket=destination.rsplit(":", 1)[-1],
            created_at=normalize_time(datetime.fromtimestamp(created_ms / 1000, UTC)),
            columns=columns,
            files=files,
            location=location,
        )


def read_manifest(s3: Any, location: str) -> InventoryManifest:
    """Read ``manifest.json`` from ``s3://bucket/key`` or a local path."""
    if location.startswith("s3://"):
        parsed = urlparse(location)
        body = s3.get_object(Bucket=parsed.netloc, Key=parsed.path.lstrip("/"))["Body"]
        try:
            text = body.read().decode("utf-8")
        finally:
            body.close()
    else:
        text = Path(location).read_text(encoding="utf-8")
    return InventoryManifest.parse(text, location)


@dataclass
class InventorySource:
    """The objects of an S3 Inventory report, resumable by (file, row).

    An inventory is a snapshot: every object in it was observed at the
    report's creation time, which becomes the changes' ``event_time``.
    Keys in CSV inventories are URL-encoded (spaces as ``+``).
    """

    s3: Any
    manifest: InventoryManifest
    prefix: str = ""

    @property
    def bucket(self) -> str:
        return self.manifest.source_bucket

    def describe(self) -> str:
        return (
            f"inventory {self.manifest.location} (s3://{self.bucket}/{self.prefix}, {len(self.manifest.files)} files)"
        )

    def identity(self) -> dict[str, Any]:
        return {"bucket": self.bucket, "prefix": self.prefix, "source": f"inventory {self.manifest.location}"}

    def objects(self, after: Position | None) -> Iterator[ListedObject]:
        if after is not None and not isinstance(after, tuple):
            raise BackfillError("checkpoint position is a key; was it written for a listing?")
        start_file, start_row = after if after is not None else (0, -1)
        column = {name: i for i, name in enumerate(self.manifest.columns)}

        def value(row: list[str], name: str) -> str | None:
            i = column.get(name)
            return row[i] if i is not None and i < len(row) else None

        for file_index in range(start_file, len(self.manifest.files)):
            first_row = start_row + 1 if file_index == start_file else 0
            for row_index, row in enumerate(self._rows(self.manifest.files[file_index])):
                if row_index < first_row:
                    continue
                if value(row, "IsLatest") == "false" or value(row, "IsDeleteMarker") == "true":
                    continue
                bucket = value(row, "Bucket")
                if bucket and bucket != self.bucket:
                    continue
                key = unquote_plus(value(row, "Key") or "")
                if not key or not key.startswith(self.prefix):
                    continue
                size = value(row, "Size")
                yield ListedObject(
                    key=key,
                    etag=_etag(value(row, "ETag")),
                    size=int(size) if size and size.isdigit() else None,
                    position=(file_index, row_index),
                    observed_at=self.manifest.created_at,
                )

    def _rows(self, key: str) -> Iterator[list[str]]:
        body = self.s3.get_object(Bucket=self.manifest.destination_bucket, Key=key)["Body"]
        try:
            with gzip.GzipFile(fileobj=body) as raw, io.TextIOWrapper(raw, encoding="utf-8", newline="") as text:
                yield from csv.reader(text)
        finally:
            body.close()
