"""Reading an object's content within an invocation's budgets: from the content cache or by extraction.

The body is held only while it is needed: it is looked up in the content cache by its
SHA-256 (a rename, a move or a copy was extracted before), extracted otherwise (and the
result cached), and freed, with its share of the invocation's byte budget, before the
document waits for its ``_bulk`` write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from docindex.core.changes import Action
from docindex.extract import Deadline, extract
from docindex.index.documents import file_name_parts
from docindex.ingest.cache import CachedContent
from docindex.ingest.invocation import EXTRACTION_MARGIN_SECONDS

if TYPE_CHECKING:
    from docindex.core.changes import ObjectChange
    from docindex.core.storage import ByteBudget, FetchedObject, ObjectStore
    from docindex.extract import ExtractedDocument, ExtractionLimits
    from docindex.extract.isolation import ExtractionPool
    from docindex.ingest.cache import ContentCache


@dataclass(frozen=True)
class ReadContent:
    """What reading an object gave: its identity, and its content from the cache or extraction.

    Neither ``cached`` nor ``extracted``: the object is too large to read here (the OCR
    worker reads it).
    """

    fetched: FetchedObject
    extracted: ExtractedDocument | None = None
    cached: CachedContent | None = None


class ContentReader:
    """Reads objects for the indexer; one per process, shared by the records of every invocation."""

    def __init__(
        self, store: ObjectStore, cache: ContentCache, limits: ExtractionLimits, *, max_object_bytes: int
    ) -> None:
        self.store = store
        self.cache = cache
        self.limits = limits
        self.max_object_bytes = max_object_bytes

    def read(
        self,
        change: ObjectChange,
        *,
        version_id: str | None,
        budget: ByteBudget,
        time_left: Callable[[], float],
        pool: ExtractionPool | None,
    ) -> ReadContent | None:
        """The content of ``change``'s object (``version_id``, or the current one); None when it is gone."""
        # The event's size is the size of this very version only for a create.
        size_hint = change.size if change.action is Action.CREATED else None
        extracted: ExtractedDocument | None = None
        cached: CachedContent | None = None
        with self.store.reading(
            change.bucket,
            change.key,
            version_id=version_id,
            max_bytes=self.max_object_bytes,
            budget=budget,
            size_hint=size_hint,
        ) as read:
            if read is None:
                return None
            if read.data is not None and not change.is_reprocess:
                cached = self.cache.get(read.content_sha256)
            if read.data is not None and cached is None:
                filename, _ = file_name_parts(change.key)
                # Stop extracting while there is still time to write what we have
                # and report the record; never beyond EXTRACTION_TIMEOUT_SECONDS.
                seconds = min(self.limits.timeout_seconds, max(1.0, time_left() - EXTRACTION_MARGIN_SECONDS))
                extracted = extract(read.data, filename, self.limits, deadline=Deadline(seconds), pool=pool)
                self.cache.put(read.content_sha256, CachedContent.from_extracted(extracted))
            # The body is not needed past extraction: free it (and its share of
            # the budget) before the document waits for its bulk write.
            fetched = read.without_data()
            del read
        return ReadContent(fetched=fetched, extracted=extracted, cached=cached)
