"""Reading one page image with PP-OCR: lines in reading order, a sideways page turned, word boxes.

Runs in the OCR pool processes; ``docindex.worker.ocr`` hands it a page image at its resolution
(resampled to square pixels, as for Tesseract) when ``OCR_ENGINE`` says so. It gives the same
``recognize.Result`` the Tesseract reader gives, so the text, the confidence, the turn and the
word boxes go on the same way.

- **Upright first.** PP-OCR's recogniser reads a line turned 180° at best; a page fed sideways
  reads as noise at a low confidence. A page whose reading is not plausible (below
  ``PLAUSIBLE``) is straightened (``geometry.estimate_skew``), Tesseract's OSD proposes a quarter
  turn (``geometry.detect_orientation``: the ``osd`` model, never trusted alone), and the page is
  read again turned; the turned reading is kept only if it is clearly more confident.
- **Reading order** by recursive XY-cut over the lines' boxes: cut where the widest gap is (a
  two-page spread's gutter before its lines, a title's space before a vertical body), then
  horizontal lines top to bottom, columns of vertical writing right to left.
- **Confidence** 0-100: the recogniser's mean character probability x 100, weighted by the
  lines' characters (a clean page reads at 95-100; a sideways one at 30-70).
- **Words** for the previews' marks: each kana or kanji on its own with its place along the line
  from the recogniser's alignment (the CTC step it was read at), Latin words and numbers whole.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from docindex.worker import geometry, ppocr
from docindex.worker.recognize import Reading, Result, japanese_share

if TYPE_CHECKING:
    from PIL import Image

    from docindex.worker.options import OcrOptions
    from docindex.worker.recognize import Word

# Below this confidence a page may be sideways, upside down or askew: it gets a second look.
PLAUSIBLE = 93
# A page whose widest lines (this many) hold less than this share of Japanese is read by Tesseract.
LATIN_SAMPLE = 4
LATIN_SHARE = 0.2
# The skew is measured on a copy whose longer side is at least this many pixels.
SKEW_SIDE = 1000
# A gap between side-by-side groups of lines is a gutter when it is at least this many lines high.
GUTTER_LINES = 1.5
# A letter-spaced label: lines of at most this many Japanese characters, at most this many line heights apart.
SPACED_CHARS = 3
SPACED_GAP = 1.5
# A column of pixels between two of its characters this much darker than the paper over this share of
# their height is a ruled line.
RULE_DARKER = 10
RULE_SHARE = 0.8
# Two halves of a horizontal line the detection cut apart are at most this many line heights apart.
HALVES_GAP = 0.25
# A turned page's reading replaces the first one only when it is this much more confident.
BETTER_BY = 5

# Kana and kanji (not the CJK punctuation and full-width forms _CJK_CHAR also holds).
_CJK_WORD = re.compile(r"[\u3041-\u309f\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK_CHAR = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
# Kanji numerals and the katakana that look like them in a Gothic face: ー (long vowel mark) for
# 一 and ニ for 二 next to other numerals (一二パーセント read ーニパーセント).
_NUMERALS = "〇一二三四五六七八九十百千万億"
_LONG_BEFORE_NUMERAL = re.compile(rf"(?<![\u30a0-\u30ff])ー(?=[{_NUMERALS}ニ])")
_NI_BY_NUMERAL = re.compile(rf"(?<=[{_NUMERALS}])ニ|ニ(?=[{_NUMERALS}])")


# Simplified Chinese forms the recogniser (whose alphabet is Chinese and Japanese) sometimes gives
# for a Japanese character, and that Japanese text never uses: on a page with kana they are the
# Japanese form (給付金额 → 給付金額, 对象 → 対象, 监查 → 監査, 长须鲸 → 長須鯨).
_SIMPLIFIED = str.maketrans(
    "员额费齿舍鲸检查对务动发经济书时间门问闻题项页顺须预领频类应业东为们个这说话语读请课调谈论设证识"
    "评认记计订议许诉词试详误谢贸贵资购货质负贷财责败账车转轮软较输边过还进远运连选铁银钱错长马验鱼鸟"
    "龙图场块坏处备复头实导层岁币带师帐广库开张录归总恶惊战执扩护报拟择损换无杂权极构标树样桥梦楼欢"
    "沟泽洁测涉渐满灭热爱现环电疗盐监盖确种积稳穷笔简级纪约纯纳纸线练组细织终结绝给统继续维综绿编缩"
    "网罗职联聪脑节苏范药虑补规视览觉驱验际陆阳阶随难颜额饭馆养馀",
    "員額費歯舎鯨検査対務動発経済書時間門問聞題項頁順須預領頻類応業東為們個這説話語読請課調談論設証識"
    "評認記計訂議許訴詞試詳誤謝貿貴資購貨質負貸財責敗帳車転輪軟較輸辺過還進遠運連選鉄銀銭錯長馬験魚鳥"
    "竜図場塊壊処備復頭実導層歳幣帯師帳広庫開張録帰総悪驚戦執拡護報擬択損換無雑権極構標樹様橋夢楼歓"
    "溝沢潔測渉漸満滅熱愛現環電療塩監蓋確種積穏窮筆簡級紀約純納紙線練組細織終結絶給統継続維総緑編縮"
    "網羅職連聡脳節蘇範薬慮補規視覧覚駆験際陸陽階随難顔額飯館養余",
)
_KANA = re.compile(r"[\u3041-\u309f\u30a1-\u30fa]")


# Kanji the recogniser reads as the katakana they look like when it sees them alone among kanji: ロ
# beside a kanji and no katakana is 口 (投入ロ, 人ロ, ロ座), エ so is 工 (加エ, エ場). Not カ for 力:
# the counter カ follows kanji too (数カ月, 何カ所).
_KATAKANA_SIDE = r"\u30a0-\u30ff\uff66-\uff9f"
_LONE_KATAKANA = re.compile(
    rf"(?<=[\u4e00-\u9fff])[ロエ](?![{_KATAKANA_SIDE}])|(?<![{_KATAKANA_SIDE}])[ロエ](?=[\u4e00-\u9fff])"
)
_KANJI_FOR = {"ロ": "口", "エ": "工"}
# On a page that names a party 甲, 乙 (the other party) read as the hiragana it looks like in a
# condensed line: こ after a kanji, a space or 甲と, before a particle (第一条　こは → 乙は, 甲とこの
# → 甲と乙の). Never inside a hiragana word (そこは, ここに) nor at a line's start (a word cut there).
_OTSU_AS_KO = re.compile(r"(?:(?<=[\u4e00-\u9fff\u3000 ])|(?<=甲と))こ(?=[はのにがをへも])")


def fix_parties(text: str) -> str:
    """乙 read as こ put back, in a line of a page that names a party 甲 (``_OTSU_AS_KO``)."""
    return _OTSU_AS_KO.sub("乙", text)


def fix_numerals(text: str) -> str:
    """Kanji read as their katakana look-alikes, put back: ー before a numeral (not after katakana,
    where it lengthens a vowel) is 一, ニ beside a numeral is 二; ロ and エ alone beside a kanji are
    口 and 工."""
    text = _LONG_BEFORE_NUMERAL.sub("一", text)
    text = _NI_BY_NUMERAL.sub("二", text)
    return _LONE_KATAKANA.sub(lambda match: _KANJI_FOR[match.group()], text)


class PageReader:
    """Reads one page image with the process's PP-OCR engine (and Tesseract's OSD for the turn)."""

    def __init__(self, options: OcrOptions, dpi: int, osd: object | None) -> None:
        self.options = options
        self.dpi = dpi
        self.osd = osd
        self.engine = ppocr.engine(options.model_dir, options.engine_threads)
        self.ends = time.monotonic() + options.page_timeout_seconds
        # The lines ``latin`` found on the page as it is, for its first reading.
        self._found: list[tuple[ppocr.Box, float]] | None = None
        self._sample: list[ppocr.Line] = []

    def latin(self, image: Image.Image) -> bool:
        """Whether the page is written in Latin letters: its widest lines read as such (Tesseract's
        English reads those pages as well, at a fraction of the time PP-OCR takes on long lines)."""
        found = self.engine.detect(image, self.dpi)
        widest = sorted(found, key=lambda item: -max(item[0][2] - item[0][0], item[0][3] - item[0][1]))
        sample = self.engine.recognize(image, [box for box, _ in widest[:LATIN_SAMPLE]], self.options.vertical)
        text = "".join(line.text for line in sample)
        letters = sum(1 for c in text if c.isascii() and c.isalpha())
        # The page's first reading takes these lines as read, and reads only the others.
        self._found = widest[LATIN_SAMPLE:]
        self._sample = sample
        return letters >= 10 and japanese_share(text) < LATIN_SHARE

    def read(self, image: Image.Image) -> Result:
        """The page's reading and how the page was turned for it."""
        first = self.reading(image)
        # A page of horizontal lines fed sideways reads well as columns (each turned upright to be
        # read): only OSD tells it from vertical writing, and the preview wants it turned.
        doubtful = first.confidence < PLAUSIBLE or first.vertical
        if not (doubtful and self.options.orientation) or time.monotonic() >= self.ends:
            return Result(first)
        best, kept = first, geometry.Correction()
        skew = self.skew(image)
        straight = geometry.apply(image, geometry.Correction(skew=skew)) if abs(skew) >= geometry.MIN_SKEW else image
        try:
            if straight is not image and first.confidence < PLAUSIBLE:
                again = self.reading(straight)
                if again.confidence >= first.confidence + BETTER_BY:
                    best, kept = again, geometry.Correction(skew=skew)
            if self.osd is None:
                return Result(best, kept)
            rotation, _ = geometry.detect_orientation(self.osd, straight, self.dpi)
        finally:
            if straight is not image:
                straight.close()
        if not rotation or time.monotonic() >= self.ends:
            return Result(best, kept)
        turned_by = geometry.Correction(rotation=rotation, skew=kept.skew)
        turned = geometry.apply(image, turned_by)
        try:
            again = self.reading(turned)
        finally:
            turned.close()
        if again.confidence >= best.confidence + BETTER_BY:
            return Result(again, turned_by)
        # Both read well: the turn that makes its lines horizontal is how the page was meant.
        sideways = best.confidence >= PLAUSIBLE and rotation in (90, 270) and best.vertical and not again.vertical
        if sideways and again.confidence >= best.confidence - BETTER_BY:
            return Result(again, turned_by)
        return Result(best, kept)

    def spaced_labels(self, image: Image.Image, lines: list[ppocr.Line]) -> list[ppocr.Line]:
        """The lines, with each letter-spaced label (``spaced_groups``) read again as one line: alone,
        a character has no context (埋 of 埋葬料 read 理); kept when it reads at least as surely as its
        least sure character."""
        groups = [part for group in spaced_groups(lines) for part in _unruled(image, lines, group) if len(part) > 1]
        if not groups:
            return lines
        boxes = [
            (
                min(lines[i].box[0] for i in group),
                min(lines[i].box[1] for i in group),
                max(lines[i].box[2] for i in group),
                max(lines[i].box[3] for i in group),
            )
            for group in groups
        ]
        again = self.engine.recognize(image, boxes, "never")
        read = {line.box: line for line in again}
        replaced: dict[int, ppocr.Line | None] = {}
        for group, box in zip(groups, boxes, strict=True):
            line = read.get(box)
            parts = [lines[i] for i in group]
            if line is None or len(line.text) < len(parts) or line.confidence < min(p.confidence for p in parts):
                continue
            replaced[group[0]] = line
            replaced.update(dict.fromkeys(group[1:]))
        kept = (replaced.get(i, line) for i, line in enumerate(lines))
        return [line for line in kept if line is not None]

    def skew(self, image: Image.Image) -> float:
        """The page's skew, measured on a copy of at least ``SKEW_SIDE`` pixels (a small image's
        75 dpi copy is too coarse: a 660-pixel crop measured 15° for an upright page)."""
        factor = max(geometry.SKEW_DPI / max(1, self.dpi), min(1.0, SKEW_SIDE / max(image.size)))
        return geometry.estimate_skew(image, round(geometry.SKEW_DPI / factor))

    def reading(self, image: Image.Image) -> Reading:
        """The page read as it is: its lines in reading order, their text, confidence and words."""
        found, self._found = self._found, None
        lines, self._sample = self._sample, []
        if found is None:
            found = self.engine.detect(image, self.dpi)
        lines = lines + self.engine.recognize(image, [box for box, _ in found], self.options.vertical)
        lines = self.spaced_labels(image, lines)
        ordered = [lines[i] for i in reading_order([line.box for line in lines], [line.vertical for line in lines])]
        page_text = "".join(line.text for line in ordered)
        japanese = len(_KANA.findall(page_text)) >= 3
        texts = [fix_numerals(line.text.translate(_SIMPLIFIED) if japanese else line.text) for line in ordered]
        if "甲" in page_text:
            texts = [fix_parties(text) for text in texts]
        chars = [sum(1 for c in text if not c.isspace()) for text in texts]
        total = sum(chars)
        confidence = (
            round(100 * sum(line.confidence * n for line, n in zip(ordered, chars, strict=True)) / total)
            if total
            else 0
        )
        vertical_chars = sum(n for line, n in zip(ordered, chars, strict=True) if line.vertical)
        words: list[Word] = []
        for number, (line, text) in enumerate(zip(ordered, texts, strict=True)):
            words += line_words(replace(line, text=text), number)
        return Reading(
            joined_lines([line.box for line in ordered], [line.vertical for line in ordered], texts),
            confidence,
            vertical=vertical_chars * 2 > total,
            words=tuple(words),
        )


