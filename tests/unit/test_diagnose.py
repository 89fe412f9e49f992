"""The diagnose verdicts: pure functions of the facts, checked on the incident's numbers."""

from __future__ import annotations

import copy
import json

import pytest

from devkit.messages import eventbridge, s3_notification
from docindex.index.mapping import MAPPINGS
from docindex.index.names import NAMES_VERSION
from docindex.ops.deployment import Deployment
from docindex.ops.diagnose.checks.backlog import judge_backlog
from docindex.ops.diagnose.checks.dlq import describe_message, summarise_messages
from docindex.ops.diagnose.checks.iam import policy_problems
from docindex.ops.diagnose.checks.index import judge_index, mapping_differences
from docindex.ops.diagnose.checks.notifications import judge_notifications, overlapping_configurations
from docindex.ops.diagnose.checks.queues import judge_event_source, judge_redrive, judge_visibility
from docindex.ops.diagnose.facts.notifications import NotificationFacts, RuleTarget, rule_matches_bucket
from docindex.ops.diagnose.facts.queues import BacklogFacts
from docindex.ops.diagnose.facts.services import IndexFacts
from docindex.ops.diagnose.report import Check, Diagnosis, Status
from docindex.ops.pause import PauseState
from docindex.text.variants import NORMALIZATION_VERSION

QUEUE = "arn:aws:sqs:us-east-1:123456789012:docindex-prod-ingest"
BUCKET = "docs-bucket"


def queue_config(id_: str, events: list[str], prefix: str = "", suffix: str = "") -> dict:
    rules = [{"Name": n, "Value": v} for n, v in (("Prefix", prefix), ("Suffix", suffix)) if v]
    config: dict = {"Id": id_, "QueueArn": QUEUE, "Events": events}
    if rules:
        config["Filter"] = {"Key": {"FilterRules": rules}}
    return config


S3_PATH = {"QueueConfigurations": [queue_config("docindex", ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"])]}
RULE = RuleTarget("docindex-prod-ingest", "ingest-queue", enabled=True)


# --------------------------------------------------------------------------- notifications


def test_overlap_needs_overlapping_events_prefixes_and_suffixes() -> None:
    all_created = queue_config("a", ["s3:ObjectCreated:*"])
    put_in_docs = queue_config("b", ["s3:ObjectCreated:Put"], prefix="docs/")
    removed = queue_config("c", ["s3:ObjectRemoved:*"])
    pdf = queue_config("d", ["s3:ObjectCreated:*"], prefix="scans/", suffix=".pdf")
    xlsx = queue_config("e", ["s3:ObjectCreated:*"], prefix="scans/", suffix=".xlsx")
    assert overlapping_configurations([all_created, put_in_docs]) == [("a", "b")]
    assert overlapping_configurations([all_created, removed]) == []
    assert overlapping_configurations([pdf, xlsx]) == []
    assert overlapping_configurations([pdf, all_created]) == [("d", "a")]


@pytest.mark.parametrize(
    ("pattern", "matches"),
    [
        ({"source": ["aws.s3"], "detail": {"bucket": {"name": [BUCKET]}}}, True),
        ({"source": ["aws.s3"], "detail": {"bucket": {"name": ["other"]}}}, False),
        ({"source": ["aws.s3"]}, True),
        ({"source": ["aws.s3"], "detail": {"bucket": {"name": [{"prefix": "docs-"}]}}}, True),
        ({"source": ["aws.ec2"]}, False),
        (None, False),
    ],
)
def test_rule_matches_bucket(pattern: dict | None, matches: bool) -> None:
    assert rule_matches_bucket(json.dumps(pattern) if pattern else None, BUCKET) is matches


def test_one_queue_configuration_is_ok() -> None:
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, S3_PATH, observed_shapes={"s3": 4}))
    assert check.status is Status.OK
    assert check.summary == "exactly one path (s3)"


def test_queue_configuration_plus_eventbridge_rule_fails_with_the_commands_that_remove_one() -> None:
    # Given the incident's bucket: a queue configuration AND EventBridge delivery with a rule to the queue
    config = {**S3_PATH, "EventBridgeConfiguration": {}}
    # When diagnosed
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, config, rules=[RULE], expected_mode="s3"))
    # Then it fails, and the fix removes the EventBridge path (the stack's mode is s3)
    assert check.status is Status.FAIL
    assert "2 paths (s3 + eventbridge)" in check.summary
    assert check.fix is not None
    assert "aws events remove-targets --rule docindex-prod-ingest --ids ingest-queue" in check.fix
    command = next(line for line in check.fix.splitlines() if "put-bucket-notification-configuration" in line)
    body = json.loads(command.split("--notification-configuration ", 1)[1].strip("'"))
    assert body == S3_PATH  # the queue configuration stays, EventBridge goes


