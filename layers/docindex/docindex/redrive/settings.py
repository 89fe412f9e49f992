"""Redrive configuration, read from the environment (the Lambda's, or what ``docindex redrive`` loads)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import Field, field_validator

from docindex.core.exceptions import RedriveConfigError
from docindex.core.settings import OpenSearchAccess, check_endpoint
from docindex.redrive.models import check_velocity


class RedriveSettings(OpenSearchAccess):
    """Redrive configuration; field aliases are the environment variable names.

    ``OPENSEARCH_ENDPOINT`` is optional here (unlike ``OpenSearchSettings``): without it the
    consumer-health guard skips every start (``consumer_unhealthy``) instead of redriving blind.
    """

    config_error: ClassVar[type[ValueError]] = RedriveConfigError
    config_label: ClassVar[str] = "redrive"

    # Comma-separated DLQ ARNs (or URLs). Empty: the ingest, OCR and embed DLQs below.
    dlq_arns: tuple[str, ...] = Field((), alias="REDRIVE_DLQ_ARNS")
    ingest_dlq_arn: str | None = Field(None, alias="INGEST_DLQ_ARN")
    ocr_dlq_arn: str | None = Field(None, alias="OCR_DLQ_ARN")
    embed_dlq_arn: str | None = Field(None, alias="EMBED_DLQ_ARN")
    # What `docindex local up` writes; used when no ARN is configured.
    ingest_dlq_url: str | None = Field(None, alias="INGEST_DLQ_URL")
    ocr_dlq_url: str | None = Field(None, alias="OCR_DLQ_URL")
    embed_dlq_url: str | None = Field(None, alias="EMBED_DLQ_URL")

    velocity: int = Field(10, alias="REDRIVE_VELOCITY")
    # JSON object {"<dlq arn>": velocity}: per-DLQ overrides of REDRIVE_VELOCITY.
    velocities: dict[str, int] = Field(default_factory=dict, alias="REDRIVE_VELOCITIES")
    # JSON object {"<dlq arn>": "<destination arn>"}; a DLQ not named here is redriven to its
    # only source queue (named as DestinationArn), or, with several, back to each message's own.
    destinations: dict[str, str] = Field(default_factory=dict, alias="REDRIVE_DESTINATIONS")

    state_table: str = Field(alias="REDRIVE_STATE_TABLE")
    max_source_backlog: int = Field(1000, alias="REDRIVE_MAX_SOURCE_BACKLOG", ge=0)
    max_fruitless_rounds: int = Field(3, alias="REDRIVE_MAX_FRUITLESS_ROUNDS", ge=1)
    # Wait after the first fruitless round; doubled after each further one.
    backoff_seconds: int = Field(3600, alias="REDRIVE_BACKOFF_SECONDS", ge=0)

    # Optional here: without it the consumer-health guard skips every start.
    opensearch_endpoint: str | None = Field(None, alias="OPENSEARCH_ENDPOINT")
    health_timeout_seconds: float = Field(5.0, alias="REDRIVE_HEALTH_TIMEOUT_SECONDS", gt=0)
    # Adaptive velocity: 0 = off; else a redrive adds at most this fraction of what the
    # consumer proved it can take (CloudWatch NumberOfMessagesDeleted over the window),
    # never more than the configured velocity.
    adaptive_fraction: float = Field(0.0, alias="REDRIVE_ADAPTIVE_FRACTION", ge=0, le=1)
    adaptive_window_seconds: int = Field(3600, alias="REDRIVE_ADAPTIVE_WINDOW_SECONDS", ge=60)

    @field_validator("dlq_arns", mode="before")
    @classmethod
    def _split_arns(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("velocities", "destinations", mode="before")
    @classmethod
    def _parse_json_object(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                return {}
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ValueError(f"must be a JSON object keyed by DLQ ARN ({exc})") from None
        return value

    @field_validator("velocity")
    @classmethod
    def _velocity_in_range(cls, value: int) -> int:
        return check_velocity(value)

    @field_validator("velocities")
    @classmethod
    def _velocities_in_range(cls, value: dict[str, int]) -> dict[str, int]:
        for arn, velocity in value.items():
            try:
                check_velocity(velocity)
            except ValueError as exc:
                raise ValueError(f"{arn}: {exc}") from None
        return value

    @field_validator("opensearch_endpoint")
    @classmethod
    def _endpoint_has_scheme(cls, value: str | None) -> str | None:
        return check_endpoint(value)

    def configured_dlqs(self) -> tuple[str, ...]:
        """The DLQs a run without ``dlq_arn`` covers, in order."""
        if self.dlq_arns:
            return self.dlq_arns
        found = tuple(
            q
            for q in (
                self.ingest_dlq_arn or self.ingest_dlq_url,
                self.ocr_dlq_arn or self.ocr_dlq_url,
                self.embed_dlq_arn or self.embed_dlq_url,
            )
            if q
        )
        if not found:
            raise RedriveConfigError(
                "no DLQ configured: set REDRIVE_DLQ_ARNS (comma-separated ARNs) or INGEST_DLQ_ARN / OCR_DLQ_ARN"
            )
        return found

    def velocity_for(self, dlq_arn: str) -> int:
        """The configured velocity of one DLQ: its ``REDRIVE_VELOCITIES`` entry, else ``REDRIVE_VELOCITY``."""
        return self.velocities.get(dlq_arn, self.velocity)
