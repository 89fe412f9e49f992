"""template.yaml makes the causes of the original incident impossible (docs/architecture.md).

The template is loaded with cfn-lint's YAML loader and evaluated for every deployment
shape (notification mode x created/existing bucket x managed/serverless OpenSearch) by
tests/support/template_model.py. The last section breaks a copy of the template on purpose
to prove the checks catch what they claim to.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, load_event
from tests.support.template_model import (
    DOCINDEX_METRICS,
    EXISTING_BUCKET,
    OPENSEARCH_ARNS,
    REDRIVE_DLQ_ACTIONS,
    TEMPLATE_PATH,
    Scenario,
    all_deployment_shapes,
    as_list,
    by_type,
    check_dead_letter_queues,
    check_least_privilege,
    check_log_groups,
    check_notification_paths,
    check_opensearch_service,
    check_queue_protection,
    check_visibility_timeout,
    copy_template,
    dashboard_body,
    iam_statements,
    ingest_queue,
    load_template,
    notification_paths,
    ref_target,
    scenarios,
)

TEMPLATE = load_template()
SHAPES = list(all_deployment_shapes(TEMPLATE))
SHAPE_IDS = [
    f"{s.params['NotificationMode']}-{'existing' if s.params['ExistingBucketName'] else 'created'}"
    f"-{'aoss' if s.condition('IsServerless') else 'es'}{'-vpc' if s.params['FunctionsInVpc'] == 'true' else ''}"
    for s in SHAPES
]


@pytest.fixture
def template() -> dict[str, Any]:
    """A private copy for tests that break it."""
    return copy_template(TEMPLATE)


def default_resources(**overrides: str) -> dict[str, dict[str, Any]]:
    return Scenario(TEMPLATE, overrides).resources()


def env(resources: dict[str, dict[str, Any]], function: str) -> dict[str, Any]:
    return resources[function]["Properties"]["Environment"]["Variables"]


# ------------------------------------------------------------------ the incident's causes


def test_ingest_visibility_timeout_covers_six_indexer_timeouts_plus_batching_window():
    assert check_visibility_timeout(TEMPLATE) == []


def test_indexer_timeout_and_visibility_come_from_the_same_mapping_row():
    # Given the allowed timeouts and the mapping rows
    timeouts = TEMPLATE["Parameters"]["IndexerTimeout"]["AllowedValues"]
    rows = TEMPLATE["Mappings"]["IndexerTimeouts"]
    window_max = TEMPLATE["Parameters"]["IndexerBatchingWindow"]["MaxValue"]
    # Then every allowed value has exactly one row, and the row is self-consistent
    assert sorted(rows, key=int) == sorted(timeouts, key=int)
    for key, row in rows.items():
        assert row["FunctionTimeout"] == int(key)
        assert row["BatchingWindowMax"] == window_max
        assert row["QueueVisibilityTimeout"] >= 6 * row["FunctionTimeout"] + row["BatchingWindowMax"]
        assert row["QueueVisibilityTimeout"] <= 43200  # SQS maximum (12 h)
    # And both consumers read the row chosen by the one parameter
    raw = TEMPLATE["Resources"]
    assert raw["IndexerFunction"]["Properties"]["Timeout"] == {
        "Fn::FindInMap": ["IndexerTimeouts", {"Ref": "IndexerTimeout"}, "FunctionTimeout"]
    }
    assert raw["IngestQueue"]["Properties"]["VisibilityTimeout"] == {
        "Fn::FindInMap": ["IndexerTimeouts", {"Ref": "IndexerTimeout"}, "QueueVisibilityTimeout"]
    }


def test_batching_window_is_at_least_one_second_so_any_batch_size_is_valid():
    window = TEMPLATE["Parameters"]["IndexerBatchingWindow"]
    assert window["MinValue"] >= 1
    assert TEMPLATE["Parameters"]["IndexerBatchSize"]["MaxValue"] <= 10000


@pytest.mark.parametrize("scenario", SHAPES, ids=SHAPE_IDS)
def test_failed_messages_are_dead_lettered(scenario):
    assert check_dead_letter_queues(scenario) == []


@pytest.mark.parametrize("scenario", SHAPES, ids=SHAPE_IDS)
def test_every_queue_is_encrypted_tls_only_and_admits_only_its_sender(scenario):
    assert check_queue_protection(scenario) == []


@pytest.mark.parametrize("scenario", SHAPES, ids=SHAPE_IDS)
def test_exactly_one_notification_path_of_the_chosen_kind(scenario):
    assert check_notification_paths(scenario) == []


def test_notification_conditions_are_complements_for_every_mode():
    for mode in TEMPLATE["Parameters"]["NotificationMode"]["AllowedValues"]:
        scenario = Scenario(TEMPLATE, {"NotificationMode": mode})
        assert scenario.condition("UseS3Notifications") != scenario.condition("UseEventBridge")
    assert TEMPLATE["Parameters"]["NotificationMode"]["AllowedValues"] == ["s3", "eventbridge"]


def test_each_mode_yields_the_expected_path_resource():
    expected = {
        ("s3", ""): "DocumentsBucket",
        ("s3", EXISTING_BUCKET): "ExistingBucketNotification",
        ("eventbridge", ""): "IngestRule",
        ("eventbridge", EXISTING_BUCKET): "IngestRule",
    }
    for (mode, bucket), resource in expected.items():
        paths = notification_paths(Scenario(TEMPLATE, {"NotificationMode": mode, "ExistingBucketName": bucket}))
        assert [p.resource for p in paths] == [resource], (mode, bucket)


def test_created_bucket_in_eventbridge_mode_sends_to_eventbridge_only():
    bucket = default_resources(NotificationMode="eventbridge")["DocumentsBucket"]["Properties"]
    assert bucket["NotificationConfiguration"] == {"EventBridgeConfiguration": {"EventBridgeEnabled": True}}


def test_eventbridge_target_retries_only_delivery_and_dead_letters_to_the_ingest_dlq():
    rule = default_resources(NotificationMode="eventbridge")["IngestRule"]["Properties"]
    (target,) = rule["Targets"]
    assert ref_target(target["DeadLetterConfig"]["Arn"]) == "IngestDlq"
    assert target["RetryPolicy"]["MaximumEventAgeInSeconds"] <= 3600
    assert rule["EventPattern"]["detail-type"] == ["Object Created", "Object Deleted", "Object Restore Completed"]


def test_existing_bucket_notification_is_managed_by_the_custom_resource_only_in_s3_mode():
    s3_mode = default_resources(ExistingBucketName=EXISTING_BUCKET)
    notification = s3_mode["ExistingBucketNotification"]["Properties"]
    assert notification["Bucket"] == EXISTING_BUCKET
    assert sorted(notification["Events"]) == [
        "s3:LifecycleExpiration:*",
        "s3:ObjectCreated:*",
        "s3:ObjectRemoved:*",
        "s3:ObjectRestore:Completed",
    ]
    assert "DocumentsBucket" not in s3_mode
    eventbridge_mode = default_resources(ExistingBucketName=EXISTING_BUCKET, NotificationMode="eventbridge")
    assert "ExistingBucketNotification" not in eventbridge_mode
    assert "BucketNotificationFunction" not in eventbridge_mode


def test_custom_resource_function_is_the_self_contained_code_in_functions():
    # The behaviour is tested in tests/unit/test_bucket_notification.py; here, that the template runs it.
    resources = default_resources(ExistingBucketName=EXISTING_BUCKET)
    function = resources["BucketNotificationFunction"]
    props = function["Properties"]
    assert function["Type"] == "AWS::Serverless::Function"
    assert props["CodeUri"] == "functions/bucket_notification/"
    assert props["Handler"] == "app.lambda_handler"
    assert (REPO_ROOT / props["CodeUri"] / "app.py").is_file()
    assert "Layers" not in props  # the runtime's boto3 is all it needs
    assert props["Tracing"] == "PassThrough"  # overrides Globals: its role needs no X-Ray
    service_token = resources["ExistingBucketNotification"]["Properties"]["ServiceToken"]
    assert ref_target(service_token) == "BucketNotificationFunction"
    assert ref_target(props["Role"]) == "BucketNotificationRole"


def test_custom_resource_role_holds_only_its_logs_and_the_bucket_notification_calls():
    resources = default_resources(ExistingBucketName=EXISTING_BUCKET)
    statements = _statements_of(resources, "BucketNotificationRole")
    assert set(statements) == {"Logs", "BucketNotification"}
    assert ref_target(statements["Logs"]["Resource"]) == "BucketNotificationLogGroup"
    bucket = statements["BucketNotification"]
    assert sorted(bucket["Action"]) == ["s3:GetBucketNotification", "s3:PutBucketNotification"]
    assert bucket["Resource"] == {"Fn::Sub": "arn:${AWS::Partition}:s3:::${ExistingBucketName}"}


# ------------------------------------------------------------------ IAM


@pytest.mark.parametrize("scenario", SHAPES, ids=SHAPE_IDS)
def test_iam_is_least_privilege_with_arns(scenario):
    assert check_least_privilege(scenario) == []


def _statements_of(resources: dict[str, dict[str, Any]], role: str) -> dict[str, dict[str, Any]]:
    return {s["Sid"]: s for owner, s in iam_statements(resources) if owner == role}


def test_redrive_has_exactly_the_background_permissions_on_dlqs_and_sources():
    resources = default_resources()
    statements = _statements_of(resources, "RedriveRole")
    dlq_side = statements["MoveMessagesOutOfDlqs"]
    assert set(dlq_side["Action"]) == REDRIVE_DLQ_ACTIONS
    assert {ref_target(r) for r in dlq_side["Resource"]} == {"IngestDlq", "OcrDlq", "EmbedDlq"}
    source_side = statements["MoveMessagesIntoSources"]
    assert "sqs:SendMessage" in source_side["Action"]
    assert {ref_target(r) for r in source_side["Resource"]} == {"IngestQueue", "OcrQueue", "EmbedQueue"}
    # ThroughputProbe (REDRIVE_ADAPTIVE_FRACTION) calls GetMetricStatistics, nothing calls GetMetricData
    assert statements["ReadQueueMetrics"]["Action"] == "cloudwatch:GetMetricStatistics"
    assert statements["ReadQueueMetrics"]["Resource"] == "*"
    assert {ref_target(r) for r in as_list(statements["RedriveState"]["Resource"])} == {"LedgerTable"}
    assert statements["ClusterHealth"]["Action"] == "es:ESHttpGet"
    sqs_actions = {a for s in statements.values() for a in as_list(s["Action"]) if a.startswith("sqs:")}
    assert sqs_actions == REDRIVE_DLQ_ACTIONS | {"sqs:SendMessage"}


def test_indexer_and_worker_reach_opensearch_by_the_service_of_its_arn():
    for service, role, sid, action in (
        ("es", "IndexerRole", "IndexExists", "es:ESHttpHead"),
        ("es", "WorkerTaskRole", "ReadAndWriteDocuments", "es:ESHttpGet"),
        ("aoss", "IndexerRole", "WriteIndexServerless", "aoss:APIAccessAll"),
        ("aoss", "WorkerTaskRole", "WriteIndexServerless", "aoss:APIAccessAll"),
    ):
        resources = default_resources(OpenSearchArn=OPENSEARCH_ARNS[service])
        statement = _statements_of(resources, role)[sid]
        assert action in as_list(statement["Action"])


def _opensearch_grants(role: str) -> dict[str, set[str]]:
    """es action -> the paths under the domain it is granted on (OpenSearchIndex=documents)."""
    scenario = Scenario(TEMPLATE, {"OpenSearchIndex": "documents"})
    domain = scenario.params["OpenSearchArn"]
    grants: dict[str, set[str]] = {}
    for owner, statement in iam_statements(scenario.resources()):
        if owner != role:
            continue
        for action in as_list(statement["Action"]):
            if action.startswith("es:"):
                paths = {scenario.render(r).removeprefix(domain) for r in as_list(statement["Resource"])}
                grants.setdefault(action, set()).update(paths)
    return grants


def test_only_the_indexer_creates_the_index_and_no_role_deletes_through_http():
    # Deletes are _bulk items; the worker writes documents only (tests/integration/test_role_grants.py
    # proves each grant is used and nothing else is needed)
    assert _opensearch_grants("IndexerRole") == {
        "es:ESHttpHead": {"/documents"},
        "es:ESHttpPut": {"/documents-v*", "/documents/_mapping"},  # create; add later fields (access stamps)
        "es:ESHttpGet": {"/documents/_doc/*"},
        "es:ESHttpPost": {"/documents/_bulk"},
    }
    assert _opensearch_grants("WorkerTaskRole") == {
        "es:ESHttpGet": {"/documents/_doc/*"},
        "es:ESHttpPost": {"/documents/_doc/*"},
    }


def test_the_execution_role_pulls_only_the_worker_image_repository():
    for uri, repository in (
        ("123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/docindex-worker:1", "docindex-worker"),
        ("123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/team/ocr/worker@sha256:" + "a" * 64, "team/ocr/worker"),
        ("123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/docindex-worker:2026.1", "docindex-worker"),
    ):
        scenario = Scenario(TEMPLATE, {"WorkerImageUri": uri})
        pull = _statements_of(scenario.resources(), "WorkerExecutionRole")["PullWorkerImage"]
        assert scenario.render(pull["Resource"]) == (
            f"arn:aws:ecr:ap-northeast-1:123456789012:repository/{repository}"
        ), uri


def test_only_the_indexer_the_worker_and_the_redrive_may_send_ocr_jobs():
    resources = default_resources()
    policy = resources["OcrQueuePolicy"]["Properties"]["PolicyDocument"]
    statements = {s["Sid"]: s for s in as_list(policy["Statement"])}
    only = statements["OnlyTheIndexerTheWorkerAndTheRedriveSendJobs"]
    assert (only["Effect"], only["Principal"], only["Action"]) == ("Deny", "*", "sqs:SendMessage")
    assert ref_target(only["Resource"]) == "OcrQueue"
    admitted = {ref_target(arn) for arn in only["Condition"]["ArnNotEquals"]["aws:PrincipalArn"]}
    # The worker sends the page-range jobs of long scans (docindex.worker.ranges)
    assert admitted == {"IndexerRole", "WorkerTaskRole", "RedriveRole"}
    # The roles that send to it are exactly those
    senders = {
        owner
        for owner, s in iam_statements(resources)
        if "sqs:SendMessage" in as_list(s["Action"]) and "OcrQueue" in {ref_target(r) for r in as_list(s["Resource"])}
    }
    assert senders == admitted
    # AWS services acting on their own (no role of the stack) are not the principals this denies
    assert only["Condition"]["Bool"] == {"aws:PrincipalIsAWSService": "false"}
    # No Allow in the queue policy: the roles' own identity policies grant the sends
    assert all(s["Effect"] == "Deny" for s in statements.values())


def test_indexer_reads_objects_sends_ocr_jobs_and_writes_tables():
    statements = _statements_of(default_resources(), "IndexerRole")
    assert set(statements["ReadDocuments"]["Action"]) == {"s3:GetObject", "s3:GetObjectVersion"}
    assert statements["HandOffOcrJobs"]["Action"] == "sqs:SendMessage"
    assert ref_target(statements["HandOffOcrJobs"]["Resource"]) == "OcrQueue"
    # Meaning search's embed jobs go to their own queue (workers of older releases never poll it)
    assert statements["QueueEmbedJobs"]["Action"] == "sqs:SendMessage"
    assert ref_target(statements["QueueEmbedJobs"]["Resource"]) == "EmbedQueue"
    assert ref_target(statements["Idempotency"]["Resource"]) == "IdempotencyTable"
    assert ref_target(statements["Ledger"]["Resource"]) == "LedgerTable"
    # Ledger.still_current (before every write attempt) reads the ledger in batches
    assert "dynamodb:BatchGetItem" in statements["Ledger"]["Action"]


def test_worker_can_extend_visibility_on_the_ocr_and_embed_queues_only():
    statements = _statements_of(default_resources(), "WorkerTaskRole")
    consume = statements["ConsumeOcrQueue"]
    assert "sqs:ChangeMessageVisibility" in consume["Action"]
    assert {ref_target(r) for r in as_list(consume["Resource"])} == {"OcrQueue", "EmbedQueue"}
    # It sends page-range jobs, and defers a newer release's job, to the queue it came from
    assert {ref_target(r) for r in as_list(statements["SendPageRangeJobs"]["Resource"])} == {"OcrQueue", "EmbedQueue"}
    assert not any("cloudwatch:PutMetricData" in as_list(s["Action"]) for s in statements.values())


@pytest.mark.parametrize("scenario", SHAPES, ids=SHAPE_IDS)
def test_sigv4_service_and_opensearch_iam_follow_the_arn(scenario):
    assert check_opensearch_service(scenario) == []


def test_the_sigv4_service_is_not_a_free_parameter():
    # OpenSearchService could say es for a collection ARN (and vice versa); the ARN decides now
    assert "OpenSearchService" not in TEMPLATE["Parameters"]
    for service, arn in OPENSEARCH_ARNS.items():
        scenario = Scenario(TEMPLATE, {"OpenSearchArn": arn})
        assert scenario.condition("IsServerless") is (service == "aoss")
        variables = env(scenario.resources(), "RedriveFunction")
        assert variables["OPENSEARCH_SERVICE"] == service


# ------------------------------------------------------------------ functions, layer, worker


def test_globals_set_runtime_architecture_tracing_and_powertools():
    function = TEMPLATE["Globals"]["Function"]
    assert function["Runtime"] == "python3.13"
    assert function["Architectures"] == ["arm64"]
    assert function["Tracing"] == "Active"
    variables = function["Environment"]["Variables"]
    assert variables["POWERTOOLS_METRICS_NAMESPACE"] == "DocIndex"
    assert {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_LOG_LEVEL"} <= set(variables)


def test_layer_is_built_by_sam_for_python313_arm64():
    layer = TEMPLATE["Resources"]["DocIndexLayer"]
    assert layer["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": "arm64"}
    assert layer["Properties"]["ContentUri"] == "layers/docindex/"
    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    # The pinned closure exactly (tests/unit/test_layer_lock.py), for the runtime's Python and CPU,
    # with the package itself under python/ where Lambda looks.
    makefile = (REPO_ROOT / "layers" / "docindex" / "Makefile").read_text()
    assert "build-DocIndexLayer:" in makefile
    assert "--no-deps" in makefile
    assert "--platform manylinux2014_aarch64" in makefile
    assert "--python-version 3.13" in makefile
    assert '"$(ARTIFACTS_DIR)/python/docindex"' in makefile


def test_indexer_event_source_reports_partial_failures_and_caps_concurrency():
    resources = default_resources()
    indexer = resources["IndexerFunction"]["Properties"]
    assert indexer["CodeUri"] == "functions/indexer/"
    assert indexer["Handler"] == "app.lambda_handler"
    assert [ref_target(layer) for layer in indexer["Layers"]] == ["DocIndexLayer"]
    event = indexer["Events"]["IngestQueue"]["Properties"]
    assert event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert 2 <= event["ScalingConfig"]["MaximumConcurrency"] <= 1000
    assert event["BatchSize"] >= 1
    assert event["MaximumBatchingWindowInSeconds"] >= 1
    assert ingest_queue(resources) == "IngestQueue"


@pytest.mark.parametrize("scenario", SHAPES, ids=SHAPE_IDS)
def test_every_function_and_the_worker_log_to_an_explicit_group_with_retention(scenario):
    assert check_log_groups(scenario) == []


COMMON_ENV = {
    "OPENSEARCH_ENDPOINT",
    "OPENSEARCH_INDEX",
    "OPENSEARCH_AUTH",
    "OPENSEARCH_SERVICE",
    "IDEMPOTENCY_TABLE",
    "LEDGER_TABLE",
}


def test_indexer_environment():
    variables = env(default_resources(OpenSearchArn=OPENSEARCH_ARNS["aoss"]), "IndexerFunction")
    assert set(variables) == COMMON_ENV | {
        "OCR_QUEUE_URL",
        "EMBED_QUEUE_URL",
        "INGEST_QUEUE_URL",
        "INDEXER_CONCURRENCY",
        "MAX_OBJECT_BYTES",
        "MTIME_METADATA_KEYS",
        "CONTENT_CACHE_BUCKET",
        "ACCESS_MAP_URI",
        "DOCINDEX_ADMIN_GROUP",
        "EMBEDDINGS",
        "EMBEDDING_MODEL",
    }
    assert variables["OPENSEARCH_SERVICE"] == "aoss"
    assert variables["OPENSEARCH_AUTH"] == "sigv4"
    assert variables["MAX_OBJECT_BYTES"] == 67108864
    assert variables["INDEXER_CONCURRENCY"] == 16
    assert ref_target(variables["OCR_QUEUE_URL"]) == "OcrQueue"
    assert ref_target(variables["EMBED_QUEUE_URL"]) == "EmbedQueue"


def test_redrive_environment_and_schedule():
    scenario = Scenario(TEMPLATE)
    resources = scenario.resources()
    variables = env(resources, "RedriveFunction")
    assert set(variables) == COMMON_ENV | {
        "REDRIVE_DLQ_ARNS",
        "REDRIVE_VELOCITY",
        "REDRIVE_STATE_TABLE",
        "REDRIVE_MAX_SOURCE_BACKLOG",
        "REDRIVE_ADAPTIVE_FRACTION",
        "REDRIVE_DESTINATIONS",
    }
    dlq_arns = scenario.render(variables["REDRIVE_DLQ_ARNS"]).split(",")
    assert dlq_arns == [scenario.render({"Fn::GetAtt": [q, "Arn"]}) for q in ("IngestDlq", "OcrDlq", "EmbedDlq")]
    assert ref_target(variables["REDRIVE_STATE_TABLE"]) == "LedgerTable"
    velocity = TEMPLATE["Parameters"]["RedriveVelocity"]
    assert (velocity["Default"], velocity["MinValue"], velocity["MaxValue"]) == (10, 1, 500)
    fraction = TEMPLATE["Parameters"]["RedriveAdaptiveFraction"]
    assert (fraction["Default"], fraction["MinValue"], fraction["MaxValue"]) == (0, 0, 1)
    assert variables["REDRIVE_ADAPTIVE_FRACTION"] == 0
    schedule = resources["RedriveFunction"]["Properties"]["Events"]["Schedule"]
    assert schedule["Type"] == "ScheduleV2"
    assert json.loads(schedule["Properties"]["Input"]) == {"action": "start"}


def redrive_settings(**parameters: str) -> Any:
    """The RedriveFunction's environment, rendered for these parameters, read as the function reads it."""
    from docindex.redrive.settings import RedriveSettings

    scenario = Scenario(TEMPLATE, parameters)
    variables = env(scenario.resources(), "RedriveFunction")
    rendered = {name: scenario.render(value) for name, value in variables.items()}
    # Lambda hands every value over as a string; a table's Ref stays unresolved by the model (any name will do).
    return RedriveSettings.from_env(
        {k: str(v) if isinstance(v, str | int | float) else "table" for k, v in rendered.items()}
    )


