"""Why a command could not run, in one line with the fix: the CLI's single exception handler.

``docindex.cli.main`` catches whatever a command raises and asks :func:`describe` for the line;
the exit code is then 2 ("could not run"), never 1 (which means "the answer is no": no hits,
differences found, warnings). ``-v`` prints the traceback as well. Commands therefore do not
wrap their work in ``try/except`` to print errors themselves.
"""

from __future__ import annotations

from typing import Any

from docindex.core.aws import error_code, error_message

# Codes AWS answers when the credentials are missing, wrong or expired, or the caller lacks a permission.
_CREDENTIAL_CODES = {
    "UnrecognizedClientException",
    "InvalidClientTokenId",
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "RequestExpired",
    "AuthFailure",
}
_DENIED_CODES = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "Forbidden", "AuthorizationError"}

NO_CREDENTIALS_FIX = (
    "configure AWS credentials (`aws configure`, `aws sso login`, AWS_PROFILE or --profile); "
    "for the local run, run `docindex local up` (it writes .docindex/local.env)"
)


def _first_line(text: str) -> str:
    return " ".join(str(text).strip().splitlines()[:1]) or "(no message)"


def _operation(exc: BaseException) -> str:
    name = getattr(exc, "operation_name", None)
    return f" ({name})" if name else ""


def _botocore(exc: BaseException) -> str | None:  # noqa: PLR0911, PLR0912 - one return per error class
    try:
        from botocore import exceptions as be
    except ImportError:  # pragma: no cover - boto3 is a dependency
        return None
    if isinstance(exc, be.NoCredentialsError | be.PartialCredentialsError):
        return f"no AWS credentials: {NO_CREDENTIALS_FIX}"
    if isinstance(exc, be.ProfileNotFound):
        return f"{_first_line(str(exc))}: check --profile / AWS_PROFILE (`aws configure list-profiles`)"
    if isinstance(exc, be.NoRegionError):
        return "no AWS region: give --region, or set AWS_REGION"
    if isinstance(exc, be.EndpointConnectionError | be.ConnectTimeoutError):
        url = getattr(exc, "kwargs", {}).get("endpoint_url", "")
        return (
            f"cannot reach the AWS endpoint {url}: for the local run, start it with `docindex local up` "
            "(AWS_ENDPOINT_URL in .docindex/local.env); on AWS, check the network and --region"
        )
    if isinstance(exc, be.ReadTimeoutError):
        return f"the AWS endpoint did not answer in time: {_first_line(str(exc))}; try again, or check the network"
    token_errors = tuple(
        getattr(be, name)
        for name in ("TokenRetrievalError", "SSOTokenLoadError", "UnauthorizedSSOTokenError")
        if hasattr(be, name)
    )
    if token_errors and isinstance(exc, token_errors):
        return f"the AWS login has expired ({type(exc).__name__}): run `aws sso login` (or refresh the credentials)"
    if isinstance(exc, be.ParamValidationError):
        return f"invalid request to AWS: {_first_line(str(exc))}; check the flag values"
    if isinstance(exc, be.ClientError):
        code, message = error_code(exc), _first_line(error_message(exc))
        if code in _CREDENTIAL_CODES:
            return f"AWS rejected the credentials{_operation(exc)}: {code}: {message}; {NO_CREDENTIALS_FIX}"
        if code in ("404", "NoSuchBucket", "NotFound") or "NonExistent" in code or "DoesNotExist" in code:
            return (
                f"AWS{_operation(exc)}: not found ({code}): {message}; check the resource names "
                "(flags, the env file or the stack's outputs: `settings:` shows which gave what)"
            )
        if code in _DENIED_CODES or code.endswith("AccessDenied"):
            return (
                f"AWS denied access{_operation(exc)}: {message}; use a role or profile allowed to read the "
                "stack (docs/security.md lists what each command needs)"
            )
        return f"AWS error{_operation(exc)}: {code}: {message}"
    if isinstance(exc, be.BotoCoreError):
        return f"AWS client error: {_first_line(str(exc))}"
    return None


