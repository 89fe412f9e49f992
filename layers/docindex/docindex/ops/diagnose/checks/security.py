"""Security verdicts: the OpenSearch domain (or collection) and the documents bucket.

The index holds the documents' text: a domain without encryption, reachable
over plain HTTP or open to principals beyond the stack's roles leaks it; a
bucket without a TLS-only policy, default encryption or versioning loses or
exposes the documents themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from docindex.ops.diagnose.facts.security import BucketFacts, CollectionFacts, DomainFacts
from docindex.ops.diagnose.report import Check, Status, worst

# TLS policies that refuse TLS 1.0 and 1.1.
TLS_1_2_POLICIES = frozenset({"Policy-Min-TLS-1-2-2019-07", "Policy-Min-TLS-1-2-PFS-2023-10"})


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _allow_principals(policy: Mapping[str, Any]) -> Iterator[tuple[str, bool]]:
    """(principal, has a condition) of every Allow statement ("*" for anyone)."""
    for statement in _as_list(policy.get("Statement", [])):
        if statement.get("Effect") != "Allow":
            continue
        principal = statement.get("Principal", "*")
        conditioned = bool(statement.get("Condition"))
        if principal == "*":
            yield "*", conditioned
            continue
        for value in _as_list(principal.get("AWS", [])) if isinstance(principal, dict) else []:
            yield str(value), conditioned


def _scope_finding(principals: list[tuple[str, bool]], stack_roles: tuple[str, ...]) -> tuple[Status, str] | None:
    """A finding about who the access policy admits; None when only the stack's roles are."""
    if any(p == "*" and not conditioned for p, conditioned in principals):
        return Status.FAIL, "the access policy allows anyone (Principal *)"
    if any(p == "*" for p, _ in principals):
        return Status.WARN, "the access policy allows anyone, limited only by a condition (an IP range?)"
    roots = [p for p, _ in principals if p.endswith(":root") or p.isdigit()]
    if roots:
        return Status.WARN, f"the access policy admits whole accounts ({', '.join(roots)}), not the stack's roles"
    if stack_roles:
        # The worker's and the redrive's roles are not known here: roles of the stack's
        # account are accepted, principals of other accounts are named.
        accounts = {r.split(":")[4] for r in stack_roles if r.count(":") >= 5}
        others = sorted({p for p, _ in principals if p.count(":") >= 5 and p.split(":")[4] not in accounts})
        missing = [r for r in stack_roles if r not in {p for p, _ in principals}]
        if missing:
            return Status.WARN, f"the access policy does not name the stack's role {', '.join(missing)}"
        if others:
            return Status.WARN, f"the access policy also admits {', '.join(others)}"
    return None


def judge_domain(facts: DomainFacts | CollectionFacts) -> Check:
    """FAIL without encryption at rest, node-to-node encryption, HTTPS, or with an open access policy."""
    if isinstance(facts, CollectionFacts):
        return judge_collection(facts)
    findings: list[tuple[Status, str, str]] = []
    domain = facts.name
    if not facts.encryption_at_rest:
        findings.append(
            (
                Status.FAIL,
                "encryption at rest is off: the documents' text is stored in clear",
                f"aws opensearch update-domain-config --domain-name {domain} --encryption-at-rest-options Enabled=true",
            )
        )
    if not facts.node_to_node:
        findings.append(
            (
                Status.FAIL,
                "node-to-node encryption is off",
                f"aws opensearch update-domain-config --domain-name {domain} "
                "--node-to-node-encryption-options Enabled=true",
            )
        )
    if not facts.enforce_https:
        findings.append(
            (
                Status.FAIL,
                "HTTPS is not enforced: requests over plain HTTP are accepted",
                f"aws opensearch update-domain-config --domain-name {domain} "
                "--domain-endpoint-options EnforceHTTPS=true,TLSSecurityPolicy=Policy-Min-TLS-1-2-2019-07",
            )
        )
    elif facts.tls_policy not in TLS_1_2_POLICIES:
        findings.append(
            (
                Status.WARN,
                f"TLS policy {facts.tls_policy or 'default'} still accepts TLS 1.0/1.1",
                f"aws opensearch update-domain-config --domain-name {domain} "
                "--domain-endpoint-options EnforceHTTPS=true,TLSSecurityPolicy=Policy-Min-TLS-1-2-2019-07",
            )
        )
    access_fix = (
        "enable fine-grained access control and map the stack's roles, or scope the domain's access policy "
        "to the stack's roles (docs/deploy.md#prerequisites)"
    )
    if not facts.fine_grained:
        if facts.access_policy is None:
            findings.append(
                (
                    Status.WARN,
                    "no fine-grained access control and no access policy: any principal of the account "
                    "with an es:ESHttp* grant reaches every index",
                    access_fix,
                )
            )
        else:
            scope = _scope_finding(list(_allow_principals(facts.access_policy)), facts.stack_roles)
            if scope:
                findings.append((scope[0], scope[1], access_fix))
    evidence = [
        f"domain {domain}",
        f"encryption at rest: {'on' if facts.encryption_at_rest else 'OFF'}",
        f"node-to-node encryption: {'on' if facts.node_to_node else 'OFF'}",
        f"HTTPS enforced: {'yes' if facts.enforce_https else 'NO'} (TLS policy {facts.tls_policy or 'default'})",
        f"fine-grained access control: {'on' if facts.fine_grained else 'off'}",
    ]
    if facts.stack_roles:
        evidence.append(f"stack roles: {', '.join(facts.stack_roles)}")
    return _verdict("domain-security", "OpenSearch domain security", findings, evidence, "encrypted, HTTPS only")