@pytest.mark.parametrize("mode", ["s3", "eventbridge"])
def test_redrive_names_a_destination_for_every_dlq_and_may_send_only_there(mode):
    # eventbridge mode dead-letters undeliverable events into the ingest DLQ: they have no SQS
    # source, so a move without DestinationArn would fail on them
    scenario = Scenario(TEMPLATE, {"NotificationMode": mode})
    resources = scenario.resources()
    settings = redrive_settings(NotificationMode=mode)
    source_of = {
        scenario.render(q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]): scenario.render(
            {"Fn::GetAtt": [name, "Arn"]}
        )
        for name, q in by_type(resources, "AWS::SQS::Queue").items()
        if "RedrivePolicy" in q["Properties"]
    }
    assert settings.destinations == {dlq: source_of[dlq] for dlq in settings.configured_dlqs()}
    sendable = {
        scenario.render(r)
        for s in _statements_of(resources, "RedriveRole").values()
        if "sqs:SendMessage" in as_list(s["Action"])
        for r in as_list(s["Resource"])
    }
    assert sendable == set(settings.destinations.values())


def test_redrive_adaptive_fraction_parameter_reaches_the_function_and_defaults_to_off():
    assert redrive_settings().adaptive_fraction == 0.0  # the behaviour before the parameter existed
    assert redrive_settings(RedriveAdaptiveFraction="0.25").adaptive_fraction == 0.25


