"""Local sign-in: a Cognito user pool on moto server, users in groups, and JWT verification.

moto's Cognito issues real RS256 JWTs (with ``cognito:groups``) and serves
their keys at ``<moto>/<pool id>/.well-known/jwks.json``; the local gateway
(:mod:`devkit.local.gateway`) verifies tokens against that JWKS the way API
Gateway's JWT authorizer does (signature, issuer, expiry, audience/client_id).
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

POOL_NAME_SUFFIX = "-users"
CLIENT_NAME = "docindex-search-page"


def provision_user_pool(cognito: Any, *, prefix: str, admin_group: str, region: str) -> dict[str, str]:
    """Create or reuse the pool, its public app client and the admins' group; the env the gateway needs."""
    name = f"{prefix}{POOL_NAME_SUFFIX}"
    pools = [p for p in cognito.list_user_pools(MaxResults=60)["UserPools"] if p["Name"] == name]
    pool_id = pools[0]["Id"] if pools else cognito.create_user_pool(PoolName=name)["UserPool"]["Id"]
    clients = cognito.list_user_pool_clients(UserPoolId=pool_id, MaxResults=60)["UserPoolClients"]
    mine = [c for c in clients if c["ClientName"] == CLIENT_NAME]
    if mine:
        client_id = mine[0]["ClientId"]
    else:
        client_id = cognito.create_user_pool_client(
            UserPoolId=pool_id,
            ClientName=CLIENT_NAME,
            GenerateSecret=False,
            ExplicitAuthFlows=["ALLOW_ADMIN_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        )["UserPoolClient"]["ClientId"]
    ensure_group(cognito, pool_id, admin_group)
    return {
        "COGNITO_USER_POOL_ID": pool_id,
        "COGNITO_CLIENT_ID": client_id,
        "OIDC_ISSUER": f"https://cognito-idp.{region}.amazonaws.com/{pool_id}",
        "OIDC_CLIENT_ID": client_id,
    }


def ensure_group(cognito: Any, pool_id: str, group: str) -> None:
    with contextlib.suppress(cognito.exceptions.GroupExistsException):
        cognito.create_group(UserPoolId=pool_id, GroupName=group)


def ensure_user(cognito: Any, pool_id: str, username: str, password: str, groups: list[str]) -> str:
    """Create (or reuse) a confirmed user with a permanent password in ``groups``; returns its ``sub``."""
    with contextlib.suppress(cognito.exceptions.UsernameExistsException):
        cognito.admin_create_user(UserPoolId=pool_id, Username=username, MessageAction="SUPPRESS")
    cognito.admin_set_user_password(UserPoolId=pool_id, Username=username, Password=password, Permanent=True)
    for group in groups:
        ensure_group(cognito, pool_id, group)
        cognito.admin_add_user_to_group(UserPoolId=pool_id, Username=username, GroupName=group)
    attributes = cognito.admin_get_user(UserPoolId=pool_id, Username=username)["UserAttributes"]
    return next(a["Value"] for a in attributes if a["Name"] == "sub")


def sign_in(cognito: Any, pool_id: str, client_id: str, username: str, password: str) -> dict[str, str]:
    """Tokens for a user (what the Hosted UI's token endpoint would return)."""
    result = cognito.admin_initiate_auth(
        UserPoolId=pool_id,
        ClientId=client_id,
        AuthFlow="ADMIN_USER_PASSWORD_AUTH",
        AuthParameters={"USERNAME": username, "PASSWORD": password},
    )["AuthenticationResult"]
    return {
        "access_token": result["AccessToken"],
        "id_token": result["IdToken"],
        "refresh_token": result.get("RefreshToken", ""),
        "token_type": "Bearer",
        "expires_in": str(result.get("ExpiresIn", 3600)),
    }


class TokenRejected(Exception):
    """The token fails verification (what API Gateway answers with 401)."""


@dataclass
class JwtVerifier:
    """What API Gateway's JWT authorizer checks: RS256 signature by the issuer's JWKS, iss, exp, audience."""

    jwks_url: str
    issuer: str
    audience: str
    now: Callable[[], float] = time.time
    _keys: Any = None

    def keys(self) -> Any:
        from joserfc.jwk import KeySet

        if self._keys is None:
            with urllib.request.urlopen(self.jwks_url, timeout=10) as response:  # noqa: S310  # local moto URL  # nosec B310
                self._keys = KeySet.import_key_set(json.loads(response.read()))
        return self._keys

    def verify(self, token: str) -> dict[str, Any]:
        from joserfc import jwt
        from joserfc.errors import JoseError

        try:
            decoded = jwt.decode(token, self.keys(), algorithms=["RS256"])
            registry = jwt.JWTClaimsRegistry(
                now=int(self.now()), iss={"essential": True, "value": self.issuer}, exp={"essential": True}
            )
            registry.validate(decoded.claims)
        except (JoseError, ValueError) as exc:
            raise TokenRejected(f"{type(exc).__name__}: {exc}") from None
        claims = dict(decoded.claims)
        audience = claims.get("aud") if claims.get("token_use") == "id" else claims.get("client_id")
        if audience != self.audience:
            raise TokenRejected("the token is not for this client")
        return claims
