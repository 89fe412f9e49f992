"""Which failures retry, which mark a document, which poison a message.

- ``PoisonMessageError``: the SQS body is not a message docindex understands.
  The record fails on every receive and reaches the DLQ after maxReceiveCount.
- ``TransientError``: a dependency failed in a way that may heal (throttling,
  5xx, timeouts). The record fails and SQS delivers it again.
- ``ExtractionError``: the document itself cannot be read (corrupt, encrypted,
  unsupported, hostile). Not a failure of the message: the document is indexed
  by name and metadata with ``extraction_error`` set.
"""

from __future__ import annotations


class DocIndexError(Exception):
    """Base class of docindex's own errors."""


class PoisonMessageError(DocIndexError):
    """The message body is not an accepted shape; it can never succeed."""


class TransientError(DocIndexError):
    """A dependency failed temporarily; the record should be retried."""


class IndexRejectedError(DocIndexError):
    """OpenSearch refused a document for a reason retrying will not fix."""


class ExtractionError(DocIndexError):
    """The document's content cannot be extracted; ``code`` goes to ``extraction_error``."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail
