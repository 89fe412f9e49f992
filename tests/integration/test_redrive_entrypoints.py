"""The redrive Lambda handler and ``docindex redrive`` CLI, driven the way users drive them.

Every ``events/redrive-*.json`` sample is invoked here (EVENT_FILES; a test fails if a
new sample is not). As in test_redrive.py, moto server serves the queues and the state
table, a real OpenSearch node the OpenSearch health, and botocore's Stubber ONLY the three message-move
calls moto lacks. The tests that build the real wiring from the environment use no stub
and show what a local run sees: ``unsupported by this endpoint``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from docindex.core.exceptions import RedriveConfigError
from docindex.redrive import wiring
from docindex.redrive.models import UNSUPPORTED_REASON
from docindex.redrive.probes import OpenSearchHealth
from docindex.redrive.settings import RedriveSettings
from tests.integration.test_redrive import INGEST, INGEST_DLQ, OCR_DLQ, TABLE, World, aws_client, build_world, task

pytestmark = [
    pytest.mark.integration,
    # status, reset and dry runs publish no metric; Powertools warns about that, rightly so
    pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning"),
]
# The cached factory itself: tests monkeypatch wiring.get_service and must still clear it.
REAL_GET_SERVICE = wiring.get_service

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
APP = ROOT / "functions" / "redrive" / "app.py"
EVENT_FILES = (
    "redrive-scheduled.json",
    "redrive-start.json",
    "redrive-status.json",
    "redrive-cancel.json",
    "redrive-dry-run.json",
    "redrive-reset.json",
)


@dataclass
class FakeLambdaContext:
    function_name: str = "docindex-redrive"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:docindex-redrive"
    aws_request_id: str = "2f1c0b5e-0000-4000-8000-000000000001"


def load_event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / name).read_text(encoding="utf-8"))


@pytest.fixture
def restore_environ() -> Iterator[None]:
    saved = dict(os.environ)
    REAL_GET_SERVICE.cache_clear()
    yield
    os.environ.clear()
    os.environ.update(saved)
    REAL_GET_SERVICE.cache_clear()


@pytest.fixture
def handler(monkeypatch: pytest.MonkeyPatch, restore_environ: None) -> ModuleType:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "DocIndex")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "redrive")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    spec = importlib.util.spec_from_file_location("redrive_app_under_test", APP)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def engine_health(engine_space: Any) -> OpenSearchHealth:
    from opensearchpy import OpenSearch

    return OpenSearchHealth(OpenSearch(hosts=[engine_space.url], timeout=5, max_retries=0))


@pytest.fixture
def world(moto_reset: str, engine_health: OpenSearchHealth, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    for w in build_world(moto_reset, engine_health):
        monkeypatch.setattr(wiring, "get_service", w.service)
        yield w


def invoke(handler: ModuleType, event: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[Any, dict]:
    """Run the handler; return its output and the EMF metrics it printed ({(name, reason): value})."""
    capsys.readouterr()
    output = handler.lambda_handler(event, FakeLambdaContext())
    metrics: dict[tuple[str, str | None], float] = {}
    for line in capsys.readouterr().out.splitlines():
        if not line.startswith("{") or '"_aws"' not in line:
            continue
        blob = json.loads(line)
        directive = blob["_aws"]["CloudWatchMetrics"][0]
        assert directive["Namespace"] == "DocIndex"
        for metric in directive["Metrics"]:
            value = blob[metric["Name"]]
            metrics[(metric["Name"], blob.get("Reason"))] = sum(value) if isinstance(value, list) else value
    return output, metrics


def by_dlq(output: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["dlq_arn"]: r for r in output["results"]}


# ============================================================================ handler x events/


def test_every_redrive_event_sample_is_driven_by_a_test() -> None:
    assert {p.name for p in EVENTS.glob("redrive-*.json")} == set(EVENT_FILES)


def test_scheduled_event_redrives_every_configured_dlq(
    handler: ModuleType, world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given EventBridge Scheduler's input {"action": "start"}, a full ingest DLQ, an empty OCR DLQ
    event = load_event("redrive-scheduled.json")
    assert event == {"action": "start"}
    world.send("docindex-ingest-dlq", 3)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "sched-1")

    # When the schedule fires
    output, metrics = invoke(handler, event, capsys)

    # Then the ingest DLQ is redriven, the OCR DLQ skipped, and metrics say so
    assert output["action"] == "start"
    assert output["dry_run"] is False
    results = by_dlq(output)
    assert set(results) == {INGEST_DLQ, OCR_DLQ}
    ingest = results[INGEST_DLQ]
    assert {k: ingest[k] for k in ("status", "reason", "velocity", "task_handle", "approximate_messages")} == {
        "status": "started",
        "reason": None,
        "velocity": 10,
        "task_handle": "sched-1",
        "approximate_messages": 3,
    }
    assert ingest["source_arn"] == INGEST
    assert (results[OCR_DLQ]["status"], results[OCR_DLQ]["reason"]) == ("skipped", "dlq_empty")
    assert metrics[("RedrivesStarted", None)] == 1
    assert metrics[("RedrivesSkipped", None)] == 1
    assert metrics[("RedrivesSkipped", "dlq_empty")] == 1


def test_manual_start_event_uses_its_dlq_and_velocity(
    handler: ModuleType, world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    event = load_event("redrive-start.json")
    assert event["dlq_arn"] == INGEST_DLQ
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, event["velocity"], "manual-1")
    output, metrics = invoke(handler, event, capsys)
    [result] = output["results"]
    assert (result["status"], result["velocity"]) == ("started", 25)
    assert metrics[("RedrivesStarted", None)] == 1


def test_dry_run_event_starts_nothing_and_counts_nothing(
    handler: ModuleType, world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ)  # no start_message_move_task stubbed
    output, metrics = invoke(handler, load_event("redrive-dry-run.json"), capsys)
    assert output["dry_run"] is True
    results = by_dlq(output)
    assert (results[INGEST_DLQ]["status"], results[INGEST_DLQ]["reason"]) == ("dry_run", "would_start")
    assert results[OCR_DLQ]["reason"] == "dlq_empty"
    assert ("RedrivesStarted", None) not in metrics
    assert world.state_item(INGEST_DLQ) is None


def test_status_event_reports_each_dlq(handler: ModuleType, world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.send("docindex-ingest-dlq", 4)
    world.expect_list(
        INGEST_DLQ,
        task("RUNNING", TaskHandle="h", ApproximateNumberOfMessagesMoved=1, ApproximateNumberOfMessagesToMove=4),
    )
    world.expect_list(OCR_DLQ)
    output, _ = invoke(handler, load_event("redrive-status.json"), capsys)
    results = by_dlq(output)
    assert output["action"] == "status"
    assert (results[INGEST_DLQ]["status"], results[INGEST_DLQ]["moved"], results[INGEST_DLQ]["to_move"]) == (
        "running",
        1,
        4,
    )
    assert results[OCR_DLQ]["status"] == "idle"


def test_cancel_event_cancels_the_running_task(
    handler: ModuleType, world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.expect_list(INGEST_DLQ, task("RUNNING", TaskHandle="h-run", ApproximateNumberOfMessagesToMove=9))
    world.expect_cancel("h-run", moved=4)
    output, _ = invoke(handler, load_event("redrive-cancel.json"), capsys)
    [result] = output["results"]
    assert (result["status"], result["moved"], result["task_handle"]) == ("cancelled", 4, "h-run")


def test_reset_event_clears_the_no_progress_state(
    handler: ModuleType, world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    world.dynamodb.put_item(
        TableName=TABLE,
        Item={
            "id": {"S": f"redrive#{INGEST_DLQ}"},
            "dlq_arn": {"S": INGEST_DLQ},
            "fruitless_rounds": {"N": "3"},
            "halted": {"BOOL": True},
        },
    )
    output, _ = invoke(handler, load_event("redrive-reset.json"), capsys)
    [result] = output["results"]
    assert (result["status"], result["fruitless_rounds"]) == ("reset", 3)
    assert world.state_item(INGEST_DLQ) is None


@pytest.mark.parametrize("velocity", [0, 501])
def test_handler_rejects_an_out_of_range_velocity(handler: ModuleType, world: World, velocity: int) -> None:
    with pytest.raises(RedriveConfigError, match=r"velocity must be between 1 and 500 .* got " + str(velocity)):
        handler.lambda_handler({"action": "start", "velocity": velocity}, FakeLambdaContext())


def local_up_env(state_dir: Path, endpoint: str, opensearch_url: str) -> tuple[dict[str, str], Path]:
    """Run the real `docindex local up` against the test servers: its env, and the file it wrote."""
    from devkit.local.session import default_env_file, local_up

    env = local_up(state_dir=state_dir, aws_endpoint=endpoint, opensearch_endpoint=opensearch_url)
    return env, default_env_file(state_dir)


def test_local_up_writes_the_redrive_state_table_as_the_template_does(
    moto_reset: str, engine_space: Any, tmp_path: Path
) -> None:
    # template.yaml sets REDRIVE_STATE_TABLE to the ledger table; `local up` mirrors it
    env, env_file = local_up_env(tmp_path, moto_reset, engine_space.url)
    assert env["REDRIVE_STATE_TABLE"] == env["LEDGER_TABLE"]
    assert f"REDRIVE_STATE_TABLE={env['LEDGER_TABLE']}" in env_file.read_text(encoding="utf-8").splitlines()
    settings = RedriveSettings.from_env(env)  # what `docindex redrive --env-file` validates
    assert settings.configured_dlqs() == (env["INGEST_DLQ_ARN"], env["OCR_DLQ_ARN"], env["EMBED_DLQ_ARN"])


def test_handler_wired_from_the_environment_says_unsupported_locally(
    handler: ModuleType,
    moto_reset: str,
    engine_space: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the real wiring (no stub) from the environment `docindex local up` writes:
    # moto as AWS, a real node as OpenSearch, one message in the ingest DLQ
    env, _ = local_up_env(tmp_path, moto_reset, engine_space.url)
    os.environ.update(env)
    aws_client("sqs", moto_reset).send_message(QueueUrl=env["INGEST_DLQ_URL"], MessageBody="{}")

    # When the scheduled event runs
    output, metrics = invoke(handler, load_event("redrive-scheduled.json"), capsys)

    # Then the full DLQ is reported as unsupported, plainly, and the empty one as empty
    results = {r["dlq_arn"].rsplit(":", 1)[-1]: r for r in output["results"]}
    assert (results["docindex-ingest-dlq"]["status"], results["docindex-ingest-dlq"]["reason"]) == (
        "error",
        UNSUPPORTED_REASON,
    )
    assert results["docindex-ocr-dlq"]["reason"] == "dlq_empty"
    assert metrics[("RedriveErrors", UNSUPPORTED_REASON)] == 1


# ============================================================================ CLI


def cli(*argv: str) -> int:
    """``docindex redrive ...`` through the CLI's entry point (its one error handler), in an empty directory
    (so that a checkout's own .docindex/local.env is not read)."""
    from docindex.cli import main

    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as empty:
        os.chdir(empty)
        try:
            return main(["redrive", *argv])
        finally:
            os.chdir(cwd)


def test_cli_dry_run_json_prints_the_lambda_summary(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ)
    code = cli("start", "--dlq", INGEST_DLQ, "--velocity", "40", "--dry-run", "--json")
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["dry_run"] is True
    assert summary["results"][0]["status"] == "dry_run"
    assert summary["results"][0]["velocity"] == 40


def test_cli_start_prints_one_block_per_dlq(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "cli-1")
    assert cli("start") == 0
    out = capsys.readouterr().out
    assert "docindex-ingest-dlq: started" in out
    assert "task: cli-1" in out
    assert "docindex-ocr-dlq: skipped (dlq_empty)" in out


def test_cli_local_env_file_says_unsupported_and_exits_1(
    moto_reset: str,
    engine_space: Any,
    restore_environ: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the env file `docindex local up` wrote, used as is (docs/dlq-redrive.md, "Locally")
    env, env_file = local_up_env(tmp_path, moto_reset, engine_space.url)
    for key in env:
        os.environ.pop(key, None)
    aws_client("sqs", moto_reset).send_message(QueueUrl=env["OCR_DLQ_URL"], MessageBody="{}")

    # When `docindex redrive status --env-file .docindex/local.env` runs
    code = cli("status", "--env-file", str(env_file))

    # Then the configuration is complete (not exit 2) and moto's missing move API is said plainly
    out = capsys.readouterr().out
    assert code == 1
    assert "docindex-ocr-dlq: error (unsupported by this endpoint)" in out


@pytest.mark.parametrize("value", ["0", "501", "ten"])
def test_cli_rejects_a_bad_velocity(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli("start", "--velocity", value)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "between 1 and 500" in err or "not a whole number" in err


def test_cli_reports_a_bad_environment_with_exit_2(restore_environ: None, capsys: pytest.CaptureFixture[str]) -> None:
    os.environ.pop("REDRIVE_STATE_TABLE", None)
    os.environ["REDRIVE_VELOCITY"] = "0"
    assert cli("status") == 2
    err = capsys.readouterr().err
    assert "REDRIVE_VELOCITY" in err
    assert "between 1 and 500" in err


def test_cli_finds_the_dlqs_state_table_and_opensearch_from_a_stack(
    moto_reset: str,
    engine_space: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a stack with template.yaml's outputs and parameters (moto cannot run the SAM transform)
    # over the resources `docindex local up` provisions, one message in the ingest DLQ,
    env, _ = local_up_env(tmp_path, moto_reset, engine_space.url)
    template = {
        "Parameters": {
            "OpenSearchEndpoint": {"Type": "String", "Default": engine_space.url},
            "OpenSearchIndex": {"Type": "String", "Default": env["OPENSEARCH_INDEX"]},
        },
        "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "stack-placeholder"}}},
        "Outputs": {
            "IngestDlqUrl": {"Value": env["INGEST_DLQ_URL"]},
            "OcrDlqUrl": {"Value": env["OCR_DLQ_URL"]},
            "LedgerTableName": {"Value": env["LEDGER_TABLE"]},
        },
    }
    aws_client("cloudformation", moto_reset).create_stack(StackName="docindex-dev", TemplateBody=json.dumps(template))
    aws_client("sqs", moto_reset).send_message(QueueUrl=env["INGEST_DLQ_URL"], MessageBody="{}")
    # and an operator's shell with nothing of docindex in it (every variable restored afterwards)
    for name in [*env, "REDRIVE_DLQ_ARNS", "DOCINDEX_STACK", "AWS_PROFILE"]:
        monkeypatch.setenv(name, "-")
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_reset)

    # When the operator names the stack
    code = cli("start", "--stack", "docindex-dev", "--json")

    # Then both DLQs were found and judged: the full one reaches StartMessageMoveTask
    # (which moto lacks: said plainly), the empty one is skipped
    summary = json.loads(capsys.readouterr().out)
    results = {r["dlq_arn"].rsplit(":", 1)[-1]: r for r in summary["results"]}
    assert (results["docindex-ingest-dlq"]["status"], results["docindex-ingest-dlq"]["reason"]) == (
        "error",
        UNSUPPORTED_REASON,
    )
    assert results["docindex-ocr-dlq"]["reason"] == "dlq_empty"
    assert code == 1
    # and a stack that does not exist is an error the operator can read
    assert cli("status", "--stack", "no-such-stack") == 2
    assert "no-such-stack" in capsys.readouterr().err
