"""What a bucket holds, by kind and size: from an S3 Inventory report or a (bounded) listing.

``docindex plan`` needs the files by kind (PDF, Word, Excel, PowerPoint, text, image, mail,
archive, other) and size, and a uniform random sample of them to open. Both come from one pass
over the rows: counts and bytes per *stratum* (kind x size class: under 64 KiB, under 1 MiB,
under 16 MiB, larger) and a reservoir sample per stratum, so a 5-million-row inventory is read
once, in constant memory.

An S3 Inventory report is what S3 writes (docs.aws.amazon.com/AmazonS3/latest/userguide/
storage-inventory-location.html): a ``manifest.json`` whose ``fileFormat`` is ``CSV``, ``Parquet``
or ``ORC``, whose ``fileSchema`` names the fields (for CSV: ``"Bucket, Key, Size, ..."`` in the
data files' column order; the CSV files are gzip'd, have no header, and keys are URL-encoded),
and whose ``files`` list the data files in the destination bucket. The manifest is read from
``s3://...`` or a local path; a local manifest's data files are looked for beside it first (a
downloaded report keeps S3's layout: ``<manifest dir>/../../data/...`` or ``<manifest dir>/data/...``),
then in the destination bucket. Parquet needs ``pyarrow`` (an optional dependency of the operator
CLI: ``pip install pyarrow``; never in the Lambda layer); ORC is refused with that advice.
"""

from __future__ import annotations

import csv
import gzip
import heapq
import io
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus, urlparse

from docindex.core.exceptions import CommandError

# Extension -> kind. A kind groups formats whose index documents look alike (pages, text amount).
KINDS: dict[str, tuple[str, ...]] = {
    "pdf": ("pdf",),
    "word": ("doc", "docx", "docm", "rtf", "odt", "dot", "dotx"),
    "excel": ("xls", "xlsx", "xlsm", "xlsb", "ods", "csv"),
    "powerpoint": ("ppt", "pptx", "pptm", "odp", "pps", "ppsx"),
    "text": ("txt", "md", "html", "htm", "xml", "json", "log", "tsv"),
    "image": ("png", "jpg", "jpeg", "tif", "tiff", "bmp", "gif", "webp"),
    "mail": ("msg", "eml"),
    "archive": ("zip",),
}
_KIND_OF = {ext: kind for kind, extensions in KINDS.items() for ext in extensions}
KIND_NAMES = (*KINDS, "other")
SIZE_CLASSES = (64 * 1024, 1024 * 1024, 16 * 1024 * 1024)  # upper bounds; the last class is open
SIZE_CLASS_NAMES = ("<64KiB", "<1MiB", "<16MiB", ">=16MiB")
RESERVOIR = 400  # per stratum: more than any sample asks for
KIND_INDEX = {kind: number for number, kind in enumerate(KIND_NAMES)}


def kind_of(key: str) -> str:
    name = key.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return _KIND_OF.get(ext, "other")


def size_class(size: int) -> int:
    for number, bound in enumerate(SIZE_CLASSES):
        if size < bound:
            return number
    return len(SIZE_CLASSES)


@dataclass
class Stratum:
    """Files of one kind and size class: how many, how many bytes, and a uniform sample of them.

    The sample keeps the files with the smallest of a random key drawn per file: any prefix of it,
    in key order, is a uniform random sample of the stratum (a plain reservoir's first slots are not).
    """

    kind: str
    size_class: int
    count: int = 0
    bytes: int = 0
    # max-heap by the random key, as (-key, file key, size, whether the key is URL-encoded)
    _heap: list[tuple[float, str, int, bool]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.kind} {SIZE_CLASS_NAMES[self.size_class]}"

    def offer(self, draw: float, key: str, size: int, *, encoded: bool = False) -> None:
        """Keep the file if its random key is among the stratum's smallest (CSV reports' keys are
        URL-encoded: decoded only when sampled)."""
        if len(self._heap) < RESERVOIR:
            heapq.heappush(self._heap, (-draw, key, size, encoded))
        elif -self._heap[0][0] > draw:
            heapq.heapreplace(self._heap, (-draw, key, size, encoded))

    @property
    def sample(self) -> list[tuple[str, int]]:
        """The kept files, in the order of their random keys."""
        return [
            (unquote_plus(key) if encoded else key, size) for _, key, size, encoded in sorted(self._heap, reverse=True)
        ]


