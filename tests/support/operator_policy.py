"""What an operator may do on a deployed stack: the documented permissions against the stack's own policies.

An operator runs ``docindex`` with their own credentials (an SSO role, an admin's profile), not with
a role of the stack. Two things decide whether AWS lets a call through:

- **the operator's identity policy**: what docs/operations.md ("What the operator needs") tells an
  administrator to grant per command (the ``redrive`` row defers to the redrive function's role);
- **the resource policies of template.yaml**: queue policies, bucket policies and KMS key policies.
  Within one account an identity grant is enough unless a resource policy *denies* the call (the OCR
  queue's policy denies ``SendMessage`` to every principal but the stack's roles); a KMS key's
  policy must also *allow* the account or the principal.

:class:`OperatorClient` wraps a boto3 client the way :class:`tests.support.roles.RoleClient` does: a
call the documented permissions do not name, or that a resource policy denies, answers AccessDenied
as AWS would, and is recorded with the reason, so a test can run a command against the local stack
(where nothing enforces policies) and see what a real stack would refuse.

Condition keys modelled for the operator's request: ``aws:PrincipalArn``, ``aws:PrincipalAccount``,
``aws:PrincipalIsAWSService`` (false), ``aws:SecureTransport`` (true: boto3 speaks HTTPS to AWS).
A key absent from the request makes a positive condition operator false and a negated one
(``...Not...``) true, as IAM evaluates them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.roles import access_denied, granted_actions, iam_action
from tests.support.template_model import PSEUDO, Scenario, as_list, by_type, load_template, ref_target

OPERATIONS_DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
ACCOUNT = PSEUDO["AWS::AccountId"]
OPERATOR_ARN = f"arn:aws:iam::{ACCOUNT}:role/docindex-operator"
# S3 actions that address an object (``bucket/key``); every other S3 action addresses the bucket.
_OBJECT_ACTIONS = frozenset(
    {"s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion"}
)
_ACTION = re.compile(r"`([a-z][a-z0-9-]*:[A-Za-z*]+)`")


# ------------------------------------------------------------------ the documented permissions


def documented_permissions(path: Path = OPERATIONS_DOC) -> dict[str, frozenset[str]]:
    """The "What the operator needs" table: command -> IAM actions (the "all" row added to each).

    The ``redrive`` row ("what the redrive function's role has") is the RedriveRole's actions.
    """
    text = path.read_text(encoding="utf-8")
    section = text.split("## What the operator needs", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("command", "") or set(cells[0]) <= {"-", " "}:
            continue
        actions = set(_ACTION.findall(cells[1]))
        if "redrive function's role" in cells[1]:
            actions |= set(granted_actions("RedriveRole"))
        rows[cells[0]] = actions
    common = next((actions for name, actions in rows.items() if name.startswith("all")), set())
    return {name: frozenset(actions | common) for name, actions in rows.items() if not name.startswith("all")}


# ------------------------------------------------------------------ the template's resource policies


@dataclass(frozen=True)
class Target:
    """What a request addresses: a template resource by logical id; ``object`` for ``bucket/key``."""

    logical: str
    object: bool = False


@dataclass(frozen=True)
class Refusal:
    command: str
    action: str
    target: str
    why: str

    def __str__(self) -> str:
        return f"{self.command}: {self.action} on {self.target}: {self.why}"


def _statement_targets(resource: Any) -> list[Target]:
    """A statement's Resource entry as targets: ``!GetAtt X.Arn`` and ``!Sub ${X.Arn}/*``."""
    targets = []
    for entry in as_list(resource):
        logical = ref_target(entry)
        if logical is not None:
            targets.append(Target(logical))
            continue
        sub = entry.get("Fn::Sub") if isinstance(entry, dict) else None
        text = sub if isinstance(sub, str) else sub[0] if isinstance(sub, list) else None
        match = re.fullmatch(r"\$\{(\w+)\.Arn\}(/\*)?", text or "")
        if match:
            targets.append(Target(match.group(1), object=bool(match.group(2))))
    return targets


def _principal_value(scenario: Scenario, value: Any) -> list[str]:
    """Condition values as strings; a role's ``!GetAtt R.Arn`` as the role's ARN."""
    rendered = []
    for item in as_list(value):
        logical = ref_target(item)
        if logical is not None and scenario.template["Resources"].get(logical, {}).get("Type") == "AWS::IAM::Role":
            rendered.append(f"arn:aws:iam::{ACCOUNT}:role/{logical}")
        else:
            rendered.append(str(scenario.render(item)))
    return rendered


def _condition_holds(scenario: Scenario, conditions: Mapping[str, Any], context: Mapping[str, str]) -> bool:
    for operator, block in conditions.items():
        negated = "Not" in operator
        for key, expected in block.items():
            values = _principal_value(scenario, expected)
            actual = context.get(key)
            if actual is None:
                if not negated:
                    return False
                continue
            if operator.startswith(("Arn", "String")) and "Like" in operator:
                matched = any(fnmatch.fnmatchcase(actual, v) for v in values)
            elif operator == "Bool":
                matched = actual.lower() in [v.lower() for v in values]
            else:
                matched = actual in values
            if matched == negated:
                return False
    return True


def _principal_matches(principal: Any, arn: str) -> bool:
    if principal == "*":
        return True
    if isinstance(principal, dict):
        aws = as_list(principal.get("AWS", []))
        return "*" in aws or arn in aws or f"arn:aws:iam::{ACCOUNT}:root" in aws
    return False


