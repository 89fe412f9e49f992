"""Where in the file (issue 28): through the real pipeline, each hit names the page its words are on.

Files uploaded to moto S3, indexed by the real indexer (and the scan by the real OCR worker with
Tesseract), stamped by the access map, searched through the search function's routes with real
Cognito tokens against a real OpenSearch node. The 120-page report, the deck, the workbook and the scan are
generated (no real file with a word on exactly one known page exists); page boundaries of files
written by real applications are tested in tests/unit/extract/test_pages.py.
"""

from __future__ import annotations

import io
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devkit import samples
from devkit.messages import sqs_event
from docindex.index.search import search
from docindex.worker.pool import OcrPool
from tests.conftest import Aws
from tests.integration.conftest import build_indexer, invoke
from tests.support.scans import LAYOUT
from tests.support.search_api import SearchWorld, put_and_index, shared_world

WORD = "内部統制"
REPORT = "営業部/年次報告/2024_年次報告書.pdf"
DECK = "営業部/会議/戦略会議.pptx"
WORKBOOK = "営業部/集計/売上集計.xlsx"
SCAN = "営業部/スキャン/監査メモ.pdf"


def _report_pages() -> list[str]:
    pages = [f"第{n}頁 事業の概況 売上高と営業利益の推移について説明します。" for n in range(1, 121)]
    pages[86] = f"第87頁 {WORD}の評価結果 経営者は有効であると判断しました。"
    return pages


def _files() -> dict[str, bytes]:
    slides = [f"議題{n}\n売上の見通しと施策" for n in range(1, 21)]
    slides[11] = f"議題12\n{WORD}の整備状況"
    return {
        REPORT: samples.make_pdf(_report_pages(), title="2024年度 年次報告書"),
        DECK: samples.make_pptx(slides, title="戦略会議"),
        WORKBOOK: samples.make_xlsx(
            {"概要": [["決算概要"], ["売上高は増加"]], "監査": [["項目", "状況"], [f"{WORD}の評価", "済"]]}
        ),
    }


@pytest.fixture(scope="module")
def world(
    aws: Aws, search_engine: Any, ocr_pool: OcrPool, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SearchWorld]:
    """The files indexed once for the module. Its tests read them; what a test adds or deletes is
    its own file, in 人事部/ where the sales user (whom the other tests search as) never sees it."""
    with shared_world(aws, search_engine, ocr_pool, tmp_path_factory.mktemp("pages")) as (world, make_worker):
        stack = world.stack
        access = {"ACCESS_MAP_URI": str(world.map_path), "ACCESS_MAP_TTL_SECONDS": "0"}
        files = _files()
        # The scan: three small image-only pages, the words on the third only.
        files[SCAN] = samples.make_scan_pdf(
            [["監査メモ", "表紙"], ["前年度の指摘事項", "なし"], [f"{WORD} 監査", "改善済み"]],
            dpi=200,
            page=(4.0, 3.0),
            **LAYOUT,
        )
        put_and_index(world, files, **access)
        # The scan went to the OCR worker.
        assert stack.doc(SCAN)["_source"]["ocr_status"] == "pending"
        worker = make_worker(stack, **access)
        assert worker.poll_once(wait_seconds=1) == 1
        stack.opensearch.indices.refresh(index=stack.index)
        yield world


def _hit(result: dict[str, Any], path: str) -> dict[str, Any]:
    return next(hit for hit in result["hits"] if hit["path"] == path)


def _text(segments: list[dict[str, Any]]) -> str:
    return "".join(s["text"] for s in segments)


def test_each_hit_names_the_page_its_words_are_on(world: SearchWorld) -> None:
    # When an employee searches the word
    result = world.search("sales", q=WORD)
    # Then every file is found, and each names the one page that holds the word
    assert {hit["path"] for hit in result["hits"]} == {REPORT, DECK, WORKBOOK, SCAN}
    expected = {REPORT: (87, "p. 87"), DECK: (12, "スライド 12"), WORKBOOK: (2, "シート 監査"), SCAN: (3, "p. 3")}
    for path, (number, label) in expected.items():
        hit = _hit(result, path)
        assert [(p["number"], p["label"]) for p in hit["pages"]] == [(number, label)], path
        assert hit["matching_pages"] == 1
        # with a snippet from that page, the word marked
        snippet = hit["pages"][0]["snippet"]
        assert {"text": WORD, "match": True} in snippet or WORD in "".join(s["text"] for s in snippet if s["match"])
    assert "第87頁" in _text(_hit(result, REPORT)["pages"][0]["snippet"])
    assert _hit(result, SCAN)["pages"][0]["kind"] == "page"
    assert _hit(result, DECK)["pages"][0]["kind"] == "slide"
    assert _hit(result, WORKBOOK)["pages"][0]["kind"] == "sheet"
    # A word on many pages: the best few are listed, all of them counted
    hit = _hit(world.search("sales", q="事業の概況"), REPORT)
    assert len(hit["pages"]) == 3  # SEARCH_PAGE_HITS
    assert hit["matching_pages"] == 119  # every page but 87
    assert 87 not in {p["number"] for p in hit["pages"]}
    # The operator's search names the page too
    hits = search(world.stack.opensearch, world.stack.index, WORD, operators=True)
    report = next(h for h in hits if h["key"] == REPORT)
    assert [(p["number"], p["label"]) for p in report["pages"]] == [(87, "p. 87")]
    assert f"[{WORD}]" in report["pages"][0]["snippet"].replace("][", "")
    assert report["matching_pages"] == 1