def spaced_groups(lines: list[ppocr.Line]) -> list[list[int]]:
    """Runs of short Japanese lines side by side on one row, close together: a form's or table's label
    set with wide letter spacing (分　娩　費), which the detection finds one character at a time."""
    short = [
        i
        for i, line in enumerate(lines)
        if not line.vertical and 1 <= len(line.text) <= SPACED_CHARS and all(_CJK_WORD.match(c) for c in line.text)
    ]
    short.sort(key=lambda i: (lines[i].box[1] + lines[i].box[3]) / 2)
    rows: list[list[int]] = []
    for i in short:
        top, bottom = lines[i].box[1], lines[i].box[3]
        if rows:
            last = lines[rows[-1][-1]].box
            shared = min(bottom, last[3]) - max(top, last[1])
            if shared >= 0.6 * min(bottom - top, last[3] - last[1]):
                rows[-1].append(i)
                continue
        rows.append([i])
    groups = []
    for row in rows:
        row.sort(key=lambda i: lines[i].box[0])
        run = [row[0]]
        for i in row[1:]:
            before, after = lines[run[-1]].box, lines[i].box
            height = max(before[3] - before[1], after[3] - after[1])
            if -0.2 * height <= after[0] - before[2] <= SPACED_GAP * height:
                run.append(i)
                continue
            groups.append(run)
            run = [i]
        groups.append(run)
    return [group for group in groups if len(group) > 1]


