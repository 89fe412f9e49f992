"""Clients that hold exactly what a template.yaml role grants, and remember what they used.

A :class:`Role` is read from the template (evaluated with ``template_model`` for the
given parameter values) as a set of :class:`Grant` (action, resource). Its wrappers

- refuse, as IAM would with AccessDenied / 403, every call the role does not grant:
  boto3 calls by IAM action (and, for DynamoDB tables and SQS queues, by the resource
  the call names), OpenSearch requests by ``es:ESHttp<Method>`` on the request's path
  matched against the granted ARNs (``${OpenSearchArn}/${OpenSearchIndex}/_bulk``...);
- record every grant a call used, so a test can assert the converse: a grant no call
  ever needed is one too many (:meth:`Role.unused`).

IAM semantics modelled on purpose: ``HeadObject`` is ``s3:GetObject``, a ``VersionId``
makes it ``s3:GetObjectVersion``, ``*Batch`` SQS calls are their single action, and a
read of a missing object answers 404 only with ``s3:ListBucket`` (else 403), which is
therefore *used* whenever the code is told "missing".
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from botocore.exceptions import ClientError

from tests.support.template_model import Scenario, as_list, iam_statements, load_template, ref_target


@dataclass(frozen=True)
class Grant:
    action: str
    # A logical id ("LedgerTable") for a Ref/GetAtt, else the rendered ARN (wildcards kept).
    resource: str

    def __str__(self) -> str:
        return f"{self.action} on {self.resource}"


def role_grants(role: str, **parameters: str) -> frozenset[Grant]:
    """Every (action, resource) template.yaml's ``role`` allows for these parameter values."""
    scenario = Scenario(load_template(), parameters)
    grants = set()
    for owner, statement in iam_statements(scenario.resources()):
        if owner != role or statement.get("Effect") != "Allow":
            continue
        for resource in as_list(statement.get("Resource", [])):
            target = ref_target(resource)
            rendered = target if target is not None else scenario.render(resource)
            for action in as_list(statement["Action"]):
                grants.add(Grant(str(action), str(rendered)))
    return frozenset(grants)


def granted_actions(role: str = "RedriveRole", **parameters: str) -> frozenset[str]:
    """The IAM actions template.yaml gives a role (for these parameter values)."""
    return frozenset(g.action for g in role_grants(role, **parameters))


def iam_action(service: str, operation: str, params: Mapping[str, Any]) -> str:
    """The IAM action AWS authorizes a boto3 call as."""
    if service == "s3":
        if operation in {"GetObject", "HeadObject"}:
            return "s3:GetObjectVersion" if params.get("VersionId") else "s3:GetObject"
        aliases = {
            "ListObjectsV2": "ListBucket",
            "HeadBucket": "ListBucket",
            "ListObjects": "ListBucket",
            "ListObjectVersions": "ListBucketVersions",
            "GetBucketNotificationConfiguration": "GetBucketNotification",
            "PutBucketNotificationConfiguration": "PutBucketNotification",
        }
        return f"s3:{aliases.get(operation, operation)}"
    if service == "sqs" and operation.endswith("Batch"):
        return f"sqs:{operation.removesuffix('Batch')}"
    return f"{service}:{operation}"


def _resource_names(service: str, params: Mapping[str, Any]) -> list[str]:
    """The real names a call addresses, for services whose grants name resources by logical id."""
    if service == "dynamodb":
        if "TableName" in params:
            return [str(params["TableName"])]
        return [str(t) for t in params.get("RequestItems", {})]
    if service == "sqs" and "QueueUrl" in params:
        return [str(params["QueueUrl"])]
    return []


def access_denied(action: str, operation: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "AccessDenied", "Message": f"not authorized to perform: {action}"},
            "ResponseMetadata": {"HTTPStatusCode": 403},
        },
        operation,
    )


