"""Outlook ``.msg``: a small reader of [MS-OXMSG] on olefile (extract-msg is GPL-3).

A .msg is an OLE2 compound file: every MAPI property of the message is
either a fixed-size value in the ``__properties_version1.0`` stream
(16-byte entries: type, id, flags, value) or a stream
``__substg1.0_IIIITTTT`` (id, type: 001F UTF-16LE string, 001E 8-bit
string in the message's code page, 0102 binary). Attachments are storages
``__attach_version1.0_#N`` (3707 long file name, 3701 data; an attached
message is a storage ``__substg1.0_3701000D`` holding a message of its own);
recipients ``__recip_version1.0_#N``.

Read: subject (0037, the title), sender name and address (0C1A, 0C1F/0065),
To and Cc display lines (0E04, 0E03), the submit or delivery time
(0039/0E06), the body: plain (1000), else HTML (1013) as visible text,
else the compressed RTF (1009, [MS-OXRTFCP]) through the RTF reader;
attachment names and the text of attachments in formats docindex reads,
embedded messages included (``dispatch.MAX_NESTING`` levels). 8-bit strings
are decoded in PidTagInternetCodepage (3FDE) or PidTagMessageCodepage
(3FFD), cp1252 when neither is set.
"""

from __future__ import annotations

import contextlib
import struct
from datetime import datetime

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ole import OleFile, codepage_codec, filetime

_PROPS = "__properties_version1.0"
PT_LONG = 0x0003
PT_SYSTIME = 0x0040
SUBJECT, BODY, HTML, RTF = 0x0037, 0x1000, 0x1013, 0x1009
SENDER_NAME, SENDER_EMAIL, SENT_REPRESENTING_EMAIL = 0x0C1A, 0x0C1F, 0x0065
DISPLAY_TO, DISPLAY_CC = 0x0E04, 0x0E03
SUBMIT_TIME, DELIVERY_TIME = 0x0039, 0x0E06
INTERNET_CODEPAGE, MESSAGE_CODEPAGE = 0x3FDE, 0x3FFD
ATTACH_LONG_NAME, ATTACH_NAME, ATTACH_DISPLAY, ATTACH_DATA = 0x3707, 0x3704, 0x3001, 0x3701
# Each string or body stream read whole: bodies of real mails are far smaller.
_MAX_STRING_BYTES = 32 * 1024 * 1024
_MAX_ATTACHMENTS = 1000


class _Message:
    """One message (the file itself or an attached one) inside the compound file."""

    def __init__(self, ole: OleFile, prefix: str, header_bytes: int) -> None:
        self.ole = ole
        self.prefix = prefix
        self.fixed: dict[int, tuple[int, bytes]] = {}
        path = prefix + _PROPS
        if ole.has(path):
            raw = ole.read(path, 16 * 100_000 + header_bytes)
            for pos in range(header_bytes, len(raw) - 15, 16):
                ptype, pid = struct.unpack_from("<HH", raw, pos)
                self.fixed[pid] = (ptype, raw[pos + 8 : pos + 16])
        codepage = self.long(INTERNET_CODEPAGE) or self.long(MESSAGE_CODEPAGE)
        self.codec = codepage_codec(codepage) if codepage else "cp1252"

    def long(self, pid: int) -> int | None:
        entry = self.fixed.get(pid)
        if entry is None or entry[0] != PT_LONG:
            return None
        return int(struct.unpack_from("<I", entry[1])[0])

    def time(self, pid: int) -> datetime | None:
        entry = self.fixed.get(pid)
        if entry is None or entry[0] != PT_SYSTIME:
            return None
        return filetime(entry[1])

    def string(self, pid: int) -> str:
        """A string property (UTF-16 or 8-bit), "" when absent."""
        base = f"{self.prefix}__substg1.0_{pid:04X}"
        if self.ole.has(base + "001F"):
            return self.ole.read(base + "001F", _MAX_STRING_BYTES).decode("utf-16-le", "replace").rstrip("\x00")
        if self.ole.has(base + "001E"):
            return self.ole.read(base + "001E", _MAX_STRING_BYTES).decode(self.codec, "replace").rstrip("\x00")
        return ""

    def binary(self, pid: int) -> bytes:
        path = f"{self.prefix}__substg1.0_{pid:04X}0102"
        return self.ole.read(path, _MAX_STRING_BYTES) if self.ole.has(path) else b""

    def attachments(self) -> list[str]:
        parent = self.prefix.rstrip("/")
        found = [p for p in self.ole.storages(parent) if p.rpartition("/")[2].startswith("__attach_version1.0_#")]
        if len(found) > _MAX_ATTACHMENTS:
            raise ExtractionError("corrupt", f"{len(found)} attachments (limit {_MAX_ATTACHMENTS})")
        return found


