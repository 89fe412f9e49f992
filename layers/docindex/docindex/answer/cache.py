"""Answers a warm function keeps for a short while, keyed on who asked: never one caller's answer for another.

The key is the question (as the index folds it), the folder, the answerer and the caller's **principals**
(their user and every group, sorted): two people see the same cached answer only when the permission filter
would be the same for both, so it would have read the same files. An entry lives ``ANSWER_CACHE_SECONDS``
(60 s): an access-map change reaches answers within that (``docindex access apply`` settles for longer).
The cache holds answers only (quotes of files the key's principals may read), in this process's memory.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from docindex.answer.models import Answer

CacheKey = tuple[str, str, str, str, tuple[str, ...]]


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
        self._kept: OrderedDict[CacheKey, tuple[float, Answer]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: CacheKey) -> Answer | None:
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

    def put(self, key: CacheKey, answer: Answer) -> None:
        if self.seconds <= 0:
            return
        with self._lock:
            self._kept[key] = (self._clock(), answer)
            self._kept.move_to_end(key)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)
