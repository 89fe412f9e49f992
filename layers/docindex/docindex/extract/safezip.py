"""Open zip-based documents (DOCX, XLSX, PPTX, ODS) only after checking the zip directory.

docs/extraction.md: an 885 KB DOCX expanding to 287 MB drove every parser to a
3 GiB memory cap in 7-16 s; checking the central directory first rejected it
in under a millisecond. So before any member is decompressed:

- the sum of the declared uncompressed sizes must be at most
  ``limits.max_zip_uncompressed_bytes``;
- every member above ``RATIO_CHECK_MIN_BYTES`` uncompressed must compress at
  most ``limits.max_zip_ratio``:1 (real office files peaked at 35:1; small
  members such as repetitive XML legitimately compress better);
- there are at most ``MAX_MEMBERS`` members;
- no member is encrypted (ZIP-level encryption; Office's own encryption uses
  an OLE2 container and is caught by type detection).

Reads are bounded as well: a member is never read past its declared size
(nor past the remaining byte budget), so a directory that lies about sizes
cannot make us inflate more than we accepted.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from typing import IO

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import ExtractionLimits

RATIO_CHECK_MIN_BYTES = 1024 * 1024
# A real deck has about two parts a slide (the slide and its relationships),
# four with notes, plus media: a 10,000-slide PPTX has 20,011 members and
# must pass (it did not at 20,000). 100k leaves room for 20,000 slides with
# notes and still bounds the per-member bookkeeping (~0.5 KB a ZipInfo, so
# ~50 MB) of a directory built to exhaust it; the bytes a member inflates to
# are bounded separately.
MAX_MEMBERS = 100_000
_CHUNK = 64 * 1024


class SafeZip:
    """A zip archive whose directory passed the bomb checks; members are read with bounds."""

    def __init__(self, data: bytes, limits: ExtractionLimits) -> None:
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
            raise ExtractionError("corrupt", f"not a readable zip archive: {exc}") from None
        check_directory(infos, limits)
        self._infos = {info.filename: info for info in infos}
        # What may still be inflated in total: the declared sizes already
        # passed the check, this guards the actual bytes produced.
        self._budget = limits.max_zip_uncompressed_bytes

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the archive."""
        self._zip.close()

    def names(self) -> list[str]:
        """Member names in directory order."""
        return list(self._infos)

    def infos(self) -> list[zipfile.ZipInfo]:
        """Member entries in directory order (names as zipfile decoded them)."""
        return list(self._infos.values())

    def has(self, name: str) -> bool:
        """Whether a member exists."""
        return name in self._infos

    def open(self, name: str) -> io.RawIOBase:
        """A bounded reader for one member (raises ``ExtractionError`` if it is missing)."""
        info = self._infos.get(name)
        if info is None:
            raise ExtractionError("corrupt", f"missing part {name}")
        try:
            raw = self._zip.open(info)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, ValueError, OSError) as exc:
            raise ExtractionError("corrupt", f"cannot open part {name}: {exc}") from None
        return _BoundedReader(self, raw, name, info.file_size)

    def read(self, name: str, max_bytes: int | None = None) -> bytes:
        """A member's bytes; ``zip_bomb`` if it is bigger than ``max_bytes`` or the budget."""
        with self.open(name) as stream:
            limit = max_bytes if max_bytes is not None else self._budget
            data = stream.read(limit + 1)
        if len(data) > limit:
            raise ExtractionError("zip_bomb", f"part {name} is larger than {limit} bytes")
        return data

    def _consume(self, n: int, name: str) -> None:
        self._budget -= n
        if self._budget < 0:
            raise ExtractionError("zip_bomb", f"inflating {name} exceeded the uncompressed size limit")


def check_directory(infos: list[zipfile.ZipInfo], limits: ExtractionLimits) -> None:
    """Reject an archive from its central directory alone, before inflating anything."""
    if len(infos) > MAX_MEMBERS:
        raise ExtractionError("zip_bomb", f"{len(infos)} members (limit {MAX_MEMBERS})")
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise ExtractionError("encrypted", f"zip member {info.filename} is encrypted")
        total += info.file_size
        if total > limits.max_zip_uncompressed_bytes:
            raise ExtractionError(
                "zip_bomb",
                f"declared uncompressed size exceeds {limits.max_zip_uncompressed_bytes} bytes",
            )
        if info.file_size > RATIO_CHECK_MIN_BYTES:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > limits.max_zip_ratio:
                raise ExtractionError(
                    "zip_bomb",
                    f"{info.filename} compresses {ratio:.0f}:1 (limit {limits.max_zip_ratio}:1)",
                )


class _BoundedReader(io.RawIOBase):
    """Reads a member, charging every inflated byte to the archive's budget."""

    def __init__(self, owner: SafeZip, raw: IO[bytes], name: str, declared: int) -> None:
        super().__init__()
        self._owner = owner
        self._raw = raw
        self._name = name
        self._left = declared

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        want = self._left if size is None or size < 0 else min(size, self._left)
        if want <= 0:
            return b""
        try:
            chunk = self._raw.read(want)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as exc:
            # Broken deflate streams and CRC mismatches arrive here.
            raise ExtractionError("corrupt", f"cannot inflate {self._name}: {exc}") from None
        self._left -= len(chunk)
        self._owner._consume(len(chunk), self._name)
        return chunk

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()
