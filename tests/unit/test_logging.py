"""Every log line of the package goes through the Powertools logger, whatever the service is called.

Deployed, POWERTOOLS_SERVICE_NAME is ``docindex-<stage>``: the Powertools
logger is then the stdlib logger of that name, and a ``docindex.*`` stdlib
logger does not reach its JSON handler — its lines come out as plain text
without the message_id, bucket and key the indexer appends.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "layers" / "docindex" / "docindex"

PROBE = """
import json
from docindex.extract import ExtractionLimits, dispatch
from docindex.core.observability import logger

def broken(data, ftype, ctx):
    raise ValueError("a library bug")

dispatch._extractor = lambda kind: broken
# What the indexer appends for each record (its worker thread's keys)
logger.thread_safe_append_keys(message_id="m-1", bucket="docs", key="議事録/第1回.txt")
doc = dispatch.extract("東京都の議事録".encode(), "第1回.txt", ExtractionLimits())
print("RESULT " + json.dumps({"error": doc.error}))
"""


def test_an_extractor_failure_is_logged_as_json_with_the_record_keys() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT / "layers" / "docindex"),
        "POWERTOOLS_SERVICE_NAME": "docindex-prod",
        "POWERTOOLS_LOG_LEVEL": "INFO",
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert json.loads(next(line for line in lines if line.startswith("RESULT "))[7:]) == {"error": "extractor_failed"}
    records = [json.loads(line) for line in lines if line.startswith("{")]
    (warning,) = [r for r in records if "extractor for" in r.get("message", "")]
    assert warning["message"] == "extractor for text failed"
    assert warning["level"] == "WARNING"
    assert warning["service"] == "docindex-prod"
    assert (warning["message_id"], warning["bucket"], warning["key"]) == ("m-1", "docs", "議事録/第1回.txt")
    assert "ValueError: a library bug" in warning["exception"]
    # nothing fell through to the root logger as plain text
    assert "extractor for" not in result.stderr


def test_no_module_of_the_package_logs_through_a_stdlib_logger() -> None:
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if re.search(r"\blogging\.getLogger\(|\bgetLogger\(__name__\)", path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "use `from docindex.core.observability import logger`"
