"""The existing-bucket custom resource (functions/bucket_notification/app.py).

First the pure computation of the bucket's new notification configuration, for every request
type; then the handler end to end: CloudFormation's request (events/custom-resource-create.json)
against a real bucket in moto server, answered over HTTP to a local server standing in for the
presigned ResponseURL.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, load_event

APP_PATH = REPO_ROOT / "functions" / "bucket_notification" / "app.py"
EVENT = "custom-resource-create.json"


def _load_app() -> ModuleType:
    # Loaded by path, as Lambda does (functions/*/app.py all share the module name "app").
    spec = importlib.util.spec_from_file_location("bucket_notification_app", APP_PATH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


app = _load_app()

SAMPLE = load_event(EVENT)
OURS = app.QueueNotification.from_properties(SAMPLE["ResourceProperties"])
OUR_CONFIG = {"Id": OURS.configuration_id, "QueueArn": OURS.queue_arn, "Events": list(OURS.events)}
THEIR_QUEUE = {
    "Id": "theirs",
    "QueueArn": "arn:aws:sqs:us-east-1:123456789012:someone-else",
    "Events": ["s3:ObjectCreated:Put"],
    "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": "exports/"}]}},
}
OTHERS = {
    "TopicConfigurations": [
        {"Id": "audit", "TopicArn": "arn:aws:sns:us-east-1:123456789012:audit", "Events": ["s3:ObjectRemoved:*"]}
    ],
    "LambdaFunctionConfigurations": [
        {
            "Id": "thumbnails",
            "LambdaFunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:thumbs",
            "Events": ["s3:ObjectCreated:*"],
        }
    ],
    "EventBridgeConfiguration": {},
}
RESPONSE_METADATA = {"ResponseMetadata": {"HTTPStatusCode": 200, "RequestId": "x"}}


# ============================================================================ the pure computation


def test_properties_of_the_sample_event():
    assert OURS.bucket == "corp-file-server"
    assert OURS.account_id == "123456789012"
    assert OURS.queue_arn == "arn:aws:sqs:us-east-1:123456789012:docindex-dev-ingest"
    # lifecycle deletes and completed restores are their own event types in S3 notifications
    assert OURS.events == (
        "s3:ObjectCreated:*",
        "s3:ObjectRemoved:*",
        "s3:LifecycleExpiration:*",
        "s3:ObjectRestore:Completed",
    )
    assert OURS.physical_resource_id == "corp-file-server/docindex-docindex-dev"


@pytest.mark.parametrize("request_type", ["Create", "Update"])
def test_create_on_a_bucket_without_notifications_adds_only_ours(request_type):
    assert app.new_configuration(RESPONSE_METADATA, OURS, request_type) == {"QueueConfigurations": [OUR_CONFIG]}


@pytest.mark.parametrize("request_type", ["Create", "Update"])
def test_create_and_update_keep_every_other_configuration(request_type):
    current = {**RESPONSE_METADATA, **OTHERS, "QueueConfigurations": [THEIR_QUEUE]}
    before = copy.deepcopy(current)
    new = app.new_configuration(current, OURS, request_type)
    assert new == {**OTHERS, "QueueConfigurations": [THEIR_QUEUE, OUR_CONFIG]}
    assert current == before  # the configuration read from S3 is not modified


def test_update_replaces_our_previous_configuration_and_repeating_it_changes_nothing():
    # Given the bucket still has ours as an earlier deploy wrote it (other events)
    previous = {**OUR_CONFIG, "Events": ["s3:ObjectCreated:Put"]}
    current = {"QueueConfigurations": [previous, THEIR_QUEUE]}
    # When the stack is updated, twice
    once = app.new_configuration(current, OURS, "Update")
    twice = app.new_configuration(once, OURS, "Update")
    # Then exactly one configuration is ours, with the new events, next to theirs
    assert once == {"QueueConfigurations": [THEIR_QUEUE, OUR_CONFIG]}
    assert twice == once


@pytest.mark.parametrize("request_type", ["Create", "Update"])
def test_a_second_path_into_the_ingest_queue_is_refused(request_type):
    manual = {"Id": "manual", "QueueArn": OURS.queue_arn, "Events": ["s3:ObjectCreated:*"]}
    with pytest.raises(app.NotificationClash, match=r"\['manual'\]\); one path only"):
        app.new_configuration({"QueueConfigurations": [manual, OUR_CONFIG]}, OURS, request_type)


def test_delete_removes_only_ours():
    current = {**RESPONSE_METADATA, **OTHERS, "QueueConfigurations": [THEIR_QUEUE, OUR_CONFIG]}
    assert app.new_configuration(current, OURS, "Delete") == {**OTHERS, "QueueConfigurations": [THEIR_QUEUE]}


def test_delete_of_the_last_queue_configuration_drops_the_key():
    current = {"QueueConfigurations": [OUR_CONFIG], "EventBridgeConfiguration": {}}
    assert app.new_configuration(current, OURS, "Delete") == {"EventBridgeConfiguration": {}}


def test_delete_leaves_a_bucket_without_ours_as_it_is_even_with_a_manual_path():
    # Delete never refuses: a manual path into the queue is not ours to judge or remove
    manual = {"Id": "manual", "QueueArn": OURS.queue_arn, "Events": ["s3:ObjectCreated:*"]}
    current = {**OTHERS, "QueueConfigurations": [manual]}
    assert app.new_configuration(current, OURS, "Delete") == current
    assert app.new_configuration({}, OURS, "Delete") == {}


def test_response_body_is_what_cloudformation_expects():
    outcome = app.Outcome(app.SUCCESS, "ok", OURS.physical_resource_id)
    assert json.loads(app.response_body(SAMPLE, outcome)) == {
        "Status": "SUCCESS",
        "Reason": "ok",
        "PhysicalResourceId": "corp-file-server/docindex-docindex-dev",
        "StackId": SAMPLE["StackId"],
        "RequestId": SAMPLE["RequestId"],
        "LogicalResourceId": "ExistingBucketNotification",
    }


@pytest.mark.parametrize("url", ["file:///etc/passwd", "http://example.com/response", "ftp://example.com/x"])
def test_the_answer_goes_only_to_an_https_url(url):
    with pytest.raises(ValueError, match="not an https URL"):
        app.send_response(url, b"{}")


# ============================================================================ packaging


def test_the_function_is_self_contained():
    # No layer: only the standard library and the runtime's boto3/botocore.
    tree = ast.parse(APP_PATH.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported - set(sys.stdlib_module_names) == {"boto3", "botocore"}


PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules["app"] = module
spec.loader.exec_module(module)
print(json.dumps({"handler": callable(module.lambda_handler), "clients": module.s3_client.cache_info().currsize}))
"""