@dataclass
class ResourcePolicies:
    """The queue, bucket and key policies of template.yaml, for one set of parameter values."""

    scenario: Scenario
    # logical id -> the statements of every policy attached to it
    statements: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)

    @classmethod
    def of_template(cls, **parameters: str) -> ResourcePolicies:
        scenario = Scenario(load_template(), parameters)
        policies = cls(scenario)
        resources = scenario.resources()
        for policy in by_type(resources, "AWS::SQS::QueuePolicy").values():
            for queue in policy["Properties"]["Queues"]:
                policies._add(ref_target(queue), policy["Properties"]["PolicyDocument"])
        for policy in by_type(resources, "AWS::S3::BucketPolicy").values():
            policies._add(ref_target(policy["Properties"]["Bucket"]), policy["Properties"]["PolicyDocument"])
        for name, key in by_type(resources, "AWS::KMS::Key").items():
            policies.keys.add(name)
            policies._add(name, key["Properties"]["KeyPolicy"])
        return policies

    def _add(self, logical: str | None, document: Mapping[str, Any]) -> None:
        if logical is not None:
            self.statements.setdefault(logical, []).extend(as_list(document["Statement"]))

    def refusal(self, action: str, target: Target, principal_arn: str = OPERATOR_ARN) -> str | None:
        """Why the template's policies refuse ``action`` on ``target`` to ``principal_arn``; None: admitted."""
        context = {
            "aws:PrincipalArn": principal_arn,
            "aws:PrincipalAccount": ACCOUNT,
            "aws:PrincipalIsAWSService": "false",
            "aws:SecureTransport": "true",
        }
        allowed_by_key = False
        for statement in self.statements.get(target.logical, []):
            if not any(fnmatch.fnmatchcase(action.lower(), str(a).lower()) for a in as_list(statement["Action"])):
                continue
            resources = statement.get("Resource", "*")
            if resources != "*" and target not in _statement_targets(resources):
                continue
            if not _principal_matches(statement.get("Principal"), principal_arn):
                continue
            if not _condition_holds(self.scenario, statement.get("Condition", {}), context):
                continue
            if statement["Effect"] == "Deny":
                return f"denied by the policy of {target.logical} (statement {statement.get('Sid', '?')})"
            allowed_by_key = True
        if target.logical in self.keys and not allowed_by_key:
            return f"the key policy of {target.logical} allows neither the account nor this principal"
        return None


# ------------------------------------------------------------------ clients that enforce both


@dataclass
class Operator:
    """One operator command's permissions and the stack's policies; what its calls met."""

    command: str
    permissions: frozenset[str]
    policies: ResourcePolicies
    # the name or URL a call carries -> the template's logical id (the local stack's resources)
    names: Mapping[str, str]
    principal_arn: str = OPERATOR_ARN
    calls: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def target(self, service: str, operation: str, params: Mapping[str, Any]) -> Target | None:
        if service == "sqs" and "QueueUrl" in params:
            logical = self.names.get(str(params["QueueUrl"]))
        elif service == "s3" and "Bucket" in params:
            logical = self.names.get(str(params["Bucket"]))
        elif service == "dynamodb" and ("TableName" in params or "RequestItems" in params):
            table = params.get("TableName") or next(iter(params["RequestItems"]), "")
            logical = self.names.get(str(table))
        else:
            return None
        if logical is None:
            return None
        action = iam_action(service, operation, params)
        return Target(logical, object=service == "s3" and action in _OBJECT_ACTIONS)

    def authorize(self, service: str, operation: str, params: Mapping[str, Any]) -> Refusal | None:
        """None when AWS would let the call through, else the refusal (recorded)."""
        action = iam_action(service, operation, params)
        target = self.target(service, operation, params)
        where = f"{target.logical}{'/*' if target.object else ''}" if target else "-"
        self.calls.append(f"{action} {where}")
        why = None
        if action not in self.permissions:
            why = f"not in the documented permissions of `{self.command}` (docs/operations.md)"
        elif target is not None:
            why = self.policies.refusal(action, target, self.principal_arn)
        if why is None:
            return None
        refusal = Refusal(self.command, action, where, why)
        self.refused.append(refusal)
        return refusal

    def client(self, client: Any) -> OperatorClient:
        return OperatorClient(client, self)


class OperatorClient:
    """A boto3 client that answers AccessDenied to what the operator's permissions or the policies refuse."""

    def __init__(self, client: Any, operator: Operator) -> None:
        self._client = client
        self._operator = operator
        self._service = client.meta.service_model.service_name

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        operation = self._client.meta.method_to_api_mapping.get(name)
        if operation is None:
            return attribute

        def call(**params: Any) -> Any:
            if self._operator.authorize(self._service, operation, params) is not None:
                raise access_denied(iam_action(self._service, operation, params), operation)
            return attribute(**params)

        return call

    def get_paginator(self, name: str) -> Any:
        paginator = self._client.get_paginator(name)
        operation = self._client.meta.method_to_api_mapping[name]
        outer = self

        class Paginator:
            def paginate(self, **params: Any) -> Any:
                call = {k: v for k, v in params.items() if k != "PaginationConfig"}
                if outer._operator.authorize(outer._service, operation, call) is not None:
                    raise access_denied(iam_action(outer._service, operation, call), operation)
                return paginator.paginate(**params)

        return Paginator()


def refusals(operators: Iterable[Operator]) -> list[str]:
    return [str(r) for operator in operators for r in operator.refused]
