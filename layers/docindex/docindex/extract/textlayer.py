"""Whether a PDF page's text layer can be trusted: one judge, used where the indexer decides that a
PDF needs OCR (``extract/pdf.py``) and where the OCR worker decides, page by page, whether to take
the text layer or read the page (``worker/rasterize.py``).

A text layer lies when the page looks right but its fonts do not say which characters their
glyphs are: no ``/ToUnicode`` map, a Type3 font with glyph names like ``/g1``, a broken subset.
Every extractor then returns garbage, and indexing it makes the page unfindable. The peers judge
per page too: Apache Tika's OCR strategy ``AUTO`` counts unmapped glyphs, xberg/kreuzberg checks
U+FFFD, private-use and alphanumeric ratios. This judge looks at:

- **no or too little text** (below ``OCR_MIN_CHARS_PER_PAGE`` non-blank characters): a scan, or a
  page whose text is drawn as outlines;
- **characters no real text holds**: U+FFFD and noncharacters, private use, control characters
  (PDFium hands out a glyph's raw code when it has no mapping: ``\\x01\\x02...`` for the first
  glyphs of a subset), unassigned code points, pdfminer-style ``(cid:123)``;
- **a run of one placeholder** (U+25A0 ■ for every glyph: a ``/ToUnicode`` mapping all codes to one);
- **unmapped glyphs** PDFium flags, when what they decode to is not mostly letters and digits
  (PDFium falls back to the font's own tables and often gets it right: a Polish invoice with 88 %
  of its glyphs flagged reads perfectly and keeps its text layer);
- **an implausible mix of scripts**: on a Japanese page, letters of scripts Japanese text does not
  use (accented Latin from mojibake, Armenian or Hangul from CIDs taken for code points); on any
  page, more than a fifth of the letters outside its two main scripts, or Latin-1 letters
  (``æ—¥æœ¬``: Japanese shown as Windows-1252) making up more than 30 % of them.

Vertical writing from office software comes out of PDFium one character per line; such runs are
joined back (``join_vertical_runs``) before anything is judged or indexed.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any

# Why a page is OCR'd (the ``reason`` of ``ocr_pages`` in the index).
NO_TEXT = "no_text_layer"
SPARSE = "sparse_text_layer"
UNTRUSTED_REASONS = (
    "replacement_characters",
    "private_use",
    "control_characters",
    "unassigned_characters",
    "cid_codes",
    "placeholder_run",
    "unmapped_glyphs",
    "script_mix",
)

# More than this share of the characters bad (or a run of one placeholder): the layer lies.
MAX_BAD_SHARE = 0.10
MIN_BAD = 3
PLACEHOLDER_SHARE = 0.30
# PDFium's unmapped flag matters only this often and when the text is not mostly letters and digits.
UNMAPPED_SHARE = 0.30
MIN_ALNUM_SHARE = 0.60
# Letters of the wrong scripts: on a Japanese page, on any page (outside its two main scripts).
MAX_FOREIGN_SHARE = 0.15
MAX_MINOR_SCRIPTS_SHARE = 0.20
MAX_LATIN1_SHARE = 0.30
MIN_LETTERS = 10

_CID = re.compile(r"\(cid:\d+\)")
# One kana, kanji, CJK punctuation or full-width character alone on a line.
_ONE_JAPANESE_CHARACTER = re.compile(
    r"^[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]$"
)
MIN_VERTICAL_LINES = 8
# Characters a placeholder run is made of: geometric shapes and question marks.
_PLACEHOLDERS = frozenset("■□▪▫●○◆◇？?\ufffd")
_JAPANESE_SCRIPTS = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HALFWIDTH", "FULLWIDTH", "IDEOGRAPHIC", "KANGXI"})
# Scripts Japanese office text uses besides its own: ASCII Latin, Greek letters (α, β, Ω).
_WITH_JAPANESE = frozenset({"LATIN", "GREEK"})


@dataclass(frozen=True)
class TextLayer:
    """What a PDF page's text layer holds."""

    text: str
    # PDFium: glyphs whose font has no Unicode mapping for them (FPDFText_HasUnicodeMapError).
    unmapped: int = 0
    # The page draws at least one image (only looked for on pages with too little text).
    has_images: bool = False

    @cached_property
    def counts(self) -> Counter[str]:
        """How often each character occurs (in the order of first occurrence): every measure below looks at each
        distinct character once, not at each of a page's thousands (a page of Japanese uses a few hundred)."""
        return Counter(self.text)

    @cached_property
    def chars(self) -> int:
        return sum(n for c, n in self.counts.items() if not _blank(c))


@dataclass(frozen=True)
class Verdict:
    """Whether to take the text layer, and if not, why the page is OCR'd."""

    trusted: bool
    reason: str | None = None

    @property
    def lies(self) -> bool:
        """The layer holds text, but garbage (as opposed to holding too little text)."""
        return self.reason in UNTRUSTED_REASONS


def _blank(ch: str) -> bool:
    """Real white space: str.isspace() also takes the control characters 0x1C-0x1F for it."""
    return ch in "\t\n\r" or unicodedata.category(ch).startswith("Z")


