"""Long scans as page-range jobs: any task takes a range, the last range to land writes the document.

A 300-page scan used to run on one task from its first page to its last (five minutes of
Tesseract at about 1 s a page on one vCPU, while the other tasks idle once the queue drains).
Now the job that finds more than ``WORKER_RANGE_PAGES`` pages sends one job per range to the
OCR queue instead of reading them (``OcrJob.page_range``) and ends. Each range job:

1. is stale unless the ledger still holds the job's generation (any newer change or a delete
   drops every range, as it drops a whole job);
2. reads its pages and stores them under ``ocr-ranges/<doc id>/<generation>/<first page>`` in
   the content cache bucket (encrypted, lifecycled; parts are deleted once used);
3. adds its first page to the ledger's number set ``ocr_ranges`` for that generation (a set:
   a retried or duplicated range counts once);
4. if the set is now complete, reads every part in page order and commits the document exactly
   as a whole job does (``Ledger.commit_ocr`` moves the generation, then the write): a crash
   after step 3 leaves the message to come back, and the retry finds the set complete and
   commits; a duplicate after the commit finds ``ocr_of`` and stops.

So the document stays ``pending`` until its last range lands and is written once, in page order.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.exceptions import TransientError

PREFIX = "ocr-ranges/"
# A part is read back at most this big (compressed) and inflated at most this far.
MAX_PART_BYTES = 64 * 1024 * 1024


def page_ranges(pages: int, size: int) -> list[tuple[int, int]]:
    """``[first, last)`` of each range of ``size`` pages covering ``pages`` pages."""
    return [(first, min(first + size, pages)) for first in range(0, pages, size)]


@dataclass
class RangePart:
    """What one range produced: its pages' text in order and how it was obtained."""

    first_page: int
    last_page: int
    texts: list[str] = field(default_factory=list)
    ocr_pages: int = 0
    text_layer_pages: int = 0
    ocr_seconds: float = 0.0
    vertical_pages: int = 0
    confidences: list[int] = field(default_factory=list)
    # One entry per OCR'd page: {"page", "reason", "confidence", "rotation", "skew", "vertical"} (index ``ocr_pages``).
    ocr_page_info: list[dict[str, Any]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (extraction_error, detail) per failed page
    truncated: bool = False
    stopped_after: int | None = None  # the job's deadline came after this page (1-based)


class RangeStore:
    """The parts of split jobs in the content cache bucket (gzip JSON), read back in page order."""

    def __init__(self, s3: Any, bucket: str | None) -> None:
        self._s3 = s3
        self._bucket = bucket

    @property
    def enabled(self) -> bool:
        return bool(self._bucket)

    @staticmethod
    def key(doc_id: str, generation: int, first_page: int) -> str:
        return f"{PREFIX}{doc_id}/{generation}/{first_page:07d}.json.gz"

    def put(self, doc_id: str, generation: int, part: RangePart) -> None:
        body = gzip.compress(json.dumps(asdict(part), ensure_ascii=False).encode("utf-8"), compresslevel=1)
        try:
            self._s3.put_object(
                Bucket=self._bucket,
                Key=self.key(doc_id, generation, part.first_page),
                Body=body,
                ContentType="application/json",
                ContentEncoding="gzip",
            )
        except (ClientError, BotoCoreError) as exc:
            raise TransientError(f"storing OCR pages {part.first_page + 1}-{part.last_page} failed: {exc}") from exc

    def get(self, doc_id: str, generation: int, first_page: int) -> RangePart:
        try:
            response = self._s3.get_object(Bucket=self._bucket, Key=self.key(doc_id, generation, first_page))
            packed = response["Body"].read(MAX_PART_BYTES + 1)
        except (ClientError, BotoCoreError) as exc:
            raise TransientError(f"reading OCR pages from {first_page + 1} failed: {exc}") from exc
        if len(packed) > MAX_PART_BYTES:
            raise TransientError(f"the stored OCR pages from {first_page + 1} are larger than {MAX_PART_BYTES} bytes")
        raw = json.loads(gzip.decompress(packed))
        raw["errors"] = [tuple(error) for error in raw.get("errors", [])]
        # A part written by a newer worker may carry fields this one does not know: they are left out.
        return RangePart(**{name: value for name, value in raw.items() if name in RangePart.__dataclass_fields__})

    def delete(self, doc_id: str, generation: int, firsts: list[int]) -> None:
        """Best effort, one request a part (a few per document): the bucket's lifecycle rule removes what is left."""
        for first in firsts:
            try:
                self._s3.delete_object(Bucket=self._bucket, Key=self.key(doc_id, generation, first))
            except (ClientError, BotoCoreError):
                return
