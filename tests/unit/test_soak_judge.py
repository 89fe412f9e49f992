"""The soak's judge: duplicate writes, DLQ contents and document content are caught."""

from __future__ import annotations

import json

from devkit.faults import SentMessage, Write
from devkit.messages import Change
from docindex.core.changes import doc_id
from docindex.ingest.handoff import EMBED_REASON, OcrJob
from soak.judge import (
    announced_changes,
    check_content,
    check_dlq,
    check_resync,
    count_writes,
    previous_embed_jobs,
    queued_ocr_jobs,
)
from soak.workload import Expectation, ObjectState, ResyncPlan

BUCKET = "soak1-documents"
INGEST, OCR, EMBED = "http://q/ingest", "http://q/ocr", "http://q/embed"
KEY = "営業部/見積書 No. 00001.pdf"
DOC = doc_id(BUCKET, KEY)


def _change(sequencer: str | None, *, created: bool = True, ms: int = 0) -> Change:
    from datetime import UTC, datetime, timedelta

    when = datetime(2026, 11, 20, 9, 0, 0, tzinfo=UTC) + timedelta(milliseconds=ms)
    return Change(BUCKET, KEY, created, when, sequencer=sequencer, etag="e" if created else None, size=10)


def _sent(*payloads: object, queue: str = INGEST) -> list[SentMessage]:
    return [SentMessage(queue, p if isinstance(p, str) else json.dumps(p), "t") for p in payloads]


def _write(version: int, writer: str = "bulk") -> Write:
    return Write(writer, "index", DOC, version, "e", "none", "lambda-0")


def test_one_change_in_three_shapes_is_one_change() -> None:
    change = _change("00A1")
    sent = _sent(change.s3_notification(), change.eventbridge(), change.sns_notification())
    sent += _sent("not json", {"hello": 1})  # poison is not a change
    changes = announced_changes(sent, INGEST)
    assert list(changes) == [DOC]
    assert len(changes[DOC]) == 1


def test_each_change_written_once_passes() -> None:
    changes = announced_changes(_sent(_change("00A1").s3_notification(), _change("00A2").s3_notification()), INGEST)
    report = count_writes([_write(1), _write(2)], changes, {})
    assert report.ok
    assert report.duplicate_writes == 0
    assert report.max_writes_per_version == 1


def test_a_version_written_twice_is_caught() -> None:
    # A duplicate applied again at the same generation (sequencer retry path)
    changes = announced_changes(_sent(_change("00A1").s3_notification()), INGEST)
    report = count_writes([_write(1), _write(1)], changes, {})
    assert not report.ok
    assert report.duplicate_writes >= 1
    assert {v["rule"] for v in report.violations} >= {"one version written more than once"}


def test_versions_reused_after_the_ledger_restore_are_counted_apart_for_those_documents_only() -> None:
    # Two changes of a document whose ledger entry the ledger-restored drill erased: generation 1 again
    changes = announced_changes(_sent(_change("00A1").s3_notification(), _change("00A2").s3_notification()), INGEST)
    report = count_writes([_write(1), _write(1)], changes, {}, rolled_back={DOC})
    assert report.ok
    assert (report.duplicate_writes, report.versions_reused_after_restore) == (0, 1)
    # ... while any other document's version written twice still fails, and so do extra writes of that one
    assert not count_writes([_write(1), _write(1)], changes, {}, rolled_back={"another"}).ok
    assert not count_writes([_write(1), _write(1), _write(2)], changes, {}, rolled_back={DOC}).ok


def test_a_change_applied_at_two_generations_is_caught() -> None:
    # A duplicate without a sequencer, claimed again as if it were new: two versions, one change
    body = _change(None).s3_notification()
    changes = announced_changes(_sent(body, body), INGEST)
    report = count_writes([_write(1), _write(2)], changes, {})
    assert not report.ok
    assert report.violations[0]["rule"] == "more indexer writes than changes"


def test_worker_writes_are_bounded_by_distinct_ocr_jobs() -> None:
    job = OcrJob(bucket=BUCKET, key=KEY, reason="image", generation=1).to_json()
    jobs = queued_ocr_jobs(_sent(job, job, queue=OCR), OCR)
    changes = announced_changes(_sent(_change("00A1").s3_notification()), INGEST)
    assert count_writes([_write(1), _write(2, "doc")], changes, jobs).ok
    report = count_writes([_write(1), _write(2, "doc"), _write(3, "doc")], changes, jobs)
    assert not report.ok
    assert any(v["rule"] == "more worker writes than OCR jobs" for v in report.violations)


