"""``make bench`` spelling-variant scenario: recall@3 and MRR per class, index size and indexing CPU, before → after.

    .venv/bin/python -m bench.variants [--docs 200] [--json] [--results bench/results.json]

The variant set (PAIRS below, kept here and not in the tests, so that it measures rather than
fits) is words people write two ways in office files. For each pair, a file written one way is
searched with the other spelling, both directions, among every other pair's file and a few
near misses; the figure is the rank of that file (recall@3: in the top 3; MRR over the top 10).
**Before** is the same code with spelling variants off: documents without the ``variants`` field
and the query without its variant clause (``docindex.index.search.variant_clause``), which is
the query and the index of the code before issue 27. The same engine serves both (``bench.local.search_engine``:
the real node, or osmem-server with ``DOCINDEX_BENCH_ENGINE=osmem``).

Cost, before → after, on ``--docs`` generated Japanese office texts (bench.corpus sentences,
2,000-60,000 characters): the CPU the writer spends building each document (``IndexDocument``
``source()``, where the folding happens), the engine's CPU to index them, the request bytes and
the engine's store size (Lucene's files on the real node; osmem's estimate of its in-memory index).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# (class, how the file writes the word, how someone types it)
PAIRS: tuple[tuple[str, str, str], ...] = (
    ("okurigana", "申し込み書", "申込書"),
    ("okurigana", "取扱説明書", "取り扱い説明書"),
    ("okurigana", "問い合わせ先", "問合せ先"),
    ("okurigana", "受付番号", "受け付け番号"),
    ("okurigana", "見積もり書", "見積書"),
    ("okurigana", "売り上げ", "売上"),
    ("okurigana", "打ち合わせ", "打合せ"),
    ("okurigana", "振り込み先", "振込先"),
    ("okurigana", "引き渡し日", "引渡日"),
    ("okurigana", "貸し出し", "貸出"),
    ("itaiji", "髙橋", "高橋"),
    ("itaiji", "山﨑", "山崎"),
    ("itaiji", "齋藤", "斎藤"),
    ("itaiji", "渡邊", "渡辺"),
    ("itaiji", "渡邉", "渡辺"),
    ("itaiji", "澤田", "沢田"),
    ("itaiji", "廣瀬", "広瀬"),
    ("itaiji", "濱田", "浜田"),
    ("itaiji", "國分", "国分"),
    ("itaiji", "櫻井", "桜井"),
    ("long vowel", "コンピューター", "コンピュータ"),
    ("long vowel", "プリンター", "プリンタ"),
    ("long vowel", "メモリー", "メモリ"),
    ("long vowel", "ユーザー", "ユーザ"),
    ("long vowel", "フォルダー", "フォルダ"),
    ("long vowel", "エレベーター", "エレベータ"),
    ("ヴ/バ", "ヴァイオリン", "バイオリン"),
    ("ヴ/バ", "ヴィンテージ", "ビンテージ"),
    ("ヴ/バ", "ヴェネツィア", "ベネツィア"),
    ("ヴ/バ", "ヴォーカル", "ボーカル"),
    ("ヴ/バ", "ヴィデオ", "ビデオ"),
    ("ヴ/バ", "サーヴィス", "サービス"),
    ("hiragana/katakana", "りんご", "リンゴ"),
    ("hiragana/katakana", "めがね", "メガネ"),
    ("hiragana/katakana", "ねじ", "ネジ"),
    ("hiragana/katakana", "ごみ箱", "ゴミ箱"),
    ("hiragana/katakana", "たまご", "タマゴ"),
    ("hiragana/katakana", "きのこ", "キノコ"),
    ("width/digits", "２０２４年度", "2024年度"),
    ("width/digits", "ｻｰﾊﾞｰ室", "サーバー室"),
    ("width/digits", "ＰＣ用品", "PC用品"),
    ("width/digits", "第３四半期", "第3四半期"),
    ("width/digits", "ﾒｰﾙ配信", "メール配信"),
    ("width/digits", "ＵＳＢメモリ", "USBメモリ"),
    ("era year", "令和5年度", "2023年度"),
    ("era year", "平成30年", "2018年"),
    ("era year", "令和元年", "2019年"),
    ("era year", "R6年度", "2024年度"),
    ("era year", "昭和63年", "1988年"),
    ("era year", "平成31年4月", "2019年4月"),
    ("kanji numerals", "二〇二四年", "2024年"),
    ("kanji numerals", "十二月", "12月"),
    ("kanji numerals", "三十一日", "31日"),
    ("kanji numerals", "二〇二三年度", "2023年度"),
    ("kanji numerals", "第三回", "第3回"),
    ("kanji numerals", "五月十日", "5月10日"),
    ("dashes/tildes", "サ-ビス", "サービス"),
    ("dashes/tildes", "10〜20日", "10～20日"),
    ("dashes/tildes", "コピ‐機", "コピー機"),
    ("dashes/tildes", "セキュリティ・ポリシー", "セキュリティポリシー"),
    ("dashes/tildes", "ｺﾋﾟｰ用紙", "コピー用紙"),
    ("dashes/tildes", "ボール・ペン", "ボールペン"),
    ("iteration marks", "佐々木", "佐佐木"),
    ("iteration marks", "時々", "時時"),
    ("iteration marks", "人々", "人人"),
    ("iteration marks", "いすゞ", "いすず"),
    ("iteration marks", "野々村", "野野村"),
    ("iteration marks", "各々", "各各"),
)
# Words that share characters with a variant and mean something else: never the answer.
NEAR_MISSES = (
    "申告書の提出期限について",
    "電車が込み合う時間帯",
    "高島屋での打合せ会場",
    "斉藤部長の出張報告",
    "メモリアルホールの予約",
    "パーティションの設定",
    "できるかぎり早く対応する",
    "保守契約の更新",
    "気温は21度でした",
    "十分に注意してください",
)
TOPICS = ("の件について確認しました。", "を添付します。", "の担当を決めました。", "について連絡します。")


def _documents(direction: str) -> list[tuple[str, str]]:
    """(key, text): one file per pair, written the pair's first way ('forward') or second way."""
    docs = []
    for number, (_, written, typed) in enumerate(PAIRS):
        word = written if direction == "forward" else typed
        docs.append((f"pairs/{number:03d}.txt", word + TOPICS[number % len(TOPICS)]))
    docs += [(f"near/{n:02d}.txt", text) for n, text in enumerate(NEAR_MISSES)]
    return docs


