"""Word 97-2003 ``.doc`` (and Word 6/95): a small reader of the published [MS-DOC] format.

The text of a Word binary file is one character stream addressed by
character positions (CPs): the main text, then the footnotes, headers and
footers, (macros), comments, endnotes, text boxes and header text boxes,
each ``ccp*`` characters long as the FIB says. The piece table (the CLX in
the table stream, ``fcClx``/``lcbClx``) maps CP ranges to byte offsets in
the WordDocument stream: a piece is UTF-16LE, or 8-bit ("compressed",
cp1252 per the spec) when bit 30 of its offset is set. Word 6/95 files keep
the piece table (when there is one) in the WordDocument stream and store
8-bit text in the code page of the document's language (cp932 for
Japanese).

Special characters are mapped to what a reader sees: paragraph and cell
marks become line ends and tabs; field codes (between 0x13 and 0x14) are
dropped and field results kept; anchors of pictures, footnote and comment
references vanish. Title and author come from the summary information.

Bounds: the piece count is limited by ``lcbClx``, every piece by the stream
it points into and the text by ``max_chars``; CPs that go backwards or
pieces outside their stream are ``corrupt``. Encrypted and XOR-obfuscated
files are ``encrypted``. No GPL reader (antiword, catdoc, wvWare) was
consulted: this follows the specification.
"""

from __future__ import annotations

import re
import struct

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ole import OleFile, codepage_codec

_MAGIC = 0xA5EC
_WORD97_NFIB = 0x00C1  # Word 97 and later; below is Word 6/95 (0x0065..0x0068)
_F_COMPLEX = 0x0004
_F_ENCRYPTED = 0x0100
_F_WHICH_TABLE = 0x0200
_F_OBFUSCATED = 0x8000
# Order of the sub-documents in the CP stream (FibRgLw97 ccpText.. ccpHdrTxbx).
_STORIES = ("main", "footnotes", "headers", "macros", "comments", "endnotes", "textboxes", "header_textboxes")
# Output order: what a reader looks at first.
_OUTPUT_ORDER = ("main", "textboxes", "footnotes", "endnotes", "comments", "headers", "header_textboxes")
# A CLX is a few KB even for a 1000-page document; this bounds what is parsed.
_MAX_CLX_BYTES = 16 * 1024 * 1024
_MAX_PRC = 100_000
# Language id -> code page for Word 6/95 8-bit text.
_LID_CODEPAGE = {0x0411: 932, 0x0404: 950, 0x0804: 936, 0x0412: 949, 0x0419: 1251, 0x0408: 1253, 0x041F: 1254}
_FIELD_MARKS = re.compile("[\x13\x14\x15]")
_SPECIAL = str.maketrans(
    {
        "\r": "\n",
        "\x07": "\t",  # cell and row end marks
        "\x0b": "\n",  # line break
        "\x0c": "\n",  # page / section break
        "\x0e": "\n",  # column break
        "\x1e": "-",  # non-breaking hyphen
        "\x1f": None,  # optional hyphen
        "\x01": None,  # picture anchor
        "\x02": None,  # auto-numbered footnote reference
        "\x03": None,  # footnote separator
        "\x04": None,  # footnote continuation
        "\x05": None,  # comment anchor
        "\x08": None,  # drawn object anchor
        "\xa0": " ",
    }
)


