"""The OCR worker's settings and lease bookkeeping (no servers)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from docindex.core.exceptions import SettingsError
from docindex.worker.config import WorkerSettings
from docindex.worker.leases import Lease, LeaseState
from docindex.worker.locks import lock_seconds

BASE = {
    "OPENSEARCH_ENDPOINT": "http://127.0.0.1:9200",
    "IDEMPOTENCY_TABLE": "idem",
    "OCR_QUEUE_URL": "http://127.0.0.1:5000/123456789012/ocr",
}


def test_defaults_follow_the_contract() -> None:
    settings = WorkerSettings.from_env(BASE)
    assert settings.ocr_languages == "jpn+eng"
    assert settings.ocr_dpi == 300
    assert settings.heartbeat_seconds == 30
    assert settings.lease_seconds == 90  # each beat extends by three intervals
    assert settings.shutdown_grace_seconds == 100  # below ECS's maximum stopTimeout of 120 s
    assert settings.wait_seconds == 20
    assert settings.concurrency >= 1
    assert settings.max_object_bytes == 20 * 1024**3
    assert settings.max_in_memory_bytes == 256 * 1024**2  # what a pool process holds of a non-OCR file
    assert settings.common.opensearch_index == "documents"
    options = settings.ocr_options()
    assert (options.languages, options.dpi, options.min_text_chars) == ("jpn+eng", 300, 16)


def test_environment_overrides() -> None:
    settings = WorkerSettings.from_env(
        {
            **BASE,
            "OCR_LANGUAGES": "jpn",
            "OCR_DPI": "400",
            "OCR_VERTICAL": "never",
            "WORKER_CONCURRENCY": "3",
            "WORKER_HEARTBEAT_SECONDS": "1",
        }
    )
    assert (settings.ocr_languages, settings.ocr_dpi, settings.ocr_vertical) == ("jpn", 400, "never")
    assert settings.concurrency == 3
    assert settings.lease_seconds == 3


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OCR_QUEUE_URL", ""),
        ("OCR_DPI", "20"),
        ("OCR_LANGUAGES", "jpn; rm -rf /"),
        ("WORKER_HEARTBEAT_SECONDS", "0"),
        ("WORKER_CONCURRENCY", "0"),
        ("WORKER_JOB_TIMEOUT_SECONDS", str(12 * 3600)),
        ("WORKER_MAX_IN_MEMORY_BYTES", "65536"),
    ],
)
def test_invalid_settings_are_refused_with_the_variable_name(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        WorkerSettings.from_env({**BASE, name: value})


def test_missing_queue_url_is_refused() -> None:
    env = {k: v for k, v in BASE.items() if k != "OCR_QUEUE_URL"}
    with pytest.raises(SettingsError, match="OCR_QUEUE_URL"):
        WorkerSettings.from_env(env)


def test_idempotency_lock_expires_before_the_message_reappears() -> None:
    assert lock_seconds(90) == 89
    assert lock_seconds(3) == 2


def message(receive_count: int = 1) -> dict[str, object]:
    return {
        "MessageId": "m-1",
        "ReceiptHandle": "rh-1",
        "Body": "{}",
        "Attributes": {"ApproximateReceiveCount": str(receive_count)},
    }


def test_lease_commit_needs_time_left_and_excludes_release() -> None:
    now = time.monotonic()
    lease = Lease(message(), lease_seconds=9, received_at=now)
    assert lease.usable(margin=3)
    assert not lease.usable(margin=10)
    assert lease.begin_commit(margin=3)
    # A committing job keeps its message at shutdown: releasing it now could let two writers race.
    assert lease.release() is False
    assert lease.state is LeaseState.COMMITTING
    lease.finish()
    assert lease.state is LeaseState.DONE


def test_released_or_lost_lease_cannot_commit() -> None:
    now = time.monotonic()
    released = Lease(message(), lease_seconds=9, received_at=now)
    assert released.release()
    assert not released.begin_commit(margin=0)
    lost = Lease(message(), lease_seconds=9, received_at=now)
    assert lost.lose("ReceiptHandleIsInvalid")
    assert not lost.begin_commit(margin=0)
    assert not lost.usable(margin=0)
    expired = Lease(message(), lease_seconds=1, received_at=now - 5)
    assert not expired.begin_commit(margin=0)


def test_extension_moves_the_end_forward_only() -> None:
    now = time.monotonic()
    lease = Lease(message(receive_count=3), lease_seconds=3, received_at=now)
    lease.extended(now + 30)
    assert lease.visible_at == pytest.approx(now + 30)
    lease.extended(now + 10)
    assert lease.visible_at == pytest.approx(now + 30)
    assert lease.receive_count == 3


def test_cpu_quota_of_the_container_caps_the_default_concurrency(tmp_path: Path) -> None:
    from docindex.worker.config import _cgroup_cpu_quota

    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert _cgroup_cpu_quota(str(tmp_path)) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert _cgroup_cpu_quota(str(tmp_path)) is None
    assert _cgroup_cpu_quota(str(tmp_path / "missing")) is None


def test_pool_recovers_after_a_process_dies() -> None:
    import os
    from concurrent.futures.process import BrokenProcessPool

    from docindex.worker.pool import OcrPool

    pool = OcrPool(1)
    try:
        # A native crash (segfault, OOM kill) looks like this to the executor.
        with pytest.raises(BrokenProcessPool):
            pool.submit(os._exit, 1).result(timeout=60)
        # The next job gets a fresh process instead of a broken pool.
        assert pool.submit(abs, -3).result(timeout=60) == 3
    finally:
        pool.close()
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(abs, -1)


def test_one_dead_pool_process_fails_only_the_task_it_was_running() -> None:
    # The OOM killer takes the process working for job "a" while job "b" reads a page in the other
    import os
    import signal
    import time
    from concurrent.futures.process import BrokenProcessPool
    from pathlib import Path

    from docindex.worker.pool import OcrPool

    pool = OcrPool(2)
    try:
        first = pool.submit(time.sleep, 3.0, owner="a")
        second = pool.submit(time.sleep, 3.0, owner="b")
        deadline, victim = time.monotonic() + 60, None
        while victim is None and time.monotonic() < deadline:
            for mark in Path(pool.marks).iterdir():
                if mark.read_text(encoding="utf-8") == "a" and second.running():
                    victim = int(mark.name)
            time.sleep(0.01)
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        # Only a's task fails; b's page in the other process completes
        with pytest.raises(BrokenProcessPool, match="died"):
            first.result(timeout=60)
        assert second.result(timeout=60) is None
        # ... the death is a's, told once, and none is b's
        assert (pool.took_down("a"), pool.took_down("a"), pool.took_down("b")) == (True, False, False)
        # ... and the next task runs in a fresh process
        assert pool.submit(os.getpid, owner="c").result(timeout=60) != victim
        # A process the pool stops itself (shutdown) counts for nobody
        running = pool.submit(time.sleep, 3.0, owner="d")
        while not running.running():
            time.sleep(0.01)
        time.sleep(0.2)
        pool.terminate()
        with pytest.raises(BrokenProcessPool, match="stopped"):
            running.result(timeout=60)
        assert pool.took_down("d") is False
    finally:
        pool.close()
