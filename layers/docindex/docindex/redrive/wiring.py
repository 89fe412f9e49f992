"""The process-wide redrive: the service built once from the environment, and the Lambda's run of it.

``get_service`` is what the Lambda and ``docindex redrive`` use (tests replace it here);
``run`` is the Lambda's whole job: run the request, publish the metrics, log the summary.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from functools import lru_cache

from docindex.core.observability import NAMESPACE, Metric, MetricUnit, count, logger
from docindex.redrive.models import Outcome, RedriveAction, RedriveRequest, RedriveSummary, utc_now
from docindex.redrive.probes import ConsumerHealth, OpenSearchHealth, ThroughputProbe, UnconfiguredHealth
from docindex.redrive.service import RedriveService
from docindex.redrive.settings import RedriveSettings
from docindex.redrive.state import RedriveStateStore


def build_service(settings: RedriveSettings) -> RedriveService:
    """Create the clients once (boto3 honours AWS_ENDPOINT_URL) and the service around them."""
    from docindex.core.clients import AwsClients, make_opensearch

    # The one retry policy of every component (core.clients); the function's timeout (template.yaml,
    # 120 s) leaves room for it to give up on an unreachable endpoint and still report it.
    clients = AwsClients(settings.aws_region)
    sqs = clients.client("sqs")
    dynamodb = clients.client("dynamodb")
    health: ConsumerHealth = (
        OpenSearchHealth(
            make_opensearch(
                settings.opensearch_endpoint,
                auth=settings.opensearch_auth,
                service=settings.opensearch_service,
                region=settings.aws_region,
                timeout=settings.health_timeout_seconds,
            ),
            settings.opensearch_service,
            settings.opensearch_index,
        )
        if settings.opensearch_endpoint
        else UnconfiguredHealth()
    )
    throughput = None
    if settings.adaptive_fraction > 0:
        window = timedelta(seconds=settings.adaptive_window_seconds)
        throughput = ThroughputProbe(clients.client("cloudwatch"), window, utc_now)
    return RedriveService(
        settings=settings,
        sqs=sqs,
        move_tasks=sqs,
        state=RedriveStateStore(dynamodb, settings.state_table),
        health=health,
        throughput=throughput,
    )


@lru_cache(maxsize=1)
def get_service() -> RedriveService:
    """The process-wide service, built on first use from the environment."""
    return build_service(RedriveSettings.from_env())


def run(request: RedriveRequest) -> RedriveSummary:
    """The Lambda's run: the request on the process-wide service, its metrics, and the summary logged."""
    summary = get_service().run(request)
    emit_metrics(summary)
    logger.info("redrive summary", extra={"summary": summary.to_dict()})
    return summary


def emit_metrics(summary: RedriveSummary) -> None:
    """``Metric.REDRIVES_STARTED``, ``REDRIVES_SKIPPED`` (also per ``Reason``), ``REDRIVE_ERRORS``.

    Only real start runs count; status, cancel, reset and dry runs emit nothing. The totals go
    to the invocation's metrics (flushed by the handler's ``log_metrics``), the per-reason
    counts out at once, each with its ``Reason`` dimension.
    """
    from aws_lambda_powertools.metrics import single_metric

    if summary.action != RedriveAction.START or summary.dry_run:
        return
    statuses = Counter(str(r.status) for r in summary.results)
    count(Metric.REDRIVES_STARTED, statuses[Outcome.STARTED])
    count(Metric.REDRIVES_SKIPPED, statuses[Outcome.SKIPPED])
    count(Metric.REDRIVE_ERRORS, statuses[Outcome.ERROR])
    by_reason = Counter(
        (str(r.status), r.reason or "none") for r in summary.results if r.status in (Outcome.SKIPPED, Outcome.ERROR)
    )
    for (status, reason), value in sorted(by_reason.items()):
        name = Metric.REDRIVES_SKIPPED if status == Outcome.SKIPPED else Metric.REDRIVE_ERRORS
        with single_metric(name=name, unit=MetricUnit.Count, value=value, namespace=NAMESPACE) as metric:
            metric.add_dimension(name="Reason", value=reason)