def extract_doc(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """The text of every story of a Word binary document, its title and author, into ``ctx``."""
    with OleFile(data) as ole:
        if not ole.has("WordDocument"):
            raise ExtractionError("corrupt", "no WordDocument stream")
        meta = ole.summary()
        ctx.title = meta.get("title")
        ctx.author = meta.get("author")
        ctx.last_saved_by = meta.get("last_saved_by")
        ctx.set_dates(meta.get("create_time"), meta.get("last_saved_time"))
        word = ole.read("WordDocument")
        if len(word) < 0x200:
            raise ExtractionError("corrupt", f"WordDocument stream of {len(word)} bytes is shorter than a FIB")
        ident, nfib = struct.unpack_from("<HH", word, 0)
        if ident != _MAGIC:
            raise ExtractionError("corrupt", f"FIB magic {ident:#06x}, not a Word document")
        (flags,) = struct.unpack_from("<H", word, 0x0A)
        if flags & (_F_ENCRYPTED | _F_OBFUSCATED):
            raise ExtractionError("encrypted", "the document is password-protected")
        stories = _word97(ole, word, flags) if nfib >= _WORD97_NFIB else _word6(word, flags)
    by_name = dict(stories)
    for name in _OUTPUT_ORDER:
        text = by_name.get(name, "")
        if not text.strip():
            continue
        ctx.check_deadline()
        if not ctx.text.append(text.rstrip() + "\n\n"):
            return


def _word97(ole: OleFile, word: bytes, flags: int) -> list[tuple[str, str]]:
    table_name = "1Table" if flags & _F_WHICH_TABLE else "0Table"
    if not ole.has(table_name):
        raise ExtractionError("corrupt", f"the FIB names a {table_name} stream that does not exist")
    pos = 32  # FibBase
    (csw,) = struct.unpack_from("<H", word, pos)
    pos += 2 + csw * 2
    (cslw,) = struct.unpack_from("<H", word, pos)
    lw_at = pos + 2
    pos = lw_at + cslw * 4
    if cslw < 11 or pos + 2 > len(word):
        raise ExtractionError("corrupt", f"FIB with {cslw} longs")
    ccps = list(struct.unpack_from("<8i", word, lw_at + 3 * 4))
    (cb_fc_lcb,) = struct.unpack_from("<H", word, pos)
    fc_at = pos + 2
    if cb_fc_lcb < 34 or fc_at + 34 * 8 > len(word):
        raise ExtractionError("corrupt", f"FIB with {cb_fc_lcb} offset pairs")
    fc_clx, lcb_clx = struct.unpack_from("<II", word, fc_at + 33 * 8)
    table = ole.read(table_name)
    if lcb_clx == 0 or lcb_clx > _MAX_CLX_BYTES or fc_clx + lcb_clx > len(table):
        raise ExtractionError("corrupt", f"CLX at {fc_clx}+{lcb_clx} outside the {len(table)}-byte table stream")
    pieces = _piece_table(table[fc_clx : fc_clx + lcb_clx])
    return _split(_read_pieces(word, pieces, eight_bit="cp1252", unicode_ok=True), ccps)


def _word6(word: bytes, flags: int) -> list[tuple[str, str]]:
    """Word 6/95: 8-bit text in the language's code page; a piece table only when fast-saved."""
    (lid,) = struct.unpack_from("<H", word, 0x06)
    codec = codepage_codec(_LID_CODEPAGE.get(lid, 1252))
    fc_min, fc_mac = struct.unpack_from("<II", word, 0x18)
    ccps = list(struct.unpack_from("<8i", word, 0x34))
    if flags & _F_COMPLEX:
        fc_clx, lcb_clx = struct.unpack_from("<II", word, 0x160)
        if lcb_clx == 0 or lcb_clx > _MAX_CLX_BYTES or fc_clx + lcb_clx > len(word):
            raise ExtractionError("corrupt", "Word 6/95 piece table outside the document")
        pieces = _piece_table(word[fc_clx : fc_clx + lcb_clx], word6=True)
        return _split(_read_pieces(word, pieces, eight_bit=codec, unicode_ok=False), ccps)
    if not fc_min <= fc_mac <= len(word):
        raise ExtractionError("corrupt", f"text at {fc_min}..{fc_mac} outside the WordDocument stream")
    return _split(word[fc_min:fc_mac].decode(codec, "replace"), ccps)


def _piece_table(clx: bytes, *, word6: bool = False) -> list[tuple[int, int, int, bool]]:
    """(cp start, cp end, byte offset, 8-bit) of every piece, from a CLX."""
    pos = 0
    for _ in range(_MAX_PRC):
        if pos >= len(clx):
            break
        kind = clx[pos]
        if kind == 0x01:  # Prc: formatting, skipped
            if pos + 3 > len(clx):
                break
            (cb,) = struct.unpack_from("<h", clx, pos + 1)
            pos += 3 + max(cb, 0)
            continue
        if kind != 0x02:
            raise ExtractionError("corrupt", f"unexpected CLX entry {kind:#04x}")
        if pos + 5 > len(clx):
            break
        (lcb,) = struct.unpack_from("<I", clx, pos + 1)
        plc = clx[pos + 5 : pos + 5 + lcb]
        if lcb != len(plc) or lcb < 4 or (lcb - 4) % 12:
            raise ExtractionError("corrupt", f"piece table of {lcb} bytes")
        count = (lcb - 4) // 12
        cps = struct.unpack_from(f"<{count + 1}I", plc, 0)
        pieces = []
        for i in range(count):
            start, end = cps[i], cps[i + 1]
            if end < start:
                raise ExtractionError("corrupt", "piece table character positions go backwards")
            (fc_raw,) = struct.unpack_from("<I", plc, 4 * (count + 1) + 8 * i + 2)
            if word6:
                pieces.append((start, end, fc_raw, True))
            else:
                compressed = bool(fc_raw & 0x40000000)
                fc = fc_raw & 0x3FFFFFFF
                pieces.append((start, end, fc // 2 if compressed else fc, compressed))
        return pieces
    raise ExtractionError("corrupt", "no piece table in the CLX")


def _read_pieces(word: bytes, pieces: list[tuple[int, int, int, bool]], *, eight_bit: str, unicode_ok: bool) -> str:
    parts = []
    expected = 0
    for start, end, offset, compressed in pieces:
        if start != expected:
            raise ExtractionError("corrupt", "piece table has a gap or an overlap")
        expected = end
        length = (end - start) * (1 if compressed else 2)
        if offset + length > len(word):
            raise ExtractionError("corrupt", f"a piece at {offset}+{length} lies outside the WordDocument stream")
        raw = word[offset : offset + length]
        if compressed:
            parts.append(raw.decode(eight_bit, "replace"))
        elif unicode_ok:
            parts.append(raw.decode("utf-16-le", "replace"))
    return "".join(parts)


def _split(text: str, ccps: list[int]) -> list[tuple[str, str]]:
    """Cut the CP stream into its stories (clamped: a lying count only moves text between stories)."""
    stories = []
    pos = 0
    for name, count in zip(_STORIES, ccps, strict=True):
        length = max(count, 0)
        story = text[pos : pos + length]
        pos += length
        if name != "macros":
            stories.append((name, visible(story)))
    return stories


def visible(text: str) -> str:
    """What a reader sees of a story: field results without field codes, special marks mapped."""
    if "\x13" in text:
        text = _drop_field_codes(text)
    # A cell's mark followed by the row's mark ends a table row.
    return text.replace("\x07\x07", "\n").translate(_SPECIAL)


def _drop_field_codes(text: str) -> str:
    # A stack of "showing?" flags: inside a field's code (before its 0x14) nothing shows.
    out = []
    showing = [True]
    last = 0
    for match in _FIELD_MARKS.finditer(text):
        if showing[-1]:
            out.append(text[last : match.start()])
        mark = match.group()
        if mark == "\x13":
            showing.append(False)
        elif mark == "\x14":
            if len(showing) > 1:
                showing[-1] = all(showing[:-1])
        elif len(showing) > 1:
            showing.pop()
        last = match.end()
    if showing[-1]:
        out.append(text[last:])
    return "".join(out)
