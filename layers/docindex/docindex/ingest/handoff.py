"""Jobs for the OCR / large-file worker, sent to ``OCR_QUEUE_URL`` (embed jobs: ``EMBED_QUEUE_URL``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.exceptions import PoisonMessageError, TransientError
from docindex.core.messages import MessageKind, message_attributes

if TYPE_CHECKING:
    from docindex.core.changes import ObjectChange

_RANGE = frozenset({"first_page", "last_page", "page_count", "ranges"})


# The reason of a job that only adds meaning search's vectors to a document the indexer wrote
# complete (docindex/worker/vectors.py): no download, no OCR.
EMBED_REASON = "embed"


@dataclass(frozen=True)
class OcrJob:
    """What the worker needs to produce a document's content.

    ``generation`` is the ledger generation the indexer wrote the pending
    document with; the worker applies its result only while the ledger still
    holds that generation (otherwise the object changed and the job is stale).
    """

    bucket: str
    key: str
    reason: str  # image, scanned_pdf, too_large; embed (EMBED_REASON)
    generation: int
    version_id: str | None = None
    etag: str | None = None
    sequencer: str | None = None
    size: int | None = None
    content_type: str | None = None
    # A page-range job (a long scan split by the worker): pages [first_page, last_page) of a
    # document of page_count pages, one of ``ranges`` jobs that together make its content.
    first_page: int | None = None
    last_page: int | None = None
    page_count: int | None = None
    ranges: int | None = None

    @classmethod
    def for_change(
        cls,
        change: ObjectChange,
        generation: int,
        reason: str,
        *,
        version_id: str | None,
        etag: str | None,
        size: int | None,
        content_type: str | None,
    ) -> OcrJob:
        """The job for the object version ``change`` announced, claimed at ``generation``."""
        return cls(
            bucket=change.bucket,
            key=change.key,
            reason=reason,
            generation=generation,
            version_id=version_id,
            etag=etag,
            sequencer=change.sequencer,
            size=size,
            content_type=content_type,
        )

    @property
    def is_range(self) -> bool:
        return self.first_page is not None and self.last_page is not None and bool(self.ranges)

    def page_range(self, first: int, last: int, *, page_count: int, ranges: int) -> OcrJob:
        """This document's job for pages [first, last)."""
        return replace(self, first_page=first, last_page=last, page_count=page_count, ranges=ranges)

    @property
    def schema(self) -> int:
        """The schema version this body needs (core/messages.py): 2 for an embed job, else 1.

        A worker of schema 1 reads an embed job's body but would take it for a job to OCR, so it
        is sent as version 2: such a worker leaves it to a newer one. Every other job stays
        version 1, which workers of every release since page ranges take.
        """
        return 2 if self.reason == EMBED_REASON else 1

    def to_json(self) -> str:
        """The body (schema version 1: what every release since page ranges reads; core/messages.py)."""
        # A whole-document job leaves the range fields out: the same body as before ranges existed.
        fields = {name: value for name, value in asdict(self).items() if value is not None or name not in _RANGE}
        return json.dumps({"docindex": "ocr_job", **fields}, ensure_ascii=False)

    @classmethod
    def from_json(cls, body: str) -> OcrJob:
        try:
            payload = json.loads(body)
            if payload.pop("docindex", None) != "ocr_job":
                raise PoisonMessageError("not a docindex OCR job")
            return cls(**payload)
        except (TypeError, ValueError) as exc:
            raise PoisonMessageError(f"unreadable OCR job: {exc}") from None


class OcrQueue:
    """Sends OCR jobs; a failure to send fails the record so nothing is lost."""

    def __init__(self, sqs: Any, queue_url: str | None, *, name: str = "OCR queue") -> None:
        self._sqs = sqs
        self._url = queue_url
        self.name = name

    def send(self, job: OcrJob) -> str:
        if not self._url:
            raise TransientError(f"the {self.name} is not configured; cannot hand off {job.key}")
        try:
            response = self._sqs.send_message(
                QueueUrl=self._url,
                MessageBody=job.to_json(),
                MessageAttributes=message_attributes(MessageKind.OCR_JOB, job.schema),
            )
        except (ClientError, BotoCoreError) as exc:
            raise TransientError(f"SendMessage to the {self.name} failed: {exc}") from exc
        return str(response["MessageId"])

    def send_all(self, jobs: list[OcrJob]) -> None:
        """Send every job (ten per request); raises TransientError unless all were accepted.

        Sending again after a failure is harmless for page-range jobs: each runs once per
        generation and range (the worker's idempotency key), whatever the duplicates.
        """
        if not self._url:
            raise TransientError(f"the {self.name} is not configured")
        for start in range(0, len(jobs), 10):
            entries = [
                {
                    "Id": str(n),
                    "MessageBody": job.to_json(),
                    "MessageAttributes": message_attributes(MessageKind.OCR_JOB, job.schema),
                }
                for n, job in enumerate(jobs[start : start + 10])
            ]
            try:
                response = self._sqs.send_message_batch(QueueUrl=self._url, Entries=entries)
            except (ClientError, BotoCoreError) as exc:
                raise TransientError(f"SendMessageBatch to the {self.name} failed: {exc}") from exc
            if response.get("Failed"):
                raise TransientError(f"SendMessageBatch to the {self.name} refused {len(response['Failed'])} jobs")
