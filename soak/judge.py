"""The verdict of a soak run.

1. ``docindex reconcile`` (the command, as an operator runs it): 100 %
   coverage, nothing missing, stale or orphaned.
2. The DLQs hold exactly the deliberately poisoned messages, each once.
3. Writes per change (``count_writes``). Every write OpenSearch accepted was
   recorded by the proxy in front of it, every change announced was recorded
   as it was sent. Each change claims its own ledger generation, which is the
   document's external version, and the OCR worker's result takes the next
   one; so no ``(document, version)`` may be written twice, no document may
   get more indexer writes than distinct changes were announced for it
   (duplicates in any shape, redeliveries and redrives included), and no more
   worker writes than distinct OCR jobs were queued for it. An indexer that
   applied a duplicate, or re-applied a change after a crash, fails here.
   One exception, made by the ledger-restored drill itself: a document whose
   ledger entry it rolled back or erased gets generations again from where the
   restored entry stands (a file deleted after the restore point has no
   document for ``ledger repair`` to see), so its versions may be written
   again by new changes; they are counted apart (``versions_reused_after_restore``),
   and every other rule still holds for it.
4. Content: every object's document says what its latest version holds (its
   token in ``content``, ``ocr_status: done`` for scans and files handed to
   the worker, or the expected ``extraction_error``), and nothing is left
   ``pending``.
"""

from __future__ import annotations

import json
import os
import subprocess  # runs `docindex reconcile` as an operator would, fixed argv  # nosec B404
import sys
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devkit.faults import SentMessage, Write
from docindex.core.changes import parse_body
from docindex.core.exceptions import PoisonMessageError
from docindex.ingest.handoff import EMBED_REASON, OcrJob
from soak.workload import ObjectState

SAMPLES = 10


@dataclass
class WriteReport:
    writes: int = 0
    indexer_writes: int = 0
    worker_writes: int = 0
    distinct_changes: int = 0
    documents_written: int = 0
    max_writes_per_version: int = 0
    duplicate_writes: int = 0
    # versions written again of documents whose ledger entry the ledger-restored drill rolled back
    versions_reused_after_restore: int = 0
    violations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.duplicate_writes == 0 and not self.violations

    def to_dict(self) -> dict[str, Any]:
        return {
            "writes": self.writes,
            "indexer_writes": self.indexer_writes,
            "worker_writes": self.worker_writes,
            "distinct_changes": self.distinct_changes,
            "documents_written": self.documents_written,
            "max_writes_per_version": self.max_writes_per_version,
            "duplicate_writes": self.duplicate_writes,
            "versions_reused_after_restore": self.versions_reused_after_restore,
            "violations": self.violations[:SAMPLES],
            "violation_count": len(self.violations),
        }


def announced_changes(messages: Iterable[SentMessage], ingest_url: str) -> dict[str, set[str]]:
    """Distinct changes announced per document id, from every body sent to the ingest queue."""
    changes: dict[str, set[str]] = defaultdict(set)
    for message in messages:
        if message.queue_url != ingest_url:
            continue
        try:
            parsed = parse_body(message.body)
        except PoisonMessageError:
            continue
        for change in parsed.changes:
            changes[change.doc_id].add(change.dedupe_key)
    return changes


def queued_ocr_jobs(messages: Iterable[SentMessage], *queue_urls: str, embed: bool = True) -> dict[str, set[int]]:
    """Distinct OCR job generations per document id, of the jobs sent to ``queue_urls`` (the OCR
    queue, the embed queue); ``embed``: meaning search's embed jobs too, which the worker commits
    like OCR results."""
    from docindex.core.changes import doc_id

    jobs: dict[str, set[int]] = defaultdict(set)
    for message in messages:
        if message.queue_url not in queue_urls:
            continue
        try:
            job = OcrJob.from_json(message.body)
        except PoisonMessageError:
            continue
        if embed or job.reason != EMBED_REASON:
            jobs[doc_id(job.bucket, job.key)].add(job.generation)
    return jobs


@dataclass
class PreviousEmbedJobs:
    """Meaning search's embed jobs the previous release's worker finished, and which it took from the OCR
    queue: the ones it may have taken for jobs to OCR (a worker without an embed queue wrote such a
    document again without vectors, ``ocr_status: done``)."""

    finished: int = 0
    from_ocr_queue: int = 0