def test_worker_task_runs_the_worker_module_with_its_environment():
    resources = default_resources(WorkerConcurrency="4")
    task = resources["WorkerTaskDefinition"]["Properties"]
    (container,) = task["ContainerDefinitions"]
    assert container["Command"] == ["python", "-m", "docindex.worker"]
    names = {e["Name"]: e["Value"] for e in container["Environment"]}
    assert COMMON_ENV | {"OCR_QUEUE_URL", "OCR_LANGUAGES", "OCR_DPI", "WORKER_HEARTBEAT_SECONDS"} <= set(names)
    assert names["WORKER_CONCURRENCY"] == 4
    assert names["POWERTOOLS_METRICS_NAMESPACE"] == "DocIndex"
    assert task["RequiresCompatibilities"] == ["FARGATE"]


def test_worker_task_has_a_read_only_root_and_scratch_space_for_its_largest_object():
    from docindex.worker.config import WorkerSettings

    task = default_resources()["WorkerTaskDefinition"]["Properties"]
    (container,) = task["ContainerDefinitions"]
    names = {e["Name"]: e["Value"] for e in container["Environment"]}
    # Only the scratch volume is writable, and the worker and every library write there.
    assert container["ReadonlyRootFilesystem"] is True
    (mount,) = container["MountPoints"]
    assert (mount["SourceVolume"], mount["ReadOnly"]) == ("scratch", False)
    assert {v["Name"] for v in task["Volumes"]} == {"scratch"}
    assert names["WORKER_TMP_DIR"] == names["TMPDIR"] == mount["ContainerPath"]
    # The task's ephemeral storage holds the largest object it may stream to disk, plus its image.
    largest = int(names["WORKER_MAX_OBJECT_BYTES"])
    assert largest == WorkerSettings.model_fields["max_object_bytes"].default
    assert task["EphemeralStorage"]["SizeInGiB"] * 1024**3 >= largest + 4 * 1024**3


def test_worker_image_base_is_pinned_by_digest():
    dockerfile = (REPO_ROOT / "worker" / "Dockerfile").read_text(encoding="utf-8")
    bases = re.findall(r"^ARG PYTHON_BASE=(\S+)$", dockerfile, flags=re.MULTILINE)
    froms = re.findall(r"^FROM (\S+)", dockerfile, flags=re.MULTILINE)
    # The engine's build stage and the image: both on the pinned base.
    assert froms == ["${PYTHON_BASE}", "${PYTHON_BASE}"]
    assert len(bases) == 1
    assert re.fullmatch(r"[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}", bases[0])


def test_worker_concurrency_is_left_to_the_cpu_count_by_default():
    (container,) = default_resources()["WorkerTaskDefinition"]["Properties"]["ContainerDefinitions"]
    assert "WORKER_CONCURRENCY" not in {e["Name"] for e in container["Environment"]}


def test_ocr_visibility_is_sized_for_the_heartbeat_not_the_longest_job():
    settings = TEMPLATE["Mappings"]["Queues"]["Settings"]
    heartbeat, visibility = settings["WorkerHeartbeatSeconds"], settings["OcrVisibilityTimeout"]
    assert 120 <= visibility <= 300
    assert visibility >= 4 * heartbeat  # several missed heartbeats before a job reappears
    queue = default_resources()["OcrQueue"]["Properties"]
    assert queue["VisibilityTimeout"] == visibility


