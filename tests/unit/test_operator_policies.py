"""The operator-policy model (tests/support/operator_policy.py) judges template.yaml as AWS would.

The integration test runs every operator command through it; these prove, without servers, that it
refuses what a real stack refuses and admits what it admits, and that it reads the whole table of
docs/operations.md.
"""

from __future__ import annotations

import pytest

from tests.support.operator_policy import (
    ACCOUNT,
    OPERATOR_ARN,
    Operator,
    ResourcePolicies,
    Target,
    documented_permissions,
)
from tests.support.template_model import copy_template, load_template

POLICIES = ResourcePolicies.of_template()


def test_the_ocr_queue_admits_the_stacks_roles_and_refuses_an_operator() -> None:
    # The OCR queue's policy: only the indexer, the worker and the redrive may send a job
    for role in ("IndexerRole", "WorkerTaskRole", "RedriveRole"):
        assert POLICIES.refusal("sqs:SendMessage", Target("OcrQueue"), f"arn:aws:iam::{ACCOUNT}:role/{role}") is None
    refused = POLICIES.refusal("sqs:SendMessage", Target("OcrQueue"), OPERATOR_ARN)
    assert refused is not None
    assert "OnlyTheIndexerTheWorkerAndTheRedriveSendJobs" in refused
    # ... while an operator may send to the ingest and embed queues and read the OCR queue's depth
    assert POLICIES.refusal("sqs:SendMessage", Target("IngestQueue")) is None
    assert POLICIES.refusal("sqs:SendMessage", Target("EmbedQueue")) is None
    assert POLICIES.refusal("sqs:GetQueueAttributes", Target("OcrQueue")) is None
    # ... and the TLS-only statements, on HTTPS, refuse nothing
    assert POLICIES.refusal("s3:GetObject", Target("DocumentsBucket", object=True)) is None


def test_a_policy_that_denies_operators_on_the_ingest_queue_is_caught(monkeypatch) -> None:
    # Given a template whose ingest queue admits only the stack's roles, as the OCR queue does
    template = copy_template(load_template())
    ocr_deny = template["Resources"]["OcrQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    deny = {**ocr_deny, "Resource": {"Fn::GetAtt": ["IngestQueue", "Arn"]}}
    template["Resources"]["IngestQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"].append(deny)
    monkeypatch.setattr("tests.support.operator_policy.load_template", lambda: template)
    policies = ResourcePolicies.of_template()
    operator = Operator("backfill", documented_permissions()["backfill"], policies, {"q": "IngestQueue"})
    # When backfill sends its batch, Then the model refuses it as AWS would
    assert operator.authorize("sqs", "SendMessageBatch", {"QueueUrl": "q", "Entries": []}) is not None
    assert "denied by the policy of IngestQueue" in operator.refused[0].why


def test_a_call_the_documentation_does_not_name_is_refused() -> None:
    operator = Operator("reconcile", documented_permissions()["reconcile"], POLICIES, {"t": "LedgerTable"})
    assert operator.authorize("dynamodb", "PutItem", {"TableName": "t"}) is not None
    assert "not in the documented permissions" in operator.refused[0].why
    assert operator.authorize("dynamodb", "BatchGetItem", {"RequestItems": {"t": {}}}) is None


def test_the_table_gives_every_command_its_actions() -> None:
    permissions = documented_permissions()
    for command in ("diagnose", "backfill", "reconcile", "reprocess", "ledger repair", "pause / resume", "redrive"):
        assert command in permissions
        # the "all (with --stack)" row is part of each
        assert "cloudformation:DescribeStacks" in permissions[command]
    assert "sqs:StartMessageMoveTask" in permissions["redrive"]  # the redrive function's role


def test_every_dlq_move_is_admitted_for_the_principal_that_starts_it() -> None:
    # A move task sends to its destination with its starter's permissions. `docindex redrive --stack`
    # and the schedule start it in the redrive function: RedriveRole must be admitted on every
    # destination; an operator's own credentials would not be on the OCR queue (why the CLI invokes it).
    from tests.support.template_model import Scenario, by_type, load_template, ref_target

    resources = Scenario(load_template()).resources()
    moves = {
        ref_target(queue["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]): name
        for name, queue in by_type(resources, "AWS::SQS::Queue").items()
        if "RedrivePolicy" in queue["Properties"]
    }
    assert set(moves) == {"IngestDlq", "OcrDlq", "EmbedDlq"}
    redrive_role = f"arn:aws:iam::{ACCOUNT}:role/RedriveRole"
    for destination in moves.values():
        assert POLICIES.refusal("sqs:SendMessage", Target(destination), redrive_role) is None, destination
    assert POLICIES.refusal("sqs:SendMessage", Target("OcrQueue"), OPERATOR_ARN) is not None


def test_redrive_with_a_stack_runs_in_the_stacks_function(monkeypatch, capsys) -> None:
    # moto's Lambda runs no code without Docker: the invocation is answered here, as the function answers
    import io
    import json

    from docindex.cli import main
    from docindex.cli import redrive as cli_redrive
    from docindex.core.clients import AwsClients
    from docindex.ops.deployment import Deployment

    invoked = []

    class Lambda:
        def invoke(self, **call):
            invoked.append(call)
            summary = {"action": "status", "dry_run": False, "results": [{"dlq_arn": "arn:aws:sqs:r:1:x-ocr-dlq"}]}
            summary["results"][0]["status"] = "idle"
            return {"StatusCode": 200, "Payload": io.BytesIO(json.dumps(summary).encode())}

    deployment = Deployment(source="stack s", stack_name="s", region="ap-northeast-1", redrive_function="s-Redrive")
    monkeypatch.setattr(cli_redrive, "load_settings", lambda args: deployment)
    monkeypatch.setattr(AwsClients, "client", lambda self, service: Lambda())
    monkeypatch.setattr(cli_redrive.wiring, "get_service", lambda: pytest.fail("ran with the operator's credentials"))
    assert main(["redrive", "status", "--stack", "s", "--json"]) == 0
    (call,) = invoked
    assert call["FunctionName"] == "s-Redrive"
    assert json.loads(call["Payload"]) == {"action": "status", "dry_run": False, "reset": False}
    assert json.loads(capsys.readouterr().out)["results"][0]["status"] == "idle"
