"""The one write path to the index, for the indexer and the OCR worker alike.

- :meth:`DocumentStore.ensure` creates the index (with its mapping and alias)
  once per process: the first write must never auto-create an index without
  the mapping.
- every write is stamped with who may read the file (``access``: the access
  map's grant for its key), so the search API's permission filter holds for
  the indexer's and the OCR worker's documents alike.
- :meth:`DocumentStore.current` reads the indexed document's external
  version (the ledger's generation) and source.
- :meth:`DocumentStore.write` writes an :class:`IndexDocument` at an external
  version (``external_gte``): through the invocation's coalescing ``_bulk``
  writer when one is given (the indexer), else as a single request (the OCR
  worker). A document OpenSearch refuses for itself (mapping, size) is written
  again by name and metadata with ``extraction_error: index_rejected``, so the
  file stays findable; a second refusal fails the change.

Throttling, 5xx and connection errors are retried with backoff and jitter
within a time budget, then become ``TransientError`` (the message comes back).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from docindex.core.exceptions import IndexRejectedError, TransientError
from docindex.core.observability import Metric, count, logger
from docindex.index.bulk import RETRYABLE_STATUS, AliasGuard, WriteOutcome
from docindex.index.mapping import ensure_added_fields, ensure_index

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from docindex.access.source import AccessMapSource
    from docindex.embed import VectorSpec
    from docindex.index.bulk import BulkWriter
    from docindex.index.documents import IndexDocument

T = TypeVar("T")

# How long a single-request call keeps retrying before the job is handed back to its queue.
DEFAULT_RETRY_SECONDS = 120.0
# A document id no writer uses (theirs are SHA-256 hex): read to learn where the index name leads.
PROBE_ID = "docindex-alias-probe"


class DocumentStore:
    """The index as the pipeline reads and writes it; one per process, safe to share between threads."""

    def __init__(
        self,
        client: OpenSearch,
        index: str,
        *,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
        access: AccessMapSource | None = None,
        vectors: VectorSpec | None = None,
    ) -> None:
        self.client = client
        self.index = index
        # The vector field a new index gets (meaning search); None: keyword search only.
        self.vectors = vectors
        self.retry_seconds = retry_seconds
        # None: documents are written unstamped (no signed-in user sees them; tests of other concerns).
        self.access = access
        self._ready = False
        self._lock = threading.Lock()
        # Writes require the alias once one has shown it (an index deleted by mistake is never
        # recreated on the fly without its mapping); a missing index is created again (ensure).
        self.alias_guard = AliasGuard(index, on_missing=self._recreate)
        self._may_create = False  # ensure(create=True) was asked: this process may create the index

    def ensure(self, *, retry_seconds: float | None = None, create: bool = True) -> None:
        """Create the index unless it exists, once per process.

        ``create=False`` (the OCR worker, whose role may not create indices) only checks that
        it exists: an OCR job is queued after the indexer wrote its pending document, so the
        index was there; if it is gone (an operator rebuilding it), the job waits for the
        indexer to create it again (``TransientError``).
        """
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            if create:
                self._may_create = True
                self._retrying(lambda: ensure_index(self.client, self.index, vectors=self.vectors), retry_seconds)
                # The indexer (not the worker, whose role may not change mappings) adds new fields.
                self._retrying(lambda: ensure_added_fields(self.client, self.index), retry_seconds)
            if not self._retrying(self._probe, retry_seconds):
                raise TransientError(f"index {self.index} does not exist (the indexer creates it)")
            self._ready = True

    def _probe(self) -> bool:
        """Whether the index exists; when its name is an alias, every write requires the alias from now on.

        A process that has not written yet must not create an index by writing to a name deleted meanwhile
        (a worker started before an operator deleted the index: its first write would make an index without
        the mapping, and every later write and search would use it). One GET of a document no one has (the
        role's own ``_doc`` reads) answers with the concrete index the name leads to.
        """
        found = self.client.get(index=self.index, id=PROBE_ID, ignore=[404])
        if not isinstance(found, dict) or AliasGuard.is_missing(found.get("error") or ""):
            return False
        self.alias_guard.seen(found.get("_index"))
        return True

    def forget(self) -> None:
        """The index is gone (deleted, the domain replaced): the next ``ensure`` checks, or creates it, again."""
        with self._lock:
            self._ready = False
        logger.warning("the index is gone; it is created again before the next writes", extra={"index": self.index})

    def _recreate(self) -> bool:
        """A write found the index gone: create it again now if this process may (the indexer)."""
        self.forget()
        if not self._may_create:
            return False
        try:
            self.ensure(retry_seconds=0, create=True)
        except Exception as exc:  # noqa: BLE001 - the change is retried instead
            logger.warning("could not create the index again", extra={"error": str(exc)})
            return False
        return True

    def current(
        self, doc_id: str, *, fields: list[str] | None = None, retry_seconds: float | None = None
    ) -> tuple[int, dict[str, Any]] | None:
        """The indexed document's external version and source (or ``fields`` of it); None when absent."""
        from opensearchpy.exceptions import NotFoundError, TransportError

        def get() -> dict[str, Any] | None:
            kwargs: dict[str, Any] = {"_source_includes": fields} if fields is not None else {}
            try:
                # 404 is an answer here (asked for every create), not a failure to log.
                return cast("dict[str, Any]", self.client.get(index=self.index, id=doc_id, ignore=[404], **kwargs))
            except NotFoundError:
                return None

        try:
            found = self._retrying(get, retry_seconds)
        except TransportError as exc:
            raise TransientError(f"reading the indexed document failed: {exc}") from exc
        if isinstance(found, dict) and AliasGuard.is_missing(found.get("error") or ""):
            # The index is gone: the indexer creates it again (nothing is in it yet); a worker waits for that
            # rather than write (a write would create an index without the mapping).
            if self.alias_guard.missing():
                return None
            raise self.alias_guard.error()
        if isinstance(found, dict):
            self.alias_guard.seen(found.get("_index"))
        if not found or not found.get("found"):
            return None
        return int(found.get("_version", 0)), dict(found.get("_source") or {})

    def write(
        self,
        doc_id: str,
        version: int,
        document: IndexDocument,
        *,
        bulk: BulkWriter | None = None,
        still_current: Callable[[], bool] | None = None,
    ) -> WriteOutcome:
        """Index ``document`` at external ``version``; ``CONFLICT`` when a newer one is indexed.

        ``still_current`` (single requests; a bulk writer has its own) is asked before every
        attempt: a write whose change was overtaken meanwhile is dropped as a ``CONFLICT``.
        """
        if self.access is not None:
            document = document.with_access(self.access.grant(document.bucket, document.key))
        try:
            return self._index(doc_id, version, document.source(), bulk, still_current)
        except IndexRejectedError as exc:
            logger.warning("document rejected by OpenSearch; indexing metadata only", extra={"error": str(exc)})
            count(Metric.EXTRACTION_FAILURES)
            return self._index(doc_id, version, document.without_content().source(), bulk, still_current)

    def _index(
        self,
        doc_id: str,
        version: int,
        source: dict[str, Any],
        bulk: BulkWriter | None,
        still_current: Callable[[], bool] | None,
    ) -> WriteOutcome:
        if bulk is not None:
            return bulk.index(doc_id, version, source)
        from opensearchpy.client.utils import _make_path
        from opensearchpy.exceptions import ConflictError, NotFoundError, RequestError

        class Overtaken(Exception):
            pass

        def index() -> Any:
            if still_current is not None and not still_current():
                raise Overtaken
            # POST /{index}/_doc/{id}, not opensearch-py's PUT: the worker's role holds no
            # es:ESHttpPut at all (only the indexer creates the index; docs/security.md).
            return self.client.transport.perform_request(
                "POST",
                _make_path(self.index, "_doc", doc_id),
                params={"version": version, "version_type": "external_gte", **self.alias_guard.params()},
                body=source,
            )

        try:
            response = self._retrying(index)
        except NotFoundError as exc:
            if AliasGuard.is_missing(exc.info or str(exc)):
                self.alias_guard.missing()
                raise self.alias_guard.error() from exc
            raise
        except Overtaken:
            count(Metric.OVERTAKEN_WRITES_DROPPED)
            logger.info("write dropped: its change was overtaken before it was sent", extra={"id": doc_id})
            return WriteOutcome.CONFLICT
        except ConflictError:
            return WriteOutcome.CONFLICT
        except RequestError as exc:
            raise IndexRejectedError(str(exc)) from exc
        if isinstance(response, dict):
            self.alias_guard.seen(response.get("_index"))
        return WriteOutcome.WRITTEN

    def _retrying(self, operation: Callable[[], T], retry_seconds: float | None = None) -> T:
        """Run an OpenSearch call, retrying throttling, 5xx and connection errors with backoff."""
        from opensearchpy.exceptions import ConnectionError as OSConnectionError
        from opensearchpy.exceptions import TransportError

        budget = self.retry_seconds if retry_seconds is None else retry_seconds
        give_up = time.monotonic() + budget
        attempt = 0
        while True:
            try:
                return operation()
            except TransportError as exc:
                status = exc.status_code if isinstance(exc.status_code, int) else None
                retryable = isinstance(exc, OSConnectionError) or status in RETRYABLE_STATUS
                if not retryable:
                    raise
                attempt += 1
                delay = min(10.0, 0.2 * 2**attempt)
                delay = delay / 2 + random.uniform(0, delay / 2)  # noqa: S311  # jitter, not crypto  # nosec B311
                if time.monotonic() + delay > give_up:
                    raise TransientError(f"OpenSearch unavailable: {exc}") from exc
                logger.warning("OpenSearch call failed; retrying", extra={"status": status, "attempt": attempt})
                time.sleep(delay)
