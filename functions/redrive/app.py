"""Scheduled and manual DLQ redrive (docs/dlq-redrive.md)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from docindex.core.observability import logger, metrics, tracer
from docindex.redrive.models import RedriveRequest
from docindex.redrive.wiring import run


@logger.inject_lambda_context(log_event=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Returns the summary: ``{"action", "dry_run", "results": [one per DLQ]}``."""
    request = RedriveRequest.from_event(event)
    return run(request).to_dict()
