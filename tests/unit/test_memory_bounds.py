"""The byte budget for object bodies held at once."""

from __future__ import annotations

import threading
import time

from devkit.local.context import LocalLambdaContext
from docindex.core.storage import ByteBudget
from docindex.ingest.invocation import body_budget_bytes

MiB = 1024 * 1024


def test_budget_is_a_quarter_of_the_function_memory() -> None:
    assert body_budget_bytes(LocalLambdaContext(memory_limit_in_mb=1536)) == 384 * MiB
    assert body_budget_bytes(LocalLambdaContext(memory_limit_in_mb=10240)) == 2560 * MiB
    # Without a memory size (an unusual context), the template's default is assumed.
    assert body_budget_bytes(object()) == 384 * MiB


def test_a_reader_waits_until_its_bytes_fit() -> None:
    # Given a budget of 100 bytes, 70 of them held
    budget = ByteBudget(100)
    budget.acquire(70)
    got = threading.Event()

    def reader() -> None:
        budget.acquire(50)
        got.set()

    thread = threading.Thread(target=reader)
    thread.start()
    # Then a reader wanting 50 more waits...
    assert not got.wait(0.2)
    # ...until the first body is released
    budget.release(70)
    assert got.wait(5)
    thread.join()
    assert budget.used == 50
    assert budget.peak == 70


def test_a_body_larger_than_the_budget_is_read_alone() -> None:
    budget = ByteBudget(100)
    # Nothing held: a 500-byte body gets in (it cannot ever fit, and must not wait forever)
    assert budget.acquire(500) == 500
    second = threading.Thread(target=budget.acquire, args=(10,))
    second.start()
    time.sleep(0.1)
    assert second.is_alive()  # everything else waits for it
    budget.release(500)
    second.join(5)
    assert not second.is_alive()
    assert budget.used == 10


def test_overdraw_never_blocks() -> None:
    budget = ByteBudget(100)
    budget.acquire(90)
    # A reader that holds a reservation and learns its object is bigger tops up at once.
    assert budget.overdraw(50) == 50
    assert budget.used == 140
    budget.release(140)
    assert budget.used == 0
