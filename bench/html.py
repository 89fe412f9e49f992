"""HTML extraction against the fastest extractors, on a generated 1–2 MB intranet page (``make bench`` runs it).

    .venv/bin/python -m bench.html [--sections 150] [--rounds 9] [--results bench/results.json]

The page is what a Japanese company portal serves: a long ``<style>`` and
``<script>`` in the head, a navigation list, sections of paragraphs whose
sentences hold links, ``<span>`` and ``<strong>`` and a ``<br>``, tables of
figures, comments, ``<noscript>``. Generated from a fixed seed.

Each extractor gets the decoded page and must return its visible text. An
extractor is **correct** here when

- nothing from ``<script>``, ``<style>``, ``<noscript>`` or comments is in its text,
- every sentence is on one line, whole (a link or a ``<span>`` inside a sentence
  does not split it), and
- every table row is on one line with its cells in order,

because that is what makes a phrase query and a highlight work on the page.
The ratio reported is docindex's CPU time over the fastest *correct*
extractor's; the fastest extractor of all is listed too, with what it gets wrong.
Extractors that are not installed are left out (resiliparse is a development
dependency for this comparison only; docindex does not ship it).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.report import save_section

REPO = Path(__file__).resolve().parent.parent
SEED = 20261125
NOISE = ("スクリプト内文字列", "スタイル定義", "コメント内文字列", "JavaScriptを有効に")
_WORDS = tuple(
    [
        "営業部",
        "人事部",
        "経理",
        "見積書",
        "請求書",
        "会議",
        "議事録",
        "規程",
        "申請",
        "承認",
        "稟議",
        "出張",
        "経費",
        "精算",
        "サーバー",
        "保守",
        "契約",
        "更新",
        "顧客",
        "案件",
        "データベース",
        "移行",
        "報告",
        "予算",
        "品質",
        "監査",
        "研修",
        "採用",
        "評価",
        "納品",
    ]
)
_PARTICLES = ("を", "の", "に", "は", "、", "と", "で")
_SPACE = re.compile(r"\s+")


@dataclass
class Page:
    html: str
    sentences: list[str]  # visible text of each sentence, inline markup flattened
    rows: list[list[str]]  # visible cells of each table row


def make_page(sections: int = 150, seed: int = SEED) -> Page:
    """A portal page of about 1.1 KB per paragraph; 150 sections ≈ 1.6 MB of UTF-8."""
    rng = random.Random(seed)  # noqa: S311  # a corpus, not a secret  # nosec B311

    def phrase(n: int) -> str:
        return "".join(rng.choice(_WORDS) + rng.choice(_PARTICLES) for _ in range(n))

    sentences: list[str] = []
    rows: list[list[str]] = []
    parts = [
        '<!DOCTYPE html>\n<html lang="ja"><head><meta charset="utf-8">',
        "<title>社内ポータル お知らせ一覧</title>\n<style>",
    ]
    parts += [f".c{i} {{ color: #{i:06x}; margin: {i % 9}px; }} /* {NOISE[1]} */\n" for i in range(3000)]
    parts.append("</style>\n<script>")
    parts += [f"var v{i} = '{NOISE[0]}{phrase(3)}';\n" for i in range(1500)]
    parts.append("</script></head>\n<body><nav><ul>")
    parts += [f'<li><a href="/p/{i}">{rng.choice(_WORDS)}{i}</a></li>' for i in range(300)]
    parts.append("</ul></nav>\n<main>")
    for s in range(sections):
        heading = phrase(2) + "。"
        sentences.append(heading)
        parts.append(f"<section><h2>{heading}</h2>\n")
        for p in range(25):
            a, link, b, span = phrase(3), rng.choice(_WORDS), phrase(2), phrase(2)
            c, strong, d = phrase(1), rng.choice(_WORDS), phrase(2)
            e = phrase(2) + "。"
            first = f"{a}{link}{b}{span}{c}{strong}{d}。"
            sentences += [first, e]
            parts.append(
                f'<p class="c{p}">{a}<a href="/d/{s}/{p}">{link}</a>{b}<span class="x">{span}</span>{c}'
                f"<strong>{strong}</strong>{d}。<br>\n{e}</p>\n"
            )
        parts.append("<table>\n<tr><th>項目</th><th>金額</th><th>担当</th></tr>\n")
        rows.append(["項目", "金額", "担当"])
        for _ in range(40):
            row = [rng.choice(_WORDS), f"{rng.randint(1, 99999)}円", rng.choice(_WORDS)]
            rows.append(row)
            parts.append(f"<tr><td>{row[0]}</td><td>{row[1]}</td><td><span>{row[2]}</span></td></tr>\n")
        parts.append(f"</table></section>\n<!-- {NOISE[2]} -->\n")
    parts.append(f"</main><script>console.log('{NOISE[0]}');</script><noscript>{NOISE[3]}</noscript></body></html>\n")
    return Page("".join(parts), sentences, rows)


# -- the extractors ----------------------------------------------------------


def _docindex(markup: str) -> str:
    from docindex.extract.html import html_text

    return html_text(markup)[1]


def _lexbor_flat(markup: str) -> str:
    """selectolax (lexbor) text of the body, scripts and styles dropped: one line per text node."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup)
    body = tree.body
    if body is None:
        return ""
    # Its fastest form: one selector pass, removed last to first (as docindex does).
    for node in reversed(body.css("script, style, noscript, template, svg, object, iframe")):
        node.decompose(recursive=True)
    return body.text(separator="\n", strip=True)