def _unruled(image: Image.Image, lines: list[ppocr.Line], group: list[int]) -> list[list[int]]:
    """The group cut where a ruled line runs between two of its characters: a table's cell border (the
    label column 保健給付 beside the row labels 外科, 耳鼻科)."""
    import numpy as np

    out = [[group[0]]]
    for i in group[1:]:
        before, after = lines[out[-1][-1]].box, lines[i].box
        top, bottom = max(before[1], after[1]), min(before[3], after[3])
        ruled = False
        if after[0] > before[2] and bottom > top:
            strip = image.crop((before[2], top, after[0], bottom))
            pixels = np.asarray(strip.convert("L"), dtype=np.int16)
            strip.close()
            # Darker than the paper around it (a photographed form's rules are a faint grey)
            dark = pixels < np.median(pixels) - RULE_DARKER
            ruled = bool(dark.size) and float(dark.mean(axis=0).max()) >= RULE_SHARE
        if ruled:
            out.append([i])
        else:
            out[-1].append(i)
    return out


def joined_lines(boxes: list[Box], vertical: list[bool], texts: list[str]) -> str:
    """The lines' texts (in reading order) one a line, but a horizontal line the detection cut in two
    is one: halves on the same row whose boxes touch (less than ``HALVES_GAP`` of a line's height
    apart) are joined, without a space between Japanese characters (3，1の各層ステ|ーション)."""
    out = ""
    previous = None
    for index, text in enumerate(texts):
        if not text.strip():
            continue
        if previous is not None and out:
            out += _separator(boxes[previous], boxes[index], vertical[previous] or vertical[index], out[-1], text[0])
        out += text
        previous = index
    return out


