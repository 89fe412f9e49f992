"""Permission verdicts: resources named by ARN (not by queue URL, incident cause 5), every action granted."""

from __future__ import annotations

import json
from typing import Any

from docindex.ops.diagnose.facts.iam import SIMULATION_RAN, PermissionFacts
from docindex.ops.diagnose.report import Check, Status


def judge_permissions(facts: PermissionFacts) -> Check:
    """FAIL for a resource that is not an ARN or an action the simulation denies; SKIP when unverifiable."""
    problems = [p for where, document in facts.policies for p in policy_problems(document, where)]
    denied = [f"{r['EvalActionName']} on {r.get('EvalResourceName')}: {r.get('EvalDecision')}" for r in facts.denied]
    problems += denied
    evidence = [f"indexer role: {facts.role_arn}"]
    if facts.simulation != SIMULATION_RAN:
        evidence.append(f"policy simulation: {facts.simulation}")
    elif not denied:
        evidence.append("policy simulation: every required action allowed")
    if problems:
        return Check(
            "permissions",
            "function permissions",
            Status.FAIL,
            f"{len(problems)} problem(s): {problems[0]}",
            evidence + problems,
            fix="name resources by ARN (arn:aws:sqs:REGION:ACCOUNT:QUEUE, not the queue URL) and grant the "
            "actions above; the template's IndexerRole has the exact list",
        )
    if facts.simulation != SIMULATION_RAN:
        return Check(
            "permissions",
            "function permissions",
            Status.SKIP,
            "no resource named by URL; the policy simulator is not available here, so the grants are unverified",
            evidence,
        )
    return Check("permissions", "function permissions", Status.OK, "the role can call what the indexer needs", evidence)


def policy_problems(document: Any, where: str) -> list[str]:
    """Statements naming a resource that is not an ARN (the incident's queue URLs, cause 5)."""
    if isinstance(document, str):
        from urllib.parse import unquote

        try:
            document = json.loads(unquote(document))
        except ValueError:
            return [f"{where}: unreadable policy document"]
    statements = document.get("Statement", []) if isinstance(document, dict) else []
    if isinstance(statements, dict):
        statements = [statements]
    problems = []
    for i, statement in enumerate(statements):
        resources = statement.get("Resource", [])
        for resource in [resources] if isinstance(resources, str) else resources:
            if resource == "*" or str(resource).startswith("arn:"):
                continue
            hint = (
                " (a URL: IAM needs the ARN, arn:aws:sqs:REGION:ACCOUNT:QUEUE for a queue)"
                if "://" in str(resource)
                else ""
            )
            problems.append(f"{where} statement {statement.get('Sid', i)}: resource {resource!r} is not an ARN{hint}")
    return problems
