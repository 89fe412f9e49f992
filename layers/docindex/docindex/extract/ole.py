"""OLE2 compound files (legacy .doc, .ppt, .msg) through olefile, with bounds.

olefile (BSD-2-Clause, pure Python) follows the FAT chains and rejects
sector indexes out of range and chains that loop. On top of it:

- a stream whose directory entry declares more bytes than the whole file
  can hold is ``corrupt`` before a byte of it is read (no huge allocation
  from a lying size);
- reads take at most ``max_bytes``;
- any olefile failure (truncated file, bad sector, broken directory) is
  ``corrupt``, never an unexpected exception.
"""

from __future__ import annotations

import contextlib
import io
import struct
from datetime import UTC, datetime
from typing import Any

from docindex.core.exceptions import ExtractionError

# A directory holding more entries than this is not an office file (a .msg
# with a hundred attachments has a few thousand).
MAX_ENTRIES = 50_000


class OleFile:
    """An opened compound file; streams are read by path ("a/b")."""

    def __init__(self, data: bytes) -> None:
        import olefile

        self._size = len(data)
        try:
            self._ole: Any = olefile.OleFileIO(io.BytesIO(data), raise_defects=olefile.DEFECT_INCORRECT)
            entries = self._ole.listdir(streams=True, storages=True)
        except ExtractionError:
            raise
        except Exception as exc:  # noqa: BLE001 - olefile raises OSError, ValueError, IndexError, struct.error...
            raise ExtractionError("corrupt", f"unreadable OLE2 container: {type(exc).__name__}: {exc}") from None
        if len(entries) > MAX_ENTRIES:
            raise ExtractionError("corrupt", f"{len(entries)} directory entries (limit {MAX_ENTRIES})")
        self.paths = ["/".join(parts) for parts in entries]
        self._streams = {p for p, parts in zip(self.paths, entries, strict=True) if self._is_stream(parts)}

    def _is_stream(self, parts: list[str]) -> bool:
        import olefile

        try:
            return bool(self._ole.get_type(parts) == olefile.STGTY_STREAM)
        except Exception:  # noqa: BLE001 - a broken entry is simply not a stream
            return False

    def __enter__(self) -> OleFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the container."""
        with contextlib.suppress(Exception):  # closing an in-memory file cannot matter
            self._ole.close()

    def has(self, path: str) -> bool:
        """Whether ``path`` names a stream."""
        return path in self._streams

    def streams(self, prefix: str = "") -> list[str]:
        """Stream paths under ``prefix`` (directly or deeper), in directory order."""
        return [p for p in self.paths if p in self._streams and p.startswith(prefix)]

    def storages(self, parent: str = "") -> list[str]:
        """Storage paths whose parent is ``parent`` ("" = the root), in directory order."""
        return [p for p in self.paths if p not in self._streams and p.rpartition("/")[0] == parent]

    def size(self, path: str) -> int:
        """The declared size of a stream."""
        try:
            return int(self._ole.get_size(path))
        except Exception as exc:  # noqa: BLE001
            raise ExtractionError("corrupt", f"stream {path}: {exc}") from None

    def read(self, path: str, max_bytes: int | None = None) -> bytes:
        """A stream's bytes (``corrupt`` when its size is impossible or its sectors are damaged)."""
        declared = self.size(path)
        if declared > self._size:
            raise ExtractionError("corrupt", f"stream {path} declares {declared} bytes in a {self._size}-byte file")
        limit = declared if max_bytes is None else min(declared, max_bytes)
        try:
            with self._ole.openstream(path) as stream:
                data: bytes = stream.read(limit)
        except Exception as exc:  # noqa: BLE001 - damaged chains surface here
            raise ExtractionError("corrupt", f"stream {path}: {type(exc).__name__}: {exc}") from None
        return data

    def summary(self) -> dict[str, Any]:
        """Title, author, last saved by, created and modified from ``\\x05SummaryInformation`` (what is set)."""
        if not self.has("\x05SummaryInformation"):
            return {}
        try:
            meta = self._ole.get_metadata()
        except Exception:  # noqa: BLE001 - broken metadata must not cost the content
            return {}
        codec = codepage_codec(meta.codepage)
        out: dict[str, Any] = {}
        for name in ("title", "author", "last_saved_by", "subject"):
            value = getattr(meta, name, None)
            if isinstance(value, bytes):
                value = value.rstrip(b"\x00").decode(codec, "replace")
            if isinstance(value, str) and value.strip():
                out[name] = value.strip()
        for name in ("create_time", "last_saved_time"):
            value = getattr(meta, name, None)
            if isinstance(value, datetime) and value.year > 1601:
                out[name] = value.replace(tzinfo=UTC)
        return out


def codepage_codec(codepage: int | None, default: str = "cp1252") -> str:
    """The Python codec of a Windows code page number (932 -> cp932, 65001 -> utf-8)."""
    if codepage is None:
        return default
    codepage &= 0xFFFF
    special = {
        65001: "utf-8",
        1200: "utf-16-le",
        1201: "utf-16-be",
        20127: "ascii",
        28591: "latin-1",
        50220: "iso-2022-jp",
    }
    special.update({51932: "euc_jp", 20932: "euc_jp", 10001: "cp932", 936: "gbk", 949: "cp949", 950: "cp950"})
    name = special.get(codepage, f"cp{codepage}")
    try:
        import codecs

        codecs.lookup(name)
    except LookupError:
        return default
    return name


def filetime(value: bytes) -> datetime | None:
    """A FILETIME (100 ns ticks since 1601) as an aware datetime, None when unset or absurd."""
    (ticks,) = struct.unpack("<Q", value[:8])
    if ticks == 0:
        return None
    seconds = ticks / 10_000_000 - 11_644_473_600
    if not 0 < seconds < 4_102_444_800:  # 1970..2100
        return None
    return datetime.fromtimestamp(seconds, UTC)
