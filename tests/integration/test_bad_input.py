"""Files built to hurt, through the real indexer and the OCR worker (each in a fresh process).

For every file: the batch finishes, the process stays below the memory the
template gives it, the file is findable by name with a clear
``extraction_error``, and nothing outside the document is ever read (an XXE
entity points at a marker file and at a named pipe that notices being opened).

The two giant objects are served by a proxy in front of moto from sparse
files: moto holds every object in its own memory, and uploading gigabytes to it
takes minutes. The 21 GiB one is about the size guards (the indexer decides
from ``Content-Length``, the worker from its own limit, 20 GiB by default), and
the proxy counts the body bytes that actually left: a few MiB of socket buffer,
not 21 GiB. The 1 GiB log is within the worker's default limit: it is
downloaded whole, and its OCR process must still read only the prefix that
``MAX_CONTENT_CHARS`` can hold, not the gigabyte.

``MAX_CONTENT_CHARS`` is 100,000 here, not the default 2,000,000: what is tested is that a
document is cut at the limit, whatever it is, and a 2,000,000-character document costs the engine
seconds of CPU to analyse (test_search_api.py indexes one, to test that size itself).
"""

from __future__ import annotations

import errno
import io
import json
import os
import random
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devkit import samples
from devkit.faults import GiantObjects, Proxy
from devkit.messages import s3_notification, sqs_event
from docindex.core.changes import doc_id
from docindex.index.search import search
from tests.conftest import REPO_ROOT, Stack
from tests.support.template_model import load_template

MiB = 1024 * 1024
GiB = 1024 * MiB
SECRET = "SECRET-7c1d-never-index-me"
MAX_OBJECT_BYTES = 8 * MiB  # the Lambda reads at most this; bigger objects go to the worker
MAX_CONTENT_CHARS = 100_000  # text kept per document (module docstring)


@dataclass(frozen=True)
class Hostile:
    key: str
    word: str  # a word of the file name to search for
    content_type: str = "application/octet-stream"
    error: str | None = None  # expected extraction_error
    ocr: str | None = None  # expected final ocr_status (the file goes to the worker)
    content: str | None = None  # must be in the extracted text


