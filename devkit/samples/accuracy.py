"""How close OCR output is to the text a scan was rendered from."""

from __future__ import annotations

import unicodedata

__all__ = ["char_accuracy", "char_errors"]


def _accuracy_text(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def char_errors(expected: str, got: str) -> tuple[int, int]:
    """(Levenshtein distance, length of ``expected``), both texts after NFKC and without whitespace.

    Summed over pages they give a corpus's character error rate (distance / length), which,
    unlike a mean of per-page rates, weighs a page by how much text it holds.
    """
    a, b = _accuracy_text(expected), _accuracy_text(got)
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1], len(a)


def char_accuracy(expected: str, got: str) -> float:
    """1 - character error rate: Levenshtein distance / length of ``expected``, floored at 0.

    Both texts are compared after NFKC and without whitespace (OCR spacing and
    full-width/half-width forms are not errors). An empty ``expected`` scores 1
    only against an empty ``got``.
    """
    distance, length = char_errors(expected, got)
    if not length:
        return 1.0 if not distance else 0.0
    return max(0.0, 1.0 - distance / length)
