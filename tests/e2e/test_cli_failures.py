"""Every command × every way it cannot run: one line on stderr with the fix, nothing on stdout, exit 2.

Each case runs ``python -m docindex.cli`` in a separate process, as an operator would, with an
environment that has no AWS configuration of its own (no credentials, no profile, no metadata
service): nothing here reaches AWS. "Endpoint down" uses a closed port on 127.0.0.1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

COMMANDS: dict[str, list[str]] = {
    "search": ["search", "quarterly"],
    "diagnose": ["diagnose", "--sample", "0", "--sample-seconds", "0"],
    "backfill": ["backfill", "--no-progress"],
    "reconcile": ["reconcile", "--no-progress"],
    "pause": ["pause", "--wait", "0"],
    "resume": ["resume", "--wait", "0"],
    "redrive": ["redrive", "status"],
    "local run": ["local", "run", "--once", "--no-worker", "--max-seconds", "5"],
    "reprocess": ["reprocess", "--extraction-error", "unsupported", "--dry-run", "--no-progress"],
    "failures": ["failures"],
    "access": ["access", "apply", "map.json"],
    "reindex": ["reindex", "--settle", "0"],
    "analysis": ["analysis", "validate"],
}
BAD_FLAGS: dict[str, list[str]] = {
    "search": ["--size", "1000000"],
    "diagnose": ["--sample", "-1"],
    "backfill": ["--rate", "-5"],
    "reconcile": ["--max-backlog", "many"],
    "pause": ["--wait", "-1"],
    "resume": ["--desired", "-1"],
    "redrive": ["--velocity", "0"],
    "local run": ["--batch-size", "0"],
    "reprocess": ["--rate", "-1"],
    "failures": ["--confidence-below", "0"],
    "access": ["--settle", "-1"],
    "reindex": ["--settle", "-1"],
    "analysis": ["--config"],
}
# `analysis validate` without a cluster checks the vocabulary file offline: nothing to configure, it runs.
NOT_A_FAILURE = {("analysis", "no config")}
# Failure class -> a word the one line must carry (its fix points the right way).
FIXES = {
    "no config": "docindex local up",
    "bad endpoint": "http://",
    "endpoint down": "cannot reach",
    "no credentials": "credentials",
    "bad flags": "--help",
}
STACK_COMMANDS = {
    *("search", "diagnose", "backfill", "reconcile", "pause", "resume", "redrive", "reprocess", "failures"),
    *("access", "reindex", "analysis"),
}
ACCESS_MAP = '{"rules": [{"prefix": "", "allow": {"everyone": true}}]}\n'


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_env_file(path: Path, port: int, *, credentials: bool = True) -> Path:
    """A local run's env file whose endpoints are all down (nothing listens on ``port``)."""
    url = f"http://127.0.0.1:{port}"
    values = {
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": url,
        "DOCINDEX_BUCKET": "docindex-documents",
        "INGEST_QUEUE_URL": f"{url}/123456789012/docindex-ingest",
        "INGEST_QUEUE_ARN": "arn:aws:sqs:us-east-1:123456789012:docindex-ingest",
        "INGEST_DLQ_URL": f"{url}/123456789012/docindex-ingest-dlq",
        "OCR_QUEUE_URL": f"{url}/123456789012/docindex-ocr",
        "OCR_DLQ_URL": f"{url}/123456789012/docindex-ocr-dlq",
        "LEDGER_TABLE": "docindex-ledger",
        "REDRIVE_STATE_TABLE": "docindex-ledger",
        "IDEMPOTENCY_TABLE": "docindex-idempotency",
        "OPENSEARCH_ENDPOINT": url,
        "OPENSEARCH_INDEX": "docindex-documents",
        "OPENSEARCH_AUTH": "none",
        "ACCESS_MAP_URI": "s3://docindex-documents/_docindex/access-map.json",
    }
    if credentials:
        values |= {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def bare_environment(home: Path) -> dict[str, str]:
    """The process environment minus anything that configures AWS, OpenSearch or docindex."""
    drop = ("AWS_", "OPENSEARCH_", "DOCINDEX_", "INGEST_", "OCR_", "REDRIVE_", "LEDGER_", "IDEMPOTENCY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env |= {
        "HOME": str(home),
        "AWS_CONFIG_FILE": str(home / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "COLUMNS": "200",
    }
    return env


@dataclass
class Case:
    args: list[str]
    env: dict[str, str]


def build_case(command: str, failure: str, workdir: Path) -> Case:
    """The command line and environment that put ``command`` in the ``failure`` class."""
    env = bare_environment(workdir)
    args = list(COMMANDS[command])
    (workdir / "map.json").write_text(ACCESS_MAP)
    port = closed_port()
    if failure == "no config":
        return Case(args, env)
    if failure == "bad flags":
        return Case(args + BAD_FLAGS[command], env)
    if failure == "bad endpoint":
        # Exported without the scheme: they win over the (otherwise fine) env file.
        env |= {"OPENSEARCH_ENDPOINT": f"127.0.0.1:{port}", "AWS_ENDPOINT_URL": f"127.0.0.1:{port}"}
        return Case([*args, "--env-file", str(write_env_file(workdir / "down.env", port))], env)
    if failure == "endpoint down":
        env_file = write_env_file(workdir / "down.env", port)
        if command in ("pause", "resume"):
            # Locally there is nothing to pause; against a stack whose AWS endpoint is down:
            return Case([*args, "--stack", "docindex", "--env-file", str(env_file)], env)
        return Case([*args, "--env-file", str(env_file)], env)
    if failure == "no credentials":
        if command in STACK_COMMANDS:
            return Case([*args, "--stack", "docindex", "--region", "us-east-1"], env)
        return Case([*args, "--env-file", str(write_env_file(workdir / "nocreds.env", port, credentials=False))], env)
    raise AssertionError(failure)


def run_case(case: Case, cwd: Path, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "docindex.cli", *case.args],
        cwd=cwd,
        env=case.env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def failure_line(stderr: str) -> list[str]:
    """What stderr says, minus the ``settings:`` line the commands print before they start."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("settings: ")]


@pytest.mark.parametrize("failure", list(FIXES))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_failure_is_one_line_with_the_fix_and_exit_2(command: str, failure: str, tmp_path: Path) -> None:
    if (command, failure) in NOT_A_FAILURE:
        # Not a failure for this command: it does its work (offline) and says the file is valid
        result = run_case(build_case(command, failure, tmp_path), tmp_path)
        assert result.returncode == 0, result.stderr
        return
    # Given a command that cannot run (nothing configured, a bad endpoint, an endpoint down, no
    # credentials, or a bad flag value)
    case = build_case(command, failure, tmp_path)

    # When an operator runs it
    result = run_case(case, tmp_path)

    # Then it says so in one line naming the command and the fix, prints nothing else, and exits 2
    lines = failure_line(result.stderr)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"docindex {command}"), lines[0]
    assert FIXES[failure] in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == "", result.stdout


def test_verbose_shows_the_traceback_as_well(tmp_path: Path) -> None:
    case = build_case("search", "endpoint down", tmp_path)
    result = run_case(Case([*case.args, "-v"], case.env), tmp_path)
    assert result.returncode == 2
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("docindex search: cannot reach OpenSearch")
