"""Where the pipeline is: a stack's outputs, parameters and resources; an env file."""

from __future__ import annotations

from typing import Any

from docindex.core.aws import queue_name
from docindex.ops.deployment import Deployment, opensearch_service_of
from docindex.ops.pause import OperationReport, PauseState, Step, StepStatus

AOSS_ARN = "arn:aws:aoss:ap-northeast-1:123456789012:collection/abc123"


class FakeCloudFormation:
    def __init__(self, **parameters: str) -> None:
        self.parameters = {
            "OpenSearchEndpoint": "https://search-docs.es.amazonaws.com",
            "NotificationMode": "eventbridge",
            "WorkerMaxTasks": "10",
            **parameters,
        }

    def describe_stacks(self, StackName: str) -> dict[str, Any]:
        return {
            "Stacks": [
                {
                    "StackName": StackName,
                    "Parameters": [{"ParameterKey": k, "ParameterValue": v} for k, v in self.parameters.items()],
                    "Outputs": [
                        {"OutputKey": "DocumentsBucketName", "OutputValue": "docs-bucket"},
                        {
                            "OutputKey": "IngestQueueUrl",
                            "OutputValue": "https://sqs.ap-northeast-1.amazonaws.com/1/ingest",
                        },
                        {"OutputKey": "IndexerFunctionName", "OutputValue": "prod-IndexerFunction-X"},
                    ],
                }
            ]
        }

    def get_paginator(self, name: str) -> Any:
        assert name == "list_stack_resources"

        class Paginator:
            def paginate(self, StackName: str) -> list[dict[str, Any]]:
                return [
                    {
                        "StackResourceSummaries": [
                            {
                                "LogicalResourceId": "IndexerFunctionIngestQueue",
                                "ResourceType": "AWS::Lambda::EventSourceMapping",
                                "PhysicalResourceId": "3f1c-uuid",
                            },
                            {
                                "LogicalResourceId": "WorkerService",
                                "ResourceType": "AWS::ECS::Service",
                                "PhysicalResourceId": "arn:aws:ecs:ap-northeast-1:1:service/prod/prod-worker",
                            },
                            {
                                "LogicalResourceId": "IngestRule",
                                "ResourceType": "AWS::Events::Rule",
                                "PhysicalResourceId": "docindex-prod-ingest",
                            },
                            # An output wins over the resource
                            {
                                "LogicalResourceId": "DocumentsBucket",
                                "ResourceType": "AWS::S3::Bucket",
                                "PhysicalResourceId": "ignored",
                            },
                        ]
                    }
                ]

        return Paginator()


def test_a_stack_gives_outputs_parameters_and_resources() -> None:
    d = Deployment.from_stack(FakeCloudFormation(), "prod", region="ap-northeast-1", endpoint_url=None)
    assert d.source == "stack prod"
    assert (d.bucket, d.function_name, d.notification_mode) == ("docs-bucket", "prod-IndexerFunction-X", "eventbridge")
    assert d.opensearch_endpoint == "https://search-docs.es.amazonaws.com"
    assert d.event_source_mapping_ids == ("3f1c-uuid",)
    assert (d.ecs_service, d.eventbridge_rule) == ("prod-worker", "docindex-prod-ingest")
    assert d.parameters["WorkerMaxTasks"] == "10"
    assert not d.is_local


def test_the_sigv4_service_follows_the_opensearch_arn_as_in_the_template() -> None:
    # A stack of the current template has no OpenSearchService parameter: the ARN says aoss
    d = Deployment.from_stack(FakeCloudFormation(OpenSearchArn=AOSS_ARN), "s", region="r", endpoint_url=None)
    assert (d.opensearch_service, d.opensearch_auth) == ("aoss", "sigv4")
    # An older stack's parameter cannot contradict its ARN
    old = FakeCloudFormation(OpenSearchArn=AOSS_ARN, OpenSearchService="es")
    assert Deployment.from_stack(old, "s", region="r", endpoint_url=None).opensearch_service == "aoss"
    assert Deployment.from_stack(FakeCloudFormation(), "s", region="r", endpoint_url=None).opensearch_service == "es"
    assert Deployment.from_environment({"OPENSEARCH_ARN": AOSS_ARN}).opensearch_service == "aoss"
    assert opensearch_service_of("arn:aws:es:us-east-1:123456789012:domain/docs") == "es"
    assert opensearch_service_of("not-an-arn") is None


def test_the_local_env_file() -> None:
    env = {
        "DOCINDEX_BUCKET": "docindex-documents",
        "INGEST_QUEUE_URL": "http://127.0.0.1:5000/123456789012/docindex-ingest",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:5000",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "OPENSEARCH_AUTH": "none",
        "LOCAL_FUNCTION_TIMEOUT": "10",
    }
    d = Deployment.from_environment(env, source="env file x")
    assert d.is_local
    assert (d.region, d.local_function_timeout, d.opensearch_auth) == ("eu-west-1", 10, "none")
    assert d.with_overrides(bucket="other", ledger_table=None).bucket == "other"
    assert queue_name(d.ingest_queue_url or "") == "docindex-ingest"
    assert queue_name("arn:aws:sqs:us-east-1:1:q-dlq") == "q-dlq"
    assert "is_local" in d.to_dict()


def test_operation_exit_codes_and_pause_state() -> None:
    def report(*statuses: StepStatus) -> OperationReport:
        return OperationReport("pause", False, [Step("c", s, "") for s in statuses])

    assert report(StepStatus.CHANGED, StepStatus.UNCHANGED).exit_code == 0
    assert report(StepStatus.CHANGED, StepStatus.SKIPPED).exit_code == 1
    assert report(StepStatus.SKIPPED, StepStatus.FAILED).exit_code == 2
    state = PauseState("2026-11-20T09:00:00Z", {"u": True}, "c", "s", 3, 0, 10)
    assert PauseState.from_dict(state.to_dict()) == state
