"""The two OCR engines side by side on real Japanese pages: CER, words found, seconds per page, memory.

    .venv/bin/python -m bench.ocr_engines [--repeat 2] [--corpus real,defects,dense] [--classes old_print,fax]
                                          [--before REF] [--files a.jpg,b.tif] [--arm64 PYTHON]

``make bench`` runs it. The pages: ``tests/fixtures/ocr_real`` (real Japanese pages nobody on the
team made, their text written down: typewriting, old print, vertical writing, photos of paper, a
form, handwriting, a sign, a page faxed) and the defect corpus ``tests/fixtures/ocr`` (sideways,
skewed, fax resolution, vertical, lying text layers), and ``--dense`` generated A4 business letters
at 300 dpi (class ``upright_dense``: the ordinary upright page whose cost the engine's budget is
about). Each engine (``OCR_ENGINE=tesseract``, today's pipeline before issue 34, and ``ppocr``)
reads every page with ``docindex.worker.ocr.process_page`` in a fresh interpreter of its own (its
models loaded once, as a pool process does), the engines alternating for ``--repeat`` rounds; a
page's seconds are its fastest round (wall and the process's CPU time: the machine is shared), its
text the last round's; a process's peak memory is its VmHWM.

``--before REF`` adds a third reader in the same rounds: ``ppocr`` on the OCR code of a git ref
(its ``layers/docindex`` extracted with ``git archive``) or a checkout's path, so a change to the
engine is reported before → after next to Tesseract. ``--int8`` adds ``ppocr`` with its recogniser
quantized to int8 (``int8_models``: built in the run's temporary directory from the pinned wheel's
model, calibrated on generated pages; docs/performance.md, issue 44).

``--arm64 PYTHON`` reads the pages with ``ppocr`` twice, by this interpreter and by an aarch64 one
(``make check-ocr-arm64``: a Debian CPython under ``qemu-aarch64`` with the aarch64 wheels of the
worker's pins), and reports page by page whether arm64 read the text x86 read (``arm64_pages``);
it exits 1 when a page differs beyond ``ARM64_TOLERANCE``. qemu's seconds are not Graviton's.

Reported per class: pages, CER tesseract → ppocr (edit distance over the class's characters after
NFKC, whitespace ignored), words found, seconds per page (CPU), and per engine the peak memory of
its process. Writes ``bench/ocr_engines.json`` and a summary into ``bench/results.json``
(``ocr_engines``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.ocr_defects import DENSE_CLASS, _class_order, _normal, layer_of, merge_rounds, run_child
from bench.report import save_section

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
ENGINES = ("tesseract", "ppocr")
# The reader of --before: PP-OCR on another version of the code.
BEFORE = "ppocr_before"
# The reader of --int8: PP-OCR with its recogniser quantized to int8.
INT8 = "ppocr_int8"
# The reader of --arm64: PP-OCR by an aarch64 interpreter (under qemu).
ARM64 = "ppocr_arm64"
# arm64 may read a page other than x86 by at most this share of x86's characters (edit distance
# between the two readings), and never lose a word x86 found. ONNX Runtime's arm64 kernels (NEON,
# MLAS's own GEMM blocking) add a convolution's products in another order than its AVX2 ones: the
# same model gives probabilities a few ulps apart, which flips a character whose two best readings
# are that close, or a detection pixel on the threshold; an identical text is expected on most pages.
ARM64_TOLERANCE = 0.01
# The arm64 reader's page budget (OCR_PAGE_TIMEOUT_SECONDS) times this: qemu runs ONNX Runtime's kernels
# ~300x slower, and a page over its budget is not looked at again turned (a sideways page stayed sideways).
QEMU_SLOWDOWN = 1000


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def corpus(
    which: set[str], classes: set[str], dense: int = 0, workdir: Path | None = None, names: set[str] | None = None
) -> list[dict[str, Any]]:
    """The pages to read: the real pages, the defect corpus (each file with its class and truth; only the
    files ``names`` if given) and ``dense`` generated A4 letters written into ``workdir``."""
    from devkit.ocr_defects import MANIFEST, REAL_PAGES, load_manifest

    files = []
    for name, manifest in (("real", REAL_PAGES), ("defects", MANIFEST)):
        if name not in which:
            continue
        for entry in load_manifest(manifest):
            if (classes and entry.defect not in classes) or (names and entry.name not in names):
                continue
            files.append(
                {
                    "name": entry.name,
                    "corpus": name,
                    "class": entry.defect if name == "real" else f"defects/{entry.defect}",
                    "kind": entry.kind,
                    "path": str(entry.path),
                    "pages": [{"truth": p.truth, "words": list(p.words), "read": p.read} for p in entry.pages],
                }
            )
    if "dense" in which and dense and workdir is not None and (not classes or DENSE_CLASS in classes):
        from bench.corpus import scan_pages
        from devkit.samples import make_scan_png

        for number, lines in enumerate(scan_pages(7, dense)):
            path = workdir / f"dense-{number}.png"
            path.write_bytes(make_scan_png(lines, dpi=300))
            files.append(
                {
                    "name": path.name,
                    "corpus": "dense",
                    "class": DENSE_CLASS,
                    "kind": "image",
                    "path": str(path),
                    "pages": [{"truth": "\n".join(lines), "words": [], "read": "ocr"}],
                }
            )
    return files


# -- one engine's reading (child process) ------------------------------------------------


def read_all(
    files: list[dict[str, Any]], engine: str, model_dir: str | None = None, page_timeout: float | None = None
) -> dict[str, Any]:
    """Every page through ``process_page`` with ``engine`` (PP-OCR's models from ``model_dir``, and a
    page's time budget ``page_timeout`` if given), in this process; its peak memory."""
    from dataclasses import replace

    from docindex.worker import ocr
    from docindex.worker.options import OcrOptions

    ocr.init_process()
    options = OcrOptions(engine=engine, model_dir=model_dir)  # type: ignore[arg-type]
    if page_timeout is not None:
        options = replace(options, page_timeout_seconds=page_timeout)
    setup = ocr.check_setup(options)
    if setup.missing or setup.missing_models:
        raise SystemExit(f"models missing: {setup.missing} {setup.missing_models}")
    import onnxruntime

    out: dict[str, Any] = {
        "files": {},
        "loaded_mib": _peak_mib(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
    }
    for item in files:
        info = ocr.probe(item["path"], item["kind"], options)
        pages = []
        for index in range(min(info.page_count, len(item["pages"]))):
            started, cpu = time.perf_counter(), time.process_time()
            page = ocr.process_page(item["path"], item["kind"], index, options)
            pages.append(
                {
                    "seconds": time.perf_counter() - started,
                    "cpu": time.process_time() - cpu,
                    "text": page.text,
                    "source": page.source,
                    "confidence": page.confidence,
                    "rotation": page.rotation,
                    "error": page.error,
                }
            )
        out["files"][item["name"]] = {"error": info.error, "pages": pages}
    out["peak_mib"] = _peak_mib()
    return out


def _peak_mib() -> int:
    """The process's peak resident memory (VmHWM), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def child(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    result = read_all(spec["files"], spec["engine"], spec.get("model_dir"), spec.get("page_timeout"))
    Path(out_path).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return 0


def run_engine(
    engine: str,
    files: list[dict[str, Any]],
    workdir: Path,
    name: str,
    layer: Path | None = None,
    *,
    model_dir: Path | None = None,
    interpreter: str | None = None,
) -> dict[str, Any]:
    """``engine`` reading ``files`` in a child process; on the code of ``layer`` (a ``layers/docindex``),
    with PP-OCR's models from ``model_dir`` and by ``interpreter`` if given."""
    spec: dict[str, Any] = {"files": files, "engine": engine}
    if model_dir is not None:
        spec["model_dir"] = str(model_dir)
    if interpreter is not None:
        from docindex.worker.options import OcrOptions

        spec["page_timeout"] = OcrOptions().page_timeout_seconds * QEMU_SLOWDOWN
    return run_child("bench.ocr_engines", spec, workdir, name, layer, interpreter=interpreter)


# -- int8 (--int8) ---------------------------------------------------------------------

# The recogniser's Conv layers quantized, but the first four and the last two (the input's and the
# head's: with them quantized too, words of old print and faxes were lost), per channel, 7-bit
# weights (reduce_range: x86 without VNNI saturates 8-bit products, CER 0.060 -> 0.128).
INT8_KEEP_FIRST, INT8_KEEP_LAST = 4, 2
# Calibration: generated pages (none of them in the bench), plain, copied, photographed and faxed.
INT8_CALIBRATION_SEED = 4401


def int8_models(workdir: Path) -> Path:
    """A model directory (``OCR_MODEL_DIR``) with the pinned wheel's detection model and its recogniser
    quantized to int8 by ONNX Runtime's static (QDQ) quantization, calibrated on generated pages."""
    import shutil

    import onnx
    import onnxruntime as ort
    from onnx import version_converter
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from docindex.worker import ppocr

    source = ppocr.model_dir()
    target = workdir / "int8"
    for name in (ppocr.DET_MODEL, ppocr.DICTIONARY):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    model = onnx.load(source / ppocr.REC_MODEL)
    if model.opset_import[0].version < 13:  # per-channel scales need opset 13
        model = version_converter.convert_version(model, 13)
    onnx.save(model, workdir / "rec-13.onnx")
    quant_pre_process(str(workdir / "rec-13.onnx"), str(workdir / "rec-pre.onnx"), skip_symbolic_shape=True)
    # GELU fused before quantizing (quantized, its parts ran one by one: a third of the time);
    # Conv+activation not fused, or the quantizer leaves those Convs in float.
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(workdir / "rec-fused.onnx")
    ort.InferenceSession(
        str(workdir / "rec-pre.onnx"), options, ["CPUExecutionProvider"], disabled_optimizers=["ConvActivationFusion"]
    )
    convs = [node.name for node in onnx.load(workdir / "rec-fused.onnx").graph.node if node.op_type == "Conv"]
    batches = iter(calibration_batches())

    class Reader(CalibrationDataReader):
        def get_next(self) -> dict[str, Any] | None:
            batch = next(batches, None)
            return None if batch is None else {"x": batch}

    (target / ppocr.REC_MODEL).parent.mkdir(parents=True, exist_ok=True)
    quantize_static(
        str(workdir / "rec-fused.onnx"),
        str(target / ppocr.REC_MODEL),
        Reader(),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        reduce_range=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["Conv"],
        nodes_to_exclude=convs[:INT8_KEEP_FIRST] + convs[-INT8_KEEP_LAST:],
    )
    return target


def calibration_batches() -> list[Any]:
    """The recogniser's inputs (line batches) on generated pages, as the worker's reader feeds them."""
    from bench.corpus import scan_pages
    from devkit.ocr_defects import copier, fax, photo
    from devkit.samples.scans import render_scan_page
    from docindex.worker import ppocr, rasterize
    from docindex.worker.options import OcrOptions
    from docindex.worker.ppocr_reader import PageReader

    options = OcrOptions()
    engine = ppocr.engine(options.model_dir, options.engine_threads)
    batches: list[Any] = []
    session, run = engine.rec, engine.rec.run

    def record(names: Any, feed: dict[str, Any], *args: Any) -> Any:
        batches.append(next(iter(feed.values())).copy())
        return run(names, feed, *args)

    pages = []
    for number, lines in enumerate(scan_pages(INT8_CALIBRATION_SEED, 8)):
        image = render_scan_page(lines, 300, vertical=number % 3 == 2)
        kind = number % 4
        if kind == 1:
            image = copier(image, dpi=300, seed=number).convert("L")
        elif kind == 2:
            image = photo(image, dpi=300, angle=2.0).convert("L")
        elif kind == 3:
            image = fax(image, dpi=300, xdpi=204, ydpi=98).convert("L")
            pages.append(rasterize.scale_to(image, (204, 98), options))
            continue
        pages.append((image, 300 if kind != 2 else 200))
    session.run = record
    try:
        for image, dpi in pages:
            PageReader(options, dpi, None).read(image)
    finally:
        session.run = run
    return batches


# -- figures ----------------------------------------------------------------------------


def figures(files: list[dict[str, Any]], reading: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per class: pages, CER, words found, seconds per page (wall and CPU)."""
    from devkit.samples.accuracy import char_errors

    acc: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"pages": 0, "errors": 0, "chars": 0, "words": 0, "found": 0, "seconds": [], "cpu": []}
    )
    for item in files:
        got = reading.get(item["name"], {"pages": []})
        for index, page in enumerate(item["pages"]):
            row = acc[item["class"]]
            row["pages"] += 1
            empty = {"text": "", "seconds": 0.0, "cpu": 0.0}
            read = got["pages"][index] if index < len(got["pages"]) else empty
            if page["truth"]:
                errors, chars = char_errors(page["truth"], read["text"])
                row["errors"] += errors
                row["chars"] += chars
            text = _normal(read["text"])
            row["words"] += len(page["words"])
            row["found"] += sum(_normal(word) in text for word in page["words"])
            row["seconds"].append(read["seconds"])
            row["cpu"].append(read["cpu"])
    out = {}
    for name, row in acc.items():
        out[name] = {
            "pages": row["pages"],
            "errors": row["errors"],
            "chars": row["chars"],
            "cer": round(row["errors"] / row["chars"], 4) if row["chars"] else None,
            "found": row["found"],
            "words": row["words"],
            "s_per_page": round(sum(row["seconds"]) / len(row["seconds"]), 3),
            "cpu_per_page": round(sum(row["cpu"]) / len(row["cpu"]), 3),
        }
    return out


def _total(rows: dict[str, dict[str, Any]], prefix: str) -> dict[str, Any]:
    if prefix == DENSE_CLASS:
        chosen = [rows[DENSE_CLASS]] if DENSE_CLASS in rows else []
    else:
        chosen = [
            row
            for name, row in rows.items()
            if name != DENSE_CLASS and name.startswith("defects/") == (prefix == "defects/")
        ]
    errors, chars = sum(r["errors"] for r in chosen), sum(r["chars"] for r in chosen)
    pages = sum(r["pages"] for r in chosen)
    return {
        "pages": pages,
        "cer": round(errors / chars, 4) if chars else None,
        "found": sum(r["found"] for r in chosen),
        "words": sum(r["words"] for r in chosen),
        "cpu_per_page": round(sum(r["cpu_per_page"] * r["pages"] for r in chosen) / pages, 3) if pages else None,
        "s_per_page": round(sum(r["s_per_page"] * r["pages"] for r in chosen) / pages, 3) if pages else None,
    }


def _order(name: str) -> tuple[int, tuple[int, str]]:
    group = 0 if name == DENSE_CLASS else 2 if name.startswith("defects/") else 1
    return (group, _class_order(name.rsplit("/", maxsplit=1)[-1]))


def summary(files: list[dict[str, Any]], readings: dict[str, dict[str, Any]]) -> dict[str, Any]:
    readers = [reader for reader in (ENGINES[0], BEFORE, INT8, ENGINES[1]) if reader in readings]
    per_reader = {reader: figures(files, readings[reader]["files"]) for reader in readers}
    out: dict[str, Any] = {"readers": readers, "classes": {}, "totals": {}, "peak_mib": {}}
    for name in sorted(per_reader["ppocr"], key=_order):
        out["classes"][name] = {reader: per_reader[reader][name] for reader in readers}
    for label, prefix in (("real pages", ""), ("defect corpus", "defects/"), ("dense A4", DENSE_CLASS)):
        if label == "dense A4" and DENSE_CLASS not in per_reader["ppocr"]:
            continue
        out["totals"][label] = {reader: _total(per_reader[reader], prefix) for reader in readers}
    for reader in readers:
        out["peak_mib"][reader] = {
            "after_loading": readings[reader]["loaded_mib"],
            "peak": readings[reader]["peak_mib"],
        }
    # The budget (issue 34): PP-OCR's CPU seconds on ordinary upright pages over Tesseract's.
    upright = [n for n in (DENSE_CLASS, "modern_print", "defects/upright") if n in out["classes"]]
    if upright:
        out["upright_ratio"] = {}
        for reader in readers[1:]:
            ppocr_cpu = sum(
                out["classes"][n][reader]["cpu_per_page"] * out["classes"][n][reader]["pages"] for n in upright
            )
            tess_cpu = sum(
                out["classes"][n][ENGINES[0]]["cpu_per_page"] * out["classes"][n][ENGINES[0]]["pages"] for n in upright
            )
            out["upright_ratio"][reader] = round(ppocr_cpu / tess_cpu, 2) if tess_cpu else None
        out["upright_classes"] = upright
    return out


# -- arm64 (--arm64) --------------------------------------------------------------------


def arm64_pages(files: list[dict[str, Any]], readings: dict[str, Any]) -> list[dict[str, Any]]:
    """Page by page, x86's reading (``ppocr``) against arm64's (``ARM64``): text identical or how far
    apart, each one's CER against the transcription, words found, the words x86 found and arm64 did not,
    the turn, and what is wrong beyond ``ARM64_TOLERANCE`` (``problems``)."""
    from devkit.samples.accuracy import char_errors

    out = []
    empty: dict[str, Any] = {"text": "", "cpu": 0.0, "rotation": 0, "error": "not read"}
    for item in files:
        x86_pages = readings["ppocr"]["files"].get(item["name"], {"pages": []})["pages"]
        arm_pages = readings[ARM64]["files"].get(item["name"], {"pages": []})["pages"]
        for index, page in enumerate(item["pages"]):
            x86 = x86_pages[index] if index < len(x86_pages) else empty
            arm = arm_pages[index] if index < len(arm_pages) else empty
            apart, chars = char_errors(x86["text"], arm["text"])
            row: dict[str, Any] = {
                "name": item["name"] + (f" p{index + 1}" if len(item["pages"]) > 1 else ""),
                "class": item["class"],
                "identical": x86["text"] == arm["text"],
                "apart": round(apart / max(1, chars), 4),
                "words": len(page["words"]),
                "rotation": [x86["rotation"], arm["rotation"]],
                "cpu": [round(x86["cpu"], 2), round(arm["cpu"], 2)],
            }
            for reader, read in (("x86", x86), ("arm64", arm)):
                errors, total = char_errors(page["truth"], read["text"]) if page["truth"] else (0, 0)
                row[f"cer_{reader}"] = round(errors / total, 4) if total else None
                row[f"found_{reader}"] = [w for w in page["words"] if _normal(w) in _normal(read["text"])]
            row["lost"] = [w for w in row["found_x86"] if w not in row["found_arm64"]]
            problems = []
            if row["apart"] > ARM64_TOLERANCE:
                problems.append(f"text {row['apart']:.3f} apart")
            if row["lost"]:
                problems.append(f"lost {', '.join(row['lost'])}")
            if x86["rotation"] != arm["rotation"]:
                problems.append(f"turned {x86['rotation']} on x86, {arm['rotation']} on arm64")
            if x86.get("error") != arm.get("error"):
                problems.append(f"error {x86.get('error')} on x86, {arm.get('error')} on arm64")
            row["problems"] = problems
            out.append(row)
    return out


def render_arm64(rows: list[dict[str, Any]], readings: dict[str, Any], cpu_model: str) -> str:
    arm = readings[ARM64]
    lines = [
        f"PP-OCR on x86 ({readings['ppocr']['machine']}) and on arm64 ({arm['machine']}, Python {arm['python']}, "
        f"onnxruntime {arm['onnxruntime']}, qemu -cpu {cpu_model}); CPU s/page on arm64 is qemu's, not Graviton's",
        f"{'page':<40}{'class':<22}{'text':<18}{'CER x86 / arm64':<18}{'words x86 / arm64':<19}CPU s x86 / qemu",
    ]
    for row in rows:
        text = "identical" if row["identical"] else f"{row['apart']:.3f} apart"
        cer = " / ".join("—" if row[k] is None else f"{row[k]:.3f}" for k in ("cer_x86", "cer_arm64"))
        words = f"{len(row['found_x86'])}/{row['words']} / {len(row['found_arm64'])}/{row['words']}"
        problems = f"  FAIL: {'; '.join(row['problems'])}" if row["problems"] else ""
        lines.append(
            f"{row['name']:<40}{row['class']:<22}{text:<18}{cer:<18}{words:<19}"
            f"{row['cpu'][0]:.2f} / {row['cpu'][1]:.1f}{problems}"
        )
    same = sum(row["identical"] for row in rows)
    found = [sum(len(row[f"found_{r}"]) for row in rows) for r in ("x86", "arm64")]
    words = sum(row["words"] for row in rows)
    lines.append(
        f"{same}/{len(rows)} pages identical; words found x86 {found[0]}/{words}, arm64 {found[1]}/{words}; "
        f"peak memory x86 {readings['ppocr']['peak_mib']} MiB, arm64 (qemu) {arm['peak_mib']} MiB"
    )
    return "\n".join(lines)


def render(result: dict[str, Any]) -> str:
    readers = result.get("readers", list(ENGINES))

    def chain(row: dict[str, Any], key: str, fmt: str) -> str:
        return " → ".join("—" if row[r][key] is None else format(row[r][key], fmt) for r in readers)

    def words(row: dict[str, Any]) -> str:
        return " → ".join(f"{row[r]['found']}/{row[r]['words']}" for r in readers) if row["ppocr"]["words"] else "—"

    width = 9 * len(readers)
    lines = [
        f"OCR engines, {' → '.join(readers)} (tests/fixtures/ocr_real + tests/fixtures/ocr + generated dense A4)",
        f"{'class':<28}{'pages':>6}  {'CER':<{width}}{'words found':<{width}}{'CPU s/page':<{width}}wall s/page",
    ]
    for name, row in [*result["classes"].items(), *(("ALL " + k, v) for k, v in result["totals"].items())]:
        lines.append(
            f"{name:<28}{row['ppocr']['pages']:>6}  {chain(row, 'cer', '.3f'):<{width}}{words(row):<{width}}"
            f"{chain(row, 'cpu_per_page', '.2f'):<{width}}{chain(row, 's_per_page', '.2f')}"
        )
    for reader, peak in result["peak_mib"].items():
        lines.append(
            f"peak memory of the {reader} process: {peak['after_loading']} MiB loaded, {peak['peak']} MiB peak"
        )
    for reader, ratio in result.get("upright_ratio", {}).items():
        lines.append(
            f"upright pages ({', '.join(result['upright_classes'])}): {reader} CPU s/page = {ratio}x tesseract's"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench.ocr_engines", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds per engine, alternated (default 1)")
    parser.add_argument("--corpus", default="real,defects,dense", help="real, defects, dense (default: all three)")
    parser.add_argument("--dense", type=int, default=3, help="generated dense A4 letters at 300 dpi (default 3)")
    parser.add_argument(
        "--before", default=None, help="also read with ppocr on this git ref or checkout path (same rounds)"
    )
    parser.add_argument(
        "--int8",
        action="store_true",
        help="also read with PP-OCR's recogniser quantized to int8 (built here from the pinned wheel's model: "
        "ONNX Runtime's static quantization, calibrated on generated pages none of which is in the bench)",
    )
    parser.add_argument("--classes", default="", help="comma-separated classes (default: all)")
    parser.add_argument("--files", default="", help="comma-separated file names of the corpora (default: all)")
    parser.add_argument(
        "--arm64",
        default=None,
        metavar="PYTHON",
        help="read with ppocr here and by this aarch64 interpreter (make check-ocr-arm64), page by page; "
        "exit 1 when arm64's text differs beyond ARM64_TOLERANCE",
    )
    parser.add_argument("--arm64-cpu", default="", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=BENCH / "ocr_engines.json")
    parser.add_argument("--results", type=Path, default=BENCH / "results.json")
    parser.add_argument("--child", nargs=2, metavar=("SPEC", "OUT"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child(*args.child)
    rounds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="docindex-ocr-engines-") as tmp:
        workdir = Path(tmp)
        names = set(filter(None, args.files.split(",")))
        files = corpus(
            set(args.corpus.split(",")), set(filter(None, args.classes.split(","))), args.dense, workdir, names
        )
        log(f"OCR engines: {len(files)} files, {sum(len(f['pages']) for f in files)} pages, {args.repeat} round(s)")
        readers: list[tuple[str, str, Path | None, Path | None, str | None]] = [
            (e, e, None, None, None) for e in ENGINES
        ]
        if args.before:
            readers.insert(1, (BEFORE, "ppocr", layer_of(args.before, workdir), None, None))
        if args.int8:
            readers.insert(-1, (INT8, "ppocr", None, int8_models(workdir), None))
        if args.arm64:
            readers = [("ppocr", "ppocr", None, None, None), (ARM64, "ppocr", None, None, args.arm64)]
        for number in range(args.repeat):
            for reader, engine, layer, models, interpreter in readers:
                rounds[reader].append(
                    run_engine(
                        engine, files, workdir, f"{reader}-{number}", layer, model_dir=models, interpreter=interpreter
                    )
                )
    readings = {}
    for engine, found in rounds.items():
        merged = merge_rounds([r["files"] for r in found])
        for name, item in merged.items():
            for index, page in enumerate(item["pages"]):
                page["cpu"] = min(r["files"][name]["pages"][index]["cpu"] for r in found)
        readings[engine] = {
            "files": merged,
            "loaded_mib": max(r["loaded_mib"] for r in found),
            "peak_mib": max(r["peak_mib"] for r in found),
            **{key: found[0][key] for key in ("machine", "python", "onnxruntime")},
        }
    if args.arm64:
        rows = arm64_pages(files, readings)
        args.out.write_text(
            json.dumps({"arm64": rows, "files": files, "readings": readings}, ensure_ascii=False, indent=1) + "\n",
            encoding="utf-8",
        )
        print(render_arm64(rows, readings, args.arm64_cpu or "?"))
        return 1 if any(row["problems"] for row in rows) else 0
    result = summary(files, readings)
    result["repeat"] = args.repeat
    if args.before:
        result["before"] = args.before
    result["load_average"] = os.getloadavg()
    args.out.write_text(
        json.dumps({"summary": result, "files": files, "readings": readings}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    save_section(args.results, "ocr_engines", result)
    print(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
