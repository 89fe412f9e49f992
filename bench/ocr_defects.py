"""OCR on pages as offices scan them, before → after: character error rate and seconds per page per defect class.

    .venv/bin/python -m bench.ocr_defects [--before REF|CHECKOUT|none] [--repeat 2] [--classes upright,fax]

``make bench`` runs it. The corpus is ``tests/fixtures/ocr`` (its ``manifest.json`` gives each
page's text, the words it must yield and its defect class: rotated 90/180/270, skewed, fax
resolution, vertical writing, a page mixing vertical and horizontal writing, PDFs whose text
layer lies, and controls whose text layer must be kept), plus ``--dense`` full A4 business
letters at 300 dpi: the "ordinary upright scans" whose seconds per page say what the defect
checks cost where there is no defect.

*Before* is another version of the OCR code in the same run: a git ref (default: the commit
before issue 26 changed the OCR pipeline; its ``layers/`` are extracted with ``git archive``)
or a checkout's path. Each version reads every page with ``docindex.worker.ocr.process_page``
in a fresh interpreter (its own models loaded once, as a pool process does), alternately
before/after for ``--repeat`` rounds; a page's seconds are its fastest round (the machine is
shared; the fastest is the least disturbed), its text the last round's.

Reported per class: pages, CER before → after (edit distance over the pages' characters after
NFKC and without whitespace, summed over the class), the share of the listed words found, the
pages read from the text layer, and seconds per page before → after. Writes
``bench/ocr_defects.json`` and its summary into ``bench/results.json`` (``ocr_defects``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.report import save_section
from devkit.ocr_defects import SCANNED_CLASSES, TEXT_LAYER_CLASSES

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
# The last commit before issue 26 (orientation, skew, fax resolution, text-layer judge, vertical
# writing): what "before" means unless --before says otherwise.
BEFORE_ISSUE_26 = "899d1d26f56e1d2ac3a8e8e909d97d95bff4ed74"
DENSE_CLASS = "upright_dense"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the pages -----------------------------------------------------------------------


def corpus(classes: set[str], dense: int, workdir: Path) -> list[dict[str, Any]]:
    """Every page to read: the fixture corpus and ``dense`` generated A4 letters."""
    from devkit.ocr_defects import load_manifest

    files: list[dict[str, Any]] = []
    for entry in load_manifest():
        if classes and entry.defect not in classes:
            continue
        files.append(
            {
                "name": entry.name,
                "defect": entry.defect,
                "kind": entry.kind,
                "path": str(entry.path),
                "pages": [{"truth": p.truth, "words": list(p.words), "read": p.read} for p in entry.pages],
            }
        )
    if dense and (not classes or DENSE_CLASS in classes):
        from bench.corpus import scan_pages
        from devkit.samples import make_scan_png

        for number, lines in enumerate(scan_pages(7, dense)):
            path = workdir / f"dense-{number}.png"
            path.write_bytes(make_scan_png(lines, dpi=300))
            files.append(
                {
                    "name": path.name,
                    "defect": DENSE_CLASS,
                    "kind": "image",
                    "path": str(path),
                    "pages": [{"truth": "\n".join(lines), "words": [], "read": "ocr"}],
                }
            )
    return files


# -- one version's reading (child process) ----------------------------------------------


def read_all(files: list[dict[str, Any]]) -> dict[str, Any]:
    """Every page through ``process_page`` of the ``docindex`` first on the path (in this process)."""
    from docindex.worker import ocr

    ocr.init_process()
    options = ocr.OcrOptions()
    setup = ocr.check_setup(options)
    if setup.missing:
        raise SystemExit(f"Tesseract models missing: {setup.missing}")
    out: dict[str, Any] = {}
    for item in files:
        info = ocr.probe(item["path"], item["kind"], options)
        pages = []
        for index in range(min(info.page_count, len(item["pages"]))):
            started = time.perf_counter()
            page = ocr.process_page(item["path"], item["kind"], index, options)
            pages.append(
                {
                    "seconds": time.perf_counter() - started,
                    "text": page.text,
                    "source": page.source,
                    "confidence": page.confidence,
                    "error": page.error,
                }
            )
        out[item["name"]] = {"error": info.error, "pages": pages}
    return out


def child(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    Path(out_path).write_text(json.dumps(read_all(spec["files"]), ensure_ascii=False), encoding="utf-8")
    return 0


# -- versions ---------------------------------------------------------------------------


def layer_of(before: str, workdir: Path) -> Path:
    """The ``layers/docindex`` directory of a checkout path or of a git ref (extracted with git archive)."""
    candidate = Path(before)
    if candidate.is_dir():
        return candidate.resolve() / "layers" / "docindex"
    target = workdir / "before"
    target.mkdir()
    archive = workdir / "before.tar"
    with archive.open("wb") as out:
        subprocess.run(  # noqa: S603 - git on this repository, a ref the developer gave
            ["git", "-C", str(REPO), "archive", before, "layers/docindex"],  # noqa: S607
            check=True,
            stdout=out,
        )
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target / "layers" / "docindex"


def run_child(
    module: str, spec: dict[str, Any], workdir: Path, name: str, layer: Path | None, *, interpreter: str | None = None
) -> dict[str, Any]:
    """``python -m MODULE --child SPEC OUT`` (one reading in a fresh process, Tesseract on one thread), on
    the code of ``layer`` (a ``layers/docindex``) if given, by ``interpreter`` if given (another Python,
    e.g. an aarch64 one under qemu, that has the packages but not docindex); what the child wrote."""
    spec_path = workdir / f"{name}-spec.json"
    out = workdir / f"{name}-out.json"
    spec_path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    if layer is not None or interpreter is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(layer or REPO / "layers" / "docindex"), str(REPO)])
    started = time.perf_counter()
    subprocess.run(  # noqa: S603 - our interpreter (or the one the developer gave), our module
        [interpreter or sys.executable, "-m", module, "--child", str(spec_path), str(out)],
        cwd=REPO,
        env=env,
        check=True,
    )
    log(f"  {name:<14} {time.perf_counter() - started:6.1f} s")
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def run_version(layer: Path, files: list[dict[str, Any]], workdir: Path, name: str) -> dict[str, Any]:
    return run_child("bench.ocr_defects", {"files": files}, workdir, name, layer)


def merge_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The last round's texts with each page's fastest seconds."""
    merged: dict[str, Any] = json.loads(json.dumps(rounds[-1]))
    for name, item in merged.items():
        for index, page in enumerate(item["pages"]):
            page["seconds"] = min(r[name]["pages"][index]["seconds"] for r in rounds if index < len(r[name]["pages"]))
    return merged


