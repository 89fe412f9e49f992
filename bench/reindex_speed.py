"""How fast ``docindex reindex`` copies an index: documents per second, and the whole run.

    .venv/bin/python -m bench.reindex_speed [--docs 3000] [--chars 2000] [--results bench/results.json]

A fresh local stack (moto server for the ordering ledger, a real OpenSearch node with the
real index settings) is loaded with ``--docs`` documents of ``--chars`` Japanese
characters each, written at external versions as the pipeline writes them;
then the real ``docindex.ops.reindex.reindex`` builds the next index version,
copies them (scroll + ``_bulk``), switches the alias and catches up (with no
live writes: every document is checked against the ledger once, none copied
again). The copy phase and the whole run are timed. On a domain the copy runs
at the speed of the network between the operator's machine and the cluster
and of the cluster's indexing; these figures are the local engine's.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import save_section

REPO = Path(__file__).resolve().parent.parent
LINES = (
    "東京都の売上は前年同期比で増加しました。",
    "会議議事録：次回の定例会議は来週の月曜日です。",
    "見積書の有効期限は発行日から三十日間です。",
    "新製品の発売に向けて営業部と開発部が連携します。",
)


def measure(docs: int, chars: int) -> dict[str, Any]:
    import boto3
    from opensearchpy import OpenSearch, helpers

    from bench.local import servers_running
    from devkit.local.session import local_up
    from docindex.ingest.ledger import Ledger
    from docindex.ops.reindex import reindex

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "local")  # moto's, never AWS's
    state = Path(tempfile.mkdtemp(prefix="docindex-reindex-bench-"))
    with servers_running(state) as (moto, engine):
        env = local_up(state_dir=state, aws_endpoint=moto.url, opensearch_endpoint=engine.url, prefix="rxbench")
        client = OpenSearch(hosts=[engine.url], timeout=300)
        alias = env["OPENSEARCH_INDEX"]
        text = "".join(LINES[n % len(LINES)] for n in range(chars // 20 + 1))[:chars]
        actions = (
            {
                "_op_type": "index",
                "_index": alias,
                "_id": f"doc-{n:07d}",
                "version": 1,
                "version_type": "external",
                "_source": {"bucket": env["DOCINDEX_BUCKET"], "key": f"部署{n % 50}/文書 {n:07d}.txt", "content": text},
            }
            for n in range(docs)
        )
        loaded = time.perf_counter()
        helpers.bulk(client, actions, chunk_size=500, request_timeout=300)
        load_seconds = time.perf_counter() - loaded
        client.indices.refresh(index=alias)
        ddb = boto3.client(
            "dynamodb",
            endpoint_url=moto.url,
            region_name=env["AWS_REGION"],
            aws_access_key_id="local",
            aws_secret_access_key="local",  # noqa: S106  # moto's, never AWS's  # nosec B106
        )
        marks: dict[str, float] = {}
        started = time.perf_counter()
        result = reindex(
            client,
            alias,
            Ledger(ddb, env["LEDGER_TABLE"]),
            settle_seconds=0,
            after_copy=lambda: marks.setdefault("copied", time.perf_counter()),
        )
        total = time.perf_counter() - started
        copy_seconds = marks["copied"] - started
        return {
            "documents": docs,
            "chars_per_document": chars,
            "copied": result.copied,
            "copy_seconds": round(copy_seconds, 2),
            "copy_docs_per_s": round(result.copied / copy_seconds, 1) if copy_seconds else None,
            "whole_run_seconds": round(total, 2),
            "bulk_load_docs_per_s": round(docs / load_seconds, 1),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.reindex_speed", description=__doc__)
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args(argv)
    figures = measure(args.docs, args.chars)
    save_section(args.results, "reindex", figures)
    print(
        f"reindex of {figures['documents']:,} documents ({figures['chars_per_document']:,} characters each): "
        f"copy {figures['copy_docs_per_s']} docs/s ({figures['copy_seconds']} s), whole run "
        f"{figures['whole_run_seconds']} s; loading them by _bulk {figures['bulk_load_docs_per_s']} docs/s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
