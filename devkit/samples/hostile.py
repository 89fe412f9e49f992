"""Hostile and broken input: zip bombs, XXE, billion laughs, pixel bombs, lying or corrupt files.

Each is small on disk and cheap to build (the compressed blocks are computed
once and repeated), so tests and the soak can mix them into a corpus. Every
generator returns the same bytes for the same arguments.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from collections.abc import Sequence
from typing import Any

from devkit.samples.office import make_docx, make_pptx, make_xlsx
from devkit.samples.ooxml import XML_DECL, ZIP_TIME, zip_parts
from devkit.samples.pdf import make_pdf

__all__ = [
    "make_bad_xref_pdf",
    "make_billion_laughs_docx",
    "make_billion_laughs_xml",
    "make_corrupt_docx",
    "make_corrupt_pdf",
    "make_corrupt_png",
    "make_many_pages_pdf",
    "make_png_bomb",
    "make_xxe_docx",
    "make_zip_bomb",
]


def _deflated_zeros(mib: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``mib`` MiB of zeros and its CRC-32, without deflating gigabytes.

    After a full flush the compressor starts over at a byte boundary, so every
    MiB of zeros compresses to the same bytes: one block, repeated.
    """
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush()
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return block * mib + tail, crc


def _deflated_zip(members: Sequence[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of already-deflated members ``(name, deflated, crc, size)`` (no zip64: sizes < 4 GiB)."""
    dos_time = (ZIP_TIME[3] << 11) | (ZIP_TIME[4] << 5) | (ZIP_TIME[5] // 2)
    dos_date = ((ZIP_TIME[0] - 1980) << 9) | (ZIP_TIME[1] << 5) | ZIP_TIME[2]
    body, directory = io.BytesIO(), io.BytesIO()
    for name, data, crc, size in members:
        raw = name.encode("utf-8")
        offset = body.tell()
        common = struct.pack("<HHHHHIII", 20, 0x0800, 8, dos_time, dos_date, crc, len(data), size)
        body.write(b"PK\x03\x04" + common + struct.pack("<HH", len(raw), 0) + raw + data)
        directory.write(
            b"PK\x01\x02"
            + struct.pack("<H", 20)
            + common
            + struct.pack("<HHHHHII", len(raw), 0, 0, 0, 0, 0o644 << 16, offset)
            + raw
        )
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), directory.tell(), body.tell(), 0)
    return body.getvalue() + directory.getvalue() + end


def make_zip_bomb(kind: str = "docx", inflated_mb: int = 200, *, member: str | None = None) -> bytes:
    """A small, otherwise valid DOCX/XLSX/PPTX carrying one member of ``inflated_mb`` MiB of zeros.

    Deflate packs zeros about 1000:1: 2 GiB cost ~2 MB on disk, and about a
    second to build (the compressed block is computed once and repeated).
    Below 4096 MiB (no zip64).
    """
    if not 0 < inflated_mb < 4096:
        raise ValueError("inflated_mb must be between 1 and 4095")
    base = {
        "docx": lambda: make_docx(["爆弾の外側にある本文です。"]),
        "xlsx": lambda: make_xlsx({"Sheet1": [["爆弾"]]}),
        "pptx": lambda: make_pptx(["爆弾の外側にあるスライド"]),
    }[kind]()
    name = (
        member or {"docx": "word/media/image1.bin", "xlsx": "xl/media/image1.bin", "pptx": "ppt/media/image1.bin"}[kind]
    )
    members: list[tuple[str, bytes, int, int]] = []
    with zipfile.ZipFile(io.BytesIO(base)) as zf:
        for info in zf.infolist():
            content = zf.read(info)
            compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
            members.append((info.filename, compressor.compress(content) + compressor.flush(), info.CRC, len(content)))
    deflated, crc = _deflated_zeros(inflated_mb)
    members.append((name, deflated, crc, inflated_mb << 20))
    return _deflated_zip(members)


def make_xxe_docx(target_path: str) -> bytes:
    """A DOCX whose body declares an external entity pointing at ``target_path`` and uses it."""
    url = "file://" + os.path.abspath(target_path)
    doc = _zip_replace_document(
        make_docx(["XXE before", "placeholder", "XXE after"]),
        lambda xml: xml.replace(XML_DECL, f'{XML_DECL}<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "{url}">]>\n').replace(
            "placeholder", "&xxe;"
        ),
    )
    return doc


def make_billion_laughs_docx(depth: int = 10, width: int = 10) -> bytes:
    """A DOCX whose body uses a nested internal entity expanding to ``width**depth`` "lol"s."""
    entities = ['<!ENTITY lol0 "lol">']
    for level in range(1, depth):
        entities.append(f'<!ENTITY lol{level} "{f"&lol{level - 1};" * width}">')
    doctype = f"<!DOCTYPE w:document [{''.join(entities)}]>\n"
    return _zip_replace_document(
        make_docx(["laughs before", "placeholder"]),
        lambda xml: xml.replace(XML_DECL, XML_DECL + doctype).replace("placeholder", f"&lol{depth - 1};"),
    )


def make_corrupt_docx(mode: str = "truncated") -> bytes:
    """A DOCX that cannot be read: ``truncated`` (zip cut short) or ``bad_xml`` (body is not well formed)."""
    good = make_docx(["壊れた文書です。"] * 50)
    if mode == "truncated":
        return good[: len(good) // 2]
    if mode == "bad_xml":
        return _zip_replace_document(good, lambda xml: xml[: len(xml) // 2])
    raise ValueError(f"unknown mode {mode!r}")


def _zip_replace_document(package: bytes, edit: Any) -> bytes:
    with zipfile.ZipFile(io.BytesIO(package)) as zf:
        parts: dict[str, str | bytes] = {name: zf.read(name) for name in zf.namelist()}
        parts["word/document.xml"] = edit(zf.read("word/document.xml").decode("utf-8"))
    return zip_parts(parts)


def make_billion_laughs_xml(depth: int = 10, width: int = 10) -> bytes:
    """A plain XML file whose one element uses a nested entity expanding to ``width**depth`` "lol"s."""
    entities = ['<!ENTITY lol0 "lol">']
    for level in range(1, depth):
        entities.append(f'<!ENTITY lol{level} "{f"&lol{level - 1};" * width}">')
    return (f'<?xml version="1.0"?>\n<!DOCTYPE lolz [{"".join(entities)}]>\n<lolz>&lol{depth - 1};</lolz>\n').encode()


def _pdf_objects(objects: Sequence[bytes], *, root: int = 1, xref_shift: int = 0) -> bytes:
    """A PDF from numbered objects (1..n), with a cross-reference table whose offsets are off by ``xref_shift``."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    start = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % (offset + xref_shift))
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, start))
    return out.getvalue()


