"""The indexer's cold start against an earlier release, measured interleaved in one run.

    .venv/bin/python -m bench.cold_start [--before 9c5e4dd] [--runs 15] [--out FILE]

Two figures, each in a fresh interpreter as a Lambda container starts (``LAMBDA_TASK_ROOT`` set,
so the Tracer patches boto3, and no
compiled ``.pyc`` of docindex, as in a layer unpacked under /opt):

- ``import``: ``import app`` of ``functions/indexer/app.py`` — Lambda's init phase;
- ``first_use``: the import plus ``get_indexer()`` from the environment (settings, clients, the
  idempotency store) — what the first invocation pays before its first record; no network.

The checkout of ``--before`` (read with ``git archive``, default the release of 2026-11-25) and this
one alternate run by run, so the machine's load falls on both alike; medians of the process's CPU
time (which waiting for a busy machine's cores does not inflate) and of wall time, their ratios, and
what each loads that the other does not (docindex modules and heavy packages).
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BEFORE = "9c5e4dd"
PROBE = """
import json, sys, time
t, c = time.perf_counter(), time.process_time()
import app
if sys.argv[1] == "first_use":
    from docindex.ingest.indexer import get_indexer
    get_indexer()
total, cpu = time.perf_counter() - t, time.process_time() - c
heavy = ("pydantic", "opensearchpy", "ahocorasick", "kanjize", "lxml", "pypdfium2", "PIL")
print(json.dumps({
    "wall_ms": total * 1000,
    "cpu_ms": cpu * 1000,
    "docindex": sorted(m for m in sys.modules if m.startswith("docindex.")),
    "heavy": sorted(m for m in heavy if m in sys.modules),
}))
"""
ENV = {
    "PATH": "/usr/bin:/bin",
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "POWERTOOLS_SERVICE_NAME": "docindex",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OPENSEARCH_ENDPOINT": "http://127.0.0.1:9",
    "OPENSEARCH_AUTH": "none",
    "IDEMPOTENCY_TABLE": "bench-idempotency",
    "LEDGER_TABLE": "bench-ledger",
    "OCR_QUEUE_URL": "http://127.0.0.1:9/000000000000/bench-ocr",
    "EMBED_QUEUE_URL": "http://127.0.0.1:9/000000000000/bench-embed",
}


def checkout(commit: str, into: Path) -> Path:
    """``layers/`` and ``functions/`` of ``commit``, unpacked under ``into``."""
    argv = ["git", "archive", commit, "layers/docindex", "functions/indexer"]
    archive = subprocess.run(argv, cwd=REPO, capture_output=True, check=True).stdout  # noqa: S603  # nosec B603 B607
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_once(root: Path, figure: str, pycache: Path) -> dict[str, Any]:
    env = {
        **ENV,
        # An empty cache folder: every run compiles docindex's modules, as a fresh container does.
        "PYTHONPYCACHEPREFIX": str(pycache),
        "PYTHONPATH": f"{root / 'layers' / 'docindex'}:{root / 'functions' / 'indexer'}",
        "LAMBDA_TASK_ROOT": str(root / "functions" / "indexer"),
    }
    done = subprocess.run(  # noqa: S603 - our interpreter, fixed code
        [sys.executable, "-c", PROBE, figure], env=env, capture_output=True, text=True, check=False, timeout=120
    )
    if done.returncode != 0:
        raise SystemExit(f"{root}: {figure} failed:\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


FIGURES = ("import", "first_use")
CLOCKS = ("cpu_ms", "wall_ms")


def measure(roots: dict[str, Path], runs: int, pycache: Path) -> dict[str, Any]:
    samples = {name: {f"{figure} {clock}": [] for figure in FIGURES for clock in CLOCKS} for name in roots}
    loaded: dict[str, dict[str, Any]] = {}
    for figure in FIGURES:
        for run in range(runs + 1):  # the first round warms the page cache and is not counted
            for name, root in roots.items():
                result = run_once(root, figure, pycache)
                if run:
                    for clock in CLOCKS:
                        samples[name][f"{figure} {clock}"].append(result[clock])
                loaded.setdefault(name, {})[figure] = {"docindex": result["docindex"], "heavy": result["heavy"]}
    out: dict[str, Any] = {"runs": runs, "median": {}, "loaded": loaded}
    for name, figures in samples.items():
        out["median"][name] = {key: round(statistics.median(values), 1) for key, values in figures.items()}
    before, after = out["median"]["before"], out["median"]["after"]
    out["ratio_after_to_before"] = {key: round(after[key] / before[key], 2) for key in before}
    return out


def report(result: dict[str, Any], commit: str) -> str:
    lines = [f"indexer cold start, median of {result['runs']} interleaved runs (ms): {commit} -> this checkout"]
    for key in result["median"]["before"]:
        before, after = result["median"]["before"][key], result["median"]["after"][key]
        lines.append(f"  {key:<18} {before:7.1f} -> {after:7.1f}   ratio {result['ratio_after_to_before'][key]:.2f}")
    for figure in ("import", "first_use"):
        old, new = result["loaded"]["before"][figure], result["loaded"]["after"][figure]
        added = sorted(set(new["docindex"]) - set(old["docindex"]))
        lines.append(f"  {figure}: heavy packages {old['heavy']} -> {new['heavy']}")
        lines.append(f"  {figure}: docindex modules {len(old['docindex'])} -> {len(new['docindex'])}; new: {added}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="docindex-cold-") as tmp:
        roots = {"before": checkout(args.before, Path(tmp) / "before"), "after": REPO}
        (Path(tmp) / "pycache").mkdir()
        result = measure(roots, args.runs, Path(tmp) / "pycache")
    print(report(result, args.before))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
