"""Legacy Office files: an Excel 97-2003 ``.xls`` (BIFF8) and a password-protected Office file.

Both live in an OLE2 compound file, built here by hand (``_cfb``): enough for
calamine to read the workbook and for content-based type detection to see
what the container holds.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["make_encrypted_office", "make_xls"]


def _biff(record: int, payload: bytes) -> bytes:
    return struct.pack("<HH", record, len(payload)) + payload


def _biff_string(text: str, length_bytes: int) -> bytes:
    """XLUnicodeString (2-byte length) or ShortXLUnicodeString (1-byte), always UTF-16."""
    encoded = text.encode("utf-16-le")
    count = len(encoded) // 2
    head = struct.pack("<H", count) if length_bytes == 2 else struct.pack("<B", count)
    return head + b"\x01" + encoded


def _cfb(streams: Mapping[str, bytes]) -> bytes:
    """A minimal OLE2 compound file (version 3, 512-byte sectors) holding ``streams`` at the root.

    Streams are padded to 4096 bytes so they live in regular sectors and no
    mini stream is needed. The directory is a degenerate (all-right-sibling)
    tree, which readers accept.
    """
    sector = 512
    end, free, fat_mark = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
    padded = [
        (name, data.ljust(max(4096, -(-len(data) // sector) * sector), b"\x00")) for name, data in streams.items()
    ]
    entries = 1 + len(padded)
    dir_sectors = -(-entries // 4)
    data_sectors = sum(len(data) // sector for _, data in padded)
    fat_sectors = 1
    while fat_sectors * 128 < fat_sectors + dir_sectors + data_sectors:
        fat_sectors += 1
    fat = [fat_mark] * fat_sectors
    fat += [fat_sectors + i + 1 for i in range(dir_sectors - 1)] + [end]
    starts = []
    next_sector = fat_sectors + dir_sectors
    for _, data in padded:
        count = len(data) // sector
        starts.append(next_sector)
        fat += [next_sector + i + 1 for i in range(count - 1)] + [end]
        next_sector += count
    fat += [free] * (fat_sectors * 128 - len(fat))
    difat = list(range(fat_sectors)) + [free] * (109 - fat_sectors)
    header = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + bytes(16)
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + bytes(6)
        + struct.pack("<IIIIIIIII", 0, fat_sectors, fat_sectors, 0, 4096, end, 0, end, 0)
        + struct.pack("<109I", *difat)
    )

    def entry(name: str, kind: int, *, right: int, child: int, start: int, size: int) -> bytes:
        encoded = (name + "\x00").encode("utf-16-le") if name else b""
        return (
            encoded.ljust(64, b"\x00")
            + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", free, right, child)
            + bytes(16 + 4 + 8 + 8)
            + struct.pack("<IQ", start, size)
        )

    directory = entry("Root Entry", 5, right=free, child=1 if padded else free, start=end, size=0)
    for index, ((name, data), start) in enumerate(zip(padded, starts, strict=True)):
        right = index + 2 if index + 1 < len(padded) else free
        directory += entry(name, 2, right=right, child=free, start=start, size=len(data))
    directory = directory.ljust(dir_sectors * sector, b"\x00")
    body = b"".join(data for _, data in padded)
    return header + struct.pack(f"<{len(fat)}I", *fat) + directory + body


def make_encrypted_office() -> bytes:
    """What Office saves for a password-protected DOCX/XLSX/PPTX: an OLE2 file with an ``EncryptedPackage``.

    The streams hold deterministic noise, not a real encryption; type
    detection only needs the container's directory.
    """
    noise = bytes((i * 131 + 7) % 256 for i in range(8192))
    return _cfb({"EncryptionInfo": b"\x04\x00\x04\x00" + noise[:1024], "EncryptedPackage": noise})


def make_xls(sheets: Mapping[str, Sequence[Sequence[Any]]]) -> bytes:
    """A legacy Excel 97-2003 ``.xls`` (BIFF8 in an OLE2 container) with strings and numbers.

    Strings are written as LABEL records (UTF-16), numbers as NUMBER
    records; enough for calamine and for content-based type detection.
    """
    bof_globals = _biff(0x0809, struct.pack("<HHHHII", 0x0600, 0x0005, 0x1F4D, 1997, 0, 0x0006))
    codepage = _biff(0x0042, struct.pack("<H", 1200))
    sheet_streams = []
    for rows in sheets.values():
        body = [_biff(0x0809, struct.pack("<HHHHII", 0x0600, 0x0010, 0x1F4D, 1997, 0, 0x0006))]
        width = max((len(r) for r in rows), default=0)
        body.append(_biff(0x0200, struct.pack("<IIHHH", 0, len(rows), 0, width, 0)))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if value is None:
                    continue
                if isinstance(value, int | float) and not isinstance(value, bool):
                    body.append(_biff(0x0203, struct.pack("<HHHd", r, c, 0, float(value))))
                else:
                    body.append(_biff(0x0204, struct.pack("<HHH", r, c, 0) + _biff_string(str(value), 2)))
        body.append(_biff(0x000A, b""))
        sheet_streams.append(b"".join(body))
    names = list(sheets)
    # BOUNDSHEET records hold each sheet's absolute offset: compute the size
    # of the globals first, then fill the offsets in.
    boundsheet_sizes = [4 + 6 + len(_biff_string(n, 1)) for n in names]
    offset = len(bof_globals) + len(codepage) + sum(boundsheet_sizes) + 4
    boundsheets = []
    for name, stream in zip(names, sheet_streams, strict=True):
        boundsheets.append(_biff(0x0085, struct.pack("<IBB", offset, 0, 0) + _biff_string(name, 1)))
        offset += len(stream)
    workbook = b"".join([bof_globals, codepage, *boundsheets, _biff(0x000A, b""), *sheet_streams])
    return _cfb({"Workbook": workbook})