# Page object i of the hand-built PDFs: parent 2, font 3, content stream 4 (``%`` a MediaBox width and height).
_PDF_PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"


def make_many_pages_pdf(pages: int = 20_000, text: str = "page of a very long report") -> bytes:
    """A PDF with ``pages`` real pages (about 70 bytes each): they share one font and one content stream."""
    content = b"BT /F1 12 Tf 20 20 Td (" + text.encode("latin-1") + b") Tj ET"
    first_page = 5
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count %d /Kids [%s] >>"
        % (pages, b" ".join(b"%d 0 R" % (first_page + i) for i in range(pages))),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    objects += [_PDF_PAGE % b"300 100"] * pages
    return _pdf_objects(objects)


def make_bad_xref_pdf(text: str = "the cross-reference table of this file lies") -> bytes:
    """A one-page PDF whose cross-reference table points every object to the wrong offset."""
    content = b"BT /F1 12 Tf 20 50 Td (" + text.encode("latin-1") + b") Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /Kids [5 0 R] >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        _PDF_PAGE % b"400 100",
    ]
    return _pdf_objects(objects, xref_shift=7)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_png_bomb(width: int = 20_000, height: int = 20_000) -> bytes:
    """A valid greyscale PNG of ``width`` x ``height`` black pixels: a few hundred KB, gigapixels decoded.

    Built without deflating the pixels: rows are compressed a MiB at a time,
    and after a full flush every such group compresses to the same bytes
    (see ``_deflated_zeros``); a fresh compressor ends the stream.
    """
    row = width + 1  # filter byte + one byte per pixel
    rows_per_group = max(1, (1 << 20) // row)
    groups, rest = divmod(height, rows_per_group)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    group = compressor.compress(bytes(row * rows_per_group)) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15)
    end = last.compress(bytes(row * rest)) + last.flush()
    adler = ((row * height % 65521) << 16) | 1  # Adler-32 of that many zero bytes
    idat = b"\x78\xda" + group * groups + end + struct.pack(">I", adler)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b"")


def make_corrupt_png() -> bytes:
    """A PNG signature and header followed by noise: an image that cannot be decoded."""
    noise = bytes((i * 7919 + 13) % 251 for i in range(2048))
    ihdr = struct.pack(">IIBBBBB", 640, 480, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", noise) + _png_chunk(b"IEND", b"")


def make_corrupt_pdf(mode: str = "garbage") -> bytes:
    """A PDF that cannot be opened.

    ``garbage``: a PDF header followed by noise; ``truncated``: a real PDF cut short.
    """
    if mode == "truncated":
        data = make_pdf(["この PDF は途中で切れています。" * 20] * 3, "切れた PDF")
        return data[: len(data) * 2 // 5]
    if mode == "garbage":
        noise = bytes((i * 7919 + 13) % 251 for i in range(4096))
        return b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + noise + b"\n%%EOF\n"
    raise ValueError(f"unknown mode {mode!r}")
