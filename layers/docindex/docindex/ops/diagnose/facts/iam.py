"""Permission facts: the indexer role's policies, the queues' policies, and a policy simulation.

The simulation asks IAM whether the role may call each action the indexer
needs on the deployment's own resources (by ARN); an endpoint without the
simulator, or a caller not allowed to use it, leaves the grants unverified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from docindex.core.aws import error_code, queue_name
from docindex.core.exceptions import Unsupported
from docindex.ops.diagnose.facts.reader import Reader, is_unsupported

# The simulation ran ("ran"), or why it could not.
SIMULATION_RAN = "ran"


@dataclass(frozen=True)
class PermissionFacts:
    """The indexer role, every policy document that applies, and the simulation's refusals."""

    role_arn: str
    # (where the policy is, its document): inline, then managed policies, then queue policies.
    policies: Sequence[tuple[str, Any]]
    # Simulation results that are not "allowed" (EvalActionName, EvalResourceName, EvalDecision).
    denied: Sequence[Mapping[str, Any]]
    simulation: str = SIMULATION_RAN


def permission_facts(reader: Reader) -> PermissionFacts:
    """Read the indexer role's policies and the queues', then simulate what the indexer needs."""
    d = reader.deployment
    if d.is_local:
        raise Unsupported("no IAM roles locally: the local run uses the endpoint's test credentials")
    if not d.function_name:
        raise Unsupported("needs the indexer function (--stack or --function)")
    iam = reader.client("iam")
    role_arn = reader.client("lambda").get_function_configuration(FunctionName=d.function_name)["Role"]
    role = role_arn.rsplit("/", 1)[-1]
    policies: list[tuple[str, Any]] = []
    for name in iam.list_role_policies(RoleName=role).get("PolicyNames", []):
        document = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
        policies.append((f"{role} inline policy {name}", document))
    for attached in iam.list_attached_role_policies(RoleName=role).get("AttachedPolicies", []):
        policy = iam.get_policy(PolicyArn=attached["PolicyArn"])["Policy"]
        version = iam.get_policy_version(PolicyArn=attached["PolicyArn"], VersionId=policy["DefaultVersionId"])
        policies.append((f"managed policy {attached['PolicyName']}", version["PolicyVersion"]["Document"]))
    for url in filter(
        None, [d.ingest_queue_url, d.ingest_dlq_url, d.ocr_queue_url, d.ocr_dlq_url, d.embed_queue_url, d.embed_dlq_url]
    ):
        policy = reader.attrs(url).get("Policy")
        if policy:
            policies.append((f"queue policy of {queue_name(url)}", policy))
    denied, simulation = _simulate(reader, role_arn)
    return PermissionFacts(role_arn, policies, denied, simulation)


def _required_actions(reader: Reader) -> list[tuple[list[str], list[str]]]:
    """(actions, resource ARNs) the indexer calls: the template's IndexerRole, resource by resource."""
    d = reader.deployment
    sqs_arn = reader.attrs(str(d.ingest_queue_url))["QueueArn"] if d.ingest_queue_url else None
    needs: list[tuple[list[str], list[str]]] = []
    if sqs_arn:
        needs.append(
            (
                [
                    "sqs:ReceiveMessage",
                    "sqs:DeleteMessage",
                    "sqs:GetQueueAttributes",
                    "sqs:ChangeMessageVisibility",
                ],
                [sqs_arn],
            )
        )
    if d.ocr_queue_url:
        needs.append((["sqs:SendMessage"], [reader.attrs(d.ocr_queue_url)["QueueArn"]]))
    if d.embed_queue_url:
        needs.append((["sqs:SendMessage"], [reader.attrs(d.embed_queue_url)["QueueArn"]]))
    if d.bucket:
        needs.append((["s3:GetObject", "s3:GetObjectVersion"], [f"arn:aws:s3:::{d.bucket}/docindex-probe"]))
        needs.append((["s3:ListBucket"], [f"arn:aws:s3:::{d.bucket}"]))
    ddb = reader.client("dynamodb")
    if d.idempotency_table:
        arn = ddb.describe_table(TableName=d.idempotency_table)["Table"]["TableArn"]
        needs.append((["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"], [arn]))
    if d.ledger_table:
        arn = ddb.describe_table(TableName=d.ledger_table)["Table"]["TableArn"]
        needs.append((["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:BatchGetItem"], [arn]))
    if d.opensearch_arn:
        if d.opensearch_service == "aoss":
            needs.append((["aoss:APIAccessAll"], [d.opensearch_arn]))
        else:
            # The paths the indexer sends each method to (template.yaml's IndexerRole).
            index = f"{d.opensearch_arn}/{d.opensearch_index}"
            needs.append((["es:ESHttpHead"], [index]))
            needs.append((["es:ESHttpPut"], [f"{index}-v1"]))
            needs.append((["es:ESHttpGet"], [f"{index}/_doc/docindex-probe"]))
            needs.append((["es:ESHttpPost"], [f"{index}/_bulk"]))
    return needs


def _simulate(reader: Reader, role_arn: str) -> tuple[list[dict[str, Any]], str]:
    """The results that are not "allowed", and "ran" or why the simulation could not run."""
    iam = reader.client("iam")
    denied: list[dict[str, Any]] = []
    try:
        for actions, resources in _required_actions(reader):
            results = iam.simulate_principal_policy(
                PolicySourceArn=role_arn, ActionNames=actions, ResourceArns=resources
            )["EvaluationResults"]
            denied += [r for r in results if r.get("EvalDecision") != "allowed"]
    except Exception as exc:
        # (an emulator without the API answers with what botocore cannot parse: not a BotoCoreError)
        if is_unsupported(exc):
            return [], "not available on this endpoint"
        if isinstance(exc, ClientError) and "AccessDenied" in error_code(exc):
            return [], "not available: the caller may not call iam:SimulatePrincipalPolicy"
        raise
    return denied, SIMULATION_RAN
