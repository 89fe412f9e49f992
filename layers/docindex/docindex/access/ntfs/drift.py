"""Drift: where the applied access map and the file server's ACLs (a fresh export) disagree.

Every path of the export is resolved twice, by the readers the export gives it (imported the way
``docindex access import`` would) and by the map (``AccessMap.grant``, the function that stamps
documents), and compared in one normal form (``everyone`` alone, denied principals out of allow;
the administrators' group, which the map adds everywhere, left out). A rule of the map under the
share's prefix that matches no path of the export any more (a folder renamed or removed on the
file server) is listed too. Both are differences: ``docindex access diff`` exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docindex.access.ntfs.importer import ImportResult
from docindex.access.ntfs.readers import Readers
from docindex.access.policy import AccessMap, group_principal


@dataclass(frozen=True, slots=True)
class Difference:
    key: str
    kind: str  # folder / file
    nas: Readers
    mapped: Readers
    wider: tuple[str, ...]  # what the map lets in that the file server does not: the dangerous side
    narrower: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        def side(r: Readers) -> dict[str, list[str]]:
            return {"allow": sorted(r.allow), "deny": sorted(r.deny)}

        return {
            "key": self.key,
            "kind": self.kind,
            "nas": side(self.nas),
            "map": side(self.mapped),
            "map_wider": list(self.wider),
            "map_narrower": list(self.narrower),
        }


@dataclass
class DriftReport:
    compared: int = 0
    differences: list[Difference] = field(default_factory=list)
    stale_rules: list[str] = field(default_factory=list)

    @property
    def in_step(self) -> bool:
        return not self.differences and not self.stale_rules

    def to_dict(self) -> dict[str, Any]:
        return {
            "compared": self.compared,
            "in_step": self.in_step,
            "differences": [d.to_dict() for d in self.differences],
            "stale_rules": self.stale_rules,
        }


def _sides(nas: Readers, mapped: Readers) -> tuple[tuple[str, ...], tuple[str, ...]]:
    wider = [f"+allow {p}" for p in sorted(mapped.allow - nas.allow)]
    wider += [f"-deny {p}" for p in sorted(nas.deny - mapped.deny)]
    narrower = [f"-allow {p}" for p in sorted(nas.allow - mapped.allow)]
    narrower += [f"+deny {p}" for p in sorted(mapped.deny - nas.deny)]
    return tuple(wider), tuple(narrower)


def drift(expected: ImportResult, access_map: AccessMap, *, bucket: str, prefix: str) -> DriftReport:
    """Compare each exported path's readers with what ``access_map`` grants there."""
    admins = group_principal(access_map.admin_group)
    report = DriftReport()
    seen: set[str] = set()
    for path in expected.paths:
        grant = access_map.grant(bucket, path.key)
        mapped = Readers(allow=frozenset(grant.allow) - {admins}, deny=frozenset(grant.deny)).normal()
        nas = path.readers.normal()
        report.compared += 1
        seen.add(path.key)
        if mapped != nas:
            wider, narrower = _sides(nas, mapped)
            report.differences.append(Difference(path.key, path.kind, nas, mapped, wider, narrower))
    for rule in access_map.rules:
        if (
            rule.bucket not in (None, bucket)
            or not rule.prefix.startswith(prefix)
            or rule.prefix in seen
            or rule.prefix in expected.aux_prefixes
        ):
            continue
        report.stale_rules.append(rule.prefix)
    # The dangerous side first, then by key.
    report.differences.sort(key=lambda d: (not d.wider, d.key))
    report.stale_rules.sort()
    return report
