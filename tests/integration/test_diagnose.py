"""diagnose against moto server and a real OpenSearch node."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import pytest

from devkit.messages import s3_notification
from docindex.cli import main
from docindex.core.clients import AwsClients
from docindex.ops.deployment import Deployment
from docindex.ops.diagnose.report import Diagnosis, Status
from docindex.ops.diagnose.run import Diagnoser
from tests.conftest import REGION, Stack

pytestmark = pytest.mark.integration


def local(stack: Stack) -> Deployment:
    """The deployment as `docindex local up`'s env file describes it."""
    return Deployment.from_environment(stack.settings_env(), source="env file")


def diagnose(
    stack: Stack,
    deployment: Deployment | None = None,
    *,
    only: list[str] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> Diagnosis:
    diagnoser = Diagnoser(
        deployment or local(stack),
        AwsClients(REGION, endpoint_url=stack.aws.endpoint),
        opensearch=stack.opensearch,
        sample_seconds=0.2,
        sleep=sleep or (lambda _: None),
    )
    return diagnoser.run(only=only)


def statuses(diagnosis: Diagnosis) -> dict[str, str]:
    return {c.id: c.status.value for c in diagnosis.checks}


def test_a_correctly_provisioned_local_stack_passes(stack: Stack) -> None:
    # Given the local stack, its queue drained (the S3 test event consumed, as `local run` would)
    stack.messages("INGEST_QUEUE_URL", delete=True)
    # When diagnosed
    diagnosis = diagnose(stack)
    # Then everything that exists locally is OK, and what does not is skipped with the reason
    assert statuses(diagnosis) == {
        "notifications": "OK",
        "visibility": "OK",
        "redrive-ingest": "OK",
        "redrive-ocr": "OK",
        "redrive-embed": "OK",
        "event-source": "SKIP",
        "dlq-ingest": "OK",
        "dlq-ocr": "OK",
        "dlq-embed": "OK",
        "backlog-ingest": "OK",
        "backlog-ocr": "OK",
        "backlog-embed": "OK",
        "permissions": "SKIP",
        "index": "OK",
        "domain-security": "SKIP",
        "bucket-security": "SKIP",
        "ocr-worker": "SKIP",
    }
    assert diagnosis.exit_code == 0
    skipped = {c.id: c.summary for c in diagnosis.checks if c.status is Status.SKIP}
    assert "docindex local run" in skipped["event-source"]


def test_both_notification_paths_are_flagged(stack: Stack) -> None:
    # Given the incident's bucket: the queue configuration AND EventBridge delivery with a rule to the queue
    s3, events = stack.aws.s3, _client(stack, "events")
    config = s3.get_bucket_notification_configuration(Bucket=stack.bucket)
    config.pop("ResponseMetadata")
    s3.put_bucket_notification_configuration(
        Bucket=stack.bucket, NotificationConfiguration={**config, "EventBridgeConfiguration": {}}
    )
    pattern = {"source": ["aws.s3"], "detail-type": ["Object Created"], "detail": {"bucket": {"name": [stack.bucket]}}}
    rule = f"{stack.bucket}-to-ingest"
    events.put_rule(Name=rule, EventPattern=json.dumps(pattern))
    events.put_targets(Rule=rule, Targets=[{"Id": "ingest", "Arn": stack.env["INGEST_QUEUE_ARN"]}])
    stack.messages("INGEST_QUEUE_URL", delete=True)
    s3.put_object(Bucket=stack.bucket, Key="営業部/週報.txt", Body="今週".encode())
    # When diagnosed
    diagnosis = diagnose(stack, only=["notifications"])
    # Then the duplicate path is a failure, with the evidence and the command that removes it
    [check] = diagnosis.checks
    assert check.status is Status.FAIL
    assert "every upload is announced twice" in check.summary
    assert any(rule in line for line in check.evidence)
    assert f"aws events remove-targets --rule {rule} --ids ingest" in str(check.fix)
    assert diagnosis.exit_code == 2
    # and the sampled messages are still in the queue (peeked, not consumed)
    assert sorted(("Records" in json.loads(m["Body"])) for m in stack.messages("INGEST_QUEUE_URL")) == [False, True]


def test_a_too_short_visibility_timeout_is_flagged(make_stack: Callable[..., Stack]) -> None:
    below_six_times = make_stack(function_timeout=10, visibility_timeout=15)
    check = diagnose(below_six_times, only=["visibility"]).checks[0]
    assert check.status is Status.WARN
    shorter_than_the_work = make_stack(function_timeout=10, visibility_timeout=5)
    check = diagnose(shorter_than_the_work, only=["visibility"]).checks[0]
    assert check.status is Status.FAIL
    assert "processed twice" in check.summary
    assert "docindex local up --visibility-timeout 60" in str(check.fix)


def test_dlq_messages_are_summarised_and_left_in_place(stack: Stack) -> None:
    dlq = stack.env["INGEST_DLQ_URL"]
    bodies = ["<html>not a change</html>", json.dumps(s3_notification(stack.bucket, "scans/a.pdf"))] * 3
    stack.aws.sqs.send_message_batch(
        QueueUrl=dlq, Entries=[{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies)]
    )
    check = diagnose(stack, only=["dlq-ingest"]).checks[0]
    assert check.status is Status.WARN
    assert check.summary.startswith("6 dead-lettered message(s)")
    assert "3 × s3 created .pdf" in check.evidence
    assert any(line.startswith("3 × poison: body is not JSON") for line in check.evidence)
    assert len(stack.messages("INGEST_DLQ_URL")) == 6


def test_backlog_trend_from_two_depth_samples(stack: Stack) -> None:
    url = stack.env["INGEST_QUEUE_URL"]
    sqs = stack.aws.sqs

    def send(n: int) -> None:
        for _ in range(0, n, 10):
            sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": "{}"} for i in range(10)])

    def consume(n: int) -> None:
        for _ in range(n // 10):
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
            sqs.delete_message_batch(
                QueueUrl=url, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
            )

    send(40)
    # While the depth is sampled, producers outrun the consumer ...
    growing = diagnose(stack, only=["backlog-ingest"], sleep=lambda _: send(20)).checks[0]
    assert growing.status is Status.FAIL
    assert growing.summary.startswith("growing by")
    # ... or the consumer catches up
    draining = diagnose(stack, only=["backlog-ingest"], sleep=lambda _: consume(30)).checks[0]
    assert draining.status is Status.OK
    assert draining.summary.startswith("drains in")


def _client(stack: Stack, service: str) -> Any:
    return AwsClients(REGION, endpoint_url=stack.aws.endpoint).client(service)


def deploy_function(stack: Stack, *, timeout: int, response_types: list[str]) -> str:
    """An indexer function with its role and its event source mapping, the way the template deploys them."""
    iam, lam = _client(stack, "iam"), _client(stack, "lambda")
    name = f"{stack.bucket}-indexer"
    role = iam.create_role(
        RoleName=name,
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
                ],
            }
        ),
    )["Role"]["Arn"]
    iam.put_role_policy(
        RoleName=name,
        PolicyName="indexer",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "sqs:*", "Resource": stack.env["INGEST_QUEUE_ARN"]}],
            }
        ),
    )
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("app.py", "def lambda_handler(event, context):\n    return {}\n")
    lam.create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role=role,
        Handler="app.lambda_handler",
        Code={"ZipFile": code.getvalue()},
        Timeout=timeout,
    )
    lam.create_event_source_mapping(
        FunctionName=name,
        EventSourceArn=stack.env["INGEST_QUEUE_ARN"],
        BatchSize=10,
        MaximumBatchingWindowInSeconds=2,
        FunctionResponseTypes=response_types,
        ScalingConfig={"MaximumConcurrency": 20},
    )
    return name


