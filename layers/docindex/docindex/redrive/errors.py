"""Which reason a failure on one DLQ becomes: ``classify_error`` turns SQS/DynamoDB errors into a ``DlqError``.

The error classes themselves live in ``docindex.core.exceptions``; the AWS error codes and
HTTP status are read through ``docindex.core.aws``.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError

from docindex.core.aws import error_code, http_status
from docindex.core.exceptions import DlqError
from docindex.redrive.models import MOVE_TASK_OPERATIONS, UNSUPPORTED_REASON

# Where an operator finds the permissions the redrive needs (named in access_denied messages).
PERMISSIONS_DOC = 'docs/dlq-redrive.md, "Metrics and permissions"'

_NOT_FOUND = {"ResourceNotFoundException", "QueueDoesNotExist", "NonExistentQueue"}
_THROTTLED = {"RequestThrottled", "ThrottlingException", "Throttling", "TooManyRequestsException"}
_DENIED = {
    "AccessDenied",
    "AccessDeniedException",
    "InvalidSecurity",
    "UnauthorizedOperation",
    "KmsAccessDenied",
    "KMS.AccessDeniedException",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
}
_UNKNOWN_OPERATION = {
    "InvalidAction",
    "UnknownOperation",
    "UnknownOperationException",
    "NotImplemented",
    "NotImplementedException",
}
_STATE_OPERATIONS = frozenset({"GetItem", "PutItem", "DeleteItem"})
_INVALID = {"InvalidParameterValue", "InvalidParameterValueException", "InvalidAddress", "ValidationError"}


def classify_error(exc: Exception, endpoint_url: str | None = None) -> DlqError:
    """Turn an SQS/DynamoDB failure into a per-DLQ reason a human can act on."""
    if isinstance(exc, DlqError):
        return exc
    if isinstance(exc, ClientError):
        return _classify_client_error(exc, endpoint_url)
    if isinstance(exc, EndpointConnectionError):
        return DlqError("endpoint_unreachable", str(exc))
    if isinstance(exc, NoCredentialsError):
        return DlqError("access_denied", str(exc))
    if isinstance(exc, BotoCoreError):
        return DlqError("api_error", f"{type(exc).__name__}: {exc}")
    return DlqError("internal_error", f"{type(exc).__name__}: {exc}")


def _is_aws_endpoint(endpoint_url: str | None) -> bool:
    return not endpoint_url or ".amazonaws.com" in endpoint_url


def _unsupported(operation: str, status: int, code: str, codes: set[str], endpoint_url: str | None) -> bool:
    if codes & _UNKNOWN_OPERATION or status == 501:
        return True
    # An emulator without the API answers with a bare HTTP error page, not an AWS error code.
    return operation in MOVE_TASK_OPERATIONS and status >= 400 and code.isdigit() and not _is_aws_endpoint(endpoint_url)


def _classify_client_error(exc: ClientError, endpoint_url: str | None) -> DlqError:
    code = error_code(exc)
    status = http_status(exc)
    # Two details core.aws does not give: the SQS query-protocol code, and the bare message
    # (its error_message falls back to str(exc), which would repeat what `where` already says).
    error = exc.response.get("Error", {})
    codes = {code, code.removeprefix("AWS.SimpleQueueService."), str(error.get("QueryErrorCode", ""))}
    text = str(error.get("Message", ""))
    lowered = text.lower()
    operation = exc.operation_name
    where = f"{operation}: {code}: {text}".strip()
    if _unsupported(operation, status, code, codes, endpoint_url):
        return DlqError(
            UNSUPPORTED_REASON,
            f"{operation} is unsupported by this endpoint ({endpoint_url}): local emulators such "
            "as moto have no message-move API; redrive against AWS, or move the messages by hand",
        )
    on_state = operation in _STATE_OPERATIONS
    rules: list[tuple[bool, str, str]] = [
        (on_state and bool(codes & _NOT_FOUND), "state_table_not_found", f"{where} (REDRIVE_STATE_TABLE)"),
        (bool(codes & _NOT_FOUND), "queue_not_found", where),
        (bool(codes & _THROTTLED), "throttled", f"{where} (the next run tries again)"),
        (bool(codes & _DENIED), "access_denied", f"{where} ({PERMISSIONS_DOC} lists the permissions)"),
        (
            "dead" in lowered and "letter" in lowered and bool(codes & (_INVALID | {"UnsupportedOperation"})),
            "not_a_dlq",
            where,
        ),
        (
            "UnsupportedOperation" in codes and any(w in lowered for w in ("running", "active", "already")),
            "task_already_running",
            where,
        ),
        (bool(codes & _INVALID), "invalid_request", where),
        ("UnsupportedOperation" in codes, "unsupported_operation", where),
    ]
    for matched, reason, message in rules:
        if matched:
            return DlqError(reason, message)
    return DlqError("api_error", where)