def previous_embed_jobs(lines: Iterable[str], messages: Iterable[SentMessage], ocr_url: str) -> PreviousEmbedJobs:
    """Count the embed jobs in a previous release's worker log (``OCR job finished`` lines).

    Which queue a job came from: its own log lines say so (``queue``, from the release after
    ``0eb63cb``); a worker that names no embed queue when it starts (``9c5e4dd``, before meaning
    search) polls the OCR queue alone; a worker that polls both queues without saying which (``59f731c``,
    ``0eb63cb``) took the job from the OCR queue only if it was sent there (``messages``: every send
    of the run, with its queue).
    """
    sent_to_ocr_queue = set()
    for message in messages:
        if message.queue_url != ocr_url:
            continue
        try:
            job = OcrJob.from_json(message.body)
        except PoisonMessageError:
            continue
        if job.reason == EMBED_REASON:
            sent_to_ocr_queue.add((job.bucket, job.key, job.generation))
    out = PreviousEmbedJobs()
    polls_embed_queue = False
    for line in lines:
        if '"OCR worker started"' not in line and '"OCR job finished"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("message") == "OCR worker started":
            polls_embed_queue = bool(record.get("embed_queue_url"))
            continue
        if record.get("message") != "OCR job finished" or record.get("reason") != EMBED_REASON:
            continue
        out.finished += 1
        queue = record.get("queue")
        if queue is not None:
            out.from_ocr_queue += queue == "ocr"
        elif not polls_embed_queue:
            out.from_ocr_queue += 1
        else:
            out.from_ocr_queue += (record.get("bucket"), record.get("key"), record.get("generation")) in (
                sent_to_ocr_queue
            )
    return out


def count_writes(
    writes: Iterable[Write],
    changes: dict[str, set[str]],
    ocr_jobs: dict[str, set[int]],
    *,
    rolled_back: Collection[str] = (),
) -> WriteReport:
    """Check that no change was written more than once (see the module docstring); ``rolled_back``: the
    documents whose ledger entries the ledger-restored drill rolled back (their versions may be reused)."""
    report = WriteReport(distinct_changes=sum(len(c) for c in changes.values()))
    per_version: Counter[tuple[str, int | None]] = Counter()
    indexer: Counter[str] = Counter()
    worker: Counter[str] = Counter()
    for write in writes:
        report.writes += 1
        per_version[(write.doc_id, write.version)] += 1
        if write.writer == "bulk":
            report.indexer_writes += 1
            indexer[write.doc_id] += 1
        else:
            report.worker_writes += 1
            worker[write.doc_id] += 1
        if write.version is None:
            report.violations.append({"rule": "write without an external version", "doc_id": write.doc_id})
    report.documents_written = len({doc for doc, _ in per_version})
    report.max_writes_per_version = max(per_version.values(), default=0)
    for (doc, version), n in sorted(per_version.items(), key=lambda item: (-item[1], item[0][0])):
        if n > 1 and doc in rolled_back:
            report.versions_reused_after_restore += n - 1
        elif n > 1:
            report.duplicate_writes += n - 1
            report.violations.append(
                {"rule": "one version written more than once", "doc_id": doc, "version": version, "writes": n}
            )
    for doc, n in indexer.items():
        allowed = len(changes.get(doc, ()))
        if n > allowed:
            report.duplicate_writes += n - allowed
            report.violations.append(
                {"rule": "more indexer writes than changes", "doc_id": doc, "writes": n, "changes": allowed}
            )
    for doc, n in worker.items():
        allowed = len(ocr_jobs.get(doc, ()))
        if n > allowed:
            report.duplicate_writes += n - allowed
            report.violations.append(
                {"rule": "more worker writes than OCR jobs", "doc_id": doc, "writes": n, "jobs": allowed}
            )
    return report


# --------------------------------------------------------------------------- DLQs


@dataclass
class DlqReport:
    queue: str
    messages: int
    expected_poison: int
    unexpected: list[str]
    missing_poison: list[str]

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.missing_poison

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "messages": self.messages,
            "expected_poison": self.expected_poison,
            "unexpected": [body[:300] for body in self.unexpected[:SAMPLES]],
            "unexpected_count": len(self.unexpected),
            "missing_poison": self.missing_poison[:SAMPLES],
        }


def drain_bodies(sqs: Any, url: str) -> list[str]:
    """Every message body in the queue (received and left invisible: the run is over)."""
    bodies: list[str] = []
    empty_rounds = 0
    while empty_rounds < 2:
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600, WaitTimeSeconds=0)
        messages = got.get("Messages", [])
        if not messages:
            empty_rounds += 1
            continue
        bodies.extend(m["Body"] for m in messages)
    return bodies


