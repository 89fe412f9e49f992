"""pause / resume against moto server: the mapping, the OCR service and its scaling bounds."""

from __future__ import annotations

import json

import pytest

from docindex.core.clients import AwsClients
from docindex.ops.deployment import Deployment
from docindex.ops.pause import PAUSE_ITEM_ID, PipelineControl, StepStatus
from tests.conftest import REGION, Stack
from tests.integration.test_diagnose import deploy_function

pytestmark = pytest.mark.integration


def deploy_worker(stack: Stack, clients: AwsClients, *, desired: int, low: int, high: int) -> tuple[str, str]:
    """The OCR worker's ECS service and its Application Auto Scaling target, as the template creates them."""
    ecs = clients.client("ecs")
    cluster = f"{stack.bucket}-cluster"
    ecs.create_cluster(clusterName=cluster)
    ecs.register_task_definition(family=cluster, containerDefinitions=[{"name": "worker", "image": "w", "memory": 512}])
    ecs.create_service(cluster=cluster, serviceName="worker", taskDefinition=cluster, desiredCount=desired)
    clients.client("application-autoscaling").register_scalable_target(
        ServiceNamespace="ecs",
        ResourceId=f"service/{cluster}/worker",
        ScalableDimension="ecs:service:DesiredCount",
        MinCapacity=low,
        MaxCapacity=high,
    )
    return cluster, "worker"


def state(stack: Stack, clients: AwsClients, cluster: str) -> tuple[str, int, tuple[int, int]]:
    mapping = clients.client("lambda").list_event_source_mappings(EventSourceArn=stack.env["INGEST_QUEUE_ARN"])
    service = clients.client("ecs").describe_services(cluster=cluster, services=["worker"])["services"][0]
    target = clients.client("application-autoscaling").describe_scalable_targets(
        ServiceNamespace="ecs", ResourceIds=[f"service/{cluster}/worker"]
    )["ScalableTargets"][0]
    return (
        mapping["EventSourceMappings"][0]["State"],
        service["desiredCount"],
        (target["MinCapacity"], target["MaxCapacity"]),
    )


def test_pause_stops_the_consumers_and_resume_restores_them(stack: Stack) -> None:
    # Given a deployed indexer mapping and an OCR worker at 2 tasks (bounds 1..5), with messages waiting
    clients = AwsClients(REGION, endpoint_url=stack.aws.endpoint)
    function = deploy_function(stack, timeout=30, response_types=["ReportBatchItemFailures"])
    cluster, service = deploy_worker(stack, clients, desired=2, low=1, high=5)
    stack.messages("INGEST_QUEUE_URL", delete=True)
    stack.aws.sqs.send_message(QueueUrl=stack.env["INGEST_QUEUE_URL"], MessageBody=json.dumps({"waiting": 1}))
    env = {k: v for k, v in stack.settings_env().items() if k != "AWS_ENDPOINT_URL"}
    deployment = Deployment.from_environment(env).with_overrides(
        function_name=function, ecs_cluster=cluster, ecs_service=service
    )
    control = PipelineControl(deployment, clients, wait_seconds=0)

    # When paused
    paused = control.pause()
    # Then the mapping is disabled, the service and its bounds are at zero, the state is recorded
    assert paused.exit_code == 0
    assert [s.status for s in paused.steps] == [StepStatus.CHANGED, StepStatus.CHANGED]
    assert state(stack, clients, cluster) == ("Disabled", 0, (0, 0))
    item = stack.aws.dynamodb.get_item(TableName=stack.env["LEDGER_TABLE"], Key={"id": {"S": PAUSE_ITEM_ID}})["Item"]
    recorded = json.loads(item["state"]["S"])
    assert (recorded["desired_count"], recorded["min_capacity"], recorded["max_capacity"]) == (2, 1, 5)
    # and the message is still in its queue
    assert len(stack.messages("INGEST_QUEUE_URL")) == 1

    # When paused again, the first record (not the zeros) is kept
    again = control.pause()
    assert {s.status for s in again.steps} == {StepStatus.UNCHANGED}
    assert any("already paused since" in note for note in again.notes)

    # When resumed
    resumed = control.resume()
    # Then everything is as it was before the pause, and the record is gone
    assert resumed.exit_code == 0
    assert state(stack, clients, cluster) == ("Enabled", 2, (1, 5))
    assert "Item" not in stack.aws.dynamodb.get_item(
        TableName=stack.env["LEDGER_TABLE"], Key={"id": {"S": PAUSE_ITEM_ID}}
    )


def test_dry_run_changes_nothing(stack: Stack) -> None:
    clients = AwsClients(REGION, endpoint_url=stack.aws.endpoint)
    function = deploy_function(stack, timeout=30, response_types=["ReportBatchItemFailures"])
    cluster, service = deploy_worker(stack, clients, desired=1, low=0, high=3)
    env = {k: v for k, v in stack.settings_env().items() if k != "AWS_ENDPOINT_URL"}
    deployment = Deployment.from_environment(env).with_overrides(
        function_name=function, ecs_cluster=cluster, ecs_service=service
    )
    report = PipelineControl(deployment, clients, wait_seconds=0).pause(dry_run=True)
    assert [s.status for s in report.steps] == [StepStatus.PLANNED, StepStatus.PLANNED]
    assert state(stack, clients, cluster) == ("Enabled", 1, (0, 3))


def test_locally_there_is_nothing_to_pause_but_the_runner(stack: Stack) -> None:
    deployment = Deployment.from_environment(stack.settings_env())
    report = PipelineControl(deployment, AwsClients(REGION, endpoint_url=stack.aws.endpoint)).pause()
    assert report.exit_code == 1
    assert {s.status for s in report.steps} == {StepStatus.SKIPPED}
    assert "Ctrl-C" in report.steps[0].detail
