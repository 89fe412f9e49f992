"""One OCR job: S3 object → pages → text → the document, applied at most once.

Data flows one way: ``OcrJob`` (handoff.py) → ledger check → object streamed
to a temporary file → pages (pool processes, ``docindex.worker.ocr``) →
``JobContent`` → ledger commit → full document at the next generation.

Two guards, for two different things:

- **The ledger** decides whether the result may be applied at all. The job
  carries the generation the indexer wrote the pending document with; the
  result is applied only while the ledger still holds it. Any newer change or
  a delete has bumped the generation, and the job is *stale*: dropped, never
  written over newer content or a deletion.
- **Powertools idempotency** (keyed on bucket, key and generation) keeps a
  job from being *run* twice: a second delivery while the first runs is
  deferred (``IdempotencyAlreadyInProgressError``), a delivery after it
  finished returns the stored outcome. Outside Lambda the in-progress lock
  would never expire on its own (Powertools derives ``in_progress_expiry``
  from a Lambda context), so a worker killed mid-job would block the job until
  the record's TTL. Here the "remaining time" registered is one lease (three
  heartbeats) and every heartbeat pushes the lock's expiry one lease further:
  the lock lives exactly as long as a live worker holds the job, and a killed
  worker's lock expires together with its message's invisibility
  (``docindex.worker.locks``).

The pieces: ``content`` (the download, ``JobContent``), ``pages`` (reading pages
through the pool), ``ranges`` (page-range jobs), ``locks`` (renewable locks).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

from docindex.access.source import AccessMapSource
from docindex.core.changes import doc_id as make_doc_id
from docindex.core.exceptions import JobAbandoned, ObjectArchivedError, PoisonMessageError, TransientError
from docindex.core.observability import Metric, MetricUnit, count, logger, measure
from docindex.extract import ExtractionLimits, detect_type
from docindex.index.bulk import WriteOutcome
from docindex.index.documents import IndexDocument, OcrStatus, file_name_parts, now_iso, page_entries
from docindex.index.store import DocumentStore
from docindex.ingest.cache import ContentCache
from docindex.ingest.handoff import EMBED_REASON, OcrQueue
from docindex.ingest.ledger import Ledger, OcrCommit
from docindex.ingest.wordboxes import PageWords, WordBoxStore
from docindex.worker.content import Downloaded, JobContent, Split, download
from docindex.worker.large_files import extract_file
from docindex.worker.locks import LeaseContext, RenewableDynamoDBPersistence, lock_seconds
from docindex.worker.ocr import PageResult
from docindex.worker.pages import PageReader, PoolProcessLost
from docindex.worker.ranges import RangePart, RangeStore, page_ranges
from docindex.worker.vectors import Vectors

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from opensearchpy import OpenSearch

    from docindex.extract import ExtractedDocument
    from docindex.ingest.handoff import OcrJob
    from docindex.worker.config import WorkerSettings
    from docindex.worker.leases import Lease
    from docindex.worker.pool import OcrPool


def _owner(job: OcrJob) -> str:
    """Whose task a pool process runs: the object's job at its generation (its ranges share it)."""
    return f"{make_doc_id(job.bucket, job.key)}#{job.generation}"


class Outcome(StrEnum):
    SPLIT = "split"  # queued as page-range jobs
    RANGE_STORED = "range_stored"  # one range read and stored; other ranges still to land
    DONE = "done"
    FAILED = "failed"  # permanent: the document says ocr_status failed + extraction_error
    STALE = "stale"  # the object changed or was deleted after the job was queued
    DUPLICATE = "duplicate"  # this job already ran to completion