@dataclass
class Census:
    """Counts, bytes and uniform samples per stratum of the files a source listed."""

    source: str
    bucket: str
    strata: dict[tuple[str, int], Stratum] = field(default_factory=dict)
    rows: int = 0
    complete: bool = True  # False: a listing stopped at its bound (the totals are a lower bound)
    seed: int = 36
    reader: str = "python"

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)  # noqa: S311  # nosec B311 - sampling, not secrecy

    def stratum(self, kind: str, number: int) -> Stratum:
        found = self.strata.get((kind, number))
        if found is None:
            found = self.strata[(kind, number)] = Stratum(kind, number)
        return found

    def add(self, key: str, size: int) -> None:
        stratum = self.stratum(kind_of(key), size_class(size))
        stratum.count += 1
        stratum.bytes += size
        self.rows += 1
        stratum.offer(self._rng.random(), key, size)

    @property
    def files(self) -> int:
        return sum(s.count for s in self.strata.values())

    @property
    def total_bytes(self) -> int:
        return sum(s.bytes for s in self.strata.values())

    def by_kind(self) -> dict[str, dict[str, int]]:
        kinds: dict[str, dict[str, int]] = {}
        for stratum in self.strata.values():
            entry = kinds.setdefault(stratum.kind, {"files": 0, "bytes": 0})
            entry["files"] += stratum.count
            entry["bytes"] += stratum.bytes
        return dict(sorted(kinds.items(), key=lambda item: -item[1]["files"]))

    def allocate(self, total: int) -> dict[tuple[str, int], list[tuple[str, int]]]:
        """A sample of about ``total`` files: per stratum in proportion to its count, at least 3."""
        if total <= 0 or not self.files:
            return {}
        chosen = {}
        for key, stratum in self.strata.items():
            want = max(3, round(total * stratum.count / self.files))
            chosen[key] = stratum.sample[:want]
        return chosen


Progress = Callable[[int], None]


# ------------------------------------------------------------------ S3 Inventory


@dataclass(frozen=True)
class Manifest:
    """An S3 Inventory ``manifest.json``."""

    location: str
    source_bucket: str
    destination_bucket: str
    file_format: str
    schema: str
    files: tuple[str, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c.strip() for c in self.schema.split(","))


