"""``docindex plan`` against what the pipeline really writes (issue 36; the 10,000-file check is in ``make bench``).

A bucket of the bench's own generated office files and a scan is planned (every file sampled) and
indexed by the real indexer; the plan's pages, scanned pages and index bytes must be those of the
documents the indexer wrote: the JSON it sent (read by a proxy in front of the node; what Lucene makes of
it on disk is measured by ``bench.engine_cost`` and is the plan's ``index_bytes_per_document_byte``).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import OpenSearch

from bench.corpus import make_doc
from devkit import samples
from devkit.faults.opensearch import SentDocuments
from devkit.faults.proxy import Proxy
from devkit.messages import sqs_event
from docindex.cli import main
from docindex.ops.envfile import write_env_file
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke
from tests.support.scans import CARD_INCHES, LAYOUT, REPORT_LINES

pytestmark = pytest.mark.integration


def test_the_plan_predicts_the_pages_and_bytes_the_indexer_writes(stack: Stack, tmp_path: Path) -> None:
    # Given a bucket of generated office files (PDF, Word, Excel, PowerPoint, text) and a scan, indexed
    bodies = [make_doc(i) for i in (0, 2, 3, 5, 7, 8)]  # PowerPoint, Excel, Word x 2, PDF, text
    scan = samples.make_scan_png(REPORT_LINES[:1], dpi=150, page=CARD_INCHES, **LAYOUT)
    objects = [(info["key"], data) for info, data in bodies] + [("スキャン/受領書.png", scan)]
    sent = SentDocuments()
    proxy = Proxy(stack.engine_url, sent).start()
    indexer = build_indexer(stack, OpenSearch(hosts=[proxy.url], timeout=30))
    for number, (key, data) in enumerate(objects):
        etag = stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=data)["ETag"].strip('"')
        event = {"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"}
        event |= {"etag": etag, "size": len(data), "event_time": f"2026-11-27T00:00:{number:02d}.000Z"}
        assert invoke(indexer, sqs_event(event)) == set()
    proxy.stop()
    stack.opensearch.indices.refresh(index=stack.index)
    written = stack.opensearch.search(index=stack.index, body={"size": 100, "query": {"match_all": {}}})["hits"]
    stored = sent.total_bytes()
    env_file = tmp_path / "docindex.env"
    write_env_file(env_file, stack.settings_env())

    # When the plan samples every file (a scan's OCR'd text left out: the indexer has not OCR'd it yet)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            ["plan", "--env-file", str(env_file), "--sample", "100", "--assume", "scan_chars_per_page=0", "--json"]
        )
    plan: dict[str, Any] = json.loads(out.getvalue())

    # Then it counted every file, measured each, and predicts what the indexer wrote
    assert code == 0
    assert (plan["files"], plan["sample"]["measured"]) == (len(objects), len(objects))
    documents = [hit["_source"] for hit in written["hits"]]
    assert plan["figures"]["pages"] == sum(max(1, d.get("page_count") or 1) for d in documents)
    assert plan["figures"]["scanned_pages"] == 1
    assert plan["kinds"]["image"]["scanned_pages"] == 1
    # the documents' JSON as sent: the plan's documents lack only the event's identity fields (etag,
    # sequencer, times), a few hundred bytes each
    predicted = plan["figures"]["index_documents_bytes"]
    assert abs(predicted - stored) / stored < 0.05, (predicted, stored)
