"""RTF: the visible text, with ``\\'xx`` bytes decoded in the declared code page.

A small reader of the RTF 1.9 specification (no library: striprtf ignores
font charsets, so Japanese ``\\'82\\'a0`` pairs came out as mojibake):

- the code page is the document's ``\\ansicpgN``, or the current font's when
  its ``\\fcharsetN`` (128 = Shift_JIS -> cp932, 134 GBK, 136 Big5, 129
  Korean, 204 Cyrillic...) or ``\\cpgN`` says so; consecutive ``\\'xx`` bytes
  are decoded together, so double-byte characters survive;
- ``\\uN`` escapes (signed 16-bit, surrogate pairs joined) are taken, and
  the ``\\ucN`` fallback characters after them skipped;
- ignorable destinations (``{\\*\\...}``) and known non-text destinations
  (font and colour tables, style sheet, pictures, objects' data, field
  instructions, theme and XML data) are skipped, ``\\binN`` data jumped over;
- ``{\\info}`` gives the title and author.

Bounds: group nesting is capped (``corrupt`` beyond ``MAX_DEPTH``), output is
capped by ``max_chars`` and the deadline is checked as text accumulates.
"""

from __future__ import annotations

import re

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.ole import codepage_codec

MAX_DEPTH = 2000
_TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|([^\\{}\r\n]+)|[\r\n]+", re.S)
# A run of \uN escapes each followed by its one fallback character (\uc1, the default): how
# Word and LibreOffice write every non-ASCII character. Decoded in one step, not token by token.
_UNICODE_RUN = re.compile(rb"(?:\\u-?\d{1,6} ?(?:\\'[0-9a-fA-F]{2}|[^\\{}\r\n ]))+")
_UNICODE_NUMBER = re.compile(rb"\\u(-?\d{1,6})")
_CHARSET_CODEPAGE = {
    0: 1252,
    128: 932,
    129: 949,
    130: 1361,
    134: 936,
    136: 950,
    161: 1253,
    162: 1254,
    163: 1258,
    177: 1255,
    178: 1256,
    186: 1257,
    204: 1251,
    222: 874,
    238: 1250,
}
_SKIP_DESTINATIONS = frozenset(
    {
        "fonttbl",
        "colortbl",
        "stylesheet",
        "listtable",
        "listoverridetable",
        "revtbl",
        "rsidtbl",
        "generator",
        "filetbl",
        "pict",
        "objdata",
        "objclass",
        "fldinst",
        "themedata",
        "colorschememapping",
        "latentstyles",
        "datastore",
        "xmlnstbl",
        "pgdsctbl",
        "shppict",
        "nonshppict",
        "bkmkstart",
        "bkmkend",
        "xe",
        "tc",
        "private",
        "userprops",
        "docvar",
        "mmathPr",
        "pn",
        "listtext",
        "sp",  # a shape's properties (name/value pairs)
        "shprslt",  # a shape's fallback rendering: its text is in \\shptxt already
    }
)
_INFO_FIELDS = frozenset({"title", "author", "operator", "subject"})
_NEWLINE_WORDS = frozenset({"par", "line", "row", "sect", "page", "outlinelevel"})
_SYMBOLS = {
    "tab": "\t",
    "cell": "\t",
    "emdash": "\u2014",
    "endash": "\u2013",
    "emspace": " ",
    "enspace": " ",
    "qmspace": " ",
    "bullet": "\u2022",
    "lquote": "\u2018",
    "rquote": "\u2019",
    "ldblquote": "\u201c",
    "rdblquote": "\u201d",
}
_CHAR_SYMBOLS = {"~": " ", "_": "-", "-": "", "\\": "\\", "{": "{", "}": "}", "\n": "\n", "\r": "\n", "\t": "\t"}


class _State:
    __slots__ = ("codec", "destination", "skip", "uc")

    def __init__(self, codec: str, uc: int = 1, skip: bool = False, destination: str = "") -> None:
        self.codec = codec
        self.uc = uc
        self.skip = skip
        self.destination = destination

    def copy(self) -> _State:
        return _State(self.codec, self.uc, self.skip, self.destination)