# -- figures ----------------------------------------------------------------------------


def _normal(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def class_figures(files: list[dict[str, Any]], reading: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per defect class: CER, words found, text-layer pages, seconds per page."""
    from devkit.samples.accuracy import char_errors

    acc: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"pages": 0, "errors": 0, "chars": 0, "words": 0, "found": 0, "text_layer": 0, "seconds": []}
    )
    for item in files:
        got = reading.get(item["name"], {"pages": []})
        for index, page in enumerate(item["pages"]):
            figures = acc[item["defect"]]
            figures["pages"] += 1
            read = got["pages"][index] if index < len(got["pages"]) else {"text": "", "seconds": 0.0, "source": "none"}
            if page["truth"]:
                errors, chars = char_errors(page["truth"], read["text"])
                figures["errors"] += errors
                figures["chars"] += chars
            text = _normal(read["text"])
            figures["words"] += len(page["words"])
            figures["found"] += sum(_normal(word) in text for word in page["words"])
            figures["text_layer"] += read["source"] == "text_layer"
            figures["seconds"].append(read["seconds"])
    out = {}
    for defect, figures in acc.items():
        out[defect] = {
            "pages": figures["pages"],
            "cer": round(figures["errors"] / figures["chars"], 4) if figures["chars"] else None,
            "words_found": f"{figures['found']}/{figures['words']}",
            "text_layer_pages": figures["text_layer"],
            "s_per_page": round(statistics.mean(figures["seconds"]), 3) if figures["seconds"] else None,
        }
    return out


def _upright_seconds(figures: dict[str, dict[str, Any]]) -> float | None:
    rows = [figures[name] for name in (DENSE_CLASS, "upright") if name in figures]
    pages = sum(row["pages"] for row in rows)
    if not pages:
        return None
    return sum(row["s_per_page"] * row["pages"] for row in rows) / pages


def summary(files: list[dict[str, Any]], before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any]:
    after_figures = class_figures(files, after)
    before_figures = class_figures(files, before) if before is not None else {}
    out: dict[str, Any] = {"classes": {}}
    for defect in sorted(after_figures, key=_class_order):
        out["classes"][defect] = {"before": before_figures.get(defect), "after": after_figures[defect]}
    upright_after = _upright_seconds(after_figures)
    upright_before = _upright_seconds(before_figures) if before_figures else None
    if upright_after and upright_before:
        out["upright_overhead"] = round(upright_after / upright_before - 1, 3)
    return out


_ORDER = (DENSE_CLASS, *SCANNED_CLASSES, *TEXT_LAYER_CLASSES)


def _class_order(name: str) -> tuple[int, str]:
    return (_ORDER.index(name) if name in _ORDER else len(_ORDER), name)


def render(result: dict[str, Any]) -> str:
    def pair(row: dict[str, Any], key: str, fmt: str) -> str:
        after = row["after"][key]
        shown = "—" if after is None else format(after, fmt) if fmt else str(after)
        if row["before"] is None:
            return shown
        before = row["before"][key]
        return f"{'—' if before is None else format(before, fmt) if fmt else before} → {shown}"

    lines = [
        "OCR by defect class (tests/fixtures/ocr + generated dense A4 letters), before → after",
        f"{'class':<16}{'pages':>6}  {'CER':<17}{'words found':<15}{'text layer':<12}{'s/page':<15}",
    ]
    for defect, row in result["classes"].items():
        lines.append(
            f"{defect:<16}{row['after']['pages']:>6}  {pair(row, 'cer', '.3f'):<17}"
            f"{pair(row, 'words_found', ''):<15}{pair(row, 'text_layer_pages', ''):<12}"
            f"{pair(row, 's_per_page', '.2f'):<15}"
        )
    if "upright_overhead" in result:
        lines.append(
            f"upright scans (dense A4 + upright class): s/page {result['upright_overhead']:+.1%} after vs before"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench.ocr_defects", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--before", default=BEFORE_ISSUE_26, help="git ref or checkout path of the OCR code to compare with, or 'none'"
    )
    parser.add_argument("--repeat", type=int, default=2, help="rounds per version, alternated (default 2)")
    parser.add_argument(
        "--dense", type=int, default=3, help="generated dense A4 letters for the upright figure (default 3)"
    )
    parser.add_argument("--classes", default="", help="comma-separated defect classes (default: all)")
    parser.add_argument("--out", type=Path, default=BENCH / "ocr_defects.json")
    parser.add_argument("--results", type=Path, default=BENCH / "results.json")
    parser.add_argument("--child", nargs=2, metavar=("SPEC", "OUT"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child(*args.child)
    classes = set(filter(None, args.classes.split(",")))
    with tempfile.TemporaryDirectory(prefix="docindex-ocr-defects-") as tmp:
        workdir = Path(tmp)
        files = corpus(classes, args.dense, workdir)
        log(f"OCR defects: {len(files)} files, {sum(len(f['pages']) for f in files)} pages, {args.repeat} round(s)")
        versions = {"after": REPO / "layers" / "docindex"}
        if args.before != "none":
            versions = {"before": layer_of(args.before, workdir), **versions}
        rounds: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for number in range(args.repeat):
            for name, layer in versions.items():
                rounds[name].append(run_version(layer, files, workdir, f"{name}-{number}"))
    readings = {name: merge_rounds(found) for name, found in rounds.items()}
    result = summary(files, readings.get("before"), readings["after"])
    result["before"] = args.before
    result["repeat"] = args.repeat
    args.out.write_text(
        json.dumps({"summary": result, "files": files, "readings": readings}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    save_section(args.results, "ocr_defects", result)
    print(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
