"""Repair the ordering ledger after it was restored to an earlier point in time (DynamoDB PITR).

A ledger restored to a point R forgets every change after R. Left so, it would

- hand out generations the index has used already: a newer change's write is refused as a version
  conflict (409) and silently lost;
- judge a late event newer than what it knows although the index holds a newer version of the
  object: an older version written over a newer one;
- still say "present" for a file deleted after R: a late create of it brings it back.

The index and the bucket still know what R forgot. Every document carries the generation it was
written at (its version), and the listing says what exists now. So the repair, run while the
pipeline is paused (``docindex pause``: consumers stopped, producers not), walks the bucket listing
and the bucket's documents (reconcile's merge) with the ledger's entries beside them, and makes each
entry at least as new as the index and an *observation* of S3 at the listing's time (S3's clock):

- generation ``max(ledger, document version)``: the next change claims one above anything written;
- present when the object is listed; removed when it is not and a ``HeadObject`` confirms it gone
  (dated like reconcile's removals, before S3's answer);
- an observation makes every real event from before it stale, so the events queued while the
  pipeline was paused cannot undo what the index holds, and a real event after it wins.

A second pass over the ledger's own items finds entries of objects that are neither listed nor
indexed any more (deleted after R) and still say present, and marks them removed (confirmed gone
the same way). What the repair cannot judge — a document older than its object, or missing — is
re-read from S3 by ``docindex reconcile --against-ledger --fix`` afterwards, like any difference.
An entry already as new as its document and in the right state is not written.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from docindex.core.changes import doc_id, is_excluded
from docindex.ingest.ledger import Ledger, LedgerEntry
from docindex.ops.reconcile import (
    LEDGER_BATCH,
    Difference,
    Kind,
    Matched,
    Removal,
    bucket_and_index,
    confirm_gone,
    merge,
)


@dataclass
class RepairReport:
    bucket: str
    prefix: str
    run_id: str
    objects: int = 0
    documents: int = 0
    entries_checked: int = 0
    raised: int = 0  # generation raised to the document's version (the ledger had forgotten writes)
    created: int = 0  # entries the restored ledger did not have
    marked_removed: int = 0  # objects gone, whose entry still said present
    marked_present: int = 0  # objects listed, whose entry said removed
    unchanged: int = 0
    changed_meanwhile: int = 0  # the entry moved while the repair read it (the pipeline was not paused)
    unconfirmed: int = 0  # objects not listed whose absence S3 did not confirm quickly: left as they are
    excluded: int = 0
    seconds: float = 0.0

    @property
    def written(self) -> int:
        return self.raised + self.created + self.marked_removed + self.marked_present

    def to_dict(self) -> dict[str, Any]:
        return {
            "bucket": self.bucket,
            "prefix": self.prefix,
            "run_id": self.run_id,
            "objects": self.objects,
            "documents": self.documents,
            "entries_checked": self.entries_checked,
            "written": self.written,
            "raised": self.raised,
            "created": self.created,
            "marked_removed": self.marked_removed,
            "marked_present": self.marked_present,
            "unchanged": self.unchanged,
            "changed_meanwhile": self.changed_meanwhile,
            "unconfirmed": self.unconfirmed,
            "excluded": self.excluded,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class _Seen:
    """One object or document of the merge: what S3 and the index say about it."""

    key: str
    observed_at: str
    listed: bool
    etag: str | None
    version: int | None  # the document's, None without one


class LedgerRepair:
    """Runs the two passes; ``run()`` returns what it found and wrote."""

    def __init__(
        self,
        *,
        s3: Any,
        opensearch: Any,
        ledger: Ledger,
        bucket: str,
        index: str,
        prefix: str = "",
        page_size: int = 1000,
        exclude_globs: tuple[str, ...] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.s3 = s3
        self.opensearch = opensearch
        self.ledger = ledger
        self.bucket = bucket
        self.index = index
        self.prefix = prefix
        self.page_size = page_size
        self.exclude_globs = exclude_globs
        self.on_progress = on_progress

    def run(self) -> RepairReport:
        started = time.monotonic()
        report = RepairReport(self.bucket, self.prefix, run_id=uuid.uuid4().hex[:12])
        walk = bucket_and_index(
            self.s3,
            self.opensearch,
            self.index,
            self.bucket,
            prefix=self.prefix,
            page_size=self.page_size,
            tally=report,
        )
        batch: list[_Seen] = []
        with walk as (counted_pages, docs):
            for item in merge(counted_pages, docs, matched=True):
                seen = _seen(item)
                if seen is None:
                    continue
                if is_excluded(seen.key, globs=self.exclude_globs):
                    report.excluded += 1
                    continue
                batch.append(seen)
                if len(batch) == LEDGER_BATCH:
                    self._repair(report, batch)
                    batch = []
            self._repair(report, batch)
        self._forgotten_deletes(report)
        report.seconds = time.monotonic() - started
        return report

    def _repair(self, report: RepairReport, batch: list[_Seen]) -> None:
        if not batch:
            return
        entries = self.ledger.entries(doc_id(self.bucket, seen.key) for seen in batch)
        for seen in batch:
            report.entries_checked += 1
            self._one(report, seen, entries.get(doc_id(self.bucket, seen.key)))
        if self.on_progress:
            self.on_progress(report.objects, report.written)

    def _one(self, report: RepairReport, seen: _Seen, entry: LedgerEntry | None) -> None:
        at = seen.observed_at
        if not seen.listed:
            gone_at, outcome = confirm_gone(self.s3, self.bucket, seen.key)
            if outcome is not Removal.GONE or gone_at is None:
                # Back since the listing (its create is queued, and newer), or not confirmed in time.
                report.unconfirmed += outcome is Removal.UNCONFIRMED
                report.unchanged += outcome is Removal.REAPPEARED
                return
            at = gone_at
        generation = max(entry.generation if entry else 0, seen.version or 0)
        state = "present" if seen.listed else "removed"
        if entry is not None and entry.generation >= generation and entry.state == state:
            report.unchanged += 1
            return
        written = self.ledger.observe(
            doc_id(self.bucket, seen.key),
            bucket=self.bucket,
            key=seen.key,
            present=seen.listed,
            at=at,
            generation=generation,
            expected=entry.generation if entry else None,
            etag=seen.etag,
            mark=report.run_id,
        )
        if not written:
            report.changed_meanwhile += 1
        elif entry is None:
            report.created += 1
        elif entry.state != state:
            if seen.listed:
                report.marked_present += 1
            else:
                report.marked_removed += 1
        else:
            report.raised += 1

    def _forgotten_deletes(self, report: RepairReport) -> None:
        """Entries still saying present for objects neither listed nor indexed: deleted after R."""
        for entry in self.ledger.present_entries(self.bucket, prefix=self.prefix, unless_marked=report.run_id):
            if entry.key is None or is_excluded(entry.key, globs=self.exclude_globs):
                continue
            report.entries_checked += 1
            gone_at, outcome = confirm_gone(self.s3, self.bucket, entry.key)
            if outcome is Removal.REAPPEARED:
                report.unchanged += 1
                continue
            if gone_at is None:
                report.unconfirmed += 1
                continue
            written = self.ledger.observe(
                doc_id(self.bucket, entry.key),
                bucket=self.bucket,
                key=entry.key,
                present=False,
                at=gone_at,
                generation=entry.generation,
                expected=entry.generation,
                mark=report.run_id,
            )
            if written:
                report.marked_removed += 1
            else:
                report.changed_meanwhile += 1


def _seen(item: Difference | Matched | None) -> _Seen | None:
    if isinstance(item, Matched):
        return _Seen(item.key, item.observed_at, True, item.etag, item.version)
    if isinstance(item, Difference):
        listed = item.kind is not Kind.ORPHANED
        etag = item.s3_etag if listed else None
        return _Seen(item.key, item.observed_at, listed, etag, item.index_version)
    return None
