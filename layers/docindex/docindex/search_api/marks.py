"""Where a query's words are on an OCR'd page: the boxes a preview marks.

The page's words and boxes are the OCR worker's (``docindex.ingest.wordboxes``). A query word is
looked for the way the search found it: both sides folded (``docindex.text.variants.fold``:
width, case, old kanji forms, spelling variants), so 申込書 marks 申し込み書 and ＡＢＣ marks abc.

- A word with Japanese in it is looked for as a substring of each text line's words written
  together (Japanese has no spaces: Tesseract's "words" are single characters or runs, cut
  anywhere), and the characters that make up the match are marked: a whole word's box when all
  of it matched, the matched share of it otherwise (a run read horizontally is cut across its
  width, a column of vertical writing down its height).
- Other words (Latin letters, numbers) are matched whole, word for word (``port`` does not mark
  ``report``), punctuation around them aside.

A match never spans two text lines (a word broken at a line end is not marked).
"""

from __future__ import annotations

import re

from docindex.ingest.wordboxes import PageWords, PlacedWord
from docindex.text.variants import fold, folded_spans

Box = tuple[float, float, float, float]
# At most this many query words are looked for, and this many boxes marked on a page.
MAX_TERMS = 16
MAX_MARKS = 500
_JAPANESE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_NOT_WORD = re.compile(r"[\W_]+")


def query_terms(q: str) -> list[str]:
    """The words and phrases a query searches for (not its exclusions, not its operators)."""
    from docindex.index.search import QueryError, parse_query

    try:
        parsed = parse_query(q)
    except QueryError:
        return []
    terms: list[str] = []
    for clause in parsed.clauses:
        if clause.exclude:
            continue
        for alternative in clause.alternatives:
            term = alternative.strip('"').strip()
            if term and term not in terms:
                terms.append(term)
    return terms[:MAX_TERMS]


def marked_boxes(page: PageWords, q: str) -> list[Box]:
    """The boxes (fractions of the page) of the query's words on the page, at most ``MAX_MARKS``."""
    terms = query_terms(q)
    if not terms or not page.words:
        return []
    lines = page.lines()
    out: list[Box] = []
    for term in terms:
        if _JAPANESE.search(term):
            target = "".join(fold(term).split())
            for line in lines:
                out += _substring_marks(line, target)
        else:
            wanted = [w for w in (_NOT_WORD.sub("", fold(part)) for part in term.split()) if w]
            for line in lines:
                out += _word_marks(line, wanted)
        if len(out) >= MAX_MARKS:
            break
    return out[:MAX_MARKS]


def marked_quote(page: PageWords, quote: str) -> list[Box]:
    """The boxes of an answer's quote on the page: each of its lines (a quote keeps the page's line breaks) is
    looked for, folded and without its spaces, in the OCR's text lines; a line of the quote that OCR read split
    over two of its lines is looked for in each half's line as the part that line holds."""
    if not quote or not page.words:
        return []
    lines = page.lines()
    written = ["".join(fold(word.text) for word in line) for line in lines]
    out: list[Box] = []
    for piece in quote.split("\n"):
        target = "".join(fold(piece).split())
        if len(target) < 2:
            continue
        found = [_substring_marks(line, target) for line in lines]
        if any(found):
            out += [box for boxes in found for box in boxes]
        else:
            # read over several of the OCR's lines: each line wholly inside the quote's line is marked
            for line, text in zip(lines, written, strict=True):
                bare = "".join(text.split())
                if len(bare) >= 2 and bare in target:
                    out += [word.box for word in line]
        if len(out) >= MAX_MARKS:
            break
    return out[:MAX_MARKS]


def _substring_marks(line: list[PlacedWord], target: str) -> list[Box]:
    """The matched characters' boxes of every occurrence of ``target`` (folded) in the line's text."""
    chars = [(word_at, offset) for word_at, word in enumerate(line) for offset in range(len(word.text))]
    text = "".join(word.text for word in line)
    out: list[Box] = []
    # the characters that fold to each match (folding changes lengths: 申込 → 申し込み)
    for first, end in folded_spans(text, target):
        out += _boxes_of(line, chars[first:end])
    return out


def _boxes_of(line: list[PlacedWord], chars: list[tuple[int, int]]) -> list[Box]:
    """The boxes of these characters of the line's words: per word, the share the characters take."""
    out: list[Box] = []
    by_word: dict[int, list[int]] = {}
    for word_at, offset in chars:
        by_word.setdefault(word_at, []).append(offset)
    for word_at, offsets in by_word.items():
        word = line[word_at]
        out.append(_part(word, min(offsets), max(offsets) + 1))
    return out


def _part(word: PlacedWord, first: int, end: int) -> Box:
    """Characters [first, end) of a word: its box cut evenly the way its characters run on the page."""
    left, top, right, bottom = word.box
    count = max(1, len(word.text))
    if first == 0 and end >= count:
        return (left, top, right, bottom)
    if word.flow in ("d", "u"):
        step = (bottom - top) / count
        start, stop = (first, end) if word.flow == "d" else (count - end, count - first)
        return (left, round(top + start * step, 5), right, round(top + stop * step, 5))
    step = (right - left) / count
    start, stop = (first, end) if word.flow == "r" else (count - end, count - first)
    return (round(left + start * step, 5), top, round(left + stop * step, 5), bottom)


def _word_marks(line: list[PlacedWord], wanted: list[str]) -> list[Box]:
    """Boxes of each run of the line's words that reads ``wanted`` word for word."""
    if not wanted:
        return []
    read = [_NOT_WORD.sub("", fold(word.text)) for word in line]
    out: list[Box] = []
    for i in range(len(read) - len(wanted) + 1):
        if read[i : i + len(wanted)] == wanted:
            out += [line[j].box for j in range(i, i + len(wanted))]
    return out
