"""Security facts: how the OpenSearch domain (or collection) and the documents bucket are protected.

Read-only: ``es:DescribeDomain`` (a managed domain), ``aoss:ListSecurityPolicies`` /
``aoss:GetSecurityPolicy`` / ``aoss:ListAccessPolicies`` / ``aoss:GetAccessPolicy``
(a Serverless collection), and ``s3:GetBucketPolicy`` / ``s3:GetEncryptionConfiguration`` /
``s3:GetBucketVersioning`` on the bucket.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from docindex.core.aws import error_code
from docindex.core.exceptions import Unsupported
from docindex.ops.diagnose.facts.reader import Reader


@dataclass(frozen=True)
class DomainFacts:
    """A managed domain's protections, as DescribeDomain reports them."""

    name: str
    encryption_at_rest: bool
    node_to_node: bool
    enforce_https: bool
    tls_policy: str | None
    fine_grained: bool
    access_policy: Mapping[str, Any] | None  # the resource policy, parsed; None when there is none
    stack_roles: tuple[str, ...] = ()  # role ARNs of the stack known here (the indexer's...)


@dataclass(frozen=True)
class CollectionFacts:
    """A Serverless collection's encryption, network and data access policies that name it."""

    name: str
    encryption_policies: tuple[Mapping[str, Any], ...]
    network_policies: tuple[Mapping[str, Any], ...]
    access_policies: tuple[Mapping[str, Any], ...]
    stack_roles: tuple[str, ...] = ()


@dataclass(frozen=True)
class BucketFacts:
    """The documents bucket's policy, default encryption and versioning."""

    bucket: str
    existing: bool  # ExistingBucketName (not created by the stack)
    policy: Mapping[str, Any] | None
    encryption_rules: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)
    versioning: str | None = None  # "Enabled", "Suspended" or None (never enabled)


def _stack_roles(reader: Reader) -> tuple[str, ...]:
    """The indexer's role ARN when it can be read (not locally: no Lambda there)."""
    d = reader.deployment
    if d.is_local or not d.function_name:
        return ()
    try:
        return (str(reader.client("lambda").get_function_configuration(FunctionName=d.function_name)["Role"]),)
    except ClientError:
        return ()


def domain_facts(reader: Reader) -> DomainFacts | CollectionFacts:
    """The domain's (or collection's) protections, from the ARN the deployment names."""
    d = reader.deployment
    if not d.opensearch_arn:
        raise Unsupported("needs the OpenSearch ARN (--stack: the OpenSearchArn parameter)")
    resource = d.opensearch_arn.split(":", 5)[-1]  # domain/NAME or collection/ID
    kind, _, name = resource.partition("/")
    if kind == "collection":
        return _collection_facts(reader, name)
    status = reader.client("opensearch").describe_domain(DomainName=name)["DomainStatus"]
    endpoint = status.get("DomainEndpointOptions") or {}
    policy_text = status.get("AccessPolicies") or ""
    return DomainFacts(
        name=name,
        encryption_at_rest=bool((status.get("EncryptionAtRestOptions") or {}).get("Enabled")),
        node_to_node=bool((status.get("NodeToNodeEncryptionOptions") or {}).get("Enabled")),
        enforce_https=bool(endpoint.get("EnforceHTTPS")),
        tls_policy=endpoint.get("TLSSecurityPolicy"),
        fine_grained=bool((status.get("AdvancedSecurityOptions") or {}).get("Enabled")),
        access_policy=json.loads(policy_text) if policy_text.strip() else None,
        stack_roles=_stack_roles(reader),
    )


def _collection_facts(reader: Reader, collection_id: str) -> CollectionFacts:
    aoss = reader.client("opensearchserverless")
    names = aoss.batch_get_collection(ids=[collection_id]).get("collectionDetails", [])
    name = names[0]["name"] if names else collection_id

    def security(kind: str) -> tuple[Mapping[str, Any], ...]:
        found = []
        for summary in aoss.list_security_policies(type=kind, resource=[f"collection/{name}"]).get(
            "securityPolicySummaries", []
        ):
            detail = aoss.get_security_policy(name=summary["name"], type=kind)["securityPolicyDetail"]
            found.append(_policy(detail.get("policy")))
        return tuple(found)

    access = []
    for summary in aoss.list_access_policies(type="data", resource=[f"collection/{name}"]).get(
        "accessPolicySummaries", []
    ):
        detail = aoss.get_access_policy(name=summary["name"], type="data")["accessPolicyDetail"]
        access.append(_policy(detail.get("policy")))
    return CollectionFacts(name, security("encryption"), security("network"), tuple(access), _stack_roles(reader))


def _policy(value: Any) -> Mapping[str, Any]:
    """A policy document whether the API returns it parsed or as JSON text (lists wrapped)."""
    parsed = json.loads(value) if isinstance(value, str) else value
    return {"Rules": parsed} if isinstance(parsed, list) else dict(parsed or {})


def bucket_facts(reader: Reader) -> BucketFacts:
    """The bucket's policy, default encryption rules and versioning status."""
    d = reader.deployment
    if not d.bucket:
        raise Unsupported("needs the documents bucket (--stack or DOCINDEX_BUCKET)")
    existing = bool(d.parameters.get("ExistingBucketName"))
    if not existing and d.is_local:
        raise Unsupported("the local run's bucket (a deployed stack's is checked)")
    if not existing and d.stack_name:
        raise Unsupported("the stack created the bucket: template.yaml makes it TLS-only, encrypted and versioned")
    s3 = reader.client("s3")
    try:
        policy: Mapping[str, Any] | None = json.loads(s3.get_bucket_policy(Bucket=d.bucket)["Policy"])
    except ClientError as exc:
        if error_code(exc) != "NoSuchBucketPolicy":
            raise
        policy = None
    try:
        config = s3.get_bucket_encryption(Bucket=d.bucket)["ServerSideEncryptionConfiguration"]
        rules = tuple(config.get("Rules", []))
    except ClientError as exc:
        if error_code(exc) != "ServerSideEncryptionConfigurationNotFoundError":
            raise
        rules = ()
    versioning = s3.get_bucket_versioning(Bucket=d.bucket).get("Status")
    return BucketFacts(d.bucket, existing, policy, rules, versioning)
