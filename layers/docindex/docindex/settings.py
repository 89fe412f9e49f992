"""One validated settings object, read once from the environment.

Every tunable has a safe default; only the endpoints and tables that depend on
the deployment are required. The README lists each variable.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

MiB = 1024 * 1024


class SettingsError(ValueError):
    """The environment does not describe a usable configuration."""


class Settings(BaseModel):
    """Runtime configuration; field aliases are the environment variable names."""

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="ignore")

    opensearch_endpoint: str = Field(alias="OPENSEARCH_ENDPOINT")
    opensearch_index: str = Field("documents", alias="OPENSEARCH_INDEX")
    opensearch_auth: Literal["sigv4", "none"] = Field("sigv4", alias="OPENSEARCH_AUTH")
    opensearch_service: Literal["es", "aoss"] = Field("es", alias="OPENSEARCH_SERVICE")
    opensearch_timeout_seconds: float = Field(30.0, alias="OPENSEARCH_TIMEOUT_SECONDS", gt=0)
    # Managed domains on small instances refuse HTTP bodies above 10 MiB.
    bulk_max_bytes: int = Field(9 * MiB, alias="BULK_MAX_BYTES", gt=0)
    bulk_max_actions: int = Field(500, alias="BULK_MAX_ACTIONS", gt=0)

    idempotency_table: str = Field(alias="IDEMPOTENCY_TABLE")
    # The ordering ledger may share the idempotency table (distinct key prefix).
    ledger_table: str | None = Field(None, alias="LEDGER_TABLE")
    # Long enough to catch the same change announced again much later
    # (EventBridge + S3 duplicates, a DLQ redrive days later).
    idempotency_ttl_seconds: int = Field(7 * 24 * 3600, alias="IDEMPOTENCY_TTL_SECONDS", gt=0)

    ocr_queue_url: str | None = Field(None, alias="OCR_QUEUE_URL")
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

    # A change that has failed this many times (across receives and DLQ
    # redrives: 2 trips through a DLQ with maxReceiveCount 5) is indexed by
    # name with extraction_error "quarantined" instead of failing again.
    quarantine_after_failures: int = Field(10, alias="QUARANTINE_AFTER_FAILURES", ge=1)

    # Records processed at once inside one invocation (overlaps S3, DynamoDB and
    # OpenSearch round trips with extraction).
    indexer_concurrency: int = Field(8, alias="INDEXER_CONCURRENCY", ge=1, le=64)

    aws_region: str = Field("us-east-1", alias="AWS_REGION")
    aws_endpoint_url: str | None = Field(None, alias="AWS_ENDPOINT_URL")

    @field_validator("opensearch_endpoint")
    @classmethod
    def _endpoint_has_scheme(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @property
    def ledger_table_name(self) -> str:
        return self.ledger_table or self.idempotency_table

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if environ is None else environ)
        if "AWS_REGION" not in env and "AWS_DEFAULT_REGION" in env:
            env["AWS_REGION"] = env["AWS_DEFAULT_REGION"]
        try:
            return cls.model_validate(env)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors())
            raise SettingsError(f"invalid docindex configuration: {problems}") from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read lazily on first use."""
    return Settings.from_env()