def test_aws_checks_against_moto(stack: Stack) -> None:
    # Given a function, its mapping (without partial batch responses) and a queue policy naming a queue URL
    function = deploy_function(stack, timeout=5, response_types=[])
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Send",
                "Effect": "Allow",
                "Principal": "*",
                "Action": "sqs:SendMessage",
                "Resource": stack.env["INGEST_QUEUE_URL"],
            }
        ],
    }
    stack.aws.sqs.set_queue_attributes(
        QueueUrl=stack.env["INGEST_QUEUE_URL"], Attributes={"Policy": json.dumps(policy)}
    )
    # When diagnosed as a deployment on AWS (no local endpoint in the deployment; clients bound to moto)
    deployment = Deployment.from_environment({k: v for k, v in stack.settings_env().items() if k != "AWS_ENDPOINT_URL"})
    diagnosis = diagnose(
        stack,
        deployment.with_overrides(function_name=function),
        only=["visibility", "event-source", "permissions"],
    )
    checks = {c.id: c for c in diagnosis.checks}
    # Then the function's real timeout and batching window are used
    assert checks["visibility"].status is Status.OK
    assert checks["visibility"].data == {"visibility": 60, "function_timeout": 5, "batching_window": 2}
    # the mapping that fails whole batches is a failure
    assert checks["event-source"].status is Status.FAIL
    assert "does not report batch item failures" in checks["event-source"].summary
    # and the queue URL used as a policy resource is found (moto has no policy simulator)
    permissions = checks["permissions"]
    assert permissions.status is Status.FAIL
    assert "is not an ARN (a URL: IAM needs the ARN" in permissions.summary
    assert "policy simulation: not available on this endpoint" in permissions.evidence