def test_in_eventbridge_mode_the_fix_removes_the_queue_configuration() -> None:
    config = {**copy.deepcopy(S3_PATH), "EventBridgeConfiguration": {}}
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, config, rules=[RULE], expected_mode="eventbridge"))
    assert check.status is Status.FAIL
    assert check.fix is not None
    command = next(line for line in check.fix.splitlines() if "put-bucket-notification-configuration" in line)
    assert json.loads(command.split("--notification-configuration ", 1)[1].strip("'")) == {
        "EventBridgeConfiguration": {}
    }


def test_two_shapes_in_the_queue_prove_two_paths_even_when_the_configuration_shows_one() -> None:
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, S3_PATH, observed_shapes={"s3": 3, "eventbridge": 3}))
    assert check.status is Status.FAIL
    assert "2 shapes" in check.summary


def test_rule_without_bucket_eventbridge_delivery_is_a_latent_duplicate() -> None:
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, S3_PATH, rules=[RULE]))
    assert check.status is Status.WARN
    assert check.fix == "aws events remove-targets --rule docindex-prod-ingest --ids ingest-queue"


def test_overlapping_queue_configurations_fail() -> None:
    config = {
        "QueueConfigurations": [
            queue_config("all", ["s3:ObjectCreated:*"]),
            queue_config("pdfs", ["s3:ObjectCreated:*"], suffix=".pdf"),
        ]
    }
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, config))
    assert check.status is Status.FAIL
    assert "overlap (all & pdfs)" in check.summary


def test_no_path_fails_with_the_configuration_to_put() -> None:
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, {}))
    assert check.status is Status.FAIL
    assert "never indexed" in check.summary
    assert check.fix is not None
    assert QUEUE in check.fix


def test_sns_fan_out_to_the_queue_is_a_second_path() -> None:
    topic = "arn:aws:sns:us-east-1:123456789012:uploads"
    config = {**S3_PATH, "TopicConfigurations": [{"TopicArn": topic, "Events": ["s3:ObjectCreated:*"]}]}
    check = judge_notifications(NotificationFacts(BUCKET, QUEUE, config, sns_subscriptions=[(topic, topic + ":sub")]))
    assert check.status is Status.FAIL
    assert check.fix is not None
    assert f"aws sns unsubscribe --subscription-arn {topic}:sub" in check.fix


# --------------------------------------------------------------------------- queues


def test_visibility_shorter_than_an_invocation_fails() -> None:
    # The incident: 300 s visibility, work that takes longer
    check = judge_visibility(300, 600, 2)
    assert check.status is Status.FAIL
    assert "processed twice" in check.summary


def test_visibility_below_six_times_the_timeout_warns() -> None:
    check = judge_visibility(300, 180, 2)
    assert check.status is Status.WARN
    assert "1082" in check.summary


def test_template_visibility_is_ok() -> None:
    # template.yaml: IndexerTimeout 180 → QueueVisibilityTimeout 1140 (6 × 180 + 60)
    assert judge_visibility(1140, 180, 60).status is Status.OK


def attrs(retention: int = 604800, visibility: int = 1140, max_receive: int | None = 5) -> dict[str, str]:
    out = {"MessageRetentionPeriod": str(retention), "VisibilityTimeout": str(visibility)}
    if max_receive is not None:
        out["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": QUEUE + "-dlq", "maxReceiveCount": max_receive})
    return out


def test_redrive_policy_verdicts() -> None:
    url = "https://sqs.us-east-1.amazonaws.com/123456789012/q"
    dlq = {"MessageRetentionPeriod": "1209600"}
    assert judge_redrive("ingest", url, attrs(), dlq).status is Status.OK
    missing = judge_redrive("ingest", url, attrs(max_receive=None), None)
    assert missing.status is Status.FAIL
    assert "comes back forever" in missing.summary
    assert judge_redrive("ingest", url, attrs(max_receive=2), dlq).status is Status.WARN
    short_dlq = judge_redrive("ingest", url, attrs(), {"MessageRetentionPeriod": "604800"})
    assert short_dlq.status is Status.WARN
    assert "expire" in short_dlq.summary
    # A poison message received 1000 times × 1140 s outlives the 7-day retention: never dead-lettered
    never = judge_redrive("ingest", url, attrs(max_receive=1000), dlq)
    assert never.status is Status.FAIL
    assert "never reaches the DLQ" in never.summary
    assert judge_redrive("ingest", url, attrs(), None).status is Status.FAIL


