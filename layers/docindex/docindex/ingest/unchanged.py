"""Re-syncs cost nothing: the same content announced again is recognised without reading it.

A re-run sync task, a storage-class transition or a metadata edit announces a create
whose ETag and size are those of the version already indexed under this key. The index
document is where the indexer learns that cheaply and truthfully: one real-time GET by
``_id`` says what was *written* (the ledger only says what was *claimed*, and its etag
is already this change's after the claim), and whether that document is complete. Only a
complete one is refreshed: pending OCR (its job is stale after this claim), archived,
quarantined, rejected or timed-out documents take the full path.

The object's date may have changed without its content (a ``touch`` on the file server that
DataSync copies as new metadata; ``docindex reprocess --dates``): one ``HeadObject`` of the
announced version reads it (docindex.core.filedates), still without the body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docindex.index.documents import ExtractionErrorCode, IndexDocument, OcrStatus

if TYPE_CHECKING:
    from docindex.core.changes import ObjectChange
    from docindex.core.storage import ObjectHead, ObjectStore
    from docindex.index.store import DocumentStore
    from docindex.ingest.ledger import Claim

# Documents whose content a retry or a restore could improve are never "unchanged".
_INCOMPLETE_ERRORS = frozenset(
    {
        ExtractionErrorCode.ARCHIVED,
        ExtractionErrorCode.QUARANTINED,
        ExtractionErrorCode.INDEX_REJECTED,
        ExtractionErrorCode.TIMEOUT,
        "extractor_failed",
    }
)


def refreshed_document(
    documents: DocumentStore, change: ObjectChange, claim: Claim, store: ObjectStore, head: ObjectHead | None = None
) -> tuple[IndexDocument, int] | None:
    """The indexed document with ``change``'s identity and date, and the version it had; None: take the full path.

    ``head``: the object's ``HeadObject`` when the caller has it already (else it is asked here).

    The whole document is returned (external versions need one), to be written at this
    claim's generation through the batch's writer, so ordering, ``still_current`` and
    idempotency hold as for any write.
    """
    if not change.etag or change.size is None:
        return None
    if claim.generation == 1:
        # The ledger never saw this object before: nothing of it was written, so nothing to
        # ask the index about (a backfill of millions of new files costs no real-time GETs).
        return None
    fields = ["etag", "size", "ocr_status", "extraction_error"]
    indexed = documents.current(change.doc_id, fields=fields, retry_seconds=0)
    if indexed is None or not same_complete_content(change, indexed[1]):
        return None
    current = documents.current(change.doc_id, retry_seconds=0)
    if current is None or not same_complete_content(change, current[1]):
        return None
    head = head or store.head(change.bucket, change.key, version_id=change.version_id)
    # Deleted or replaced since the event (its own event follows): the indexed date is kept.
    same = head is not None and head.etag == change.etag and head.size == change.size
    doc = IndexDocument.from_source(current[1]).with_identity(
        version_id=change.version_id,
        sequencer=change.sequencer,
        file_date=head.file_date if head is not None and same else None,
        etag=change.etag,
    )
    return doc, current[0]


def same_complete_content(change: ObjectChange, source: dict[str, Any]) -> bool:
    """Whether the indexed ``source`` is complete content with ``change``'s identity (ETag and size)."""
    return (
        source.get("etag") == change.etag
        and source.get("size") == change.size
        and source.get("ocr_status") in (OcrStatus.NONE, OcrStatus.DONE)
        and source.get("extraction_error") not in _INCOMPLETE_ERRORS
    )