def test_open_at_the_page_is_for_readers_only(world: SearchWorld) -> None:
    report = world.id_of(REPORT)
    sales = world.tokens["sales"]["access_token"]
    # A reader gets the PDF inline at the page (the viewer's #page=N)
    status, link = world.call(f"/documents/{report}/download", sales, page="87")
    assert status == 200
    assert link["url"].endswith("#page=87")
    assert link["page"] == 87
    with urllib.request.urlopen(link["url"].split("#")[0], timeout=10) as response:  # moto's presigned URL
        assert response.headers["Content-Type"] == "application/pdf"
        assert response.headers["Content-Disposition"].startswith("inline")
        assert response.read(5) == b"%PDF-"
    # A deck opens as its download (no viewer parameter for it)
    status, link = world.call(f"/documents/{world.id_of(DECK)}/download", sales, page="12")
    assert status == 200
    assert "#page" not in link["url"]
    assert "page" not in link
    # Someone without rights gets the 404 of a missing file
    hr = world.tokens["hr"]["access_token"]
    missing = "0" * 64
    forbidden = world.call(f"/documents/{report}/download", hr, page="87")
    absent = world.call(f"/documents/{missing}/download", hr, page="87")
    assert forbidden == absent == (404, {"message": "not found"})
    assert world.call(f"/documents/{report}/download", sales, page="x")[0] == 400

    # Pages are written with their file, and deleted with it (a copy of the report, the module's
    # other tests read the report itself)
    stack = world.stack
    copy = "人事部/年次報告/2024_年次報告書 写し.pdf"
    put_and_index(world, {copy: _files()[REPORT]}, ACCESS_MAP_URI=str(world.map_path), ACCESS_MAP_TTL_SECONDS="0")
    for key in (REPORT, copy):
        source = stack.doc(key)["_source"]
        assert len(source["pages"]) == 120
        assert source["pages"][86]["n"] == 87
        assert json.dumps(source["allow_principals"], ensure_ascii=False)
    assert copy in {hit["path"] for hit in world.search("hr", q=WORD)["hits"]}
    # When the file is deleted
    stack.aws.s3.delete_object(Bucket=stack.bucket, Key=copy)
    body = {"docindex": "change", "bucket": stack.bucket, "key": copy, "action": "removed"}
    assert invoke(build_indexer(stack), sqs_event(body)) == set()
    stack.opensearch.indices.refresh(index=stack.index)
    # Then no page of it is found any more
    assert copy not in {hit["path"] for hit in world.search("hr", q=WORD)["hits"]}
    nested = {"nested": {"path": "pages", "query": {"match": {"pages.text": WORD}}}}
    found = stack.opensearch.search(index=stack.index, body={"query": nested, "_source": ["key"]})
    assert copy not in {h["_source"]["key"] for h in found["hits"]["hits"]}


