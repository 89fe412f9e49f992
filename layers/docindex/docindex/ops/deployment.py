"""Where a docindex pipeline's resources are, and clients to reach them.

The operator commands (``diagnose``, ``backfill``, ``reconcile``, ``pause``,
``resume``) work on one ``Deployment``, resolved from, in this order of
precedence:

1. explicit values (command-line flags);
2. a CloudFormation stack deployed from ``template.yaml`` (its Outputs,
   Parameters and resources: ``DescribeStacks`` / ``ListStackResources``);
3. the variables of the local run's env file (``docindex local up`` writes
   ``.docindex/local.env``) or of the process environment.

Against the local endpoints (moto server) there is no Lambda function, no ECS
service and no IAM to speak of; ``Deployment.is_local`` tells the commands so,
and they report those parts as skipped instead of failing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from docindex.core.aws import error_message
from docindex.core.exceptions import DeploymentError

# Stack Outputs of template.yaml → Deployment fields.
_STACK_OUTPUTS = {
    "DocumentsBucketName": "bucket",
    "IngestQueueUrl": "ingest_queue_url",
    "IngestDlqUrl": "ingest_dlq_url",
    "OcrQueueUrl": "ocr_queue_url",
    "OcrDlqUrl": "ocr_dlq_url",
    "EmbedQueueUrl": "embed_queue_url",
    "EmbedDlqUrl": "embed_dlq_url",
    "IdempotencyTableName": "idempotency_table",
    "LedgerTableName": "ledger_table",
    "IndexerFunctionName": "function_name",
    "RedriveFunctionName": "redrive_function",
    "WorkerClusterName": "ecs_cluster",
    "WorkerServiceName": "ecs_service",
    "NotificationMode": "notification_mode",
}
# Stack Parameters → Deployment fields. The SigV4 service follows from OpenSearchArn (as in
# template.yaml); OpenSearchService is only read from stacks deployed while it was a parameter.
_STACK_PARAMETERS = {
    "OpenSearchEndpoint": "opensearch_endpoint",
    "OpenSearchIndex": "opensearch_index",
    "OpenSearchService": "opensearch_service",
    "OpenSearchArn": "opensearch_arn",
    "NotificationMode": "notification_mode",
    "AccessMapS3Uri": "access_map_uri",
    "AdminGroupName": "admin_group",
    "FileServerShares": "file_server_shares",
}
# Logical ids of template.yaml, for stacks whose Outputs lack a value.
_STACK_RESOURCES = {
    "DocumentsBucket": "bucket",
    "IngestQueue": "ingest_queue_url",
    "IngestDlq": "ingest_dlq_url",
    "OcrQueue": "ocr_queue_url",
    "OcrDlq": "ocr_dlq_url",
    "EmbedQueue": "embed_queue_url",
    "EmbedDlq": "embed_dlq_url",
    "IdempotencyTable": "idempotency_table",
    "LedgerTable": "ledger_table",
    "IndexerFunction": "function_name",
    "RedriveFunction": "redrive_function",
    "WorkerCluster": "ecs_cluster",
    "WorkerService": "ecs_service",
    "IngestRule": "eventbridge_rule",
}
# Environment variables (the local env file's, and the handlers') → Deployment fields.
_ENVIRONMENT = {
    "DOCINDEX_BUCKET": "bucket",
    "INGEST_QUEUE_URL": "ingest_queue_url",
    "INGEST_DLQ_URL": "ingest_dlq_url",
    "OCR_QUEUE_URL": "ocr_queue_url",
    "OCR_DLQ_URL": "ocr_dlq_url",
    "EMBED_QUEUE_URL": "embed_queue_url",
    "EMBED_DLQ_URL": "embed_dlq_url",
    "IDEMPOTENCY_TABLE": "idempotency_table",
    "LEDGER_TABLE": "ledger_table",
    "INDEXER_FUNCTION_NAME": "function_name",
    "REDRIVE_FUNCTION_NAME": "redrive_function",
    "OPENSEARCH_ENDPOINT": "opensearch_endpoint",
    "OPENSEARCH_INDEX": "opensearch_index",
    "OPENSEARCH_AUTH": "opensearch_auth",
    "OPENSEARCH_SERVICE": "opensearch_service",
    "OPENSEARCH_ARN": "opensearch_arn",
    "WORKER_CLUSTER_NAME": "ecs_cluster",
    "WORKER_SERVICE_NAME": "ecs_service",
    "AWS_ENDPOINT_URL": "endpoint_url",
    "AWS_REGION": "region",
    "ACCESS_MAP_URI": "access_map_uri",
    "DOCINDEX_ADMIN_GROUP": "admin_group",
    "FILE_SERVER_SHARES": "file_server_shares",
}


# Public name of the same table (the CLI writes resolved settings back to the environment with it).
ENVIRONMENT_VARIABLES = _ENVIRONMENT


def opensearch_service_of(arn: str | None) -> str | None:
    """``es`` or ``aoss``: the service field of an OpenSearch domain or collection ARN (else None)."""
    parts = (arn or "").split(":")
    return parts[2] if len(parts) > 2 and parts[2] in ("es", "aoss") else None


def _values_of_parameters(parameters: Mapping[str, str]) -> dict[str, Any]:
    """Deployment fields from a stack's Parameters; the ARN's service wins over OpenSearchService."""
    values: dict[str, Any] = {name: parameters[key] for key, name in _STACK_PARAMETERS.items() if parameters.get(key)}
    service = opensearch_service_of(values.get("opensearch_arn"))
    if service:
        values["opensearch_service"] = service
    return values


@dataclass(frozen=True)
class Deployment:
    """The resources of one docindex pipeline (any may be unknown: ``None``)."""

    source: str = "environment"
    region: str = "us-east-1"
    endpoint_url: str | None = None
    stack_name: str | None = None
    bucket: str | None = None
    ingest_queue_url: str | None = None
    ingest_dlq_url: str | None = None
    ocr_queue_url: str | None = None
    ocr_dlq_url: str | None = None
    # Meaning search's embed jobs (a stack deployed before it has none: they go to the OCR queue).
    embed_queue_url: str | None = None
    embed_dlq_url: str | None = None
    idempotency_table: str | None = None
    ledger_table: str | None = None
    function_name: str | None = None
    # The stack's redrive function: `docindex redrive --stack` runs the redrive in it, with its role.
    redrive_function: str | None = None
    # The local run simulates the function timeout (LOCAL_FUNCTION_TIMEOUT); on AWS
    # the function's own configuration is read instead.
    local_function_timeout: int | None = None
    event_source_mapping_ids: tuple[str, ...] = ()
    eventbridge_rule: str | None = None
    ecs_cluster: str | None = None
    ecs_service: str | None = None
    notification_mode: str | None = None
    opensearch_endpoint: str | None = None
    opensearch_index: str = "documents"
    opensearch_auth: str = "sigv4"
    opensearch_service: str = "es"
    opensearch_arn: str | None = None
    access_map_uri: str | None = None
    admin_group: str = "docindex-admins"
    # Which key prefix is which file server share (docindex.access.shares): `docindex search` prints paths.
    file_server_shares: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    # Where each known value came from (field -> "--flag" / "environment" / "env file P" / "stack S"):
    # the operator commands print it, so nobody has to guess which endpoint a command talked to.
    origins: Mapping[str, str] = field(default_factory=dict)

    @property
    def settings_sources(self) -> list[str]:
        """The sources that gave a value, most important first (flags, environment, env file, stack)."""
        rank = {"flag": 0, "environment": 1, "env file": 2, "stack": 3, "default": 4}
        seen = dict.fromkeys(sorted(set(self.origins.values()), key=lambda o: (_origin_rank(o, rank), o)))
        return list(seen)

    def describe_settings(self) -> str:
        """One line: which source gave which settings (``--opensearch-endpoint; environment: ...``)."""
        parts = []
        for source in self.settings_sources:
            names = sorted(name for name, origin in self.origins.items() if origin == source)
            if source.startswith("--"):
                parts.append(source)
            elif source in ("environment", "default"):
                parts.append(f"{source}: {', '.join(names)}")
            else:
                parts.append(f"{source} ({len(names)} value{'s' if len(names) != 1 else ''})")
        return " > ".join(parts) if parts else "nothing configured"

    @property
    def is_local(self) -> bool:
        """True against a local emulator (moto server): no Lambda, ECS or IAM there."""
        return bool(self.endpoint_url) and ".amazonaws.com" not in str(self.endpoint_url)

    def with_overrides(self, **values: Any) -> Deployment:
        """A copy with the given (non-None) values replaced."""
        known = {k: v for k, v in values.items() if v is not None}
        return replace(self, **known) if known else self

    def environment(self) -> dict[str, str]:
        """The variables the handlers read, for what is known (the inverse of :meth:`from_environment`)."""
        fields = asdict(self)
        env = {variable: str(fields[name]) for variable, name in _ENVIRONMENT.items() if fields.get(name)}
        if self.ledger_table:
            env["REDRIVE_STATE_TABLE"] = self.ledger_table  # as template.yaml sets it
        return env

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["parameters"] = dict(self.parameters)
        data["origins"] = dict(self.origins)
        data["event_source_mapping_ids"] = list(self.event_source_mapping_ids)
        data["is_local"] = self.is_local
        return {k: v for k, v in data.items() if v not in (None, (), [], {})}

    # -- resolution --------------------------------------------------------

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], *, source: str = "environment") -> Deployment:
        """From ``KEY=VALUE`` variables (``docindex local up``'s env file, or the process)."""
        return cls(source=source, **environment_values(environ))

    @classmethod
    def from_stack(cls, cloudformation: Any, stack_name: str, *, region: str, endpoint_url: str | None) -> Deployment:
        """From a stack deployed from template.yaml: Outputs, then Parameters, then resources."""
        from botocore.exceptions import ClientError

        try:
            stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
        except ClientError as exc:
            message = error_message(exc)
            raise DeploymentError(f"stack {stack_name!r}: {message}") from None
        if not stacks:
            raise DeploymentError(f"stack {stack_name!r} not found")
        stack = stacks[0]
        parameters = {p["ParameterKey"]: p.get("ParameterValue", "") for p in stack.get("Parameters", [])}
        values = _values_of_parameters(parameters)
        for output in stack.get("Outputs", []):
            field_name = _STACK_OUTPUTS.get(str(output.get("OutputKey", "")))
            if field_name and output.get("OutputValue"):
                values[field_name] = output["OutputValue"]
        mappings: list[str] = []
        paginator = cloudformation.get_paginator("list_stack_resources")
        for page in paginator.paginate(StackName=stack_name):
            for resource in page.get("StackResourceSummaries", []):
                physical = str(resource.get("PhysicalResourceId") or "")
                if not physical:
                    continue
                if resource.get("ResourceType") == "AWS::Lambda::EventSourceMapping":
                    mappings.append(physical)
                    continue
                logical = _STACK_RESOURCES.get(str(resource.get("LogicalResourceId", "")))
                if logical and logical not in values:
                    # An ECS service's physical id is its ARN; the name is the last part.
                    values[logical] = physical.rsplit("/", 1)[-1] if logical == "ecs_service" else physical
        if values.get("opensearch_service") == "aoss":
            values.setdefault("opensearch_auth", "sigv4")
        return cls(
            source=f"stack {stack_name}",
            region=region,
            endpoint_url=endpoint_url,
            stack_name=stack_name,
            event_source_mapping_ids=tuple(mappings),
            parameters=parameters,
            **values,
        )


def _origin_rank(origin: str, rank: Mapping[str, int]) -> int:
    if origin.startswith("--"):
        return rank["flag"]
    return next((value for key, value in rank.items() if origin.startswith(key)), len(rank))


# Fields a layer can set (the rest describe the resolution itself).
_LAYERED = (
    *_ENVIRONMENT.values(),
    "idempotency_table",
    "eventbridge_rule",
    "notification_mode",
    "local_function_timeout",
)


def environment_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """The Deployment fields the variables set (only those present)."""
    values: dict[str, Any] = {}
    if "AWS_REGION" not in environ and environ.get("AWS_DEFAULT_REGION"):
        values["region"] = environ["AWS_DEFAULT_REGION"]
    for variable, name in _ENVIRONMENT.items():
        if environ.get(variable):
            values[name] = environ[variable]
    if "opensearch_service" not in values and opensearch_service_of(values.get("opensearch_arn")):
        values["opensearch_service"] = opensearch_service_of(values["opensearch_arn"])
    timeout = environ.get("LOCAL_FUNCTION_TIMEOUT")
    if timeout and timeout.strip().isdigit():
        values["local_function_timeout"] = int(timeout)
    return values


def _known_values(deployment: Deployment) -> dict[str, Any]:
    """The fields of ``deployment`` a layer actually set (not left at the class default)."""
    blank = Deployment()
    return {
        name: getattr(deployment, name)
        for name in dict.fromkeys(_LAYERED)
        if getattr(deployment, name) is not None and getattr(deployment, name) != getattr(blank, name)
    }


def layered(
    *,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    env_file: tuple[str, Mapping[str, str]] | None = None,
    stack: Deployment | None = None,
    default_region: str = "us-east-1",
) -> Deployment:
    """One deployment from every source, in the one precedence every command uses.

    Explicit flags (``{field: value}``, the flag name in ``flag_names``) > the exported environment >
    the env file (``(label, variables)``) > the stack's outputs. Each value remembers its origin.
    """
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}

    def layer(label: str, found: Mapping[str, Any]) -> None:
        for name, value in found.items():
            if value is None or value == "":
                continue
            values[name] = value
            origins[name] = label

    if stack is not None:
        layer(f"stack {stack.stack_name}", _known_values(stack))
        layer(f"stack {stack.stack_name}", {"region": stack.region})
    base = stack.source if stack is not None else "environment"
    if env_file is not None:
        label, variables = env_file
        layer(label, environment_values(variables))
        if stack is None:
            base = label
    if environ is not None:
        layer("environment", environment_values(environ))
    for name, value in (flags or {}).items():
        if value is not None:
            layer(f"--{FLAG_NAMES.get(name, name).replace('_', '-')}", {name: value})
    if "region" not in values:
        layer("default", {"region": default_region})
    extra: dict[str, Any] = {}
    if stack is not None:
        extra = {
            "stack_name": stack.stack_name,
            "event_source_mapping_ids": stack.event_source_mapping_ids,
            "parameters": stack.parameters,
        }
    return Deployment(source=base, origins=origins, **extra, **values)


