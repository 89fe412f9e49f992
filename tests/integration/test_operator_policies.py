"""Every operator command is admitted by the stack's own policies (issue 36).

Locally nothing enforces a queue policy, so a command that a real stack refuses passes every other
test: ``reconcile --fix`` once re-queued stuck OCR jobs on the OCR queue with the operator's
credentials, which the OCR queue's policy denies to every principal but the stack's roles. Here each
command runs as a user runs it (``main([...])`` with the stack's env file) against moto server and
a real OpenSearch node, its AWS clients holding what docs/operations.md tells an administrator to grant for
that command, and refusing, as AWS would, whatever template.yaml's queue, bucket and key policies
deny (tests/support/operator_policy.py). A refused call fails the test with the command, the action,
the resource and the policy statement that refused it.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devkit import samples
from devkit.messages import s3_notification, sqs_event
from docindex.cli import main
from docindex.core.clients import AwsClients
from docindex.ops.envfile import write_env_file
from tests.conftest import Stack
from tests.integration.conftest import build_indexer, invoke
from tests.support.operator_policy import Operator, ResourcePolicies, documented_permissions, refusals
from tests.support.scans import CARD_INCHES, LAYOUT, REPORT_LINES

pytestmark = pytest.mark.integration

POLICIES = ResourcePolicies.of_template()
PERMISSIONS = documented_permissions()


def logical_names(stack: Stack) -> dict[str, str]:
    """The local stack's names and URLs -> the logical ids of template.yaml."""
    env = stack.env
    return {
        env["DOCINDEX_BUCKET"]: "DocumentsBucket",
        env["CONTENT_CACHE_BUCKET"]: "ContentCacheBucket",
        env["INGEST_QUEUE_URL"]: "IngestQueue",
        env["INGEST_DLQ_URL"]: "IngestDlq",
        env["OCR_QUEUE_URL"]: "OcrQueue",
        env["OCR_DLQ_URL"]: "OcrDlq",
        env["EMBED_QUEUE_URL"]: "EmbedQueue",
        env["EMBED_DLQ_URL"]: "EmbedDlq",
        env["LEDGER_TABLE"]: "LedgerTable",
        env["IDEMPOTENCY_TABLE"]: "IdempotencyTable",
    }


@pytest.fixture
def as_operator(stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``run(row, *args)``: ``docindex ARGS`` with the clients an operator holds for that row of the table."""
    env_file = tmp_path / "docindex.env"
    write_env_file(env_file, stack.settings_env())
    names = logical_names(stack)
    operators: list[Operator] = []
    current: list[Operator] = []
    real_client = AwsClients.client

    def client(self: AwsClients, service: str) -> Any:
        return current[-1].client(real_client(self, service))

    monkeypatch.setattr(AwsClients, "client", client)

    def run(row: str, *args: str, ok: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
        """The command's JSON document; a refusal (exit 2, one line) is left to the test's last assertion."""
        operator = Operator(row, PERMISSIONS.get(row, frozenset()), POLICIES, names)
        operators.append(operator)
        current.append(operator)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main([*args, "--env-file", str(env_file), "--json"])
        if operator.refused:
            return {"exit_code": code}
        assert code in ok, f"docindex {' '.join(args)} exited {code}: {out.getvalue()[-500:]}"
        return {"exit_code": code, **json.loads(out.getvalue())}

    run.operators = operators  # type: ignore[attr-defined]
    return run


def put(stack: Stack, key: str, body: bytes, sequencer: str = "0001") -> dict[str, Any]:
    etag = stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body)["ETag"].strip('"')
    return s3_notification(stack.bucket, key, sequencer=sequencer, etag=etag, size=len(body))


def test_every_operator_command_is_admitted_by_the_stacks_policies(
    stack: Stack, as_operator: Any, tmp_path: Path
) -> None:
    # Given an index with two text files, a file the index misses, and a scan whose OCR job died
    indexer = build_indexer(stack)
    for key, text in (("営業部/見積書.txt", "見積書 合計 120,000円"), ("総務部/議事録.txt", "定例会議 議事録")):
        assert invoke(indexer, sqs_event(put(stack, key, text.encode()))) == set()
    put(stack, "営業部/提案書.txt", "提案書 新規".encode())
    scan = samples.make_scan_png(REPORT_LINES[:1], dpi=200, page=CARD_INCHES, **LAYOUT)
    assert invoke(indexer, sqs_event(put(stack, "スキャン/受領書.png", scan))) == set()
    assert len(stack.messages("OCR_QUEUE_URL", delete=True)) == 1  # dead-lettered and expired
    stack.messages("INGEST_QUEUE_URL", delete=True)
    time.sleep(1.1)

    # When an operator runs every command that reads or writes the stack's queues, bucket and tables
    report = as_operator("reconcile", "reconcile", "--pending-after", "1", "--against-ledger")
    fixed = as_operator("reconcile", "reconcile", "--fix", "--pending-after", "1", "--against-ledger")
    as_operator("reprocess", "reprocess", "--extension", "txt", "--rate", "0")
    as_operator("backfill", "backfill", "--checkpoint", str(tmp_path / "checkpoint.json"), "--rate", "0")
    as_operator("ledger repair", "ledger", "repair")
    as_operator("diagnose", "diagnose", "--sample", "0", "--sample-seconds", "0", ok=(0, 1, 2))
    planned = as_operator("plan", "plan", "--sample", "10", "--no-progress")

    # Then no call was one the documented permissions or the template's policies refuse
    refused = refusals(as_operator.operators)
    assert not refused, "\n".join(refused)
    # ... and each did its work
    assert report["pending_ocr"]["stuck"] == 1
    assert report["missing"] == 1
    assert fixed["pending_ocr"]["requeued"] == 1
    assert planned["sample"]["measured"] == planned["files"] == 4
