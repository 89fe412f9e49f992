"""Per-object ordering state: the newest change applied to each object.

Standard SQS neither keeps order nor delivers once, and retries reorder
further. The ledger keeps, per object, the ordering key of the newest change
applied (the S3 sequencer, or the event time when there is none) and a
``generation`` counter that grows by one with every newer change. A change is
*claimed* with one conditional ``UpdateItem``:

- newer than the ledger → claimed, ``generation`` + 1;
- the very change the ledger already holds (a retry after a failed write) →
  claimed again with the same generation, so the retry is harmless;
- older → stale: a create must not overwrite newer content or resurrect a
  deleted object, a delete must not remove a newer file.

The generation is the document's external version in OpenSearch, so even two
Lambdas racing on one object cannot let the older change's write land last.

Attempts. Every claim of a change for work counts one ``attempt`` of it, in
the claim itself (a new change starts at 1, a retry adds 1 only while the
ledger still holds that change). A change whose invocation dies (a timeout
inside a native extractor, an out-of-memory kill) never reaches an
``except``, so only a count taken before the work can see it: attempts - 1
is how many earlier tries of the change did not complete, and the indexer
quarantines the change after ``QUARANTINE_AFTER_FAILURES`` of them.
Duplicates never reach a claim, stale changes claim nothing, and a newer
change of the object starts its own count.

Real events and observations. A change without a sequencer from backfill or
``reconcile --fix`` says "the object was like this when listed at time T"
(``observed_at``). A real event (with a sequencer) is stale if an applied real
event has a newer sequencer (kept through observations), or if it certainly
happened before the last observation: its time is compared as the latest
moment it may stand for, since EventBridge gives whole seconds and S3
notifications milliseconds. Applying a create that was in fact older costs
one re-read of the current object; skipping one that was newer would lose it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from docindex.core.aws import is_conditional_check_failure
from docindex.core.changes import Action, ObjectChange
from docindex.core.exceptions import TransientError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

LEDGER_PREFIX = "object#"


@dataclass(frozen=True)
class Claim:
    """The right to apply one change, at ``generation``.

    ``failures`` counts earlier attempts of this very change that did not
    complete: they raised, or their invocation died (timeout, out of memory)
    after claiming it. Counted across SQS receives and DLQ redrives, which
    reset SQS's own receive count.
    """

    generation: int
    retry: bool = False
    failures: int = 0


@dataclass(frozen=True)
class LedgerEntry:
    """What the ledger knows about one object."""

    generation: int
    state: str  # "present" or "removed"
    event_time: str
    sequencer: str | None
    version_id: str | None
    etag: str | None
    change_key: str
    # The generation an OCR result was committed for (this entry's generation - 1).
    ocr_of: int | None = None
    # OCR attempts of the job queued at ``ocr_failures_of`` whose pool process died or failed.
    ocr_failures: int = 0
    ocr_failures_of: int | None = None
    bucket: str | None = None
    key: str | None = None

    def ocr_failures_for(self, generation: int) -> int:
        """Failed OCR attempts of the job queued at ``generation`` (0 for any other job)."""
        return self.ocr_failures if self.ocr_failures_of == generation else 0


class OcrCommit(StrEnum):
    """What ``Ledger.commit_ocr`` found."""

    COMMITTED = "committed"  # the ledger moved from the job's generation to the next one now
    ALREADY = "already"  # an earlier attempt of this job moved it; nothing changed since
    STALE = "stale"  # the object changed or was deleted after the job was queued


# Per-change failure count written by earlier versions (only after an exception);
# read while entries written before attempts were counted may still be retried.
_LEGACY_FAILURE_FIELDS = ("failing_change", "failures")


def _failures(item: Mapping[str, Any], change: ObjectChange) -> int:
    """Earlier attempts of ``change`` that did not complete, from the entry just claimed."""
    if item.get("change_key", {}).get("S") != change.dedupe_key:
        return 0
    earlier = int(item.get("attempts", {}).get("N", "1")) - 1
    if item.get("failing_change", {}).get("S") == change.dedupe_key:
        earlier = max(earlier, int(item.get("failures", {}).get("N", "0")))
    return max(0, earlier)


def _claimed_generation(item: Mapping[str, Any]) -> int:
    """The generation the entry's change was claimed at.

    After the OCR worker committed a result the entry holds the next
    generation (``ocr_of`` = the change's own): a retry of the change is
    about the generation its own document was written with.
    """
    generation = int(item["generation"]["N"])
    ocr_of = item.get("ocr_of", {}).get("N")
    if ocr_of is not None and int(ocr_of) == generation - 1:
        return int(ocr_of)
    return generation


def _entry(raw: Mapping[str, Any]) -> LedgerEntry:
    """A ledger item as DynamoDB returns it."""

    def text(name: str) -> str | None:
        value = raw.get(name)
        return value["S"] if value else None

    return LedgerEntry(
        generation=int(raw["generation"]["N"]),
        state=text("state") or "present",
        event_time=text("event_time") or "",
        sequencer=text("sequencer"),
        version_id=text("version_id"),
        etag=text("etag"),
        change_key=text("change_key") or "",
        ocr_of=int(raw["ocr_of"]["N"]) if "ocr_of" in raw else None,
        ocr_failures=int(raw["ocr_failures"]["N"]) if "ocr_failures" in raw else 0,
        ocr_failures_of=int(raw["ocr_failures_of"]["N"]) if "ocr_failures_of" in raw else None,
        bucket=text("bucket"),
        key=text("key"),
    )


def _order_condition(change: ObjectChange, values: dict[str, Any]) -> str:
    """The condition under which ``change`` is newer than what the ledger holds (adds its values)."""
    if change.sequencer:
        # Sequencers order real events exactly. Against an observation (a
        # backfill listing), the event applies unless it certainly happened
        # before it: its time may be coarse (EventBridge: whole seconds), so
        # the latest moment it may stand for is compared. Applying a create
        # that was in fact older only re-reads the current object.
        values[":until"] = {"S": change.event_time_until or change.event_time}
        condition = (
            "attribute_not_exists(id)"
            " OR ((attribute_not_exists(#sequencer) OR #sequencer < :sequencer)"
            " AND (#observed_at <= :until"
            " OR (attribute_not_exists(#observed_at) AND attribute_exists(#sequencer))"
            # entries written before observations were recorded: by time
            " OR (attribute_not_exists(#observed_at) AND attribute_not_exists(#sequencer)"
            " AND #event_time <= :until)))"
        )
    else:
        # Without a sequencer the event time orders changes. A tie (the same instant) is broken
        # the same way whatever order the changes arrive in, and conservatively: a delete wins
        # over a create of the same instant (a deleted file must never stay visible), and
        # between two versions of the same instant the content identity (ETag) decides.
        newer = "attribute_not_exists(id) OR #event_time < :event_time"
        if change.action is Action.REMOVED or change.etag:
            values[":present"] = {"S": "present"}
        if change.action is Action.REMOVED:
            tie = "#state = :present"
        elif change.etag:
            tie = "#state = :present AND (attribute_not_exists(#etag) OR #etag < :etag)"
        else:
            tie = None
        condition = f"{newer} OR (#event_time = :event_time AND {tie})" if tie else newer
    return condition


class Ledger:
    """Conditional writes on a DynamoDB table with partition key ``id``."""

    def __init__(self, dynamodb: Any, table_name: str) -> None:
        self._ddb = dynamodb
        self._table = table_name

    def _key(self, change_or_doc_id: ObjectChange | str) -> dict[str, Any]:
        doc = change_or_doc_id if isinstance(change_or_doc_id, str) else change_or_doc_id.doc_id
        return {"id": {"S": LEDGER_PREFIX + doc}}

    def claim(self, change: ObjectChange) -> Claim | None:
        """Claim ``change`` for applying; ``None`` when a newer change was applied."""
        # Every attribute goes through a name placeholder: several of them
        # (bucket, key, state) are DynamoDB reserved words.
        fields: dict[str, str | None] = {
            "event_time": change.event_time,
            "state": "removed" if change.action is Action.REMOVED else "present",
            "change_key": change.dedupe_key,
            "bucket": change.bucket,
            "key": change.key,
            "version_id": change.version_id,
            "etag": change.etag,
            # A change without a sequencer (backfill, reconcile --fix) is an observation
            # at that time; a real event supersedes it.
            "observed_at": None if change.sequencer else change.event_time,
        }
        if change.sequencer:
            # Kept through observations: a real event older than one applied stays stale.
            fields["sequencer"] = change.sequencer
        names = {"#generation": "generation", "#attempts": "attempts"}
        values: dict[str, Any] = {":one": {"N": "1"}}
        sets, removes = _assignments(fields, names, values, removed=_LEGACY_FAILURE_FIELDS)
        sets.insert(0, "#attempts = :one")  # this claim is the change's first attempt
        condition = _order_condition(change, values)
        # The change the ledger already holds is a retry (its write may have landed before
        # a crash), never a new claim: with an equal event time it would pass the time test.
        condition = f"({condition}) AND (attribute_not_exists(#change_key) OR #change_key <> :change_key)"
        update = "SET " + ", ".join(sets) + " ADD #generation :one REMOVE " + ", ".join(removes)
        try:
            response = self._ddb.update_item(
                TableName=self._table,
                Key=self._key(change),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if not is_conditional_check_failure(exc):
                raise TransientError(f"ledger update failed: {exc}") from exc
            old = exc.response.get("Item") or self._get_raw(change)
            if old and old.get("change_key", {}).get("S") == change.dedupe_key:
                return self._claim_again(change)
            return None
        item = response["Attributes"]
        return Claim(generation=int(item["generation"]["N"]), failures=_failures(item, change))

    def _claim_again(self, change: ObjectChange) -> Claim | None:
        """Claim the change the ledger holds once more, counting this attempt; ``None`` if it no longer holds it."""
        try:
            response = self._ddb.update_item(
                TableName=self._table,
                Key=self._key(change),
                UpdateExpression="ADD #attempts :one",
                ConditionExpression="#change_key = :change_key",
                ExpressionAttributeNames={"#attempts": "attempts", "#change_key": "change_key"},
                ExpressionAttributeValues={":one": {"N": "1"}, ":change_key": {"S": change.dedupe_key}},
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if not is_conditional_check_failure(exc):
                raise TransientError(f"ledger update failed: {exc}") from exc
            # A newer change was claimed in between: this one is stale now.
            return None
        item = response["Attributes"]
        return Claim(generation=_claimed_generation(item), retry=True, failures=_failures(item, change))

    def clear_attempts(self, change: ObjectChange) -> None:
        """Forget the attempts of ``change`` once it completed (a no-op when a newer change holds the entry)."""
        names = {f"#{name}": name for name in ("attempts", "change_key", *_LEGACY_FAILURE_FIELDS)}
        removes = ", ".join(f"#{name}" for name in ("attempts", *_LEGACY_FAILURE_FIELDS))
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key(change),
                UpdateExpression=f"REMOVE {removes}",
                ConditionExpression="#change_key = :change_key",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={":change_key": {"S": change.dedupe_key}},
            )
        except ClientError as exc:
            if not is_conditional_check_failure(exc):
                raise TransientError(f"ledger update failed: {exc}") from exc

    def set_state(self, change: ObjectChange, generation: int, state: str) -> bool:
        """Say whether the object is ``present`` or ``removed`` at the generation ``change`` holds.

        For a permanently deleted version (not a delete marker) of a versioned object: its
        claim says ``removed``, but an older version may be current now and is indexed at
        the same generation, which ``still_current`` allows only for a present object.
        False (nothing changed) when a newer change holds the entry.
        """
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key(change),
                UpdateExpression="SET #state = :state",
                ConditionExpression="#change_key = :change_key AND #generation = :generation",
                ExpressionAttributeNames={"#state": "state", "#change_key": "change_key", "#generation": "generation"},
                ExpressionAttributeValues={
                    ":state": {"S": state},
                    ":change_key": {"S": change.dedupe_key},
                    ":generation": {"N": str(generation)},
                },
            )
        except ClientError as exc:
            if not is_conditional_check_failure(exc):
                raise TransientError(f"ledger update failed: {exc}") from exc
            return False
        return True

    def _get_raw(self, change: ObjectChange) -> Mapping[str, Any] | None:
        try:
            item = self._ddb.get_item(TableName=self._table, Key=self._key(change), ConsistentRead=True)
        except ClientError as exc:
            raise TransientError(f"ledger read failed: {exc}") from exc
        return item.get("Item")

    def get(self, doc_id: str) -> LedgerEntry | None:
        """The ledger entry of one object (by index ``_id``), if any."""
        try:
            item = self._ddb.get_item(TableName=self._table, Key=self._key(doc_id), ConsistentRead=True)
        except ClientError as exc:
            raise TransientError(f"ledger read failed: {exc}") from exc
        raw = item.get("Item")
        return _entry(raw) if raw else None

    def entries(self, doc_ids: Iterable[str]) -> dict[str, LedgerEntry]:
        """The ledger entries of these objects (by index ``_id``), read consistently; absent ones left out."""
        entries: dict[str, LedgerEntry] = {}
        pending = [self._key(doc_id) for doc_id in sorted(set(doc_ids))]
        while pending:
            chunk, pending = pending[:100], pending[100:]
            request: dict[str, Any] = {self._table: {"Keys": chunk, "ConsistentRead": True}}
            while request:
                try:
                    response = self._ddb.batch_get_item(RequestItems=request)
                except ClientError as exc:
                    raise TransientError(f"ledger read failed: {exc}") from exc
                for raw in response.get("Responses", {}).get(self._table, []):
                    doc_id = raw["id"]["S"].removeprefix(LEDGER_PREFIX)
                    entries[doc_id] = _entry(raw)
                request = response.get("UnprocessedKeys") or {}
        return entries

    def still_current(self, writes: Sequence[tuple[str, int]]) -> set[tuple[str, int]]:
        """The ``(doc_id, generation)`` writes the ledger still allows, read consistently right now.

        A write of generation ``g`` may land only while the object is present
        and the ledger holds ``g`` (or the OCR result committed on top of it).
        Checked immediately before every write attempt, so however long a
        write was delayed after its claim (a slow extraction, a ``_bulk``
        back-off, a paused process), a delete or a newer change claimed in
        the meantime wins: the delete's OpenSearch tombstone no longer has to
        outlive the delay (``index.gc_deletes``; see docs/reliability.md).
        """
        entries = self.entries({doc_id for doc_id, _ in writes})
        allowed = set()
        for doc_id, generation in writes:
            entry = entries.get(doc_id)
            if entry is None or entry.state != "present":
                continue
            if entry.generation == generation or (entry.ocr_of == generation and entry.generation == generation + 1):
                allowed.add((doc_id, generation))
        return allowed

    def observe(
        self,
        doc_id: str,
        *,
        bucket: str,
        key: str,
        present: bool,
        at: str,
        generation: int,
        expected: int | None,
        etag: str | None = None,
        mark: str = "",
    ) -> bool:
        """Make the entry an observation of S3 at ``at`` (``docindex ledger repair``), at ``generation``.

        The entry then says what a backfill or ``reconcile --fix`` change would: the object was
        present (or gone) when S3 was asked at ``at``, so every real event from before is stale.
        Written only while the entry still holds ``expected`` (None: there is none); the OCR job's
        accumulators and the attempt count belong to generations that are over and go.
        False when the entry changed meanwhile.
        """
        fields = {
            "state": "present" if present else "removed",
            "event_time": at,
            "observed_at": at,
            "change_key": "\x1f".join(["docindex:ledger-repair", bucket, key, at]),
            "bucket": bucket,
            "key": key,
            "etag": etag if present else None,
            "repaired": mark or None,
        }
        names = {"#generation": "generation"}
        values: dict[str, Any] = {":generation": {"N": str(generation)}}
        gone = ("version_id", "attempts", "ocr_of", "ocr_at", "ocr_failures", "ocr_failures_of", "ocr_ranges")
        sets, removes = _assignments(fields, names, values, removed=(*gone, "ocr_ranges_of", *_LEGACY_FAILURE_FIELDS))
        sets.insert(0, "#generation = :generation")
        if expected is None:
            condition = "attribute_not_exists(id)"
        else:
            condition = "#generation = :expected"
            values[":expected"] = {"N": str(expected)}
        update = "SET " + ", ".join(sets) + " REMOVE " + ", ".join(removes)
        return (
            self._update_if(
                doc_id,
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            is not None
        )

    def present_entries(self, bucket: str, *, prefix: str = "", unless_marked: str = "") -> Iterator[LedgerEntry]:
        """Every entry of ``bucket`` (keys under ``prefix``) that says present, not marked ``unless_marked``.

        A scan of the whole table, for ``docindex ledger repair``: entries of objects that are
        neither listed nor indexed any more.
        """
        names = {"#state": "state", "#bucket": "bucket"}
        values: dict[str, Any] = {
            ":prefix": {"S": LEDGER_PREFIX},
            ":present": {"S": "present"},
            ":bucket": {"S": bucket},
        }
        condition = "begins_with(id, :prefix) AND #state = :present AND #bucket = :bucket"
        if prefix:
            condition += " AND begins_with(#key, :key_prefix)"
            names["#key"] = "key"
            values[":key_prefix"] = {"S": prefix}
        if unless_marked:
            condition += " AND (attribute_not_exists(#repaired) OR #repaired <> :mark)"
            names["#repaired"] = "repaired"
            values[":mark"] = {"S": unless_marked}
        request: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        while True:
            try:
                page = self._ddb.scan(**request)
            except ClientError as exc:
                raise TransientError(f"ledger scan failed: {exc}") from exc
            for raw in page.get("Items", []):
                yield _entry(raw)
            if not page.get("LastEvaluatedKey"):
                return
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _update_if(self, doc_id: str, **request: Any) -> Mapping[str, Any] | None:
        """One conditional ``UpdateItem`` on the object's item; None when its condition does not hold."""
        try:
            response: Mapping[str, Any] = self._ddb.update_item(TableName=self._table, Key=self._key(doc_id), **request)
        except ClientError as exc:
            if not is_conditional_check_failure(exc):
                raise TransientError(f"ledger update failed: {exc}") from exc
            return None
        return response

    def record_ocr_failure(self, doc_id: str, generation: int) -> int | None:
        """Count one failed OCR attempt of the job queued at ``generation``; the count, or None when stale.

        The worker's side of the indexer's quarantine, on the same ledger item: an attempt whose
        pool process was killed (out of memory) or died counts here, a newer change of the object
        (a new generation) starts from zero, and after ``WORKER_QUARANTINE_AFTER_FAILURES`` the
        job is finished as ``failed`` instead of being tried again.
        """
        counted = self._add_for_generation(doc_id, generation, "ocr_failures", "ocr_failures_of", {"N": "1"})
        return None if counted is None else int(counted["N"])

    def add_ocr_range(self, doc_id: str, generation: int, first_page: int) -> list[int] | None:
        """Record that the range starting at ``first_page`` of the job at ``generation`` is stored.

        A number set, so a retried or duplicated range counts once; returns the first pages of
        the ranges of this generation recorded so far, in order (the job that sees all of them
        assembles the document), or None when the object has changed since (the ranges are stale).
        """
        ranges = self._add_for_generation(doc_id, generation, "ocr_ranges", "ocr_ranges_of", {"NS": [str(first_page)]})
        return None if ranges is None else sorted(int(first) for first in ranges["NS"])

    def _add_for_generation(
        self, doc_id: str, generation: int, attribute: str, owner: str, value: dict[str, Any]
    ) -> dict[str, Any] | None:
        """``ADD value`` to ``attribute``, kept for the job at ``generation`` (named in ``owner``).

        The first addition of a generation replaces what an older job left; a newer change of the
        object (another generation, or a removal) makes it stale: None. Returns the attribute's
        new DynamoDB value.
        """
        names = {"#generation": "generation", "#state": "state", "#a": attribute, "#of": owner}
        values = {":generation": {"N": str(generation)}, ":present": {"S": "present"}, ":value": value}
        current = "#generation = :generation AND #state = :present"
        for _ in range(2):
            added = self._update_if(
                doc_id,
                UpdateExpression="ADD #a :value",
                ConditionExpression=f"{current} AND #of = :generation",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                # ALL_NEW, not UPDATED_NEW: adding a number already in the set (a range recorded
                # again) changes nothing, and an "updated attributes" answer may then leave it out.
                ReturnValues="ALL_NEW",
            )
            if added is not None:
                return dict(added["Attributes"][attribute])
            # The first addition of this generation: it starts here (unless another one just did).
            started = self._update_if(
                doc_id,
                UpdateExpression="SET #a = :value, #of = :generation",
                ConditionExpression=f"{current} AND (attribute_not_exists(#of) OR #of <> :generation)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            if started is not None:
                return value
            entry = self.get(doc_id)
            if entry is None or entry.state != "present" or entry.generation != generation:
                return None
        raise TransientError(f"the ledger's {attribute} kept changing; retrying the job")

    def commit_ocr(self, doc_id: str, generation: int, *, when: str) -> OcrCommit:
        """Take the next generation for the OCR result of the job queued at ``generation``.

        Succeeds only while the ledger still holds ``generation`` for a present
        object: any newer change (or a delete) has bumped it, and then the job
        is stale. ``ocr_of`` records which job took the new generation, so a
        retry of the same job after a crash recognizes its own commit.
        """
        names = {"#generation": "generation", "#state": "state", "#ocr_of": "ocr_of", "#ocr_at": "ocr_at"}
        values = {
            ":generation": {"N": str(generation)},
            ":next": {"N": str(generation + 1)},
            ":present": {"S": "present"},
            ":when": {"S": when},
        }
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key=self._key(doc_id),
                UpdateExpression="SET #generation = :next, #ocr_of = :generation, #ocr_at = :when",
                ConditionExpression="#generation = :generation AND #state = :present",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if not is_conditional_check_failure(exc):
                raise TransientError(f"ledger update failed: {exc}") from exc
            old = exc.response.get("Item")
            current: int | None
            ocr_of: int | None
            if old:
                current, ocr_of = int(old["generation"]["N"]), int(old["ocr_of"]["N"]) if "ocr_of" in old else None
            else:
                entry = self.get(doc_id)
                current, ocr_of = (entry.generation, entry.ocr_of) if entry else (None, None)
            if current == generation + 1 and ocr_of == generation:
                return OcrCommit.ALREADY
            return OcrCommit.STALE
        return OcrCommit.COMMITTED


def _assignments(
    fields: dict[str, str | None], names: dict[str, str], values: dict[str, Any], *, removed: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """An update's SET clauses (the fields with a value) and REMOVE clauses (the others, and ``removed``).

    Fills ``names`` and ``values`` with what the clauses refer to.
    """
    sets: list[str] = []
    removes: list[str] = []
    for name, value in fields.items():
        names[f"#{name}"] = name
        if value:
            values[f":{name}"] = {"S": value}
            sets.append(f"#{name} = :{name}")
        else:
            removes.append(f"#{name}")
    for name in removed:
        names[f"#{name}"] = name
        removes.append(f"#{name}")
    return sets, removes
