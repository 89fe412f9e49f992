"""PowerPoint 97-2003 ``.ppt``: text atoms of the slides and notes, in slide order ([MS-PPT]).

The ``PowerPoint Document`` stream is a tree of records (8-byte header:
version/instance, type, length; version 0xF marks a container). The live
objects are found the way PowerPoint does: the ``Current User`` stream
points at the last ``UserEditAtom``; the chain of edits gives the persist
directory (persist id -> stream offset), newest edit first, so text an
incremental save replaced is not read. The document container's
``SlideListWithText`` lists the slides in order (with the placeholder
text PowerPoint keeps there) and the notes; each slide's own container
holds the text of its other shapes. Text comes from ``TextCharsAtom``
(UTF-16LE) and ``TextBytesAtom`` (8-bit: the low byte of UTF-16).

If that chain is damaged, every text atom outside the masters and handouts
is read in stream order instead. Bounds: record nesting depth, record count,
every length checked against its parent, ``max_chars`` and the deadline.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ole import OleFile

RT_DOCUMENT = 0x03E8
RT_SLIDE = 0x03EE
RT_NOTES = 0x03F0
RT_SLIDE_PERSIST = 0x03F3
RT_MAIN_MASTER = 0x03F8
RT_HANDOUT = 0x0FC9
RT_SLIDE_LIST = 0x0FF0
RT_USER_EDIT = 0x0FF5
RT_PERSIST_DIRECTORY = 0x1772
RT_TEXT_CHARS = 0x0FA0
RT_TEXT_BYTES = 0x0FA8
_MAX_DEPTH = 32
_MAX_RECORDS = 2_000_000
_MAX_EDITS = 10_000


class _Budget:
    def __init__(self) -> None:
        self.records = 0

    def charge(self) -> None:
        self.records += 1
        if self.records > _MAX_RECORDS:
            raise ExtractionError("corrupt", f"more than {_MAX_RECORDS} records")


def records(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(instance, type, body start, body end) of the records between ``start`` and ``end``."""
    pos = start
    while pos + 8 <= end:
        ver_inst, rec_type, length = struct.unpack_from("<HHI", buf, pos)
        body = pos + 8
        if body + length > end:
            # A record running past its parent: the file is truncated or damaged.
            raise ExtractionError("corrupt", f"record {rec_type:#06x} at {pos} runs past its container")
        yield ver_inst, rec_type, body, body + length
        pos = body + length


def _is_container(ver_inst: int) -> bool:
    return ver_inst & 0x000F == 0x000F


def _atom_text(buf: bytes, rec_type: int, body: int, end: int) -> str:
    raw = buf[body:end]
    if rec_type == RT_TEXT_CHARS:
        return raw.decode("utf-16-le", "replace")
    return raw.decode("latin-1")


def text_atoms(
    buf: bytes, start: int, end: int, budget: _Budget, *, depth: int = 0, skip: frozenset[int] = frozenset()
) -> Iterator[str]:
    """Text of every text atom under the records between ``start`` and ``end``, in stream order."""
    if depth > _MAX_DEPTH:
        raise ExtractionError("corrupt", "records nested too deeply")
    for ver_inst, rec_type, body, rec_end in records(buf, start, end):
        budget.charge()
        if rec_type in skip:
            continue
        if rec_type == RT_SLIDE_LIST and ver_inst >> 4 == 1:
            continue  # master slides' placeholder text ("Click to edit...")
        if rec_type in (RT_TEXT_CHARS, RT_TEXT_BYTES):
            yield _atom_text(buf, rec_type, body, rec_end)
        elif _is_container(ver_inst):
            yield from text_atoms(buf, body, rec_end, budget, depth=depth + 1, skip=skip)


