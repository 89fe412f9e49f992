"""Reading one page image with Tesseract: layout, writing direction, geometry, second opinions.

Runs in the OCR pool processes; ``docindex.worker.ocr`` hands it a page image at its
resolution and the process's engines. The ordinary page costs one layout analysis and one
recognition, as before. Only a page whose reading is not plausible (mean word confidence below
75: upright pages read at 75-95, sideways, upside-down, skewed or mis-segmented ones at 0-70),
whose layout left ink outside every block, or whose layout mixes vertical and horizontal
writing gets more:

1. **Geometry** (``docindex.worker.geometry``): the skew is measured and taken out, Tesseract's
   OSD proposes a quarter turn, and the page is read again turned; the new reading is kept only
   if it is clearly more confident.
2. **Second opinions** on the (possibly turned) page, the reading holding the most confident text
   (confidence x characters) wins: the page as one horizontal block (layout analysis calls a
   dense block of fixed-pitch Japanese lines "vertical", and cuts fax pages apart), as one
   vertical block (``jpn_vert``), and, where the layout found both directions, each direction's
   blocks read on their own with the other's painted out (a vertical notice under a horizontal
   title and schedule).
3. As before, a page still below 60 is read as sparse text (forms, a lone line).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from docindex.worker import geometry

if TYPE_CHECKING:
    from PIL import Image

    from docindex.worker.options import OcrOptions

# Below this mean word confidence the automatic page segmentation has likely
# cut the page wrong (sparse pages, forms, a lone line): read it again as
# sparse text and keep the more confident reading.
LOW_CONFIDENCE = 60
# An upright page read right scores 85-95 (clean) or 75-90 (a copier's scan); a sideways, upside
# down, skewed or mis-segmented page reads as noise at 0-70. Below this, the page gets more looks.
PLAUSIBLE_CONFIDENCE = 75
# A turned page's reading replaces the first one only when it is this much more confident.
BETTER_BY = 5
# A second opinion replaces the reading when it holds this much more confident text.
BETTER_MASS = 1.1
# More of the ink than this outside every block of the layout: layout analysis lost text.
MAX_UNCOVERED = 0.2
# Both writing directions hold at least this share of the text area: a mixed page.
MIN_SHARE = 0.15
# Second opinions are not started with less than this left of the page's time.
MIN_SECONDS_LEFT = 2.0

Box = tuple[int, int, int, int]
Line = tuple[Box, str, float]  # a text line's box, text and confidence
# A recognised word: its box (pixels of the image read), its text, the number of its text line
# (words of one line share it) and whether it is written top to bottom: what the preview marks a
# query's words with (docindex.ingest.wordboxes).
Word = tuple[Box, str, int, bool]
Engines = Callable[[str, int], Any]


@dataclass(frozen=True)
class Layout:
    """What layout analysis found: each block's box and whether it is written top to bottom."""

    blocks: tuple[tuple[Box, bool], ...] = ()

    def share(self, vertical: bool) -> float:
        """The share of the blocks' area written top to bottom (``vertical``) or not."""
        areas = [(max(0, b[2] - b[0]) * max(0, b[3] - b[1]), v) for b, v in self.blocks]
        total = sum(area for area, _ in areas)
        return sum(area for area, v in areas if v == vertical) / total if total else 0.0

    @property
    def vertical(self) -> bool:
        return self.share(True) > 0.5

    @property
    def mixed(self) -> bool:
        return min(self.share(True), self.share(False)) >= MIN_SHARE

    def boxes(self, vertical: bool) -> list[Box]:
        return [box for box, v in self.blocks if v == vertical]


@dataclass(frozen=True)
class Reading:
    """What one recognition of a page gave."""

    text: str
    confidence: int
    vertical: bool
    # The share of the ink in no block of the layout (0 where the page was read as one block).
    uncovered: float = 0.0
    layout: Layout = field(default_factory=Layout)
    # Each text line's box and text (horizontal readings): where vertical writing read across shows.
    lines: tuple[Line, ...] = ()
    # The words read and their boxes, in the pixels of the image this reading was made on.
    words: tuple[Word, ...] = ()

    @property
    def mass(self) -> int:
        """Confidence times characters read: a reading that misses half the page scores half."""
        return self.confidence * sum(1 for c in self.text if not c.isspace())

    @property
    def plausible(self) -> bool:
        return self.confidence >= PLAUSIBLE_CONFIDENCE and self.uncovered <= MAX_UNCOVERED and not self.layout.mixed


