"""Coalescing ``_bulk`` writer shared by the records of one invocation.

Records are processed concurrently (one thread each). Every record hands its
index/delete action to this writer and waits for *its own* item result, so a
rejected document fails only its own SQS record. A single background thread
sends the actions as ``_bulk`` requests (opensearch-py's ``streaming_bulk``),
size-bounded (``BULK_MAX_BYTES``, under the 10 MiB smallest managed instances
accept). A request goes out as soon as every active record is waiting on the
writer, when the size bounds are reached, or once its first action has
lingered ``BULK_LINGER_SECONDS``. A submitting thread may give its work slot
up while it waits (``waiting``), unless a full request's worth of bytes is
already queued: the documents held in memory stay bounded.

Retries: 429 and 5xx (whole request or single items) and connection errors
are retried with exponential backoff and jitter while the invocation has time
left; then the record fails with ``TransientError`` and SQS redelivers it.
A 409 version conflict means a newer generation is already indexed.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from docindex.core.exceptions import IndexRejectedError, TransientError
from docindex.core.observability import Metric, count, logger

if TYPE_CHECKING:
    from opensearchpy import OpenSearch


class WriteOutcome(StrEnum):
    WRITTEN = "written"
    CONFLICT = "conflict"  # the index already holds this or a newer generation
    NOT_FOUND = "not_found"  # delete of a document that is not there


RETRYABLE_STATUS = {429, 500, 502, 503, 504}


@dataclass
class _Pending:
    action: dict[str, Any]
    nbytes: int
    future: Future[WriteOutcome] = field(default_factory=Future)
    enqueued: float = field(default_factory=time.monotonic)
    attempts: int = 0


def _status(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None  # "N/A": connection error, timeout


class AliasGuard:
    """Writes go through an alias (``<name>`` names ``<name>-vN``): once a write has shown that, every
    later write requires it (``require_alias``).

    Without it, a write to an index deleted by mistake would create a new index of that name on the
    fly, without the mapping (a cluster's default), and every later write and search would use that
    one. With it, the write fails (``index_not_found_exception``), ``on_missing`` lets the writer's
    process create the index again (with its mapping) before its next writes, and the change is
    retried. A name that is a concrete index, not an alias, is written as before.
    """

    def __init__(self, name: str, on_missing: Callable[[], bool] | None = None) -> None:
        self.name = name
        self.required = False
        self._on_missing = on_missing

    def seen(self, concrete: object) -> None:
        """A write landed in ``concrete``: the name is an alias when that is another index."""
        if isinstance(concrete, str) and concrete and concrete != self.name:
            self.required = True

    def params(self) -> dict[str, str]:
        return {"require_alias": "true"} if self.required else {}

    @staticmethod
    def is_missing(error: object) -> bool:
        """Whether a write's error says the index (the alias) does not exist."""
        text = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False, default=str)
        return "index_not_found_exception" in text

    def missing(self) -> bool:
        """The index is gone: have it created again; whether it exists now (the write may be retried)."""
        return self._on_missing() if self._on_missing is not None else False

    def error(self) -> TransientError:
        return TransientError(f"index {self.name} does not exist (deleted?): it is created again, the change retried")


