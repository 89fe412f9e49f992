"""The OCR worker runs with a read-only root filesystem and one scratch volume, as its ECS task does.

The task definition sets ``ReadonlyRootFilesystem`` and mounts a scratch
volume at ``WORKER_TMP_DIR`` (docs/ocr-worker.md). Without Docker, the nearest
equivalent is a private mount namespace (``unshare -m``) in which ``/`` is
remounted read-only and a tmpfs is mounted on the scratch directory: the real
``python -m docindex.worker`` then OCRs a real scan from the local stack. Any
write outside the scratch volume (a library's cache, a stray temp file) fails
the job, and the test with it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from devkit.messages import s3_notification, sqs_event
from devkit.samples import make_scan_png
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke

READ_ONLY_ROOT = (
    'mount -o remount,bind,ro / && mount -t tmpfs -o size=256m docindex-scratch "$WORKER_TMP_DIR" && exec "$@"'
)


def test_the_worker_ocrs_a_scan_with_a_read_only_root(stack: Stack, tmp_path: Path) -> None:
    assert shutil.which("unshare"), "util-linux's unshare is needed (Debian: util-linux)"
    # Given a scan handed to the OCR worker by the indexer
    key = "スキャン/読み取り専用.png"
    etag = stack.aws.s3.put_object(
        Bucket=stack.bucket, Key=key, Body=make_scan_png(["読取専用 検証"], dpi=200, page=(4.0, 1.5))
    )["ETag"].strip('"')
    notification = s3_notification(stack.bucket, key, sequencer="0077", etag=etag)
    assert invoke(build_indexer(stack), sqs_event(notification)) == set()
    assert stack.doc(key)["_source"]["ocr_status"] == "pending"  # type: ignore[index]

    # When the real worker runs with / read-only and only the scratch volume writable
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {
        **os.environ,
        **stack.settings_env(),
        "WORKER_TMP_DIR": str(scratch),
        "TMPDIR": str(scratch),
        "WORKER_WAIT_SECONDS": "1",
        "WORKER_CONCURRENCY": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    worker = subprocess.Popen(
        ["unshare", "-m", "sh", "-c", READ_ONLY_ROOT, "sh", sys.executable, "-m", "docindex.worker"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        doc = stack.doc(key)
        while time.monotonic() < deadline and worker.poll() is None:
            doc = stack.doc(key)
            if doc and doc["_source"].get("ocr_status") != "pending":
                break
            time.sleep(0.5)
    finally:
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=60)

    # Then the scan was read, OCR'd and indexed; nothing tried to write outside the scratch volume
    assert "Read-only file system" not in output, output[-3000:]
    assert doc is not None, output[-3000:]
    assert doc["_source"]["ocr_status"] == "done", output[-3000:]
    assert "読取" in doc["_source"]["content"]
    # ... and the scratch volume was the tmpfs, not the read-only directory underneath
    assert list(scratch.iterdir()) == []