def extract_ppt(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Slide text (placeholders and other shapes) and notes, slide by slide, into ``ctx``."""
    with OleFile(data) as ole:
        if not ole.has("PowerPoint Document"):
            raise ExtractionError("corrupt", "no PowerPoint Document stream")
        if ole.has("EncryptedSummary"):
            raise ExtractionError("encrypted", "the presentation is password-protected")
        meta = ole.summary()
        ctx.title = meta.get("title")
        ctx.author = meta.get("author")
        ctx.last_saved_by = meta.get("last_saved_by")
        ctx.set_dates(meta.get("create_time"), meta.get("last_saved_time"))
        stream = ole.read("PowerPoint Document")
        current = ole.read("Current User", 4096) if ole.has("Current User") else b""
    budget = _Budget()
    try:
        slides = _slides_in_order(stream, current, budget)
    except (ExtractionError, struct.error, KeyError, IndexError):
        slides = None
    if slides is None:
        # No usable edit chain: every non-master text atom, in stream order.
        for text in text_atoms(stream, 0, len(stream), _Budget(), skip=frozenset({RT_MAIN_MASTER, RT_HANDOUT})):
            if not ctx.text.append(text + "\n"):
                return
        return
    ctx.page_count = len(slides)
    for index, parts in enumerate(slides):
        if index >= ctx.limits.max_pages:
            ctx.drop(f"slides {index + 1:,}-{len(slides):,}", f"more than MAX_PAGES ({ctx.limits.max_pages:,})")
            return
        if index % 50 == 0:
            ctx.check_deadline()
        ctx.start_page("slide", index + 1)
        if not ctx.text.append("\n".join(p for p in parts if p.strip()) + "\n\n"):
            return


def _persist_directory(stream: bytes, current: bytes) -> tuple[dict[int, int], int]:
    """persist id -> offset of the live objects, and the document's persist id."""
    if len(current) < 20:
        raise ExtractionError("corrupt", "no Current User atom")
    (edit_offset,) = struct.unpack_from("<I", current, 16)
    offsets: dict[int, int] = {}
    doc_ref = None
    seen: set[int] = set()
    for _ in range(_MAX_EDITS):
        if edit_offset in seen or edit_offset + 8 + 28 > len(stream):
            break
        seen.add(edit_offset)
        _, rec_type, length = struct.unpack_from("<HHI", stream, edit_offset)
        if rec_type != RT_USER_EDIT or length < 28:
            raise ExtractionError("corrupt", "the edit chain does not lead to a UserEditAtom")
        last_edit, dir_offset, doc_persist = struct.unpack_from("<III", stream, edit_offset + 8 + 8)
        if doc_ref is None:
            doc_ref = doc_persist
        _read_directory(stream, dir_offset, offsets)
        if last_edit == 0:
            break
        edit_offset = last_edit
    if doc_ref is None:
        raise ExtractionError("corrupt", "no UserEditAtom")
    return offsets, doc_ref


def _read_directory(stream: bytes, offset: int, offsets: dict[int, int]) -> None:
    _, rec_type, length = struct.unpack_from("<HHI", stream, offset)
    if rec_type != RT_PERSIST_DIRECTORY or offset + 8 + length > len(stream):
        raise ExtractionError("corrupt", "bad persist directory")
    pos, end = offset + 8, offset + 8 + length
    while pos + 4 <= end:
        (head,) = struct.unpack_from("<I", stream, pos)
        first, count = head & 0xFFFFF, head >> 20
        pos += 4
        if pos + 4 * count > end:
            raise ExtractionError("corrupt", "persist directory entry past its end")
        for i, value in enumerate(struct.unpack_from(f"<{count}I", stream, pos)):
            offsets.setdefault(first + i, value)  # newest edit first: keep what it said
        pos += 4 * count


def _container(stream: bytes, offset: int, expected: int) -> tuple[int, int]:
    if offset + 8 > len(stream):
        raise ExtractionError("corrupt", "persist offset outside the stream")
    _, rec_type, length = struct.unpack_from("<HHI", stream, offset)
    if rec_type != expected or offset + 8 + length > len(stream):
        raise ExtractionError("corrupt", f"persist object is {rec_type:#06x}, expected {expected:#06x}")
    return offset + 8, offset + 8 + length


def _slides_in_order(stream: bytes, current: bytes, budget: _Budget) -> list[list[str]] | None:
    offsets, doc_ref = _persist_directory(stream, current)
    doc_start, doc_end = _container(stream, offsets[doc_ref], RT_DOCUMENT)
    slides: list[tuple[int, int | None, list[str]]] = []
    notes: list[int] = []
    for ver_inst, rec_type, body, end in records(stream, doc_start, doc_end):
        budget.charge()
        if rec_type != RT_SLIDE_LIST:
            continue
        instance = ver_inst >> 4
        if instance not in (0, 2):
            continue
        for _, child_type, child_body, child_end in records(stream, body, end):
            budget.charge()
            if child_type == RT_SLIDE_PERSIST:
                (ref,) = struct.unpack_from("<I", stream, child_body)
                if instance == 0:
                    # SlidePersistAtom: persistIdRef, flags, cTexts, slideId.
                    slide_id = (
                        struct.unpack_from("<I", stream, child_body + 12)[0] if child_end - child_body >= 16 else None
                    )
                    slides.append((ref, slide_id, []))
                else:
                    notes.append(ref)
            elif child_type in (RT_TEXT_CHARS, RT_TEXT_BYTES) and instance == 0 and slides:
                slides[-1][2].append(_atom_text(stream, child_type, child_body, child_end))
    if not slides:
        return None
    out = []
    notes_by_slide: dict[int, list[str]] = {}
    for ref in notes:
        start, end = _container(stream, offsets[ref], RT_NOTES)
        # NotesAtom: slideIdRef (the slide's id, not its persist id) first.
        texts = list(text_atoms(stream, start, end, budget))
        slide_id = _first_atom_u32(stream, start, end, 0x03F1)
        notes_by_slide.setdefault(slide_id if slide_id is not None else -1, []).extend(texts)
    for ref, slide_id, placeholder_text in slides:
        start, end = _container(stream, offsets[ref], RT_SLIDE)
        parts = placeholder_text + list(text_atoms(stream, start, end, budget))
        parts += notes_by_slide.pop(slide_id, []) if slide_id is not None else []
        out.append(parts)
    for leftover in notes_by_slide.values():
        out[-1] += leftover
    return out


def _first_atom_u32(stream: bytes, start: int, end: int, rec_type: int) -> int | None:
    for _, child_type, body, child_end in records(stream, start, end):
        if child_type == rec_type and child_end - body >= 4:
            return int(struct.unpack_from("<I", stream, body)[0])
    return None
