"""Entry point of the OCR worker container: the same as ``python -m docindex.worker``.

The worker is a long-running process, not a Lambda handler: it long-polls the
OCR queue until ECS sends SIGTERM (see docs/ocr-worker.md).
"""

from __future__ import annotations

import sys

from docindex.worker.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