def test_diagnose_reads_a_stack(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a CloudFormation stack with template.yaml's outputs (moto cannot run the SAM transform)
    cfn = _client(stack, "cloudformation")
    name = f"{stack.bucket}-stack"
    template = {
        "Parameters": {"NotificationMode": {"Type": "String", "Default": "s3"}},
        "Resources": {"Placeholder": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{name}-p"}}},
        "Outputs": {
            "DocumentsBucketName": {"Value": stack.bucket},
            "IngestQueueUrl": {"Value": stack.env["INGEST_QUEUE_URL"]},
            "OcrQueueUrl": {"Value": stack.env["OCR_QUEUE_URL"]},
            "LedgerTableName": {"Value": stack.env["LEDGER_TABLE"]},
        },
    }
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(template))
    monkeypatch.setenv("AWS_ENDPOINT_URL", stack.aws.endpoint)
    # When the CLI diagnoses it by name
    code = main(["diagnose", "--stack", name, "--check", "redrive", "--check", "notifications", "--json"])
    report = json.loads(capsys.readouterr().out)
    # Then the resources come from the stack
    assert report["deployment"]["source"] == f"stack {name}"
    assert report["deployment"]["bucket"] == stack.bucket
    assert report["deployment"]["notification_mode"] == "s3"
    assert [c["id"] for c in report["checks"]] == ["notifications", "redrive-ingest", "redrive-ocr"]
    assert {c["status"] for c in report["checks"]} == {"OK"}
    assert code == 0
    # and an unknown stack is an error the user can read
    assert main(["diagnose", "--stack", "no-such-stack"]) == 2
    assert "no-such-stack" in capsys.readouterr().err


# ----------------------------------------------------------------- domain and bucket security (moto)

OPEN_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "es:ESHttp*", "Resource": "*"}],
}


def security_diagnosis(stack: Stack, domain: str) -> dict[str, Any]:
    deployment = local(stack).with_overrides(
        opensearch_arn=f"arn:aws:es:{REGION}:123456789012:domain/{domain}",
        parameters={"ExistingBucketName": stack.bucket},
    )
    diagnosis = diagnose(stack, deployment, only=["domain-security", "bucket-security"])
    return {c.id: c for c in diagnosis.checks}


def test_an_unprotected_domain_and_bucket_fail_with_their_fixes(stack: Stack) -> None:
    # Given a domain without node-to-node encryption, TLS 1.0 allowed, open to anyone,
    # and an existing bucket without a TLS-only policy and without versioning
    opensearch = boto3_client(stack, "opensearch")
    domain = f"open-{stack.bucket[:10]}"
    opensearch.create_domain(
        DomainName=domain,
        EncryptionAtRestOptions={"Enabled": True},
        NodeToNodeEncryptionOptions={"Enabled": False},
        DomainEndpointOptions={"EnforceHTTPS": True, "TLSSecurityPolicy": "Policy-Min-TLS-1-0-2019-07"},
        AccessPolicies=json.dumps(OPEN_POLICY),
    )
    # When diagnosed
    checks = security_diagnosis(stack, domain)
    # Then both fail, saying what is wrong and how to fix it
    domain_check, bucket_check = checks["domain-security"], checks["bucket-security"]
    assert domain_check.status is Status.FAIL
    assert "node-to-node encryption is off" in domain_check.summary
    assert "TLS 1.0/1.1" in domain_check.summary
    assert "allows anyone" in domain_check.summary
    assert "--node-to-node-encryption-options Enabled=true" in (domain_check.fix or "")
    assert bucket_check.status is Status.FAIL
    assert "does not deny requests without TLS" in bucket_check.summary
    assert "versioning is off" in bucket_check.summary
    assert f"put-bucket-versioning --bucket {stack.bucket}" in (bucket_check.fix or "")


def test_a_protected_domain_and_bucket_pass(stack: Stack) -> None:
    # Given a domain encrypted, HTTPS-only with TLS 1.2, fine-grained access control on,
    # and a bucket with a TLS-only policy, default encryption and versioning
    opensearch = boto3_client(stack, "opensearch")
    domain = f"safe-{stack.bucket[:10]}"
    opensearch.create_domain(
        DomainName=domain,
        EncryptionAtRestOptions={"Enabled": True},
        NodeToNodeEncryptionOptions={"Enabled": True},
        DomainEndpointOptions={"EnforceHTTPS": True, "TLSSecurityPolicy": "Policy-Min-TLS-1-2-2019-07"},
        AdvancedSecurityOptions={"Enabled": True, "InternalUserDatabaseEnabled": False},
    )
    s3 = stack.aws.s3
    tls_only = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [f"arn:aws:s3:::{stack.bucket}", f"arn:aws:s3:::{stack.bucket}/*"],
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ],
    }
    s3.put_bucket_policy(Bucket=stack.bucket, Policy=json.dumps(tls_only))
    s3.put_bucket_encryption(
        Bucket=stack.bucket,
        ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}}]
        },
    )
    s3.put_bucket_versioning(Bucket=stack.bucket, VersioningConfiguration={"Status": "Enabled"})
    # When diagnosed
    checks = security_diagnosis(stack, domain)
    # Then both pass
    assert {k: (c.status, c.summary) for k, c in checks.items()} == {
        "domain-security": (Status.OK, "encrypted, HTTPS only"),
        "bucket-security": (Status.OK, "TLS only, encrypted, versioned"),
    }


def boto3_client(stack: Stack, service: str) -> Any:
    import boto3

    return boto3.client(service, endpoint_url=stack.aws.endpoint, region_name=REGION)
