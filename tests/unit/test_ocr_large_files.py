"""``large_files.extract_file`` (non-OCR files handed to the worker) reads a bounded number of bytes, whatever its size.

The worker admits objects up to ``WORKER_MAX_OBJECT_BYTES`` (20 GiB by
default) while its task has 4 GiB: a file read whole would kill the pool
process. The files here are sparse (gigabytes long, a few MiB on disk); the
bytes read are counted with ``/proc/self/io`` (``rchar``: every byte ``read``
returned to this process), and the largest file runs in a subprocess whose
address space is capped, so reading it whole fails there instead of taking the
test machine's memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from devkit import samples
from docindex.extract import ExtractionLimits
from docindex.extract.text import byte_budget
from docindex.worker import large_files
from docindex.worker.config import WorkerSettings

MiB = 1024 * 1024
GiB = 1024 * MiB
LIMITS = ExtractionLimits()
DEFAULT_MAX_OBJECT_BYTES = WorkerSettings.model_fields["max_object_bytes"].default
DEFAULT_IN_MEMORY = WorkerSettings.model_fields["max_in_memory_bytes"].default
# Reads besides the file's own bytes (a lazily imported module, a locale file): far below any file here.
SLACK = 2 * MiB
LINE = "行 {:07d}: 検索できる本文 searchable text\n"
T = TypeVar("T")

pytestmark = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/self/io")


def bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def counted(call: Callable[[], T]) -> tuple[T, int]:
    """``call()`` and the bytes this process read while it ran."""
    before = bytes_read()
    result = call()
    return result, bytes_read() - before


def text_file(path: Path, text_bytes: int, size: int) -> Path:
    """``text_bytes`` of numbered lines, then (sparse) padding up to ``size`` bytes."""
    with path.open("wb") as out:
        n = 0
        while out.tell() < text_bytes:
            out.write(LINE.format(n).encode())
            n += 1
        out.truncate(size)
    return path


def sparse(path: Path, start: bytes, size: int) -> Path:
    with path.open("wb") as out:
        out.write(start)
        out.truncate(size)
    return path


@pytest.fixture(autouse=True)
def warm_imports(tmp_path: Path) -> None:
    """Import the extractors' lazy modules before anything is counted."""
    html = tmp_path / "warm.html"
    html.write_bytes(b"<html><title>t</title><body><p>x</p></body></html>")
    large_files.extract_file(str(html), html.name, LIMITS, DEFAULT_IN_MEMORY)
    docx = tmp_path / "warm.docx"
    docx.write_bytes(samples.make_docx(["x"]))
    large_files.extract_file(str(docx), docx.name, LIMITS, DEFAULT_IN_MEMORY)


def test_a_text_file_larger_than_memory_is_read_only_as_far_as_max_chars_reaches(tmp_path: Path) -> None:
    # Given a 4 GiB text file, under the worker's default object limit
    size = 4 * GiB
    assert size <= DEFAULT_MAX_OBJECT_BYTES
    path = text_file(tmp_path / "huge.csv", byte_budget(LIMITS) + MiB, size)
    # When it is extracted with the default bounds
    doc, read = counted(lambda: large_files.extract_file(str(path), "huge.csv", LIMITS, DEFAULT_IN_MEMORY))
    # Then it is indexed from its start, marked truncated, and only the prefix was read
    assert doc.error is None
    assert doc.kind == "text"
    assert doc.content_type == "text/csv"
    assert doc.truncated is True
    assert doc.text.startswith(LINE.format(0).strip())
    assert LIMITS.max_chars - 100 < len(doc.text) <= LIMITS.max_chars  # max_chars, less a trimmed line end
    assert read <= byte_budget(LIMITS) + large_files.HEAD_BYTES + SLACK


def test_the_prefix_is_cut_at_the_in_memory_bound_when_max_chars_would_reach_further(tmp_path: Path) -> None:
    # Given MAX_CONTENT_CHARS so large that its byte budget (4 GiB) exceeds the in-memory bound
    limits = ExtractionLimits(max_chars=GiB)
    path = text_file(tmp_path / "big.txt", 3 * MiB, 6 * GiB)
    # When it is extracted with a 1 MiB bound
    doc, read = counted(lambda: large_files.extract_file(str(path), "big.txt", limits, MiB))
    # Then no more than the bound was read, cut after a whole line (strict UTF-8 still decodes)
    assert read <= MiB + large_files.HEAD_BYTES + SLACK
    assert doc.error is None
    assert doc.encoding == "utf-8"
    assert doc.truncated is True
    assert doc.text.endswith("searchable text")
    assert MiB // 4 < len(doc.text.encode()) <= MiB


