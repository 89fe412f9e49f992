"""Turning a page upright before it is read: its orientation (0/90/180/270) and its skew (±15°).

Runs in the OCR pool processes (``docindex.worker.ocr``), only for a page whose first reading
was not plausible (a sideways or upside-down page reads as noise at low confidence; an upright
one reads at 85-95 and costs nothing here). Measured on the defect corpus
(``bench/ocr_orientation.py``, docs/performance.md):

- **Skew** from the projection profile of a small (75 dpi) binarised copy: the angle at which
  the rows (or columns, for vertical writing and sideways pages) of ink are sharpest, first in
  1° steps over ±15°, then in 0.2° steps around the best. Tesseract's own deskewing gave up on
  these pages (4° already cut lines apart); 0.05-0.1 s a page.
- **Orientation** by Tesseract's OSD on a 150 dpi copy, *after* the skew is taken out (on a
  skewed page OSD calls an upright page upside down: Apache Tika's ``testRotated+10.png``), and
  only as a proposal: the page is read again turned that way and the new reading is kept only
  if it is clearly more confident. OSD is known to be weak on CJK, so it is never trusted alone.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image

# Skew below this is left to Tesseract (its line finder copes; turning the page blurs it).
MIN_SKEW = 0.5
MAX_SKEW = 15.0
# Resolutions of the copies the estimates work on.
SKEW_DPI = 75
OSD_DPI = 150


@dataclass(frozen=True)
class Correction:
    """How a page was turned before it was read: ``rotation`` (counter-clockwise, a multiple of 90) then ``skew``."""

    rotation: int = 0
    skew: float = 0.0

    def __bool__(self) -> bool:
        return bool(self.rotation) or abs(self.skew) >= MIN_SKEW


def _small(image: Image.Image, dpi: int, target: int) -> Image.Image:
    from PIL import Image as PILImage

    factor = min(1.0, target / max(dpi, 1))
    size = (max(1, round(image.width * factor)), max(1, round(image.height * factor)))
    grey = image if image.mode == "L" else image.convert("L")
    return grey.resize(size, PILImage.Resampling.BOX) if factor < 1.0 else grey.copy()


def _profile(ink: Image.Image, angle: float, axis: int) -> float:
    """How sharp the rows (axis 0) or columns (axis 1) of ink are at ``angle``: the sum of squared steps
    between neighbouring row (column) means. Nearest-neighbour rotation: interpolation would blur
    every angle but 0 and bias the search towards it."""
    from PIL import Image as PILImage

    turned = ink.rotate(angle, resample=PILImage.Resampling.NEAREST, fillcolor=0)
    size = (1, turned.height) if axis == 0 else (turned.width, 1)
    means = [float(value) for value in turned.resize(size, PILImage.Resampling.BOX).get_flattened_data()]  # type: ignore[arg-type]
    return sum((b - a) ** 2 for a, b in itertools.pairwise(means))


def estimate_skew(image: Image.Image, dpi: int) -> float:
    """The angle (degrees, counter-clockwise) that makes the page's lines straight, within ±15°.

    Lines run along rows (horizontal writing) or columns (vertical writing, a sideways page):
    the axis whose best angle stands out most from its typical score is the one the lines run
    along (the other is only partly aligned, by fixed-pitch characters).
    """
    import statistics

    small = _small(image, dpi, SKEW_DPI)
    # Ink bright on black, so what rotation brings in from outside the page is "no ink".
    ink = small.point(lambda value: 255 if value < 128 else 0)
    if not ink.getbbox():
        return 0.0
    angles = [float(angle) for angle in range(-int(MAX_SKEW), int(MAX_SKEW) + 1)]
    best: tuple[float, int, float] = (0.0, 0, 0.0)  # (prominence, axis, angle)
    for axis in (0, 1):
        scores = [_profile(ink, angle, axis) for angle in angles]
        typical = statistics.median(scores) or 1.0
        peak = max(range(len(angles)), key=scores.__getitem__)
        best = max(best, (scores[peak] / typical, axis, angles[peak]))
    _, axis, coarse = best
    candidates = [coarse + step / 5 for step in range(-5, 6) if abs(coarse + step / 5) <= MAX_SKEW]
    found: float = max(candidates, key=lambda angle: _profile(ink, angle, axis))
    return round(found, 1)


def detect_orientation(osd: Any, image: Image.Image, dpi: int) -> tuple[int, float]:
    """Tesseract OSD's proposal: the counter-clockwise turn (0/90/180/270) making the page upright, and its confidence.

    ``osd``: an engine loaded with the ``osd`` model in page mode OSD_ONLY. (0, 0.0) when OSD
    finds too little text to say.
    """
    small = _small(image, dpi, OSD_DPI)
    osd.SetImage(small)
    osd.SetSourceResolution(min(dpi, OSD_DPI))
    try:
        found = osd.DetectOrientationScript()
    except RuntimeError:
        found = None
    finally:
        osd.Clear()
    if not found:
        return 0, 0.0
    return int(found["orient_deg"]) % 360, float(found["orient_conf"])


def apply(image: Image.Image, correction: Correction) -> Image.Image:
    """A new image: ``image`` turned by the correction (quarter turns are exact; the skew is resampled on white)."""
    from PIL import Image as PILImage

    turned = image
    quarter = {90: PILImage.Transpose.ROTATE_90, 180: PILImage.Transpose.ROTATE_180, 270: PILImage.Transpose.ROTATE_270}
    if correction.rotation in quarter:
        turned = turned.transpose(quarter[correction.rotation])
    if abs(correction.skew) >= MIN_SKEW:
        grey = turned if turned.mode == "L" else turned.convert("L")
        turned = grey.rotate(correction.skew, resample=PILImage.Resampling.BICUBIC, expand=True, fillcolor=255)
    return turned if turned is not image else image.copy()


def unturned_box(
    box: tuple[float, float, float, float], correction: Correction, size: tuple[int, int]
) -> tuple[float, float, float, float]:
    """A box on the page as ``apply`` turned it, back on the page as it was (``size``: its width and height).

    The inverse of ``apply``: the skew taken out (a rotation about the centre of the expanded
    image), then the quarter turn; a box turned by the skew is its corners' bounding box.
    """
    width, height = size
    # The page after the quarter turn, before the skew.
    turned_w, turned_h = (height, width) if correction.rotation in (90, 270) else (width, height)
    corners = [(box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])]
    if abs(correction.skew) >= MIN_SKEW:
        theta = math.radians(correction.skew)
        cos, sin = math.cos(theta), math.sin(theta)
        # ``rotate(expand=True)`` keeps the centre in the centre of the larger image.
        skewed_w = abs(turned_w * cos) + abs(turned_h * sin)
        skewed_h = abs(turned_w * sin) + abs(turned_h * cos)
        unskewed = []
        for x, y in corners:
            dx, dy = x - skewed_w / 2, y - skewed_h / 2
            # A counter-clockwise turn on screen (y down) undone.
            unskewed.append((turned_w / 2 + cos * dx - sin * dy, turned_h / 2 + sin * dx + cos * dy))
        corners = unskewed
    if correction.rotation == 90:  # turned counter-clockwise: (x, y) came from (width - y, x)
        corners = [(width - y, x) for x, y in corners]
    elif correction.rotation == 180:
        corners = [(width - x, height - y) for x, y in corners]
    elif correction.rotation == 270:  # turned clockwise: (x, y) came from (y, height - x)
        corners = [(y, height - x) for x, y in corners]
    xs, ys = [x for x, _ in corners], [y for _, y in corners]
    return (max(0.0, min(xs)), max(0.0, min(ys)), min(float(width), max(xs)), min(float(height), max(ys)))
