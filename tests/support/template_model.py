"""Just enough CloudFormation to test template.yaml's invariants without AWS.

The template is loaded with cfn-lint's decoder (it understands the short-form tags
``!Sub``/``!Ref``/``!If``...). A :class:`Scenario` fixes the parameter values; for it
the model evaluates the ``Conditions``, drops resources whose condition is false,
resolves ``Fn::If``, ``Ref`` to parameters, ``AWS::NoValue``, ``Fn::FindInMap``,
``Fn::Split``, ``Fn::Select`` and ``Fn::Join``,
and renders ``Fn::Sub`` / queue ARNs and URLs to strings with fake account values.
Everything else (``Fn::GetAtt`` of non-queues, ``Ref`` of resources) is left as is.

The ``check_*`` functions return a list of human-readable problems (empty = holds),
so a test can also prove that a broken template is caught.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

from cfnlint.decode import decode

TEMPLATE_PATH = Path(__file__).resolve().parents[2] / "template.yaml"

PSEUDO = {
    "AWS::AccountId": "123456789012",
    "AWS::Region": "ap-northeast-1",
    "AWS::Partition": "aws",
    "AWS::StackName": "docindex-test",
    "AWS::URLSuffix": "amazonaws.com",
}

# Required parameters (no Default) get these values in every scenario.
REQUIRED_PARAMETERS = {
    "OpenSearchEndpoint": "https://search-docs-abc.ap-northeast-1.es.amazonaws.com",
    "OpenSearchArn": "arn:aws:es:ap-northeast-1:123456789012:domain/docs",
    "WorkerImageUri": "123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/docindex-worker:1",
    "WorkerSubnetIds": "subnet-0123456789abcdef0,subnet-0123456789abcdef1",
    "WorkerSecurityGroupIds": "sg-0123456789abcdef0",
}

EXISTING_BUCKET = "corp-file-server"

# OpenSearchArn per SigV4 service: the service is the ARN's third field.
OPENSEARCH_ARNS = {
    "es": REQUIRED_PARAMETERS["OpenSearchArn"],
    "aoss": "arn:aws:aoss:ap-northeast-1:123456789012:collection/abc123def456",
}

# Actions whose only valid IAM resource is "*" (no resource-level permissions exist).
STAR_RESOURCE_ACTIONS = frozenset(
    {
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "cloudwatch:GetMetricStatistics",
        "ecr:GetAuthorizationToken",
        "ec2:DescribeNetworkInterfaces",
        "ec2:DescribeSubnets",
    }
)

# The redrive permissions (docs/dlq-redrive.md), on the DLQ side.
REDRIVE_DLQ_ACTIONS = frozenset(
    {
        "sqs:StartMessageMoveTask",
        "sqs:CancelMessageMoveTask",
        "sqs:ListMessageMoveTasks",
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:ListDeadLetterSourceQueues",
    }
)

DOCINDEX_METRICS = (
    "DocumentsIndexed",
    "DocumentsDeleted",
    "DuplicatesSkipped",
    "StaleEventsSkipped",
    "OcrJobsQueued",
    "ExtractionFailures",
    "RecordsFailed",
    "OcrPagesProcessed",
    "OcrJobsCompleted",
    "OcrJobsFailed",
)

_NO_VALUE = object()


def _plain(value: Any) -> Any:
    """cfn-lint's node classes -> plain dict/list/str, so copies and comparisons are ordinary."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def load_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    """The template as plain Python data, short-form tags expanded (fails on YAML errors)."""
    template, matches = decode(str(path))
    if matches or template is None:
        raise ValueError(f"cannot decode {path}: {[str(m) for m in matches]}")
    return _plain(template)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@dataclass