def test_worker_scales_on_backlog_per_task_down_to_zero_and_back():
    resources = default_resources()
    target = resources["WorkerScalableTarget"]["Properties"]
    assert target["MinCapacity"] == 0
    policies = by_type(resources, "AWS::ApplicationAutoScaling::ScalingPolicy")
    tracking = [p for p in policies.values() if p["Properties"]["PolicyType"] == "TargetTrackingScaling"]
    (tracking_policy,) = tracking
    metrics = tracking_policy["Properties"]["TargetTrackingScalingPolicyConfiguration"][
        "CustomizedMetricSpecification"
    ]["Metrics"]
    (expression,) = [m["Expression"] for m in metrics if m.get("ReturnData")]
    assert "/ running" in expression
    running = next(m for m in metrics if m["Id"] == "running")
    assert running["MetricStat"]["Metric"]["MetricName"] == "RunningTaskCount"
    # Scale-out from zero and scale-in to zero are step policies driven by alarms.
    alarms = by_type(resources, "AWS::CloudWatch::Alarm")
    actions = {
        ref_target(a): name for name, alarm in alarms.items() for a in alarm["Properties"].get("AlarmActions", [])
    }
    wake = policies["WorkerWakePolicy"]["Properties"]["StepScalingPolicyConfiguration"]
    assert wake["StepAdjustments"] == [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}]
    assert "WorkerWakePolicy" in actions
    idle = policies["WorkerIdlePolicy"]["Properties"]["StepScalingPolicyConfiguration"]
    assert idle["AdjustmentType"] == "ExactCapacity"
    assert idle["StepAdjustments"][0]["ScalingAdjustment"] == 0
    assert "WorkerIdlePolicy" in actions


def test_worker_service_leaves_the_task_count_to_auto_scaling():
    service = default_resources()["WorkerService"]["Properties"]
    assert "DesiredCount" not in service
    network = service["NetworkConfiguration"]["AwsvpcConfiguration"]
    assert network["Subnets"] == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]


def test_a_worker_deployment_keeps_the_old_tasks_until_the_new_ones_run():
    # Old and new workers may share the OCR queue (docs/deploy.md#upgrades-old-and-new-consumers-on-one-queue):
    # nothing forces a gap without workers.
    deployment = default_resources()["WorkerService"]["Properties"]["DeploymentConfiguration"]
    assert (deployment["MinimumHealthyPercent"], deployment["MaximumPercent"]) == (100, 200)
    assert deployment["DeploymentCircuitBreaker"] == {"Enable": True, "Rollback": True}


def test_fargate_cpu_memory_rules_cover_every_cpu_value():
    rules = TEMPLATE["Rules"]
    covered = {rule["RuleCondition"]["Fn::Equals"][1] for rule in rules.values()}
    assert covered == set(TEMPLATE["Parameters"]["WorkerCpu"]["AllowedValues"])
    memories = set(TEMPLATE["Parameters"]["WorkerMemory"]["AllowedValues"])
    for rule in rules.values():
        (assertion,) = rule["Assertions"]
        assert set(assertion["Assert"]["Fn::Contains"][0]) <= memories


# ------------------------------------------------------------------ tables


def test_tables_are_on_demand_recoverable_and_encrypted():
    resources = default_resources()
    for name in ("IdempotencyTable", "LedgerTable"):
        props = resources[name]["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
        assert props["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": "S"}]
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert props["SSESpecification"]["SSEEnabled"] is True
    assert resources["IdempotencyTable"]["Properties"]["TimeToLiveSpecification"] == {
        "AttributeName": "expiration",
        "Enabled": True,
    }
    assert "TimeToLiveSpecification" not in resources["LedgerTable"]["Properties"]


# ------------------------------------------------------------------ alarms, dashboard, outputs


def _alarms_on(resources: dict[str, dict[str, Any]], metric: str) -> dict[str, Any]:
    return {
        name: alarm["Properties"]
        for name, alarm in by_type(resources, "AWS::CloudWatch::Alarm").items()
        if alarm["Properties"].get("MetricName") == metric
    }


def test_alarms_cover_dlqs_age_indexer_and_ocr_backlog_and_notify_the_topic():
    scenario = Scenario(TEMPLATE)
    resources = scenario.resources()

    def watched(metric: str) -> set[str]:
        return {
            scenario.render(d["Value"])
            for alarm in _alarms_on(resources, metric).values()
            for d in alarm["Dimensions"]
            if alarm.get("AlarmActions")
        }

    queue = {
        q: scenario.render({"Fn::GetAtt": [q, "QueueName"]})
        for q in ("IngestDlq", "OcrDlq", "EmbedDlq", "IngestQueue", "OcrQueue")
    }
    assert {queue["IngestDlq"], queue["OcrDlq"], queue["EmbedDlq"]} <= watched("ApproximateNumberOfMessagesVisible")
    assert {queue["IngestQueue"], queue["OcrQueue"]} <= watched("ApproximateAgeOfOldestMessage")
    assert {"IndexerFunction"} == {
        ref_target(d["Value"]) for a in _alarms_on(resources, "Errors").values() for d in a["Dimensions"]
    }
    assert _alarms_on(resources, "Throttles")
    for name, alarm in _alarms_on(resources, "ApproximateNumberOfMessagesVisible").items():
        assert alarm["Threshold"] == 0, name
        assert alarm["ComparisonOperator"] == "GreaterThanThreshold", name
        assert [ref_target(a) for a in alarm["AlarmActions"]] == ["AlarmTopic"], name


def test_alarm_email_subscription_exists_only_when_an_address_is_given():
    assert "AlarmEmailSubscription" not in default_resources()
    subscribed = default_resources(AlarmEmail="ops@example.com")["AlarmEmailSubscription"]["Properties"]
    assert subscribed["Endpoint"] == "ops@example.com"


def test_dashboard_shows_every_docindex_metric_and_queue_depths():
    scenario = Scenario(TEMPLATE)
    body = dashboard_body(scenario)
    text = json.dumps(body)
    for metric in DOCINDEX_METRICS:
        assert f'MetricName=\\"{metric}\\"' in text, metric
    assert 'service=\\"docindex-dev\\"' in text
    for queue in ("IngestQueue", "IngestDlq", "OcrQueue", "OcrDlq", "EmbedQueue", "EmbedDlq"):
        assert scenario.render({"Fn::GetAtt": [queue, "QueueName"]}) in text