def test_importing_needs_no_credentials_and_creates_no_client():
    env = {"PATH": "/usr/bin:/bin", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(APP_PATH)], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"handler": True, "clients": 0}


# ============================================================================ the handler, moto server


@dataclass
class CloudFormation:
    """A local stand-in for the presigned ResponseURL: records every answer PUT to it."""

    url: str
    status: list[int]
    answers: list[dict[str, Any]] = field(default_factory=list)
    content_types: list[str | None] = field(default_factory=list)


@pytest.fixture
def cloudformation() -> Iterator[CloudFormation]:
    recorder = CloudFormation(url="", status=[200])

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            recorder.answers.append(json.loads(body))
            recorder.content_types.append(self.headers.get("Content-Type"))
            self.send_response(recorder.status[-1])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    recorder.url = f"http://{host}:{port}/response?X-Amz-Signature=0000"
    yield recorder
    server.shutdown()
    server.server_close()


@dataclass
class Deployment:
    """An existing bucket and the stack's ingest queue in moto server."""

    aws: Any
    bucket: str
    ingest: str

    def queue_arn(self, name: str) -> str:
        url = self.aws.sqs.create_queue(QueueName=name)["QueueUrl"]
        return self.aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def queue_configurations(self) -> list[dict[str, Any]]:
        got = self.aws.s3.get_bucket_notification_configuration(Bucket=self.bucket)
        return got.get("QueueConfigurations", [])