def _source(key: str, text: str, *, variants: bool) -> dict[str, Any]:
    """The document the writers send; before, built by the same code with the folding left out."""
    from docindex.index import documents

    document = documents.IndexDocument.for_object(bucket="bench", key=key).with_content(
        text=text, title=None, page_count=None, truncated=False, error=None
    )
    if variants:
        return document.source()
    folding = documents.with_variants
    documents.with_variants = lambda source: source  # type: ignore[assignment]
    try:
        return document.source()
    finally:
        documents.with_variants = folding  # type: ignore[assignment]


@contextmanager
def _variants_off(enabled: bool) -> Iterator[None]:
    from docindex.index import search as search_module

    original = search_module.variant_clause
    if not enabled:
        search_module.variant_clause = lambda query: None  # type: ignore[assignment]
    try:
        yield
    finally:
        search_module.variant_clause = original  # type: ignore[assignment]


def _ranks(client: Any, *, variants: bool) -> list[dict[str, Any]]:
    from docindex.core.changes import doc_id
    from docindex.index.mapping import ensure_index
    from docindex.index.search import search

    rows = []
    for direction in ("forward", "backward"):
        index = f"variants-{direction}-{'after' if variants else 'before'}"
        ensure_index(client, index)
        for key, text in _documents(direction):
            client.index(index=index, id=doc_id("bench", key), body=_source(key, text, variants=variants))
        client.indices.refresh(index=index)
        with _variants_off(variants):
            for number, (kind, written, typed) in enumerate(PAIRS):
                query = typed if direction == "forward" else written
                keys = [hit["key"] for hit in search(client, index, query, size=10)]
                expected = f"pairs/{number:03d}.txt"
                rank = keys.index(expected) + 1 if expected in keys else None
                near = [k for k in keys[:3] if k.startswith("near/")]
                rows.append(
                    {
                        "class": kind,
                        "query": query,
                        "file": written if direction == "forward" else typed,
                        "rank": rank,
                        "near_misses_in_top3": near,
                    }
                )
    return rows