class Scenario:
    """One set of parameter values: the template as CloudFormation would see it for them."""

    template: dict[str, Any]
    overrides: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.params: dict[str, str] = {}
        for name, spec in self.template.get("Parameters", {}).items():
            if name in self.overrides:
                self.params[name] = str(self.overrides[name])
            elif "Default" in spec:
                self.params[name] = str(spec["Default"])
            else:
                self.params[name] = REQUIRED_PARAMETERS[name]
        unknown = set(self.overrides) - set(self.params)
        if unknown:
            raise KeyError(f"not parameters of the template: {sorted(unknown)}")
        self._conditions: dict[str, bool] = {}

    # -- conditions
    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            self._conditions[name] = self._eval_condition(self.template["Conditions"][name])
        return self._conditions[name]

    def _eval_condition(self, expr: Any) -> bool:
        (fn, args), *_ = expr.items()
        if fn == "Condition":
            return self.condition(args)
        if fn == "Fn::Not":
            return not self._eval_condition(args[0])
        if fn == "Fn::And":
            return all(self._eval_condition(a) for a in args)
        if fn == "Fn::Or":
            return any(self._eval_condition(a) for a in args)
        if fn == "Fn::Equals":
            left, right = (self._scalar(a) for a in args)
            return left == right
        raise ValueError(f"unsupported condition function {fn}")

    def _scalar(self, value: Any) -> str:
        resolved = self.resolve(value)
        if isinstance(resolved, dict):
            raise ValueError(f"cannot evaluate {value!r} in a condition")
        return str(resolved)

    # -- values
    def resolve(self, value: Any) -> Any:
        """Resolve Fn::If, Ref to parameters, AWS::NoValue, Fn::FindInMap, Fn::Split, Fn::Select, Fn::Join."""
        if isinstance(value, list):
            items = [self.resolve(v) for v in value]
            return [v for v in items if v is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, arg), *_ = value.items()
            if key == "Fn::If":
                name, when_true, when_false = arg
                return self.resolve(when_true if self.condition(name) else when_false)
            if key == "Ref":
                if arg == "AWS::NoValue":
                    return _NO_VALUE
                if arg in self.params:
                    return self._typed_param(arg)
            if key == "Fn::FindInMap":
                mapping, top, second = (self.resolve(a) for a in arg)
                return self.template["Mappings"][mapping][str(top)][str(second)]
            if key == "Fn::Split":
                delimiter, source = arg[0], self.resolve(arg[1])
                if isinstance(source, str):
                    return source.split(delimiter)
            if key == "Fn::Select":
                index, items = self.resolve(arg[0]), self.resolve(arg[1])
                if isinstance(items, list) and all(isinstance(i, str) for i in items):
                    return items[int(index)]
            if key == "Fn::Join":
                delimiter, items = arg[0], self.resolve(arg[1])
                if isinstance(items, list) and all(isinstance(i, str) for i in items):
                    return delimiter.join(items)
        items = {k: self.resolve(v) for k, v in value.items()}
        return {k: v for k, v in items.items() if v is not _NO_VALUE}

    def _typed_param(self, name: str) -> Any:
        spec = self.template["Parameters"][name]
        raw = self.params[name]
        if spec["Type"] == "Number":
            return int(raw) if re.fullmatch(r"-?\d+", raw) else float(raw)
        if spec["Type"].startswith("List<") or spec["Type"] == "CommaDelimitedList":
            return raw.split(",") if raw else []
        return raw

    def resources(self) -> dict[str, dict[str, Any]]:
        """Resources that exist for these parameter values, with their values resolved."""
        existing = {}
        for name, resource in self.template["Resources"].items():
            if "Condition" in resource and not self.condition(resource["Condition"]):
                continue
            existing[name] = self.resolve(resource)
        return existing

    # -- rendering to strings
    def render(self, value: Any) -> Any:
        """Fn::Sub, and Ref/GetAtt of queues and parameters, rendered to strings where possible."""
        value = self.resolve(value)
        if isinstance(value, list):
            return [self.render(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (key, arg), *_ = value.items()
            if key == "Fn::Sub":
                text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1])
                return self._sub(text, {k: self.render(v) for k, v in variables.items()})
            if key == "Ref" and isinstance(arg, str):
                if arg in PSEUDO:
                    return PSEUDO[arg]
                queue = self._queue_name(arg)
                if queue is not None:
                    return f"https://sqs.{PSEUDO['AWS::Region']}.amazonaws.com/{PSEUDO['AWS::AccountId']}/{queue}"
            if key == "Fn::GetAtt":
                resource, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
                queue = self._queue_name(resource)
                if queue is not None and attribute == "Arn":
                    return f"arn:aws:sqs:{PSEUDO['AWS::Region']}:{PSEUDO['AWS::AccountId']}:{queue}"
                if queue is not None and attribute == "QueueName":
                    return queue
        return {k: self.render(v) for k, v in value.items()}

    def _sub(self, text: str, variables: dict[str, Any]) -> Any:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables and isinstance(variables[name], str):
                return variables[name]
            if name in PSEUDO:
                return PSEUDO[name]
            if name in self.params:
                return self.params[name]
            if "." in name:
                rendered = self.render({"Fn::GetAtt": name.split(".", 1)})
                if isinstance(rendered, str):
                    return rendered
            elif self._queue_name(name) is not None:
                return str(self.render({"Ref": name}))
            return "${" + name + "}"

        return re.sub(r"\$\{([^!}]+)\}", replace, text)

    def _queue_name(self, logical_id: str) -> str | None:
        resource = self.template["Resources"].get(logical_id)
        if not resource or resource["Type"] != "AWS::SQS::Queue":
            return None
        name = resource.get("Properties", {}).get("QueueName")
        rendered = self.render(name) if name is not None else f"{PSEUDO['AWS::StackName']}-{logical_id}"
        return rendered if isinstance(rendered, str) else None


