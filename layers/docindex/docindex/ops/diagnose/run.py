"""The diagnose run: for each check, gather its facts, judge them, and never crash on the way.

A check whose facts cannot be gathered still gets a verdict: SKIP when the
check cannot run here (``Unsupported``, or an endpoint without the API), FAIL
when a resource is missing or the reading failed for another reason ("could not
check": a monitor must page on it). Missing credentials and an unreachable AWS
endpoint are not per-check findings: they stop the run (the CLI prints one line, exit 2).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from docindex.core.aws import error_code
from docindex.core.clients import AwsClients
from docindex.core.exceptions import Unsupported
from docindex.ops.deployment import Deployment
from docindex.ops.diagnose.checks.backlog import judge_backlog
from docindex.ops.diagnose.checks.dlq import judge_dlq
from docindex.ops.diagnose.checks.iam import judge_permissions
from docindex.ops.diagnose.checks.index import judge_index
from docindex.ops.diagnose.checks.notifications import judge_notifications
from docindex.ops.diagnose.checks.ocr_worker import judge_ocr_worker
from docindex.ops.diagnose.checks.queues import judge_consumers, judge_redrive, judge_visibility
from docindex.ops.diagnose.checks.security import judge_bucket, judge_domain
from docindex.ops.diagnose.facts.iam import permission_facts
from docindex.ops.diagnose.facts.notifications import notification_facts
from docindex.ops.diagnose.facts.queues import (
    backlog_facts,
    consumer_facts,
    dlq_facts,
    redrive_facts,
    visibility_facts,
)
from docindex.ops.diagnose.facts.reader import Reader, is_unsupported
from docindex.ops.diagnose.facts.security import bucket_facts, domain_facts
from docindex.ops.diagnose.facts.services import index_facts, worker_facts
from docindex.ops.diagnose.report import Check, Diagnosis, Status

Plan = list[tuple[str, str, Callable[[], Check]]]


class Diagnoser:
    """Runs the checks against one deployment; read-only apart from sampling queues."""

    def __init__(
        self,
        deployment: Deployment,
        clients: AwsClients,
        *,
        opensearch: Any = None,
        sample: int = 10,
        sample_seconds: float = 10.0,
        window_minutes: int = 15,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.deployment = deployment
        self.reader = Reader(
            deployment,
            clients,
            opensearch=opensearch,
            sample=sample,
            sample_seconds=sample_seconds,
            window_minutes=window_minutes,
            clock=clock,
            sleep=sleep,
        )

    def run(self, only: Sequence[str] | None = None) -> Diagnosis:
        """Every check in report order, or those whose id is or starts with one of ``only`` (``dlq``: both)."""
        self.reader.load_pause()
        checks = [
            _guard(check_id, title, judge)
            for check_id, title, judge in self.plan()
            if not only or any(check_id == o or check_id.startswith(o + "-") for o in only)
        ]
        return Diagnosis(self.deployment, checks)

    def plan(self) -> Plan:
        """(id, title, gather-and-judge) of every check, in report order."""
        r, d = self.reader, self.deployment

        def visibility() -> Check:
            facts = visibility_facts(r)
            return judge_visibility(facts.visibility, facts.function_timeout, facts.batching_window, local=facts.local)

        def redrive(label: str, url: str | None) -> Check:
            facts = redrive_facts(r, label, url)
            return judge_redrive(facts.label, facts.url, facts.queue, facts.dlq)

        def event_source() -> Check:
            facts = consumer_facts(r)
            return judge_consumers(facts.function_name, facts.mappings, facts.paused)

        checks: Plan = [
            ("notifications", "one notification path", lambda: judge_notifications(notification_facts(r))),
            ("visibility", "visibility timeout", visibility),
            ("redrive-ingest", "ingest redrive policy", lambda: redrive("ingest", d.ingest_queue_url)),
            ("redrive-ocr", "ocr redrive policy", lambda: redrive("ocr", d.ocr_queue_url)),
            ("redrive-embed", "embed redrive policy", lambda: redrive("embed", d.embed_queue_url)),
            ("event-source", "event source mapping", event_source),
            (
                "dlq-ingest",
                "ingest DLQ",
                lambda: judge_dlq(dlq_facts(r, "ingest", d.ingest_queue_url, d.ingest_dlq_url)),
            ),
            ("dlq-ocr", "ocr DLQ", lambda: judge_dlq(dlq_facts(r, "ocr", d.ocr_queue_url, d.ocr_dlq_url))),
            ("dlq-embed", "embed DLQ", lambda: judge_dlq(dlq_facts(r, "embed", d.embed_queue_url, d.embed_dlq_url))),
            ("backlog-ingest", "ingest backlog", lambda: judge_backlog(backlog_facts(r, "ingest", d.ingest_queue_url))),
            ("backlog-ocr", "ocr backlog", lambda: judge_backlog(backlog_facts(r, "ocr", d.ocr_queue_url))),
            ("backlog-embed", "embed backlog", lambda: judge_backlog(backlog_facts(r, "embed", d.embed_queue_url))),
            ("permissions", "function permissions", lambda: judge_permissions(permission_facts(r))),
            ("index", "index and cluster", lambda: judge_index(index_facts(r))),
            ("domain-security", "OpenSearch domain security", lambda: judge_domain(domain_facts(r))),
            ("bucket-security", "documents bucket security", lambda: judge_bucket(bucket_facts(r))),
            ("ocr-worker", "OCR worker service", lambda: judge_ocr_worker(worker_facts(r))),
        ]
        # The embed queue's checks only where there is one (a stack from before meaning search has none).
        return [check for check in checks if d.embed_queue_url or not check[0].endswith("-embed")]


def _guard(check_id: str, title: str, judge: Callable[[], Check]) -> Check:
    """Run one check; a failure to gather its facts becomes its verdict, never a crash."""
    try:
        return judge()
    except Unsupported as exc:
        return Check(check_id, title, Status.SKIP, str(exc))
    except Exception as exc:
        from botocore.exceptions import EndpointConnectionError, NoCredentialsError, PartialCredentialsError
        from opensearchpy.exceptions import OpenSearchException

        if isinstance(exc, EndpointConnectionError | NoCredentialsError | PartialCredentialsError):
            raise  # nothing can be checked: one line from the CLI, not twelve identical findings
        known = (ClientError, BotoCoreError, OSError, ValueError, KeyError, OpenSearchException)
        if not isinstance(exc, known) and not is_unsupported(exc):
            raise
        return _error_check(check_id, title, exc)


def _error_check(check_id: str, title: str, exc: Exception) -> Check:
    """The verdict when a check's facts could not be gathered."""
    from opensearchpy.exceptions import OpenSearchException

    if is_unsupported(exc):
        return Check(check_id, title, Status.SKIP, f"not supported by this endpoint ({type(exc).__name__})")
    if isinstance(exc, OpenSearchException):
        return Check(check_id, title, Status.FAIL, f"OpenSearch: {type(exc).__name__}: {exc}")
    if isinstance(exc, ClientError):
        code = error_code(exc)
        if any(word in code for word in ("NonExistent", "DoesNotExist", "NoSuch", "NotFound")):
            return Check(check_id, title, Status.FAIL, f"not found: {code}: {exc}")
    check = Check(check_id, title, Status.FAIL, f"could not check: {type(exc).__name__}: {exc}")
    check.data["could_not_check"] = True
    return check