def mapping(**overrides: object) -> dict:
    base = {
        "UUID": "u-1",
        "State": "Enabled",
        "BatchSize": 10,
        "MaximumBatchingWindowInSeconds": 2,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "ScalingConfig": {"MaximumConcurrency": 20},
        "FunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:indexer",
    }
    base.update(overrides)
    return base


def test_event_source_verdicts() -> None:
    assert judge_event_source([mapping()], "indexer", None).status is Status.OK
    no_partial = judge_event_source([mapping(FunctionResponseTypes=[])], "indexer", None)
    assert no_partial.status is Status.FAIL
    assert "--function-response-types ReportBatchItemFailures" in str(no_partial.fix)
    disabled = judge_event_source([mapping(State="Disabled")], "indexer", None)
    assert disabled.status is Status.FAIL
    paused = judge_event_source([mapping(State="Disabled")], "indexer", PauseState(paused_at="2026-11-20T09:00:00Z"))
    assert paused.status is Status.WARN
    assert paused.fix == "docindex resume"
    assert judge_event_source([mapping(ScalingConfig={})], "indexer", None).status is Status.WARN
    assert judge_event_source([], "indexer", None).status is Status.FAIL


# --------------------------------------------------------------------------- backlog


def test_the_incident_backlog_grows() -> None:
    # 100 files/min arriving, 5-10 processed
    check = judge_backlog(BacklogFacts("ingest", 48_000, 604800, inflow_per_minute=100, outflow_per_minute=7.5))
    assert check.status is Status.FAIL
    assert check.summary.startswith("growing by 92.5/min")


def test_a_draining_backlog_says_when() -> None:
    check = judge_backlog(BacklogFacts("ingest", 6000, 604800, inflow_per_minute=0, outflow_per_minute=100))
    assert check.status is Status.OK
    assert check.summary.startswith("drains in 1.0 hours")
    assert check.data["drain_hours"] == 1.0


def test_a_backlog_that_outlives_the_retention_fails() -> None:
    # 5 million files at 100/min net: 833 hours > 7 days
    check = judge_backlog(BacklogFacts("ingest", 5_000_000, 604800, inflow_per_minute=0, outflow_per_minute=100))
    assert check.status is Status.FAIL
    assert "expire" in check.summary


def test_slow_but_safe_drain_warns() -> None:
    check = judge_backlog(BacklogFacts("ingest", 200_000, 1209600, inflow_per_minute=0, outflow_per_minute=100))
    assert check.status is Status.WARN
    assert "33.3 hours" in check.summary


def test_sampled_depth_that_does_not_move_warns_and_paused_growth_is_expected() -> None:
    assert judge_backlog(BacklogFacts("ingest", 5, 345600, net_per_minute=0.0)).status is Status.WARN
    assert judge_backlog(BacklogFacts("ingest", 0, 345600)).status is Status.OK
    paused = PauseState(paused_at="2026-11-20T09:00:00Z")
    check = judge_backlog(BacklogFacts("ingest", 500, 345600, net_per_minute=30.0, paused=paused))
    assert check.status is Status.WARN
    assert check.fix == "docindex resume"


# --------------------------------------------------------------------------- messages, policies, mapping


def test_messages_are_summarised_by_shape() -> None:
    bodies = [
        json.dumps(s3_notification(BUCKET, "営業部/見積.pdf")),
        json.dumps(s3_notification(BUCKET, "a/b.pdf")),
        json.dumps(eventbridge(BUCKET, "c.xlsx")),
        "not json",
        json.dumps({"docindex": "ocr_job", "bucket": BUCKET, "key": "scan.tiff", "reason": "image", "generation": 1}),
    ]
    messages = [
        {"Body": b, "Attributes": {"ApproximateReceiveCount": str(i + 1), "SentTimestamp": str(1_000_000 + i)}}
        for i, b in enumerate(bodies)
    ]
    lines, data = summarise_messages(messages, now_ms=1_000_000 + 3_600_000)
    assert data["shapes"] == {
        "s3 created .pdf": 2,
        "eventbridge created .xlsx": 1,
        "poison: body is not JSON: Expecting value: line 1 column 1 (char 0)": 1,
        "ocr_job image .tiff": 1,
    }
    assert lines[0] == "2 × s3 created .pdf"
    assert "receive counts 1..5" in lines
    assert data["oldest_age_hours"] == 1.0
    assert describe_message(json.dumps({"Service": "Amazon S3", "Event": "s3:TestEvent"})) == "s3_test_event"


