"""Japanese-aware passages: what one vector stands for.

A passage is a run of whole sentences of at most ``max_chars`` characters. It
breaks at sentence ends (。！？!? and their full-width forms, and ``.`` followed by
a space), at blank lines (paragraphs), before a heading (a short line without a
sentence end followed by body text) and at page boundaries; a sentence longer than
``max_chars`` is cut at a comma (、，,) or a space where one is near, else hard.
Sizes are characters, not tokens: multilingual-e5's tokenizer gives about 0.7
tokens per Japanese character, so 400 characters stay well inside its 512 tokens.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MAX_CHARS = 400
# How passages are cut: a bench's cache of embedded passages is keyed on it (a new cut, new passages).
PASSAGES_VERSION = "2"  # 2: line boundaries kept (issue 48)
# A line this short without a sentence end, after a line that ended a sentence, is a heading and
# starts a new passage (a line wrapped in the middle of a sentence follows one that did not end it;
# full lines of an A4 page hold 35-45 Japanese characters).
HEADING_MAX_CHARS = 30
_LINE = re.compile(r"[^\n]*(?:\n|$)")
# A sentence: up to and including its end mark (and closing brackets), or the rest of the line.
_SENTENCE = re.compile(r"[^。！？!?．\n]*(?:[。！？!?．][」』）)]*|\.(?=\s)|[^\n]$)|[^\n]+")
_SOFT_BREAK = re.compile(r"[、，,\s]")
_ENDS = "。！？!?．.:："
_CLOSING = "」』）)"
# A line break is a boundary reading needs (a heading, a table row, an item of a notice: 日時：…, 場所：…)
# and stays one in the passage - except where a long line of a page was wrapped in the middle of a
# sentence: a line of at least WRAP_MIN_CHARS characters that ends no sentence, followed by a line going
# on in Japanese that starts no item of its own, is folded into the next without a space.
_CJK = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff10-\uff5a\u3005-\u3007]"
WRAP_MIN_CHARS = 28
_CJK_START = re.compile(_CJK)
# What starts an item of its own: a label (日時：, 場所　), an article (第5条), a list mark or number.
_ITEM = re.compile(
    r"(?:[^\s：:。、]{1,8}[：:]|第[0-9０-９一二三四五六七八九十]+[条項章節]|[・●○■□◆◇※\-－*]|[0-9０-９①-⑳]+[.．、）)])"
)
_SPACES = re.compile(r"[ \t\u3000]+")


@dataclass(frozen=True)
class Passage:
    """``text`` is ``content[start:end]`` with its lines kept (wrapped ones joined) and runs of spaces folded."""

    text: str
    start: int
    end: int
    page: int | None = None  # 1-based page (slide, sheet) the passage starts on, when known


def passages(
    content: str,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_passages: int | None = None,
    page_starts: Sequence[int] = (),
) -> list[Passage]:
    """The passages of ``content`` in order (at most ``max_passages``).

    ``page_starts``: the offset in ``content`` where each page begins (page 1 first);
    a passage never spans two pages and carries its page number.
    """
    starts = sorted(set(page_starts))
    out: list[Passage] = []
    current: list[tuple[int, int]] = []  # spans of the sentences gathered
    size = 0
    # A passage holding only headings so far keeps the text under them (a blank line after a
    # title does not leave the title alone in a passage).
    only_headings = False

    def page_of(offset: int) -> int | None:
        return bisect.bisect_right(starts, offset) or None if starts else None

    def flush() -> None:
        nonlocal size
        if current:
            start, end = current[0][0], current[-1][1]
            text = lines_kept(content[start:end])
            if text:
                out.append(Passage(text, start, end, page_of(start)))
        current.clear()
        size = 0

    for start, end, breaks_before, heading in _sentences(content):
        if max_passages is not None and len(out) >= max_passages:
            break
        other_page = bool(current) and page_of(start) != page_of(current[0][0])
        if other_page or (breaks_before and not only_headings) or (current and size + end - start > max_chars):
            flush()
        only_headings = heading and (only_headings or not current)
        for piece_start, piece_end in _cut(content, start, end, max_chars):
            if current and size + (piece_end - piece_start) > max_chars:
                flush()
            current.append((piece_start, piece_end))
            size += piece_end - piece_start
    flush()
    return out[:max_passages] if max_passages is not None else out


def lines_kept(text: str) -> str:
    """``text`` with its line boundaries kept, wrapped lines joined, blank lines and runs of spaces folded."""
    lines = [" ".join(_SPACES.split(line)).strip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if not line:
            continue
        if out and _wrapped(out[-1], line):
            out[-1] += line
        else:
            out.append(line)
    return "\n".join(out)


def _wrapped(before: str, after: str) -> bool:
    """Whether ``after`` continues the sentence ``before`` was wrapped in (see WRAP_MIN_CHARS)."""
    return (
        len(before) >= WRAP_MIN_CHARS
        and before.rstrip(_CLOSING)[-1:] not in _ENDS
        and _CJK_START.match(before[-1:]) is not None
        and _CJK_START.match(after) is not None
        and _ITEM.match(after) is None
    )


def _sentences(content: str) -> list[tuple[int, int, bool, bool]]:
    """``(start, end, starts_a_passage, is_heading)`` of each non-blank sentence, line by line."""
    found: list[tuple[int, int, bool, bool]] = []
    blank_before = True
    previous_ended = True
    for line in _LINE.finditer(content):
        if not line.group().strip():
            blank_before = True
            previous_ended = True
            continue
        pieces = [m.span() for m in _SENTENCE.finditer(content, line.start(), line.end()) if m.group().strip()]
        for number, (first, last) in enumerate(pieces):
            text = content[first:last]
            start = first + len(text) - len(text.lstrip())
            stop = last - (len(text) - len(text.rstrip()))
            ended = content[start:stop].rstrip(_CLOSING)[-1:] in tuple(_ENDS)
            heading = len(pieces) == 1 and previous_ended and not ended and stop - start <= HEADING_MAX_CHARS
            found.append((start, stop, (number == 0 and blank_before) or heading, heading))
            blank_before = False
            previous_ended = ended
    return found


def _cut(content: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """A sentence as pieces of at most ``max_chars``, cut after a comma or space near the limit."""
    pieces = []
    while end - start > max_chars:
        window = content[start : start + max_chars]
        soft = [m.end() for m in _SOFT_BREAK.finditer(window) if m.end() >= max_chars // 2]
        cut = start + (soft[-1] if soft else max_chars)
        pieces.append((start, cut))
        start = cut
    pieces.append((start, end))
    return pieces
