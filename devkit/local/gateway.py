"""The local stand-in for API Gateway (HTTP API + JWT authorizer) and the Cognito Hosted UI.

``python -m devkit.local.gateway --env-file .docindex/local.env --port N`` serves:

- the search function (``functions/search/app.py``, loaded as SAM packages it)
  with HTTP API payload 2.0 events. API routes need ``Authorization: Bearer
  <token>`` verified against moto's JWKS (401 otherwise, before the function
  runs, as API Gateway does); claims reach the function as API Gateway passes
  them (arrays flattened to ``"[a b]"``). The page and its files are public.
- ``/local-auth/authorize``, ``/local-auth/token``, ``/local-auth/logout``: a
  minimal OAuth 2.0 authorization-code + PKCE (S256) provider in front of
  moto's Cognito, so the page signs in locally exactly as it does against
  the Hosted UI or an external OIDC provider.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from devkit.local.signin import JwtVerifier, TokenRejected, sign_in

# The HTTP API's routes as template.yaml declares them (tests/unit/test_template.py holds them equal):
# those behind the JWT authorizer, and the page's public ones. A path no route matches is API Gateway's
# 404 before any authorizer runs (a browser's /favicon.ico, say), never a 401.
JWT_ROUTES = (
    "GET /search",
    "GET /answer",
    "GET /documents/{id}",
    "GET /documents/{id}/download",
    "GET /documents/{id}/pages/{n}/preview",
)
PUBLIC_ROUTES = ("GET /", "GET /static/{name}", "GET /config.json")
CODE_SECONDS = 120


def _route_pattern(route: str) -> re.Pattern[str]:
    path = route.split(" ", 1)[1]
    return re.compile("^" + re.sub(r"\\\{[a-z]+\\\}", "[^/]+", re.escape(path)) + "$")


_JWT = [_route_pattern(r) for r in JWT_ROUTES]
_PUBLIC = [_route_pattern(r) for r in PUBLIC_ROUTES]


def route_of(path: str) -> str | None:
    """``"jwt"``, ``"public"``, or None when no route of the API matches ``path``."""
    if any(p.match(path) for p in _PUBLIC):
        return "public"
    if any(p.match(path) for p in _JWT):
        return "jwt"
    return None


@dataclass
class PendingCode:
    tokens: dict[str, str]
    challenge: str
    redirect_uri: str
    client_id: str
    expires: float


def api_claims(claims: dict[str, Any]) -> dict[str, str]:
    """Claims as API Gateway's JWT authorizer hands them to the function: strings, arrays as ``[a b]``."""
    out: dict[str, str] = {}
    for name, value in claims.items():
        out[name] = "[" + " ".join(str(v) for v in value) + "]" if isinstance(value, list) else str(value)
    return out


def http_api_event(
    method: str, path: str, query: str, headers: dict[str, str], claims: dict[str, Any] | None
) -> dict[str, Any]:
    """An HTTP API payload 2.0 event."""
    params = {k: ",".join(v) for k, v in parse_qs(query, keep_blank_values=True).items()}
    context: dict[str, Any] = {
        "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": ""},
        "requestId": secrets.token_hex(8),
        "stage": "$default",
        "routeKey": "$default",
        "accountId": "000000000000",
        "apiId": "local",
        "domainName": "localhost",
        "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime()),
        "timeEpoch": int(time.time() * 1000),
    }
    if claims is not None:
        context["authorizer"] = {"jwt": {"claims": api_claims(claims), "scopes": None}}
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "headers": {k.lower(): v for k, v in headers.items()},
        "queryStringParameters": params or None,
        "requestContext": context,
        "isBase64Encoded": False,
        "body": None,
    }


class Gateway:
    """The routes and the sign-in provider; one per process."""

    def __init__(self, *, handler: Any, verifier: JwtVerifier, cognito: Any, pool_id: str, client_id: str) -> None:
        self.handler = handler
        self.verifier = verifier
        self.cognito = cognito
        self.pool_id = pool_id
        self.client_id = client_id
        self.codes: dict[str, PendingCode] = {}
        self.lock = threading.Lock()  # one request at a time in the function, as in one Lambda container

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        from devkit.local.context import LocalLambdaContext

        with self.lock:
            return dict(self.handler(event, LocalLambdaContext(timeout_seconds=10)))

    def issue_code(self, tokens: dict[str, str], challenge: str, redirect_uri: str, client_id: str) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = PendingCode(tokens, challenge, redirect_uri, client_id, time.time() + CODE_SECONDS)
        return code

    def redeem(self, form: dict[str, str]) -> dict[str, str] | None:
        pending = self.codes.pop(form.get("code", ""), None)
        if pending is None or pending.expires < time.time():
            return None
        verifier = form.get("code_verifier", "")
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if (
            digest != pending.challenge
            or form.get("redirect_uri") != pending.redirect_uri
            or form.get("client_id") != pending.client_id
        ):
            return None
        return pending.tokens


LOGIN_FORM = """<!doctype html><html lang="ja"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>サインイン (local)</title>
<link rel="icon" href="data:,"></head>
<body><main><h1>docindex ローカル サインイン</h1>{error}
<form method="post" action="/local-auth/authorize">
{hidden}
<p><label for="username">ユーザー名 / Username</label><br>
<input id="username" name="username" autocomplete="username" required autofocus></p>
<p><label for="password">パスワード / Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit" id="signin">サインイン</button></p>
</form></main></body></html>"""