def scenarios(template: dict[str, Any], **choices: list[str]) -> Iterator[Scenario]:
    """Every combination of the given parameter values (others at their defaults)."""
    names = list(choices)
    for values in product(*(choices[n] for n in names)):
        yield Scenario(template, dict(zip(names, values, strict=True)))


def all_deployment_shapes(template: dict[str, Any]) -> Iterator[Scenario]:
    """Notification modes x created/existing bucket x managed/serverless OpenSearch x VPC or not."""
    yield from scenarios(
        template,
        NotificationMode=["s3", "eventbridge"],
        ExistingBucketName=["", EXISTING_BUCKET],
        OpenSearchArn=list(OPENSEARCH_ARNS.values()),
        FunctionsInVpc=["false", "true"],
    )


def ref_target(value: Any) -> str | None:
    """The logical id a Ref or Fn::GetAtt points to."""
    if isinstance(value, dict) and len(value) == 1:
        (key, arg), *_ = value.items()
        if key == "Ref":
            return arg
        if key == "Fn::GetAtt":
            return (arg if isinstance(arg, list) else arg.split(".", 1))[0]
    return None


def by_type(resources: dict[str, dict[str, Any]], type_: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in resources.items() if r["Type"] == type_}


def depends_on(resource: dict[str, Any]) -> list[str]:
    return as_list(resource.get("DependsOn", []))


# ------------------------------------------------------------------ checks


def ingest_queue(resources: dict[str, dict[str, Any]]) -> str:
    """The queue the indexer's SQS event source reads."""
    indexer = resources["IndexerFunction"]["Properties"]
    sqs_events = [e for e in indexer["Events"].values() if e["Type"] == "SQS"]
    if len(sqs_events) != 1:
        raise AssertionError(f"the indexer must have exactly one SQS event source, has {len(sqs_events)}")
    queue = ref_target(sqs_events[0]["Properties"]["Queue"])
    assert queue is not None
    return queue


def check_visibility_timeout(template: dict[str, Any]) -> list[str]:
    """Ingest visibility >= 6 x indexer timeout + batching window, for every allowed combination."""
    problems = []
    params = template["Parameters"]
    window = params["IndexerBatchingWindow"]
    timeouts = params["IndexerTimeout"]["AllowedValues"]
    for timeout, window_value in product(timeouts, {window["MinValue"], window["MaxValue"]}):
        scenario = Scenario(template, {"IndexerTimeout": timeout, "IndexerBatchingWindow": str(window_value)})
        try:
            resources = scenario.resources()
        except KeyError as exc:
            problems.append(f"IndexerTimeout={timeout}: no mapping row {exc}")
            continue
        function = resources["IndexerFunction"]["Properties"]
        event = next(e for e in function["Events"].values() if e["Type"] == "SQS")["Properties"]
        function_timeout = int(function["Timeout"])
        batching_window = int(event.get("MaximumBatchingWindowInSeconds", 0))
        queue = resources[ingest_queue(resources)]["Properties"]
        visibility = int(queue.get("VisibilityTimeout", 30))
        needed = 6 * function_timeout + batching_window
        if visibility < needed:
            problems.append(
                f"IndexerTimeout={timeout}, window={batching_window}: visibility {visibility} s"
                f" < 6 x {function_timeout} + {batching_window} = {needed} s"
            )
    return problems


