"""The query's words marked on a scan's preview (issue 28), through the real pipeline.

Real scans from the OCR defect corpus (tests/fixtures/ocr/README.md): Tesseract's own
``phototest`` upright and turned 90° counter-clockwise (Apache-2.0, tesseract-ocr/test), and a
copier's scan of a Japanese notice upright and turned 90° counter-clockwise. Uploaded to moto S3,
indexed by the real indexer, read by the real OCR worker (which turns the sideways pages upright
to read them, and the preview shows them upright too), previewed through the search function's routes with real Cognito
tokens against a real OpenSearch node.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest

from devkit.messages import sqs_event
from devkit.ocr_defects import FIXTURES
from docindex.ingest.wordboxes import PageWords, WordBoxStore
from docindex.search_api.marks import marked_boxes
from docindex.worker.pool import OcrPool
from tests.conftest import Aws
from tests.integration.conftest import build_indexer, invoke
from tests.support.search_api import SearchWorld, put_and_index, shared_world

SCANS = {
    "営業部/スキャン/phototest.tif": "tesseract-phototest.tif",
    "営業部/スキャン/phototest-left.png": "tesseract-phototest-rotated-L.png",
    "営業部/スキャン/お知らせ.tif": "upright-notice.tif",
    "営業部/スキャン/お知らせ-横.tif": "rotated90-notice.tif",
}
COPY = "営業部/コピー/お知らせ-横.tif"
TEXT_PDF = "営業部/報告/報告.pdf"


@pytest.fixture(scope="module")
def world(
    aws: Aws, search_engine: Any, ocr_pool: OcrPool, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SearchWorld]:
    """The scans indexed and OCR'd once for the module: the tests read them (the second adds a copy no other reads)."""
    from devkit import samples

    with shared_world(aws, search_engine, ocr_pool, tmp_path_factory.mktemp("preview-marks")) as (world, make_worker):
        stack = world.stack
        access = {"ACCESS_MAP_URI": str(world.map_path), "ACCESS_MAP_TTL_SECONDS": "0"}
        files = {key: (FIXTURES / name).read_bytes() for key, name in SCANS.items()}
        files[TEXT_PDF] = samples.make_pdf(["健康診断のお知らせ 本年度の定期健康診断を次のとおり実施します。"])
        put_and_index(world, files, **access)
        worker = make_worker(stack, **access)
        done = 0
        while done < len(SCANS):
            finished = worker.poll_once(wait_seconds=1)
            assert finished, f"{len(SCANS) - done} OCR jobs never arrived"
            done += finished
        stack.opensearch.indices.refresh(index=stack.index)
        yield world


def _words(world: SearchWorld, key: str) -> PageWords:
    stack = world.stack
    source = stack.doc(key)["_source"]
    assert source["ocr_status"] == "done", source
    found = WordBoxStore(stack.aws.s3, stack.env["CONTENT_CACHE_BUCKET"]).get(source["content_sha256"], 1)
    assert found is not None, key
    return found


def _box(words: PageWords, text: str) -> tuple[float, float, float, float]:
    (word,) = [w for w in words.words if w.text.rstrip(".") == text]
    return word.box


def _turned(box: tuple[float, float, float, float], rotation: int) -> tuple[float, float, float, float]:
    """Where a box of the page as stored lies once the page is turned ``rotation`` degrees counter-clockwise."""
    left, top, right, bottom = box
    return {
        0: box,
        90: (top, 1 - right, bottom, 1 - left),
        180: (1 - right, 1 - bottom, 1 - left, 1 - top),
        270: (1 - bottom, left, 1 - top, right),
    }[rotation]


