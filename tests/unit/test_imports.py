"""Importing a handler needs no network and no credentials, and stays light (cold start)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT

PROBE = """
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
heavy = ["pypdfium2", "python_calamine", "lxml", "selectolax", "charset_normalizer", "opensearchpy.helpers",
         # what a record may not need loads on first use, not in Lambda's init (bench.cold_start):
         # the settings model (pydantic), the spelling-variant tables, the company vocabulary and
         # meaning search's embedding settings
         "pydantic", "docindex.core.settings", "docindex.text.variants", "docindex.index.vocabulary",
         "docindex.embed.settings", "docindex.embed.document"]
print(json.dumps({"handler": callable(module.lambda_handler), "loaded": [m for m in heavy if m in sys.modules]}))
"""


def test_indexer_handler_imports_without_aws_or_heavy_extractors() -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT / "layers" / "docindex")}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(REPO_ROOT / "functions" / "indexer" / "app.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"handler": True, "loaded": []}