def test_dlq_must_hold_exactly_the_poison() -> None:
    poison = ["not json", "{}"]
    assert check_dlq("ingest", ["{}", "not json"], poison).ok
    extra = check_dlq("ingest", ["{}", "not json", '{"Records": []}'], poison)
    assert not extra.ok
    assert extra.unexpected == ['{"Records": []}']
    missing = check_dlq("ingest", ["{}"], poison)
    assert missing.missing_poison == ["not json"]


def test_content_must_match_the_latest_version() -> None:
    state = ObjectState(KEY, sequenced=True, present=True, kind="pdf", expect=Expectation(token="T2"), etag="e2")
    scan = ObjectState("scan.png", sequenced=False, present=True, expect=Expectation(ocr=True), etag="s")
    bomb = ObjectState("b.docx", sequenced=False, present=True, expect=Expectation(error="zip_bomb"), etag="z")
    expected = {KEY: state, "scan.png": scan, "b.docx": bomb}
    good = {
        KEY: {"key": KEY, "etag": "e2", "content": "... T2 ...", "ocr_status": "none"},
        "scan.png": {"key": "scan.png", "etag": "s", "content": "請求書", "ocr_status": "done"},
        "b.docx": {"key": "b.docx", "etag": "z", "extraction_error": "zip_bomb", "ocr_status": "none"},
    }
    assert check_content(expected, good).ok
    stale = {**good, KEY: {"key": KEY, "etag": "e2", "content": "... T1 ...", "ocr_status": "none"}}
    assert "token T2" in check_content(expected, stale).mismatches[0]["problem"]
    pending = {**good, "scan.png": {"key": "scan.png", "etag": "s", "ocr_status": "pending"}}
    report = check_content(expected, pending)
    assert not report.ok
    assert report.pending == 1
    missing = {k: v for k, v in good.items() if k != "b.docx"}
    assert check_content(expected, missing).mismatches[0]["problem"] == "no document"


def _applied(key: str, outcome: str, **extra: object) -> str:
    return json.dumps({"message": "change applied", "key": key, "outcome": outcome, **extra}, ensure_ascii=False)


def test_a_reupload_must_be_unchanged_unless_renamed_after_it_in_the_phase() -> None:
    from collections import Counter

    moved = "移動済み moved/" + KEY
    plan = ResyncPlan(resynced=[KEY, "b.txt"], renamed=[(KEY, moved)])
    lines = [_applied(KEY, "stale"), _applied(moved, "indexed", cached=True), _applied("b.txt", "unchanged")]
    # A re-upload older than its rename's delete, skipped as stale when the delete came first: right
    report = check_resync(plan, bucket=BUCKET, gets=Counter(), log_lines=lines, messages=[], ocr_url=OCR)
    assert report.ok
    # ... but a plain re-upload skipped as stale, or one that read its body, is not
    stale = [*lines[:2], _applied("b.txt", "stale")]
    report = check_resync(plan, bucket=BUCKET, gets=Counter(), log_lines=stale, messages=[], ocr_url=OCR)
    assert report.not_unchanged == ["b.txt"]
    read = check_resync(
        plan, bucket=BUCKET, gets=Counter({f"/{BUCKET}/{KEY}": 1}), log_lines=lines, messages=[], ocr_url=OCR
    )
    assert read.body_reads == {KEY: 1}
    assert not read.ok
    # The ledger may refuse the re-upload at its claim already (the delete applied first): the
    # indexer logs that on its own line, and it is the same right outcome
    at_claim = json.dumps(
        {"message": "stale change skipped: a newer change of this object was applied", "key": KEY, "action": "created"},
        ensure_ascii=False,
    )
    report = check_resync(
        plan, bucket=BUCKET, gets=Counter(), log_lines=[at_claim, *lines[1:]], messages=[], ocr_url=OCR
    )
    assert report.ok

    # A renamed copy may get an embed job (its original's vectors still on their way), never an OCR job
    def job(reason: str) -> SentMessage:
        body = OcrJob(bucket=BUCKET, key=moved, reason=reason, generation=1).to_json()
        return SentMessage(queue_url=OCR, body=body, client="indexer", at=0.0)

    embedded = check_resync(plan, bucket=BUCKET, gets=Counter(), log_lines=lines, messages=[job("embed")], ocr_url=OCR)
    assert embedded.ok
    ocr = check_resync(plan, bucket=BUCKET, gets=Counter(), log_lines=lines, messages=[job("image")], ocr_url=OCR)
    assert ocr.ocr_jobs == [moved]


