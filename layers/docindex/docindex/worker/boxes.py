"""Where the words read lie on the page as a preview shows it (the marks of a query's words).

A page may have been turned, straightened, resampled and cut into parts before it was read; its
words' boxes are moved back onto the page as scanned and kept in 1/10,000 of its width and
height (``docindex.ingest.wordboxes`` stores them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docindex.worker.recognize import Word

# Word boxes are kept in 1/10,000 of the page's width and height (docindex.ingest.wordboxes).
BOX_SCALE = 10_000


# Which way text runs on the page as scanned, by the quarter turn that made it upright and whether
# it runs down (vertical writing) or right on the upright page.
_FLOW = {
    (0, False): "r",
    (0, True): "d",
    (90, False): "d",
    (90, True): "l",
    (180, False): "l",
    (180, True): "u",
    (270, False): "u",
    (270, True): "r",
}


def page_words(
    words: tuple[Word, ...], correction: Any, size: tuple[int, int]
) -> tuple[tuple[int, int, int, int, str, int, str], ...]:
    """Words read on the turned image, placed on the page as shown: the turn undone, then the
    image's pixels (the whole page, rendered) as 1/10,000 of the page, and which way each runs
    there (a sideways page's lines run up or down)."""
    from docindex.worker import geometry

    width, height = max(size[0], 1), max(size[1], 1)
    out = []
    for box, text, line, vertical in words:
        x0, y0, x1, y1 = geometry.unturned_box(box, correction, size)

        def place(value: float) -> int:
            return min(BOX_SCALE, max(0, round(value * BOX_SCALE)))

        out.append(
            (
                place(x0 / width),
                place(y0 / height),
                place(x1 / width),
                place(y1 / height),
                text,
                line,
                _FLOW.get((correction.rotation, vertical), "r"),
            )
        )
    return tuple(out)