@dataclass
class Role:
    """A role's grants, the test stack's names for its logical resources, and what was used.

    ``names`` maps a logical id to the name or URL a call carries (``LedgerTable`` -> the
    table name, ``OcrQueue`` -> the queue URL). A DynamoDB or SQS call on a resource not in
    ``names`` is refused: the role could only name resources of its own stack.
    """

    name: str
    grants: frozenset[Grant]
    names: Mapping[str, str] = field(default_factory=dict)
    # Only the action is checked (the redrive tests, which name no resources).
    actions_only: bool = False
    used: set[Grant] = field(default_factory=set)
    denied: list[str] = field(default_factory=list)

    @classmethod
    def from_template(cls, name: str, names: Mapping[str, str] | None = None, **parameters: str) -> Role:
        return cls(name, role_grants(name, **parameters), dict(names or {}))

    @property
    def actions(self) -> frozenset[str]:
        return frozenset(g.action for g in self.grants)

    def with_actions(self, action: str) -> list[Grant]:
        return [g for g in self.grants if g.action == action]

    def authorize(self, action: str, resources: Iterable[str] = ()) -> list[Grant]:
        """The grants that allow ``action`` on every one of ``resources`` (the real names); [] = denied."""
        candidates = self.with_actions(action)
        resources = list(resources)
        if self.actions_only or not resources:
            return candidates
        logical = {real: logical_id for logical_id, real in self.names.items()}
        matched: list[Grant] = []
        for real in resources:
            hit = [g for g in candidates if g.resource == logical.get(real)]
            if not hit:
                return []
            matched.extend(hit)
        return matched

    def use(self, grants: Iterable[Grant]) -> None:
        self.used.update(grants)

    def unused(self, runtime_only: Mapping[str, str] = {}) -> set[Grant]:
        """Grants no call used, except actions that only the runtime performs (action -> why)."""
        return {g for g in self.grants - self.used if g.action not in runtime_only}

    def client(self, client: Any) -> RoleClient:
        return RoleClient(client, self)

    def opensearch(self, client: Any, domain_arn: str) -> Any:
        """``client`` with its transport limited to this role's ``es:ESHttp*`` grants (modifies it)."""
        client.transport = RoleTransport(client.transport, self, domain_arn)
        return client


class RoleClient:
    """A boto3 client that answers AccessDenied, as IAM would, to every call the role does not grant."""

    def __init__(self, client: Any, role: Role | frozenset[str]) -> None:
        if not isinstance(role, Role):
            role = Role("actions", frozenset(Grant(a, "*") for a in role), actions_only=True)
        self._client = client
        self._role = role
        self._service = client.meta.service_model.service_name
        self.denied: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        operation = self._client.meta.method_to_api_mapping.get(name)
        if operation is None:
            return attribute

        def call(**params: Any) -> Any:
            action = iam_action(self._service, operation, params)
            grants = self._role.authorize(action, _resource_names(self._service, params))
            if not grants:
                self.denied.append(action)
                self._role.denied.append(action)
                raise access_denied(action, operation)
            self._role.use(grants)
            if self._service == "s3" and operation in {"GetObject", "HeadObject"}:
                return self._read_object(attribute, operation, params)
            return attribute(**params)

        return call

    def get_paginator(self, name: str) -> Any:
        """A paginator whose calls the role must grant, like the client's own methods."""
        paginator = self._client.get_paginator(name)
        operation = self._client.meta.method_to_api_mapping[name]
        outer = self

        class Paginator:
            def paginate(self, **params: Any) -> Any:
                call = {k: v for k, v in params.items() if k != "PaginationConfig"}
                action = iam_action(outer._service, operation, call)
                grants = outer._role.authorize(action, _resource_names(outer._service, call))
                if not grants:
                    outer.denied.append(action)
                    outer._role.denied.append(action)
                    raise access_denied(action, operation)
                outer._role.use(grants)
                return paginator.paginate(**params)

        return Paginator()

    def _read_object(self, method: Any, operation: str, params: dict[str, Any]) -> Any:
        try:
            return method(**params)
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status != 404:
                raise
            listing = self._role.with_actions("s3:ListBucket")
            if not listing:
                # Without s3:ListBucket, S3 does not tell a missing key from a forbidden one.
                self.denied.append("s3:ListBucket")
                self._role.denied.append("s3:ListBucket")
                raise access_denied(f"s3:{operation}", operation) from exc
            self._role.use(listing)
            raise


class RoleTransport:
    """An opensearch-py transport that sends only what the role's ``es:ESHttp<Method>`` grants allow."""

    def __init__(self, transport: Any, role: Role, domain_arn: str) -> None:
        self._transport = transport
        self._role = role
        self._domain_arn = domain_arn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def perform_request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        from opensearchpy.exceptions import AuthorizationException

        action = f"es:ESHttp{method.capitalize()}"
        resource = self._domain_arn + unquote(url.split("?", 1)[0]).rstrip("/")
        grants = [g for g in self._role.with_actions(action) if fnmatch.fnmatchcase(resource, g.resource)]
        if not grants:
            self._role.denied.append(f"{action} {resource}")
            raise AuthorizationException(403, "security_exception", {"error": f"no {action} on {resource}"})
        self._role.use(grants)
        return self._transport.perform_request(method, url, *args, **kwargs)
