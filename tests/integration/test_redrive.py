"""The redrive service against real queues and state (moto server) and real OpenSearch health (a real node).

moto has no StartMessageMoveTask / ListMessageMoveTasks / CancelMessageMoveTask, so
ONLY those three calls go to a separate boto3 SQS client wrapped in botocore's
``Stubber`` (an explicit stub of the AWS API, asserting the exact request
parameters). Everything else — queues, their attributes, ListDeadLetterSourceQueues,
the DynamoDB state — is moto in server mode over HTTP. The endpoint-says-unsupported
path is tested against the real moto server, without a stub.

``RoleClient`` (tests/support/roles.py) wraps those clients and refuses, as IAM would with
AccessDenied, every call whose action template.yaml's ``RedriveRole`` does not grant: code
and IAM agree.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber
from opensearchpy import OpenSearch

from docindex.redrive.models import UNSUPPORTED_REASON, RedriveRequest
from docindex.redrive.probes import OpenSearchHealth, ThroughputProbe
from docindex.redrive.service import RedriveService
from docindex.redrive.settings import RedriveSettings
from docindex.redrive.state import RedriveStateStore
from tests.support.roles import RoleClient, granted_actions

pytestmark = pytest.mark.integration

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account; events/redrive-*.json name it too
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
TABLE = "docindex-state"
VISIBILITY_TIMEOUT = 60
MAX_RECEIVE_COUNT = 3


def arn(name: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"


INGEST_DLQ = arn("docindex-ingest-dlq")
OCR_DLQ = arn("docindex-ocr-dlq")
INGEST = arn("docindex-ingest")
OCR = arn("docindex-ocr")
# Each DLQ's one source queue: the DestinationArn a start names unless told otherwise.
SOURCE_OF = {INGEST_DLQ: INGEST, OCR_DLQ: OCR}
# expect_start(..., destination=ORIGINAL_SOURCES): no DestinationArn at all.
ORIGINAL_SOURCES = ""


class Clock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class World:
    """Queues and table on moto, the stubbed move-task client, and a service over them."""

    sqs: Any
    dynamodb: Any
    moves: Any
    stub: Stubber
    urls: dict[str, str]
    clock: Clock
    health: Any
    env: dict[str, str] = field(default_factory=dict)

    def settings(self, **overrides: str) -> RedriveSettings:
        env = {
            "REDRIVE_STATE_TABLE": TABLE,
            "INGEST_DLQ_ARN": INGEST_DLQ,
            "OCR_DLQ_ARN": OCR_DLQ,
            "AWS_REGION": REGION,
        }
        env.update(overrides)
        return RedriveSettings.from_env(env)

    def service(self, health: Any = "default", throughput: Any = None, **overrides: str) -> RedriveService:
        return RedriveService(
            settings=self.settings(**overrides),
            sqs=self.sqs,
            move_tasks=self.moves,
            state=RedriveStateStore(self.dynamodb, TABLE),
            health=self.health if health == "default" else health,
            clock=self.clock,
            throughput=throughput,
        )

    def send(self, queue: str, count: int) -> None:
        for i in range(count):
            self.sqs.send_message(QueueUrl=self.urls[queue], MessageBody=json.dumps({"n": i}))

    def hold_in_flight(self, queue: str, count: int) -> None:
        """Receive messages without deleting them: visible -> in flight."""
        got = 0
        while got < count:
            got += len(
                self.sqs.receive_message(
                    QueueUrl=self.urls[queue], MaxNumberOfMessages=count - got, VisibilityTimeout=600
                ).get("Messages", [])
            )

    def drain(self, queue: str, count: int) -> None:
        """Consume and delete messages, as a healthy consumer would."""
        done = 0
        while done < count:
            for message in self.sqs.receive_message(
                QueueUrl=self.urls[queue], MaxNumberOfMessages=min(10, count - done)
            ).get("Messages", []):
                self.sqs.delete_message(QueueUrl=self.urls[queue], ReceiptHandle=message["ReceiptHandle"])
                done += 1

    def state_item(self, dlq_arn: str) -> dict[str, Any] | None:
        item = self.dynamodb.get_item(TableName=TABLE, Key={"id": {"S": f"redrive#{dlq_arn}"}}).get("Item")
        return item

    # -- the stubbed message-move API (the only calls not served by moto)

    def expect_list(self, dlq_arn: str, *tasks: dict[str, Any]) -> None:
        self.stub.add_response(
            "list_message_move_tasks",
            {"Results": list(tasks)},
            expected_params={"SourceArn": dlq_arn, "MaxResults": 1},
        )

    def expect_start(self, dlq_arn: str, velocity: int, handle: str, destination: str | None = None) -> None:
        """StartMessageMoveTask with exactly these parameters; DestinationArn defaults to the DLQ's source."""
        params: dict[str, Any] = {"SourceArn": dlq_arn, "MaxNumberOfMessagesPerSecond": velocity}
        destination = SOURCE_OF.get(dlq_arn) if destination is None else destination
        if destination:
            params["DestinationArn"] = destination
        self.stub.add_response("start_message_move_task", {"TaskHandle": handle}, expected_params=params)

    def expect_cancel(self, handle: str, moved: int) -> None:
        self.stub.add_response(
            "cancel_message_move_task",
            {"ApproximateNumberOfMessagesMoved": moved},
            expected_params={"TaskHandle": handle},
        )