def _preview(world: SearchWorld, user: str, doc: str, number: int, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """GET the preview as the function answers API Gateway (binary bodies come base64-encoded)."""
    import base64

    from devkit.local.context import LocalLambdaContext
    from devkit.local.gateway import http_api_event

    claims = world.verifier.verify(world.tokens[user]["access_token"])
    path = f"/documents/{doc}/pages/{number}/preview"
    event = http_api_event("GET", path, "", {"host": "localhost", **headers}, claims)
    response = world.resolver.resolve(event, LocalLambdaContext(timeout_seconds=10))
    body = response.get("body") or ""
    data = base64.b64decode(body) if response.get("isBase64Encoded") else str(body).encode()
    return int(response["statusCode"]), {k.lower(): v for k, v in (response.get("headers") or {}).items()}, data


def test_the_preview_is_that_page_and_only_for_readers(world: SearchWorld, tmp_path: Path) -> None:
    from PIL import Image

    from docindex.search_api.preview import render

    report = world.id_of(REPORT)
    # The report's page 87: a JPEG of exactly that page, no larger than the bound
    status, headers, jpeg = _preview(world, "sales", report, 87)
    assert status == 200, jpeg
    assert headers["content-type"] == "image/jpeg"
    assert headers["cache-control"].startswith("private")
    with Image.open(io.BytesIO(jpeg)) as image:
        assert max(image.size) == 1024  # SEARCH_PREVIEW_MAX_EDGE
    original = tmp_path / "report.pdf"
    original.write_bytes(_files()[REPORT])
    assert jpeg == render(original, "pdf", 87, 1024).jpeg
    assert jpeg != render(original, "pdf", 86, 1024).jpeg
    # Asked again with its ETag: not sent again
    assert _preview(world, "sales", report, 87, **{"If-None-Match": headers["etag"]})[0] == 304
    # The scan's page 3, rendered from the object (image-only pages)
    status, headers, scan = _preview(world, "sales", world.id_of(SCAN), 3)
    assert status == 200
    assert headers["content-type"] == "image/jpeg"
    assert _preview(world, "sales", world.id_of(SCAN), 2)[2] != scan
    # The deck's slide 12 and the workbook's second sheet have no renderer: their text
    status, headers, slide = _preview(world, "sales", world.id_of(DECK), 12)
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert json.loads(slide)["label"] == "スライド 12"
    assert WORD in json.loads(slide)["text"]
    sheet = json.loads(_preview(world, "sales", world.id_of(WORKBOOK), 2)[2])
    assert (sheet["label"], WORD in sheet["text"]) == ("シート 監査", True)
    # A page the file does not have, a reader without rights, a guessed id, a 304 for the wrong
    # user: all the same 404
    assert _preview(world, "sales", report, 121)[0] == 404
    assert _preview(world, "sales", world.id_of(DECK), 21)[0] == 404
    forbidden = _preview(world, "hr", report, 87)
    absent = _preview(world, "hr", "0" * 64, 87)
    assert forbidden[0] == absent[0] == 404
    assert forbidden[2] == absent[2]
    assert _preview(world, "hr", report, 87, **{"If-None-Match": headers["etag"]})[0] == 404


def test_the_operators_page_clause_reads_or_as_the_search_does(world: SearchWorld) -> None:
    # Given a PDF whose first page says 内部 often, its second holds 監査, its third 内部統制, and its
    # fourth neither (but the English "or")
    stack = world.stack
    key = "人事部/会議/監査の予定.pdf"
    pages = [
        "内部 内部資料 内部の会議 内部の連絡 内部の予定",
        "監査の結果について",
        "内部統制の評価について",
        "Payment by cash or card, either one or the other",
    ]
    stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=samples.make_pdf(pages))
    body = {"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"}
    assert invoke(build_indexer(stack), sqs_event(body)) == set()
    stack.opensearch.indices.refresh(index=stack.index)
    # When the operator searches either word (the CLI's OR)
    hits = search(stack.opensearch, stack.index, f"{WORD} OR 監査", operators=True)
    hit = next(h for h in hits if h["key"] == key)
    # Then the pages holding one of them come first, the page with only a part of one after them,
    # and the page that only says "or" is not named: OR is the operator, not a word to find
    assert {p["number"] for p in hit["pages"][:2]} == {2, 3}
    assert [p["number"] for p in hit["pages"]][2:] == [1]
    assert hit["matching_pages"] == 3


def test_a_file_without_pages_is_previewed_as_its_text(world: SearchWorld) -> None:
    # A text file has no pages: an answer citing it names its 本文 (body), and its preview is the file's text
    # (a 404 here was a failed request in the page's console on every such citation)
    key = "営業部/メモ/監査の段取り.txt"
    put_and_index(
        world,
        {key: "監査の段取り\n第1週に書類を集める。".encode()},
        ACCESS_MAP_URI=str(world.map_path),
        ACCESS_MAP_TTL_SECONDS="0",
    )
    status, headers, body = _preview(world, "sales", world.id_of(key), 1)
    assert (status, headers["content-type"]) == (200, "application/json")
    assert json.loads(body) == {
        "number": 1,
        "kind": "body",
        "label": "本文",
        "text": "監査の段取り\n第1週に書類を集める。",
    }
    # ... page 1 only, and only for its readers
    assert _preview(world, "sales", world.id_of(key), 2)[0] == 404
    assert _preview(world, "hr", world.id_of(key), 1)[0] == 404