def extract_msg(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Headers, body and attachments of an Outlook message into ``ctx``."""
    with OleFile(data) as ole:
        _read_message(_Message(ole, "", 32), ctx, depth=ctx.depth, top=True)


def _read_message(message: _Message, ctx: ExtractionContext, *, depth: int, top: bool) -> bool:
    subject = message.string(SUBJECT).strip()
    sender = message.string(SENDER_NAME).strip()
    address = (message.string(SENDER_EMAIL) or message.string(SENT_REPRESENTING_EMAIL)).strip()
    if address and address not in sender and "@" in address:
        sender = f"{sender} <{address}>" if sender else address
    when = message.time(SUBMIT_TIME) or message.time(DELIVERY_TIME)
    if top:
        ctx.title = subject or None
        ctx.author = sender or None
        ctx.set_dates(when, None)
    lines = [
        f"From: {sender}" if sender else "",
        f"To: {message.string(DISPLAY_TO).strip()}",
        f"Cc: {message.string(DISPLAY_CC).strip()}",
        f"Date: {when.isoformat()}" if when else "",
        f"Subject: {subject}" if subject else "",
    ]
    header = "\n".join(line for line in lines if line and not line.endswith(": "))
    if top:
        ctx.start_page("part", 1)  # the message itself; each attachment of it is the next part
    if not ctx.text.append(header + "\n\n"):
        return False
    if not ctx.text.append(_body(message) + "\n"):
        return False
    for storage in message.attachments():
        ctx.check_deadline()
        if not _attachment(message, storage + "/", ctx, depth):
            return False
    return True


def _body(message: _Message) -> str:
    body = message.string(BODY)
    if body.strip():
        return body
    html = message.binary(HTML)
    if html:
        from docindex.extract.encoding import decode
        from docindex.extract.html import declared_charset, html_text

        return html_text(decode(html, declared_charset(html) or message.codec).text)[1]
    html_str = message.string(HTML)
    if html_str:
        from docindex.extract.html import html_text

        return html_text(html_str)[1]
    rtf = message.binary(RTF)
    if rtf:
        return rtf_text(decompress_rtf(rtf))
    return ""


def _attachment(message: _Message, prefix: str, ctx: ExtractionContext, depth: int) -> bool:
    from docindex.extract.dispatch import MAX_NESTING, extract_nested

    attachment = _Message(message.ole, prefix, 8)
    attachment.codec = message.codec
    name = (
        attachment.string(ATTACH_LONG_NAME) or attachment.string(ATTACH_NAME) or attachment.string(ATTACH_DISPLAY)
    ).strip()
    if depth == ctx.depth:  # an attachment of the file's own message, not of a message attached to it
        ctx.start_page("part", len(ctx.page_marks) + 1, name or None)
    if not ctx.text.append(f"\n[{name or 'attachment'}]\n"):
        return False
    embedded = f"{prefix}__substg1.0_{ATTACH_DATA:04X}000D/"
    if any(p.startswith(embedded) for p in message.ole.streams(embedded)):
        if depth + 1 > MAX_NESTING:
            return True
        return _read_message(_Message(message.ole, embedded, 24), ctx, depth=depth + 1, top=False)
    data = attachment.binary(ATTACH_DATA)
    if not data:
        return True
    child = extract_nested(data, name or "attachment", ctx)
    if child is not None and child.text:
        return ctx.text.append(child.text + "\n")
    return not ctx.text.full


def rtf_text(rtf: bytes) -> str:
    """Plain text of an RTF body (HTML encapsulated in RTF comes out as its visible text and tags)."""
    from docindex.extract.base import Deadline, ExtractionLimits
    from docindex.extract.rtf import extract_rtf

    child = ExtractionContext(ExtractionLimits(), Deadline(30))
    with contextlib.suppress(ExtractionError):
        extract_rtf(rtf, FileType("rtf", "application/rtf"), child)
    return child.text.getvalue()


_RTF_PREBUF = (
    b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript "
    b"\\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par "
    b"\\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx"
)
# Compressed RTF of a real body is a few hundred KB at most; the output is bounded too.
_MAX_RTF_BYTES = 64 * 1024 * 1024


def decompress_rtf(data: bytes) -> bytes:
    """Undo [MS-OXRTFCP] compression (``LZFu``); ``MELA`` is stored uncompressed."""
    if len(data) < 16:
        return b""
    comp_size, raw_size, comp_type = struct.unpack_from("<II4s", data, 0)
    if comp_type == b"MELA":
        return data[16 : 16 + min(raw_size, _MAX_RTF_BYTES)]
    if comp_type != b"LZFu":
        return b""
    limit = min(raw_size, _MAX_RTF_BYTES)
    window = bytearray(_RTF_PREBUF.ljust(4096, b"\x00"))
    write = len(_RTF_PREBUF)
    out = bytearray()
    pos, end = 16, min(len(data), comp_size + 4)
    while pos < end and len(out) < limit:
        flags = data[pos]
        pos += 1
        for bit in range(8):
            if pos >= end or len(out) >= limit:
                break
            if flags & (1 << bit):
                if pos + 2 > end:
                    return bytes(out)
                (ref,) = struct.unpack_from(">H", data, pos)
                pos += 2
                offset, length = ref >> 4, (ref & 0xF) + 2
                if offset == write:
                    return bytes(out)  # the end marker
                for i in range(length):
                    byte = window[(offset + i) % 4096]
                    out.append(byte)
                    window[write] = byte
                    write = (write + 1) % 4096
            else:
                byte = data[pos]
                pos += 1
                out.append(byte)
                window[write] = byte
                write = (write + 1) % 4096
    return bytes(out)