def judge_collection(facts: CollectionFacts) -> Check:
    """Serverless: an encryption policy, no public network access, data access scoped to the stack's roles."""
    findings: list[tuple[Status, str, str]] = []
    name = facts.name
    if not facts.encryption_policies:
        findings.append(
            (
                Status.FAIL,
                "no encryption policy names the collection",
                f"aws opensearchserverless create-security-policy --type encryption --name {name}-enc ...",
            )
        )
    if any(_public(policy) for policy in facts.network_policies):
        findings.append(
            (
                Status.WARN,
                "a network policy allows public access to the collection",
                "restrict the network policy to a VPC endpoint (AllowFromPublic false)",
            )
        )
    principals = [
        (str(p), False)
        for policy in facts.access_policies
        for rule in _rules(policy)
        for p in rule.get("Principal", [])
    ]
    if not facts.access_policies:
        findings.append(
            (Status.FAIL, "no data access policy names the collection", "add a data access policy for the roles")
        )
    else:
        scope = _scope_finding(principals, facts.stack_roles)
        if scope:
            findings.append((scope[0], scope[1], "scope the data access policy to the stack's roles"))
    evidence = [
        f"collection {name}",
        f"encryption policies: {len(facts.encryption_policies)}",
        f"network policies: {len(facts.network_policies)}",
        f"data access principals: {', '.join(sorted({p for p, _ in principals})) or 'none'}",
    ]
    return _verdict("domain-security", "OpenSearch collection security", findings, evidence, "encrypted, scoped")


def _rules(policy: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    rules = policy.get("Rules", [])
    return [r for r in rules if isinstance(r, Mapping)]


def _public(policy: Mapping[str, Any]) -> bool:
    return any(bool(rule.get("AllowFromPublic")) for rule in _rules(policy))


def _denies_insecure_transport(policy: Mapping[str, Any]) -> bool:
    for statement in _as_list(policy.get("Statement", [])):
        condition = (statement.get("Condition") or {}).get("Bool", {})
        if statement.get("Effect") == "Deny" and str(condition.get("aws:SecureTransport")).lower() == "false":
            return True
    return False


def judge_bucket(facts: BucketFacts) -> Check:
    """FAIL without a TLS-only policy or default encryption; WARN without versioning."""
    bucket = facts.bucket
    findings: list[tuple[Status, str, str]] = []
    if facts.policy is None or not _denies_insecure_transport(facts.policy):
        findings.append(
            (
                Status.FAIL,
                "the bucket policy does not deny requests without TLS",
                f"add to s3://{bucket}'s policy: a Deny of s3:* for Principal * when aws:SecureTransport is false "
                "(docs/deploy.md#existing-bucket)",
            )
        )
    if not facts.encryption_rules:
        findings.append(
            (
                Status.FAIL,
                "no default encryption",
                f"aws s3api put-bucket-encryption --bucket {bucket} --server-side-encryption-configuration "
                '\'{"Rules":[{"ApplyServerSideEncryptionByDefault":{"SSEAlgorithm":"aws:kms"}}]}\'',
            )
        )
    if facts.versioning != "Enabled":
        findings.append(
            (
                Status.WARN,
                f"versioning is {(facts.versioning or 'off').lower()}: an overwritten or deleted document is lost",
                f"aws s3api put-bucket-versioning --bucket {bucket} --versioning-configuration Status=Enabled",
            )
        )
    algorithms = [
        str((r.get("ApplyServerSideEncryptionByDefault") or {}).get("SSEAlgorithm")) for r in facts.encryption_rules
    ]
    evidence = [
        f"s3://{bucket} ({'ExistingBucketName' if facts.existing else 'created by the stack'})",
        f"TLS-only policy: {'yes' if facts.policy and _denies_insecure_transport(facts.policy) else 'NO'}",
        f"default encryption: {', '.join(algorithms) or 'NONE'}",
        f"versioning: {facts.versioning or 'never enabled'}",
    ]
    return _verdict(
        "bucket-security", "documents bucket security", findings, evidence, "TLS only, encrypted, versioned"
    )


def _verdict(check_id: str, title: str, findings: list[tuple[Status, str, str]], evidence: list[str], ok: str) -> Check:
    if not findings:
        return Check(check_id, title, Status.OK, ok, evidence)
    status = worst(f[0] for f in findings)
    summary = "; ".join(f[1] for f in findings)
    fixes = " | ".join(dict.fromkeys(f[2] for f in findings))
    return Check(check_id, title, status, summary, evidence, fix=fixes)
