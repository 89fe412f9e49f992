"""Answers a warm function keeps for a short while, keyed on who asked — and never served past a permission change.

The key is the question (as the index folds it), the folder, the answerer and the caller's **principals**
(their user and every group, sorted): two people see the same cached answer only when the permission filter
would be the same for both, so it would have read the same files.

A key cannot see a permission change: the search function does not read the access map (``docindex access
apply`` re-stamps the documents, docindex.ops.access), so a revoked reader's principals are the same after as
before. So an answer that cites files is kept with each cited file's version (its ETag) and served again only
when :func:`still_readable` — one ``ids`` query under the caller's own permission filter and folder — finds
every cited file readable to them at that version: a file re-stamped away from the caller, deleted, moved or
rewritten since makes the entry stale, and the answer is built afresh from what they may read now. A refusal
cites nothing and is served as kept (a file opened to the caller meanwhile is found when the entry expires,
``ANSWER_CACHE_SECONDS``). The cache holds answers only, in this process's memory.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docindex.answer.models import Answer

CacheKey = tuple[str, str, str, str, tuple[str, ...]]


@dataclass(frozen=True)
class Kept:
    """A cached answer, with the version (ETag) of each file it cites as it was quoted."""

    answer: Answer
    versions: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, answer: Answer, etags: Mapping[str, str]) -> Kept:
        cited = dict.fromkeys(c.doc_id for c in answer.citations)
        return cls(answer, tuple((doc_id, etags.get(doc_id, "")) for doc_id in cited))


def still_readable(client: Any, index: str, kept: Kept, filters: Sequence[dict[str, Any]]) -> bool:
    """Whether every file ``kept`` cites is still readable under ``filters`` (the caller's permission filter and
    folder, as the answer was built under) at the version it was quoted from: one ``ids`` query, ETags only."""
    if not kept.versions:
        return True
    ids = [doc_id for doc_id, _ in kept.versions]
    body = {
        "size": len(ids),
        "track_total_hits": False,
        "query": {"bool": {"filter": [{"ids": {"values": ids}}, *filters]}},
        "_source": ["etag"],
    }
    hits = client.search(index=index, body=body).get("hits", {}).get("hits", [])
    now = {hit["_id"]: str((hit.get("_source") or {}).get("etag") or "") for hit in hits}
    return all(doc_id in now and now[doc_id] == etag for doc_id, etag in kept.versions)


def cache_key(index: str, answerer: str, question: str, prefix: str, principals: Sequence[str]) -> CacheKey:
    """What an answer depends on: the index, the answerer, the question, the folder and who asks."""
    from docindex.text.width import normalize

    return (index, answerer, " ".join(normalize(question).split()), prefix, tuple(sorted(set(principals))))


class AnswerCache:
    """A small LRU of answers with a time to live; thread-safe."""

    def __init__(self, *, seconds: float, entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.entries = entries
        self._clock = clock
        self._kept: OrderedDict[CacheKey, tuple[float, Kept]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: CacheKey) -> Kept | None:
        if self.seconds <= 0:
            return None
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return None
            if self._clock() - found[0] > self.seconds:
                del self._kept[key]
                return None
            self._kept.move_to_end(key)
            return found[1]

    def put(self, key: CacheKey, kept: Kept) -> None:
        if self.seconds <= 0:
            return
        with self._lock:
            self._kept[key] = (self._clock(), kept)
            self._kept.move_to_end(key)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)

    def drop(self, key: CacheKey) -> None:
        with self._lock:
            self._kept.pop(key, None)
