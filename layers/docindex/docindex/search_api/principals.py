"""Who is calling: the JWT claims API Gateway's authorizer verified, turned into principals.

API Gateway's HTTP API passes claims as strings; an array claim (Cognito's
``cognito:groups``) arrives as ``"[営業部 人事部]"`` (space-separated inside
brackets), a JSON array, or a real list (the local gateway): all three are read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from docindex.access.policy import EVERYONE, group_principal, user_principal

MAX_GROUPS = 200


class Unauthenticated(Exception):
    """No verified caller on the request (the authorizer is missing or misconfigured)."""


def parse_groups(value: Any) -> list[str]:
    """Group names from a claim value in any of the shapes API Gateway or an IdP produce."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        items = value
    else:
        text = str(value).strip()
        items = []
        if text.startswith("["):
            try:
                loaded = json.loads(text)
                items = loaded if isinstance(loaded, list) else [loaded]
            except ValueError:
                items = text[1:-1].replace(",", " ").split() if text.endswith("]") else text.split()
        else:
            items = text.replace(",", " ").split()
    return [str(g).strip() for g in items if str(g).strip()][:MAX_GROUPS]


@dataclass(frozen=True)
class Caller:
    sub: str
    groups: tuple[str, ...]

    @property
    def principals(self) -> list[str]:
        """What the permission filter matches against the documents' stamps."""
        return [user_principal(self.sub), EVERYONE, *(group_principal(g) for g in self.groups)]

    def is_admin(self, admin_group: str) -> bool:
        return admin_group in self.groups


def caller_from_claims(claims: dict[str, Any] | None, *, groups_claim: str) -> Caller:
    """The caller of a request whose token the authorizer verified; ``Unauthenticated`` without one."""
    if not claims or not str(claims.get("sub") or "").strip():
        raise Unauthenticated("no verified token on the request")
    return Caller(sub=str(claims["sub"]).strip(), groups=tuple(parse_groups(claims.get(groups_claim))))