def _separator(before: Box, after: Box, vertical: bool, last: str, first: str) -> str:
    height = min(before[3] - before[1], after[3] - after[1])
    shared = min(before[3], after[3]) - max(before[1], after[1])
    gap = after[0] - before[2]
    if vertical or shared < height / 2 or not -height / 2 < gap < HALVES_GAP * height:
        return "\n"
    return "" if _CJK_CHAR.match(last) or _CJK_CHAR.match(first) else " "


def line_words(line: ppocr.Line, number: int) -> list[Word]:
    """The line's words with their boxes: each kana or kanji alone, Latin words and numbers whole."""
    left, top, right, bottom = line.box
    spans = line.spans if len(line.spans) == len(line.text) else ()
    if not spans:  # the alignment does not match the (corrected) text: the line is one word
        return [((left, top, right, bottom), line.text.strip(), number, line.vertical)] if line.text.strip() else []
    out: list[Word] = []
    run: list[int] = []

    def box(first: int, last: int) -> tuple[int, int, int, int]:
        start, end = round(spans[first][0]), round(spans[last][1])
        return (left, start, right, end) if line.vertical else (start, top, end, bottom)

    def close() -> None:
        if run:
            out.append((box(run[0], run[-1]), "".join(line.text[i] for i in run), number, line.vertical))
            run.clear()

    for i, char in enumerate(line.text):
        if char.isspace():
            close()
        elif _CJK_CHAR.match(char):
            close()
            out.append((box(i, i), char, number, line.vertical))
        else:
            run.append(i)
    close()
    return out