def check_dead_letter_queues(scenario: Scenario) -> list[str]:
    """Every work queue dead-letters after >= 5 receives into a DLQ that keeps messages longer."""
    problems = []
    resources = scenario.resources()
    queues = by_type(resources, "AWS::SQS::Queue")
    dlqs = {
        ref_target(q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"])
        for q in queues.values()
        if "RedrivePolicy" in q["Properties"]
    }
    for name, queue in queues.items():
        props = queue["Properties"]
        if name in dlqs:
            continue
        policy = props.get("RedrivePolicy")
        if policy is None:
            problems.append(f"{name}: no RedrivePolicy (failed messages would come back forever)")
            continue
        if int(policy["maxReceiveCount"]) < 5:
            problems.append(f"{name}: maxReceiveCount {policy['maxReceiveCount']} < 5")
        dlq_name = ref_target(policy["deadLetterTargetArn"])
        dlq = queues[dlq_name]["Properties"]
        source_retention = int(props.get("MessageRetentionPeriod", 345600))
        dlq_retention = int(dlq.get("MessageRetentionPeriod", 345600))
        if dlq_retention != 1209600:
            problems.append(f"{dlq_name}: retention {dlq_retention} s, expected 14 days")
        if dlq_retention <= source_retention:
            problems.append(f"{dlq_name}: retention {dlq_retention} s not longer than {name}'s {source_retention} s")
        allow = dlq.get("RedriveAllowPolicy")
        source_arn = scenario.render({"Fn::GetAtt": [name, "Arn"]})
        if not allow or allow.get("redrivePermission") != "byQueue":
            problems.append(f"{dlq_name}: RedriveAllowPolicy must be byQueue")
        elif source_arn not in scenario.render(allow.get("sourceQueueArns", [])):
            problems.append(f"{dlq_name}: RedriveAllowPolicy does not name {name} ({source_arn})")
    return problems


def queue_policies(resources: dict[str, dict[str, Any]], queue: str) -> list[dict[str, Any]]:
    return [
        policy["Properties"]["PolicyDocument"]
        for policy in by_type(resources, "AWS::SQS::QueuePolicy").values()
        if queue in {ref_target(q) for q in policy["Properties"]["Queues"]}
    ]


def check_queue_protection(scenario: Scenario) -> list[str]:
    """Every queue: SSE, explicit MaximumMessageSize, TLS-only policy, senders pinned by source."""
    problems = []
    resources = scenario.resources()
    for name, queue in by_type(resources, "AWS::SQS::Queue").items():
        props = queue["Properties"]
        if props.get("SqsManagedSseEnabled") is not True and "KmsMasterKeyId" not in props:
            problems.append(f"{name}: not encrypted (SqsManagedSseEnabled or KmsMasterKeyId)")
        if "MaximumMessageSize" not in props:
            problems.append(f"{name}: MaximumMessageSize not set")
        documents = queue_policies(resources, name)
        statements = [s for doc in documents for s in as_list(doc["Statement"])]
        if not any(_denies_insecure_transport(s) for s in statements):
            problems.append(f"{name}: no policy statement denies aws:SecureTransport=false")
        for statement in statements:
            if statement["Effect"] != "Allow":
                continue
            principal = statement.get("Principal", {})
            service = principal.get("Service") if isinstance(principal, dict) else None
            conditions = statement.get("Condition", {})
            keys = {k for block in conditions.values() for k in block}
            if service not in {"s3.amazonaws.com", "events.amazonaws.com"}:
                problems.append(f"{name}: allows {principal!r}; only S3 or the EventBridge rule may send")
            elif not {"aws:SourceArn", "aws:SourceAccount"} <= keys:
                problems.append(f"{name}: {service} allowed without aws:SourceArn and aws:SourceAccount")
            if as_list(statement["Action"]) != ["sqs:SendMessage"]:
                problems.append(f"{name}: service principal granted {statement['Action']}")
    return problems


def _denies_insecure_transport(statement: dict[str, Any]) -> bool:
    condition = statement.get("Condition", {}).get("Bool", {})
    return (
        statement["Effect"] == "Deny"
        and statement.get("Principal") == "*"
        and str(condition.get("aws:SecureTransport")).lower() == "false"
    )


@dataclass(frozen=True)
class NotificationPath:
    kind: str  # "s3" or "eventbridge"
    resource: str


def notification_paths(scenario: Scenario) -> list[NotificationPath]:
    """Every way an object change can reach the ingest queue for these parameter values."""
    resources = scenario.resources()
    queue = ingest_queue(resources)
    paths = []
    for name, bucket in by_type(resources, "AWS::S3::Bucket").items():
        config = bucket["Properties"].get("NotificationConfiguration", {})
        if any(ref_target(q.get("Queue")) == queue for q in config.get("QueueConfigurations", [])):
            paths.append(NotificationPath("s3", name))
    for name, resource in resources.items():
        if resource["Type"].startswith("Custom::") and ref_target(resource["Properties"].get("QueueArn")) == queue:
            paths.append(NotificationPath("s3", name))
    for name, rule in by_type(resources, "AWS::Events::Rule").items():
        if any(ref_target(t["Arn"]) == queue for t in rule["Properties"].get("Targets", [])):
            paths.append(NotificationPath("eventbridge", name))
    return paths


def check_notification_paths(scenario: Scenario) -> list[str]:
    """Exactly one path, of the chosen kind, created after the queue policy that admits it."""
    problems = []
    mode = scenario.params["NotificationMode"]
    paths = notification_paths(scenario)
    if len(paths) != 1:
        problems.append(f"NotificationMode={mode}: {len(paths)} notification paths {paths}, expected exactly 1")
    resources = scenario.resources()
    queue = ingest_queue(resources)
    policies = {
        name
        for name, policy in by_type(resources, "AWS::SQS::QueuePolicy").items()
        if queue in {ref_target(q) for q in policy["Properties"]["Queues"]}
    }
    for path in paths:
        if path.kind != mode:
            problems.append(f"NotificationMode={mode}: {path.resource} is a {path.kind} path")
        if not policies & set(depends_on(resources[path.resource])):
            problems.append(f"{path.resource}: does not depend on the ingest queue policy {sorted(policies)}")
    senders = {
        s.get("Principal", {}).get("Service")
        for doc in queue_policies(resources, queue)
        for s in as_list(doc["Statement"])
        if s["Effect"] == "Allow"
    }
    expected = {"s3": {"s3.amazonaws.com"}, "eventbridge": {"events.amazonaws.com"}}[mode]
    if senders != expected:
        problems.append(f"NotificationMode={mode}: ingest queue admits {senders}, expected only {expected}")
    return problems


def iam_statements(resources: dict[str, dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(owner, statement) for every identity policy statement of the template."""
    for name, resource in resources.items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::IAM::Role":
            for policy in props.get("Policies", []):
                for statement in as_list(policy["PolicyDocument"]["Statement"]):
                    yield name, statement
        elif resource["Type"] in {"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"}:
            for statement in as_list(props["PolicyDocument"]["Statement"]):
                yield name, statement
        elif resource["Type"] == "AWS::Serverless::Function":
            for policy in as_list(props.get("Policies", [])):
                if isinstance(policy, dict) and "Statement" in policy:
                    for statement in as_list(policy["Statement"]):
                        yield name, statement


def check_least_privilege(scenario: Scenario) -> list[str]:
    """No wildcard actions; "*" resources only where AWS offers no ARN; queues named by ARN."""
    problems = []
    resources = scenario.resources()
    queues = set(by_type(resources, "AWS::SQS::Queue"))
    for name, resource in resources.items():
        if resource["Type"] in {"AWS::Serverless::Function", "AWS::Lambda::Function"}:
            if "Role" not in resource["Properties"]:
                problems.append(f"{name}: no explicit Role (SAM would attach managed policies with '*')")
            if resource["Properties"].get("Policies"):
                problems.append(f"{name}: uses SAM Policies instead of its explicit role")
        if resource["Type"] == "AWS::IAM::Role" and resource["Properties"].get("ManagedPolicyArns"):
            problems.append(f"{name}: managed policies are not least privilege")
    for owner, statement in iam_statements(resources):
        sid = statement.get("Sid", "?")
        actions = as_list(statement.get("Action", []))
        if "NotAction" in statement or "NotResource" in statement:
            problems.append(f"{owner}/{sid}: NotAction/NotResource")
        for action in actions:
            if action == "*" or str(action).endswith(":*"):
                problems.append(f"{owner}/{sid}: wildcard action {action}")
        for res in as_list(statement.get("Resource", [])):
            if res == "*" and not set(actions) <= STAR_RESOURCE_ACTIONS:
                problems.append(f"{owner}/{sid}: Resource '*' for {sorted(set(actions) - STAR_RESOURCE_ACTIONS)}")
            if isinstance(res, dict) and "Ref" in res and res["Ref"] in queues:
                problems.append(f"{owner}/{sid}: queue {res['Ref']} given by URL (Ref), IAM needs its ARN")
    return problems


def opensearch_service_env(resources: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """OPENSEARCH_SERVICE of every function and container that sets it."""
    found: dict[str, Any] = {}
    for name, resource in resources.items():
        props = resource.get("Properties", {})
        variables = props.get("Environment", {}).get("Variables", {})
        if "OPENSEARCH_SERVICE" in variables:
            found[name] = variables["OPENSEARCH_SERVICE"]
        for container in props.get("ContainerDefinitions", []):
            for pair in container.get("Environment", []):
                if pair["Name"] == "OPENSEARCH_SERVICE":
                    found[f"{name}/{container['Name']}"] = pair["Value"]
    return found


def check_opensearch_service(scenario: Scenario) -> list[str]:
    """OPENSEARCH_SERVICE and the IAM actions on OpenSearch follow the service in OpenSearchArn."""
    problems = []
    service = scenario.params["OpenSearchArn"].split(":")[2]
    resources = scenario.resources()
    found = opensearch_service_env(resources)
    if not found:
        problems.append("no function or container sets OPENSEARCH_SERVICE")
    for owner, value in found.items():
        if value != service:
            problems.append(f"{owner}: OPENSEARCH_SERVICE {value!r} for an {service} ARN")
    for owner, statement in iam_statements(resources):
        prefixes = {str(a).split(":", 1)[0] for a in as_list(statement.get("Action", []))}
        wrong = prefixes & ({"es", "aoss"} - {service})
        if wrong:
            problems.append(f"{owner}/{statement.get('Sid', '?')}: {sorted(wrong)} actions for an {service} ARN")
    return problems


def log_group_of(resources: dict[str, dict[str, Any]], function: str) -> dict[str, Any] | None:
    logging = resources[function]["Properties"].get("LoggingConfig", {})
    group = ref_target(logging.get("LogGroup"))
    return resources.get(group) if group else None


def check_log_groups(scenario: Scenario) -> list[str]:
    """Every function and the worker log to an explicit log group with retention."""
    problems = []
    resources = scenario.resources()
    for name, resource in resources.items():
        if resource["Type"] in {"AWS::Serverless::Function", "AWS::Lambda::Function"}:
            group = log_group_of(resources, name)
            if group is None or group["Type"] != "AWS::Logs::LogGroup":
                problems.append(f"{name}: no explicit log group (LoggingConfig.LogGroup)")
            elif "RetentionInDays" not in group["Properties"]:
                problems.append(f"{name}: its log group has no retention")
    for name, task in by_type(resources, "AWS::ECS::TaskDefinition").items():
        for container in task["Properties"]["ContainerDefinitions"]:
            options = container.get("LogConfiguration", {}).get("Options", {})
            group = resources.get(ref_target(options.get("awslogs-group")) or "")
            if group is None or "RetentionInDays" not in group["Properties"]:
                problems.append(f"{name}/{container['Name']}: no log group with retention")
    return problems


def dashboard_body(scenario: Scenario) -> dict[str, Any]:
    """The dashboard JSON with ${...} placeholders filled in."""
    resources = scenario.resources()
    dashboard = next(iter(by_type(resources, "AWS::CloudWatch::Dashboard").values()))
    body = scenario.render(dashboard["Properties"]["DashboardBody"])
    if isinstance(body, str):
        # Remaining placeholders are resource attributes (function names...): any string will do.
        return json.loads(re.sub(r"\$\{[^}]+\}", "x", body))
    raise AssertionError(f"dashboard body did not render: {body!r}")


def copy_template(template: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(template)