def test_outputs_give_queues_bucket_tables_and_dashboard():
    expected = {
        "DocumentsBucketName",
        "IngestQueueUrl",
        "IngestQueueArn",
        "IngestDlqUrl",
        "IngestDlqArn",
        "OcrQueueUrl",
        "OcrQueueArn",
        "EmbedQueueUrl",
        "EmbedQueueArn",
        "EmbedDlqUrl",
        "EmbedDlqArn",
        "OcrDlqUrl",
        "OcrDlqArn",
        "IdempotencyTableName",
        "LedgerTableName",
        "DashboardUrl",
    }
    assert expected <= set(TEMPLATE["Outputs"])
    for scenario in scenarios(TEMPLATE, ExistingBucketName=["", EXISTING_BUCKET]):
        bucket = scenario.resolve(TEMPLATE["Outputs"]["DocumentsBucketName"]["Value"])
        assert bucket == ({"Ref": "DocumentsBucket"} if scenario.condition("CreateBucket") else EXISTING_BUCKET)


def test_every_resource_has_a_why_comment_above_it():
    lines = TEMPLATE_PATH.read_text(encoding="utf-8").splitlines()
    in_resources = False
    found, missing = [], []
    for index, line in enumerate(lines):
        if line == "Resources:":
            in_resources = True
        elif in_resources and line and not line.startswith((" ", "#")):
            break
        elif in_resources and line.startswith("  ") and not line.startswith("   ") and line.rstrip().endswith(":"):
            found.append(line.strip())
            if not lines[index - 1].strip().startswith("#"):
                missing.append(line.strip())
    assert len(found) == len(TEMPLATE["Resources"])
    assert missing == []


# ------------------------------------------------------------------ the checks can fail


def test_checker_catches_a_visibility_timeout_that_is_too_short(template):
    # Given a template whose 300 s row gives the queue only 5 x the timeout
    template["Mappings"]["IndexerTimeouts"]["300"]["QueueVisibilityTimeout"] = 1500
    # Then the invariant check names the broken combination
    problems = check_visibility_timeout(template)
    assert problems
    assert all("IndexerTimeout=300" in p for p in problems)


def test_checker_catches_a_timeout_without_a_mapping_row(template):
    template["Parameters"]["IndexerTimeout"]["AllowedValues"].append("450")
    assert any("IndexerTimeout=450" in p for p in check_visibility_timeout(template))


def test_checker_catches_both_notification_paths_at_once(template):
    # Given the incident's mistake: the rule exists in s3 mode too
    template["Resources"]["IngestRule"]["Condition"] = "CreateBucket"
    problems = check_notification_paths(Scenario(template, {"NotificationMode": "s3"}))
    assert any("2 notification paths" in p for p in problems)


def test_checker_catches_a_notification_created_before_the_queue_policy(template):
    del template["Resources"]["DocumentsBucket"]["DependsOn"]
    problems = check_notification_paths(Scenario(template))
    assert any("does not depend on the ingest queue policy" in p for p in problems)


def test_checker_catches_a_low_max_receive_count_and_short_dlq_retention(template):
    template["Mappings"]["Queues"]["Settings"]["MaxReceiveCount"] = 3
    template["Mappings"]["Queues"]["Settings"]["DlqRetentionSeconds"] = 604800
    problems = check_dead_letter_queues(Scenario(template))
    assert any("maxReceiveCount 3 < 5" in p for p in problems)
    assert any("not longer than" in p for p in problems)


def test_checker_catches_a_dlq_that_does_not_name_its_source(template):
    template["Resources"]["OcrDlq"]["Properties"]["RedriveAllowPolicy"]["sourceQueueArns"] = ["arn:aws:sqs:x:1:other"]
    assert any("does not name OcrQueue" in p for p in check_dead_letter_queues(Scenario(template)))


def test_checker_catches_an_unencrypted_queue_and_a_missing_tls_deny(template):
    del template["Resources"]["OcrDlq"]["Properties"]["SqsManagedSseEnabled"]
    template["Resources"]["OcrQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"] = []
    problems = check_queue_protection(Scenario(template))
    assert any("OcrDlq: not encrypted" in p for p in problems)
    assert any("OcrQueue: no policy statement denies" in p for p in problems)