def check_dlq(name: str, bodies: list[str], poison: list[str]) -> DlqReport:
    found, expected = Counter(bodies), Counter(poison)
    unexpected = list((found - expected).elements())
    missing = list((expected - found).elements())
    return DlqReport(name, len(bodies), len(poison), unexpected, missing)


# --------------------------------------------------------------------------- reconcile


def _operator_json(*argv: str) -> dict[str, Any]:
    """``docindex ARGV --json`` against the run's stack, as an operator runs it (exit 0 or 1)."""
    result = subprocess.run(  # noqa: S603  # our own interpreter and CLI  # nosec B603
        [sys.executable, "-m", "docindex.cli", *argv, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "POWERTOOLS_LOG_LEVEL": "ERROR"},
    )
    if result.returncode not in (0, 1):
        raise RuntimeError(f"docindex {argv[0]} failed ({result.returncode}): {result.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(result.stdout)
    data["exit_code"] = result.returncode
    return data


def run_reconcile(env_file: Path) -> dict[str, Any]:
    """``docindex reconcile --json`` against the run's stack, as an operator runs it."""
    return _operator_json("reconcile", "--env-file", str(env_file), "--no-progress")


def check_failures_report(env_file: Path, bucket: str, docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``docindex failures`` lists every document of ``bucket`` with an ``extraction_error``, each once.

    ``docs`` is the direct query's answer (:func:`indexed_documents`): what the report must list.
    """
    report = _operator_json("failures", "--env-file", str(env_file), "--bucket", bucket)
    listed = [d["key"] for reason in report["reasons"] for d in reason["documents"] if d.get("extraction_error")]
    errored = {key for key, doc in docs.items() if doc.get("extraction_error")}
    return {
        "with_extraction_error": len(errored),
        "listed_with_extraction_error": len(listed),
        "missing": sorted(errored - set(listed))[:SAMPLES],
        "missing_count": len(errored - set(listed)),
        "listed_twice": len(listed) - len(set(listed)),
        "reasons": {reason["reason"]: reason["count"] for reason in report["reasons"]},
        "exit_code": report["exit_code"],
    }


# --------------------------------------------------------------------------- content


@dataclass
class ContentReport:
    checked: int = 0
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    pending: int = 0
    extraction_errors: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.pending == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "mismatch_count": len(self.mismatches),
            "mismatches": self.mismatches[:SAMPLES],
            "ocr_pending": self.pending,
            "extraction_errors": dict(sorted(self.extraction_errors.items())),
        }


def indexed_documents(opensearch: Any, index: str, bucket: str) -> dict[str, dict[str, Any]]:
    """Every document of ``bucket``, by key (``search_after`` over the key)."""
    opensearch.indices.refresh(index=index)
    body: dict[str, Any] = {
        "size": 1000,
        "query": {"term": {"bucket": bucket}},
        "sort": [{"key": "asc"}],
        "_source": ["key", "etag", "content", "ocr_status", "extraction_error"],
    }
    docs: dict[str, dict[str, Any]] = {}
    while True:
        hits = opensearch.search(index=index, body=body)["hits"]["hits"]
        for hit in hits:
            docs[hit["_source"]["key"]] = hit["_source"]
        if len(hits) < body["size"]:
            return docs
        body["search_after"] = hits[-1]["sort"]


def check_content(expected: dict[str, ObjectState], docs: dict[str, dict[str, Any]]) -> ContentReport:
    report = ContentReport()
    for doc in docs.values():
        if doc.get("ocr_status") == "pending":
            report.pending += 1
        error = doc.get("extraction_error")
        if error:
            report.extraction_errors[error] = report.extraction_errors.get(error, 0) + 1
    for key, state in sorted(expected.items()):
        report.checked += 1
        problem = _content_problem(state, docs.get(key))
        if problem:
            report.mismatches.append({"key": key, "kind": state.kind, "problem": problem})
    return report


def _content_problem(state: ObjectState, doc: dict[str, Any] | None) -> str | None:
    """The first way ``doc`` differs from what ``state``'s latest version must give, if any."""
    if doc is None:
        return "no document"
    expect, error, status = state.expect, doc.get("extraction_error"), doc.get("ocr_status")
    if doc.get("etag") != state.etag:
        return f"etag {doc.get('etag')} is not the object's {state.etag}"
    if expect.error is not None:
        return None if error == expect.error else f"extraction_error {error!r}, expected {expect.error!r}"
    checks = [
        (bool(error), f"unexpected extraction_error {error!r}"),
        (expect.ocr and status != "done", f"ocr_status {status!r}, expected 'done'"),
        (not expect.ocr and status not in (None, "none"), f"ocr_status {status!r} for a file the indexer reads"),
        (bool(expect.token) and str(expect.token) not in (doc.get("content") or ""), f"no token {expect.token}"),
    ]
    return next((problem for failed, problem in checks if failed), None)


# --------------------------------------------------------------------------- re-syncs, copies, renames


@dataclass
class ResyncReport:
    """What the last phase's re-uploads, copies and renames cost (``Workload.resync_phase``)."""

    resynced: int = 0
    copied: int = 0
    renamed: int = 0
    body_reads: dict[str, int] = field(default_factory=dict)  # re-uploaded key -> GetObject requests
    not_unchanged: list[str] = field(default_factory=list)  # re-uploads not applied as "unchanged"
    extracted: list[str] = field(default_factory=list)  # copies/renames not indexed from the cache
    ocr_jobs: list[str] = field(default_factory=list)  # copies/renames that queued an OCR job

    @property
    def ok(self) -> bool:
        return not (self.body_reads or self.not_unchanged or self.extracted or self.ocr_jobs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "resynced": self.resynced,
            "copied": self.copied,
            "renamed": self.renamed,
            "unchanged_body_reads": sum(self.body_reads.values()),
            "unchanged_read": sorted(self.body_reads)[:SAMPLES],
            "not_unchanged": self.not_unchanged[:SAMPLES],
            "extracted": self.extracted[:SAMPLES],
            "ocr_jobs": self.ocr_jobs[:SAMPLES],
        }


_STALE_AT_CLAIM = "stale change skipped: a newer change of this object was applied"


def applied_outcomes(log_lines: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The indexer's outcome of each change by key (Powertools JSON lines): its ``change applied``
    records, and a change the ledger refused at its claim (logged on its own, outcome ``stale``)."""
    outcomes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in log_lines:
        if '"change applied"' not in line and _STALE_AT_CLAIM not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not record.get("key"):
            continue
        if record.get("message") == "change applied":
            outcomes[str(record["key"])].append(record)
        elif record.get("message") == _STALE_AT_CLAIM:
            outcomes[str(record["key"])].append({**record, "outcome": "stale"})
    return outcomes


def check_resync(
    plan: Any,
    *,
    bucket: str,
    gets: Counter[str],
    log_lines: Iterable[str],
    messages: Iterable[SentMessage],
    ocr_url: str,
) -> ResyncReport:
    """No unchanged re-upload read its body; every copy and rename came from the content cache.

    ``gets``: the indexer's GetObject requests during the phase by ``/bucket/key``;
    ``log_lines``: the indexer's logs of the phase; ``messages``: what was sent during the phase.
    The phase runs with the faults off on documents already complete, so each
    of these is a certainty, not an odds: a re-upload of bytes the index holds
    needs no body, and bytes extracted or recognised before need no extraction
    and no OCR.

    A key re-uploaded and then renamed in the phase (its delete comes after the re-upload in
    S3's order) may end either way: the re-upload applied as ``unchanged`` before the delete,
    or, when the delete is delivered first, skipped as ``stale`` — older than the delete, so
    it must not bring the file back. Both read no body.
    """
    from docindex.core.changes import doc_id

    report = ResyncReport(resynced=len(plan.resynced), copied=len(plan.copied), renamed=len(plan.renamed))
    outcomes = applied_outcomes(log_lines)
    deleted_after = {source for source, _ in plan.renamed}
    for key in plan.resynced:
        reads = gets.get(f"/{bucket}/{key}", 0)
        if reads:
            report.body_reads[key] = reads
        right = {"unchanged", "stale"} if key in deleted_after else {"unchanged"}
        if not any(r.get("outcome") in right for r in outcomes.get(key, [])):
            report.not_unchanged.append(key)
    # An embed job may follow a copy whose original's vectors were still on their way (the worker
    # then takes them from the cache): not an OCR job, not a re-read.
    jobs = queued_ocr_jobs(messages, ocr_url, embed=False)
    for key in plan.new_keys:
        if not any(r.get("cached") is True for r in outcomes.get(key, [])):
            report.extracted.append(key)
        if jobs.get(doc_id(bucket, key)):
            report.ocr_jobs.append(key)
    return report