class JobRunner:
    """Runs jobs; one instance per worker, called from several job threads."""

    def __init__(
        self,
        settings: WorkerSettings,
        *,
        s3: Any,
        dynamodb: Any,
        opensearch: OpenSearch,
        pool: OcrPool,
        sqs: Any = None,
        bedrock: Any = None,
    ) -> None:
        self.settings = settings
        self.common = settings.common
        self.s3 = s3
        self.opensearch = opensearch
        self.documents = DocumentStore(
            opensearch, settings.common.opensearch_index, access=AccessMapSource.from_settings(settings.common, s3)
        )
        self.pool = pool
        self.options = settings.ocr_options()
        self.pages = PageReader(
            pool, self.options, max_pages=settings.common.max_pages, max_content_chars=settings.common.max_content_chars
        )
        self.limits = ExtractionLimits.from_settings(settings.common)
        self.ledger = Ledger(dynamodb, settings.common.ledger_table_name)
        self.cache = ContentCache(s3, settings.common.content_cache_bucket, settings.common.content_cache_prefix)
        self.ranges = RangeStore(s3, settings.common.content_cache_bucket)
        # The OCR'd words of each page and their boxes, beside the cache: what a preview marks.
        self.word_boxes = WordBoxStore(s3, settings.common.content_cache_bucket)
        # Meaning search's vectors: after OCR, and for the indexer's embed jobs.
        self.vectors = Vectors(
            settings.common, self.cache, bedrock_client=(lambda: bedrock) if bedrock is not None else None
        )
        # Where page-range jobs go (the queue this worker consumes); None: long documents are read whole.
        self.ocr_queue = OcrQueue(sqs, settings.queue_url) if sqs is not None else None
        # A job commits only with at least one heartbeat interval of lease left.
        self.commit_margin = min(settings.heartbeat_seconds, 5.0)
        self.persistence = RenewableDynamoDBPersistence(
            table_name=settings.common.idempotency_table, boto3_client=dynamodb
        )
        self.idempotency_config = IdempotencyConfig(
            # A page-range job is its own job: one run per generation and first page.
            event_key_jmespath="join('#', [bucket, key, to_string(generation), to_string(first_page)])",
            expires_after_seconds=settings.common.idempotency_ttl_seconds,
            raise_on_no_idempotency_key=True,
            response_hook=self._on_duplicate,
        )
        self._lock_seconds = lock_seconds(settings.lease_seconds)
        self.idempotency_config.register_lambda_context(cast("LambdaContext", LeaseContext(self._lock_seconds)))
        self._run_once = idempotent_function(
            data_keyword_argument="job",
            persistence_store=self.persistence,
            config=self.idempotency_config,
            key_prefix="docindex-ocr-job",
        )(self._process)

    # -- entry -------------------------------------------------------------

    def run(self, job: OcrJob, lease: Lease) -> dict[str, Any]:
        """Run ``job`` unless it already ran; returns its outcome (raises to leave the message for a retry)."""
        with self.persistence.bound_to(lease):
            return self._run_once(job=job, lease=lease)

    def renew_locks(self, leases: list[Lease]) -> None:
        self.persistence.renew(leases, self._lock_seconds)

    def _on_duplicate(self, response: Any, idempotent_data: DataRecord) -> Any:
        count(Metric.OCR_JOBS_DUPLICATE)
        first = dict(response or {})
        return {**first, "outcome": Outcome.DUPLICATE.value, "first_outcome": first.get("outcome")}

    # -- one job (runs under idempotency) -----------------------------------

    def _process(self, job: OcrJob, lease: Lease) -> dict[str, Any]:
        started = time.monotonic()
        doc_id = make_doc_id(job.bucket, job.key)
        entry = self.ledger.get(doc_id)
        if entry is None or entry.state != "present":
            return self._stale(job, "the object was deleted")
        if entry.generation == job.generation + 1 and entry.ocr_of == job.generation:
            # This job committed to the ledger before, but the process died
            # before (or while) writing the document. Nothing changed since.
            current = self.documents.current(doc_id, fields=["ocr_status"])
            if (
                current
                and current[0] >= job.generation + 1
                and current[1].get("ocr_status")
                in (
                    OcrStatus.DONE,
                    OcrStatus.FAILED,
                )
            ):
                # A duplicate delivery its idempotency record did not catch (the table lost,
                # the record expired): the ledger and the index say it is done.
                count(Metric.OCR_JOBS_DUPLICATE)
                return {"outcome": Outcome.DUPLICATE.value, "note": "already written"}
            logger.info("resuming a job whose ledger commit was not followed by its write")
        elif entry.generation != job.generation:
            return self._stale(job, f"the ledger holds generation {entry.generation}")
        self.documents.ensure(create=False)
        if job.reason == EMBED_REASON:
            return self._run_embed(job, doc_id, lease)
        failures = entry.ocr_failures_for(job.generation)
        if failures >= self.settings.quarantine_after_failures:
            return self._quarantine(job, doc_id, failures, lease, started)
        return self._run(job, doc_id, lease, started)

    def _run(self, job: OcrJob, doc_id: str, lease: Lease, started: float) -> dict[str, Any]:
        """Download, read (or take from the cache) and commit: the job itself."""
        deadline = started + self.settings.job_timeout_seconds
        with tempfile.TemporaryDirectory(prefix="docindex-ocr-", dir=self.settings.tmp_dir) as tmp:
            try:
                downloaded = download(
                    self.s3,
                    job,
                    Path(tmp) / "object",
                    lease,
                    max_object_bytes=self.settings.max_object_bytes,
                    mtime_keys=self.settings.common.mtime_keys,
                )
            except ObjectArchivedError:
                return self._stale(job, "the object was archived after the job was queued; its restore re-indexes it")
            if downloaded is None:
                return self._stale(job, "the object version is gone or was replaced")
            try:
                if job.is_range:
                    return self._run_range(job, doc_id, downloaded, lease, deadline=deadline, started=started)
                content = self._cached_or_computed(job, downloaded, lease, deadline)
            except (PoolProcessLost, BrokenProcessPool) as exc:
                # Only the job whose page was in the process that died counts it.
                if self.pool.took_down(_owner(job)):
                    self._count_failure(job, doc_id)
                redone = getattr(exc, "pages_read", 0)
                if redone:
                    count(Metric.OCR_PAGES_REDONE, redone)
                    logger.info("pages read before an OCR process died are read again", extra={"pages": redone})
                if isinstance(exc, BrokenProcessPool):  # the pool broke again as the job submitted to it
                    raise PoolProcessLost(f"an OCR process died: {exc}") from exc
                raise
        if isinstance(content, Split):
            return self._split(job, content)
        return self._commit(job, doc_id, downloaded=downloaded, content=content, lease=lease, started=started)

    # -- page ranges (docindex.worker.ranges) --------------------------------

    def _split(self, job: OcrJob, split: Split) -> dict[str, Any]:
        """Hand the pages to range jobs any task can take; this job is done when they are queued."""
        if self.ocr_queue is None:  # _split_above checked it
            raise TransientError("no OCR queue to send page-range jobs to")
        ranges = page_ranges(split.wanted, self.settings.range_pages)
        jobs = [job.page_range(first, last, page_count=split.page_count, ranges=len(ranges)) for first, last in ranges]
        self.ocr_queue.send_all(jobs)
        count(Metric.OCR_JOBS_SPLIT)
        logger.info("long document split into page-range jobs", extra={"pages": split.wanted, "ranges": len(ranges)})
        return {"outcome": Outcome.SPLIT.value, "pages": split.wanted, "ranges": len(ranges)}

    def _run_range(
        self, job: OcrJob, doc_id: str, downloaded: Downloaded, lease: Lease, *, deadline: float, started: float
    ) -> dict[str, Any]:
        """Read this range, store it, and write the document if it was the last range to land."""
        if job.first_page is None or job.last_page is None or not job.ranges:
            raise PoisonMessageError("a page-range job without its range")
        filename, _ = file_name_parts(job.key)
        with downloaded.path.open("rb") as handle:
            ftype = detect_type(handle.read(64 * 1024), filename)
        kind: Any = ftype.kind
        part = self.pages.read(
            str(downloaded.path),
            kind,
            (job.first_page, job.last_page),
            lease,
            deadline,
            owner=_owner(job),
            on_page=self._keep_words(downloaded),
        )
        self.ranges.put(doc_id, job.generation, part)
        landed = self.ledger.add_ocr_range(doc_id, job.generation, job.first_page)
        if landed is None:
            return self._stale(job, "the object changed while its pages were read")
        count(Metric.OCR_RANGES_COMPLETED)
        if len(landed) < job.ranges:
            self._record_part_metrics(part)
            return {
                "outcome": Outcome.RANGE_STORED.value,
                "pages": f"{job.first_page + 1}-{job.last_page}",
                "ranges_landed": len(landed),
                "ranges": job.ranges,
            }
        # The last range: every part, in page order, becomes the document.
        parts = [
            part if first == job.first_page else self.ranges.get(doc_id, job.generation, first) for first in landed
        ]
        info = self.pages.probe(str(downloaded.path), kind, lease, owner=_owner(job))
        content = self.pages.assemble(parts, page_count=job.page_count or info.page_count, title=info.title)
        content.content_type = ftype.mime
        self._embed(content, job)
        self.cache.put(downloaded.content_sha256, content.cache_entry(job.reason))
        result = self._commit(
            job, doc_id, downloaded=downloaded, content=content, lease=lease, started=started, own_part=part
        )
        self.ranges.delete(doc_id, job.generation, landed)
        return {**result, "ranges": job.ranges}

    def _split_above(self) -> int | None:
        """Read as page-range jobs above this many pages; None where ranges cannot be stored or sent."""
        size = self.settings.range_pages
        return size if size and self.ranges.enabled and self.ocr_queue is not None else None

    def _count_failure(self, job: OcrJob, doc_id: str) -> None:
        """One more attempt of this job whose pool process died: the quarantine counts it in the ledger."""
        count(Metric.OCR_PROCESSES_LOST)
        failures = self.ledger.record_ocr_failure(doc_id, job.generation)
        logger.warning(
            "an OCR process died during the job",
            extra={"failures": failures, "quarantine_after": self.settings.quarantine_after_failures},
        )

    def _quarantine(self, job: OcrJob, doc_id: str, failures: int, lease: Lease, started: float) -> dict[str, Any]:
        """Finish a job that keeps killing its pool process: failed, findable by name, never tried again."""
        count(Metric.OCR_JOBS_QUARANTINED)
        detail = (
            f"{failures} attempts ended with their OCR process killed or crashed (out of memory, or a native "
            "decoder failing on this file); not tried again until the object changes"
        )
        logger.error("OCR job quarantined", extra={"failures": failures})
        content = JobContent(status=OcrStatus.FAILED, error="quarantined", detail=detail)
        return self._commit(job, doc_id, downloaded=None, content=content, lease=lease, started=started)

    def _stale(self, job: OcrJob, why: str) -> dict[str, Any]:
        count(Metric.OCR_JOBS_STALE)
        logger.info("stale OCR job dropped", extra={"why": why})
        return {"outcome": Outcome.STALE.value, "why": why}

    # -- content -----------------------------------------------------------

    def _cached_or_computed(
        self, job: OcrJob, downloaded: Downloaded, lease: Lease, deadline: float
    ) -> JobContent | Split:
        """The same bytes recognised before (a renamed or copied scan): the cached text, no pages run."""
        entry = self.cache.get(downloaded.content_sha256)
        if entry is not None and entry.ocr_status == OcrStatus.DONE:
            logger.info("content seen before: OCR result taken from the cache")
            cached = JobContent.from_cache(entry)
            if self._embed(cached, job):
                self.cache.put(downloaded.content_sha256, cached.cache_entry(job.reason))
            return cached
        content = self._content(job, downloaded, lease, deadline)
        if isinstance(content, JobContent):
            self._embed(content, job)
            self.cache.put(downloaded.content_sha256, content.cache_entry(job.reason))
        return content

    def _content(self, job: OcrJob, downloaded: Downloaded, lease: Lease, deadline: float) -> JobContent | Split:
        filename, _ = file_name_parts(job.key)
        if downloaded.size > self.settings.max_object_bytes:
            return JobContent(status=OcrStatus.FAILED, error="too_large", detail=f"{downloaded.size} bytes")
        with downloaded.path.open("rb") as handle:
            head = handle.read(64 * 1024)
        ftype = detect_type(head, filename)
        if ftype.kind in ("pdf", "image"):
            content = self.pages.document(
                str(downloaded.path),
                cast("Any", ftype.kind),
                lease,
                deadline,
                split_above=self._split_above(),
                owner=_owner(job),
                on_page=self._keep_words(downloaded),
            )
            if isinstance(content, JobContent):
                content.content_type = ftype.mime
            return content
        extracted: ExtractedDocument = self.pages.wait(
            self.pool.submit(
                extract_file,
                str(downloaded.path),
                filename,
                self.limits,
                self.settings.max_in_memory_bytes,
                self.options.memory_bytes,
                owner=_owner(job),
            ),
            lease,
        )
        return JobContent(
            status=OcrStatus.FAILED if extracted.error and not extracted.text else OcrStatus.DONE,
            text=extracted.text,
            title=extracted.title,
            page_count=extracted.page_count,
            content_type=extracted.content_type,
            truncated=extracted.truncated,
            error=extracted.error,
            detail=extracted.error_detail or "",
            pages=extracted.pages,
        )

    def _keep_words(self, downloaded: Downloaded) -> Callable[[PageResult], None]:
        """What keeps each OCR'd page's words and boxes, by the bytes' hash (nothing without a cache bucket)."""
        sha = downloaded.content_sha256

        def keep(page: PageResult) -> None:
            if page.source == "ocr" and page.words and not page.error:
                self.word_boxes.put(sha, PageWords.from_result(page.index + 1, page.words))

        return keep

    # -- commit ------------------------------------------------------------

    def _commit(
        self,
        job: OcrJob,
        doc_id: str,
        *,
        downloaded: Downloaded | None,
        content: JobContent,
        lease: Lease,
        started: float,
        own_part: RangePart | None = None,
    ) -> dict[str, Any]:
        """Ledger first, then the document; ``own_part``: the range this job read (the others counted theirs)."""
        # Order matters. The ledger moves first (generation g → g+1, only if it
        # still holds g), the document is written second at version g+1:
        # - written first instead, a change claimed between our check and our
        #   write would hold g+1 too, and external_gte would let our stale
        #   text replace it;
        # - a crash between the two leaves the ledger at g+1 marked ocr_of=g
        #   and the pending document at g; the message comes back, the retry
        #   recognizes its own commit (ALREADY) and writes. Any newer change
        #   takes g+2 and wins over our g+1 in the index (409).
        if not lease.begin_commit(self.commit_margin):
            raise JobAbandoned(lease.reason or "lease too close to its end to commit")
        committed = self.ledger.commit_ocr(doc_id, job.generation, when=now_iso())
        if committed is OcrCommit.STALE:
            return self._stale(job, "the object changed while the job ran")
        version = job.generation + 1
        document = self._document(doc_id, job, downloaded, content)
        still_current = lambda: bool(self.ledger.still_current([(doc_id, version)]))  # noqa: E731
        if self.documents.write(doc_id, version, document, still_current=still_current) is WriteOutcome.CONFLICT:
            return self._stale(job, "a newer version is already indexed")
        self._record_metrics(content, own_part)
        result: dict[str, Any] = {
            "outcome": Outcome.DONE.value if content.status is OcrStatus.DONE else Outcome.FAILED.value,
            "version": version,
            "pages": content.page_count,
            "ocr_pages": content.ocr_pages,
            "text_layer_pages": content.text_layer_pages,
            "chars": len(content.text),
            "seconds": round(time.monotonic() - started, 2),
        }
        if content.ocr_pages:
            result["seconds_per_page"] = round(content.ocr_seconds / content.ocr_pages, 3)
        if content.confidences:
            result["mean_confidence"] = round(sum(content.confidences) / len(content.confidences))
        if content.vertical_pages:
            result["vertical_pages"] = content.vertical_pages
        if content.error:
            result["extraction_error"] = content.error
            result["detail"] = content.detail
        return result

    @staticmethod
    def _record_part_metrics(part: RangePart) -> None:
        """The pages a range job read: each range counts its own, the document once (when written)."""
        if part.ocr_pages:
            count(Metric.OCR_PAGES_PROCESSED, part.ocr_pages)
        if part.text_layer_pages:
            count(Metric.OCR_TEXT_LAYER_PAGES, part.text_layer_pages)

    def _record_metrics(self, content: JobContent, own_part: RangePart | None = None) -> None:
        count(Metric.OCR_JOBS_COMPLETED if content.status is OcrStatus.DONE else Metric.OCR_JOBS_FAILED)
        if content.ocr_pages:
            measure(Metric.OCR_SECONDS_PER_PAGE, content.ocr_seconds / content.ocr_pages, MetricUnit.Seconds)
        if own_part is not None:
            self._record_part_metrics(own_part)
            return
        if content.ocr_pages:
            count(Metric.OCR_PAGES_PROCESSED, content.ocr_pages)
        if content.text_layer_pages:
            count(Metric.OCR_TEXT_LAYER_PAGES, content.text_layer_pages)

    def _document(self, doc_id: str, job: OcrJob, downloaded: Downloaded | None, content: JobContent) -> IndexDocument:
        """The pending document's fields plus the job's content (a full document: external versions need one)."""
        current = self.documents.current(doc_id)
        if current and current[0] in (job.generation, job.generation + 1):
            base = IndexDocument.from_source(current[1])
        else:
            base = IndexDocument.for_object(
                bucket=job.bucket,
                key=job.key,
                size=downloaded.size if downloaded else job.size,
                etag=(downloaded.etag if downloaded else None) or job.etag,
                version_id=(downloaded.version_id if downloaded else None) or job.version_id,
                sequencer=job.sequencer,
                last_modified=downloaded.last_modified if downloaded else None,
                file_date=downloaded.file_date if downloaded else None,
            )
        if downloaded and downloaded.content_sha256:
            base = base.with_content_sha256(downloaded.content_sha256)
        return base.ocr_result(
            status=content.status,
            reason=job.reason,
            content_type=content.content_type,
            text=content.text,
            title=content.title,
            page_count=content.page_count,
            truncated=content.truncated,
            error=content.error,
            pages=content.pages,
            ocr_pages=content.ocr_page_info,
        ).with_embeddings(content.embedded)

    # -- meaning search (docindex.worker.vectors) -----------------------------

    def _embed(self, content: JobContent, job: OcrJob) -> bool:
        """Give ``content`` its vectors unless it has this model's already; whether it got new ones."""
        embedder = self.vectors.embedder() if self.vectors.enabled else None
        if content.status is not OcrStatus.DONE or not content.text or embedder is None:
            return False
        if content.embedded is not None and content.embedded.model_id == embedder.model_id:
            return False
        title = content.title or file_name_parts(job.key)[0].rsplit(".", 1)[0]
        content.embedded = self.vectors.embed(content.text, title=title, pages=page_entries(content.pages))
        return content.embedded is not None

    def _run_embed(self, job: OcrJob, doc_id: str, lease: Lease) -> dict[str, Any]:
        """An embed job: the document the indexer wrote at this generation, with its vectors, at the next.

        Its text is read from the index (no object download); the vectors come from the content
        cache when the same bytes were embedded before. Committed like an OCR result (the ledger
        moves first), so a newer change or a delete of the object drops it.
        """
        current = self.documents.current(doc_id)
        if current is None:
            raise TransientError("the document of an embed job is not in the index yet")
        version, source = current
        if version > job.generation + 1 or (version == job.generation + 1 and source.get("embedding_model")):
            return {"outcome": Outcome.DONE.value, "note": "already written"}
        base = IndexDocument.from_source(source)
        title = base.title or file_name_parts(job.key)[0].rsplit(".", 1)[0]
        embedded = self.vectors.embed(
            base.content, title=title, pages=base.pages or (), content_sha256=base.content_sha256
        )
        if embedded is None:
            # Searchable by its words as it is; nothing to commit (EmbeddingsFailed counted it).
            return {"outcome": Outcome.FAILED.value, "why": "not embedded"}
        if not lease.begin_commit(self.commit_margin):
            raise JobAbandoned(lease.reason or "lease too close to its end to commit")
        if self.ledger.commit_ocr(doc_id, job.generation, when=now_iso()) is OcrCommit.STALE:
            return self._stale(job, "the object changed while the job ran")
        version = job.generation + 1
        still_current = lambda: bool(self.ledger.still_current([(doc_id, version)]))  # noqa: E731
        document = base.with_embeddings(embedded)
        if self.documents.write(doc_id, version, document, still_current=still_current) is WriteOutcome.CONFLICT:
            return self._stale(job, "a newer version is already indexed")
        return {"outcome": Outcome.DONE.value, "version": version, "passages": len(embedded.passages)}