def _resiliparse(markup: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return str(
        extract_plain_text(
            HTMLTree.parse(markup),
            main_content=False,
            preserve_formatting=True,
            list_bullets=False,
            alt_texts=False,
            links=False,
            form_fields=False,
            noscript=False,
        )
    )


EXTRACTORS: dict[str, tuple[str, Callable[[str], str]]] = {
    "docindex": ("docindex.extract.html (selectolax/lexbor + block, line and cell marks)", _docindex),
    "lexbor_flat": ("selectolax/lexbor text(separator='\\n') after stripping scripts and styles", _lexbor_flat),
    "resiliparse": ("resiliparse extract_plain_text (lexbor, C++), all content, formatting kept", _resiliparse),
}


def _available(name: str) -> bool:
    try:
        if name == "resiliparse":
            import resiliparse.extract.html2text  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class Row:
    extractor: str
    what: str
    cpu_ms: float
    characters: int
    noise_found: list[str]
    sentences_whole: float  # share of sentences found whole within one line
    rows_whole: float  # share of table rows found on one line, cells in order
    correct: bool


def judge(page: Page, text: str) -> tuple[list[str], float, float]:
    """Noise found, and the shares of sentences and table rows found whole, each within one line."""
    noise = [marker for marker in NOISE if marker in text]
    # Whitespace inside a line (the spaces and tabs an extractor puts between cells) is dropped, the
    # line breaks are kept: text without a line break found in it lies within one line.
    lines = "\n".join(_SPACE.sub("", line) for line in text.splitlines())
    whole = sum(1 for sentence in page.sentences if sentence in lines)
    rows = page.rows[:200]
    rows_ok = sum(1 for row in rows if "".join(row) in lines)
    return noise, whole / len(page.sentences), rows_ok / len(rows)


def cpu_ms(fn: Callable[[str], str], markup: str, rounds: int) -> tuple[float, str]:
    text = fn(markup)  # warm: imports, allocator
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn(markup)
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000, text


def measure(sections: int = 150, rounds: int = 9) -> dict[str, Any]:
    page = make_page(sections)
    rows = []
    for name, (what, fn) in EXTRACTORS.items():
        if not _available(name):
            continue
        ms, text = cpu_ms(fn, page.html, rounds)
        noise, sentences, table_rows = judge(page, text)
        correct = not noise and sentences == 1.0 and table_rows == 1.0
        rows.append(Row(name, what, round(ms, 1), len(text), noise, round(sentences, 3), round(table_rows, 3), correct))
    from docindex.extract import ExtractionLimits, extract

    data = page.html.encode("utf-8")
    full_ms, _ = cpu_ms(lambda _markup: extract(data, "portal.html", ExtractionLimits()).text, page.html, rounds)
    docindex = next(r for r in rows if r.extractor == "docindex")
    others = [r for r in rows if r.extractor != "docindex"]
    fastest_correct = min((r for r in others if r.correct), key=lambda r: r.cpu_ms, default=None)
    fastest = min(others, key=lambda r: r.cpu_ms)
    return {
        "page_bytes": len(data),
        "sentences": len(page.sentences),
        "table_rows": len(page.rows),
        "rounds": rounds,
        "rows": [asdict(r) for r in rows],
        "docindex_extract_ms": round(full_ms, 1),
        "fastest_correct": fastest_correct.extractor if fastest_correct else None,
        "docindex_vs_fastest_correct": round(docindex.cpu_ms / fastest_correct.cpu_ms, 2) if fastest_correct else None,
        "fastest": fastest.extractor,
        "docindex_vs_fastest": round(docindex.cpu_ms / fastest.cpu_ms, 2),
    }


def render(figures: dict[str, Any]) -> str:
    out = [
        f"HTML page of {figures['page_bytes'] / 1e6:.2f} MB ({figures['sentences']:,} sentences, "
        f"{figures['table_rows']:,} table rows); CPU ms, median of {figures['rounds']}",
        "",
        "| extractor | CPU ms | characters | sentences whole | table rows whole | script/style/comment text "
        "| correct |",
        "| --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in figures["rows"]:
        noise = ", ".join(r["noise_found"]) or "none"
        out.append(
            f"| {r['extractor']} | {r['cpu_ms']:.1f} | {r['characters']:,} | {r['sentences_whole']:.1%} | "
            f"{r['rows_whole']:.1%} | {noise} | {'yes' if r['correct'] else 'no'} |"
        )
    out.append("")
    out.append(f"- docindex through extract() (detection, decoding, limits): {figures['docindex_extract_ms']:.1f} ms")
    if figures["fastest_correct"]:
        out.append(
            f"- docindex / fastest correct ({figures['fastest_correct']}): "
            f"{figures['docindex_vs_fastest_correct']:.2f} (target <= 2)"
        )
    else:
        out.append("- no other correct extractor is installed (pip install resiliparse to compare)")
    out.append(f"- docindex / fastest of all ({figures['fastest']}): {figures['docindex_vs_fastest']:.2f}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench.html", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sections", type=int, default=150, help="page size: 150 sections ≈ 1.6 MB (default)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    figures = measure(args.sections, args.rounds)
    save_section(args.results, "html", figures)
    print(render(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
