"""Scheduled and manual DLQ redrive (docs/dlq-redrive.md)."""

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from docindex.redrive import wiring
from docindex.redrive.models import RedriveRequest

logger = Logger()
metrics = Metrics()
tracer = Tracer()


@logger.inject_lambda_context(log_event=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = RedriveRequest.from_event(event)
    summary = wiring.get_service().run(request)
    wiring.emit_metrics(metrics, summary)
    logger.info("redrive summary", extra={"summary": summary.to_dict()})
    return summary.to_dict()
