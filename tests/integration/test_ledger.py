"""The ordering ledger on DynamoDB (moto server): which changes may be applied."""

from __future__ import annotations

from docindex.core.changes import Action, ObjectChange, normalize_sequencer, normalize_time
from docindex.ingest.ledger import Ledger
from tests.conftest import Stack


def change(action: Action = Action.CREATED, *, seq: str | None = None, time: str = "2026-11-20T09:00:00Z", **kw):
    return ObjectChange(
        bucket="b",
        key="k/報告.txt",
        action=action,
        event_time=normalize_time(time),
        sequencer=normalize_sequencer(seq),
        **kw,
    )


def ledger(stack: Stack) -> Ledger:
    return Ledger(stack.aws.dynamodb, stack.env["LEDGER_TABLE"])


def test_newer_changes_claim_increasing_generations(stack: Stack) -> None:
    led = ledger(stack)
    first = led.claim(change(seq="00A1"))
    second = led.claim(change(Action.REMOVED, seq="00A2"))
    third = led.claim(change(seq="00A2F"))
    assert [c.generation for c in (first, second, third) if c] == [1, 2, 3]


def test_older_change_is_stale(stack: Stack) -> None:
    led = ledger(stack)
    assert led.claim(change(seq="00B2"))
    assert led.claim(change(Action.REMOVED, seq="00B1")) is None
    # A shorter sequencer is right-padded: 00B2 == 00B200 < 00B201
    assert led.claim(change(seq="00B201")) is not None


def test_retry_of_the_same_change_reuses_its_generation(stack: Stack) -> None:
    led = ledger(stack)
    first = led.claim(change(seq="00C1"))
    again = led.claim(change(seq="00C1"))
    assert first is not None
    assert again is not None
    assert (again.generation, again.retry) == (first.generation, True)


def test_without_sequencer_event_time_orders(stack: Stack) -> None:
    led = ledger(stack)
    assert led.claim(change(time="2026-11-20T09:00:02Z", etag="e2"))
    assert led.claim(change(Action.REMOVED, time="2026-11-20T09:00:01Z")) is None
    assert led.claim(change(Action.REMOVED, time="2026-11-20T09:00:03Z")) is not None
    entry = led.get(change().doc_id)
    assert entry is not None
    assert entry.state == "removed"


def test_backfill_after_a_real_event_compares_by_time(stack: Stack) -> None:
    led = ledger(stack)
    # A real event with a sequencer at 09:00:05 ...
    assert led.claim(change(seq="00D1", time="2026-11-20T09:00:05Z"))
    # ... beats a backfill that listed the object earlier, loses to one that listed it later
    assert led.claim(change(time="2026-11-20T09:00:04Z")) is None
    assert led.claim(change(time="2026-11-20T09:00:06Z")) is not None
    # and once the backfill is applied, a late real event from before it is stale
    assert led.claim(change(Action.REMOVED, seq="00D2", time="2026-11-20T09:00:05.5Z")) is None


def test_retry_of_a_change_without_sequencer_reuses_its_generation(stack: Stack) -> None:
    # A backfill (or emulator) change failed or crashed after its claim and comes back:
    # the very same change, so the same generation, not a new one (which would write it twice)
    led = ledger(stack)
    first = led.claim(change(time="2026-11-20T09:00:01Z", etag="e1"))
    again = led.claim(change(time="2026-11-20T09:00:01Z", etag="e1"))
    assert first is not None
    assert again is not None
    assert (again.generation, again.retry) == (first.generation, True)
    # a different change at the same time still orders after it
    other = led.claim(change(time="2026-11-20T09:00:01Z", etag="e2"))
    assert other is not None
    assert (other.generation, other.retry) == (first.generation + 1, False)


def test_retry_after_the_ocr_result_was_committed_gets_the_changes_own_generation(stack: Stack) -> None:
    # The change handed its document to OCR at generation g; the worker committed g+1.
    led = ledger(stack)
    first = led.claim(change(seq="00E1"))
    assert first is not None
    assert led.commit_ocr(change().doc_id, first.generation, when="2026-11-20T09:01:00Z").value == "committed"
    # When the change itself comes back (its invocation died before recording it as done)
    again = led.claim(change(seq="00E1"))
    # Then it is recognised with the generation it was applied at, not the OCR result's
    assert again is not None
    assert (again.generation, again.retry) == (first.generation, True)


def test_a_coarse_event_time_counts_as_late_as_it_may_be_against_a_backfill(stack: Stack) -> None:
    from docindex.core.changes import time_until

    def eventbridge_change(seq: str, time: str) -> ObjectChange:
        return change(seq=seq, time=time, event_time_until=time_until(time))

    led = ledger(stack)
    assert led.claim(change(seq="00C1", time="2026-11-20T09:00:01Z"))
    # A backfill listed the object at 09:00:05.4
    assert led.claim(change(time="2026-11-20T09:00:05.400000Z"))
    # An EventBridge event of 09:00:04 happened before the listing: the backfill read its result
    assert led.claim(eventbridge_change("00C2", "2026-11-20T09:00:04Z")) is None
    # One of 09:00:05 may have happened after it: applied
    assert led.claim(eventbridge_change("00C3", "2026-11-20T09:00:05Z")) is not None
    # ... and an older real event stays stale by its sequencer, whatever its time
    assert led.claim(eventbridge_change("00C25", "2026-11-20T09:00:09Z")) is None


def test_a_page_range_recorded_again_counts_once_and_still_answers(stack: Stack) -> None:
    # A range job retried after it recorded its pages (its next step failed) records them again:
    # the set is unchanged, and the answer must still list every range landed (the rolling-upgrade
    # soak found this failing every retry until the job was dead-lettered).
    led = ledger(stack)
    claimed = led.claim(change(seq="00F1"))
    assert claimed is not None
    doc = change().doc_id
    assert led.add_ocr_range(doc, claimed.generation, 0) == [0]
    assert led.add_ocr_range(doc, claimed.generation, 25) == [0, 25]
    assert led.add_ocr_range(doc, claimed.generation, 25) == [0, 25]
    assert led.record_ocr_failure(doc, claimed.generation) == 1
    assert led.record_ocr_failure(doc, claimed.generation) == 2
    # ... and a newer change makes the ranges of the old generation stale
    assert led.claim(change(seq="00F2")) is not None
    assert led.add_ocr_range(doc, claimed.generation, 50) is None


def test_concurrent_claims_of_one_object_never_share_a_generation(stack: Stack) -> None:
    """DynamoDB applies each conditional write atomically; the local one must too (devkit.local.motoserver).

    The soak found two Lambdas' claims of two changes of one new object (the same instant, two ETags) both
    given generation 1 — both had seen no entry: moto applied the conditional updates side by side."""
    from concurrent.futures import ThreadPoolExecutor

    led = ledger(stack)
    clashes = []
    for round_ in range(30):
        changes = [
            ObjectChange(
                bucket="b",
                key=f"k/同時{round_}.txt",
                action=Action.CREATED,
                event_time=normalize_time("2026-11-20T09:00:00Z"),
                etag=f"{i:032x}",
            )
            for i in range(6)
        ]
        with ThreadPoolExecutor(len(changes)) as pool:
            claims = [c for c in pool.map(led.claim, changes) if c is not None]
        generations = [c.generation for c in claims]
        if len(set(generations)) != len(generations):
            clashes.append(sorted(generations))
    # Then every claim that was granted holds a generation of its own
    assert clashes == []
