"""``python -m docindex.worker``: run the OCR worker until SIGTERM."""

from __future__ import annotations

import signal
import sys
from types import FrameType


def main() -> int:
    from docindex.core.exceptions import SettingsError
    from docindex.core.observability import logger
    from docindex.worker import build_worker
    from docindex.worker.config import WorkerSettings

    try:
        settings = WorkerSettings.from_env()
    except SettingsError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    worker = build_worker(settings)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        logger.info("stop requested", extra={"signal": signal.Signals(signum).name})
        worker.stop()

    # ECS sends SIGTERM, then SIGKILL after the task's stopTimeout.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        worker.run()
    except Exception:  # noqa: BLE001 - logged with its traceback, then a non-zero exit for ECS
        logger.exception("OCR worker failed")
        worker.close()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