def read_text_layer(page: Any, *, min_chars: int = 0) -> TextLayer:
    """A pypdfium2 page's text layer, its unmapped glyphs and (when it holds fewer than
    ``min_chars`` characters) whether it draws images; a text page's objects are not walked.

    The caller holds PDFium's lock where one is needed (the indexer's threads) and closes the page.
    """
    import pypdfium2.raw as pdfium_c

    textpage = page.get_textpage()
    try:
        # get_text_bounded, unlike get_text_range, is not limited to UCS-2 (𠮷 survives).
        text: str = textpage.get_text_bounded()
        count = textpage.count_chars()
        unmapped = sum(1 for index in range(count) if pdfium_c.FPDFText_HasUnicodeMapError(textpage.raw, index))
    finally:
        textpage.close()
    layer = TextLayer(join_vertical_runs(text.replace("\r\n", "\n").replace("\r", "\n")), unmapped)
    if layer.chars >= min_chars:
        return layer
    images = any(True for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2))
    return TextLayer(layer.text, unmapped, images)


def join_vertical_runs(text: str) -> str:
    """Vertical writing as PDFium extracts it from office software's PDFs, one character per line
    (``お\n知\nら\nせ``), joined back into runs: a word split over lines is no word to a search.

    Only when at least half the page's lines are a single Japanese character; lines of horizontal
    text on the same page (a title, a table) are kept as they are.
    """
    lines = text.split("\n")
    single = [bool(_ONE_JAPANESE_CHARACTER.match(line.strip())) for line in lines]
    filled = sum(1 for line in lines if line.strip())
    if filled < MIN_VERTICAL_LINES or sum(single) * 2 < filled:
        return text
    out: list[str] = []
    run: list[str] = []
    for line, one in zip(lines, single, strict=True):
        if one:
            run.append(line.strip())
            continue
        if run:
            out.append("".join(run))
            run = []
        out.append(line)
    if run:
        out.append("".join(run))
    return "\n".join(out)


def judge(layer: TextLayer, *, min_chars: int) -> Verdict:
    """Trust the page's text layer, or say why the page must be OCR'd."""
    chars = layer.chars
    if chars == 0:
        return Verdict(False, NO_TEXT)
    if chars < min_chars:
        return Verdict(False, SPARSE)
    reason = _bad_characters(layer, chars) or _unmapped(layer, chars) or _script_mix(layer.counts)
    return Verdict(reason is None, reason)


def _bad_characters(layer: TextLayer, chars: int) -> str | None:
    counts: Counter[str] = Counter()
    cids = _CID.findall(layer.text)
    if len(cids) >= MIN_BAD:
        counts["cid_codes"] += sum(len(cid) for cid in cids)
    for ch, n in (Counter(_CID.sub("", layer.text)) if cids else layer.counts).items():
        if _blank(ch):
            continue
        category = unicodedata.category(ch)
        if ch in "\ufffd\ufffe\uffff" or (0xFDD0 <= ord(ch) <= 0xFDEF):
            counts["replacement_characters"] += n
        elif category == "Co":
            counts["private_use"] += n
        elif category == "Cc":
            counts["control_characters"] += n
        elif category in ("Cn", "Cs"):
            counts["unassigned_characters"] += n
    bad = sum(counts.values())
    if bad >= MIN_BAD and bad > chars * MAX_BAD_SHARE:
        return counts.most_common(1)[0][0]
    placeholders = Counter({c: n for c, n in layer.counts.items() if c in _PLACEHOLDERS}).most_common(1)
    if placeholders and placeholders[0][1] >= MIN_BAD and placeholders[0][1] >= chars * PLACEHOLDER_SHARE:
        return "placeholder_run"
    return None


def _unmapped(layer: TextLayer, chars: int) -> str | None:
    if layer.unmapped < chars * UNMAPPED_SHARE:
        return None
    alnum = sum(n for c, n in layer.counts.items() if c.isalnum())
    return "unmapped_glyphs" if alnum < chars * MIN_ALNUM_SHARE else None


def _script(ch: str) -> str:
    try:
        return unicodedata.name(ch).split(" ", 1)[0]
    except ValueError:
        return "UNKNOWN"


def _script_mix(counts: Counter[str]) -> str | None:
    scripts: Counter[str] = Counter()
    for c, n in counts.items():
        if c.isalpha():
            scripts[_script(c)] += n
    letters = sum(scripts.values())
    if letters < MIN_LETTERS:
        return None
    japanese = sum(n for script, n in scripts.items() if script in _JAPANESE_SCRIPTS)
    if japanese >= letters * 0.1:
        ascii_latin = sum(n for c, n in counts.items() if c.isascii() and c.isalpha())
        accented = scripts.get("LATIN", 0) - ascii_latin
        foreign = accented + sum(
            n for script, n in scripts.items() if script not in _JAPANESE_SCRIPTS and script not in _WITH_JAPANESE
        )
        return "script_mix" if foreign > letters * MAX_FOREIGN_SHARE else None
    minor = letters - sum(n for _, n in scripts.most_common(2))
    # UTF-8 (or Shift_JIS) bytes shown as Windows-1252 ("æ—¥æœ¬"): Latin-1 letters galore, where
    # French or German text has a few in a hundred.
    latin1 = sum(n for c, n in counts.items() if "\u00c0" <= c <= "\u00ff" and c.isalpha())
    mixed = minor > letters * MAX_MINOR_SCRIPTS_SHARE or latin1 > letters * MAX_LATIN1_SHARE
    return "script_mix" if mixed else None
