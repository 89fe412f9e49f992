"""Lambda entry point: the employees' search API and page (API Gateway HTTP API, JWT authorizer)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from docindex.core.observability import logger, metrics, tracer
from docindex.search_api.routes import get_resolver


# log_event stays off: query strings are what employees search for.
@logger.inject_lambda_context(clear_state=True, log_event=False)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """An HTTP API (payload 2.0) request → its response; only what the caller may read."""
    return get_resolver().resolve(event, context)
