"""Rebuild the index with the current analysis, switch to it with no downtime, roll back, clean up.

The pipeline writes through the alias (``documents``), which points at one
write index. ``reindex`` creates ``<alias>-v{N+1}`` with the current settings
(``docindex.index.mapping``: normalization, vocabulary, tiers) and then:

1. **copy** every document of the current index into the new one, each at its
   own external version (``version_type: external``), while the pipeline keeps
   writing to the current index;
2. **switch** the alias in one atomic ``_aliases`` request: the new index
   becomes the write index, the old one leaves the alias (kept for rollback);
3. **settle**: wait until requests sent before the switch have landed;
4. **catch up**: copy again what was written to the old index since the copy
   began (``indexed_at`` from then, minus a margin for clock skew and delayed
   writes), but only a document the ordering ledger still holds at that
   generation: a delete or a newer change applied since wins, even after its
   OpenSearch tombstone is gone (``index.gc_deletes``);
5. **deletes**: a document of the new index that the old one no longer has,
   and that the ledger says was removed, was deleted after its copy: it is
   deleted at the ledger's generation (``external_gte``, so a newer re-creation
   is never removed).

External versions make every step idempotent and order-proof: a copy never
replaces a newer write, whichever lands first. ``rollback`` runs steps 2–5 the
other way, to the index the current one was built from; ``cleanup`` deletes
the versions no longer behind the alias.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from docindex.core.exceptions import ReindexError
from docindex.core.observability import logger
from docindex.index.documents import DERIVED_FIELDS, with_variants
from docindex.index.mapping import create_index

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from docindex.embed import VectorSpec
    from docindex.index.vocabulary import Vocabulary
    from docindex.ingest.ledger import Ledger

# Requests sent before the switch finish within the client timeout (OPENSEARCH_TIMEOUT_SECONDS, 30 s).
DEFAULT_SETTLE_SECONDS = 45.0
# A document's indexed_at is taken when it is built: its write may come later (bulk back-off, a
# slow extraction up to the Lambda timeout, the worker's retries) and clocks differ.
CATCH_UP_MARGIN = timedelta(minutes=30)
PAGE = 500

Progress = Callable[[str, int], None]


@dataclass
class Switch:
    """What one reindex or rollback did."""

    alias: str
    source: str
    target: str
    analysis: str | None = None
    copied: int = 0
    caught_up: int = 0
    skipped_stale: int = 0  # catch-up copies the ledger refused (deleted or newer since)
    deleted: int = 0
    started_at: str = ""
    switched_at: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def versions(client: OpenSearch, alias: str) -> dict[int, str]:
    """The ``<alias>-v<N>`` indices that exist, by N."""
    pattern = re.compile(rf"^{re.escape(alias)}-v(\d+)$")
    found = client.indices.get(index=f"{alias}-v*", ignore_unavailable=True, allow_no_indices=True) or {}
    return {int(m.group(1)): name for name in found if (m := pattern.match(name))}


def write_index(client: OpenSearch, alias: str) -> str:
    """The index the alias writes to; ReindexError when ``alias`` is not an alias."""
    from opensearchpy.exceptions import NotFoundError

    try:
        aliases = client.indices.get_alias(name=alias)
    except NotFoundError:
        raise ReindexError(
            f"{alias!r} is not an alias (a concrete index of that name, or nothing): the pipeline must write "
            f"through an alias; see docs/search.md#reindex"
        ) from None
    behind = list(aliases)
    for name, body in aliases.items():
        if body.get("aliases", {}).get(alias, {}).get("is_write_index"):
            return name
    if len(behind) == 1:
        return behind[0]
    raise ReindexError(f"alias {alias!r} points at {sorted(behind)} and none is its write index")


def _meta(client: OpenSearch, index: str) -> dict[str, Any]:
    mapping = client.indices.get_mapping(index=index).get(index, {}).get("mappings", {})
    return dict(mapping.get("_meta", {}).get("docindex", {}))


def _properties(client: OpenSearch, index: str) -> dict[str, Any]:
    mapping = client.indices.get_mapping(index=index).get(index, {}).get("mappings", {})
    return dict(mapping.get("properties", {}))


def _set_meta(client: OpenSearch, index: str, **values: Any) -> None:
    meta = {**_meta(client, index), **values}
    client.indices.put_mapping(index=index, body={"_meta": {"docindex": meta}})


def reindex(
    client: OpenSearch,
    alias: str,
    ledger: Ledger,
    *,
    vocabulary: Vocabulary | None = None,
    settle_seconds: float = DEFAULT_SETTLE_SECONDS,
    progress: Progress | None = None,
    after_copy: Callable[[], None] | None = None,
    vectors: VectorSpec | None = None,
) -> Switch:
    """Build ``<alias>-v{N+1}`` with the current settings and move the alias to it (steps 1–5).

    ``vectors``: the new index gets meaning search's fields for that model (an index created before
    them gets them this way; the copied documents keep the vectors they have, and ``docindex
    reprocess --missing-vectors`` queues the rest).
    """
    source = write_index(client, alias)
    existing = versions(client, alias)
    number = max(existing, default=0) + 1
    target = f"{alias}-v{number}"
    started = _now()
    result = Switch(alias=alias, source=source, target=target, started_at=_iso(started))
    result.analysis = create_index(
        client,
        target,
        vocabulary=vocabulary,
        meta={"reindexed_from": source, "started_at": result.started_at},
        vectors=vectors,
    )
    if result.analysis is None:
        raise ReindexError(f"{target} already exists: another reindex is running, or clean up first")
    logger.info("reindex: copying", extra={"source": source, "target": target, "analysis": result.analysis})
    result.copied = _copy(client, source, target, query={"match_all": {}}, ledger=None, progress=progress)
    if after_copy is not None:
        after_copy()
    _switch_and_catch_up(client, result, since=started, ledger=ledger, settle_seconds=settle_seconds, progress=progress)
    return result


def rollback(
    client: OpenSearch,
    alias: str,
    ledger: Ledger,
    *,
    settle_seconds: float = DEFAULT_SETTLE_SECONDS,
    progress: Progress | None = None,
) -> Switch:
    """Move the alias back to the index the current one was built from, with what was written since."""
    current = write_index(client, alias)
    meta = _meta(client, current)
    previous = meta.get("reindexed_from")
    if not previous:
        raise ReindexError(f"{current} was not built by `docindex reindex`: nothing to roll back to")
    if not client.indices.exists(index=previous):
        raise ReindexError(f"{previous} (what {current} was built from) no longer exists (cleaned up)")
    since = datetime.fromisoformat(str(meta.get("switched_at") or meta.get("started_at")).replace("Z", "+00:00"))
    result = Switch(alias=alias, source=current, target=previous, started_at=_iso(_now()))
    result.analysis = _meta(client, previous).get("analysis")
    _switch_and_catch_up(client, result, since=since, ledger=ledger, settle_seconds=settle_seconds, progress=progress)
    return result


def cleanup(client: OpenSearch, alias: str) -> list[str]:
    """Delete the ``<alias>-v<N>`` indices the alias no longer points at; their names."""
    behind = set(client.indices.get_alias(name=alias)) if client.indices.exists_alias(name=alias) else set()
    if not behind:
        raise ReindexError(f"{alias!r} is not an alias: nothing is known to be unused")
    deleted = []
    for _, name in sorted(versions(client, alias).items()):
        if name not in behind:
            client.indices.delete(index=name)
            deleted.append(name)
    return deleted


def _switch_and_catch_up(
    client: OpenSearch,
    result: Switch,
    *,
    since: datetime,
    ledger: Ledger,
    settle_seconds: float,
    progress: Progress | None,
) -> None:
    source, target, alias = result.source, result.target, result.alias
    client.indices.update_aliases(
        body={
            "actions": [
                {"remove": {"index": source, "alias": alias}},
                {"add": {"index": target, "alias": alias, "is_write_index": True}},
            ]
        }
    )
    result.switched_at = _iso(_now())
    logger.info("reindex: alias switched", extra={"alias": alias, "from": source, "to": target})
    _set_meta(client, target, switched_at=result.switched_at)
    if settle_seconds > 0:
        time.sleep(settle_seconds)
    changed = {"range": {"indexed_at": {"gte": _iso(since - CATCH_UP_MARGIN)}}}
    counts: dict[str, int] = {}
    result.caught_up = _copy(client, source, target, query=changed, ledger=ledger, progress=progress, counts=counts)
    result.skipped_stale = counts.get("stale", 0)
    result.deleted = _propagate_deletes(client, source, target, ledger, progress=progress)


def _scan(
    client: OpenSearch, index: str, query: dict[str, Any], *, source: bool = True
) -> Iterator[list[dict[str, Any]]]:
    """Pages of hits (with ``_version``) of ``query`` in ``index``."""
    from opensearchpy import helpers

    client.indices.refresh(index=index)
    body = {"query": query, "version": True, "_source": source}
    page: list[dict[str, Any]] = []
    for hit in helpers.scan(client, index=index, query=body, size=PAGE, scroll="5m", preserve_order=False):
        page.append(hit)
        if len(page) >= PAGE:
            yield page
            page = []
    if page:
        yield page


def _copy(
    client: OpenSearch,
    source: str,
    target: str,
    *,
    query: dict[str, Any],
    ledger: Ledger | None,
    progress: Progress | None,
    counts: dict[str, int] | None = None,
) -> int:
    """Copy the documents of ``query`` at their external versions; the number written.

    With ``ledger``, a document is copied only if the ledger still holds it at
    that version (or has no entry for it: not a pipeline document).
    """
    from opensearchpy import helpers

    written = 0
    counts = counts if counts is not None else {}
    # A rollback target built before spelling variants or name search has no field for them: nothing to fold.
    properties = _properties(client, target)
    derived = tuple(name for name in DERIVED_FIELDS if name in properties)
    for hits in _scan(client, source, query):
        page = hits
        if ledger is not None:
            entries = ledger.entries(hit["_id"] for hit in page)
            allowed = ledger.still_current(
                [(hit["_id"], int(hit["_version"])) for hit in page if hit["_id"] in entries]
            )
            kept = [h for h in page if h["_id"] not in entries or (h["_id"], int(h["_version"])) in allowed]
            counts["stale"] = counts.get("stale", 0) + len(page) - len(kept)
            page = kept
        actions = [
            {
                "_op_type": "index",
                "_index": target,
                "_id": hit["_id"],
                # `variants`, `names` and `name_order` are not stored: derived again here, as writers do
                "_source": with_variants(hit["_source"], derived),
                "version": int(hit["_version"]),
                "version_type": "external",
            }
            for hit in page
        ]
        for ok, item in helpers.streaming_bulk(
            client, actions, raise_on_error=False, raise_on_exception=True, max_retries=5, chunk_size=PAGE
        ):
            status = int(item.get("index", {}).get("status", 0))
            if ok:
                written += 1
            elif status != 409:  # 409: the target already holds this version or a newer one
                raise ReindexError(f"copying into {target} failed: {item}")
        if progress:
            progress("copy" if ledger is None else "catch-up", written)
    client.indices.refresh(index=target)
    return written


def _propagate_deletes(
    client: OpenSearch, source: str, target: str, ledger: Ledger, *, progress: Progress | None
) -> int:
    """Delete from ``target`` what ``source`` lost after the copy and the ledger says was removed."""
    from opensearchpy import helpers

    deleted = 0
    for page in _scan(client, target, {"match_all": {}}, source=False):
        found = client.mget(index=source, body={"ids": [h["_id"] for h in page]}, _source=False)["docs"]
        missing = {d["_id"] for d in found if not d.get("found")}
        if not missing:
            continue
        entries = ledger.entries(missing)
        actions = []
        for hit in page:
            entry = entries.get(hit["_id"])
            if hit["_id"] not in missing or entry is None or entry.state != "removed":
                continue
            if entry.generation >= int(hit["_version"]):
                delete = {"_op_type": "delete", "_index": target, "_id": hit["_id"], "version": entry.generation}
                actions.append({**delete, "version_type": "external_gte"})
        for ok, item in helpers.streaming_bulk(client, actions, raise_on_error=False, max_retries=5):
            status = int(item.get("delete", {}).get("status", 0))
            if ok:
                deleted += 1
            elif status not in (404, 409):
                raise ReindexError(f"deleting from {target} failed: {item}")
        if progress:
            progress("deletes", deleted)
    client.indices.refresh(index=target)
    return deleted