def _opensearch(exc: BaseException) -> str | None:  # noqa: PLR0911 - one return per error class
    try:
        from opensearchpy import exceptions as oe
    except ImportError:  # pragma: no cover
        return None
    if isinstance(exc, oe.ConnectionTimeout):
        return "OpenSearch did not answer in time: check the endpoint and the cluster's health (docindex diagnose)"
    if isinstance(exc, oe.ConnectionError):
        info = getattr(exc, "info", None)
        where = _first_line(str(info)) if info is not None else _first_line(str(exc))
        return (
            f"cannot reach OpenSearch ({where}): for the local run, start it with `docindex local up`; "
            "otherwise check OPENSEARCH_ENDPOINT / --opensearch-endpoint"
        )
    if isinstance(exc, oe.AuthenticationException | oe.AuthorizationException):
        return (
            f"OpenSearch refused the request ({exc.status_code}): check the credentials and the domain's access "
            "policy (SigV4 service OPENSEARCH_SERVICE es/aoss; OPENSEARCH_AUTH=none only for a local endpoint)"
        )
    if isinstance(exc, oe.NotFoundError):
        return (
            f"OpenSearch: {_first_line(_reason(exc.info) or str(exc.error))}: check --index / OPENSEARCH_INDEX "
            "(`docindex local up` creates the local index)"
        )
    if isinstance(exc, oe.TransportError):
        reason = _reason(exc.info) or str(exc.error)
        return f"OpenSearch error {exc.status_code}: {_first_line(reason)}"
    if isinstance(exc, oe.OpenSearchException):
        return f"OpenSearch error: {_first_line(str(exc))}"
    return None


def _reason(info: Any) -> str:
    """The root cause's reason in an OpenSearch error body."""
    if not isinstance(info, dict):
        return ""
    error = info.get("error")
    if isinstance(error, dict):
        causes = error.get("root_cause") or []
        if causes and isinstance(causes[0], dict) and causes[0].get("reason"):
            return str(causes[0]["reason"])
        return str(error.get("reason") or "")
    return str(error or "")


def describe(exc: BaseException) -> str:  # noqa: PLR0911 - one return per error class
    """One line: what went wrong and what to do about it."""
    from pydantic import ValidationError

    from docindex.core.exceptions import DocIndexError, RedriveConfigError, SettingsError

    if isinstance(exc, SettingsError | RedriveConfigError) and " configuration: " in str(exc):
        return (
            f"{_first_line(str(exc))}; give --stack NAME or --env-file PATH, or run `docindex local up` "
            "(docs/configuration.md lists the variables)"
        )
    if isinstance(exc, DocIndexError):
        return _first_line(str(exc))
    if isinstance(exc, ValidationError):
        from docindex.core.settings import describe_validation_error

        return f"invalid settings: {describe_validation_error(exc)}"
    for classify in (_botocore, _opensearch):
        line = classify(exc)
        if line:
            return line
    if isinstance(exc, ValueError) and "Credentials cannot be empty" in str(exc):
        # opensearch-py's SigV4 signer without credentials: the endpoint needs OPENSEARCH_AUTH=none
        # (a local one) or AWS credentials.
        return (
            "no AWS credentials to sign the OpenSearch requests (SigV4): set OPENSEARCH_AUTH=none for a local "
            f"endpoint, or {NO_CREDENTIALS_FIX}"
        )
    if isinstance(exc, ValueError) and str(exc).startswith("Invalid endpoint"):
        return f"{_first_line(str(exc))}: AWS_ENDPOINT_URL must start with http:// or https://"
    if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
        return f"{exc.strerror}: {exc.filename}"
    if isinstance(exc, OSError):
        return f"{type(exc).__name__}: {_first_line(str(exc))}"
    return f"unexpected error: {type(exc).__name__}: {_first_line(str(exc))} (run with -v for the traceback)"
