"""Bombs that live inside a format: PDF filters, sheet XML, shared strings, fonts.

Unlike the zip bombs of ``hostile`` (caught from the zip directory), these pass
every container check: the cost only shows once the format's own parser
inflates a stream or builds a sheet. They are what the extraction sandbox
(``docindex.extract.isolation``) bounds. Each is a few MB on disk and cheap to
build: the large payloads are one compressed block repeated (after a full
flush deflate starts over at a byte boundary, so every copy of the same input
compresses to the same bytes).
"""

from __future__ import annotations

import random
import zlib

from devkit.samples.hostile import _deflated_zip, _pdf_objects
from devkit.samples.office import make_xlsx
from devkit.samples.scans import image_page_pdf

__all__ = [
    "make_ccitt_bomb_pdf",
    "make_image_bomb_pdf",
    "make_many_fonts_pdf",
    "make_pdf_stream_bomb",
    "make_png_bomb",
    "make_xlsx_many_cells",
    "make_xlsx_shared_strings_bomb",
]

MiB = 1 << 20


def _deflate_repeated(chunk: bytes, times: int, *, zlib_wrapper: bool) -> tuple[bytes, int]:
    """``chunk`` repeated ``times`` times, deflated without deflating it all; and the CRC-32 of the result.

    With ``zlib_wrapper`` the stream has the zlib header and Adler-32 trailer
    (PDF's FlateDecode); without, it is raw deflate (a zip member).
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush()
    crc, adler = 0, 1
    for _ in range(times):
        crc = zlib.crc32(chunk, crc)
        if zlib_wrapper:
            adler = zlib.adler32(chunk, adler)
    body = block * times + tail
    if zlib_wrapper:
        body = b"\x78\xda" + body + adler.to_bytes(4, "big")
    return body, crc


def make_pdf_stream_bomb(inflated_mb: int = 1200) -> bytes:
    """A one-page PDF whose content stream (FlateDecode) inflates to ``inflated_mb`` MiB of text operators.

    Each MiB is one text operator and blank space: about 1 MB on disk per
    GiB. PDFium inflates the whole stream before parsing it: without a bound,
    about twice the inflated size.
    """
    op = b"BT /F1 1 Tf 1 1 Td (bomb) Tj ET\n"
    chunk = op + b" " * (MiB - len(op) - 1) + b"\n"
    stream, _ = _deflate_repeated(chunk, inflated_mb * MiB // len(chunk), zlib_wrapper=True)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /Kids [5 0 R] >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Resources << /Font << /F1 3 0 R >> >>"
        b" /Contents 4 0 R >>",
    ]
    return _pdf_objects(objects)


def make_many_fonts_pdf(fonts: int = 10_000) -> bytes:
    """A one-page PDF whose page uses ``fonts`` distinct font objects, each once."""
    first_font = 5
    names = b" ".join(b"/F%d %d 0 R" % (i, first_font + i) for i in range(fonts))
    content = b"".join(b"BT /F%d 8 Tf 10 %d Td (font %d) Tj ET\n" % (i, 10 + i % 80, i) for i in range(fonts))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Resources << /Font << "
        + names
        + b" >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    bases = (b"Helvetica", b"Times-Roman", b"Courier", b"Helvetica-Bold", b"Times-Italic")
    objects += [
        b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /FirstChar 32 /LastChar 126 /Widths [%s] >>"
        % (bases[i % len(bases)], b" ".join(b"%d" % (500 + (i + c) % 97) for c in range(95)))
        for i in range(fonts)
    ]
    return _pdf_objects(objects)


def _repeated_member(head: bytes, chunk: bytes, repeats: int, tail: bytes) -> tuple[bytes, int, int]:
    """A raw-deflate zip member ``head + chunk * repeats + tail``: its data, CRC-32 and size."""
    head_z = zlib.compressobj(9, zlib.DEFLATED, -15)
    middle_z = zlib.compressobj(9, zlib.DEFLATED, -15)
    tail_z = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = middle_z.compress(chunk) + middle_z.flush(zlib.Z_FULL_FLUSH)
    data = (
        head_z.compress(head)
        + head_z.flush(zlib.Z_FULL_FLUSH)
        + block * repeats
        + tail_z.compress(tail)
        + tail_z.flush()
    )
    crc = zlib.crc32(head)
    for _ in range(repeats):
        crc = zlib.crc32(chunk, crc)
    return data, zlib.crc32(tail, crc), len(head) + len(chunk) * repeats + len(tail)


def _xlsx_with_sheet(sheet_xml_parts: list[tuple[str, bytes, int, int]]) -> bytes:
    """A small valid XLSX (one sheet, one shared string) whose members named in ``sheet_xml_parts`` are replaced."""
    import io
    import zipfile

    base = make_xlsx({"Sheet1": [["爆弾"]]})
    replaced = {name for name, *_ in sheet_xml_parts}
    members: list[tuple[str, bytes, int, int]] = []
    with zipfile.ZipFile(io.BytesIO(base)) as zf:
        for info in zf.infolist():
            if info.filename in replaced:
                continue
            content = zf.read(info)
            compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
            members.append((info.filename, compressor.compress(content) + compressor.flush(), info.CRC, len(content)))
    return _deflated_zip(members + sheet_xml_parts)


def make_xlsx_many_cells(cells: int = 10_000_000, columns: int = 100) -> bytes:
    """An XLSX whose one sheet holds ``cells`` numeric cells (``columns`` a row), within the zip ratio limit.

    Rows and cells carry no ``r`` reference (calamine places them one after
    another), and each value is a random digit, so the sheet XML compresses
    about 20:1, like a real numeric sheet, not 1000:1 like a zip bomb:
    10 M cells are ~150 MB of XML in a ~9 MB file.
    """
    rng = random.Random(19)  # noqa: S311 - sample data, not secrets
    row_count = max(1, cells // columns)
    rows_per_chunk = max(1, MiB // (columns * 15 + 11))
    chunk = b"".join(
        b"<row>" + b"".join(b"<c><v>%d</v></c>" % rng.randrange(10) for _ in range(columns)) + b"</row>"
        for _ in range(rows_per_chunk)
    )
    repeats, rest = divmod(row_count, rows_per_chunk)
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    )
    row_bytes = len(chunk) // rows_per_chunk  # every row has the same length (one digit a cell)
    tail = chunk[: row_bytes * rest] + b"</sheetData></worksheet>"
    data, crc, size = _repeated_member(head, chunk, repeats, tail)
    return _xlsx_with_sheet([("xl/worksheets/sheet1.xml", data, crc, size)])


def make_xlsx_shared_strings_bomb(inflated_mb: int = 1024, *, honest: bool = True) -> bytes:
    """An XLSX whose shared-strings part inflates to ``inflated_mb`` MiB of distinct-looking strings.

    ``honest``: the zip directory declares the real size (the directory check
    sees it). Otherwise it declares 1 MiB and the data runs on: only a reader
    that trusts the deflate stream over the directory inflates it all.
    """
    item = b"<si><t>shared string bomb</t></si>"
    chunk = item * (MiB // len(item))
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    )
    tail = b"</sst>"
    data, crc, size = _repeated_member(head, chunk, inflated_mb * MiB // len(chunk), tail)
    if not honest:
        size = MiB
    return _xlsx_with_sheet([("xl/sharedStrings.xml", data, crc, size)])


def make_image_bomb_pdf(dpi: int = 2400, page_inches: tuple[float, float] = (8.27, 11.69)) -> bytes:
    """A one-page "scan" PDF holding one RGB image at ``dpi`` (A4 at 2,400 dpi: 557 Mpx, 1.6 GiB decoded).

    The image is white (FlateDecode of 0xFF rows): about 1.6 MB on disk.
    """
    width, height = round(page_inches[0] * dpi), round(page_inches[1] * dpi)
    stream, _ = _deflate_repeated(b"\xff" * (width * 3), height, zlib_wrapper=True)
    image = (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB"
        b" /BitsPerComponent 8 /Filter /FlateDecode >>" % (width, height)
    )
    return image_page_pdf(image, stream, page_inches[0] * 72, page_inches[1] * 72)


def make_ccitt_bomb_pdf(width: int = 100_000, height: int = 100_000) -> bytes:
    """A one-page PDF holding a CCITT Group 4 image declaring ``width`` x ``height`` 1-bit pixels (13 KB on disk).

    An all-white Group 4 row coded against an all-white reference row is a single ``V0`` code
    (the bit 1), so the data is ``height`` one-bits and the end-of-block code: a 100,000 x
    100,000 page (10 gigapixels) costs 12.5 KB, and PDFium decodes it whole to render it.
    """
    rows = b"\xff" * (height // 8) + bytes([(0xFF << (8 - height % 8)) & 0xFF] if height % 8 else [])
    eofb = bytes([0x00, 0x10, 0x01])  # 000000000001 000000000001
    image = (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 1"
        b" /Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns %d /Rows %d /BlackIs1 false >> >>"
        % (width, height, width, height)
    )
    return image_page_pdf(image, rows + eofb, 595.0, 842.0)


def make_png_bomb(width: int = 17_000, height: int = 17_600, mode: str = "RGBA") -> bytes:
    """A PNG of ``width`` x ``height`` (RGBA: 299 Mpx, 1.1 GiB decoded) of about 1.2 MB, under Pillow's guard.

    Rows of one colour, deflated once and repeated (see ``_deflate_repeated``).
    """
    import struct

    channels = {"RGBA": 4, "RGB": 3, "L": 1}[mode]
    color_type = {"RGBA": 6, "RGB": 2, "L": 0}[mode]
    row = b"\x00" + b"\xff" * (width * channels)  # filter type 0, white
    data, _ = _deflate_repeated(row, height, zlib_wrapper=True)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