@dataclass(frozen=True)
class Found:
    text: str
    confidence: int
    lines: tuple[Line, ...] = ()
    words: tuple[Word, ...] = ()

    @property
    def mass(self) -> int:
        return self.confidence * sum(1 for c in self.text if not c.isspace())


@dataclass(frozen=True)
class Split:
    """A page read in parts: (text, confidence, vertical) in reading order, and the parts' words
    (in the page's pixels: a cropped column's words moved by where it was cut from)."""

    parts: tuple[tuple[str, int, bool], ...]
    words: tuple[Word, ...] = ()

    def confidence(self, vertical: bool | None = None) -> int:
        """The parts' confidence weighted by their characters (only the ``vertical`` ones, if given)."""
        chosen = [(text, conf) for text, conf, v in self.parts if vertical is None or v == vertical]
        chars = [sum(1 for c in text if not c.isspace()) for text, _ in chosen]
        return round(sum(conf * n for (_, conf), n in zip(chosen, chars, strict=True)) / max(1, sum(chars)))

    def reading(self) -> Reading:
        chars = {
            v: sum(sum(1 for c in t if not c.isspace()) for t, _, pv in self.parts if pv == v) for v in (True, False)
        }
        text = "\n\n".join(text for text, _, _ in self.parts)
        return Reading(text, self.confidence(), vertical=chars[True] > chars[False], words=self.words)


@dataclass(frozen=True)
class Result:
    """The reading kept (None: the page ran out of time) and how the page was turned for it."""

    reading: Reading | None
    correction: geometry.Correction = field(default_factory=geometry.Correction)


