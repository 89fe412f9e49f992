"""Pure parts of the redrive service: validation, judging rounds, error classification."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from docindex.core.exceptions import DlqError, RedriveConfigError
from docindex.redrive.errors import PERMISSIONS_DOC, classify_error
from docindex.redrive.models import UNSUPPORTED_REASON, QueueInfo, RedriveRequest, check_velocity
from docindex.redrive.queues import queue_url_from_arn
from docindex.redrive.settings import RedriveSettings
from docindex.redrive.state import RedriveState, judge_round, settle_time

ROOT = Path(__file__).resolve().parents[2]
DLQ = "arn:aws:sqs:us-east-1:123456789012:docindex-ingest-dlq"
OCR_DLQ = "arn:aws:sqs:us-east-1:123456789012:docindex-ocr-dlq"
NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
BASE_ENV = {"REDRIVE_STATE_TABLE": "state", "INGEST_DLQ_ARN": DLQ, "OCR_DLQ_ARN": OCR_DLQ}


def settings(**env: str) -> RedriveSettings:
    return RedriveSettings.from_env({**BASE_ENV, **env})


# ---------------------------------------------------------------------------- velocity


@pytest.mark.parametrize("value", [0, 501, -1])
def test_velocity_outside_1_to_500_is_rejected_with_a_clear_message(value: int) -> None:
    with pytest.raises(ValueError, match=rf"velocity must be between 1 and 500 .* got {value}$"):
        check_velocity(value)


@pytest.mark.parametrize("value", [1, 10, 500])
def test_velocity_inside_the_range_is_accepted(value: int) -> None:
    assert check_velocity(value) == value


@pytest.mark.parametrize("value", ["0", "501"])
def test_settings_reject_an_out_of_range_redrive_velocity(value: str) -> None:
    with pytest.raises(RedriveConfigError) as info:
        settings(REDRIVE_VELOCITY=value)
    assert "REDRIVE_VELOCITY: velocity must be between 1 and 500 messages per second" in str(info.value)
    assert str(info.value).endswith(f"got {value}")


def test_per_dlq_velocities_are_validated_too() -> None:
    with pytest.raises(RedriveConfigError, match=r"REDRIVE_VELOCITIES: .*docindex-ocr-dlq: velocity must be"):
        settings(REDRIVE_VELOCITIES=f'{{"{OCR_DLQ}": 900}}')
    with pytest.raises(RedriveConfigError, match="must be a JSON object"):
        settings(REDRIVE_VELOCITIES="ocr=5")
    assert settings(REDRIVE_VELOCITIES=f'{{"{OCR_DLQ}": 3}}').velocity_for(OCR_DLQ) == 3
    assert settings().velocity_for(OCR_DLQ) == 10


@pytest.mark.parametrize("value", [0, 501])
def test_request_rejects_an_out_of_range_velocity(value: int) -> None:
    with pytest.raises(RedriveConfigError, match=r"velocity: velocity must be between 1 and 500"):
        RedriveRequest.from_event({"action": "start", "velocity": value})


# ---------------------------------------------------------------------------- settings and requests


def test_settings_defaults() -> None:
    s = settings()
    assert (s.velocity, s.max_source_backlog, s.max_fruitless_rounds, s.backoff_seconds) == (
        10,
        1000,
        3,
        3600,
    )
    assert s.configured_dlqs() == (DLQ, OCR_DLQ)
    assert (s.opensearch_auth, s.opensearch_service) == ("sigv4", "es")


def test_dlq_list_comes_from_redrive_dlq_arns_then_the_named_dlqs_then_their_urls() -> None:
    assert settings(REDRIVE_DLQ_ARNS=f" {OCR_DLQ} ,, ").configured_dlqs() == (OCR_DLQ,)
    local = RedriveSettings.from_env(
        {"REDRIVE_STATE_TABLE": "t", "INGEST_DLQ_URL": "http://x/1/a-dlq", "OCR_DLQ_URL": "http://x/1/b-dlq"}
    )
    assert local.configured_dlqs() == ("http://x/1/a-dlq", "http://x/1/b-dlq")
    with pytest.raises(RedriveConfigError, match="no DLQ configured"):
        RedriveSettings.from_env({"REDRIVE_STATE_TABLE": "t"}).configured_dlqs()


def test_the_state_table_is_required() -> None:
    with pytest.raises(RedriveConfigError, match="REDRIVE_STATE_TABLE"):
        RedriveSettings.from_env({"INGEST_DLQ_ARN": DLQ})


def test_scheduler_input_is_a_start_request() -> None:
    request = RedriveRequest.from_event({"action": "start"})
    assert (request.action, request.dlq_arn, request.velocity, request.dry_run) == (
        "start",
        None,
        None,
        False,
    )


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"action": "restart"}, "action: Input should be 'start', 'status', 'cancel' or 'reset'"),
        ({"action": "start", "dlq": DLQ}, "dlq: Extra inputs are not permitted"),
        ({"action": "start", "destination_arn": OCR_DLQ}, "destination_arn needs dlq_arn"),
        ({"action": "status", "reset": True}, "reset is a flag of start"),
        (["start"], "expected a JSON object"),
    ],
)
def test_bad_requests_are_refused_with_a_reason(event: Any, expected: str) -> None:
    with pytest.raises(RedriveConfigError, match="invalid redrive request") as info:
        RedriveRequest.from_event(event)
    assert expected in str(info.value)


# ---------------------------------------------------------------------------- judging rounds


def pending(depth: int, rounds: int = 0) -> RedriveState:
    return RedriveState(dlq_arn=DLQ, pending=True, depth_at_start=depth, fruitless_rounds=rounds)


def test_a_round_that_shrank_the_dlq_is_progress_and_clears_the_count() -> None:
    judged = judge_round(pending(10, rounds=2), depth_now=4, now=NOW, settings=settings())
    assert not judged.fruitless
    assert (judged.state.fruitless_rounds, judged.state.pending, judged.state.next_attempt_at) == (
        0,
        False,
        None,
    )


@pytest.mark.parametrize(("rounds_before", "wait_hours"), [(0, 1), (1, 2)])
def test_a_fruitless_round_doubles_the_wait(rounds_before: int, wait_hours: int) -> None:
    judged = judge_round(pending(10, rounds_before), depth_now=10, now=NOW, settings=settings())
    assert judged.fruitless
    assert judged.state.fruitless_rounds == rounds_before + 1
    assert judged.state.next_attempt_at == NOW + timedelta(hours=wait_hours)
    assert not judged.state.halted


def test_more_messages_than_before_is_fruitless_too() -> None:
    assert judge_round(pending(3), depth_now=8, now=NOW, settings=settings()).fruitless


def test_the_last_allowed_fruitless_round_halts() -> None:
    judged = judge_round(pending(5, rounds=2), depth_now=5, now=NOW, settings=settings())
    assert (judged.state.halted, judged.state.fruitless_rounds, judged.state.next_attempt_at) == (
        True,
        3,
        None,
    )


def test_settle_time_is_the_move_plus_every_retry_of_the_slowest_target() -> None:
    slow = QueueInfo(arn="a", url="u", visibility_timeout=900, max_receive_count=5)
    fast = QueueInfo(arn="b", url="v", visibility_timeout=30, max_receive_count=3)
    assert settle_time(1000, 10, [fast, slow]) == timedelta(seconds=100 + 4500)
    assert settle_time(1, 500, []) == timedelta(minutes=1)


def test_state_survives_a_round_trip_through_a_dynamodb_item() -> None:
    state = RedriveState(
        dlq_arn=DLQ,
        fruitless_rounds=2,
        halted=False,
        pending=True,
        depth_at_start=7,
        started_at=NOW,
        task_handle="h",
        velocity=10,
        judge_after=NOW + timedelta(minutes=5),
        next_attempt_at=None,
        last_outcome="fruitless",
        updated_at=NOW,
    )
    item = state.to_item()
    assert item["id"] == {"S": f"redrive#{DLQ}"}
    assert RedriveState.from_item(item) == state


# ---------------------------------------------------------------------------- error classification


def client_error(code: str, message: str = "", operation: str = "StartMessageMoveTask", status: int = 400) -> Any:
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}},
        operation,
    )


@pytest.mark.parametrize(
    ("code", "message", "reason"),
    [
        ("ResourceNotFoundException", "", "queue_not_found"),
        ("AWS.SimpleQueueService.NonExistentQueue", "", "queue_not_found"),
        ("RequestThrottled", "", "throttled"),
        ("ThrottlingException", "", "throttled"),
        ("AccessDenied", "", "access_denied"),
        ("KMS.AccessDeniedException", "", "access_denied"),
        ("InvalidParameterValue", "Source queue must be configured as a Dead Letter Queue.", "not_a_dlq"),
        ("UnsupportedOperation", "There is already a task running for this queue", "task_already_running"),
        ("InvalidParameterValue", "Value 0 for MaxNumberOfMessagesPerSecond is invalid", "invalid_request"),
        ("InternalError", "", "api_error"),
        ("InvalidAction", "", UNSUPPORTED_REASON),
    ],
)
def test_api_errors_are_classified(code: str, message: str, reason: str) -> None:
    assert classify_error(client_error(code, message)).reason == reason


def test_a_missing_state_table_is_not_a_missing_queue() -> None:
    error = classify_error(client_error("ResourceNotFoundException", "table", operation="GetItem"))
    assert error.reason == "state_table_not_found"
    assert "REDRIVE_STATE_TABLE" in error.message


def test_an_emulator_error_page_on_a_move_call_means_unsupported_but_not_on_aws() -> None:
    page = client_error("500", "<!doctype html><title>500 Internal Server Error</title>", status=500)
    assert classify_error(page, "http://127.0.0.1:5000").reason == UNSUPPORTED_REASON
    assert classify_error(page, "https://sqs.us-east-1.amazonaws.com").reason == "api_error"
    other = client_error("500", "<html>", operation="GetQueueAttributes", status=500)
    assert classify_error(other, "http://127.0.0.1:5000").reason == "api_error"


def test_connection_failures_are_classified() -> None:
    assert classify_error(EndpointConnectionError(endpoint_url="http://x")).reason == "endpoint_unreachable"
    assert classify_error(RuntimeError("bug")).reason == "internal_error"


def test_access_denied_points_to_the_docs_section_that_lists_the_permissions() -> None:
    error = classify_error(client_error("AccessDenied", "not authorized"))
    assert (error.reason, PERMISSIONS_DOC in error.message) == ("access_denied", True)
    doc = (ROOT / "docs" / "dlq-redrive.md").read_text(encoding="utf-8")
    assert PERMISSIONS_DOC.startswith("docs/dlq-redrive.md")
    assert "\n## Metrics and permissions\n" in doc


@pytest.mark.parametrize(
    "path",
    [
        "layers/docindex/docindex/redrive/__init__.py",
        "layers/docindex/docindex/redrive/models.py",
        "layers/docindex/docindex/redrive/settings.py",
        "layers/docindex/docindex/redrive/state.py",
        "layers/docindex/docindex/redrive/probes.py",
        "layers/docindex/docindex/redrive/errors.py",
        "layers/docindex/docindex/redrive/queues.py",
        "layers/docindex/docindex/redrive/guards.py",
        "layers/docindex/docindex/redrive/service.py",
        "layers/docindex/docindex/redrive/wiring.py",
        "layers/docindex/docindex/cli/redrive.py",
        "functions/redrive/app.py",
        "template.yaml",
    ],
)
def test_redrive_files_point_only_to_documents_that_exist(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    missing = [doc for doc in re.findall(r"\bdocs/[\w./-]+", text) if not (ROOT / doc).exists()]
    assert missing == []


# ---------------------------------------------------------------------------- queue URLs from ARNs


def sqs_client(region: str, endpoint_url: str | None = None) -> Any:
    import boto3

    # Creating a client needs neither the network nor credentials.
    return boto3.client(
        "sqs",
        region_name=region,
        endpoint_url=endpoint_url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_queue_url_is_built_from_the_arn_without_get_queue_url(monkeypatch: pytest.MonkeyPatch) -> None:
    # The redrive role has no sqs:GetQueueUrl: the URL comes from the ARN and the client's endpoint.
    # (boto3 reads AWS_ENDPOINT_URL* when no endpoint is given: a local run in this process sets it.)
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS"):
        monkeypatch.delenv(name, raising=False)
    assert queue_url_from_arn(DLQ, sqs_client("us-east-1")) == (
        "https://sqs.us-east-1.amazonaws.com/123456789012/docindex-ingest-dlq"
    )
    local = sqs_client("us-east-1", "http://127.0.0.1:5000/")
    assert queue_url_from_arn(OCR_DLQ, local) == "http://127.0.0.1:5000/123456789012/docindex-ocr-dlq"


def test_queue_url_of_another_region_is_not_found_and_a_bad_arn_is_invalid() -> None:
    with pytest.raises(DlqError) as info:
        queue_url_from_arn(DLQ, sqs_client("eu-west-1"))
    assert info.value.reason == "queue_not_found"
    assert "us-east-1" in info.value.message
    with pytest.raises(DlqError) as bad:
        queue_url_from_arn("arn:aws:sns:us-east-1:123456789012:topic", sqs_client("us-east-1"))
    assert bad.value.reason == "invalid_request"


# ---------------------------------------------------------------------------- the handler module


def test_importing_the_handler_needs_no_network_and_no_credentials(tmp_path: Path) -> None:
    # A fresh interpreter with no AWS credentials anywhere and sockets that refuse to connect
    script = textwrap.dedent(
        f"""
        import importlib.util, socket

        def refuse(*args, **kwargs):
            raise AssertionError("network used at import time")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        spec = importlib.util.spec_from_file_location("app", {str(ROOT / "functions/redrive/app.py")!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        from docindex.redrive import wiring
        assert callable(module.lambda_handler)
        assert wiring.get_service.cache_info().currsize == 0
        print("imported")
        """
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "imported" in done.stdout
