"""The access map: per key prefix, which groups and users may read, and which may not.

A map (JSON; YAML too where PyYAML is installed: ``docindex access apply``
reads either and stores JSON, so the deployed functions need no YAML parser)::

    {"rules": [
      {"prefix": "", "allow": {"everyone": true}},
      {"prefix": "人事部/", "inherit": false, "allow": {"groups": ["人事部"]}},
      {"prefix": "人事部/評価/", "deny": {"users": ["<sub>"]}},
      {"prefix": "人事部/提出/", "inherit": false, "allow": {"groups": ["人事部", "営業部"]},
       "subfolders": {"allow": {"groups": ["人事部"]}}}
    ],
     "covers": [{"prefix": "人事部/"}]}

For an object key, the rules whose ``prefix`` starts the key (and whose
optional ``bucket`` is the object's) apply from the longest prefix up: each
adds its allow and deny entries, and a rule with ``inherit: false`` stops the
walk (its parents no longer apply). Deny wins over allow: a principal in
``deny`` never sees the file, whatever else allows it. A key that no rule
covers is readable by the administrators' group only. The administrators'
group is allowed on every key (it operates the index and reads all of it
with the operator CLI anyway), unless a deny entry names it.

A rule with ``exact: true`` applies to the one key equal to its prefix (a file with an ACL of its
own), not to the keys it starts (``報告.docx.bak``). A rule's optional ``subfolders``
(``allow``/``deny``) replaces its own entries for the keys with a further ``/`` after the prefix:
a Windows ACE marked no-propagate reaches a folder's own files but not the files of its
sub-folders, so an imported folder can need two answers. ``covers`` (written by ``docindex access
import``) names the prefixes an imported map describes: ``docindex access apply --merge`` replaces
the applied map's rules under them and leaves the others untouched; it does not
change what ``grant`` answers (a key no rule covers is closed anyway).

Principals, as stamped on documents and as a signed-in user holds them:
``user:<sub>``, ``group:<name>``, and ``everyone`` (any signed-in user).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

EVERYONE = "everyone"
MAX_RULES = 10_000
MAX_MAP_BYTES = 4 * 1024 * 1024


class AccessMapError(ValueError):
    """The access map cannot be used (syntax, unknown keys, wrong types)."""


def user_principal(sub: str) -> str:
    return f"user:{sub}"


def group_principal(name: str) -> str:
    return f"group:{name}"


@dataclass(frozen=True)
class AccessGrant:
    """The principals that may read a document and those that may not (deny wins)."""

    allow: tuple[str, ...]
    deny: tuple[str, ...] = ()

    def restrictive_with(self, other: AccessGrant) -> AccessGrant:
        """What neither grant gives away: allowed by both, denied by either (the safe in-between)."""
        return AccessGrant(
            allow=tuple(sorted(set(self.allow) & set(other.allow))),
            deny=tuple(sorted(set(self.deny) | set(other.deny))),
        )

    def permits(self, principals: Iterable[str]) -> bool:
        held = set(principals)
        return bool(held & set(self.allow)) and not (held & set(self.deny))


@dataclass(frozen=True)
class Rule:
    prefix: str
    bucket: str | None = None
    inherit: bool = True
    allow: frozenset[str] = field(default_factory=frozenset)
    deny: frozenset[str] = field(default_factory=frozenset)
    subfolders: tuple[frozenset[str], frozenset[str]] | None = None  # (allow, deny) for keys in sub-folders
    exact: bool = False  # the key equal to the prefix only

    def entries_for(self, key: str) -> tuple[frozenset[str], frozenset[str]]:
        """The (allow, deny) this rule gives ``key`` (which it covers)."""
        if self.subfolders is not None and "/" in key[len(self.prefix) :]:
            return self.subfolders
        return self.allow, self.deny


@dataclass(frozen=True)
class Coverage:
    """A prefix an imported map describes (``bucket`` None: every bucket)."""

    prefix: str
    bucket: str | None = None


def _principals(entry: Any, where: str) -> frozenset[str]:
    if entry is None:
        return frozenset()
    if not isinstance(entry, dict):
        raise AccessMapError(f"{where}: must be an object with groups, users or everyone")
    unknown = set(entry) - {"groups", "users", "everyone"}
    if unknown:
        raise AccessMapError(f"{where}: unknown key(s) {sorted(unknown)}")
    found: set[str] = set()
    for kind, make in (("groups", group_principal), ("users", user_principal)):
        names = entry.get(kind) or []
        if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
            raise AccessMapError(f"{where}.{kind}: must be a list of non-empty strings")
        found.update(make(n.strip()) for n in names)
    everyone = entry.get("everyone", False)
    if not isinstance(everyone, bool):
        raise AccessMapError(f"{where}.everyone: must be true or false")
    if everyone:
        found.add(EVERYONE)
    return frozenset(found)


@dataclass(frozen=True)
class AccessMap:
    """A parsed access map; :meth:`grant` resolves one object."""

    rules: tuple[Rule, ...]
    admin_group: str = "docindex-admins"
    version: str = "default"
    covers: tuple[Coverage, ...] = ()

    @classmethod
    def admins_only(cls, admin_group: str) -> AccessMap:
        """The map in force when none is configured: every file is visible to the administrators only."""
        return cls(rules=(), admin_group=admin_group, version="default")

    @cached_property
    def _by_prefix(self) -> tuple[dict[str, tuple[Rule, ...]], tuple[int, ...]]:
        """The rules by prefix (a bucket-specific rule before a generic one), and the prefix lengths, longest first.

        ``grant`` then looks up the key's own prefixes instead of testing every rule: a map imported
        from a file server has thousands of rules, and re-stamping or a drift check resolves every key.
        """
        index: dict[str, list[Rule]] = {}
        for rule in self.rules:
            index.setdefault(rule.prefix, []).append(rule)
        ordered = {p: tuple(sorted(rs, key=lambda r: r.bucket is None)) for p, rs in index.items()}
        return ordered, tuple(sorted({len(p) for p in ordered}, reverse=True))

    def grant(self, bucket: str, key: str) -> AccessGrant:
        """Who may read ``bucket/key``: longest prefix first, up the inheritance chain; deny wins."""
        index, lengths = self._by_prefix
        # Longest prefix first; a bucket-specific rule before a generic one of the same prefix.
        matching = [
            rule
            for n in lengths
            if n <= len(key)
            for rule in index.get(key[:n], ())
            if rule.bucket in (None, bucket) and rule.prefix == key[:n] and (n == len(key) or not rule.exact)
        ]
        allow: set[str] = {group_principal(self.admin_group)}
        deny: set[str] = set()
        for rule in matching:
            rule_allow, rule_deny = rule.entries_for(key)
            allow |= rule_allow
            deny |= rule_deny
            if not rule.inherit:
                break
        return AccessGrant(allow=tuple(sorted(allow)), deny=tuple(sorted(deny)))


def _load_document(data: bytes | str, name: str) -> Any:
    raw_bytes = data.encode() if isinstance(data, str) else data
    if len(raw_bytes) > MAX_MAP_BYTES:
        raise AccessMapError(f"{name}: larger than {MAX_MAP_BYTES} bytes")
    text = raw_bytes.decode("utf-8-sig")
    try:
        return json.loads(text)
    except ValueError as json_error:
        try:
            import yaml
        except ImportError:  # the Lambda layer has no PyYAML: `docindex access apply` stores JSON
            raise AccessMapError(f"{name}: not valid JSON ({json_error}) and PyYAML is not installed") from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise AccessMapError(f"{name}: neither JSON nor YAML: {exc}") from None


def _rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise AccessMapError(f"{where}: must be an object")
    unknown = set(raw) - {"prefix", "bucket", "inherit", "exact", "allow", "deny", "subfolders", "description"}
    if unknown:
        raise AccessMapError(f"{where}: unknown key(s) {sorted(unknown)}")
    prefix = raw.get("prefix")
    if not isinstance(prefix, str):
        raise AccessMapError(f"{where}.prefix: must be a string ('' for the whole bucket)")
    bucket = raw.get("bucket")
    if bucket is not None and not (isinstance(bucket, str) and bucket):
        raise AccessMapError(f"{where}.bucket: must be a bucket name")
    inherit = raw.get("inherit", True)
    if not isinstance(inherit, bool):
        raise AccessMapError(f"{where}.inherit: must be true or false")
    exact = raw.get("exact", False)
    if not isinstance(exact, bool):
        raise AccessMapError(f"{where}.exact: must be true or false")
    subfolders = raw.get("subfolders")
    below: tuple[frozenset[str], frozenset[str]] | None = None
    if subfolders is not None:
        if not isinstance(subfolders, dict) or set(subfolders) - {"allow", "deny"}:
            raise AccessMapError(f"{where}.subfolders: must be an object with allow and deny only")
        below = (
            _principals(subfolders.get("allow"), f"{where}.subfolders.allow"),
            _principals(subfolders.get("deny"), f"{where}.subfolders.deny"),
        )
    return Rule(
        prefix=prefix,
        bucket=bucket,
        inherit=inherit,
        allow=_principals(raw.get("allow"), f"{where}.allow"),
        deny=_principals(raw.get("deny"), f"{where}.deny"),
        subfolders=below,
        exact=exact,
    )


def _covers(raw: Any, name: str) -> tuple[Coverage, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise AccessMapError(f"{name}: covers: must be a list of {{prefix, bucket}} objects")
    out = []
    for i, item in enumerate(raw):
        where = f"{name}: covers[{i}]"
        if not isinstance(item, dict) or set(item) - {"prefix", "bucket"} or not isinstance(item.get("prefix"), str):
            raise AccessMapError(f"{where}: must be an object with a prefix (and a bucket)")
        bucket = item.get("bucket")
        if bucket is not None and not (isinstance(bucket, str) and bucket):
            raise AccessMapError(f"{where}.bucket: must be a bucket name")
        out.append(Coverage(prefix=item["prefix"], bucket=bucket))
    return tuple(out)


def parse_access_map(data: bytes | str, *, admin_group: str, name: str = "access map") -> AccessMap:
    """Parse and validate a map (JSON; YAML when it is not JSON and PyYAML is available)."""
    document = _load_document(data, name)
    if not isinstance(document, dict) or not isinstance(document.get("rules"), list):
        raise AccessMapError(f"{name}: must be an object with a list of rules")
    unknown_top = set(document) - {"rules", "version", "description", "covers"}
    if unknown_top:
        raise AccessMapError(f"{name}: unknown key(s) {sorted(unknown_top)}")
    if len(document["rules"]) > MAX_RULES:
        raise AccessMapError(f"{name}: more than {MAX_RULES} rules")
    rules: list[Rule] = []
    seen: set[tuple[str | None, str]] = set()
    for i, raw in enumerate(document["rules"]):
        rule = _rule(raw, f"{name}: rules[{i}]")
        if (rule.bucket, rule.prefix) in seen:
            raise AccessMapError(f"{name}: rules[{i}]: a second rule for prefix {rule.prefix!r}; merge them")
        seen.add((rule.bucket, rule.prefix))
        rules.append(rule)
    covers = _covers(document.get("covers"), name)

    def below(r: Rule) -> list[list[str]] | None:
        return None if r.subfolders is None else [sorted(r.subfolders[0]), sorted(r.subfolders[1])]

    canonical = json.dumps(
        [
            [r.bucket, r.prefix, r.inherit, sorted(r.allow), sorted(r.deny)]
            + ([below(r)] if r.subfolders else [])
            + (["exact"] if r.exact else [])
            for r in rules
        ]
        + [admin_group]
        + ([[[c.bucket, c.prefix] for c in covers]] if covers else []),
        ensure_ascii=False,
        sort_keys=True,
    )
    version = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return AccessMap(rules=tuple(rules), admin_group=admin_group, version=version, covers=covers)


def merged(applied: AccessMap, imported: AccessMap) -> AccessMap:
    """``applied`` with its rules under ``imported``'s covered prefixes replaced by ``imported``'s rules; the
    rest untouched (``docindex access apply --merge``: one department's export into the company's map)."""
    if not imported.covers:
        raise AccessMapError("the map names no covered prefix ('covers'): --merge takes a map written by access import")

    def under(rule: Rule) -> bool:
        return any(
            rule.prefix.startswith(c.prefix) and (c.bucket is None or rule.bucket in (None, c.bucket))
            for c in imported.covers
        )

    rules = [r for r in applied.rules if not under(r)] + list(imported.rules)
    covers = tuple(c for c in applied.covers if c not in imported.covers) + imported.covers
    combined = AccessMap(rules=tuple(rules), admin_group=imported.admin_group, covers=covers)
    return parse_access_map(to_json(combined), admin_group=imported.admin_group, name="the merged map")


def to_json(access_map: AccessMap) -> str:
    """The map as canonical JSON (what ``docindex access apply`` stores: the functions need no YAML)."""

    def entry(principals: frozenset[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        groups = sorted(p.removeprefix("group:") for p in principals if p.startswith("group:"))
        users = sorted(p.removeprefix("user:") for p in principals if p.startswith("user:"))
        if groups:
            out["groups"] = groups
        if users:
            out["users"] = users
        if EVERYONE in principals:
            out["everyone"] = True
        return out

    rules = []
    for r in access_map.rules:
        rule: dict[str, Any] = {"prefix": r.prefix}
        if r.bucket:
            rule["bucket"] = r.bucket
        if not r.inherit:
            rule["inherit"] = False
        if r.exact:
            rule["exact"] = True
        if r.allow:
            rule["allow"] = entry(r.allow)
        if r.deny:
            rule["deny"] = entry(r.deny)
        if r.subfolders is not None:
            rule["subfolders"] = {k: entry(v) for k, v in zip(("allow", "deny"), r.subfolders, strict=True) if v}
        rules.append(rule)
    document: dict[str, Any] = {"rules": rules}
    if access_map.covers:
        document["covers"] = [
            {"prefix": c.prefix, **({"bucket": c.bucket} if c.bucket else {})} for c in access_map.covers
        ]
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
