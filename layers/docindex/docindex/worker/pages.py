"""A document's pages read in the pool processes, in order, within the job's lease and deadline.

At most ``pool.processes`` pages are in flight at once, so a job's memory is bounded
whatever its page count; the parts of a split document (``docindex.worker.ranges``)
are assembled into one content in page order.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, TypeVar

from docindex.core.exceptions import JobAbandoned, TransientError
from docindex.core.observability import logger
from docindex.extract.base import PageText
from docindex.index.documents import OcrStatus
from docindex.worker.content import JobContent, Split
from docindex.worker.ocr import DocumentInfo, PageResult, probe, process_page
from docindex.worker.ranges import RangePart

if TYPE_CHECKING:
    from docindex.worker.leases import Lease
    from docindex.worker.options import OcrOptions
    from docindex.worker.pool import OcrPool

T = TypeVar("T")


class PoolProcessLost(TransientError):
    """A pool process died under the job (killed out of memory, a crash in native code); retried, and counted.

    ``pages_read``: the pages this attempt had read before it; the retry reads them again.
    """

    pages_read = 0


class PageReader:
    """Reads pages through the worker's pool; one per worker, shared by its job threads."""

    def __init__(self, pool: OcrPool, options: OcrOptions, *, max_pages: int, max_content_chars: int) -> None:
        self.pool = pool
        self.options = options
        self.max_pages = max_pages
        self.max_content_chars = max_content_chars

    def probe(self, path: str, kind: Any, lease: Lease, *, owner: str) -> DocumentInfo:
        """Page count and title (or why the file cannot be opened)."""
        return self.wait(self.pool.submit(probe, path, kind, self.options, owner=owner), lease)

    def document(
        self,
        path: str,
        kind: Any,
        lease: Lease,
        deadline: float,
        *,
        split_above: int | None,
        owner: str,
        on_page: Callable[[PageResult], None] | None = None,
    ) -> JobContent | Split:
        """Every page in order, or a ``Split`` when there are more than ``split_above`` pages to read."""
        info = self.probe(path, kind, lease, owner=owner)
        if info.error:
            return JobContent(status=OcrStatus.FAILED, error=info.error, detail=info.detail)
        wanted = min(info.page_count, self.max_pages)
        if split_above and wanted > split_above:
            return Split(page_count=info.page_count, wanted=wanted)
        part = self.read(path, kind, (0, wanted), lease, deadline, owner=owner, on_page=on_page)
        return self.assemble([part], page_count=info.page_count, title=info.title)

    def read(
        self,
        path: str,
        kind: Any,
        pages: tuple[int, int],
        lease: Lease,
        deadline: float,
        *,
        owner: str,
        on_page: Callable[[PageResult], None] | None = None,
    ) -> RangePart:
        """Pages [first, last) in order, at most ``pool.processes`` in flight: bounded memory for any count.

        ``on_page`` is given each page as it is read (the job keeps its word boxes), so no more than
        the pages in flight are held.
        """
        first, last = pages
        part = RangePart(first_page=first, last_page=last)
        chars = 0
        in_flight: deque[Future[PageResult]] = deque()
        next_page = first
        done = 0
        try:
            while next_page < last or in_flight:
                while next_page < last and len(in_flight) < self.pool.processes:
                    in_flight.append(self.pool.submit(process_page, path, kind, next_page, self.options, owner=owner))
                    next_page += 1
                try:
                    page = self.wait(in_flight.popleft(), lease)
                except PoolProcessLost as exc:
                    exc.pages_read += done
                    raise
                done += 1
                _tally(part, page)
                if on_page is not None:
                    on_page(page)
                if page.text:
                    part.texts.append(page.text)
                    part.pages.append(page.index + 1)
                    chars += len(page.text) + 2
                if chars >= self.max_content_chars:
                    part.truncated = True
                    break
                if time.monotonic() >= deadline:
                    part.truncated = True
                    part.stopped_after = page.index + 1
                    break
        finally:
            for future in in_flight:
                future.cancel()
        return part

    def assemble(self, parts: list[RangePart], *, page_count: int, title: str | None) -> JobContent:
        """The document's content from its parts in page order (one part for a job that was not split)."""
        parts = sorted(parts, key=lambda part: part.first_page)
        wanted = max((part.last_page for part in parts), default=0)
        content = JobContent(status=OcrStatus.DONE, title=title, page_count=page_count)
        text = "\n\n".join(t for part in parts for t in part.texts)
        content.text = text[: self.max_content_chars]
        content.truncated = (
            wanted < page_count or len(text) > len(content.text) or any(part.truncated for part in parts)
        )
        content.pages = tuple(
            PageText(number=number, kind="page", text=page_text)
            for part in parts
            if len(part.pages) == len(part.texts)
            for number, page_text in zip(part.pages, part.texts, strict=True)
        )
        errors = [error for part in parts for error in part.errors]
        for part in parts:
            content.ocr_pages += part.ocr_pages
            content.text_layer_pages += part.text_layer_pages
            content.ocr_seconds += part.ocr_seconds
            content.vertical_pages += part.vertical_pages
            content.confidences.extend(part.confidences)
            content.ocr_page_info.extend(part.ocr_page_info)
            if part.stopped_after is not None and content.error is None:
                content.error = "timeout"
                content.detail = f"stopped after page {part.stopped_after} of {page_count}"
        if errors and content.error is None:
            content.error, content.detail = errors[0]
            if len(errors) >= wanted:
                content.status = OcrStatus.FAILED
        return content

    @staticmethod
    def wait(future: Future[T], lease: Lease) -> T:
        """The future's result, giving up as soon as the lease is lost or released."""
        while True:
            try:
                return future.result(timeout=0.25)
            except FutureTimeout:
                if not lease.usable(0):
                    future.cancel()
                    raise JobAbandoned(lease.reason or "lease ended") from None
            except (BrokenProcessPool, CancelledError) as exc:
                if not lease.usable(0):
                    raise JobAbandoned(lease.reason or "lease ended") from None
                raise PoolProcessLost(f"an OCR process died: {type(exc).__name__}: {exc}") from exc


def ocr_page_entry(page: PageResult) -> dict[str, Any]:
    """What the index records of an OCR'd page (``ocr_pages``): its number, why and how it was read."""
    entry: dict[str, Any] = {"page": page.index + 1, "reason": page.reason or "image", "confidence": page.confidence}
    if page.rotation:
        entry["rotation"] = page.rotation
    if page.skew:
        entry["skew"] = page.skew
    if page.vertical:
        entry["vertical"] = True
    return entry


def _tally(part: RangePart, page: PageResult) -> None:
    if page.error:
        part.errors.append((page.error, page.detail))
        logger.warning("page not read", extra={"page": page.index + 1, "error": page.error, "detail": page.detail})
    elif page.source == "ocr":
        part.ocr_pages += 1
        part.ocr_seconds += page.seconds
        part.vertical_pages += int(page.vertical)
        if page.confidence is not None:
            part.confidences.append(page.confidence)
        part.ocr_page_info.append(ocr_page_entry(page))
    elif page.source == "text_layer":
        part.text_layer_pages += 1