def extract_rtf(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Visible text, title and author of an RTF document into ``ctx``."""
    reader = _Reader(data, ctx)
    try:
        reader.run()
    finally:
        reader.flush_text()
    info = reader.info
    ctx.title = info.get("title") or None
    ctx.author = info.get("author") or None


class _Reader:
    def __init__(self, data: bytes, ctx: ExtractionContext) -> None:
        self.data = data
        self.ctx = ctx
        self.state = _State("cp1252")
        self.stack: list[_State] = []
        self.out: list[str] = []
        self.pending = bytearray()
        self.skip_fallback = 0
        self.fonts: dict[int, str] = {}
        self.font_being_defined: int | None = None
        self.default_codec = "cp1252"
        self.info: dict[str, str] = {}
        self.info_field: list[str] = []
        self.high_surrogate: int | None = None
        self.size = 0

    # -- output -------------------------------------------------------------

    def emit(self, text: str) -> None:
        if self.state.skip or not text:
            return
        if self.state.destination in _INFO_FIELDS:
            self.info_field.append(text)
            return
        if self.state.destination in ("info", "fonttbl"):
            return  # font names (ＭＳ 明朝 as \\uN escapes) and unread info fields
        self.out.append(text)
        self.size += len(text)
        if len(self.out) >= 4096:
            self.flush_text()

    def flush_bytes(self) -> None:
        if self.pending:
            raw = bytes(self.pending)
            self.pending.clear()
            self.emit(raw.decode(self.state.codec, "replace"))

    def flush_text(self) -> None:
        self.flush_bytes()
        if self.out:
            chunk = "".join(self.out)
            self.out.clear()
            if not self.ctx.text.append(chunk):
                raise _Full
            self.ctx.check_deadline()

    # -- parsing --------------------------------------------------------------

    def run(self) -> None:
        data = self.data
        if not data.lstrip().startswith(b"{\\rtf"):
            raise ExtractionError("corrupt", "not an RTF document")
        pos = 0
        end = len(data)
        try:
            while pos < end:
                after_run = self._unicode_run(pos)
                if after_run:
                    pos = after_run
                    continue
                match = _TOKEN.match(data, pos)
                if match is None:  # a lone backslash at the very end
                    break
                pos = match.end()
                word, hexbyte, symbol, brace, text = (match.group(i) for i in (1, 3, 4, 5, 6))
                if hexbyte is not None:
                    self._byte(hexbyte)
                    continue
                self.flush_bytes()
                if text is not None:
                    if self.skip_fallback:
                        drop = min(self.skip_fallback, len(text))
                        self.skip_fallback -= drop
                        text = text[drop:]
                    self._plain(text)
                elif brace is not None:
                    self.skip_fallback = 0
                    self._brace(brace)
                elif word is not None:
                    param = match.group(2)
                    pos = self._control(word.decode("ascii"), int(param) if param is not None else None, pos)
                elif symbol is not None:
                    self._symbol(symbol.decode("latin-1"))
        except _Full:
            self.out.clear()
            self.pending.clear()

    def _byte(self, hexbyte: bytes) -> None:
        if self.skip_fallback:
            self.skip_fallback -= 1
        elif not self.state.skip:
            self.pending.append(int(hexbyte, 16))

    def _unicode_run(self, pos: int) -> int:
        """Decode a run of ``\\uN`` + fallback pairs at ``pos`` at once; where it ends (0: none here)."""
        if not self.data.startswith(b"\\u", pos) or self.state.uc != 1 or self.skip_fallback:
            return 0
        run = _UNICODE_RUN.match(self.data, pos)
        if run is None:
            return 0
        self.flush_bytes()
        for number in _UNICODE_NUMBER.findall(run.group()):
            self._unicode(int(number))
        return run.end()

    def _plain(self, text: bytes) -> None:
        if self.state.destination == "fonttbl":
            return
        if self.state.skip:
            return
        # Plain bytes outside \'xx are 7-bit in valid RTF; decode leniently anyway.
        self.emit(text.decode(self.state.codec, "replace"))

    def _brace(self, brace: bytes) -> None:
        if brace == b"{":
            if len(self.stack) >= MAX_DEPTH:
                raise ExtractionError("corrupt", f"RTF groups nested more than {MAX_DEPTH} deep")
            self.stack.append(self.state)
            self.state = self.state.copy()
            return
        if self.state.destination in _INFO_FIELDS and self.info_field:
            value = "".join(self.info_field).strip()
            known = self.info.get(self.state.destination)
            # {\upr{ANSI}{\*\ud{Unicode}}}: the Unicode version wins over its "???" fallback.
            if known is None or known.count("?") > value.count("?"):
                self.info[self.state.destination] = value
            self.info_field = []
        if self.stack:
            self.state = self.stack.pop()

    def _control(self, word: str, param: int | None, pos: int) -> int:  # noqa: PLR0911, PLR0912 - a dispatch table
        state = self.state
        if word == "bin":
            return pos + max(param or 0, 0)  # binary data: jumped over, never decoded
        if self.skip_fallback:
            self.skip_fallback -= 1
            return pos
        if word in _SKIP_DESTINATIONS:
            state.skip = True
            state.destination = word
            if word == "fonttbl":
                state.skip = False  # read for the charsets, nothing emitted
                state.destination = "fonttbl"
            return pos
        if word in _INFO_FIELDS and state.destination in ("info", *_INFO_FIELDS):
            state.destination = word
            self.info_field = []
            return pos
        if word in ("annotation", "footnote"):
            state.skip = False  # comments (and LibreOffice's footnotes) are ignorable destinations; people search them
            state.destination = ""
            return pos
        if word == "shpinst":
            state.skip = False  # {\\*\\shpinst ...}: a shape; its \\shptxt is a text box's text
            state.destination = ""
            return pos
        if word == "ud":
            state.skip = False  # {\*\ud ...}: the Unicode twin of an {\upr} group
            state.destination = self.stack[-1].destination if self.stack else ""
            return pos
        if word == "info":
            state.destination = "info"
            state.skip = False
            return pos
        if word == "ansicpg" and param:
            self.default_codec = codepage_codec(param)
            state.codec = self.default_codec
        elif word == "f" and param is not None:
            if state.destination == "fonttbl":
                self.font_being_defined = param
            else:
                state.codec = self.fonts.get(param, self.default_codec)
        elif word in ("fcharset", "cpg") and state.destination == "fonttbl" and self.font_being_defined is not None:
            codepage = _CHARSET_CODEPAGE.get(param or 0) if word == "fcharset" else param
            if codepage:
                self.fonts[self.font_being_defined] = codepage_codec(codepage, self.default_codec)
        elif word == "uc" and param is not None:
            state.uc = max(0, min(param, 10))
        elif word == "u" and param is not None:
            self._unicode(param)
            self.skip_fallback = state.uc
        elif state.destination in ("fonttbl", "info"):
            return pos
        elif word in _NEWLINE_WORDS:
            self.emit("\n")
        elif word in _SYMBOLS:
            self.emit(_SYMBOLS[word])
        return pos

    def _unicode(self, value: int) -> None:
        code = value + 65536 if value < 0 else value
        if 0xD800 <= code <= 0xDBFF:
            self.high_surrogate = code
            return
        if 0xDC00 <= code <= 0xDFFF and self.high_surrogate is not None:
            code = 0x10000 + ((self.high_surrogate - 0xD800) << 10) + (code - 0xDC00)
        self.high_surrogate = None
        if 0 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
            self.emit(chr(code))

    def _symbol(self, symbol: str) -> None:
        if symbol == "*":
            self.state.skip = True  # an ignorable destination we do not know
            self.state.destination = "*"
            return
        if self.skip_fallback:
            self.skip_fallback -= 1
            return
        if self.state.destination == "fonttbl":
            return
        self.emit(_CHAR_SYMBOLS.get(symbol, ""))


class _Full(Exception):
    """The text buffer is full: stop reading."""
