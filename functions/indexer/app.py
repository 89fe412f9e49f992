"""Lambda entry point: SQS batch of S3 changes → OpenSearch (partial batch responses)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from docindex.core.observability import logger, metrics, tracer
from docindex.ingest.indexer import get_indexer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Returns ``{"batchItemFailures": [{"itemIdentifier": messageId}, ...]}``."""
    return get_indexer().handle(event, context)
