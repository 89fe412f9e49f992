"""The search relevance query set: what people type, and the file each query must find in the top 3.

Used by tests/integration/test_relevance.py (on a real OpenSearch node's
analysis) and by ``make bench`` (recall@3, mean reciprocal rank, latency).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

BUCKET = "relevance"

# key -> (title, content); OCR'd scans carry ocr_status "done".
DOCUMENTS: dict[str, tuple[str | None, str]] = {
    "営業部/サーバー保守契約 2026.docx": (
        "サーバー保守契約",
        "サーバー保守契約の更新について。データベースの移行計画を含む。",
    ),
    "営業部/quote_acme.pdf": ("Quote", "Quote for annual server maintenance. Total 1,200,000 JPY."),
    "営業部/御見積書_山田商事.xlsx": (None, "御見積 パソコン 10台 納期 五月末"),
    "総務部/稟議書_備品購入.docx": ("稟議書", "稟議書 備品購入の件。情シスの承認が必要。"),
    "経理部/2024年度 予算.xlsx": (None, "２０２４年度 予算 経費精算システム 更改"),
    "人事部/就業規則.pdf": ("就業規則", "就業規則 第3条 勤務時間は午前9時から午後6時まで"),
    "開発部/release-notes-v2.md": (None, "Release notes: search improvements and bug fixes"),
    "スキャン/議事録_第12回.png": (None, "第12回 定例会議 議事録 次回の商談は東京で行う"),
    "総務部/パーティー案内.txt": (None, "忘年会パーティーのご案内。会場は本社。"),
    "開発部/東京スカイツリー見学.txt": (None, "東京スカイツリー 見学 レポート"),
    # near misses that share words with the queries
    "営業部/サーバー室 入館手順.txt": (None, "サーバー室への入館手順。保守作業の前に申請する。"),
    "経理部/経費 申請.txt": (None, "経費の申請方法。システムに入力する。"),
    "総務部/契約書 ひな形.docx": (None, "契約書のひな形。保守と運用の条項。"),
}


@dataclass(frozen=True)
class Query:
    text: str
    expected: str  # the key that must be in the top 3
    kind: str
    needs: str | None = None  # an analysis feature the cluster must apply: "synonyms"


QUERIES: tuple[Query, ...] = (
    Query("ｻｰﾊﾞｰ保守", "営業部/サーバー保守契約 2026.docx", "half-width katakana with voiced marks"),
    Query("ﾃﾞｰﾀﾍﾞｰｽ 移行", "営業部/サーバー保守契約 2026.docx", "half-width katakana"),
    Query("ﾊﾟｰﾃｨ", "総務部/パーティー案内.txt", "half-width, long vowel dropped"),
    Query("ＱＵＯＴＥ", "営業部/quote_acme.pdf", "full-width letters"),
    Query("Server Maintenance", "営業部/quote_acme.pdf", "English, case"),
    Query("２０２４年度", "経理部/2024年度 予算.xlsx", "full-width digits"),
    Query("保守契約", "営業部/サーバー保守契約 2026.docx", "compound"),
    Query("守契", "営業部/サーバー保守契約 2026.docx", "fragment of a compound"),
    Query("精算システム", "経理部/2024年度 予算.xlsx", "compound kuromoji splits"),
    Query("スカイツリー", "開発部/東京スカイツリー見学.txt", "katakana compound"),
    Query("サーバ", "営業部/サーバー保守契約 2026.docx", "katakana variant (no long vowel)"),
    Query("情シス", "総務部/稟議書_備品購入.docx", "dictionary word"),
    Query("稟議", "総務部/稟議書_備品購入.docx", "dictionary word, part"),
    Query("見積り", "営業部/御見積書_山田商事.xlsx", "synonym / okurigana variant", needs="synonyms"),
    Query("PC", "営業部/御見積書_山田商事.xlsx", "synonym", needs="synonyms"),
    Query("山田商", "営業部/御見積書_山田商事.xlsx", "file-name fragment"),
    Query("release-notes", "開発部/release-notes-v2.md", "file-name fragment (English)"),
    Query("定例会議", "スキャン/議事録_第12回.png", "OCR'd text"),
    Query("商談 東京", "スキャン/議事録_第12回.png", "OCR'd text, two words"),
    Query("就業規則 勤務時間", "人事部/就業規則.pdf", "two words"),
)


def load(client: Any, index: str) -> None:
    """Create ``index`` (alias, current mapping) and index the documents."""
    from docindex.core.changes import doc_id
    from docindex.index.mapping import ensure_index

    try:  # the pipeline's writers add the spelling-variant text (older checkouts have none)
        from docindex.index.documents import with_variants
    except ImportError:  # pragma: no cover - a checkout from before spelling variants

        def with_variants(source: dict[str, Any]) -> dict[str, Any]:
            return source

    ensure_index(client, index)
    for key, (title, content) in DOCUMENTS.items():
        filename = key.rsplit("/", 1)[-1]
        body = {
            "bucket": BUCKET,
            "key": key,
            "filename": filename,
            "extension": filename.rsplit(".", 1)[-1],
            "title": title,
            "content": content,
            "ocr_status": "done" if key.endswith(".png") else "none",
        }
        client.index(index=index, id=doc_id(BUCKET, key), body=with_variants(body))
    client.indices.refresh(index=index)


@dataclass(frozen=True)
class Outcome:
    query: Query
    rank: int | None  # 1-based rank of the expected file, None when not in the results
    seconds: float

    @property
    def in_top3(self) -> bool:
        return self.rank is not None and self.rank <= 3


def run(client: Any, index: str, queries: tuple[Query, ...] = QUERIES, *, search: Any = None) -> list[Outcome]:
    """Each query through ``search`` (default: docindex's), with the rank of its expected file."""
    if search is None:
        from docindex.index.search import search
    outcomes = []
    for query in queries:
        started = time.perf_counter()
        hits = search(client, index, query.text, size=10)
        elapsed = time.perf_counter() - started
        keys = [hit["key"] for hit in hits]
        rank = keys.index(query.expected) + 1 if query.expected in keys else None
        outcomes.append(Outcome(query, rank, elapsed))
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    """recall@3 and mean reciprocal rank (over the top 10)."""
    n = len(outcomes) or 1
    return {
        "queries": len(outcomes),
        "recall_at_3": sum(o.in_top3 for o in outcomes) / n,
        "mrr": sum(1 / o.rank for o in outcomes if o.rank) / n,
    }
