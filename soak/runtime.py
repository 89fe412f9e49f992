"""The Lambda sandbox process itself: load the handler once, serve invocations, die when killed.

Kept apart from ``sandbox`` (the parent's side) and importing nothing of ``docindex`` or
``devkit`` at module level: a spawned sandbox imports only this module before ``serve`` runs, so
a sandbox of an older release (``RELEASE_ENV``, the soak's rolling upgrade) loads that release's
``docindex``, ``devkit`` and ``functions/`` instead of the current checkout's.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

# The checkout of an older release whose indexer this sandbox runs (unset: the current code).
RELEASE_ENV = "DOCINDEX_SOAK_RELEASE"
# Comma-separated: the guards broken on purpose, to prove the judge ("duplicates", "rereads", "resurrection").
SABOTAGE_ENV = "DOCINDEX_SOAK_SABOTAGE"
# "PROBABILITY:LOW:HIGH:SEED:GC:MARKER": hold that share of the indexer's document writes between their
# claim and their write for LOW..HIGH seconds, or, when the change is overtaken meanwhile (a delete or a
# newer change claimed in the ledger), until GC seconds after that: past the delete's tombstone
# (gc_deletes). Writes of keys containing MARKER (the workload's short-lived files) are always held, as
# long as the invocation's time allows.
WRITE_DELAY_ENV = "DOCINDEX_SOAK_WRITE_DELAY"
WRITE_DELAYED = "soak fault: document write delayed"


def _delay_writes(indexer: Any, spec: str) -> None:
    """Hold some document writes before they reach the batch's writer (and its ledger check).

    A slow extraction, a ``_bulk`` back-off or a paused process does this at
    random; the fault makes the dangerous interleaving certain whenever a
    delete follows: it watches the ledger and lets the held write go only
    after the overtaking change was claimed and its tombstone has expired.
    """
    probability, low, high, seed, gc, marker = spec.split(":", 5)
    draw = random.Random(f"{seed}:{os.getpid()}")  # noqa: S311  # fault odds, not crypto  # nosec B311
    lock = threading.Lock()
    write = indexer._write

    def delayed(change: Any, claim: Any, run: Any, doc: Any) -> Any:
        with lock:
            hold = draw.uniform(float(low), float(high)) if draw.random() < float(probability) else 0.0
        if marker and marker in change.key:
            hold = max(0.0, run.time_left() - float(gc) - 1.5)
        if not hold:
            return write(change, claim, run, doc)
        started = time.monotonic()
        overtaken = False
        while time.monotonic() - started < hold:
            entry = indexer.ledger.entries([change.doc_id]).get(change.doc_id)
            if entry is None or entry.generation > claim.generation or entry.state != "present":
                overtaken = True
                # Long enough for the delete to be written and its tombstone forgotten.
                time.sleep(min(float(gc) + 2.5, max(0.0, run.time_left() - 1.0)))
                break
            time.sleep(0.1)
        # To the log itself: the handler's stdout is captured (for its metrics) during an invocation.
        held = {"message": WRITE_DELAYED, "key": change.key, "seconds": round(time.monotonic() - started, 2)}
        os.write(1, (json.dumps({**held, "overtaken": overtaken}) + "\n").encode())
        return write(change, claim, run, doc)

    indexer._write = delayed


def serve(conn: Connection, env: dict[str, str], log_path: str) -> None:
    """The sandbox process: load the handler once, then serve invocations until told to stop."""
    # Powertools logs to the process's stdout: send them to a file, keep the pipe for results.
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = sys.stderr = open(1, "w", buffering=1, encoding="utf-8", closefd=False)  # noqa: SIM115
    os.environ.update(env)
    if env.get(RELEASE_ENV):
        # An older version of the function: its own docindex, devkit and functions/ ahead of the
        # current checkout's (nothing of either is imported yet in this process).
        root = env[RELEASE_ENV]
        release_path = [os.path.join(root, "layers", "docindex"), root]
        sys.path[:0] = release_path
        # ... and in the processes it starts (the extraction children run ``python -m docindex...``).
        os.environ["PYTHONPATH"] = os.pathsep.join([*release_path, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    from devkit.local.context import LocalLambdaContext
    from devkit.local.handlers import load_handler

    handler = load_handler("indexer")
    sabotage = set(filter(None, env.get(SABOTAGE_ENV, "").split(",")))
    if "duplicates" in sabotage:
        # Only to prove the judge: an indexer without its duplicate guards (no idempotency,
        # no check of the index before re-applying a retried change) applies every delivery.
        from docindex.ingest.indexer import get_indexer

        indexer = get_indexer()
        indexer._apply_once = indexer._apply
        indexer._resume = lambda change, claim: None  # type: ignore[method-assign]
    if env.get(WRITE_DELAY_ENV):
        from docindex.ingest.indexer import get_indexer

        _delay_writes(get_indexer(), env[WRITE_DELAY_ENV])
    if "resurrection" in sabotage:
        # Only to prove the judge: writes no longer ask the ledger whether a delete or a newer
        # change came after their claim, so a delayed create lands on a forgotten tombstone.
        from docindex.ingest.indexer import get_indexer

        indexer = get_indexer()
        indexer.ledger.still_current = set  # type: ignore[method-assign,assignment]
    if "rereads" in sabotage:
        # Only to prove the judge: an indexer that neither recognises unchanged content nor asks
        # the content cache reads, extracts and queues OCR for every re-upload, copy and rename.
        from docindex.ingest.indexer import get_indexer

        indexer = get_indexer()
        indexer._refresh_unchanged = lambda change, claim, run: None  # type: ignore[method-assign]
        indexer.cache.get = lambda content_sha256: None  # type: ignore[method-assign]
    conn.send(("ready", None, ""))
    while True:
        message = conn.recv()
        if message is None:
            return
        event, timeout = message
        captured = io.StringIO()
        error = None
        response = None
        try:
            with contextlib.redirect_stdout(captured):
                response = handler(event, LocalLambdaContext(timeout_seconds=timeout))
        except Exception as exc:  # noqa: BLE001 - a crashed invocation fails the whole batch, as in Lambda
            error = f"{type(exc).__name__}: {exc}"
        conn.send((response, error, captured.getvalue()))