class PageReader:
    """Reads one page image; ``engines(languages, psm)`` gives the process's reused Tesseract engines."""

    def __init__(self, options: OcrOptions, engines: Engines, dpi: int) -> None:
        import tesserocr

        self.options = options
        self.engines = engines
        self.dpi = dpi
        self.psm = tesserocr.PSM
        self.tesserocr = tesserocr
        self.ends = time.monotonic() + options.page_timeout_seconds

    # -- the strategy ------------------------------------------------------------------

    def read(self, image: Image.Image) -> Result:
        """The page's best reading, and how the page was turned for it."""
        first = self.auto(image)
        if first is None:
            return Result(None)
        turned = self.turned_upright(image, first)
        if turned is None:
            return Result(None)
        image, best, correction = turned
        if not best.plausible:
            for candidate in self.second_opinions(image, best):
                if candidate is not None and candidate.mass > best.mass * BETTER_MASS:
                    best = replace(candidate, layout=best.layout)
        best = self.columns_read_down(image, best)
        if best.lines and not best.vertical:
            best = self.reread_latin_lines(image, best)
        if best.confidence < LOW_CONFIDENCE and not best.vertical and self.time_left():
            sparse = self.recognize(self.engines(self.options.languages, self.psm.SPARSE_TEXT), image)
            if sparse is not None and sparse.confidence > best.confidence:
                best = Reading(sparse.text, sparse.confidence, vertical=False, layout=best.layout, words=sparse.words)
        return Result(best, correction)

    def turned_upright(
        self, image: Image.Image, first: Reading
    ) -> tuple[Image.Image, Reading, geometry.Correction] | None:
        """The page (turned, if that reads clearly better), its reading and the turn; None: out of time."""
        if not (self.options.orientation and first.confidence < PLAUSIBLE_CONFIDENCE and self.time_left()):
            return image, first, geometry.Correction()
        proposal = self.upright(image)
        if not proposal:
            return image, first, geometry.Correction()
        turned = geometry.apply(image, proposal)
        again = self.auto(turned)
        if again is None:
            return None
        if again.confidence >= first.confidence + BETTER_BY:
            return turned, again, proposal
        turned.close()
        return image, first, geometry.Correction()

    def columns_read_down(self, image: Image.Image, best: Reading) -> Reading:
        """Vertical writing read across its columns, read again down them.

        The characters come out right, in the wrong order, at a good confidence, so confidence
        cannot tell: the columns are read as such unless the vertical model reads them clearly worse.
        """
        columns = stacked_columns(best) if self.options.vertical != "never" and not best.vertical else []
        if not columns or not self.time_left():
            return best
        split = self.split(image, columns)
        if split is not None and split.confidence(vertical=True) >= min(best.confidence, PLAUSIBLE_CONFIDENCE) - 10:
            return replace(split.reading(), layout=best.layout)
        return best

    def auto(self, image: Image.Image) -> Reading | None:
        """Layout analysis decides horizontal or vertical writing, then the page is recognized (None: timeout)."""
        api = self.engines(self.options.languages, self.psm.AUTO)
        api.SetImage(image)
        api.SetSourceResolution(self.dpi)
        layout = self.analyse(api) if self.options.vertical != "never" else Layout()
        vertical = self.options.vertical == "always" or layout.vertical
        if vertical:
            api.Clear()
            api = self.engines(self.options.vertical_languages, self.psm.SINGLE_BLOCK_VERT_TEXT)
        analysed = self.options.vertical != "never" and not vertical
        found = self.recognize(api, image, analysed=analysed, lines=not vertical)
        if found is None:
            return None
        uncovered = uncovered_ink(image, [box for box, _ in layout.blocks]) if analysed else 0.0
        return Reading(found.text, found.confidence, vertical, uncovered, layout, found.lines, found.words)

    def second_opinions(self, image: Image.Image, first: Reading) -> list[Reading | None]:
        """The page as one horizontal block, as one vertical block, and (mixed pages) each direction on its own."""
        out: list[Reading | None] = []
        if self.time_left():
            found = self.recognize(self.engines(self.options.languages, self.psm.SINGLE_BLOCK), image, lines=True)
            out.append(
                None
                if found is None
                else Reading(found.text, found.confidence, False, lines=found.lines, words=found.words)
            )
        layout = first.layout
        vertical_model = self.engines(self.options.vertical_languages, self.psm.SINGLE_BLOCK_VERT_TEXT)
        if self.options.vertical != "never" and not first.vertical and layout.share(True) > 0 and self.time_left():
            found = self.recognize(vertical_model, image)
            out.append(None if found is None else Reading(found.text, found.confidence, True, words=found.words))
        if self.options.vertical != "never" and layout.mixed and self.time_left():
            split = self.split(image, merge_boxes(layout.boxes(True), gap=self.dpi // 6))
            out.append(None if split is None else split.reading())
        return out

    def split(self, image: Image.Image, columns: list[Box]) -> Split | None:
        """The page's vertical ``columns`` read on their own (cropped, right to left) and the rest of
        the page with them painted white; the parts in reading order (top first, then right to left)."""
        parts: list[tuple[int, int, str, int, bool]] = []  # (top, -right, text, confidence, vertical)
        words: list[Word] = []
        margin = max(4, self.dpi // 20)
        vertical_model = self.engines(self.options.vertical_languages, self.psm.SINGLE_BLOCK_VERT_TEXT)
        for left, top, right, bottom in columns:
            origin = (max(0, left - margin), max(0, top - margin))
            crop = image.crop((*origin, min(image.width, right + margin), min(image.height, bottom + margin)))
            found = self.recognize(vertical_model, crop)
            crop.close()
            if found is None:
                return None
            parts.append((top, -right, found.text, found.confidence, True))
            words += moved(found.words, origin, first_line=len(words) and words[-1][2] + 1)
        rest = paint_out(image, [(x0 - margin, y0 - margin, x1 + margin, y1 + margin) for x0, y0, x1, y1 in columns])
        darkest, _ = rest.getextrema()
        if isinstance(darkest, int | float) and darkest < 128:  # ink left outside the columns
            found = self.recognize(self.engines(self.options.languages, self.psm.AUTO), rest)
            if found is not None and found.confidence < PLAUSIBLE_CONFIDENCE:
                block = self.recognize(self.engines(self.options.languages, self.psm.SINGLE_BLOCK), rest)
                if block is not None and block.mass > found.mass:
                    found = block
            if found is None:
                rest.close()
                return None
            ink = rest.point(lambda value: 255 if value < 128 else 0).getbbox() or (0, 0, 0, 0)
            parts.append((ink[1], -ink[2], found.text, found.confidence, False))
            words += moved(found.words, (0, 0), first_line=len(words) and words[-1][2] + 1)
        rest.close()
        parts.sort()
        return Split(tuple((text, confidence, vertical) for _, _, text, confidence, vertical in parts), tuple(words))

    def reread_latin_lines(self, image: Image.Image, reading: Reading) -> Reading:
        """A Japanese page's lines that came out as Latin letters, read again with the Japanese model alone.

        With ``jpn+eng`` a degraded line of Japanese (a fax) can come out as ``DML CHAT SIRT``:
        the English model's best guess. On a page that is mostly Japanese such a line's box is
        read again with the first model only, and the line replaced if that reads as Japanese.
        """
        languages = self.options.languages.split("+")
        if len(languages) < 2 or japanese_share(reading.text) < 0.6:
            return reading
        text = reading.text
        words = list(reading.words)
        margin = max(2, self.dpi // 60)
        for box, line, confidence in reading.lines:
            letters = sum(1 for c in line if c.isascii() and c.isalpha())
            if letters < MIN_LATIN_LETTERS or letters * 4 < sum(1 for c in line if not c.isspace()):
                continue
            if not self.time_left():
                break
            left, top, right, bottom = box
            origin = (max(0, left - margin), max(0, top - margin))
            crop = image.crop((*origin, right + margin, bottom + margin))
            # One block, not one line: such a line's box often takes in its neighbour too.
            found = self.recognize(self.engines(languages[0], self.psm.SINGLE_BLOCK), crop)
            crop.close()
            # An English line in a Japanese page reads worse with the Japanese model alone: it stays.
            if found is not None and found.confidence > confidence and japanese_share(found.text) >= 0.5:
                text = text.replace(line.strip(), found.text.strip(), 1)
                # The line's words are the new reading's (the old ones lay inside its box).
                words = [word for word in words if not _inside(word[0], box)]
                words += moved(found.words, origin, first_line=max((w[2] for w in words), default=-1) + 1)
        return reading if text == reading.text else replace(reading, text=text, words=tuple(words))

    # -- Tesseract -----------------------------------------------------------------------

    def analyse(self, api: Any) -> Layout:
        """Layout analysis only: the blocks and their writing direction."""
        tesserocr = self.tesserocr
        found = api.AnalyseLayout()
        if found is None:
            return Layout()
        blocks = []
        while True:
            box = found.BoundingBox(tesserocr.RIL.BLOCK)
            if box is not None:
                _, direction, _, _ = found.Orientation()
                blocks.append((tuple(box), direction == tesserocr.WritingDirection.TOP_TO_BOTTOM))
            if not found.Next(tesserocr.RIL.BLOCK):
                break
        return Layout(tuple(blocks))

    def recognize(self, api: Any, image: Image.Image, *, analysed: bool = False, lines: bool = False) -> Found | None:
        """Recognize with ``api``: the text, mean confidence and (``lines``) each line's box; None when time is up."""
        try:
            if not analysed:  # AnalyseLayout already ran on this image: Recognize reuses it
                api.SetImage(image)
                api.SetSourceResolution(self.dpi)
            left_ms = int((self.ends - time.monotonic()) * 1000)
            if left_ms <= 0 or not api.Recognize(timeout=left_ms):
                return None
            return Found(
                api.GetUTF8Text(), int(api.MeanTextConf()), self.text_lines(api) if lines else (), self.words(api)
            )
        finally:
            api.Clear()

    def words(self, api: Any) -> tuple[Word, ...]:
        """The recognised words with their boxes, each numbered by its text line (a column in vertical writing)."""
        ril = self.tesserocr.RIL
        out: list[Word] = []
        line = -1
        for word in self.tesserocr.iterate_level(api.GetIterator(), ril.WORD):
            if word.IsAtBeginningOf(ril.TEXTLINE) or line < 0:
                line += 1
            box = word.BoundingBox(ril.WORD)
            try:
                text = (word.GetUTF8Text(ril.WORD) or "").strip()
            except RuntimeError:  # tesserocr raises for a word without text
                continue
            if box is not None and text:
                _, direction, _, _ = word.Orientation()
                out.append((tuple(box), text, line, direction == self.tesserocr.WritingDirection.TOP_TO_BOTTOM))
        return tuple(out)

    def text_lines(self, api: Any) -> tuple[Line, ...]:
        level = self.tesserocr.RIL.TEXTLINE
        out = []
        for line in self.tesserocr.iterate_level(api.GetIterator(), level):
            box = line.BoundingBox(level)
            if box is not None:
                out.append((tuple(box), line.GetUTF8Text(level) or "", float(line.Confidence(level))))
        return tuple(out)

    def upright(self, image: Image.Image) -> geometry.Correction:
        """The turn that should make the page upright: skew from the ink, then OSD on the straightened page."""
        skew = geometry.estimate_skew(image, self.dpi)
        straight = geometry.apply(image, geometry.Correction(skew=skew)) if abs(skew) >= geometry.MIN_SKEW else image
        try:
            rotation, _ = geometry.detect_orientation(self.engines("osd", self.psm.OSD_ONLY), straight, self.dpi)
        finally:
            if straight is not image:
                straight.close()
        return geometry.Correction(rotation=rotation, skew=skew)

    def time_left(self) -> bool:
        return self.ends - time.monotonic() >= MIN_SECONDS_LEFT


# A line of a Japanese page with at least this many Latin letters (and a quarter of its characters) is read again.
MIN_LATIN_LETTERS = 4
# At least this many lines at most this many characters wide, stacked: vertical columns read across.
MIN_STACKED_LINES = 5
MAX_STACKED_WIDTH = 4


def stacked_columns(reading: Reading) -> list[Box]:
    """Regions where a horizontal reading holds runs of narrow lines (at most four characters wide)
    stacked one under the other: vertical writing read across its columns, the "single
    characters, out of order" of a vertical notice under a horizontal title."""
    regions: list[Box] = []
    run: list[Box] = []

    def close() -> None:
        if len(run) >= MIN_STACKED_LINES:
            regions.append(
                (min(b[0] for b in run), min(b[1] for b in run), max(b[2] for b in run), max(b[3] for b in run))
            )
        run.clear()

    for box, text, _ in reading.lines:
        height = max(1, box[3] - box[1])
        narrow = bool(text.strip()) and box[2] - box[0] <= MAX_STACKED_WIDTH * height
        if narrow and run:
            above = run[-1]
            # the next row of the same columns: just below, overlapping horizontally
            if not (-height // 2 <= box[1] - above[3] <= height and box[0] < above[2] and above[0] < box[2]):
                close()
        if narrow:
            run.append(box)
        else:
            close()
    close()
    return regions


def moved(words: tuple[Word, ...], origin: tuple[int, int], *, first_line: int) -> list[Word]:
    """Words read on a crop, in the pixels of the page it was cut from at ``origin``, their lines numbered on."""
    dx, dy = origin
    return [
        ((x0 + dx, y0 + dy, x1 + dx, y1 + dy), text, line + first_line, vertical)
        for (x0, y0, x1, y1), text, line, vertical in words
    ]


def _inside(box: Box, outer: Box) -> bool:
    """Whether ``box``'s centre lies in ``outer``."""
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return outer[0] <= x <= outer[2] and outer[1] <= y <= outer[3]


def japanese_share(text: str) -> float:
    """Kana and kanji among the letters of ``text`` (Latin letters, kana, kanji)."""
    japanese = latin = 0
    for c in text:
        if "\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff":
            japanese += 1
        elif c.isascii() and c.isalpha():
            latin += 1
    return japanese / (japanese + latin) if japanese + latin else 0.0


def merge_boxes(boxes: list[Box], gap: int) -> list[Box]:
    """Boxes closer than ``gap`` to each other merged into one (layout analysis cuts a vertical text into pieces)."""
    merged: list[Box] = []
    for box in sorted(boxes):
        for i, other in enumerate(merged):
            if (
                box[0] - gap <= other[2]
                and other[0] - gap <= box[2]
                and box[1] - gap <= other[3]
                and other[1] - gap <= box[3]
            ):
                merged[i] = (min(box[0], other[0]), min(box[1], other[1]), max(box[2], other[2]), max(box[3], other[3]))
                break
        else:
            merged.append(box)
    return merged


def uncovered_ink(image: Image.Image, boxes: list[Box]) -> float:
    """The share of the page's ink that lies in no block layout analysis found (on a quarter-size copy).

    Text layout analysis does not see is never read: on a fax page stretched to square pixels it
    missed whole line starts while reading the rest with high confidence.
    """
    from PIL import Image as PILImage
    from PIL import ImageChops, ImageDraw

    factor = 0.25
    size = (max(1, round(image.width * factor)), max(1, round(image.height * factor)))
    grey = image if image.mode == "L" else image.convert("L")
    ink = grey.resize(size, PILImage.Resampling.BOX).point(lambda value: 255 if value < 128 else 0)
    total = ink.histogram()[255]
    if not total:
        return 0.0
    outside = PILImage.new("L", size, 255)
    draw = ImageDraw.Draw(outside)
    for left, top, right, bottom in boxes:
        draw.rectangle((left * factor - 2, top * factor - 2, right * factor + 2, bottom * factor + 2), fill=0)
    return ImageChops.multiply(ink, outside).histogram()[255] / total


def paint_out(image: Image.Image, boxes: list[Box]) -> Image.Image:
    """A copy of ``image`` with ``boxes`` painted white."""
    from PIL import ImageDraw

    copy = image.convert("L") if image.mode != "L" else image.copy()
    draw = ImageDraw.Draw(copy)
    for box in boxes:
        draw.rectangle(box, fill=255)
    return copy