def _turned_left(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """Where a box of the upright page lies once the page is turned 90° counter-clockwise."""
    left, top, right, bottom = box
    return (top, 1 - right, bottom, 1 - left)


def test_the_worker_keeps_each_words_box_on_the_page_as_scanned(world: SearchWorld) -> None:
    # The upright phototest: "format" at the end of its third line, as Tesseract's truth has it
    upright = _words(world, "営業部/スキャン/phototest.tif")
    assert upright.page == 1
    assert [w.text for w in upright.lines()[2]] == ["of", "file", "format."]
    left, top, right, bottom = _box(upright, "format")
    assert 0.1 < left < right < 0.5
    assert 0.25 < top < bottom < 0.45
    # The same page scanned sideways: the worker read it turned upright, and kept the box where
    # the word is on the sideways page (the page the preview shows), not on the turned one
    assert world.stack.doc("営業部/スキャン/phototest-left.png")["_source"]["ocr_pages"][0]["rotation"] == 270
    sideways = _words(world, "営業部/スキャン/phototest-left.png")
    assert _box(sideways, "format") == pytest.approx(_turned_left((left, top, right, bottom)), abs=0.01)
    # and its lines run up that page
    assert {w.flow for w in upright.words} == {"r"}
    assert {w.flow for w in sideways.words} == {"u"}
    # The Japanese notice, upright and sideways: 健康診断 in its title, in the same place
    for key in ("営業部/スキャン/お知らせ.tif", "営業部/スキャン/お知らせ-横.tif"):
        assert "".join(w.text for w in _words(world, key).lines()[0]).startswith("健康診断")
    title = _words(world, "営業部/スキャン/お知らせ.tif").lines()[0]
    turned = _words(world, "営業部/スキャン/お知らせ-横.tif").lines()[0]
    assert [w.text for w in turned] == [w.text for w in title]
    for before, after in zip(title, turned, strict=True):
        assert after.box == pytest.approx(_turned_left(before.box), abs=0.01)
    # A page's entry is small
    bucket = world.stack.env["CONTENT_CACHE_BUCKET"]
    keys = world.stack.aws.s3.list_objects_v2(Bucket=bucket, Prefix="ocr-words/")["Contents"]
    assert len(keys) == len(SCANS)
    assert all(entry["Size"] < 8 * 1024 for entry in keys)


def _preview(world: SearchWorld, user: str, doc: str, **params: str) -> tuple[int, dict[str, str], bytes]:
    import base64
    from urllib.parse import urlencode

    from devkit.local.context import LocalLambdaContext
    from devkit.local.gateway import http_api_event

    headers = {k: v for k, v in params.items() if k[0].isupper()}
    query = {k: v for k, v in params.items() if not k[0].isupper()}
    claims = world.verifier.verify(world.tokens[user]["access_token"])
    event = http_api_event(
        "GET", f"/documents/{doc}/pages/1/preview", urlencode(query), {"host": "localhost", **headers}, claims
    )
    response = world.resolver.resolve(event, LocalLambdaContext(timeout_seconds=10))
    body = response.get("body") or ""
    data = base64.b64decode(body) if response.get("isBase64Encoded") else str(body).encode()
    return int(response["statusCode"]), {k.lower(): v for k, v in (response.get("headers") or {}).items()}, data


def _pixels(jpeg: bytes) -> Any:
    from PIL import Image

    with Image.open(io.BytesIO(jpeg)) as image:
        return image.convert("RGB")


def test_the_preview_marks_the_querys_words_and_changes_nothing_else(world: SearchWorld) -> None:
    from PIL import Image, ImageChops, ImageDraw, ImageStat

    key = "営業部/スキャン/お知らせ-横.tif"
    doc = world.id_of(key)
    # When the sales user looks at the sideways notice's preview without and with the query
    status, plain_headers, plain = _preview(world, "sales", doc)
    assert status == 200
    status, headers, marked = _preview(world, "sales", doc, q="健康診断")
    assert status == 200
    assert headers["content-type"] == "image/jpeg"
    # Then the two differ exactly where the word is: tinted yellow there, the same elsewhere
    before, after = _pixels(plain), _pixels(marked)
    assert before.size == after.size
    width, height = before.size
    words = _words(world, key)
    # 健康診断: the title's first words (its characters, or runs of them: how an engine cuts Japanese
    # into words varies), and the same in the second line
    expected = marked_boxes(words, "健康診断")
    title, second = words.lines()[:2]
    head = next(n for n in range(1, len(title) + 1) if len("".join(w.text for w in title[:n])) >= 4)
    assert "".join(w.text for w in title[:head]) == "健康診断"
    assert expected[:head] == [w.box for w in title[:head]]
    in_second = expected[head:]
    assert in_second
    assert "".join(w.text for w in second if w.box in in_second) == "健康診断"
    # The page was fed sideways: its preview shows it upright, turned as OCR read it, the marks with it
    rotation = world.stack.doc(key)["_source"]["ocr_pages"][0]["rotation"]
    assert rotation == 270
    assert width > height  # the notice is a landscape page, stored on its side as a portrait image
    shown = [_turned(box, rotation) for box in expected]
    region = Image.new("L", before.size, 0)
    draw = ImageDraw.Draw(region)
    for left, top, right, bottom in shown:
        # JPEG codes 16 x 16 blocks: a changed pixel changes its block
        draw.rectangle((left * width - 16, top * height - 16, right * width + 16, bottom * height + 16), fill=255)
    changed = ImageChops.difference(before, after).convert("L").point(lambda value: 255 if value > 8 else 0)
    assert changed.getbbox() is not None
    outside = ImageChops.subtract(changed, region)
    assert outside.getbbox() is None, "pixels changed away from the word"
    for left, top, right, bottom in shown:
        box = (int(left * width) + 2, int(top * height) + 2, int(right * width) - 2, int(bottom * height) - 2)
        (_, _, blue_before) = ImageStat.Stat(before.crop(box)).mean
        (red, green, blue) = ImageStat.Stat(after.crop(box)).mean
        # yellow over the page
        assert blue < blue_before - 60
        assert red > blue + 60
        assert green > blue + 40
    # The ETag follows the query: the unmarked copy is not reused for the marked one
    assert headers["etag"] != plain_headers["etag"]
    assert _preview(world, "sales", doc, q="健康診断", **{"If-None-Match": plain_headers["etag"]})[0] == 200
    assert _preview(world, "sales", doc, q="健康診断", **{"If-None-Match": headers["etag"]})[0] == 304
    # A word that is not on the page marks nothing; a copy of the scan (the same bytes) is
    # indexed from the cache, never OCR'd again, and marked the same
    assert _pixels(_preview(world, "sales", doc, q="存在しない語")[2]).tobytes() == before.tobytes()
    stack = world.stack
    stack.aws.s3.copy_object(Bucket=stack.bucket, Key=COPY, CopySource={"Bucket": stack.bucket, "Key": key})
    body = {"docindex": "change", "bucket": stack.bucket, "key": COPY, "action": "created"}
    indexer = build_indexer(stack, ACCESS_MAP_URI=str(world.map_path), ACCESS_MAP_TTL_SECONDS="0")
    assert invoke(indexer, sqs_event(body)) == set()
    stack.opensearch.indices.refresh(index=stack.index)
    assert stack.doc(COPY)["_source"]["ocr_status"] == "done"
    assert stack.messages("OCR_QUEUE_URL") == []
    assert _preview(world, "sales", world.id_of(COPY), q="健康診断")[2] == marked
    # A text PDF has no boxes: its preview is the same with the query
    text_pdf = world.id_of(TEXT_PDF)
    assert _preview(world, "sales", text_pdf, q="健康診断")[2] == _preview(world, "sales", text_pdf)[2]
    # Someone without rights gets the 404 of a missing file, with or without the query
    forbidden = _preview(world, "hr", doc, q="健康診断")
    absent = _preview(world, "hr", "0" * 64, q="健康診断")
    assert forbidden[0] == absent[0] == 404
    assert forbidden[2] == absent[2]
    assert _preview(world, "hr", doc, q="健康診断", **{"If-None-Match": headers["etag"]})[0] == 404
    # A query the search would refuse is refused here too
    assert _preview(world, "sales", doc, q="x" * 300)[0] == 400
