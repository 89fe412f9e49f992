"""Every docindex error class, under one base: which failures retry, which mark a document, which poison a message.

- ``PoisonMessageError``: the SQS body is not a message docindex understands.
  The record fails on every receive and reaches the DLQ after maxReceiveCount.
- ``TransientError``: a dependency failed in a way that may heal (throttling,
  5xx, timeouts). The record fails and SQS delivers it again.
- ``ExtractionError``: the document itself cannot be read (corrupt, encrypted,
  unsupported, hostile). Not a failure of the message: the document is indexed
  by name and metadata with ``extraction_error`` set.
- ``SettingsError``: the environment does not describe a usable configuration
  (the component refuses to start, naming the variable).
- ``JobAbandoned``: the OCR worker gave a job back (its lease ended, shutdown).
- ``CommandError``: an operator command cannot run as asked (exit code 2).
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


class SettingsError(DocIndexError, ValueError):
    """The environment does not describe a usable configuration."""


class JobAbandoned(DocIndexError):
    """The OCR worker stopped a job before committing it; the message comes back."""


class CommandError(DocIndexError):
    """An operator command cannot run as asked: one line for the operator, exit code 2."""