OAUTH_PARAMS = (
    "client_id",
    "redirect_uri",
    "state",
    "code_challenge",
    "code_challenge_method",
    "scope",
    "response_type",
)


def make_handler(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            self._send(
                status, json.dumps(data).encode(), {"Content-Type": "application/json", "Cache-Control": "no-store"}
            )

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(length, 64 * 1024)).decode()
            return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}

        def _login_page(self, params: dict[str, str], error: str = "") -> None:
            hidden = "\n".join(
                f'<input type="hidden" name="{n}" value="{html.escape(params.get(n, ""))}">' for n in OAUTH_PARAMS
            )
            message = f'<p role="alert">{html.escape(error)}</p>' if error else ""
            body = LOGIN_FORM.format(hidden=hidden, error=message).encode()
            self._send(200, body, {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"})

        def do_GET(self) -> None:
            url = urlparse(self.path)
            if url.path == "/local-auth/authorize":
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                if params.get("client_id") != gateway.client_id or params.get("code_challenge_method") != "S256":
                    self._json(400, {"error": "invalid_request"})
                    return
                self._login_page(params)
                return
            if url.path == "/local-auth/logout":
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                self._send(302, b"", {"Location": params.get("logout_uri") or "/"})
                return
            self._proxy("GET", url.path, url.query)

        def do_POST(self) -> None:
            url = urlparse(self.path)
            if url.path == "/local-auth/authorize":
                form = self._form()
                try:
                    tokens = sign_in(
                        gateway.cognito, gateway.pool_id, gateway.client_id, form["username"], form["password"]
                    )
                except Exception:  # noqa: BLE001 - any failure is a failed sign-in for the user
                    self._login_page(form, "ユーザー名またはパスワードが違います / Incorrect username or password")
                    return
                code = gateway.issue_code(
                    tokens, form.get("code_challenge", ""), form["redirect_uri"], form["client_id"]
                )
                target = form["redirect_uri"] + "?" + urlencode({"code": code, "state": form.get("state", "")})
                self._send(302, b"", {"Location": target})
                return
            if url.path == "/local-auth/token":
                redeemed = gateway.redeem(self._form())
                if redeemed is None:
                    self._json(400, {"error": "invalid_grant"})
                else:
                    self._json(200, redeemed)
                return
            self._json(404, {"message": "Not Found"})

        def _proxy(self, method: str, path: str, query: str) -> None:
            claims = None
            route = route_of(path)
            if route is None:
                self._json(404, {"message": "Not Found"})
                return
            if route == "jwt":
                header = self.headers.get("Authorization", "")
                token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
                try:
                    claims = gateway.verifier.verify(token) if token else None
                except TokenRejected:
                    claims = None
                if claims is None:
                    self._json(401, {"message": "Unauthorized"})
                    return
            event = http_api_event(method, path, query, dict(self.headers.items()), claims)
            response = gateway.invoke(event)
            body = response.get("body") or ""
            data = base64.b64decode(body) if response.get("isBase64Encoded") else str(body).encode()
            headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
            self._send(int(response.get("statusCode", 500)), data, headers)

    return Handler


def serve(env: dict[str, str], port: int) -> ThreadingHTTPServer:
    """Build the gateway from a local env (``docindex local up``'s) and bind it; caller runs serve_forever."""
    import boto3

    from devkit.local.handlers import load_handler
    from docindex.core.clients import boto_config

    base = f"http://127.0.0.1:{port}"
    os.environ.update(env)
    os.environ.update(
        {
            "OIDC_AUTHORIZE_URL": f"{base}/local-auth/authorize",
            "OIDC_TOKEN_URL": f"{base}/local-auth/token",
            "OIDC_LOGOUT_URL": f"{base}/local-auth/logout",
        }
    )
    cognito = boto3.client("cognito-idp", region_name=env.get("AWS_REGION", "us-east-1"), config=boto_config())
    pool_id = env["COGNITO_USER_POOL_ID"]
    verifier = JwtVerifier(
        jwks_url=f"{env['AWS_ENDPOINT_URL']}/{pool_id}/.well-known/jwks.json",
        issuer=env["OIDC_ISSUER"],
        audience=env["COGNITO_CLIENT_ID"],
    )
    gateway = Gateway(
        handler=load_handler("search"),
        verifier=verifier,
        cognito=cognito,
        pool_id=pool_id,
        client_id=env["COGNITO_CLIENT_ID"],
    )
    return ThreadingHTTPServer(("127.0.0.1", port), make_handler(gateway))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env-file", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    from docindex.ops.envfile import read_env_file

    env = read_env_file(Path(args.env_file))
    server = serve(env, args.port)
    # Started in its own session, it would outlive a run whose servers are gone (a test's temporary
    # moto server): it exits once the AWS endpoint it signs users in against stops answering.
    threading.Thread(target=_exit_without_backend, args=(server, env["AWS_ENDPOINT_URL"]), daemon=True).start()
    server.serve_forever()


def _exit_without_backend(server: ThreadingHTTPServer, endpoint: str, *, every: float = 5.0, misses: int = 3) -> None:
    from devkit.local.servers import responds

    missed = 0
    while missed < misses:
        time.sleep(every)
        missed = 0 if responds(endpoint, "/moto-api/") else missed + 1
    server.shutdown()


if __name__ == "__main__":
    main()
