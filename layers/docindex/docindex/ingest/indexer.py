"""The indexer: an SQS batch of S3 changes → OpenSearch documents.

Data flows one way: SQS record → ``ObjectChange`` (``core/changes.py``) →
idempotency → ledger claim (``ledger.py``, ordering) → content, read within
the invocation's budgets from the content cache or by extraction
(``reading.py``, ``core/storage.py``, ``extract/``) → ``IndexDocument``
(``index/documents.py``) → the batch's coalescing ``_bulk`` writer
(``index/store.py``, ``index/bulk.py``) or an OCR job (``handoff.py``) →
outcome. Each change runs under Powertools idempotency keyed on the change
itself (not the messageId), so the same change announced twice, in any shape
or after a DLQ redrive, is applied once. Re-announced unchanged content is
recognised in ``unchanged.py``; what one invocation's records share is in
``invocation.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.batch import process_partial_response
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError

from docindex.access.source import AccessMapSource
from docindex.core.aws import queue_url_from_arn
from docindex.core.changes import Action, ObjectChange, is_excluded, parse_body
from docindex.core.exceptions import ObjectArchivedError, PoisonMessageError, TransientError
from docindex.core.messages import Deferral, Received
from docindex.core.observability import Metric, count, logger
from docindex.core.storage import ByteBudget, FetchedObject, ObjectStore
from docindex.extract import ExtractedDocument, ExtractionLimits
from docindex.extract.isolation import ExtractionPool
from docindex.index.bulk import BulkWriter, WriteOutcome
from docindex.index.documents import IndexDocument, OcrStatus
from docindex.index.store import DocumentStore
from docindex.ingest.batch import ConcurrentBatchProcessor, WorkSlots
from docindex.ingest.cache import CachedContent, ContentCache
from docindex.ingest.handoff import EMBED_REASON, OcrJob, OcrQueue
from docindex.ingest.invocation import (
    LATE_START_SECONDS,
    LATE_START_SHARE,
    RECORDS_IN_FLIGHT,
    BatchRun,
    Outcome,
    body_budget_bytes,
    function_memory_mb,
)
from docindex.ingest.ledger import Claim, Ledger
from docindex.ingest.reading import ContentReader
from docindex.ingest.unchanged import refreshed_document

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from opensearchpy import OpenSearch

    from docindex.core.settings import Settings


class Indexer:
    """Applies S3 changes to the index; one instance per process, clients passed in."""

    def __init__(
        self,
        settings: Settings,
        *,
        s3: Any,
        sqs: Any,
        dynamodb: Any,
        opensearch: OpenSearch,
    ) -> None:
        self.settings = settings.for_indexer()
        self.opensearch = opensearch
        from docindex.embed.settings import vector_spec  # the embedding settings, read once here

        # Meaning search: the vector field a new index gets; documents with text get an embed job.
        self.vectors = vector_spec(settings)
        self.documents = DocumentStore(
            opensearch,
            self.settings.opensearch_index,
            access=AccessMapSource.from_settings(settings, s3),
            vectors=self.vectors,
        )
        self.ledger = Ledger(dynamodb, settings.ledger_table_name)
        self.store = ObjectStore(s3, mtime_keys=settings.mtime_keys)
        self.ocr_queue = OcrQueue(sqs, settings.ocr_queue_url)
        self.embed_queue = OcrQueue(sqs, settings.embed_jobs_queue_url, name="embed queue")
        self.cache = ContentCache(s3, settings.content_cache_bucket, settings.content_cache_prefix)
        self.limits = ExtractionLimits.from_settings(settings)
        self.reader = ContentReader(
            self.store, self.cache, self.limits, max_object_bytes=self.settings.max_object_bytes
        )
        # Child processes for PDFs and spreadsheets, kept warm across invocations;
        # sized from the function's memory on the first one.
        self.pool: ExtractionPool | None = None
        self.exclude_globs = settings.exclude_globs
        self.deferral = Deferral(
            sqs, delay_seconds=settings.message_defer_seconds, max_seconds=settings.message_defer_max_seconds
        )
        self.idempotency_config = IdempotencyConfig(
            event_key_jmespath="dedupe_key",
            expires_after_seconds=settings.idempotency_ttl_seconds,
            raise_on_no_idempotency_key=True,
            response_hook=self._on_duplicate,
        )
        persistence = DynamoDBPersistenceLayer(table_name=settings.idempotency_table, boto3_client=dynamodb)
        # Configured here, once, before any record thread: Powertools configures the store on each
        # call and marks it configured before it has compiled the key expression, so the records
        # of a cold start running at once could find it half-configured and fail ("'NoneType'
        # object has no attribute 'search'"; seen under load). A configured store is left as it is.
        persistence.configure(
            config=self.idempotency_config,
            function_name=f"{self._apply.__module__}.{self._apply.__qualname__}",
        )
        self.idempotency_store = persistence
        self._apply_once: Callable[..., dict[str, Any]] = idempotent_function(
            data_keyword_argument="change",
            persistence_store=persistence,
            config=self.idempotency_config,
        )(self._apply)

    # -- one invocation ----------------------------------------------------

    def handle(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        """Process one SQS batch; returns the partial batch response."""
        self.idempotency_config.register_lambda_context(context)
        if self.pool is None and self.settings.extraction_isolation:
            self.pool = ExtractionPool.for_function(
                function_memory_mb(context),
                self.settings.indexer_concurrency,
                share=self.settings.extraction_memory_share,
            )

        def time_left() -> float:
            return float(context.get_remaining_time_in_millis()) / 1000.0

        late_start = min(LATE_START_SECONDS, LATE_START_SHARE * time_left())

        processor = ConcurrentBatchProcessor(
            concurrency=max(RECORDS_IN_FLIGHT, self.settings.indexer_concurrency),
            raise_on_entire_batch_failure=False,
        )
        slots = WorkSlots(self.settings.indexer_concurrency)
        with BulkWriter(
            self.opensearch,
            self.settings.opensearch_index,
            max_bytes=self.settings.bulk_max_bytes,
            max_actions=self.settings.bulk_max_actions,
            linger_seconds=self.settings.bulk_linger_seconds,
            time_left=time_left,
            still_current=self.ledger.still_current,
            waiting=slots.waiting,
            alias_guard=self.documents.alias_guard,
        ) as writer:
            run = BatchRun(
                writer=writer,
                time_left=time_left,
                budget=ByteBudget(body_budget_bytes(context)),
                slots=slots,
                late_start_seconds=late_start,
                index_error=self._prepare_index(),
            )

            def record_handler(record: SQSRecord) -> list[dict[str, Any]]:
                return self._handle_record(record, run)

            response = process_partial_response(
                event=event, record_handler=record_handler, processor=processor, context=context
            )
        failed = len(response.get("batchItemFailures", []))
        logger.info(
            "batch done",
            extra={
                "records": len(event.get("Records", [])),
                "failed": failed,
                "bulk_requests": writer.requests_sent,
                "bulk_actions": writer.actions_sent,
            },
        )
        return dict(response)

    def _prepare_index(self) -> str | None:
        """Create the index on first use; an unreachable cluster fails the batch fast (no retry)."""
        from opensearchpy.exceptions import TransportError

        try:
            self.documents.ensure(retry_seconds=0)
        except (TransientError, TransportError) as exc:
            logger.error("OpenSearch unavailable; failing the batch for retry", extra={"error": str(exc)})
            return f"OpenSearch unavailable: {exc.__cause__ or exc}"
        return None

    # -- one record --------------------------------------------------------

    def _handle_record(self, record: SQSRecord, run: BatchRun) -> list[dict[str, Any]]:
        logger.thread_safe_append_keys(message_id=record.message_id)
        try:
            received = Received.from_lambda(record.raw_event)
            newer = received.newer_than_understood()
            if newer:
                return [self._defer(record, received, newer)]
            if run.index_error:
                raise TransientError(run.index_error)
            try:
                parsed = parse_body(record.body)
            except PoisonMessageError as exc:
                count(Metric.POISON_MESSAGES)
                logger.error(
                    "poison message: not an accepted shape",
                    extra={"error": str(exc), "body_preview": (record.body or "")[:200]},
                )
                raise
            if not parsed.changes:
                count(Metric.TEST_EVENTS_IGNORED)
                logger.info("S3 test event acknowledged and ignored")
                return [{"outcome": Outcome.IGNORED.value}]
            results = []
            for change in parsed.changes:
                logger.thread_safe_append_keys(bucket=change.bucket, key=change.key, action=change.action.value)
                with run.lock_for(change.doc_id), run.writer.participant(), run.slots.hold():
                    if run.time_left() < run.late_start_seconds:
                        raise TransientError("not started: too little of the invocation is left; SQS retries it")
                    results.append(self._apply_once(change=change, run=run))
            return results
        except IdempotencyAlreadyInProgressError:
            count(Metric.RECORDS_FAILED)
            logger.info("the same change is being applied elsewhere; the record will be retried")
            raise
        except Exception as exc:
            count(Metric.RECORDS_FAILED)
            logger.warning("record failed", extra={"error": f"{type(exc).__name__}: {exc}"})
            raise
        finally:
            logger.thread_safe_clear_keys()

    def _defer(self, record: SQSRecord, received: Received, why: str) -> dict[str, Any]:
        """A message from a newer release: a delayed copy waits for a newer indexer, this record succeeds.

        Failing it instead would spend one of its receives on every invocation of this release
        that sees it, and dead-letter it during a long deployment (docindex/core/messages.py).
        """
        url = self.settings.ingest_queue_url or queue_url_from_arn(record.event_source_arn)
        if not self.deferral.defer(url, received):
            count(Metric.POISON_MESSAGES)
            logger.error(
                "message from a newer release that no newer indexer took; failing it towards the DLQ",
                extra={"why": why, "deferred_for_max_s": self.deferral.max_seconds},
            )
            raise PoisonMessageError(f"{why}; no consumer understood it for {self.deferral.max_seconds:.0f} s")
        count(Metric.MESSAGES_DEFERRED)
        logger.info(
            "message from a newer release left for a newer indexer",
            extra={"why": why, "retry_in_s": self.deferral.delay_seconds},
        )
        return {"outcome": Outcome.DEFERRED.value}

    def _on_duplicate(self, response: Any, idempotent_data: DataRecord) -> Any:
        count(Metric.DUPLICATES_SKIPPED)
        logger.info("duplicate change skipped", extra={"first_outcome": (response or {}).get("outcome")})
        return {**(response or {}), "outcome": Outcome.DUPLICATE.value}

    # -- one change (runs under idempotency) --------------------------------

    def _apply(self, change: ObjectChange, run: BatchRun) -> dict[str, Any]:
        started = time.perf_counter()
        if change.action is Action.CREATED and is_excluded(change.key, globs=self.exclude_globs):
            # Lock files, Thumbs.db, folder markers: never read, never indexed (a delete still passes,
            # so a document indexed before the rule existed can go away).
            count(Metric.OBJECTS_SKIPPED)
            logger.info("object skipped: its key matches EXCLUDE_KEYS")
            return {"outcome": Outcome.EXCLUDED.value}
        if change.action is Action.REMOVED and self._is_noncurrent_version_delete(change):
            logger.info("a non-current version was deleted; the indexed version stays")
            return {"outcome": Outcome.IGNORED.value, "reason": "noncurrent_version"}
        claim = self.ledger.claim(change)
        if claim is None:
            count(Metric.STALE_EVENTS_SKIPPED)
            logger.info("stale change skipped: a newer change of this object was applied")
            return {"outcome": Outcome.STALE.value}
        # The claim counted this attempt: claim.failures earlier attempts of this very
        # change raised or died with their invocation (timeout, out of memory).
        resumed = self._resume(change, claim) if claim.retry and change.action is Action.CREATED else None
        if resumed is not None:
            result = resumed
        elif claim.failures >= self.settings.quarantine_after_failures and change.action is Action.CREATED:
            result = self._quarantine(change, claim, run)
        else:
            try:
                if change.action is Action.REMOVED:
                    result = self._remove(change, claim, run)
                else:
                    unchanged = None if change.is_reprocess else self._refresh_unchanged(change, claim, run)
                    result = unchanged or self._index(change, claim, run, version_id=change.version_id)
            except Exception:
                logger.warning("change failed", extra={"attempt": claim.failures + 1})
                raise
        if claim.retry:
            self._forget_attempts(change)
        result["generation"] = claim.generation
        result["ms"] = round((time.perf_counter() - started) * 1000, 1)
        logger.info("change applied", extra=result)
        return result

    def _forget_attempts(self, change: ObjectChange) -> None:
        """A retried change completed: its count must not outlive it (first tries leave 1, harmlessly)."""
        try:
            self.ledger.clear_attempts(change)
        except TransientError as exc:
            # The change is applied; a leftover count only matters if this very
            # change keeps coming back, and then its write is recognised first.
            logger.warning("could not clear the attempts of a completed change", extra={"error": str(exc)})

    def _resume(self, change: ObjectChange, claim: Claim) -> dict[str, Any] | None:
        """A retried change whose document was written before its invocation died: not written again.

        Only the change the ledger holds is retried, and only it writes its
        generation: the index holding that generation (or the OCR result's,
        one above) means the write landed. The OCR job of a pending document
        may have died with the invocation, so it is sent again (the worker
        runs each job once).
        """
        indexed = self._indexed(change.doc_id)
        if indexed is None or indexed[0] < claim.generation:
            return None
        version, source = indexed
        count(Metric.DUPLICATES_SKIPPED)
        if version == claim.generation and source.get("ocr_status") == OcrStatus.PENDING:
            self.ocr_queue.send(
                OcrJob.for_change(
                    change,
                    claim.generation,
                    str(source.get("ocr_reason") or "image"),
                    version_id=source.get("version_id"),
                    etag=source.get("etag"),
                    size=source.get("size"),
                    content_type=source.get("content_type"),
                )
            )
            count(Metric.OCR_JOBS_QUEUED)
            logger.info("change written before its invocation died; its OCR job is queued again")
            return {"outcome": Outcome.OCR_QUEUED.value, "resumed": True}
        if self._embed_job_lost(change, claim, version, source):
            logger.info("change written before its invocation died; its embed job is queued again")
            return {"outcome": Outcome.DUPLICATE.value, "resumed": True, "embed_job": True}
        logger.info("change written before its invocation died; not written again")
        return {"outcome": Outcome.DUPLICATE.value, "resumed": True}

    def _embed_job_lost(self, change: ObjectChange, claim: Claim, version: int, source: dict[str, Any]) -> bool:
        """Send again the embed job an invocation that died after its write may not have sent."""
        if (
            self.vectors is None
            or version != claim.generation
            or source.get("embedding_model") == self.vectors.model_id
        ):
            return False
        # Whether it has text, on this rare path only: the whole document.
        full = self.documents.current(change.doc_id, retry_seconds=0)
        if full is None or full[0] != version or not self._wants_vectors(IndexDocument.from_source(full[1])):
            return False
        return self._queue_embedding(change, claim, IndexDocument.from_source(full[1]))

    def _indexed(self, doc_id: str) -> tuple[int, dict[str, Any]] | None:
        """The indexed document's version and OCR fields, None when there is none (no retry: SQS retries)."""
        fields = ["ocr_status", "ocr_reason", "etag", "version_id", "size", "content_type", "embedding_model"]
        return self.documents.current(doc_id, fields=fields, retry_seconds=0)

    def _quarantine(self, change: ObjectChange, claim: Claim, run: BatchRun) -> dict[str, Any]:
        """Stop retrying a change that keeps failing: index it by name, say why."""
        doc = IndexDocument.for_change(change, None, content_type=None).quarantined()
        outcome = self._write(change, claim, run, doc)
        if outcome is WriteOutcome.CONFLICT:
            count(Metric.STALE_EVENTS_SKIPPED)
            return {"outcome": Outcome.STALE.value}
        count(Metric.CHANGES_QUARANTINED)
        logger.error(
            "change quarantined after repeated failures; indexed by name only",
            extra={"failures": claim.failures},
        )
        return {"outcome": Outcome.QUARANTINED.value, "failures": claim.failures}

    def _is_noncurrent_version_delete(self, change: ObjectChange) -> bool:
        if change.delete_marker or not change.version_id:
            return False
        entry = self.ledger.get(change.doc_id)
        return bool(entry and entry.state == "present" and entry.version_id and entry.version_id != change.version_id)

    def _remove(self, change: ObjectChange, claim: Claim, run: BatchRun) -> dict[str, Any]:
        if change.version_id and not change.delete_marker:
            # A version was permanently deleted: in a versioned bucket an
            # older version may now be current. Index it if so (the ledger
            # must say present for still_current to let that write through).
            if not self.ledger.set_state(change, claim.generation, "present"):
                count(Metric.STALE_EVENTS_SKIPPED)
                return {"outcome": Outcome.STALE.value}
            result = self._index(change, claim, run, version_id=None)
            if result["outcome"] != Outcome.GONE.value:
                return result
            self.ledger.set_state(change, claim.generation, "removed")
        outcome = run.writer.delete(change.doc_id, claim.generation)
        if outcome is WriteOutcome.CONFLICT:
            count(Metric.STALE_EVENTS_SKIPPED)
            return {"outcome": Outcome.STALE.value}
        count(Metric.DOCUMENTS_DELETED)
        return {"outcome": Outcome.DELETED.value, "found": outcome is WriteOutcome.WRITTEN}

    def _index(self, change: ObjectChange, claim: Claim, run: BatchRun, *, version_id: str | None) -> dict[str, Any]:
        try:
            return self._read_and_index(change, claim, run, version_id=version_id)
        except ObjectArchivedError:
            # Not a failure to retry: S3 will not serve it until it is restored.
            return self._index_archived(change, claim, run)

    def _read_and_index(
        self, change: ObjectChange, claim: Claim, run: BatchRun, *, version_id: str | None
    ) -> dict[str, Any]:
        read = self.reader.read(
            change, version_id=version_id, budget=run.budget, time_left=run.time_left, pool=self.pool
        )
        if read is None:
            if change.action is Action.CREATED:
                count(Metric.OBJECTS_GONE)
                if version_id is None or not self.store.exists(change.bucket, change.key):
                    return self._remove_gone(change, claim, run)
                logger.info("this version no longer exists; skipped (its delete event will follow)")
            return {"outcome": Outcome.GONE.value}
        if read.cached is not None:
            return self._index_cached(change, claim, run, read.fetched, read.cached)
        if read.extracted is None:
            return self._hand_off(change, claim, run, read.fetched, reason="too_large", content_type=None)
        return self._index_extracted(change, claim, run, read.fetched, read.extracted)

    def _index_extracted(
        self, change: ObjectChange, claim: Claim, run: BatchRun, fetched: FetchedObject, extracted: ExtractedDocument
    ) -> dict[str, Any]:
        if extracted.ocr_reason:
            return self._hand_off(
                change,
                claim,
                run,
                fetched,
                reason=extracted.ocr_reason,
                content_type=extracted.content_type,
                doc=IndexDocument.extracted(change, fetched, extracted),
            )
        doc = IndexDocument.extracted(change, fetched, extracted)
        if extracted.dropped:
            count(Metric.CONTENT_PARTS_DROPPED, len(extracted.dropped))
            logger.info("parts of the file left out of its text", extra={"dropped": list(extracted.dropped)})
        if extracted.error:
            count(Metric.EXTRACTION_FAILURES)
            # The file's own state (encrypted, corrupt, unsupported), not a fault of the pipeline: a line at
            # info (the stack's LogLevel default), the metric, and `docindex failures` lists them all.
            logger.info(
                "content not extracted; indexed by name",
                extra={"extraction_error": extracted.error, "detail": extracted.error_detail},
            )
        outcome = self._write(change, claim, run, doc)
        if outcome is WriteOutcome.CONFLICT:
            count(Metric.STALE_EVENTS_SKIPPED)
            return {"outcome": Outcome.STALE.value}
        count(Metric.DOCUMENTS_INDEXED)
        count(Metric.BYTES_INDEXED, fetched.size)
        result: dict[str, Any] = {"outcome": Outcome.INDEXED.value, "kind": extracted.kind}
        if extracted.error:
            result["extraction_error"] = extracted.error
        if self._wants_vectors(doc):
            result["embed_job"] = self._queue_embedding(change, claim, doc)
        return result

    # -- re-syncs, renames, copies and archives (issue 14) --------------------

    def _refresh_unchanged(self, change: ObjectChange, claim: Claim, run: BatchRun) -> dict[str, Any] | None:
        """The same content announced again: its identity refreshed without reading the body (``unchanged.py``).

        A ``docindex reprocess --dates`` change names no version: the object's current one is asked
        (``HeadObject``) and, if it is the indexed content, only its date and identity are written.
        """
        head = None
        if change.is_date_refresh:
            head = self.store.head(change.bucket, change.key)
            if head is None:
                return None  # gone: the full path removes its document
            change = replace(change, etag=head.etag, size=head.size, version_id=head.version_id)
        refreshed = refreshed_document(self.documents, change, claim, self.store, head=head)
        if refreshed is None:
            return None
        doc, indexed_version = refreshed
        outcome = self._write(change, claim, run, doc)
        if outcome is WriteOutcome.CONFLICT:
            count(Metric.STALE_EVENTS_SKIPPED)
            return {"outcome": Outcome.STALE.value}
        count(Metric.UNCHANGED_CONTENT_SKIPPED)
        logger.info(
            "unchanged content: identity refreshed without reading the body",
            extra={"etag": change.etag, "size": change.size, "indexed_version": indexed_version},
        )
        result: dict[str, Any] = {"outcome": Outcome.UNCHANGED.value}
        if self._wants_vectors(doc):
            # Indexed before meaning search (or with another model): a re-announcement fills it in.
            result["embed_job"] = self._queue_embedding(change, claim, doc)
        return result

    def _index_cached(
        self, change: ObjectChange, claim: Claim, run: BatchRun, fetched: FetchedObject, cached: CachedContent
    ) -> dict[str, Any]:
        """Content seen before (a rename, a move, a copy): indexed from the cache, no extraction, no OCR."""
        doc = (
            IndexDocument.for_change(change, fetched, content_type=cached.content_type)
            .with_content(
                text=cached.text,
                title=cached.title,
                page_count=cached.page_count,
                truncated=cached.truncated,
                error=cached.error,
                dropped=cached.dropped,
                pages=cached.page_texts(),
            )
            .with_properties(
                author=cached.author,
                last_saved_by=cached.last_saved_by,
                created=cached.created,
                modified=cached.modified,
            )
        )
        if cached.ocr_status != OcrStatus.NONE:
            doc = doc.ocr_done_from_cache(OcrStatus(cached.ocr_status), cached.ocr_reason or "image", cached.ocr_pages)
        from docindex.embed.document import EmbeddedDocument  # only a copy or a rename has cached vectors

        embedded = EmbeddedDocument.from_cache(cached.embeddings)
        if embedded is not None and self.vectors is not None and embedded.model_id == self.vectors.model_id:
            doc = doc.with_embeddings(embedded)  # a rename or a copy: its vectors too, nothing embedded
        outcome = self._write(change, claim, run, doc)
        if outcome is WriteOutcome.CONFLICT:
            count(Metric.STALE_EVENTS_SKIPPED)
            return {"outcome": Outcome.STALE.value}
        count(Metric.DOCUMENTS_INDEXED)
        count(Metric.BYTES_INDEXED, fetched.size)
        logger.info("content seen before: indexed from the cache", extra={"ocr_status": cached.ocr_status})
        result: dict[str, Any] = {"outcome": Outcome.INDEXED.value, "cached": True, "ocr_status": cached.ocr_status}
        if self._wants_vectors(doc):
            result["embed_job"] = self._queue_embedding(change, claim, doc)
        return result

    # -- meaning search (docindex/worker/vectors.py) ------------------------------

    def _wants_vectors(self, doc: IndexDocument) -> bool:
        """A document with text and without this model's vectors, while meaning search is on."""
        return (
            self.vectors is not None
            and bool(doc.content)
            and doc.ocr_status in (OcrStatus.NONE, OcrStatus.DONE)
            and doc.embedding_model != self.vectors.model_id
        )

    def _queue_embedding(self, change: ObjectChange, claim: Claim, doc: IndexDocument) -> bool:
        """Send the worker an embed job for the document written at this claim's generation.

        The document is searchable by its words already; the job adds its vectors at the next
        generation. A failure to send fails the record (SQS retries it; ``_resume`` sends again).
        """
        self.embed_queue.send(
            OcrJob.for_change(
                change,
                claim.generation,
                EMBED_REASON,
                version_id=doc.version_id,
                etag=doc.etag,
                size=doc.size,
                content_type=doc.content_type,
            )
        )
        count(Metric.EMBED_JOBS_QUEUED)
        return True

    def _index_archived(self, change: ObjectChange, claim: Claim, run: BatchRun) -> dict[str, Any]:
        """GetObject said ``InvalidObjectState``: indexed by name now, once; a completed restore re-indexes it."""
        doc = IndexDocument.for_change(change, None, content_type=None).archived()
        outcome = self._write(change, claim, run, doc)
        if outcome is WriteOutcome.CONFLICT:
            count(Metric.STALE_EVENTS_SKIPPED)
            return {"outcome": Outcome.STALE.value}
        count(Metric.OBJECTS_ARCHIVED)
        count(Metric.DOCUMENTS_INDEXED)
        logger.info("object is archived: indexed by name until a restore completes")
        return {"outcome": Outcome.ARCHIVED.value}

    def _remove_gone(self, change: ObjectChange, claim: Claim, run: BatchRun) -> dict[str, Any]:
        """The object was deleted after this change was claimed: its document goes now.

        Its delete event cannot be relied on to do it: it may be judged older
        than this change (a backfill's listing time against an EventBridge
        time in whole seconds). This change's generation orders the delete
        like any other: a newer change (a re-upload) still wins.
        """
        outcome = run.writer.delete(change.doc_id, claim.generation)
        if outcome is WriteOutcome.WRITTEN:
            count(Metric.DOCUMENTS_DELETED)
        logger.info("object no longer exists; its document is removed", extra={"delete": outcome.value})
        return {"outcome": Outcome.GONE.value, "removed": outcome is WriteOutcome.WRITTEN}

    def _write(self, change: ObjectChange, claim: Claim, run: BatchRun, doc: IndexDocument) -> WriteOutcome:
        # Through the batch's coalescing writer; a refused document falls back to its metadata.
        return self.documents.write(change.doc_id, claim.generation, doc, bulk=run.writer)

    def _hand_off(
        self,
        change: ObjectChange,
        claim: Claim,
        run: BatchRun,
        fetched: FetchedObject,
        *,
        reason: str,
        content_type: str | None,
        doc: IndexDocument | None = None,
    ) -> dict[str, Any]:
        """Index what is known now (``ocr_status: pending``) and queue the long job."""
        base = doc or IndexDocument.for_change(change, fetched, content_type=content_type)
        pending = base.pending_ocr(reason)
        outcome = self._write(change, claim, run, pending)
        if outcome is WriteOutcome.CONFLICT:
            count(Metric.STALE_EVENTS_SKIPPED)
            return {"outcome": Outcome.STALE.value}
        job = OcrJob.for_change(
            change,
            claim.generation,
            reason,
            version_id=fetched.version_id,
            etag=fetched.etag,
            size=fetched.size,
            content_type=content_type,
        )
        self.ocr_queue.send(job)
        count(Metric.OCR_JOBS_QUEUED)
        count(Metric.DOCUMENTS_INDEXED)
        return {"outcome": Outcome.OCR_QUEUED.value, "reason": reason}


_indexer: Indexer | None = None


def get_indexer() -> Indexer:
    """The process-wide indexer, built from the environment on first use."""
    global _indexer  # noqa: PLW0603 - one per Lambda container, created lazily
    if _indexer is None:
        from docindex.core.clients import Clients
        from docindex.core.settings import get_settings

        # A configuration the indexer cannot run with fails here, naming the variable.
        settings = get_settings().for_indexer()
        clients = Clients(settings)
        _indexer = Indexer(
            settings,
            s3=clients.s3,
            sqs=clients.sqs,
            dynamodb=clients.dynamodb,
            opensearch=clients.opensearch,
        )
    return _indexer