def test_checker_catches_a_sender_without_source_conditions(template):
    statement = template["Resources"]["IngestQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    del statement["Fn::If"][1]["Condition"]["StringEquals"]
    problems = check_queue_protection(Scenario(template))
    assert any("without aws:SourceArn and aws:SourceAccount" in p for p in problems)


def test_checker_catches_wildcards_and_queue_urls_in_iam(template):
    statements = template["Resources"]["IndexerRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    statements.append({"Sid": "Lazy", "Effect": "Allow", "Action": "s3:*", "Resource": "*"})
    statements.append({"Sid": "Url", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": {"Ref": "OcrQueue"}})
    problems = check_least_privilege(Scenario(template))
    assert any("wildcard action s3:*" in p for p in problems)
    assert any("Resource '*'" in p for p in problems)
    assert any("given by URL" in p for p in problems)


def test_checker_catches_a_sigv4_service_that_disagrees_with_the_arn(template):
    # Given the old shape: serverless-ness decided by something other than the ARN
    template["Conditions"]["IsServerless"] = {"Fn::Equals": ["es", "aoss"]}
    problems = check_opensearch_service(Scenario(template, {"OpenSearchArn": OPENSEARCH_ARNS["aoss"]}))
    assert any("OPENSEARCH_SERVICE 'es' for an aoss ARN" in p for p in problems)
    assert any("['es'] actions for an aoss ARN" in p for p in problems)


def test_checker_catches_a_function_without_its_log_group(template):
    del template["Resources"]["RedriveFunction"]["Properties"]["LoggingConfig"]
    assert any("RedriveFunction" in p for p in check_log_groups(Scenario(template)))


# ------------------------------------------------------------------ samconfig.toml


def _samconfig() -> dict[str, Any]:
    config = tomllib.loads((TEMPLATE_PATH.parent / "samconfig.toml").read_text(encoding="utf-8"))
    for environment in config.values():
        if isinstance(environment, dict) and "deploy" in environment:
            overrides = environment["deploy"]["parameters"].get("parameter_overrides", "")
            environment["deploy"]["overrides"] = dict(pair.split("=", 1) for pair in shlex.split(overrides))
    return config


def test_samconfig_has_default_dev_and_prod_deployable_environments():
    config = _samconfig()
    stages = {}
    for name in ("default", "dev", "prod"):
        deploy = config[name]["deploy"]
        assert config[name]["global"]["parameters"]["stack_name"].startswith("docindex-")
        assert deploy["parameters"]["resolve_s3"] is True
        assert "CAPABILITY_IAM" in deploy["parameters"]["capabilities"]
        overrides = deploy["overrides"]
        # Every override names a template parameter and is a value that parameter accepts.
        for key, value in overrides.items():
            spec = TEMPLATE["Parameters"][key]
            if "AllowedValues" in spec:
                assert value in [str(v) for v in spec["AllowedValues"]], (name, key)
            if "MaxValue" in spec:
                assert spec.get("MinValue", 0) <= int(value) <= spec["MaxValue"], (name, key)
        stages[name] = overrides["Stage"]
        Scenario(TEMPLATE, overrides).resources()  # the conditions evaluate for these values
    assert stages["dev"] == "dev"
    assert stages["prod"] == "prod"
    assert len(set(stages.values())) == 3  # Stage names resources: environments must not collide
    assert config["prod"]["deploy"]["parameters"]["confirm_changeset"] is True


def test_readme_commands_name_the_stacks_samconfig_deploys():
    # `sam remote invoke ... --stack-name docindex` named a stack no environment creates
    stacks = {env["global"]["parameters"]["stack_name"] for env in _samconfig().values() if isinstance(env, dict)}
    readme = (TEMPLATE_PATH.parent / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"--stack(?:-name)?[ =]([\w.-]+)", readme)) - {"NAME"}
    assert named
    assert named <= stacks, sorted(named - stacks)


def test_functions_join_the_vpc_only_when_asked():
    assert "VpcConfig" not in default_resources()["IndexerFunction"]["Properties"]
    resources = default_resources(FunctionsInVpc="true")
    for function in ("IndexerFunction", "RedriveFunction"):
        vpc = resources[function]["Properties"]["VpcConfig"]
        assert vpc["SubnetIds"] == ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]
    for role in ("IndexerRole", "RedriveRole"):
        assert "VpcNetworkInterfaces" in _statements_of(resources, role)
        assert "VpcNetworkInterfaces" not in _statements_of(default_resources(), role)


# ------------------------------------------------------------------ the existing-bucket custom resource


CUSTOM_RESOURCE_EVENT = "custom-resource-create.json"


def test_custom_resource_sample_event_is_what_cloudformation_sends_for_the_template():
    # `sam local invoke BucketNotificationFunction -e events/custom-resource-create.json` and
    # tests/unit/test_bucket_notification.py use it: it must carry exactly the properties the
    # template gives the resource
    event = load_event(CUSTOM_RESOURCE_EVENT)
    resource = TEMPLATE["Resources"][event["LogicalResourceId"]]
    assert event["RequestType"] == "Create"
    assert event["ResourceType"] == resource["Type"] == "Custom::BucketQueueNotification"
    assert {"ServiceToken", "ResponseURL", "StackId", "RequestId"} <= set(event)
    properties = event["ResourceProperties"]
    assert set(properties) == set(resource["Properties"])
    assert properties["ServiceToken"] == event["ServiceToken"]
    assert properties["Events"] == resource["Properties"]["Events"]
    assert properties["Bucket"] == EXISTING_BUCKET
    stack_name = event["StackId"].split("/")[1]
    assert resource["Properties"]["ConfigurationId"] == {"Fn::Sub": "docindex-${AWS::StackName}"}
    assert properties["ConfigurationId"] == f"docindex-{stack_name}"


def test_content_cache_is_a_private_encrypted_bounded_bucket_only_the_indexer_and_worker_write():
    resources = default_resources()
    bucket = resources["ContentCacheBucket"]["Properties"]
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    (rule,) = bucket["LifecycleConfiguration"]["Rules"]
    assert rule["Status"] == "Enabled"
    assert rule["ExpirationInDays"] == 90
    policy = resources["ContentCacheBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert policy[0]["Effect"] == "Deny"
    assert policy[0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    users = set()
    for owner, statement in iam_statements(resources):
        if "ContentCacheBucket" in json.dumps(statement.get("Resource")):
            users.add(owner)
            actions = set(as_list(statement["Action"]))
            if "s3:DeleteObject" in actions:
                # only the worker deletes, and only the page-range parts it stored
                assert owner == "WorkerTaskRole"
                assert statement["Sid"] == "OcrPageRanges"
                assert "/ocr-ranges/*" in json.dumps(statement["Resource"])
                actions.discard("s3:DeleteObject")
            assert actions <= {"s3:GetObject", "s3:PutObject", "s3:ListBucket"}
            if owner == "SearchRole":
                # the search function only reads the OCR'd words' boxes (a preview's marks)
                assert statement["Sid"] == "ReadOcrWordBoxes"
                assert actions == {"s3:GetObject"}
                assert "/ocr-words/*" in json.dumps(statement["Resource"])
    assert users == {"IndexerRole", "WorkerTaskRole", "SearchRole"}


def test_kms_decrypt_is_granted_on_exactly_the_bucket_key_and_only_when_one_is_given():
    key = "arn:aws:kms:ap-northeast-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    # the search function signs download URLs: S3 decrypts them with its rights
    for role in ("IndexerRole", "WorkerTaskRole", "SearchRole"):
        assert "DecryptDocuments" not in _statements_of(default_resources(), role)
        statement = _statements_of(default_resources(BucketKmsKeyArn=key), role)["DecryptDocuments"]
        assert statement["Action"] == "kms:Decrypt"
        assert statement["Resource"] == key
        assert "kms:ViaService" in statement["Condition"]["StringEquals"]
    kms_actions = {
        action
        for _, statement in iam_statements(default_resources(BucketKmsKeyArn=key))
        for action in as_list(statement["Action"])
        if action.startswith("kms:")
    }
    assert kms_actions == {"kms:Decrypt"}


# ------------------------------------------------------------------ search API (issue 15)


def test_search_data_routes_need_a_jwt_and_only_the_page_is_public():
    resources = default_resources()
    routes = {
        r["Properties"]["RouteKey"]: r["Properties"] for r in by_type(resources, "AWS::ApiGatewayV2::Route").values()
    }
    for key in (
        "GET /search",
        "GET /documents/{id}",
        "GET /documents/{id}/download",
        "GET /documents/{id}/pages/{n}/preview",
        "GET /answer",
    ):
        assert routes[key]["AuthorizationType"] == "JWT"
        assert ref_target(routes[key]["AuthorizerId"]) == "SearchAuthorizer"
    public = {k for k, r in routes.items() if r["AuthorizationType"] == "NONE"}
    assert public == {"GET /", "GET /static/{name}", "GET /config.json"}
    stage = resources["SearchHttpApiStage"]["Properties"]
    assert stage["DefaultRouteSettings"]["ThrottlingRateLimit"] == 50
    # same origin by default: no CORS at all
    assert "CorsConfiguration" not in resources["SearchHttpApi"]["Properties"]
    # the local gateway routes as the HTTP API does: the same routes, anything else a 404 before any sign-in
    from devkit.local.gateway import JWT_ROUTES, PUBLIC_ROUTES

    assert set(PUBLIC_ROUTES) == public
    assert set(JWT_ROUTES) == {k for k, r in routes.items() if r["AuthorizationType"] == "JWT"}


def test_search_function_may_only_search_the_index_and_read_documents():
    resources = default_resources(OpenSearchArn=OPENSEARCH_ARNS["es"])
    statements = resources["SearchRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    actions = {a for s in statements for a in as_list(s["Action"])}
    assert actions == {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "s3:GetObject",
        "es:ESHttpGet",
        "es:ESHttpPost",
    }
    search = next(s for s in statements if s.get("Sid") == "SearchIndex")
    # searching, and analyzing a query (which of its words the index keeps: no document is read)
    assert all(str(r["Fn::Sub"]).endswith(("/_search", "/_search/*", "/_analyze")) for r in as_list(search["Resource"]))


def test_a_company_oidc_provider_replaces_the_user_pool():
    created = default_resources()
    assert {"SearchUserPool", "SearchUserPoolClient", "SearchUserPoolDomain", "SearchAdminGroup"} <= set(created)
    external = default_resources(
        OidcIssuer="https://login.microsoftonline.com/tenant/v2.0", OidcAudience="api://docindex", GroupsClaim="groups"
    )
    assert not {"SearchUserPool", "SearchUserPoolClient"} & set(external)
    jwt = external["SearchAuthorizer"]["Properties"]["JwtConfiguration"]
    assert jwt["Issuer"] == "https://login.microsoftonline.com/tenant/v2.0"
    assert jwt["Audience"] == ["api://docindex"]
    assert env(external, "SearchFunction")["GROUPS_CLAIM"] == "groups"


# ------------------------------------------------------------------ meaning search (issue 30)


def _statements(role: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for policy in role["Properties"]["Policies"] for s in policy["PolicyDocument"]["Statement"]]


@pytest.mark.parametrize("mode", ["local", "bedrock", "off"])
def test_the_model_layer_and_bedrock_rights_follow_the_embeddings_parameter(mode: str) -> None:
    resources = default_resources(Embeddings=mode)
    layers = [ref_target(layer) for layer in resources["SearchFunction"]["Properties"]["Layers"]]
    # The model ships in its own layer, to the search function only (documents are embedded by the worker).
    assert ("EmbeddingLayer" in resources) is (mode == "local")
    assert ("EmbeddingLayer" in layers) is (mode == "local")
    assert [ref_target(layer) for layer in resources["IndexerFunction"]["Properties"]["Layers"]] == ["DocIndexLayer"]
    for function in ("SearchFunction", "IndexerFunction"):
        assert env(resources, function)["EMBEDDINGS"] == mode
    worker_env = {
        e["Name"]: e["Value"]
        for e in resources["WorkerTaskDefinition"]["Properties"]["ContainerDefinitions"][0]["Environment"]
    }
    assert worker_env["EMBEDDINGS"] == mode
    # Bedrock: InvokeModel on the one configured foundation model, for the two callers, nothing else.
    for role in ("SearchRole", "WorkerTaskRole", "IndexerRole"):
        bedrock = [s for s in _statements(resources[role]) if "bedrock" in str(s["Action"])]
        if mode == "bedrock" and role != "IndexerRole":
            (statement,) = bedrock
            assert statement["Action"] == "bedrock:InvokeModel"
            assert "foundation-model/${EmbeddingModel}" in str(statement["Resource"])
        else:
            assert bedrock == []


def test_the_model_layer_is_built_without_numpy_for_python313_arm64() -> None:
    layer = TEMPLATE["Resources"]["EmbeddingLayer"]
    assert layer["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": "arm64"}
    makefile = (REPO_ROOT / layer["Properties"]["ContentUri"] / "Makefile").read_text()
    assert "build-EmbeddingLayer:" in makefile
    assert "--no-deps" in makefile
    assert "--platform manylinux2014_aarch64" in makefile
    assert "--python-version 3.13" in makefile


# ------------------------------------------------------------------ answers (issue 42)


@pytest.mark.parametrize(
    ("answers", "profile"), [("extractive", "us"), ("off", "us"), ("bedrock", "us"), ("bedrock", "")]
)
def test_bedrock_rights_for_answers_are_exactly_the_converse_call_on_the_one_model(answers: str, profile: str) -> None:
    resources = default_resources(Answers=answers, AnswerInferenceProfile=profile, Embeddings="local")
    variables = env(resources, "SearchFunction")
    assert variables["ANSWERS"] == answers
    model = "anthropic.claude-3-5-haiku-20241022-v1:0"
    # the model through its inference profile (us.MODEL), or the model itself
    expected = {"Fn::Sub": "${AnswerInferenceProfile}.${AnswerModelId}"} if profile else model
    assert variables["ANSWER_MODEL"] == expected
    granted = {
        s["Sid"]: s
        for role in ("SearchRole", "WorkerTaskRole", "IndexerRole", "RedriveRole")
        for s in _statements(resources[role])
        if "bedrock" in str(s["Action"])
    }
    if answers != "bedrock":
        # extractive and off make no Bedrock call: no right to one (Embeddings=local here)
        assert granted == {}
        return
    # Converse is bedrock:InvokeModel; on that model (or its inference profile) only, to the search function only
    assert all(s["Action"] == "bedrock:InvokeModel" for s in granted.values())
    assert all(role_of(resources, sid) == "SearchRole" for sid in granted)
    if profile:
        assert set(granted) == {"AnswerThroughInferenceProfile", "AnswerModelBehindProfile"}
        assert "inference-profile/${AnswerInferenceProfile}.${AnswerModelId}" in str(
            granted["AnswerThroughInferenceProfile"]["Resource"]
        )
        behind = granted["AnswerModelBehindProfile"]
        assert "foundation-model/${AnswerModelId}" in str(behind["Resource"])
        assert "bedrock:InferenceProfileArn" in behind["Condition"]["StringEquals"]
    else:
        (only,) = granted.values()
        assert "${AWS::Region}::foundation-model/${AnswerModelId}" in str(only["Resource"])
        assert "Condition" not in only


def role_of(resources: dict[str, dict[str, Any]], sid: str) -> str:
    return next(name for name, r in resources.items() if r["Type"] == "AWS::IAM::Role" and sid in str(r))


@pytest.mark.parametrize("answers", ["extractive", "bedrock"])
def test_the_search_functions_timeout_covers_a_bounded_converse_call_under_the_http_apis_30_s(answers: str) -> None:
    from docindex.answer.settings import AnswerSettings

    resources = default_resources(Answers=answers)
    function = resources["SearchFunction"]["Properties"]["Timeout"]
    integration = resources["SearchIntegration"]["Properties"]["TimeoutInMillis"]
    # API Gateway answers 503 while the function still runs when the integration gives up first; 30 s is its maximum
    assert function * 1000 < integration <= 30_000
    # ... and a request to the cluster gives up before the function (a 5xx of its own, not a Lambda timeout)
    cluster = float(resources["SearchFunction"]["Properties"]["Environment"]["Variables"]["OPENSEARCH_TIMEOUT_SECONDS"])
    assert cluster < function
    if answers != "bedrock":
        assert function == 15
        return
    # Converse with the SDK's own retries bounded (the client's attempts, connect and read timeouts), plus the
    # retrieval (a query's vector and one _msearch) fits the function's timeout with 4 s to spare
    bounds = AnswerSettings.from_env({})
    assert bounds.converse_bounds() == {"total_attempts": 2, "read_timeout": 10.0, "connect_timeout": 2.0}
    assert bounds.converse_worst_seconds() == 25.0
    assert bounds.converse_worst_seconds() + 4 <= function
    # the retrieval's one _msearch and the question's vector within those 4 s
    assert bounds.converse_worst_seconds() + cluster + 1 <= function