class Tripwire:
    """A named pipe that notices being opened for reading: nothing may ever open it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.tripped = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            try:
                # Succeeds only while some process has the pipe open for reading.
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
                time.sleep(0.005)
                continue
            self.tripped.set()
            os.write(fd, SECRET.encode())
            os.close(fd)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def _padded(package: bytes, size: int) -> bytes:
    """The package with an incompressible member, so the file is ``size`` bytes or more."""
    buf = io.BytesIO(package)
    with zipfile.ZipFile(buf, "a", zipfile.ZIP_STORED) as zf:
        zf.writestr("word/media/padding.bin", random.Random(7).randbytes(size))
    return buf.getvalue()


def _long_key() -> str:
    """1,024 bytes of key: control characters, a percent sign that looks like an escape, plus signs."""
    head = "bad/長い名前 longkey 100%41 +plus+ sign\x01\x07\x1f\x7f\ttab "
    return head + "x" * (1024 - len(head.encode()) - 4) + ".txt"


def _run(mode: str, spec: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    spec_file, out_file = tmp_path / f"{mode}-spec.json", tmp_path / f"{mode}-result.json"
    spec_file.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "tests.support.hostile_run", mode, str(spec_file), str(out_file)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result: dict[str, Any] = json.loads(out_file.read_text(encoding="utf-8"))
    return result


def _template_default(parameter: str) -> int:
    return int(load_template()["Parameters"][parameter]["Default"])


@pytest.fixture
def tripwire(tmp_path: Path) -> Iterator[Tripwire]:
    wire = Tripwire(tmp_path / "tripwire.fifo")
    yield wire
    wire.close()


def test_hostile_files_are_indexed_by_name_within_memory_and_read_nothing_else(
    stack: Stack, tmp_path: Path, tripwire: Tripwire
) -> None:
    marker = tmp_path / "marker.txt"
    marker.write_text(SECRET)
    sparse = tmp_path / "huge.bin"
    with sparse.open("wb") as handle:
        handle.truncate(21 * GiB)  # a sparse file: 21 GiB long, no block on disk
    huge_log = tmp_path / "huge.log"
    with huge_log.open("wb") as handle:
        # 1 MiB of lines (ten times the characters of MAX_CONTENT_CHARS), then 1 GiB of nothing
        line = 0
        while handle.tell() < MiB:
            handle.write(f"{line:07d} 障害ログ hugelog entry\n".encode())
            line += 1
        handle.truncate(GiB)
    png_scan = samples.make_scan_png(["請求書", "株式会社サンプル 御中"], dpi=150)
    files: list[tuple[Hostile, bytes | None]] = [
        (Hostile("bad/報告書 bombdocx.docx", "bombdocx", error="zip_bomb"), samples.make_zip_bomb("docx", 2048)),
        (Hostile("bad/集計表 bombxlsx.xlsx", "bombxlsx", error="zip_bomb"), samples.make_zip_bomb("xlsx", 1024)),
        (Hostile("bad/外部実体 xxefile.docx", "xxefile", error="corrupt"), samples.make_xxe_docx(str(marker))),
        (Hostile("bad/外部実体 xxepipe.docx", "xxepipe", error="corrupt"), samples.make_xxe_docx(str(tripwire.path))),
        (Hostile("bad/笑い laughsdocx.docx", "laughsdocx", error="corrupt"), samples.make_billion_laughs_docx()),
        # Plain XML is text: indexed as written, entities never expanded.
        (Hostile("bad/laughsxml.xml", "laughsxml", content="<!ENTITY lol9"), samples.make_billion_laughs_xml()),
        (Hostile("bad/二万ページ manypages.pdf", "manypages", content="page of a very long report"), None),
        (Hostile("bad/壊れた相互参照 badxref.pdf", "badxref", content="cross-reference table"), None),
        (Hostile("bad/鍵付き locked.pdf", "locked", error="encrypted"), samples.make_encrypted_pdf(["機密"])),
        (Hostile("bad/空っぽ emptyfile.txt", "emptyfile", error="empty"), b""),
        (Hostile(_long_key(), "longkey", content="long key body"), b"long key body"),
        (
            Hostile("bad/偽装 lyingtype.docx", "lyingtype", "image/jpeg", content="本当は文書"),
            samples.make_docx(["本当は文書"]),
        ),
        # Handed to the OCR worker:
        (Hostile("bad/巨大 sparsehuge.bin", "sparsehuge", error="too_large", ocr="failed"), None),
        (Hostile("bad/巨大 hugelog.log", "hugelog", ocr="done", content="0000000 障害ログ hugelog entry"), None),
        (Hostile("bad/画像爆弾 pngbomb.png", "pngbomb", error="too_large", ocr="failed"), samples.make_png_bomb()),
        (Hostile("bad/壊れ画像 brokenpng.png", "brokenpng", error="corrupt", ocr="failed"), samples.make_corrupt_png()),
        (Hostile("bad/偽装 scanaspdf.pdf", "scanaspdf", "application/pdf", ocr="done", content="サンプル"), png_scan),
        (
            Hostile("bad/外部実体 大きい xxebig.docx", "xxebig", error="corrupt", ocr="failed"),
            _padded(samples.make_xxe_docx(str(tripwire.path)), MAX_OBJECT_BYTES + MiB),
        ),
    ]
    bodies = {
        "bad/二万ページ manypages.pdf": samples.make_many_pages_pdf(20_000),
        "bad/壊れた相互参照 badxref.pdf": samples.make_bad_xref_pdf(),
    }
    giants = {"bad/巨大 sparsehuge.bin": sparse, "bad/巨大 hugelog.log": huge_log}
    giant = GiantObjects({f"/{stack.bucket}/{key}": str(path) for key, path in giants.items()})
    proxy = Proxy(stack.aws.endpoint, giant).start()
    try:
        # Given the files in the bucket (the giant ones only behind the proxy)
        notifications = []
        for n, (hostile, body) in enumerate(files):
            data = body if body is not None else bodies.get(hostile.key)
            size = giants[hostile.key].stat().st_size if hostile.key in giants else 0
            if data is not None:
                stack.aws.s3.put_object(
                    Bucket=stack.bucket, Key=hostile.key, Body=data, ContentType=hostile.content_type
                )
                size = len(data)
            notifications.append(s3_notification(stack.bucket, hostile.key, sequencer=f"00AB{n:02d}", size=size))
        env = stack.settings_env(
            AWS_ENDPOINT_URL_S3=proxy.url,
            MAX_OBJECT_BYTES=str(MAX_OBJECT_BYTES),
            MAX_CONTENT_CHARS=str(MAX_CONTENT_CHARS),
        )

        # When the indexer gets them all in one batch
        indexer = _run("indexer", {"env": env, "event": sqs_event(*notifications), "timeout": 60}, tmp_path)
        # Then the batch finishes without a failed record, in a Lambda-sized process
        print(f"indexer batch: {indexer}")
        assert indexer["failed"] == []
        assert indexer["max_rss_mb"] < _template_default("IndexerMemorySize")
        for hostile, _ in files:
            doc = stack.doc(hostile.key)
            assert doc is not None, hostile.key
            source = doc["_source"]
            assert source["key"] == hostile.key
            if hostile.ocr:
                assert source["ocr_status"] == "pending", hostile.key
            else:
                assert source.get("extraction_error") == hostile.error, hostile.key
                assert hostile.content is None or hostile.content in source.get("content", ""), hostile.key

        # When the OCR worker takes the files handed to it (21 GiB is above its default limit)
        worker_env = {**env, "WORKER_CONCURRENCY": "2"}
        worker = _run("worker", {"env": worker_env, "timeout": 120}, tmp_path)
        # Then every job ends, within the task's memory (main process + one OCR process per slot)
        print(f"worker: {worker}")
        assert worker["jobs"] == sum(1 for hostile, _ in files if hostile.ocr)
        task_mb = worker["max_rss_mb"] + worker["concurrency"] * worker["children_max_rss_mb"]
        assert task_mb < _template_default("WorkerMemory")
        # ... and no OCR process held a giant file: the engines' models and a page (PP-OCR's
        # sessions and Tesseract's models load ~245 MiB; a small page adds little) plus at most
        # WORKER_MAX_IN_MEMORY_BYTES (256 MiB) of one file - never the 1 GiB log (~1,300 MiB)
        assert worker["children_max_rss_mb"] < 512 + 256
    finally:
        proxy.stop()

    for hostile, _ in files:
        source = (stack.doc(hostile.key) or {}).get("_source", {})
        # ... every file is findable by name, with a clear reason when its content is missing
        hits = search(stack.opensearch, stack.index, hostile.word, size=20)
        assert hostile.key in {hit["key"] for hit in hits}, hostile.word
        assert source.get("extraction_error") == hostile.error, hostile.key
        if hostile.ocr:
            assert source["ocr_status"] == hostile.ocr, hostile.key
        if hostile.content:
            assert hostile.content in source.get("content", ""), hostile.key
    many = stack.doc("bad/二万ページ manypages.pdf")
    assert many is not None
    assert many["_source"]["page_count"] == 20_000
    assert many["_source"]["content_truncated"] is True
    lying = stack.doc("bad/偽装 lyingtype.docx")
    assert lying is not None
    assert lying["_source"]["content_type"].endswith("wordprocessingml.document")  # detected, not trusted
    # ... the 21 GiB body never left the proxy (only what fits in socket buffers before the hang-up)
    assert giant.served.get(f"/{stack.bucket}/bad/巨大 sparsehuge.bin", 0) < 64 * MiB
    # ... while the 1 GiB log was downloaded whole (to disk) and indexed from its start
    assert giant.served.get(f"/{stack.bucket}/bad/巨大 hugelog.log", 0) >= GiB
    huge = stack.doc("bad/巨大 hugelog.log")
    assert huge is not None
    assert huge["_source"]["content_truncated"] is True
    assert MAX_CONTENT_CHARS - 100 < len(huge["_source"]["content"]) <= MAX_CONTENT_CHARS  # cut at a line end
    assert huge["_source"]["content"].startswith("0000000 障害ログ hugelog entry\n0000001 ")
    # ... and nothing outside a document was read: not the marker file, not the pipe
    assert not tripwire.tripped.is_set()
    stack.opensearch.indices.refresh(index=stack.index)
    found = stack.opensearch.search(index=stack.index, body={"query": {"match_phrase": {"content": SECRET}}})
    assert found["hits"]["hits"] == []
    assert all(SECRET not in json.dumps((stack.doc(h.key) or {}).get("_source", {})) for h, _ in files)
    long_key = stack.doc(_long_key())
    assert long_key is not None
    assert long_key["_id"] == doc_id(stack.bucket, _long_key())
    assert long_key["_source"]["filename"].startswith("長い名前 longkey 100%41 +plus+ sign\x01")