def test_a_long_html_page_is_read_as_a_prefix(tmp_path: Path) -> None:
    limits = ExtractionLimits(max_chars=1000)
    rows = "".join(f"<p>段落 {n}</p>\n" for n in range(20_000))
    path = tmp_path / "page.html"
    path.write_text(f"<html><head><title>長い頁</title></head><body>{rows}</body></html>", encoding="utf-8")
    doc, read = counted(lambda: large_files.extract_file(str(path), path.name, limits, DEFAULT_IN_MEMORY))
    assert (doc.kind, doc.title, doc.error, doc.truncated) == ("html", "長い頁", None, True)
    assert doc.text.startswith("段落 0")
    assert "段落 19999" not in doc.text
    assert read <= large_files.HEAD_BYTES + SLACK


def test_a_short_text_file_is_read_whole_and_not_truncated(tmp_path: Path) -> None:
    path = tmp_path / "memo.txt"
    path.write_bytes("会議は木曜日です\n".encode("cp932"))
    doc = large_files.extract_file(str(path), path.name, LIMITS, DEFAULT_IN_MEMORY)
    assert (doc.text, doc.encoding, doc.truncated, doc.error) == ("会議は木曜日です", "cp932", False, None)


def test_an_office_file_above_the_in_memory_bound_is_too_large_without_its_body_being_read(tmp_path: Path) -> None:
    # Given a DOCX that is 3 GiB long (its zip directory is somewhere in there)
    path = sparse(tmp_path / "巨大.docx", samples.make_docx(["本文"]), 3 * GiB)
    # When it is extracted with the default in-memory bound
    doc, read = counted(lambda: large_files.extract_file(str(path), path.name, LIMITS, DEFAULT_IN_MEMORY))
    # Then it is too_large, typed from its start and name, and only that start was read
    assert doc.error == "too_large"
    assert doc.kind == "docx"
    assert doc.content_type.endswith("wordprocessingml.document")
    assert doc.text == ""
    assert str(3 * GiB) in (doc.error_detail or "")
    assert read <= large_files.HEAD_BYTES + SLACK


def test_an_office_file_within_the_bound_is_extracted_whole(tmp_path: Path) -> None:
    path = tmp_path / "議事録.docx"
    path.write_bytes(samples.make_docx(["第3回 経営会議 議事録"]))
    doc = large_files.extract_file(str(path), path.name, LIMITS, MiB)
    assert (doc.kind, doc.error, doc.truncated) == ("docx", None, False)
    assert "経営会議" in doc.text


def test_an_unsupported_binary_is_judged_from_its_first_bytes(tmp_path: Path) -> None:
    # Given 3 GiB of something without an extractor (no known signature: NUL bytes)
    path = sparse(tmp_path / "disk.img", b"", 3 * GiB)
    doc, read = counted(lambda: large_files.extract_file(str(path), path.name, LIMITS, DEFAULT_IN_MEMORY))
    assert doc.error == "unsupported"
    assert read <= large_files.HEAD_BYTES + SLACK


def test_an_empty_file_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert large_files.extract_file(str(path), path.name, LIMITS, DEFAULT_IN_MEMORY).error == "empty"


_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from docindex.worker import large_files
    from docindex.extract import ExtractionLimits
    from docindex.worker.config import WorkerSettings

    path, cap = sys.argv[1], int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    in_memory = WorkerSettings.model_fields["max_in_memory_bytes"].default
    doc = large_files.extract_file(path, "export.csv", ExtractionLimits(), in_memory)
    status = open("/proc/self/status").read().splitlines()
    peak = next(line for line in status if line.startswith("VmHWM:"))
    print(json.dumps({
        "error": doc.error,
        "truncated": doc.truncated,
        "head": doc.text[:40],
        "chars": len(doc.text),
        # This process's own peak (ru_maxrss would include the parent's, inherited through exec).
        "max_rss_mb": int(peak.split()[1]) / 1024,
    }))
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc/self/status are Linux's")
def test_a_pool_process_extracts_a_huge_text_file_within_a_fraction_of_the_task_memory(tmp_path: Path) -> None:
    # Given an 8 GiB CSV (twice the default task's 4 GiB), and a process that may not map more than 1.5 GiB
    path = text_file(tmp_path / "export.csv", 12 * MiB, 8 * GiB)
    cap = 3 * GiB // 2
    # When a fresh process extracts it as a pool process would
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(cap)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # Then it finishes (reading it whole would raise MemoryError there) with the file's start
    assert child.returncode == 0, child.stderr[-2000:]
    result = json.loads(child.stdout)
    assert result["error"] is None
    assert result["truncated"] is True
    assert result["head"].startswith("行 0000000")
    assert ExtractionLimits().max_chars - 100 < result["chars"] <= ExtractionLimits().max_chars
    # ... and its peak memory is that of an 8 MB prefix, not of the file
    assert result["max_rss_mb"] < 200, result
