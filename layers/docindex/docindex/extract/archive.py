"""Zip archives: every member's name, and the text of members docindex reads.

The archive is the document; its content is one line per member (its path)
followed by the member's text when its format has an extractor (Office,
PDF, mail, text, nested archives up to ``dispatch.MAX_NESTING`` levels).

Names: a zip written by Windows' Explorer or old Japanese tools stores
names in CP932 without the UTF-8 flag (bit 11); ``zipfile`` then decodes
them as CP437 (``ÉvÉçÉWÉFÉNÉg``). Such names are re-encoded to their bytes
and decoded as UTF-8 if valid, else as CP932, else by the cascade.

Bounds, on top of :class:`SafeZip`'s directory checks (total declared size,
ratio, member count, encryption) and its byte budget: members larger than
``MAX_MEMBER_BYTES`` or beyond ``MAX_EXTRACTED_MEMBERS`` are listed by name
only; an encrypted member is listed, not read, and does not make the
whole archive ``encrypted``.
"""

from __future__ import annotations

import zipfile

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.safezip import MAX_MEMBERS, SafeZip

MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_EXTRACTED_MEMBERS = 1000
_UTF8_FLAG = 0x800


def member_name(info: zipfile.ZipInfo) -> str:
    """The member's path as its writer meant it (CP932 names without the UTF-8 flag recovered)."""
    if info.flag_bits & _UTF8_FLAG:
        return info.filename
    try:
        raw = info.filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    if raw.isascii():
        return info.filename
    for codec in ("utf-8", "cp932"):
        try:
            return raw.decode(codec)
        except UnicodeDecodeError:
            continue
    from docindex.extract.encoding import decode

    return decode(raw).text


def extract_archive(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Member names and the text of readable members into ``ctx``."""
    from docindex.extract.dispatch import extract_nested, has_extractor

    try:
        zf = SafeZip(data, ctx.limits)
    except ExtractionError as exc:
        if exc.code != "encrypted":
            raise
        # Encrypted members: the names are still readable and worth indexing.
        _names_only(data, ctx)
        return
    with zf:
        infos = zf.infos()
        ctx.page_count = None
        extracted = 0
        for info in infos:
            if info.is_dir():
                continue
            name = member_name(info)
            if not ctx.text.append(name + "\n"):
                return
            if info.file_size == 0 or info.file_size > MAX_MEMBER_BYTES or extracted >= MAX_EXTRACTED_MEMBERS:
                continue
            ctx.check_deadline()
            extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
            if extension in _NOT_TEXT:
                continue
            member = zf.read(info.filename, MAX_MEMBER_BYTES)
            extracted += 1
            child = extract_nested(member, name, ctx)
            readable = child is not None and child.text and has_extractor(child.kind)
            if readable and child is not None and not ctx.text.append(child.text + "\n\n"):
                return


# Members not worth inflating: media and executables have no text for us.
_NOT_TEXT = frozenset(
    {"jpg", "jpeg", "png", "gif", "bmp", "tif", "tiff", "mp3", "mp4", "mov", "avi", "wav", "exe", "dll", "iso"}
)


def _names_only(data: bytes, ctx: ExtractionContext) -> None:
    import io

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()[:MAX_MEMBERS]
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise ExtractionError("corrupt", f"not a readable zip archive: {exc}") from None
    for info in infos:
        if not info.is_dir() and not ctx.text.append(member_name(info) + "\n"):
            return