def _per_class(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    classes: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        classes.setdefault(row["class"], []).append(row)
    classes["all"] = rows
    return {
        kind: {
            "queries": len(found),
            "recall_at_3": round(sum(1 for r in found if r["rank"] and r["rank"] <= 3) / len(found), 3),
            "mrr": round(sum(1 / r["rank"] for r in found if r["rank"]) / len(found), 3),
            "near_misses_in_top3": sum(len(r["near_misses_in_top3"]) for r in found),
        }
        for kind, found in classes.items()
    }


def _corpus(docs: int) -> list[tuple[str, str]]:
    from bench.corpus import DEFAULT_SEED, sentences

    rng = random.Random(DEFAULT_SEED)  # noqa: S311  # nosec B311 - a reproducible corpus, not crypto
    out = []
    for number in range(docs):
        chars = int(min(60_000, max(2_000, rng.lognormvariate(9.2, 0.9))))
        out.append((f"corpus/{number:04d}.txt", "\n".join(sentences(rng, chars, "ja"))))
    return out


def _cost(client: Any, server_pid: int, docs: int) -> dict[str, Any]:
    """CPU to build each document and to index it, request bytes and store size, before and after."""
    from docindex.core.changes import doc_id
    from docindex.index.mapping import ensure_index

    corpus = _corpus(docs)
    _source(*corpus[0], variants=True)  # tables and automaton loaded before anything is timed
    figures: dict[str, Any] = {"documents": docs, "characters": sum(len(t) for _, t in corpus)}
    for label, variants in (("before", False), ("after", True)):
        index = f"cost-{label}"
        ensure_index(client, index)
        started = time.process_time()
        sources = [(key, _source(key, text, variants=variants)) for key, text in corpus]
        build = time.process_time() - started
        payload = sum(len(json.dumps(s, ensure_ascii=False).encode()) for _, s in sources)
        server_before = _process_cpu(server_pid)
        for key, source in sources:
            client.index(index=index, id=doc_id("bench", key), body=source)
        client.indices.refresh(index=index)
        stats = client.indices.stats(index=index)["_all"]["primaries"]
        figures[label] = {
            "build_ms_per_doc": round(build * 1000 / docs, 2),
            "engine_index_ms_per_doc": round((_process_cpu(server_pid) - server_before) * 1000 / docs, 2),
            "request_kb_per_doc": round(payload / 1024 / docs, 1),
            "store_mb": round(stats["store"]["size_in_bytes"] / 1e6, 2),
        }
    return figures


def _process_cpu(pid: int) -> float:
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(docs: int) -> dict[str, Any]:
    from bench.local import search_engine

    with search_engine() as (server, client):
        before, after = _ranks(client, variants=False), _ranks(client, variants=True)
        cost = _cost(client, server.pid, docs)
    return {
        "pairs": len(PAIRS),
        "before": _per_class(before),
        "after": _per_class(after),
        "missed_after": [r for r in after if not (r["rank"] and r["rank"] <= 3)],
        "cost": cost,
    }


def report(result: dict[str, Any]) -> list[str]:
    lines = [
        f"spelling variants ({result['pairs']} pairs, each searched both ways; before = the same code "
        "without the variants field and clause)",
        f"  {'class':<18} {'queries':>7}  {'recall@3':>16}  {'MRR':>16}  near misses in top 3",
    ]
    for kind, after in result["after"].items():
        before = result["before"][kind]
        lines.append(
            f"  {kind:<18} {after['queries']:>7}  {before['recall_at_3']:>6.2f} → {after['recall_at_3']:<6.2f}  "
            f"{before['mrr']:>6.3f} → {after['mrr']:<6.3f}  {before['near_misses_in_top3']} → "
            f"{after['near_misses_in_top3']}"
        )
    cost = result["cost"]
    b, a = cost["before"], cost["after"]
    lines += [
        f"  cost on {cost['documents']} Japanese texts "
        f"({cost['characters'] / cost['documents']:,.0f} characters each):",
        f"    building the document (writer CPU)  {b['build_ms_per_doc']} → {a['build_ms_per_doc']} ms/doc",
        f"    indexing it (the engine's CPU)      {b['engine_index_ms_per_doc']} → "
        f"{a['engine_index_ms_per_doc']} ms/doc",
        f"    request size                        {b['request_kb_per_doc']} → {a['request_kb_per_doc']} KB/doc",
        f"    index size (the engine's store)     {b['store_mb']} → {a['store_mb']} MB",
    ]
    lines += [
        f"  missed: {r['query']!r} for a file with {r['file']!r} [{r['class']}] rank {r['rank']}"
        for r in result["missed_after"]
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.variants", description=__doc__)
    parser.add_argument("--docs", type=int, default=200, help="generated texts for the cost figures")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from bench.report import save_section

    result = measure(args.docs)
    save_section(args.results, "variants", result)
    print(json.dumps(result, ensure_ascii=False, indent=1) if args.json else "\n".join(report(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
