"""Jobs for the OCR / large-file worker, sent to ``OCR_QUEUE_URL``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.exceptions import PoisonMessageError, TransientError


@dataclass(frozen=True)
class OcrJob:
    """What the worker needs to produce a document's content.

    ``generation`` is the ledger generation the indexer wrote the pending
    document with; the worker applies its result only while the ledger still
    holds that generation (otherwise the object changed and the job is stale).
    """

    bucket: str
    key: str
    reason: str  # image, scanned_pdf, too_large
    generation: int
    version_id: str | None = None
    etag: str | None = None
    sequencer: str | None = None
    size: int | None = None
    content_type: str | None = None

    def to_json(self) -> str:
        return json.dumps({"docindex": "ocr_job", **asdict(self)}, ensure_ascii=False)

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

    def __init__(self, sqs: Any, queue_url: str | None) -> None:
        self._sqs = sqs
        self._url = queue_url

    def send(self, job: OcrJob) -> str:
        if not self._url:
            raise TransientError("OCR_QUEUE_URL is not configured; cannot hand off " + job.key)
        try:
            response = self._sqs.send_message(QueueUrl=self._url, MessageBody=job.to_json())
        except (ClientError, BotoCoreError) as exc:
            raise TransientError(f"SendMessage to the OCR queue failed: {exc}") from exc
        return str(response["MessageId"])
