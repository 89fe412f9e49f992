"""How close OCR output is to the text a scan was rendered from."""

from __future__ import annotations

import unicodedata

__all__ = ["char_accuracy"]


def _accuracy_text(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def char_accuracy(expected: str, got: str) -> float:
    """1 - character error rate: Levenshtein distance / length of ``expected``, floored at 0.

    Both texts are compared after NFKC and without whitespace (OCR spacing and
    full-width/half-width forms are not errors). An empty ``expected`` scores 1
    only against an empty ``got``.
    """
    a, b = _accuracy_text(expected), _accuracy_text(got)
    if not a:
        return 1.0 if not b else 0.0
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return max(0.0, 1.0 - previous[-1] / len(a))
