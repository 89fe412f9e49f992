"""WorkSlots: how many records of an invocation work at once, and the slot a waiting record gives up."""

from __future__ import annotations

import threading

from docindex.ingest.batch import WorkSlots


def test_no_more_than_n_threads_hold_a_slot() -> None:
    slots = WorkSlots(2)
    inside = 0
    most = 0
    lock = threading.Lock()
    release = threading.Event()
    two_in = threading.Event()

    def work() -> None:
        nonlocal inside, most
        with slots.hold():
            with lock:
                inside += 1
                most = max(most, inside)
                if inside == 2:
                    two_in.set()
            release.wait(10)
            with lock:
                inside -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    assert two_in.wait(10)
    release.set()
    for t in threads:
        t.join(10)
    assert most == 2


def test_a_waiting_thread_lets_another_work_and_takes_a_slot_back_after() -> None:
    slots = WorkSlots(1)
    waiting = threading.Event()
    answer = threading.Event()
    other_worked = threading.Event()
    order: list[str] = []

    def writer_record() -> None:
        with slots.hold():
            with slots.waiting():
                waiting.set()
                answer.wait(10)  # its _bulk result
            order.append("first finished")

    def other_record() -> None:
        waiting.wait(10)
        with slots.hold():
            order.append("other worked")
            other_worked.set()

    first = threading.Thread(target=writer_record)
    second = threading.Thread(target=other_record)
    first.start()
    second.start()
    # The only slot was given up while the first record waited: the second one got it.
    assert other_worked.wait(10)
    answer.set()
    first.join(10)
    second.join(10)
    assert order == ["other worked", "first finished"]


def test_waiting_without_a_slot_changes_nothing() -> None:
    slots = WorkSlots(1)
    with slots.waiting():
        pass
    with slots.hold():  # the one slot is still there, not released twice
        acquired = slots._free.acquire(blocking=False)
    assert not acquired