Box = tuple[int, int, int, int]


def reading_order(boxes: list[Box], vertical: list[bool]) -> list[int]:
    """The boxes' indexes in reading order: recursive XY-cut at the widest gap between them."""
    return _cut(list(range(len(boxes))), boxes, vertical)


def _gaps(indexes: list[int], boxes: list[Box], axis: int) -> list[tuple[int, int]]:
    """The empty stretches (start, end) between the boxes' projections on ``axis`` (0: x, 1: y)."""
    spans = sorted((boxes[i][axis], boxes[i][axis + 2]) for i in indexes)
    out = []
    reach = spans[0][1]
    for start, end in spans[1:]:
        if start >= reach:  # touching boxes (an overlap split halfway) are apart
            out.append((reach, start))
        reach = max(reach, end)
    return out


def _cut(indexes: list[int], boxes: list[Box], vertical: list[bool]) -> list[int]:
    if len(indexes) <= 1:
        return indexes
    x_gaps = _gaps(indexes, boxes, 0)
    y_gaps = _gaps(indexes, boxes, 1)
    widest_x = max((end - start for start, end in x_gaps), default=0)
    widest_y = max((end - start for start, end in y_gaps), default=0)
    if not x_gaps and not y_gaps:
        # Overlapping boxes: right to left (columns), or in rows (horizontal lines: a line the
        # detection cut in two, its halves a pixel apart in height, is read left to right).
        if sum(vertical[i] for i in indexes) * 2 > len(indexes):
            return sorted(indexes, key=lambda i: (-boxes[i][2], boxes[i][1]))
        return rows(indexes, boxes)
    # Side-by-side groups need a gutter wider than a line is high: the space between a table's
    # label and its value is not one.
    heights = sorted(boxes[i][3] - boxes[i][1] for i in indexes if not vertical[i])
    line_height = heights[len(heights) // 2] if heights else 0
    columns = sum(vertical[i] for i in indexes) * 2 > len(indexes)
    side_by_side = bool(x_gaps) and (columns or widest_x >= GUTTER_LINES * line_height)
    if side_by_side and (widest_x > widest_y or not y_gaps):
        axis = 0
    elif y_gaps:
        axis = 1
    else:
        return rows(indexes, boxes)
    gaps = x_gaps if axis == 0 else y_gaps
    cuts = [(start + end) / 2 for start, end in gaps]
    groups: list[list[int]] = [[] for _ in range(len(cuts) + 1)]
    for i in indexes:
        centre = (boxes[i][axis] + boxes[i][axis + 2]) / 2
        groups[sum(centre > cut for cut in cuts)].append(i)
    if axis == 0 and columns:
        groups.reverse()  # columns of vertical writing are read right to left
    return [i for group in groups for i in _cut(group, boxes, vertical)]


def rows(indexes: list[int], boxes: list[Box]) -> list[int]:
    """Horizontal lines with no clear gap between them, in rows: a line whose middle lies within the
    row's height joins it (a schedule's label and its date), each row left to right."""
    out: list[list[int]] = []
    for i in sorted(indexes, key=lambda i: (boxes[i][1] + boxes[i][3]) / 2):
        middle = (boxes[i][1] + boxes[i][3]) / 2
        if out and min(boxes[j][1] for j in out[-1]) <= middle <= max(boxes[j][3] for j in out[-1]):
            out[-1].append(i)
        else:
            out.append([i])
    return [i for row in out for i in sorted(row, key=lambda i: boxes[i][0])]