@pytest.fixture
def deployment(aws: Any) -> Deployment:
    suffix = uuid.uuid4().hex[:10]
    bucket = f"corp-file-server-{suffix}"
    aws.s3.create_bucket(Bucket=bucket)
    url = aws.sqs.create_queue(QueueName=f"docindex-{suffix}-ingest")["QueueUrl"]
    arn = aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return Deployment(aws, bucket, arn)


def request(
    request_type: str, deployment: Deployment, cloudformation: CloudFormation, **properties: Any
) -> dict[str, Any]:
    """events/custom-resource-create.json as CloudFormation would send it for this request."""
    event = load_event(EVENT)
    event["RequestType"] = request_type
    event["ResponseURL"] = cloudformation.url
    event["ResourceProperties"].update(Bucket=deployment.bucket, QueueArn=deployment.ingest)
    event["ResourceProperties"].update(properties)
    if request_type != "Create":
        event["PhysicalResourceId"] = f"{deployment.bucket}/{OURS.configuration_id}"
    if request_type == "Update":
        event["OldResourceProperties"] = dict(event["ResourceProperties"])
    return event


def invoke(event: dict[str, Any], deployment: Deployment, cloudformation: CloudFormation) -> dict[str, Any]:
    """Run the handler's request → S3 → answer path; the answer CloudFormation received."""
    sent = len(cloudformation.answers)
    outcome = app.process(event, lambda: deployment.aws.s3)
    assert len(cloudformation.answers) == sent + 1
    answer = cloudformation.answers[-1]
    assert (answer["Status"], answer["Reason"]) == (outcome.status, outcome.reason)
    return answer


@pytest.mark.integration
def test_lambda_handler_answers_the_sample_create_and_adds_the_notification(
    aws, deployment, cloudformation, monkeypatch
):
    # Given the sample event, pointed at a real bucket and queue, and the handler's own S3 client
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws.endpoint)
    app.s3_client.cache_clear()
    event = request("Create", deployment, cloudformation)
    # When Lambda invokes it
    try:
        assert app.lambda_handler(event, None) is None
    finally:
        app.s3_client.cache_clear()
    # Then CloudFormation hears SUCCESS over a PUT signed without Content-Type, and the bucket notifies the queue
    (answer,) = cloudformation.answers
    assert answer == {
        "Status": "SUCCESS",
        "Reason": "ok",
        "PhysicalResourceId": f"{deployment.bucket}/{OURS.configuration_id}",
        "StackId": SAMPLE["StackId"],
        "RequestId": SAMPLE["RequestId"],
        "LogicalResourceId": "ExistingBucketNotification",
    }
    assert cloudformation.content_types == [""]
    (config,) = deployment.queue_configurations()
    assert (config["Id"], config["QueueArn"]) == (OURS.configuration_id, deployment.ingest)
    assert sorted(config["Events"]) == [
        "s3:LifecycleExpiration:*",
        "s3:ObjectCreated:*",
        "s3:ObjectRemoved:*",
        "s3:ObjectRestore:Completed",
    ]


