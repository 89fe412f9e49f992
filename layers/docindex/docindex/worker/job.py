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
  worker's lock expires together with its message's invisibility.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from botocore.exceptions import BotoCoreError, ClientError

from docindex.access.source import AccessMapSource
from docindex.core.aws import is_conditional_check_failure
from docindex.core.changes import doc_id as make_doc_id
from docindex.core.exceptions import JobAbandoned, ObjectArchivedError, PoisonMessageError, TransientError
from docindex.core.observability import Metric, MetricUnit, count, logger, measure
from docindex.core.storage import get_object, s3_sha256
from docindex.extract import ExtractionLimits, detect_type
from docindex.index.bulk import WriteOutcome
from docindex.index.documents import IndexDocument, OcrStatus, file_name_parts, now_iso
from docindex.index.store import DocumentStore
from docindex.ingest.cache import CACHEABLE_ERRORS, CachedContent, ContentCache
from docindex.ingest.handoff import OcrQueue
from docindex.ingest.ledger import Ledger, OcrCommit
from docindex.worker.ocr import DocumentInfo, PageResult, extract_file, probe, process_page
from docindex.worker.ranges import RangePart, RangeStore, page_ranges

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from opensearchpy import OpenSearch

    from docindex.extract import ExtractedDocument
    from docindex.ingest.handoff import OcrJob
    from docindex.worker.config import WorkerSettings
    from docindex.worker.leases import Lease
    from docindex.worker.pool import OcrPool

T = TypeVar("T")
MiB = 1024 * 1024


def _owner(job: OcrJob) -> str:
    """Whose task a pool process runs: the object's job at its generation (its ranges share it)."""
    return f"{make_doc_id(job.bucket, job.key)}#{job.generation}"


class PoolProcessLost(TransientError):
    """A pool process died under the job (killed out of memory, a crash in native code); retried, and counted."""


@dataclass(frozen=True)
class Split:
    """A document long enough to be read as page-range jobs."""

    page_count: int
    wanted: int


class Outcome(StrEnum):
    SPLIT = "split"  # queued as page-range jobs
    RANGE_STORED = "range_stored"  # one range read and stored; other ranges still to land
    DONE = "done"
    FAILED = "failed"  # permanent: the document says ocr_status failed + extraction_error
    STALE = "stale"  # the object changed or was deleted after the job was queued
    DUPLICATE = "duplicate"  # this job already ran to completion


@dataclass
class JobContent:
    """What the job produced for the document."""

    status: OcrStatus  # DONE or FAILED
    text: str = ""
    title: str | None = None
    page_count: int | None = None
    content_type: str | None = None
    truncated: bool = False
    error: str | None = None
    detail: str = ""
    ocr_pages: int = 0
    text_layer_pages: int = 0
    ocr_seconds: float = 0.0
    vertical_pages: int = 0
    confidences: list[int] = field(default_factory=list)
    # Taken from the content cache: the same bytes were recognised before (no pages run now).
    cached: bool = False

    @classmethod
    def from_cache(cls, entry: CachedContent) -> JobContent:
        return cls(
            status=OcrStatus(entry.ocr_status),
            text=entry.text,
            title=entry.title,
            page_count=entry.page_count,
            content_type=entry.content_type,
            truncated=entry.truncated,
            error=entry.error,
            cached=True,
        )

    def cache_entry(self, reason: str) -> CachedContent | None:
        """What the cache keeps of this result: only complete work the same bytes would give again."""
        if self.status is not OcrStatus.DONE or (self.error and self.error not in CACHEABLE_ERRORS):
            return None
        return CachedContent(
            ocr_status=self.status.value,
            content_type=self.content_type,
            text=self.text,
            title=self.title,
            page_count=self.page_count,
            truncated=self.truncated,
            error=self.error,
            ocr_reason=reason,
        )


@dataclass(frozen=True)
class Downloaded:
    path: Path
    size: int
    etag: str | None
    version_id: str | None
    last_modified: str | None
    # S3's full-object SHA-256 when the object has one, else computed from the chunks streamed.
    content_sha256: str | None = None