def test_resources_named_by_queue_url_are_found() -> None:
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "Consume", "Effect": "Allow", "Action": "sqs:DeleteMessage", "Resource": QUEUE},
            {
                "Sid": "Dlq",
                "Effect": "Allow",
                "Action": "sqs:SendMessage",
                "Resource": ["https://sqs.us-east-1.amazonaws.com/123456789012/docindex-dlq", "*"],
            },
        ],
    }
    problems = policy_problems(json.dumps(document), "role r inline policy p")
    assert problems == [
        "role r inline policy p statement Dlq: resource 'https://sqs.us-east-1.amazonaws.com/123456789012/"
        "docindex-dlq' is not an ARN (a URL: IAM needs the ARN, arn:aws:sqs:REGION:ACCOUNT:QUEUE for a queue)"
    ]
    assert policy_problems(document["Statement"][0] | {}, "x") == []


def test_mapping_differences() -> None:
    assert mapping_differences(MAPPINGS) == []
    broken = copy.deepcopy(MAPPINGS)
    broken["properties"]["key"] = {"type": "text"}
    del broken["properties"]["etag"]
    assert mapping_differences(broken) == [
        "field key is text, expected keyword",
        "field etag is missing (expected keyword)",
    ]


def test_an_index_built_before_spelling_variants_is_a_warning_with_the_reindex_fix() -> None:
    # Given indexes without the variants field, and one folded by another normalization version
    older = copy.deepcopy(MAPPINGS)
    del older["properties"]["variants"]
    refolded = copy.deepcopy(MAPPINGS) | {"_meta": {"docindex": {"variants": 0}}}
    current = copy.deepcopy(MAPPINGS) | {
        "_meta": {"docindex": {"variants": NORMALIZATION_VERSION, "names": NAMES_VERSION}}
    }
    refolded["_meta"]["docindex"]["names"] = NAMES_VERSION
    for mapping in (older, refolded):
        # When judged: searches work, so not a failure, but the operator is told to reindex
        check = judge_index(IndexFacts("https://os", "documents", True, {"documents-v1": {"mappings": mapping}}))
        assert check.status == Status.WARN
        assert "docindex reindex" in check.summary
    assert judge_index(IndexFacts("https://os", "d", True, {"d-v2": {"mappings": current}})).status == Status.OK


def test_an_index_built_before_name_search_is_a_warning_with_the_reindex_fix() -> None:
    # Given an index without the names field, and one whose names were indexed by another version
    meta = {"_meta": {"docindex": {"variants": NORMALIZATION_VERSION, "names": NAMES_VERSION}}}
    older = copy.deepcopy(MAPPINGS) | copy.deepcopy(meta)
    del older["properties"]["names"]
    older["_meta"]["docindex"].pop("names")
    renamed = copy.deepcopy(MAPPINGS) | {"_meta": {"docindex": {"variants": NORMALIZATION_VERSION, "names": 0}}}
    for mapping in (older, renamed):
        # When judged: content search works, so a warning, which names the fix
        check = judge_index(IndexFacts("https://os", "documents", True, {"documents-v1": {"mappings": mapping}}))
        assert check.status == Status.WARN
        assert "name" in check.summary
        assert "docindex reindex" in check.summary
    current = copy.deepcopy(MAPPINGS) | copy.deepcopy(meta)
    assert judge_index(IndexFacts("https://os", "d", True, {"d-v2": {"mappings": current}})).status == Status.OK


def test_the_index_fixes_name_the_module_that_holds_the_mapping() -> None:
    # Given an index that is missing, and one whose mapping differs from the contract's
    missing = IndexFacts("https://os", "documents", exists=False)
    broken = copy.deepcopy(MAPPINGS)
    broken["properties"]["key"] = {"type": "text"}
    different = IndexFacts("https://os", "documents", True, {"documents-1": {"mappings": broken}}, count=3)
    # When judged
    checks = [judge_index(missing), judge_index(different)]
    # Then both fail, and each fix points at a file that exists (the mapping moved out of search_index.py)
    assert [c.status for c in checks] == [Status.FAIL, Status.FAIL]
    for check in checks:
        assert check.fix is not None
        assert "docindex/index/mapping.py" in check.fix
        assert "search_index.py" not in check.fix


def test_exit_code_is_the_worst_status() -> None:
    def diagnosis(*statuses: Status) -> Diagnosis:
        return Diagnosis(Deployment(), [Check(str(i), "t", s, "") for i, s in enumerate(statuses)])

    assert diagnosis(Status.OK, Status.SKIP).exit_code == 0
    assert diagnosis(Status.OK, Status.WARN, Status.SKIP).exit_code == 1
    assert diagnosis(Status.WARN, Status.FAIL).exit_code == 2
    assert diagnosis().to_dict()["counts"] == {"OK": 0, "WARN": 0, "FAIL": 0, "SKIP": 0}
