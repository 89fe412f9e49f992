"""The domain and bucket security verdicts of `docindex diagnose` (pure judge_* functions)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from docindex.ops.diagnose.checks.security import judge_bucket, judge_domain
from docindex.ops.diagnose.facts.security import BucketFacts, CollectionFacts, DomainFacts
from docindex.ops.diagnose.report import Status

INDEXER = "arn:aws:iam::123456789012:role/docindex-prod-IndexerRole-ABC"
WORKER = "arn:aws:iam::123456789012:role/docindex-prod-WorkerTaskRole-DEF"


def allow(*principals: str, condition: dict[str, Any] | None = None) -> dict[str, Any]:
    statement: dict[str, Any] = {"Effect": "Allow", "Principal": {"AWS": list(principals)}, "Action": "es:ESHttp*"}
    if condition:
        statement["Condition"] = condition
    return {"Version": "2012-10-17", "Statement": [statement]}


SAFE = DomainFacts(
    name="docs",
    encryption_at_rest=True,
    node_to_node=True,
    enforce_https=True,
    tls_policy="Policy-Min-TLS-1-2-2019-07",
    fine_grained=False,
    access_policy=allow(INDEXER, WORKER),
    stack_roles=(INDEXER,),
)


def test_an_encrypted_https_only_domain_scoped_to_the_stack_roles_passes() -> None:
    check = judge_domain(SAFE)
    assert (check.status, check.fix) == (Status.OK, None)


@pytest.mark.parametrize(
    ("change", "status", "words", "fix"),
    [
        ({"encryption_at_rest": False}, Status.FAIL, "encryption at rest is off", "--encryption-at-rest-options"),
        ({"node_to_node": False}, Status.FAIL, "node-to-node encryption is off", "--node-to-node-encryption-options"),
        ({"enforce_https": False}, Status.FAIL, "HTTPS is not enforced", "EnforceHTTPS=true"),
        ({"tls_policy": "Policy-Min-TLS-1-0-2019-07"}, Status.WARN, "TLS 1.0/1.1", "Policy-Min-TLS-1-2"),
        ({"access_policy": allow("*")}, Status.FAIL, "allows anyone", "access policy"),
        (
            {"access_policy": allow("*", condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})},
            Status.WARN,
            "limited only by a condition",
            "access policy",
        ),
        ({"access_policy": allow("arn:aws:iam::123456789012:root")}, Status.WARN, "whole accounts", "access policy"),
        ({"access_policy": allow(WORKER)}, Status.WARN, "does not name the stack's role", "access policy"),
        (
            {"access_policy": allow(INDEXER, "arn:aws:iam::999999999999:role/x")},
            Status.WARN,
            "also admits arn:aws:iam::999999999999:role/x",
            "access policy",
        ),
        ({"access_policy": None}, Status.WARN, "no fine-grained access control and no access policy", "fine-grained"),
    ],
)
def test_each_missing_protection_is_named_with_its_fix(
    change: dict[str, Any], status: Status, words: str, fix: str
) -> None:
    check = judge_domain(replace(SAFE, **change))
    assert check.status is status
    assert words in check.summary
    assert fix in (check.fix or "")


def test_fine_grained_access_control_makes_the_access_policy_secondary() -> None:
    check = judge_domain(replace(SAFE, fine_grained=True, access_policy=allow("arn:aws:iam::123456789012:root")))
    assert check.status is Status.OK


def test_the_worst_finding_decides_and_every_finding_is_reported() -> None:
    check = judge_domain(replace(SAFE, node_to_node=False, tls_policy=None))
    assert check.status is Status.FAIL
    assert "node-to-node" in check.summary
    assert "TLS policy default" in check.summary


def test_a_serverless_collection_needs_encryption_private_network_and_scoped_data_access() -> None:
    good = CollectionFacts(
        name="docs",
        encryption_policies=({"Rules": [{"ResourceType": "collection"}], "AWSOwnedKey": True},),
        network_policies=({"Rules": [{"AllowFromPublic": False}]},),
        access_policies=({"Rules": [{"Principal": [INDEXER]}]},),
        stack_roles=(INDEXER,),
    )
    assert judge_domain(good).status is Status.OK
    public = replace(good, network_policies=({"Rules": [{"AllowFromPublic": True}]},))
    assert "public access" in judge_domain(public).summary
    unencrypted = replace(good, encryption_policies=())
    assert judge_domain(unencrypted).status is Status.FAIL
    everyone = replace(good, access_policies=({"Rules": [{"Principal": ["*"]}]},))
    assert judge_domain(everyone).status is Status.FAIL


TLS_ONLY = {
    "Statement": [
        {
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    ]
}
KMS = ({"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}},)


def test_a_tls_only_encrypted_versioned_bucket_passes() -> None:
    check = judge_bucket(BucketFacts("corp-files", True, TLS_ONLY, KMS, "Enabled"))
    assert check.status is Status.OK
    assert "default encryption: aws:kms" in check.evidence


@pytest.mark.parametrize(
    ("facts", "status", "words", "fix"),
    [
        (BucketFacts("corp-files", True, None, KMS, "Enabled"), Status.FAIL, "without TLS", "aws:SecureTransport"),
        (
            BucketFacts("corp-files", True, TLS_ONLY, (), "Enabled"),
            Status.FAIL,
            "no default encryption",
            "put-bucket-encryption",
        ),
        (
            BucketFacts("corp-files", True, TLS_ONLY, KMS, None),
            Status.WARN,
            "versioning is off",
            "put-bucket-versioning",
        ),
        (
            BucketFacts("corp-files", True, TLS_ONLY, KMS, "Suspended"),
            Status.WARN,
            "versioning is suspended",
            "Status=Enabled",
        ),
    ],
)
def test_each_missing_bucket_protection_is_named_with_its_fix(
    facts: BucketFacts, status: Status, words: str, fix: str
) -> None:
    check = judge_bucket(facts)
    assert check.status is status
    assert words in check.summary
    assert fix in (check.fix or "")