def task(status: str, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"Status": status, "SourceArn": fields.pop("source", INGEST_DLQ)}
    entry.update(fields)
    return entry


def aws_client(service: str, endpoint: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"max_attempts": 1}),
    )


def build_world(endpoint: str, health: Any) -> Iterator[World]:
    sqs = aws_client("sqs", endpoint)
    dynamodb = aws_client("dynamodb", endpoint)
    urls: dict[str, str] = {}
    for name in ("docindex-ingest", "docindex-ocr"):
        dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
        urls[f"{name}-dlq"] = dlq_url
        urls[name] = sqs.create_queue(
            QueueName=name,
            Attributes={
                "VisibilityTimeout": str(VISIBILITY_TIMEOUT),
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": arn(f"{name}-dlq"), "maxReceiveCount": MAX_RECEIVE_COUNT}
                ),
            },
        )["QueueUrl"]
    dynamodb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    # A client for the real AWS endpoint that never leaves the process: Stubber answers it.
    moves = boto3.client("sqs", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing")
    with Stubber(moves) as stub:
        yield World(sqs, dynamodb, moves, stub, urls, Clock(), health)
        stub.assert_no_pending_responses()


@pytest.fixture
def engine_health(engine_space: Any) -> OpenSearchHealth:
    return OpenSearchHealth(OpenSearch(hosts=[engine_space.url], timeout=5, max_retries=0))


@pytest.fixture
def world(moto_reset: str, engine_health: OpenSearchHealth) -> Iterator[World]:
    yield from build_world(moto_reset, engine_health)


def start(service: RedriveService, dlq: str | None = INGEST_DLQ, **fields: Any) -> dict[str, Any]:
    request = RedriveRequest(action="start", dlq_arn=dlq, **fields)
    results = service.run(request).to_dict()["results"]
    return results[0] if dlq else {r["dlq_arn"]: r for r in results}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def red_cluster() -> Iterator[str]:
    """An explicit stub of OpenSearch's health endpoint answering "red" (the local node is not red on demand).

    Real HTTP on loopback, so opensearch-py's client code runs unchanged.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"cluster_name": "stub", "status": "red", "timed_out": False}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# ============================================================================ start and its guards


def test_start_calls_message_move_with_exact_parameters_and_records_state(world: World) -> None:
    # Given 5 messages in the ingest DLQ, no task, an idle source and a healthy cluster
    world.send("docindex-ingest-dlq", 5)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, velocity=10, handle="handle-1")

    # When a redrive starts (no destination configured: the DLQ's one source, named explicitly)
    result = start(world.service())

    # Then the task runs at the default velocity and the round is recorded
    assert result["status"] == "started"
    assert result["reason"] is None
    assert result["task_handle"] == "handle-1"
    assert result["velocity"] == 10
    assert result["approximate_messages"] == 5
    assert result["source_arn"] == INGEST
    assert result["destination_arn"] == INGEST
    item = world.state_item(INGEST_DLQ)
    assert item is not None
    assert item["pending"] == {"BOOL": True}
    assert item["depth_at_start"] == {"N": "5"}
    assert item["task_handle"] == {"S": "handle-1"}


def test_start_uses_velocity_from_request_then_per_dlq_setting(world: World) -> None:
    world.send("docindex-ingest-dlq", 1)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, velocity=250, handle="h")
    assert start(world.service(), velocity=250)["velocity"] == 250

    world.send("docindex-ocr-dlq", 1)
    world.expect_list(OCR_DLQ)
    world.expect_start(OCR_DLQ, velocity=3, handle="h2")
    service = world.service(REDRIVE_VELOCITY="20", REDRIVE_VELOCITIES=json.dumps({OCR_DLQ: 3}))
    assert start(service, OCR_DLQ)["velocity"] == 3


def test_configured_destination_is_passed_and_its_backlog_is_checked(world: World) -> None:
    # Given a destination queue configured for the ingest DLQ
    parking = world.sqs.create_queue(QueueName="parking")["QueueUrl"]
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, velocity=10, handle="h", destination=arn("parking"))
    service = world.service(REDRIVE_DESTINATIONS=json.dumps({INGEST_DLQ: arn("parking")}))

    # Then DestinationArn goes to StartMessageMoveTask
    result = start(service)
    assert result["status"] == "started"
    assert result["destination_arn"] == arn("parking")

    # And when the destination (not the source) is backed up, nothing starts
    for _ in range(3):
        world.sqs.send_message(QueueUrl=parking, MessageBody="x")
    world.stub.add_response("list_message_move_tasks", {"Results": []})
    service = world.service(
        REDRIVE_DESTINATIONS=json.dumps({INGEST_DLQ: arn("parking")}), REDRIVE_MAX_SOURCE_BACKLOG="2"
    )
    world.dynamodb.delete_item(TableName=TABLE, Key={"id": {"S": f"redrive#{INGEST_DLQ}"}})
    assert start(service)["reason"] == "source_backlog"


def test_messages_with_no_sqs_source_are_moved_to_the_named_destination(world: World) -> None:
    # Given what EventBridge's DeadLetterConfig does in eventbridge mode: an undeliverable event
    # sent straight into the ingest DLQ (it never was in the ingest queue, so has no SQS source)
    world.sqs.send_message(
        QueueUrl=world.urls["docindex-ingest-dlq"],
        MessageBody=json.dumps({"source": "aws.s3", "detail-type": "Object Created", "detail": {}}),
        MessageAttributes={"ERROR_CODE": {"DataType": "String", "StringValue": "SQS_SEND_FAILED"}},
    )
    # And the template's REDRIVE_DESTINATIONS: every DLQ mapped to its source queue
    service = world.service(REDRIVE_DESTINATIONS=json.dumps(SOURCE_OF))
    world.send("docindex-ocr-dlq", 1)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "eb", destination=INGEST)
    world.expect_list(OCR_DLQ)
    world.expect_start(OCR_DLQ, 10, "ocr", destination=OCR)

    # Then every StartMessageMoveTask carries DestinationArn (the stub asserts the exact parameters)
    results = start(service, dlq=None)
    assert [(r["status"], r["destination_arn"]) for r in results.values()] == [
        ("started", INGEST),
        ("started", OCR),
    ]


def test_a_dlq_with_several_sources_is_left_to_them_unless_a_destination_is_configured(world: World) -> None:
    # Given a second queue dead-lettering into the ingest DLQ
    world.sqs.create_queue(
        QueueName="docindex-other",
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": INGEST_DLQ, "maxReceiveCount": 3})},
    )
    world.send("docindex-ingest-dlq", 1)
    # Without a configured destination SQS returns each message to its own source
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "each", destination=ORIGINAL_SOURCES)
    assert start(world.service())["destination_arn"] is None
    # With one, it is named
    world.dynamodb.delete_item(TableName=TABLE, Key={"id": {"S": f"redrive#{INGEST_DLQ}"}})
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "named", destination=INGEST)
    assert start(world.service(REDRIVE_DESTINATIONS=json.dumps(SOURCE_OF)))["destination_arn"] == INGEST


def test_dlq_empty_is_skipped_without_touching_the_move_api(world: World) -> None:
    # Given an empty DLQ (no stubbed response: any move-task call would fail the test)
    result = start(world.service())
    assert result["status"] == "skipped"
    assert result["reason"] == "dlq_empty"
    assert result["approximate_messages"] == 0


def test_running_task_is_skipped_with_its_progress(world: World) -> None:
    world.send("docindex-ingest-dlq", 100)
    world.expect_list(
        INGEST_DLQ,
        task(
            "RUNNING",
            TaskHandle="running-handle",
            ApproximateNumberOfMessagesMoved=40,
            ApproximateNumberOfMessagesToMove=100,
            MaxNumberOfMessagesPerSecond=10,
            StartedTimestamp=1767603600000,
        ),
    )
    result = start(world.service())  # no start_message_move_task stubbed
    assert result["status"] == "skipped"
    assert result["reason"] == "task_running"
    assert (result["moved"], result["to_move"]) == (40, 100)
    assert result["task_handle"] == "running-handle"
    assert result["started_at"] == "2026-01-05T09:00:00+00:00"


def test_source_backlog_counts_visible_and_in_flight(world: World) -> None:
    # Given 2 visible + 2 in-flight messages on the source, limit 3
    world.send("docindex-ingest-dlq", 1)
    world.send("docindex-ingest", 4)
    world.hold_in_flight("docindex-ingest", 2)
    world.expect_list(INGEST_DLQ)
    result = start(world.service(REDRIVE_MAX_SOURCE_BACKLOG="3"))
    assert result["status"] == "skipped"
    assert result["reason"] == "source_backlog"
    assert "2 visible + 2 in-flight" in result["message"]


def test_unreachable_opensearch_is_consumer_unhealthy(world: World) -> None:
    world.send("docindex-ingest-dlq", 1)
    world.expect_list(INGEST_DLQ)
    down = OpenSearchHealth(OpenSearch(hosts=[f"http://127.0.0.1:{closed_port()}"], timeout=2, max_retries=0))
    result = start(world.service(health=down))
    assert result["status"] == "skipped"
    assert result["reason"] == "consumer_unhealthy"
    assert "unreachable" in result["message"]


def test_red_cluster_is_consumer_unhealthy(world: World, red_cluster: str) -> None:
    world.send("docindex-ingest-dlq", 1)
    world.expect_list(INGEST_DLQ)
    red = OpenSearchHealth(OpenSearch(hosts=[red_cluster], timeout=2, max_retries=0))
    result = start(world.service(health=red))
    assert result["reason"] == "consumer_unhealthy"
    assert result["message"] == "OpenSearch cluster health is red"


def test_serverless_has_no_cluster_health_so_reachable_is_healthy(engine_space: Any) -> None:
    up = OpenSearchHealth(OpenSearch(hosts=[engine_space.url], timeout=5, max_retries=0), service="aoss")
    assert up.check().healthy
    down = OpenSearchHealth(
        OpenSearch(hosts=[f"http://127.0.0.1:{closed_port()}"], timeout=2, max_retries=0), service="aoss"
    )
    assert not down.check().healthy


def test_unconfigured_opensearch_refuses_rather_than_redriving_blind(world: World) -> None:
    from docindex.redrive.probes import UnconfiguredHealth

    world.send("docindex-ingest-dlq", 1)
    world.expect_list(INGEST_DLQ)
    result = start(world.service(health=UnconfiguredHealth()))
    assert result["reason"] == "consumer_unhealthy"
    assert "OPENSEARCH_ENDPOINT" in result["message"]


def test_dry_run_decides_everything_and_starts_nothing(world: World) -> None:
    world.send("docindex-ingest-dlq", 3)
    world.expect_list(INGEST_DLQ)  # the only move-task call: no start
    results = start(world.service(), dlq=None, dry_run=True)
    assert results[INGEST_DLQ]["status"] == "dry_run"
    assert results[INGEST_DLQ]["reason"] == "would_start"
    assert results[OCR_DLQ]["status"] == "skipped"
    assert results[OCR_DLQ]["reason"] == "dlq_empty"
    assert world.state_item(INGEST_DLQ) is None


def test_every_call_of_start_status_cancel_and_reset_is_granted_to_the_redrive_role(world: World) -> None:
    # Given the service's clients limited to what template.yaml's RedriveRole allows
    granted = granted_actions()
    sqs, moves, dynamodb = (RoleClient(c, granted) for c in (world.sqs, world.moves, world.dynamodb))
    service = RedriveService(
        settings=world.settings(),
        sqs=sqs,
        move_tasks=moves,
        state=RedriveStateStore(dynamodb, TABLE),
        health=world.health,
        clock=world.clock,
    )
    world.send("docindex-ingest-dlq", 2)

    # When every action runs over both DLQs
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "granted")
    started = {r.dlq_arn: r for r in service.run(RedriveRequest(action="start")).results}
    world.expect_list(INGEST_DLQ, task("RUNNING", TaskHandle="granted"))
    world.expect_list(OCR_DLQ)
    status = service.run(RedriveRequest(action="status")).results
    world.expect_list(INGEST_DLQ, task("RUNNING", TaskHandle="granted"))
    world.expect_cancel("granted", moved=1)
    cancelled = service.run(RedriveRequest(action="cancel", dlq_arn=INGEST_DLQ)).results[0]
    reset = service.run(RedriveRequest(action="reset")).results

    # Then nothing was refused (no sqs:GetQueueUrl: queue URLs come from the ARNs)
    assert [c.denied for c in (sqs, moves, dynamodb)] == [[], [], []]
    assert (started[INGEST_DLQ].status, started[OCR_DLQ].reason) == ("started", "dlq_empty")
    assert [r.status for r in status] == ["running", "idle"]
    assert cancelled.status == "cancelled"
    assert [r.status for r in reset] == ["reset", "reset"]


def test_a_call_the_role_does_not_grant_is_access_denied_and_says_where_to_look(world: World) -> None:
    # The guard itself: without sqs:ListDeadLetterSourceQueues nothing can be redriven
    sqs = RoleClient(world.sqs, granted_actions() - {"sqs:ListDeadLetterSourceQueues"})
    service = RedriveService(
        settings=world.settings(),
        sqs=sqs,
        move_tasks=world.moves,
        state=RedriveStateStore(world.dynamodb, TABLE),
        health=world.health,
        clock=world.clock,
    )
    world.send("docindex-ingest-dlq", 1)
    result = service.run(RedriveRequest(action="status", dlq_arn=INGEST_DLQ)).results[0]
    assert sqs.denied == ["sqs:ListDeadLetterSourceQueues"]
    assert (result.status, result.reason) == ("error", "access_denied")


# ============================================================================ no-progress back-off


def test_fruitless_rounds_double_the_wait_then_stop_until_reset(world: World) -> None:
    service = world.service()  # REDRIVE_MAX_FRUITLESS_ROUNDS=3, REDRIVE_BACKOFF_SECONDS=3600
    clock = world.clock
    done = task("COMPLETED", ApproximateNumberOfMessagesMoved=3, ApproximateNumberOfMessagesToMove=3)

    # Given 3 poison messages: every redrive brings them back to the DLQ (moto never moves
    # them, which is exactly what a consumer failing them again looks like from outside)
    world.send("docindex-ingest-dlq", 3)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "round-1")
    assert start(service)["status"] == "started"

    # Right after, before the messages could fail maxReceiveCount times: wait, judge nothing
    clock.advance(minutes=1)
    world.expect_list(INGEST_DLQ, done)
    early = start(service)
    assert (early["status"], early["reason"]) == ("skipped", "backoff")
    # settle = 3 msgs / 10 per s (1 s) + maxReceiveCount x visibility timeout (3 x 60 s)
    assert early["next_attempt_at"] == (T0 + timedelta(seconds=181)).isoformat()

    # An hour later the DLQ is as full as before: fruitless round 1, wait 1 h
    clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, done)
    first = start(service)
    assert (first["reason"], first["fruitless_rounds"]) == ("backoff", 1)
    assert first["next_attempt_at"] == (clock.now + timedelta(hours=1)).isoformat()

    # Half an hour on: still waiting (no judgement, no start)
    clock.advance(minutes=30)
    world.expect_list(INGEST_DLQ, done)
    assert start(service)["reason"] == "backoff"

    # After the wait (a schedule firing a little early still counts): round 2
    clock.advance(minutes=28)
    world.expect_list(INGEST_DLQ, done)
    world.expect_start(INGEST_DLQ, 10, "round-2")
    assert start(service)["status"] == "started"

    # Judged fruitless again: the wait doubles to 2 h
    clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, done)
    second = start(service)
    assert (second["reason"], second["fruitless_rounds"]) == ("backoff", 2)
    assert second["next_attempt_at"] == (clock.now + timedelta(hours=2)).isoformat()
    clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, done)
    assert start(service)["reason"] == "backoff"
    clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, done)
    world.expect_start(INGEST_DLQ, 10, "round-3")
    assert start(service)["status"] == "started"

    # Third fruitless round: stop, and say so
    clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, done)
    third = start(service)
    assert (third["status"], third["reason"], third["fruitless_rounds"]) == ("skipped", "no_progress", 3)
    assert world.state_item(INGEST_DLQ)["halted"] == {"BOOL": True}  # type: ignore[index]

    # Days later nothing has changed by itself: still stopped (no move-task call at all)
    clock.advance(days=3)
    assert start(service)["reason"] == "no_progress"

    # A human fixes the cause and resets: the next start redrives again
    reset = service.run(RedriveRequest(action="reset", dlq_arn=INGEST_DLQ)).results[0]
    assert (reset.status, reset.fruitless_rounds) == ("reset", 3)
    assert world.state_item(INGEST_DLQ) is None
    world.expect_list(INGEST_DLQ, done)
    world.expect_start(INGEST_DLQ, 10, "after-reset")
    assert start(service)["status"] == "started"


def test_start_with_reset_clears_a_stop(world: World) -> None:
    service = world.service(REDRIVE_MAX_FRUITLESS_ROUNDS="1")
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "r1")
    start(service)
    world.clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, task("COMPLETED"))
    assert start(service)["reason"] == "no_progress"

    world.expect_list(INGEST_DLQ, task("COMPLETED"))
    world.expect_start(INGEST_DLQ, 10, "r2")
    assert start(service, reset=True)["status"] == "started"


def test_progress_clears_the_fruitless_count(world: World) -> None:
    service = world.service()
    world.send("docindex-ingest-dlq", 4)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "r1")
    start(service)
    world.clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, task("COMPLETED"))
    assert start(service)["fruitless_rounds"] == 1

    # Round 2 after the wait; this time most messages are consumed for good
    world.clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, task("COMPLETED"))
    world.expect_start(INGEST_DLQ, 10, "r2")
    start(service)
    world.drain("docindex-ingest-dlq", 3)

    # The next run judges progress and redrives the rest at once
    world.clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, task("COMPLETED"))
    world.expect_start(INGEST_DLQ, 10, "r3")
    result = start(service)
    assert (result["status"], result["fruitless_rounds"]) == ("started", 0)
    assert world.state_item(INGEST_DLQ)["last_outcome"] == {"S": "progress"}  # type: ignore[index]


def test_an_empty_dlq_is_judged_only_after_the_messages_had_time_to_fail_again(world: World) -> None:
    service = world.service()
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "r1")
    start(service)
    # The DLQ looks empty while the redriven messages are still being retried
    world.drain("docindex-ingest-dlq", 2)
    world.clock.advance(seconds=30)
    assert start(service)["reason"] == "dlq_empty"
    assert world.state_item(INGEST_DLQ)["pending"] == {"BOOL": True}  # type: ignore[index]
    # Once they could have come back and did not: progress
    world.clock.advance(hours=1)
    assert start(service)["reason"] == "dlq_empty"
    item = world.state_item(INGEST_DLQ)
    assert item is not None
    assert item["pending"] == {"BOOL": False}
    assert item["last_outcome"] == {"S": "progress"}


# ============================================================================ errors, one DLQ at a time


@pytest.mark.parametrize(
    ("operation", "code", "message", "reason"),
    [
        ("start_message_move_task", "ResourceNotFoundException", "queue not found", "queue_not_found"),
        (
            "start_message_move_task",
            "InvalidParameterValue",
            "Source queue must be configured as a Dead Letter Queue.",
            "not_a_dlq",
        ),
        (
            "start_message_move_task",
            "UnsupportedOperation",
            "There is already a task running. Only one active task is allowed for each source queue.",
            "task_already_running",
        ),
        ("list_message_move_tasks", "RequestThrottled", "Rate exceeded", "throttled"),
        (
            "start_message_move_task",
            "AccessDenied",
            "not authorized to perform sqs:StartMessageMoveTask",
            "access_denied",
        ),
    ],
)
def test_api_errors_become_a_per_dlq_error_and_the_other_dlq_goes_on(
    world: World, operation: str, code: str, message: str, reason: str
) -> None:
    # Given both DLQs hold messages
    world.send("docindex-ingest-dlq", 2)
    world.send("docindex-ocr-dlq", 2)
    # When the API refuses the ingest DLQ
    if operation == "start_message_move_task":
        world.expect_list(INGEST_DLQ)
    world.stub.add_client_error(operation, service_error_code=code, service_message=message, http_status_code=400)
    world.expect_list(OCR_DLQ)
    world.expect_start(OCR_DLQ, 10, "ocr-handle")
    results = start(world.service(), dlq=None)

    # Then the ingest DLQ reports a clear error and the OCR DLQ is still redriven
    assert results[INGEST_DLQ]["status"] == "error"
    assert results[INGEST_DLQ]["reason"] == reason
    assert message in results[INGEST_DLQ]["message"]
    assert results[OCR_DLQ]["status"] == "started"
    assert world.state_item(INGEST_DLQ) is None


def test_a_queue_no_one_dead_letters_to_is_not_a_dlq(world: World) -> None:
    world.sqs.create_queue(QueueName="plain")
    result = start(world.service(), dlq=arn("plain"))
    assert (result["status"], result["reason"]) == ("error", "not_a_dlq")


def test_a_missing_queue_is_reported_and_the_others_still_run(world: World) -> None:
    world.send("docindex-ocr-dlq", 1)
    world.expect_list(OCR_DLQ)
    world.expect_start(OCR_DLQ, 10, "h")
    service = world.service(REDRIVE_DLQ_ARNS=f"{arn('gone-dlq')}, {OCR_DLQ}")
    results = start(service, dlq=None)
    assert results[arn("gone-dlq")]["reason"] == "queue_not_found"
    assert results[OCR_DLQ]["status"] == "started"


def test_moto_endpoint_says_unsupported_plainly(moto_reset: str, engine_health: OpenSearchHealth) -> None:
    # No stub here: the move-task client is bound to the real moto server, which lacks the API
    world_iter = build_world(moto_reset, engine_health)
    world = next(world_iter)
    world.send("docindex-ingest-dlq", 1)
    service = RedriveService(
        settings=world.settings(),
        sqs=world.sqs,
        move_tasks=world.sqs,
        state=RedriveStateStore(world.dynamodb, TABLE),
        health=engine_health,
    )
    for action in ("start", "status", "cancel"):
        result = service.run(RedriveRequest(action=action, dlq_arn=INGEST_DLQ)).results[0]
        assert (result.status, result.reason) == ("error", UNSUPPORTED_REASON), action
        assert moto_reset in (result.message or "")
        assert result.approximate_messages == 1
    next(world_iter, None)


# ============================================================================ status, cancel, reset


def test_status_reports_running_failed_and_idle_tasks(world: World) -> None:
    world.send("docindex-ingest-dlq", 7)
    world.expect_list(
        INGEST_DLQ,
        task(
            "RUNNING",
            TaskHandle="h-run",
            ApproximateNumberOfMessagesMoved=3,
            ApproximateNumberOfMessagesToMove=7,
            MaxNumberOfMessagesPerSecond=10,
        ),
    )
    world.expect_list(
        OCR_DLQ,
        task("FAILED", source=OCR_DLQ, FailureReason="AWS.SimpleQueueService.KmsAccessDenied"),
    )
    results = {r.dlq_arn: r for r in world.service().run(RedriveRequest(action="status")).results}
    running, failed = results[INGEST_DLQ], results[OCR_DLQ]
    assert (running.status, running.moved, running.to_move, running.task_handle) == ("running", 3, 7, "h-run")
    assert running.approximate_messages == 7
    assert running.source_arn == INGEST
    assert (failed.status, failed.reason) == ("failed", "AWS.SimpleQueueService.KmsAccessDenied")

    world.expect_list(INGEST_DLQ)
    idle = world.service().run(RedriveRequest(action="status", dlq_arn=INGEST_DLQ)).results[0]
    assert idle.status == "idle"


def test_status_shows_a_stopped_dlq(world: World) -> None:
    service = world.service(REDRIVE_MAX_FRUITLESS_ROUNDS="1")
    world.send("docindex-ingest-dlq", 1)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 10, "r1")
    start(service)
    world.clock.advance(hours=1)
    world.expect_list(INGEST_DLQ, task("COMPLETED"))
    start(service)
    world.expect_list(INGEST_DLQ, task("COMPLETED", ApproximateNumberOfMessagesMoved=1))
    status = service.run(RedriveRequest(action="status", dlq_arn=INGEST_DLQ)).results[0]
    assert (status.status, status.reason, status.fruitless_rounds) == ("completed", "no_progress", 1)


def test_cancel_stops_the_running_task_and_reports_what_moved(world: World) -> None:
    world.expect_list(INGEST_DLQ, task("RUNNING", TaskHandle="h-run", ApproximateNumberOfMessagesToMove=50))
    world.expect_cancel("h-run", moved=12)
    result = world.service().run(RedriveRequest(action="cancel", dlq_arn=INGEST_DLQ)).results[0]
    assert (result.status, result.task_handle, result.moved, result.to_move) == ("cancelled", "h-run", 12, 50)


def test_cancel_without_a_running_task_and_dry_run_cancel(world: World) -> None:
    world.expect_list(INGEST_DLQ, task("COMPLETED", ApproximateNumberOfMessagesMoved=5))
    nothing = world.service().run(RedriveRequest(action="cancel", dlq_arn=INGEST_DLQ)).results[0]
    assert (nothing.status, nothing.reason) == ("skipped", "no_running_task")

    world.expect_list(INGEST_DLQ, task("RUNNING", TaskHandle="h-run"))  # and no cancel call
    dry = world.service().run(RedriveRequest(action="cancel", dlq_arn=INGEST_DLQ, dry_run=True)).results[0]
    assert (dry.status, dry.reason, dry.task_handle) == ("dry_run", "would_cancel", "h-run")


# ============================================================================ velocity from proven throughput


def ingest_consumer_deleted_two_per_second(world: World, endpoint: str) -> Any:
    """CloudWatch (moto) says the ingest consumer deleted 7200 messages in the last hour."""
    cloudwatch = aws_client("cloudwatch", endpoint)
    world.clock.now = datetime.now(UTC).replace(microsecond=0)
    cloudwatch.put_metric_data(
        Namespace="AWS/SQS",
        MetricData=[
            {
                "MetricName": "NumberOfMessagesDeleted",
                "Dimensions": [{"Name": "QueueName", "Value": "docindex-ingest"}],
                "Timestamp": world.clock.now - timedelta(minutes=minute),
                "Value": 720,
                "Unit": "Count",
            }
            for minute in range(5, 55, 5)
        ],
    )
    return cloudwatch


def test_adaptive_velocity_is_a_fraction_of_what_the_consumer_proved(world: World, moto_reset: str) -> None:
    # Given CloudWatch says the ingest consumer deleted 7200 messages in the last hour (2/s)
    cloudwatch = ingest_consumer_deleted_two_per_second(world, moto_reset)
    probe = ThroughputProbe(cloudwatch, timedelta(hours=1), world.clock)
    service = world.service(throughput=probe, REDRIVE_ADAPTIVE_FRACTION="0.5", REDRIVE_VELOCITY="20")

    # When a redrive starts, it adds half of 2/s: 1 message per second
    world.send("docindex-ingest-dlq", 3)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 1, "adaptive")
    result = start(service)
    assert (result["status"], result["velocity"]) == ("started", 1)
    assert "adaptive: 0.5 of the consumer's 2.0/s" in result["message"]

    # The OCR consumer has no data: the configured velocity stands
    world.send("docindex-ocr-dlq", 1)
    world.expect_list(OCR_DLQ)
    world.expect_start(OCR_DLQ, 20, "configured")
    assert start(service, OCR_DLQ)["velocity"] == 20

    # An explicit velocity always wins
    world.dynamodb.delete_item(TableName=TABLE, Key={"id": {"S": f"redrive#{INGEST_DLQ}"}})
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 7, "explicit")
    assert start(service, velocity=7)["velocity"] == 7


def test_adaptive_velocity_works_with_the_redrive_roles_cloudwatch_permission(world: World, moto_reset: str) -> None:
    # Given the CloudWatch client limited to what RedriveRole grants (GetMetricStatistics)
    cloudwatch = RoleClient(ingest_consumer_deleted_two_per_second(world, moto_reset), granted_actions())
    probe = ThroughputProbe(cloudwatch, timedelta(hours=1), world.clock)
    service = world.service(throughput=probe, REDRIVE_ADAPTIVE_FRACTION="0.5", REDRIVE_VELOCITY="20")
    world.send("docindex-ingest-dlq", 3)
    world.expect_list(INGEST_DLQ)
    world.expect_start(INGEST_DLQ, 1, "adaptive")
    # Then the measured throughput, not the configured fallback, sets the velocity
    result = start(service)
    assert cloudwatch.denied == []
    assert (result["status"], result["velocity"]) == ("started", 1)
    assert "adaptive" in result["message"]


def test_a_failed_last_task_is_reported_on_the_next_start(world: World) -> None:
    world.send("docindex-ingest-dlq", 2)
    world.expect_list(INGEST_DLQ, task("FAILED", FailureReason="AWS.SimpleQueueService.KmsAccessDenied"))
    world.expect_start(INGEST_DLQ, 10, "again")
    result = start(world.service())
    assert (result["status"], result["failure_reason"]) == (
        "started",
        "AWS.SimpleQueueService.KmsAccessDenied",
    )