def _worker_log(*records: dict[str, object]) -> list[str]:
    """Lines of a worker's log as Powertools writes them (one JSON object a line), with noise between."""
    lines = ["not json", json.dumps({"level": "INFO", "message": "OCR job stopped at shutdown"})]
    for record in records:
        lines.append(json.dumps({"level": "INFO", "service": "docindex-worker", **record}))
    return lines


def _started(*, embed_queue: bool) -> dict[str, object]:
    # 9c5e4dd's start line names its one queue; a release with meaning search names both
    return {"message": "OCR worker started", "queue_url": OCR, **({"embed_queue_url": EMBED} if embed_queue else {})}


def _finished(key: str, reason: str = EMBED_REASON, **extra: object) -> dict[str, object]:
    return {"message": "OCR job finished", "bucket": BUCKET, "key": key, "generation": 2, "reason": reason, **extra}


def test_the_upgrade_judge_counts_only_embed_jobs_a_previous_worker_took_from_the_ocr_queue() -> None:
    embed_job = OcrJob(bucket=BUCKET, key="a.txt", reason=EMBED_REASON, generation=2).to_json()
    stray_job = OcrJob(bucket=BUCKET, key="b.txt", reason=EMBED_REASON, generation=2).to_json()
    sends = [SentMessage(EMBED, embed_job, "lambda"), SentMessage(OCR, stray_job, "lambda")]
    # A worker of the release before meaning search (9c5e4dd) polls the OCR queue only: every embed job
    # it finished came from there, whatever queue it was first sent to
    old = _worker_log(_started(embed_queue=False), _finished("a.txt"), _finished("c.png", reason="image"))
    assert previous_embed_jobs(old, sends, OCR) == previous_embed_jobs(old, [], OCR)
    assert (previous_embed_jobs(old, sends, OCR).finished, previous_embed_jobs(old, sends, OCR).from_ocr_queue) == (
        1,
        1,
    )
    # A worker that polls both queues but does not say which a job came from (59f731c, 0eb63cb): from the
    # OCR queue only if the job was sent there (15 embed jobs of 59f731c from its embed queue failed seed 58)
    both = _worker_log(_started(embed_queue=True), _finished("a.txt"), _finished("b.txt"))
    counted = previous_embed_jobs(both, sends, OCR)
    assert (counted.finished, counted.from_ocr_queue) == (2, 1)
    # A worker that logs the queue on its job lines (this release on): its word counts, sends aside
    logged = _worker_log(_started(embed_queue=True), _finished("a.txt", queue="ocr"), _finished("b.txt", queue="embed"))
    counted = previous_embed_jobs(logged, sends, OCR)
    assert (counted.finished, counted.from_ocr_queue) == (2, 1)
    assert previous_embed_jobs(logged, [], OCR).from_ocr_queue == 1


def test_the_seeds_play_the_upgrade_from_the_hardest_release_and_the_last_one_in_turn() -> None:
    from soak.__main__ import build_parser, config_from, replay_command
    from soak.releases import LAST_RELEASE, PREVIOUS_RELEASE

    # Given the default releases (the one before schema versions, then the one this code replaces)
    args = build_parser().parse_args(["--seeds", "4", "5", "6"])
    # Then the seeds take them in turn, and a seed's replay names the release it played
    played = [config_from(args, seed, run).previous_release for run, seed in enumerate(args.seeds)]
    assert played == [PREVIOUS_RELEASE, LAST_RELEASE, PREVIOUS_RELEASE]
    assert replay_command(["--seeds", "4", "5", "--documents", "9"], 5, LAST_RELEASE) == (
        f"python -m soak --seeds 5 --previous-release {LAST_RELEASE} --documents 9"
    )
    # ... a release given replaces them, and no rolling upgrade plays none
    given = build_parser().parse_args(["--seeds", "58", "--previous-release", "59f731c"])
    assert config_from(given, 58).previous_release == "59f731c"
    assert config_from(build_parser().parse_args(["--no-rolling-upgrade"]), 1).previous_release is None