@pytest.mark.integration
def test_create_then_delete_keeps_the_other_notifications(deployment, cloudformation):
    # Given a bucket that already notifies someone else's queue
    theirs = {**THEIR_QUEUE, "QueueArn": deployment.queue_arn(f"someone-else-{uuid.uuid4().hex[:8]}")}
    deployment.aws.s3.put_bucket_notification_configuration(
        Bucket=deployment.bucket, NotificationConfiguration={"QueueConfigurations": [theirs]}
    )
    # When the stack is created, then deleted
    created = invoke(request("Create", deployment, cloudformation), deployment, cloudformation)
    after_create = deployment.queue_configurations()
    deleted = invoke(request("Delete", deployment, cloudformation), deployment, cloudformation)
    # Then ours was added next to theirs, and only ours was removed again
    assert created["Status"] == "SUCCESS"
    assert created["PhysicalResourceId"] == f"{deployment.bucket}/{OURS.configuration_id}"
    assert [c["Id"] for c in after_create] == ["theirs", OURS.configuration_id]
    assert after_create[1]["QueueArn"] == deployment.ingest
    assert deleted["Status"] == "SUCCESS"
    assert deployment.queue_configurations() == [theirs]


@pytest.mark.integration
def test_a_second_path_into_the_ingest_queue_fails_the_deploy_and_changes_nothing(deployment, cloudformation):
    # Given someone already pointed the bucket at the ingest queue by hand
    manual = {"Id": "manual", "QueueArn": deployment.ingest, "Events": ["s3:ObjectCreated:*"]}
    deployment.aws.s3.put_bucket_notification_configuration(
        Bucket=deployment.bucket, NotificationConfiguration={"QueueConfigurations": [manual]}
    )
    # When the stack is created
    answer = invoke(request("Create", deployment, cloudformation), deployment, cloudformation)
    # Then the deploy fails instead of doubling every notification
    assert answer["Status"] == "FAILED"
    assert answer["Reason"].startswith("NotificationClash: ")
    assert "one path only" in answer["Reason"]
    assert deployment.queue_configurations() == [manual]


@pytest.mark.integration
def test_update_replaces_ours_and_is_idempotent(deployment, cloudformation):
    invoke(request("Create", deployment, cloudformation), deployment, cloudformation)
    for _ in range(2):
        update = request("Update", deployment, cloudformation, Events=["s3:ObjectCreated:*"])
        assert invoke(update, deployment, cloudformation)["Status"] == "SUCCESS"
    (config,) = deployment.queue_configurations()
    assert (config["Id"], config["Events"]) == (OURS.configuration_id, ["s3:ObjectCreated:*"])


@pytest.mark.integration
def test_delete_tolerates_a_gone_bucket_but_create_does_not(deployment, cloudformation):
    gone = f"bucket-that-is-gone-{uuid.uuid4().hex[:8]}"
    deleted = invoke(request("Delete", deployment, cloudformation, Bucket=gone), deployment, cloudformation)
    assert deleted["Status"] == "SUCCESS"
    assert deleted["PhysicalResourceId"] == f"{gone}/{OURS.configuration_id}"
    created = invoke(request("Create", deployment, cloudformation, Bucket=gone), deployment, cloudformation)
    assert created["Status"] == "FAILED"
    assert "NoSuchBucket" in created["Reason"]


@pytest.mark.integration
def test_a_request_without_its_properties_is_answered_failed_not_left_hanging(deployment, cloudformation):
    event = request("Create", deployment, cloudformation)
    del event["ResourceProperties"]["QueueArn"]
    answer = invoke(event, deployment, cloudformation)
    assert answer["Status"] == "FAILED"
    assert answer["Reason"] == "KeyError: 'QueueArn'"
    assert answer["PhysicalResourceId"] == "ExistingBucketNotification"
    assert deployment.queue_configurations() == []


@pytest.mark.integration
def test_an_undelivered_answer_raises_and_the_retry_is_safe(deployment, cloudformation):
    # Given CloudFormation's URL refuses the answer (Lambda retries an invocation that raises)
    cloudformation.status.append(403)
    event = request("Create", deployment, cloudformation)
    with pytest.raises(OSError, match="403"):
        app.process(event, lambda: deployment.aws.s3)
    # When Lambda retries and the answer gets through
    cloudformation.status.append(200)
    answer = invoke(event, deployment, cloudformation)
    # Then the bucket holds ours once
    assert answer["Status"] == "SUCCESS"
    assert [c["Id"] for c in deployment.queue_configurations()] == [OURS.configuration_id]
