"""Open a sample of the bucket's files the way the indexer does, and measure what they become.

For each sampled object: ``GetObject``, the indexer's own extraction (``docindex.extract``), the
index document it would write (``IndexDocument.extracted(...).source()``, ``variants`` included:
that is what is sent), its pages, whether it needs OCR (and how many pages: a scan's text comes from
the worker, so its size is estimated from characters per scanned page), and its passages as the
worker's chunker cuts them (``docindex.embed.chunks``). Nothing is written anywhere.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

MAX_SAMPLED_BYTES = 64 * 1024 * 1024  # a larger sampled file is measured by its kind's other samples


@dataclass(frozen=True)
class Measured:
    """One sampled file, as the pipeline would index it."""

    key: str
    size: int
    pages: int  # pages, slides, sheets (1 for a file without pages)
    scanned_pages: int  # pages the OCR worker reads
    chars: int  # extracted characters (0 for a scan: OCR'd later)
    passages: int  # for meaning search (a scan's estimated from characters per scanned page)
    sent_bytes: int  # the index document's JSON (vectors not included)
    error: str | None = None


@dataclass
class SampleRun:
    measured: list[Measured] = field(default_factory=list)
    unreadable: int = 0  # listed but not readable (gone, archived, access denied)
    skipped_large: int = 0


def passages_of(text: str, pages: Any, *, title: str | None, max_passages: int, max_chars: int) -> int:
    """How many passages the worker embeds for this text (``docindex.embed.document.embed_document``'s cut:
    page by page where the file has pages, at most ``max_passages``; a title alone is one)."""
    from docindex.embed.chunks import passages
    from docindex.index.documents import page_entries

    found = 0
    if pages:
        for page in page_entries(pages):
            if found >= max_passages:
                break
            found += len(passages(str(page["text"] or ""), max_chars=max_chars, max_passages=max_passages - found))
    elif text.strip():
        found = len(passages(text, max_chars=max_chars, max_passages=max_passages))
    return found or (1 if title and text.strip() else 0)


def measure_file(
    bucket: str, key: str, size: int, data: bytes, *, max_passages: int, max_chars: int, scan_chars: int
) -> Measured:
    """What one file becomes in the index (its bytes already read)."""
    from docindex.extract import extract
    from docindex.extract.base import ExtractionLimits
    from docindex.index.documents import IndexDocument

    extracted = extract(data, key.rsplit("/", 1)[-1], ExtractionLimits())
    pages = max(1, extracted.page_count or 1)
    base = IndexDocument.for_object(bucket=bucket, key=key, size=size, content_type=extracted.content_type)
    if extracted.ocr_reason:
        document = base.pending_ocr(extracted.ocr_reason)
        sent = len(json.dumps(document.source(), ensure_ascii=False).encode())
        # The OCR'd text: characters per scanned page, written as content and as each page.
        passages = min(max_passages, math.ceil(pages * scan_chars / max_chars)) if scan_chars else 0
        return Measured(key, size, pages, pages, 0, passages, sent, extracted.error)
    document = base.with_extracted(extracted)
    sent = len(json.dumps(document.source(), ensure_ascii=False).encode())
    passages = passages_of(
        extracted.text, extracted.pages, title=extracted.title, max_passages=max_passages, max_chars=max_chars
    )
    return Measured(key, size, pages, 0, len(extracted.text), passages, sent, extracted.error)


def measure_sample(
    s3: Any,
    bucket: str,
    chosen: list[tuple[str, int]],
    *,
    max_passages: int,
    max_chars: int,
    scan_chars: int,
    threads: int = 4,
    progress: Callable[[int, int], None] | None = None,
) -> SampleRun:
    """Read and measure ``chosen`` (key, size) files; what could not be read is counted, not measured."""
    run = SampleRun()
    # Text/spreadsheet extraction holds the GIL and PDFium a lock: a few threads overlap the GETs.

    def one(item: tuple[str, int]) -> Measured | str:
        key, size = item
        if size > MAX_SAMPLED_BYTES:
            return "large"
        try:
            body = s3.get_object(Bucket=bucket, Key=key)["Body"]
            try:
                data = body.read()
            finally:
                body.close()
        except (ClientError, BotoCoreError):
            return "unreadable"
        return measure_file(
            bucket, key, size, data, max_passages=max_passages, max_chars=max_chars, scan_chars=scan_chars
        )

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for done, outcome in enumerate(pool.map(one, chosen), start=1):
            if outcome == "large":
                run.skipped_large += 1
            elif outcome == "unreadable":
                run.unreadable += 1
            elif isinstance(outcome, Measured):
                run.measured.append(outcome)
            if progress is not None:
                progress(done, len(chosen))
    return run
