"""Width and form normalization: NFKC of the Unicode blocks people meet in Japanese office files.

The same table is the index's ``docindex_width`` ``mapping`` char filter (``docindex.index.mapping``)
and :func:`normalize`, which applies it in Python (queries, vocabulary checks).
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Blocks whose characters NFKC rewrites and people meet in Japanese office files: full-width
# ASCII and half-width katakana (old systems), circled and parenthesized numbers, ㈱ and ㍉,
# Roman numerals, Kangxi radicals (what many PDFs extract instead of ideographs),
# CJK compatibility ideographs, Latin ligatures (PDFs), the ideographic space.
_NORMALIZED_BLOCKS = (
    (0x00A0, 0x00A0),
    (0x2150, 0x218F),
    (0x2460, 0x24FF),
    (0x2E80, 0x2FDF),
    (0x3000, 0x3000),
    (0x3200, 0x33FF),
    (0xF900, 0xFAFF),
    (0xFB00, 0xFB06),
    (0xFF00, 0xFFEF),
)
_VOICED_MARKS = ("\uff9e", "\uff9f")  # half-width dakuten, handakuten


@functools.cache
def width_table() -> tuple[tuple[str, str], ...]:
    """``(source, target)`` pairs: NFKC of every character of the blocks, and of half-width
    katakana followed by a voiced mark (``ｻﾞ`` → ``ザ``, ``ﾊﾟ`` → ``パ``)."""
    pairs: dict[str, str] = {}
    for first, last in _NORMALIZED_BLOCKS:
        for code in range(first, last + 1):
            char = chr(code)
            if unicodedata.category(char) in ("Cn", "Co", "Cs"):
                continue
            target = unicodedata.normalize("NFKC", char)
            if target != char:
                pairs[char] = target
    for code in range(0xFF66, 0xFF9E):
        for mark in _VOICED_MARKS:
            combined = unicodedata.normalize("NFKC", chr(code) + mark)
            if len(combined) == 1:
                pairs[chr(code) + mark] = combined
    return tuple(sorted(pairs.items()))


@functools.cache
def _width_pattern() -> re.Pattern[str]:
    sources = sorted((source for source, _ in width_table()), key=len, reverse=True)
    return re.compile("|".join(re.escape(source) for source in sources))


@functools.cache
def _width_dict() -> dict[str, str]:
    return dict(width_table())


def normalize(text: str) -> str:
    """``text`` as the ``docindex_width`` char filter rewrites it (longest match first)."""
    table = _width_dict()
    return _width_pattern().sub(lambda m: table[m.group(0)], text)