def read_manifest(location: str, s3: Any | None) -> Manifest:
    try:
        text = _read(location, s3).decode("utf-8")
        data = json.loads(text)
        manifest = Manifest(
            location=location,
            source_bucket=str(data["sourceBucket"]),
            destination_bucket=str(data["destinationBucket"]).rsplit(":", 1)[-1],
            file_format=str(data.get("fileFormat", "CSV")),
            schema=str(data.get("fileSchema", "")),
            files=tuple(str(f["key"]) for f in data["files"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CommandError(f"inventory {location}: not an S3 Inventory manifest.json ({exc!r})") from None
    if manifest.file_format.upper() == "ORC":
        raise CommandError(f"inventory {location}: ORC reports are not read; configure the inventory as CSV or Parquet")
    if manifest.file_format.upper() not in ("CSV", "PARQUET"):
        raise CommandError(f"inventory {location}: fileFormat {manifest.file_format!r} is not CSV or Parquet")
    return manifest


def _read(location: str, s3: Any | None) -> bytes:
    if location.startswith("s3://"):
        if s3 is None:
            raise CommandError(f"{location}: reading from S3 needs AWS credentials")
        parsed = urlparse(location)
        body = s3.get_object(Bucket=parsed.netloc, Key=parsed.path.lstrip("/"))["Body"]
        try:
            return bytes(body.read())
        finally:
            body.close()
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {location}: {exc.strerror or exc}") from None


def _data_file(manifest: Manifest, key: str) -> str:
    """A data file's location: beside a local manifest when it is there, else the destination bucket."""
    if not manifest.location.startswith("s3://"):
        here = Path(manifest.location).resolve().parent
        name = key.rsplit("/", 1)[-1]
        for candidate in (here / key, here / "data" / name, here.parent.parent / "data" / name, here / name):
            if candidate.is_file():
                return str(candidate)
    return f"s3://{manifest.destination_bucket}/{key}"


def read_inventory(manifest: Manifest, s3: Any | None, census: Census, *, progress: Progress | None = None) -> None:
    """Every current object of the report into ``census`` (old versions and delete markers left out).

    With pyarrow installed the data files are read and counted column by column (5 million rows
    in seconds); without it, CSV reports are read row by row (minutes at that size).
    """
    arrow = _arrow()
    if manifest.file_format.upper() != "CSV" and arrow is None:
        raise CommandError(
            "reading a Parquet inventory needs pyarrow (an optional dependency of the operator CLI): "
            "`pip install pyarrow`, or configure the inventory as CSV"
        )
    census.reader = "pyarrow" if arrow is not None else "python (pip install pyarrow: much faster)"
    for key in manifest.files:
        location = _data_file(manifest, key)
        data = _read(location, s3)
        if arrow is None:
            for name, size in _csv_rows(manifest, data):
                census.add(name, size)
                if progress is not None and census.rows % 100_000 == 0:
                    progress(census.rows)
        else:
            table = _arrow_table(manifest, data, location)
            _add_table(census, table, encoded=manifest.file_format.upper() == "CSV")
        if progress is not None:
            progress(census.rows)


def _csv_rows(manifest: Manifest, data: bytes) -> Iterator[tuple[str, int]]:
    columns = {name: i for i, name in enumerate(manifest.columns)}
    if "Key" not in columns:
        raise CommandError(f"inventory {manifest.location}: fileSchema has no Key field")
    key_at, size_at = columns["Key"], columns.get("Size")
    latest_at, marker_at = columns.get("IsLatest"), columns.get("IsDeleteMarker")
    raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    for row in csv.reader(io.StringIO(raw.decode("utf-8"), newline="")):
        if latest_at is not None and row[latest_at] == "false":
            continue
        if marker_at is not None and row[marker_at] == "true":
            continue
        size = row[size_at] if size_at is not None and size_at < len(row) else ""
        yield unquote_plus(row[key_at]), int(size) if size.isdigit() else 0


def _arrow() -> Any:
    """pyarrow, or None when it is not installed (never imported by the pipeline itself)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return None
    import pyarrow as pa

    return pa


def _arrow_table(manifest: Manifest, data: bytes, location: str) -> Any:
    """The data file as a table with ``key``, ``size`` and, where the report has them, the version flags."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if manifest.file_format.upper() == "CSV":
        from pyarrow import csv as pacsv

        names = list(manifest.columns)
        if "Key" not in names:
            raise CommandError(f"inventory {manifest.location}: fileSchema has no Key field")
        wanted = [n for n in ("Key", "Size", "IsLatest", "IsDeleteMarker") if n in names]
        raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        table = pacsv.read_csv(
            pa.BufferReader(raw),
            read_options=pacsv.ReadOptions(column_names=names),
            convert_options=pacsv.ConvertOptions(
                include_columns=wanted,
                column_types={"Key": pa.string(), "Size": pa.int64(), "IsLatest": pa.string()}
                | {"IsDeleteMarker": pa.string()},
            ),
        )
        rename = {"Key": "key", "Size": "size", "IsLatest": "is_latest", "IsDeleteMarker": "is_delete_marker"}
        table = table.rename_columns([rename[n] for n in table.column_names])
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(pa.BufferReader(data))
        lower = {name.lower(): name for name in table.column_names}
        if "key" not in lower:
            raise CommandError(f"inventory data file {location}: no key column")
        keep = [lower[n] for n in ("key", "size", "is_latest", "is_delete_marker") if n in lower]
        table = table.select(keep).rename_columns([n.lower() for n in keep])
    for flag, drop in (("is_latest", "false"), ("is_delete_marker", "true")):
        if flag in table.column_names:
            column = pc.cast(table[flag], pa.string())
            table = table.filter(pc.invert(pc.fill_null(pc.equal(pc.utf8_lower(column), drop), False)))
    if "size" not in table.column_names:
        table = table.append_column("size", pa.array([0] * table.num_rows, pa.int64()))
    return table


def _add_table(census: Census, table: Any, *, encoded: bool) -> None:
    """Count a table's rows per stratum and offer each stratum's smallest random keys to its sample."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return
    keys = table["key"]
    sizes = pc.fill_null(pc.cast(table["size"], pa.int64()), 0)
    # The extension, lowercased: ASCII in CSV's URL-encoding as in the key itself.
    extension = pc.utf8_lower(pc.struct_field(pc.extract_regex(keys, r"\.(?P<e>[A-Za-z0-9]{1,8})$"), [0]))
    lookup = pa.array(list(_KIND_OF))
    kinds_of_ext = pa.array([KIND_INDEX[_KIND_OF[e]] for e in _KIND_OF], pa.int64())
    found = pc.index_in(extension, value_set=lookup)
    kind = pc.fill_null(pc.take(kinds_of_ext, found), KIND_INDEX["other"])
    number = pa.array([0] * len(sizes), pa.int64())
    for bound in SIZE_CLASSES:
        number = pc.add(number, pc.cast(pc.greater_equal(sizes, bound), pa.int64()))
    stratum = pc.add(pc.multiply(kind, len(SIZE_CLASSES) + 1), number)
    draws = pc.random(len(sizes), initializer=census._rng.randrange(2**63))
    # Rows in (stratum, random key) order: each stratum's first rows are its uniform sample.
    order = pc.sort_indices(pa.table({"s": stratum, "d": draws}), sort_keys=[("s", "ascending"), ("d", "ascending")])
    grouped = pa.table({"s": stratum, "size": sizes}).group_by("s").aggregate([("size", "sum"), ("size", "count")])
    segments = sorted(
        zip(grouped["s"].to_pylist(), grouped["size_sum"].to_pylist(), grouped["size_count"].to_pylist(), strict=True)
    )
    start = 0
    for s_value, total, count in segments:
        kind_name, size_number = KIND_NAMES[s_value // (len(SIZE_CLASSES) + 1)], s_value % (len(SIZE_CLASSES) + 1)
        target = census.stratum(kind_name, size_number)
        target.count += count
        target.bytes += total
        census.rows += count
        rows = order.slice(start, min(count, RESERVOIR))
        start += count
        picked = zip(
            pc.take(draws, rows).to_pylist(),
            pc.take(keys, rows).to_pylist(),
            pc.take(sizes, rows).to_pylist(),
            strict=True,
        )
        for draw, key, size in picked:
            target.offer(draw, key, int(size), encoded=encoded)


# ------------------------------------------------------------------ a listing


def listing_rows(s3: Any, bucket: str, *, prefix: str = "", limit: int | None = None) -> Iterator[tuple[str, int]]:
    """(key, size) of the bucket's objects by ``ListObjectsV2``, at most ``limit``."""
    paginator = s3.get_paginator("list_objects_v2")
    listed = 0
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            yield str(obj["Key"]), int(obj.get("Size", 0))
            listed += 1
            if limit is not None and listed >= limit:
                return


def take(census: Census, rows: Iterable[tuple[str, int]], *, progress: Progress | None = None) -> Census:
    """Feed ``rows`` into ``census``; ``progress`` is told the rows read every 100,000."""
    add = census.add
    for key, size in rows:
        add(key, size)
        if progress is not None and census.rows % 100_000 == 0:
            progress(census.rows)
    if progress is not None:
        progress(census.rows)
    return census
