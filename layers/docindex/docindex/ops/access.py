"""Re-stamp the indexed documents after an access map change, without re-extracting.

Why not ``_update_by_query`` or partial ``_update``: both bump the document's
*internal* version, and docindex's versions are external (the ordering
ledger's generation). A bumped version would make the next legitimate write
of that generation look stale (409) and be lost. So each changed document is
written again whole, at the version it already has, with
``version_type=external_gte``:

- a newer write that lands first (a higher generation) wins: ours gets 409
  and is skipped; that writer stamped the document itself, from the map it
  had loaded (see the settle pass below);
- a document deleted meanwhile is not resurrected: the ordering ledger is
  asked (``still_current``, consistent reads) immediately before each bulk
  request, as the OCR worker does before its commit;
- only the access fields change: the rest of the source is what was read.

Nothing is visible in between that should not be: the first pass stamps
every changed document with the *restrictive* combination of its old and new
grant (allowed by both, denied by either); only then does the second pass
write the new grant. While the passes run, a document is readable by at most
the principals both maps allow. Writers (indexer, OCR worker) read the map
again within ``ACCESS_MAP_TTL_SECONDS``; a write from a writer still holding
the old map is caught by the settle pass, run after that TTL.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from docindex.access.policy import AccessGrant, AccessMap
from docindex.core.observability import logger
from docindex.index.documents import IndexDocument
from docindex.index.mapping import ensure_added_fields

PAGE_SIZE = 500
ACCESS_FIELDS = ["bucket", "key", "allow_principals", "deny_principals"]

StillCurrent = Callable[[Sequence[tuple[str, int]]], set[tuple[str, int]]]


@dataclass
class PassReport:
    name: str
    scanned: int = 0
    changed: int = 0
    written: int = 0
    overtaken: int = 0  # a newer write (or a delete) came first: its writer stamped it
    failed: int = 0


@dataclass
class RestampReport:
    map_version: str
    passes: list[PassReport] = field(default_factory=list)

    @property
    def written(self) -> int:
        return sum(p.written for p in self.passes)

    def to_dict(self) -> dict[str, Any]:
        return {"map_version": self.map_version, "passes": [vars(p) for p in self.passes]}


def _stamped(source: dict[str, Any]) -> AccessGrant | None:
    if "allow_principals" not in source and "deny_principals" not in source:
        return None
    return AccessGrant(
        allow=tuple(sorted(source.get("allow_principals") or ())),
        deny=tuple(sorted(source.get("deny_principals") or ())),
    )


def _scan(client: Any, index: str) -> Iterator[list[dict[str, Any]]]:
    """Every document's key and stamp, a page at a time, in (bucket, key) order."""
    after: list[Any] | None = None
    while True:
        body: dict[str, Any] = {
            "size": PAGE_SIZE,
            "query": {"match_all": {}},
            "_source": ACCESS_FIELDS,
            "sort": [{"bucket": "asc"}, {"key": "asc"}],
        }
        if after is not None:
            body["search_after"] = after
        hits = client.search(index=index, body=body)["hits"]["hits"]
        if not hits:
            return
        yield hits
        after = hits[-1]["sort"]


class Restamper:
    """Brings every document's stamp to what ``access_map`` grants."""

    def __init__(self, client: Any, index: str, access_map: AccessMap, *, still_current: StillCurrent | None) -> None:
        self.client = client
        self.index = index
        self.map = access_map
        self.still_current = still_current

    def run(self, *, settle_seconds: float = 0.0, sleep: Callable[[float], None] = time.sleep) -> RestampReport:
        """The restrictive pass, the final pass, and (after ``settle_seconds``) the settle pass."""
        ensure_added_fields(self.client, self.index)
        report = RestampReport(map_version=self.map.version)
        report.passes.append(self.run_pass("restrictive", restrictive=True))
        report.passes.append(self.run_pass("final", restrictive=False))
        if settle_seconds > 0:
            sleep(settle_seconds)
            report.passes.append(self.run_pass("settle", restrictive=False))
        return report

    def run_pass(self, name: str, *, restrictive: bool) -> PassReport:
        result = PassReport(name)
        for hits in _scan(self.client, self.index):
            wanted: dict[str, AccessGrant] = {}
            for hit in hits:
                result.scanned += 1
                source = hit.get("_source") or {}
                target = self.map.grant(str(source.get("bucket", "")), str(source.get("key", "")))
                old = _stamped(source)
                if old == target:
                    continue
                # An unstamped document is visible to nobody yet: it can take the new grant at once.
                stamp = old.restrictive_with(target) if (restrictive and old is not None) else target
                if stamp != old:
                    wanted[hit["_id"]] = stamp
            if wanted:
                result.changed += len(wanted)
                self._write(wanted, result)
        if result.changed:
            self.client.indices.refresh(index=self.index)
        logger.info(
            "access re-stamp pass done", extra={"pass": name, **{k: v for k, v in vars(result).items() if k != "name"}}
        )
        return result

    def _write(self, wanted: dict[str, AccessGrant], result: PassReport) -> None:
        found = self.client.mget(index=self.index, body={"ids": list(wanted)})["docs"]
        current = {d["_id"]: d for d in found if d.get("found")}
        writes = [(doc_id, int(doc["_version"])) for doc_id, doc in current.items()]
        result.overtaken += len(wanted) - len(current)
        if self.still_current is not None and writes:
            allowed = self.still_current(writes)
            result.overtaken += len(writes) - len(allowed)
            writes = [w for w in writes if w in allowed]
        if not writes:
            return
        lines: list[dict[str, Any]] = []
        for doc_id, version in writes:
            document = IndexDocument.from_source(current[doc_id]["_source"]).with_access(wanted[doc_id])
            lines.append(
                {"index": {"_index": self.index, "_id": doc_id, "version": version, "version_type": "external_gte"}}
            )
            lines.append(document.source())
        response = self.client.bulk(body=lines)
        for item in response.get("items", []):
            status = int(next(iter(item.values())).get("status", 500))
            if status < 300:
                result.written += 1
            elif status == 409:
                result.overtaken += 1
            else:
                result.failed += 1


def publish_map(uri: str, text: str, s3: Any) -> None:
    """Store the map (canonical JSON) where the writers read it: S3, or a file for the local run."""
    if uri.startswith("s3://"):
        from docindex.access.source import split_s3_uri

        bucket, key = split_s3_uri(uri)
        s3.put_object(Bucket=bucket, Key=key, Body=text.encode(), ContentType="application/json")
        return
    from pathlib import Path

    path = Path(uri.removeprefix("file://"))
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