# Deployment field -> the operator commands' flag (docindex.cli._ops.add_target_options).
FLAG_NAMES = {
    "bucket": "bucket",
    "ingest_queue_url": "queue-url",
    "ingest_dlq_url": "dlq-url",
    "ocr_queue_url": "ocr-queue-url",
    "function_name": "function",
    "ledger_table": "ledger-table",
    "opensearch_endpoint": "opensearch-endpoint",
    "opensearch_index": "index",
    "ecs_cluster": "cluster",
    "ecs_service": "service",
    "region": "region",
}


def opensearch_client_for(deployment: Deployment, *, timeout: float = 30.0) -> Any:
    """An opensearch-py client for the deployment's endpoint (SigV4 unless auth is ``none``)."""
    from docindex.core.clients import opensearch_client
    from docindex.core.settings import OpenSearchSettings

    if not deployment.opensearch_endpoint:
        raise DeploymentError(
            "no OpenSearch endpoint: give --stack NAME or --opensearch-endpoint URL, set OPENSEARCH_ENDPOINT, "
            "or run `docindex local up` (it writes .docindex/local.env)"
        )
    settings = OpenSearchSettings.model_validate(
        {
            "OPENSEARCH_ENDPOINT": deployment.opensearch_endpoint,
            "OPENSEARCH_INDEX": deployment.opensearch_index,
            "OPENSEARCH_AUTH": deployment.opensearch_auth,
            "OPENSEARCH_SERVICE": deployment.opensearch_service,
            "AWS_REGION": deployment.region,
        }
    )
    return opensearch_client(settings, timeout=timeout)