def lock_seconds(lease_seconds: int) -> int:
    """How long an idempotency lock lives unrenewed: a second less than the message's lease.

    So when a dead worker's message reappears, its lock has already expired
    and the next worker runs the job instead of deferring it.
    """
    return max(1, lease_seconds - 1)


class LeaseContext:
    """What Powertools idempotency reads from a Lambda context: the time a lock may be held unrenewed."""

    def __init__(self, seconds: int) -> None:
        self._millis = seconds * 1000

    def get_remaining_time_in_millis(self) -> int:
        return self._millis


class RenewableDynamoDBPersistence(DynamoDBPersistenceLayer):
    """Powertools' DynamoDB store, remembering each job's in-progress record so heartbeats can renew it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._bound = threading.local()

    @contextmanager
    def bound_to(self, lease: Lease) -> Iterator[None]:
        self._bound.lease = lease
        try:
            yield
        finally:
            self._bound.lease = None

    def _put_record(self, data_record: DataRecord) -> None:
        super()._put_record(data_record)
        lease = getattr(self._bound, "lease", None)
        if lease is not None and data_record.status == "INPROGRESS":
            lease.idempotency_key = data_record.idempotency_key

    def renew(self, leases: list[Lease], seconds: int) -> None:
        """Push the in-progress expiry of these jobs' records ``seconds`` ahead (only while INPROGRESS)."""
        until_ms = int((time.time() + seconds) * 1000)
        for lease in leases:
            key = lease.idempotency_key
            if not key:
                continue
            try:
                self.client.update_item(
                    TableName=self.table_name,
                    Key=self._get_key(key),
                    UpdateExpression="SET #expiry = :until",
                    ConditionExpression="#status = :inprogress",
                    ExpressionAttributeNames={"#expiry": self.in_progress_expiry_attr, "#status": self.status_attr},
                    ExpressionAttributeValues={":until": {"N": str(until_ms)}, ":inprogress": {"S": "INPROGRESS"}},
                )
            except ClientError as exc:
                if not is_conditional_check_failure(exc):
                    raise


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
        self.limits = ExtractionLimits.from_settings(settings.common)
        self.ledger = Ledger(dynamodb, settings.common.ledger_table_name)
        self.cache = ContentCache(s3, settings.common.content_cache_bucket, settings.common.content_cache_prefix)
        self.ranges = RangeStore(s3, settings.common.content_cache_bucket)
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
                return {"outcome": Outcome.DONE.value, "note": "already written"}
            logger.info("resuming a job whose ledger commit was not followed by its write")
        elif entry.generation != job.generation:
            return self._stale(job, f"the ledger holds generation {entry.generation}")
        self.documents.ensure(create=False)
        failures = entry.ocr_failures_for(job.generation)
        if failures >= self.settings.quarantine_after_failures:
            return self._quarantine(job, doc_id, failures, lease, started)
        return self._run(job, doc_id, lease, started)

    def _run(self, job: OcrJob, doc_id: str, lease: Lease, started: float) -> dict[str, Any]:
        """Download, read (or take from the cache) and commit: the job itself."""
        deadline = started + self.settings.job_timeout_seconds
        with tempfile.TemporaryDirectory(prefix="docindex-ocr-", dir=self.settings.tmp_dir) as tmp:
            try:
                downloaded = self._download(job, Path(tmp) / "object", lease)
            except ObjectArchivedError:
                return self._stale(job, "the object was archived after the job was queued; its restore re-indexes it")
            if downloaded is None:
                return self._stale(job, "the object version is gone or was replaced")
            try:
                if job.is_range:
                    return self._run_range(job, doc_id, downloaded, lease, deadline=deadline, started=started)
                content = self._cached_or_computed(job, downloaded, lease, deadline)
            except (PoolProcessLost, BrokenProcessPool) as exc:
                # Every job in flight on this task sees the pool break; the one whose page was in
                # the process that died counts it.
                if self.pool.took_down(_owner(job)):
                    self._count_failure(job, doc_id)
                if isinstance(exc, BrokenProcessPool):  # the pool broke again as the job submitted to it
                    raise PoolProcessLost(f"an OCR process died: {exc}") from exc
                raise
        if isinstance(content, Split):
            return self._split(job, content)
        return self._commit(job, doc_id, downloaded=downloaded, content=content, lease=lease, started=started)

    # -- page ranges (docindex.worker.ranges) --------------------------------

    def _split(self, job: OcrJob, split: Split) -> dict[str, Any]:
        """Hand the pages to range jobs any task can take; this job is done when they are queued."""
        if self.ocr_queue is None:  # _splits checked it
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
        part = self._read_pages(
            str(downloaded.path), kind, (job.first_page, job.last_page), lease, deadline, owner=_owner(job)
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
        info: DocumentInfo = self._await(
            self.pool.submit(probe, str(downloaded.path), kind, self.options, owner=_owner(job)), lease
        )
        content = self._assemble(parts, page_count=job.page_count or info.page_count, title=info.title)
        content.content_type = ftype.mime
        self.cache.put(downloaded.content_sha256, content.cache_entry(job.reason))
        result = self._commit(
            job, doc_id, downloaded=downloaded, content=content, lease=lease, started=started, own_part=part
        )
        self.ranges.delete(doc_id, job.generation, landed)
        return {**result, "ranges": job.ranges}

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

    # -- S3 ----------------------------------------------------------------

    def _download(self, job: OcrJob, path: Path, lease: Lease) -> Downloaded | None:
        """Stream the job's object version to ``path``; None when it no longer exists or changed."""
        response = get_object(self.s3, job.bucket, job.key, version_id=job.version_id)
        if response is None:
            return None
        body = response["Body"]
        try:
            etag = (response.get("ETag") or "").strip('"') or None
            if not job.version_id and job.etag and etag and etag != job.etag:
                return None  # overwritten since the job was queued: its own event brings a new job
            size = int(response.get("ContentLength") or 0)
            digest: Any = hashlib.sha256()
            if size > self.settings.max_object_bytes:
                path.write_bytes(b"")
                digest = None
            else:
                with path.open("wb") as out:
                    for chunk in body.iter_chunks(8 * MiB):
                        out.write(chunk)
                        digest.update(chunk)
                        if not lease.usable(0):
                            raise JobAbandoned(lease.reason or "lease ended during download")
        except (BotoCoreError, OSError) as exc:
            raise TransientError(f"reading s3://{job.bucket}/{job.key} failed: {exc}") from exc
        finally:
            body.close()
        last_modified = response.get("LastModified")
        version_id = response.get("VersionId")
        return Downloaded(
            path=path,
            size=size,
            etag=etag,
            version_id=version_id if version_id and version_id != "null" else None,
            last_modified=last_modified.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if last_modified else None,
            content_sha256=s3_sha256(response) or (digest.hexdigest() if digest is not None else None),
        )

    # -- content -----------------------------------------------------------

    def _cached_or_computed(
        self, job: OcrJob, downloaded: Downloaded, lease: Lease, deadline: float
    ) -> JobContent | Split:
        """The same bytes recognised before (a renamed or copied scan): the cached text, no pages run."""
        entry = self.cache.get(downloaded.content_sha256)
        if entry is not None and entry.ocr_status == OcrStatus.DONE:
            logger.info("content seen before: OCR result taken from the cache")
            return JobContent.from_cache(entry)
        content = self._content(job, downloaded, lease, deadline)
        if isinstance(content, JobContent):
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
            content = self._pages(
                str(downloaded.path), cast("Any", ftype.kind), lease, deadline, split=True, owner=_owner(job)
            )
            if isinstance(content, JobContent):
                content.content_type = ftype.mime
            return content
        extracted: ExtractedDocument = self._await(
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
        )

    def _pages(
        self, path: str, kind: Any, lease: Lease, deadline: float, *, split: bool, owner: str
    ) -> JobContent | Split:
        """Every page in order (or, with ``split``, page-range jobs for a long document)."""
        info: DocumentInfo = self._await(self.pool.submit(probe, path, kind, self.options, owner=owner), lease)
        if info.error:
            return JobContent(status=OcrStatus.FAILED, error=info.error, detail=info.detail)
        wanted = min(info.page_count, self.common.max_pages)
        if split and self._splits(wanted):
            return Split(page_count=info.page_count, wanted=wanted)
        part = self._read_pages(path, kind, (0, wanted), lease, deadline, owner=owner)
        return self._assemble([part], page_count=info.page_count, title=info.title)

    def _splits(self, pages: int) -> bool:
        size = self.settings.range_pages
        return bool(size) and pages > size and self.ranges.enabled and self.ocr_queue is not None

    def _read_pages(
        self, path: str, kind: Any, pages: tuple[int, int], lease: Lease, deadline: float, *, owner: str
    ) -> RangePart:
        """Pages [first, last) in order, at most ``pool.processes`` in flight: bounded memory for any count."""
        first, last = pages
        part = RangePart(first_page=first, last_page=last)
        chars = 0
        in_flight: deque[Future[PageResult]] = deque()
        next_page = first
        try:
            while next_page < last or in_flight:
                while next_page < last and len(in_flight) < self.pool.processes:
                    in_flight.append(self.pool.submit(process_page, path, kind, next_page, self.options, owner=owner))
                    next_page += 1
                page = self._await(in_flight.popleft(), lease)
                self._tally(part, page)
                if page.text:
                    part.texts.append(page.text)
                    chars += len(page.text) + 2
                if chars >= self.common.max_content_chars:
                    part.truncated = True
                    break
                if time.monotonic() >= deadline:
                    part.truncated = True
                    part.stopped_after = page.index + 1
                    break
        finally:
            for future in in_flight:
                future.cancel()
        return part

    def _assemble(self, parts: list[RangePart], *, page_count: int, title: str | None) -> JobContent:
        """The document's content from its parts in page order (one part for a job that was not split)."""
        parts = sorted(parts, key=lambda part: part.first_page)
        wanted = max((part.last_page for part in parts), default=0)
        content = JobContent(status=OcrStatus.DONE, title=title, page_count=page_count)
        text = "\n\n".join(t for part in parts for t in part.texts)
        content.text = text[: self.common.max_content_chars]
        content.truncated = (
            wanted < page_count or len(text) > len(content.text) or any(part.truncated for part in parts)
        )
        errors = [error for part in parts for error in part.errors]
        for part in parts:
            content.ocr_pages += part.ocr_pages
            content.text_layer_pages += part.text_layer_pages
            content.ocr_seconds += part.ocr_seconds
            content.vertical_pages += part.vertical_pages
            content.confidences.extend(part.confidences)
            if part.stopped_after is not None and content.error is None:
                content.error = "timeout"
                content.detail = f"stopped after page {part.stopped_after} of {page_count}"
        if errors and content.error is None:
            content.error, content.detail = errors[0]
            if len(errors) >= wanted:
                content.status = OcrStatus.FAILED
        return content

    @staticmethod
    def _tally(part: RangePart, page: PageResult) -> None:
        if page.error:
            part.errors.append((page.error, page.detail))
            logger.warning("page not read", extra={"page": page.index + 1, "error": page.error, "detail": page.detail})
        elif page.source == "ocr":
            part.ocr_pages += 1
            part.ocr_seconds += page.seconds
            part.vertical_pages += int(page.vertical)
            if page.confidence is not None:
                part.confidences.append(page.confidence)
        elif page.source == "text_layer":
            part.text_layer_pages += 1

    def _await(self, future: Future[T], lease: Lease) -> T:
        """The future's result, giving up as soon as the lease is lost or released."""
        while True:
            try:
                return future.result(timeout=0.25)
            except FutureTimeout:
                if not lease.usable(0):
                    future.cancel()
                    raise JobAbandoned(lease.reason or "lease ended") from None
            except (BrokenProcessPool, CancelledError) as exc:
                if not lease.usable(0):
                    raise JobAbandoned(lease.reason or "lease ended") from None
                raise PoolProcessLost(f"an OCR process died: {type(exc).__name__}: {exc}") from exc

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
        )
