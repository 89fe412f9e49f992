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
- ``RedriveConfigError``, ``DlqError``, ``RedriveSkipped``: the DLQ redrive's (see its section).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


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


class ObjectArchivedError(DocIndexError):
    """S3 refused GetObject with ``InvalidObjectState``: the object is archived until restored.

    Not transient (retrying cannot heal it) and not poison: the document is
    indexed by name with ``extraction_error: archived``.
    """


class SettingsError(DocIndexError, ValueError):
    """The environment does not describe a usable configuration."""


class JobAbandoned(DocIndexError):
    """The OCR worker stopped a job before committing it; the message comes back."""


class CommandError(DocIndexError):
    """An operator command cannot run as asked: one line for the operator, exit code 2."""


# --------------------------------------------------------------------------- redrive
# Errors of the DLQ redrive (docindex.redrive). A redrive never raises past one DLQ: each of these
# ends as that DLQ's ``status``/``reason`` in the summary, except a bad request or environment.


class RedriveConfigError(DocIndexError, ValueError):
    """The environment or the request does not describe a usable redrive."""


class DlqError(DocIndexError):
    """One DLQ cannot be handled; ``reason`` goes to the result."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class RedriveSkipped(DocIndexError):
    """A guard stopped the redrive of one DLQ (not a failure: the result is ``skipped``, with ``reason``).

    ``state`` is the DLQ's ``docindex.redrive.state.RedriveState`` as the guard left it (typed
    ``Any`` so this module stays free of imports from the packages above it).
    """

    def __init__(self, reason: str, message: str, state: Any, next_attempt_at: datetime | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.state = state
        self.next_attempt_at = next_attempt_at


# --------------------------------------------------------------------------- operator tools
# Raised by docindex.ops (the operator CLI's library), never on the Lambda hot path. Each keeps
# the built-in base it always had as a second base, so code catching that base still works.


class DeploymentError(DocIndexError, ValueError):
    """The resources to work on cannot be found (no such stack, nothing configured)."""


class EnqueueError(DocIndexError, RuntimeError):
    """Some messages of a batch could not be sent (after retries)."""

    def __init__(self, message: str, *, sent: int, failed: list[str]) -> None:
        super().__init__(message)
        self.sent = sent
        self.failed = failed


class BackfillError(DocIndexError, RuntimeError):
    """The backfill cannot start or continue (bad inventory, mismatched checkpoint...)."""


class ReconcileError(DocIndexError, RuntimeError):
    """The streams cannot be compared (out of order, unreachable index...)."""


class ReindexError(DocIndexError, RuntimeError):
    """The index cannot be rebuilt, rolled back or cleaned up (no alias, nothing to roll back to...)."""


class Unsupported(DocIndexError):
    """A diagnose check cannot run here; it is reported as skipped, with the reason.

    The endpoint has no such API (a local emulator), or the deployment does not name what the
    check needs (no function, no OCR worker...).
    """
