"""Which way up is a Japanese page? Tesseract's OSD against reading the four turns, on the defect corpus.

    .venv/bin/python -m bench.ocr_orientation

``make bench`` runs it. Issue 26 asked to measure OSD (known to be weak on CJK) against the
alternative of recognizing the four rotations of a downscaled page and keeping the most confident,
and to choose by accuracy and cost. The pages: the corpus's upright, sideways, upside-down and
skewed scans, plus every upright Japanese page of it turned by 90, 180 and 270 degrees here. For
each method, how often it names the turn that makes the page upright, and its seconds per page:

- ``osd@150`` / ``osd@300``: Tesseract OSD on a 150 dpi copy / at the OCR resolution;
- ``osd@150+deskew``: OSD on the 150 dpi copy after the skew is measured and taken out (what
  docindex does, ``worker/geometry.py``);
- ``four-turns@150``: the page read at 150 dpi as it is, kept if plausible (the early stop), else
  in its four turns, the most confident kept;
- ``docindex``: the first reading's confidence as the early stop (an upright page costs
  nothing), then deskewed OSD: the seconds are what this adds to the first reading.

Writes its figures into ``bench/results.json`` (``ocr_orientation``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.report import save_section

BENCH = Path(__file__).resolve().parent
# The counter-clockwise turn that makes each corpus page upright.
EXPECTED = {
    "upright-notice.tif": 0,
    "tesseract-phototest.tif": 0,
    "tesseract-eurotext.tif": 0,
    "vertical-minutes.tif": 0,
    "vertical-mixed-notice.tif": 0,
    "skew4-notice-photo.jpg": 0,
    "skew8-notice.tif": 0,
    "skew-12-notice.png": 0,
    "tika-testRotated+10.tif": 0,
    "fax-204x98-notice.tif": 0,
    "rotated90-notice.tif": 270,
    "rotated180-notice.png": 180,
    "rotated270-minutes-vertical.tif": 90,
    "tesseract-phototest-rotated-L.png": 270,
    "tesseract-phototest-rotated-R.png": 90,
    "tesseract-phototest-rotated-180.png": 180,
}
TURNED_HERE = ("upright-notice.tif", "vertical-minutes.tif", "vertical-mixed-notice.tif", "fax-204x98-notice.tif")


def pages() -> list[tuple[str, Any, int, int]]:
    """(name, image, dpi, expected turn) for every page measured."""
    from PIL import Image

    from devkit.ocr_defects import FIXTURES
    from docindex.worker import ocr, rasterize

    options = ocr.OcrOptions()
    out = []
    for name, expected in EXPECTED.items():
        image, dpi = rasterize.image_page(str(FIXTURES / name), 0, options)
        out.append((name, image, dpi, expected))
        if name in TURNED_HERE:
            for turn, transpose in ((90, Image.Transpose.ROTATE_90), (180, Image.Transpose.ROTATE_180)):
                out.append((f"{name} turned {turn}", image.transpose(transpose), dpi, (360 - turn) % 360))
            out.append((f"{name} turned 270", image.transpose(Image.Transpose.ROTATE_270), dpi, 90))
    return out


def measure() -> dict[str, Any]:
    from PIL import Image

    from docindex.worker import geometry, ocr, tesseract
    from docindex.worker.recognize import PLAUSIBLE_CONFIDENCE, PageReader

    os.environ["OMP_THREAD_LIMIT"] = "1"
    options = ocr.OcrOptions()
    ocr.check_setup(options)
    tessdata = tesseract.find_tessdata(None)

    def engines(languages: str, psm: int) -> Any:
        return tesseract.engine(languages, psm, tessdata)

    def reader(dpi: int) -> PageReader:
        return PageReader(options, engines, dpi)

    def osd(image: Any, dpi: int, target: int) -> int:
        small = geometry._small(image, dpi, target)
        try:
            return geometry.detect_orientation(engines("osd", 0), small, min(dpi, target))[0]
        finally:
            small.close()

    def osd_deskewed(image: Any, dpi: int) -> int:
        return reader(dpi).upright(image).rotation

    def four_turns(image: Any, dpi: int) -> int:
        # The page as it is first, kept if it reads plausibly (the early stop); else the most confident
        # turn, the smaller turn on a tie.
        small = geometry._small(image, dpi, 150)
        best = (-1, 0)
        for turn in (0, 90, 180, 270):
            turned = small if turn == 0 else geometry.apply(small, geometry.Correction(rotation=turn))
            reading = reader(150).auto(turned)
            confidence = reading.confidence if reading else -1
            if turn == 0 and confidence >= PLAUSIBLE_CONFIDENCE:
                return 0
            best = max(best, (confidence, -turn))
        return -best[1]

    def docindex(image: Any, dpi: int, first_confidence: int) -> int:
        if first_confidence >= PLAUSIBLE_CONFIDENCE:
            return 0
        return osd_deskewed(image, dpi)

    methods = {
        "osd@150": lambda image, dpi, _: osd(image, dpi, 150),
        "osd@300": lambda image, dpi, _: osd(image, dpi, 300),
        "osd@150+deskew": lambda image, dpi, _: osd_deskewed(image, dpi),
        "four-turns@150": lambda image, dpi, _: four_turns(image, dpi),
        "docindex": docindex,
    }
    right: dict[str, int] = defaultdict(int)
    seconds: dict[str, list[float]] = defaultdict(list)
    wrong: dict[str, list[str]] = defaultdict(list)
    measured = pages()
    for name, image, dpi, expected in measured:
        first = reader(dpi).auto(image)
        confidence = first.confidence if first else 0
        for method, run in methods.items():
            started = time.perf_counter()
            found = run(image, dpi, confidence)
            seconds[method].append(time.perf_counter() - started)
            if found == expected:
                right[method] += 1
            else:
                wrong[method].append(f"{name}: {found} for {expected}")
        if isinstance(image, Image.Image):
            image.close()
    return {
        "pages": len(measured),
        "methods": {
            method: {
                "right": right[method],
                "accuracy": round(right[method] / len(measured), 3),
                "mean_s": round(statistics.mean(seconds[method]), 3),
                "wrong": wrong[method],
            }
            for method in methods
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.ocr_orientation", description=__doc__)
    parser.add_argument("--results", type=Path, default=BENCH / "results.json")
    args = parser.parse_args(argv)
    result = measure()
    save_section(args.results, "ocr_orientation", result)
    print(f"Orientation on {result['pages']} pages (the turn that makes each upright)")
    print(f"{'method':<18}{'right':>8}{'accuracy':>10}{'s/page':>9}")
    for method, row in result["methods"].items():
        print(f"{method:<18}{row['right']:>8}{row['accuracy']:>10.3f}{row['mean_s']:>9.3f}")
        for miss in row["wrong"]:
            print(f"    wrong: {miss}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