class BulkWriter:
    """Thread-safe; use as a context manager around one batch."""

    def __init__(
        self,
        client: OpenSearch,
        index: str,
        *,
        max_bytes: int = 9 * 1024 * 1024,
        max_actions: int = 500,
        linger_seconds: float = 0.05,
        time_left: Callable[[], float] | None = None,
        backoff_base: float = 0.2,
        backoff_cap: float = 5.0,
        refresh: bool | str = False,
        still_current: Callable[[Sequence[tuple[str, int]]], set[tuple[str, int]]] | None = None,
        waiting: Callable[[], AbstractContextManager[None]] | None = None,
        alias_guard: AliasGuard | None = None,
    ) -> None:
        self._client = client
        self._alias = alias_guard
        # Asked before every request (retries too) which index writes may still land: a write whose
        # change was overtaken (a delete, a newer version) is dropped as a CONFLICT, not sent.
        self._still_current = still_current
        self._index = index
        self._max_bytes = max_bytes
        self._max_actions = max_actions
        self._linger = linger_seconds
        self._time_left = time_left or (lambda: 60.0)
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._refresh = refresh
        self._waiting = waiting
        self._cond = threading.Condition()
        self._pending: list[_Pending] = []
        self._in_flight = 0
        self._queued_bytes = 0  # pending and in flight
        self._participants = 0
        self._counted = threading.local()
        self._closed = False
        self._thread: threading.Thread | None = None
        self.requests_sent = 0
        self.actions_sent = 0

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self) -> BulkWriter:
        self._thread = threading.Thread(target=self._run, name="bulk-writer", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread:
            self._thread.join()

    @contextmanager
    def participant(self) -> Iterator[None]:
        """Mark the calling thread as one that may still submit actions."""
        with self._cond:
            self._participants += 1
        self._counted.value = True
        try:
            yield
        finally:
            self._leave()

    def _leave(self) -> None:
        """The calling thread will add nothing more (its write was answered, or it is done)."""
        if getattr(self._counted, "value", False):
            self._counted.value = False
            with self._cond:
                self._participants -= 1
                self._cond.notify_all()

    # -- submitting --------------------------------------------------------

    def index(self, doc_id: str, version: int, source: dict[str, Any]) -> WriteOutcome:
        """Index ``source`` as ``doc_id`` at external ``version``; blocks until done."""
        body = json.dumps(source, ensure_ascii=False, separators=(",", ":"))
        action = {
            "_op_type": "index",
            "_index": self._index,
            "_id": doc_id,
            "version": version,
            "version_type": "external_gte",
            "_source": body,
        }
        return self._submit(action, len(body.encode()) + 200)

    def delete(self, doc_id: str, version: int) -> WriteOutcome:
        """Delete ``doc_id`` unless the index holds a newer generation; blocks until done."""
        action = {
            "_op_type": "delete",
            "_index": self._index,
            "_id": doc_id,
            "version": version,
            "version_type": "external_gte",
        }
        return self._submit(action, 200)

    def _submit(self, action: dict[str, Any], nbytes: int) -> WriteOutcome:
        if self._thread is None:
            raise RuntimeError("BulkWriter used outside its context manager")
        pending = _Pending(action, nbytes)
        with self._cond:
            if self._closed:
                raise RuntimeError("BulkWriter is closed")
            self._pending.append(pending)
            self._queued_bytes += nbytes
            # Past a full request and the next one queued, a waiting record keeps its slot.
            give_up_slot = self._waiting is not None and self._queued_bytes <= 2 * self._max_bytes
            self._cond.notify_all()
        try:
            if give_up_slot and self._waiting is not None:
                with self._waiting():
                    return pending.future.result()
            return pending.future.result()
        finally:
            # Answered: this record's thread no longer counts as one that may add to a request,
            # so the last request of an invocation is not held back by records finishing up.
            self._leave()

    # -- the sender thread -------------------------------------------------

    def _ready(self, now: float) -> bool:
        if not self._pending:
            return False
        if self._closed:
            return True
        if len(self._pending) + self._in_flight >= self._participants:
            return True  # nobody else can add to this request
        if len(self._pending) >= self._max_actions:
            return True
        if sum(p.nbytes for p in self._pending) >= self._max_bytes:
            return True
        return now - self._pending[0].enqueued >= self._linger

    def _take(self) -> list[_Pending]:
        batch: list[_Pending] = []
        size = 0
        while self._pending and len(batch) < self._max_actions:
            nxt = self._pending[0]
            if batch and size + nxt.nbytes > self._max_bytes:
                break
            batch.append(self._pending.pop(0))
            size += nxt.nbytes
        return batch

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    now = time.monotonic()
                    if self._ready(now):
                        break
                    if self._closed and not self._pending:
                        return
                    timeout = None
                    if self._pending:
                        timeout = max(0.0, self._linger - (now - self._pending[0].enqueued))
                    self._cond.wait(timeout)
                batch = self._take()
                self._in_flight += len(batch)
            try:
                self._send_with_retries(batch)
            except Exception as exc:  # noqa: BLE001 - never leave a waiting record hanging
                for p in batch:
                    if not p.future.done():
                        p.future.set_exception(TransientError(f"bulk writer failed: {exc}"))
            finally:
                with self._cond:
                    self._in_flight -= len(batch)
                    self._queued_bytes -= sum(p.nbytes for p in batch)
                    self._cond.notify_all()

    def _send_with_retries(self, batch: list[_Pending]) -> None:
        todo = batch
        attempt = 0
        while todo:
            retry = self._send_once(todo)
            if not retry:
                return
            attempt += 1
            delay = min(self._backoff_cap, self._backoff_base * (2 ** (attempt - 1)))
            delay = delay / 2 + random.uniform(0, delay / 2)  # noqa: S311  # jitter, not crypto  # nosec B311
            # Keep a margin so the record can still be reported as failed
            # before the invocation ends.
            if self._time_left() - delay < 2.0:
                for p, reason in retry:
                    p.future.set_exception(TransientError(f"OpenSearch bulk retries exhausted: {reason}"))
                return
            count(Metric.BULK_RETRIES, len(retry))
            logger.warning(
                "retrying bulk items", extra={"items": len(retry), "delay_s": round(delay, 3), "attempt": attempt}
            )
            time.sleep(delay)
            todo = [p for p, _ in retry]

    def _send_once(self, batch: list[_Pending]) -> list[tuple[_Pending, str]]:
        """Send one request; resolve final items, return the ones to retry."""
        from opensearchpy import helpers

        batch = self._drop_overtaken(batch)
        if not batch:
            return []
        self.requests_sent += 1
        self.actions_sent += len(batch)
        by_id: dict[tuple[str, str], list[_Pending]] = {}
        for p in batch:
            by_id.setdefault((p.action["_op_type"], p.action["_id"]), []).append(p)
        results = helpers.streaming_bulk(
            self._client,
            (p.action for p in batch),
            # POST /{index}/_bulk, not /_bulk: the roles grant _bulk on the index alone.
            index=self._index,
            chunk_size=len(batch) + 1,
            max_chunk_bytes=self._max_bytes * 2,  # already chunked by _take
            raise_on_error=False,
            raise_on_exception=False,
            max_retries=0,
            yield_ok=True,
            refresh=self._refresh,
            params=self._alias.params() if self._alias else None,
        )
        retry: list[tuple[_Pending, str]] = []
        for position, (ok, item) in enumerate(results):
            op_type, info = next(iter(item.items()))
            # Results come back in request order; fall back to the id when
            # the helper reports in a different shape.
            pending = batch[position] if position < len(batch) else by_id[(op_type, info.get("_id"))][0]
            status = _status(info.get("status"))
            if ok:
                if self._alias is not None:
                    self._alias.seen(info.get("_index"))
                pending.future.set_result(WriteOutcome.WRITTEN)
                continue
            error = info.get("error")
            reason = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False)[:500]
            if status == 404 and op_type != "delete" and self._alias is not None and AliasGuard.is_missing(error):
                # Created again with its mapping: the write is retried now; otherwise the change is.
                if self._alias.missing():
                    retry.append((pending, "the index was gone and is created again"))
                else:
                    pending.future.set_exception(self._alias.error())
            elif status == 409:
                pending.future.set_result(WriteOutcome.CONFLICT)
            elif status == 404 and op_type == "delete":
                pending.future.set_result(WriteOutcome.NOT_FOUND)
            elif status is None or status in RETRYABLE_STATUS:
                retry.append((pending, f"{status or 'connection'}: {reason[:200]}"))
            else:
                pending.future.set_exception(IndexRejectedError(f"{status}: {reason}"))
        return retry

    def _drop_overtaken(self, batch: list[_Pending]) -> list[_Pending]:
        """The actions that may still be sent; overtaken index writes resolve as CONFLICT."""
        if self._still_current is None:
            return batch
        writes = [(p.action["_id"], int(p.action["version"])) for p in batch if p.action["_op_type"] == "index"]
        if not writes:
            return batch
        allowed = self._still_current(writes)
        kept = []
        for p in batch:
            if p.action["_op_type"] == "index" and (p.action["_id"], int(p.action["version"])) not in allowed:
                count(Metric.OVERTAKEN_WRITES_DROPPED)
                logger.info("write dropped: its change was overtaken before it was sent", extra={"id": p.action["_id"]})
                p.future.set_result(WriteOutcome.CONFLICT)
            else:
                kept.append(p)
        return kept
