"""From an ACL export to an access map: one complete rule where the readers change, and a report.

- Each folder of the export stands for the files in it: who may read a file created there (the
  folder's object-inherit ACEs, in order). A folder whose file readers differ from its parent's
  gets a rule ``{prefix: "<key>/", inherit: false, allow, deny}`` with the whole answer; a folder
  like its parent needs none (the parent's rule covers it by prefix). So every folder of the
  export resolves exactly to its readers, and the map stays as small as the share's distinct ACLs.
- A file of the export whose own ACL gives other readers than its folder's is a *file-level ACL*:
  a rule for its key (a prefix: it also covers ``報告.docx.bak``) with the restrictive combination
  of the file's and the folder's readers (allowed by both, denied by either), reported. Exported
  paths that the file's key is a prefix of get rules of their own, so they stay exact.
- Paths become keys with the sync's prefix rules: ``--strip`` removes the export's leading path
  (``D:\\Shares``; by default the longest path all entries share), ``--prefix`` puts what the sync
  put in front (``nas/``); Windows separators become ``/``; names are kept as written (Japanese
  names as they are, the case as the NAS has it).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docindex.access.ntfs.exports import AclEntry, ExportError, split_path
from docindex.access.ntfs.principals import Mapping
from docindex.access.ntfs.readers import (
    FILE_LEVEL,
    IGNORED_ACCOUNTS,
    LIST_ONLY,
    RESTRICTIVE,
    SHARED_GROUP,
    Note,
    Readers,
    file_aces_of_folder,
    folder_listers,
    own_aces,
    readers_of,
)
from docindex.access.policy import EVERYONE, MAX_RULES

FOLDER = "folder"
FILE = "file"


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the report: what could not be represented exactly, where, and what was done."""

    kind: str
    key: str
    trustee: str
    detail: str
    where: str

    @property
    def restrictive(self) -> bool:
        return self.kind in RESTRICTIVE

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "trustee": self.trustee, "detail": self.detail, "where": self.where}


@dataclass(frozen=True, slots=True)
class PathReaders:
    """What the file server says about one exported path, as the map should say it."""

    key: str  # a folder's prefix ('営業部/見積/') or a file's key
    kind: str
    readers: Readers  # already in the safe direction (restricted where the report says so)
    where: str


@dataclass
class KeyRules:
    """How the sync named the objects: ``strip`` the export's leading path, put ``prefix`` in front."""

    strip: tuple[str, ...] | None = None  # None: the longest path all entries share
    prefix: str = ""

    def resolve(self, paths: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
        if self.strip is not None:
            return self.strip
        common = list(paths[0]) if paths else []
        for parts in paths[1:]:
            n = 0
            while n < len(common) and n < len(parts) and common[n].casefold() == parts[n].casefold():
                n += 1
            del common[n:]
        return tuple(common)

    def key_of(self, parts: tuple[str, ...], strip: tuple[str, ...], where: str) -> str:
        if len(parts) < len(strip) or any(a.casefold() != b.casefold() for a, b in zip(parts, strip, strict=False)):
            raise ExportError(f"{where}: the path {'/'.join(parts)!r} is not under --strip {'/'.join(strip)!r}")
        return self.prefix + "/".join(parts[len(strip) :])


@dataclass
class ImportResult:
    rules: list[dict[str, Any]]
    paths: list[PathReaders]
    findings: list[Finding]
    strip: tuple[str, ...]
    aux_prefixes: frozenset[str] = frozenset()
    folders: int = 0
    files: int = 0

    @property
    def restrictive(self) -> list[Finding]:
        return [f for f in self.findings if f.restrictive]

    def access_map(self, description: str = "") -> dict[str, Any]:
        document: dict[str, Any] = {"rules": self.rules}
        if description:
            document["description"] = description
        return document


def principals_json(principals: frozenset[str]) -> dict[str, Any]:
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


def _rule(prefix: str, readers: Readers, bucket: str | None, description: str) -> dict[str, Any]:
    n = readers.normal()
    rule: dict[str, Any] = {"prefix": prefix}
    if bucket:
        rule["bucket"] = bucket
    rule["inherit"] = False
    if n.allow:
        rule["allow"] = principals_json(n.allow)
    if n.allow and n.deny:
        rule["deny"] = principals_json(n.deny)
    rule["description"] = description[:300]
    return rule


def normalize_prefix(prefix: str) -> str:
    value = prefix.replace("\\", "/").lstrip("/")
    return value if not value or value.endswith("/") else value + "/"


def import_acls(
    entries: Sequence[AclEntry], mapping: Mapping, keys: KeyRules, *, bucket: str | None = None
) -> ImportResult:
    """The access map rules, each exported path's readers, and the report."""
    return _Importer(entries, mapping, keys, bucket).run()


class _Importer:
    def __init__(self, entries: Sequence[AclEntry], mapping: Mapping, keys: KeyRules, bucket: str | None) -> None:
        self.mapping = mapping
        self.keys = keys
        self.bucket = bucket
        parsed = [(split_path(e.path), e) for e in entries]
        self.strip = keys.resolve([p for p, _ in parsed])
        self.by_parts: dict[tuple[str, ...], AclEntry] = {}
        for parts, entry in parsed:
            if parts in self.by_parts:
                raise ExportError(
                    f"{entry.where}: the path {entry.path!r} is listed twice (also {self.by_parts[parts].where})"
                )
            self.by_parts[parts] = entry
        self.findings: list[Finding] = []
        self.ignored: dict[str, int] = defaultdict(int)
        self.effective: dict[tuple[str, ...], Readers] = {}  # what the map gives a file in this folder
        self.rules: dict[str, dict[str, Any]] = {}
        self.paths: list[PathReaders] = []
        self.aux: set[str] = set()

    def run(self) -> ImportResult:
        has_children = {parts[:-1] for parts in self.by_parts if parts}
        files: list[tuple[tuple[str, ...], AclEntry]] = []
        for parts, entry in sorted(self.by_parts.items(), key=lambda item: (len(item[0]), item[0])):
            inheritable = any(a.object_inherit or a.container_inherit for a in entry.dacl.aces)
            if parts in has_children or inheritable:
                self._folder(parts, entry)  # parents before children: sorted by depth
            else:
                files.append((parts, entry))
        for parts, entry in files:
            self._file(parts, entry)
        self._keep_apart()
        self._summaries()
        if len(self.rules) > MAX_RULES:
            raise ExportError(
                f"the imported map would have {len(self.rules)} rules, more than the {MAX_RULES} a map may hold; "
                "import one share (or one part of it, with --strip) at a time"
            )
        folders = sum(1 for p in self.paths if p.kind == FOLDER)
        return ImportResult(
            rules=[self.rules[k] for k in sorted(self.rules)],
            paths=self.paths,
            findings=self.findings,
            strip=self.strip,
            aux_prefixes=frozenset(self.aux),
            folders=folders,
            files=len(self.paths) - folders,
        )

    def _add(self, notes: list[Note], key: str, where: str) -> None:
        for note in notes:
            if note.kind == IGNORED_ACCOUNTS:
                self.ignored[note.trustee] += 1
            else:
                self.findings.append(Finding(note.kind, key, note.trustee, note.detail, where))

    def _nearest_folder(self, parts: tuple[str, ...]) -> tuple[str, ...] | None:
        for n in range(len(parts) - 1, -1, -1):
            if parts[:n] in self.effective:
                return parts[:n]
        return None

    def _folder(self, parts: tuple[str, ...], entry: AclEntry) -> None:
        key = self.keys.key_of(parts, self.strip, entry.where)
        prefix = key + "/" if len(parts) > len(self.strip) else self.keys.prefix  # the root is the prefix itself
        found, notes = readers_of(file_aces_of_folder(entry.dacl), self.mapping, null=entry.dacl.null)
        readers = found.normal()
        self._add(notes, prefix, entry.where)
        # list-only: the file server lets them list the folder but not read its files. Every signed-in
        # person holds `everyone`; a folder closed for a deny docindex cannot attribute is not list-only
        # (the report names that deny), so this asks the file server's readers before the closing.
        nas = Readers(allow=found.allow, deny=found.deny)
        for principal in sorted(folder_listers(entry.dacl, self.mapping)):
            if not nas.permits([principal, EVERYONE]):
                self.findings.append(
                    Finding(
                        LIST_ONLY,
                        prefix,
                        principal,
                        "may list this folder on the file server but not read its files: docindex shows them "
                        "neither the files nor their names",
                        entry.where,
                    )
                )
        parent = self._nearest_folder(parts)
        if parent is None or self.effective[parent] != readers:
            self.rules[prefix] = _rule(prefix, readers, self.bucket, f"from {entry.path}")
        self.effective[parts] = readers
        self.paths.append(PathReaders(prefix, FOLDER, readers, entry.where))

    def _file(self, parts: tuple[str, ...], entry: AclEntry) -> None:
        key = self.keys.key_of(parts, self.strip, entry.where)
        if len(parts) <= len(self.strip) or key.endswith("/"):
            raise ExportError(f"{entry.where}: {entry.path!r} looks like a file but becomes the key {key!r}")
        readers, notes = readers_of(own_aces(entry.dacl), self.mapping, null=entry.dacl.null)
        readers = readers.normal()
        self._add(notes, key, entry.where)
        parent = self._nearest_folder(parts)
        folder = self.effective[parent] if parent is not None else Readers()
        if readers != folder:
            combined = readers.restrictive_with(folder)
            lost = sorted(readers.allow - combined.allow)
            detail = "a rule for this key, which also covers keys that start with it"
            if lost:
                detail += f"; the file server also lets {', '.join(lost)} read it: docindex does not"
            self.findings.append(Finding(FILE_LEVEL, key, "", detail, entry.where))
            self.rules[key] = _rule(key, combined, self.bucket, f"file-level ACL of {entry.path}")
            readers = combined
        self.paths.append(PathReaders(key, FILE, readers, entry.where))
        special = entry.dacl.protected or any(not a.inherited for a in entry.dacl.aces)
        if special and folder.normal().allow and key + "/" not in self.rules:
            # Nothing tells a file from a folder whose ACEs pass nothing on (a private drop folder):
            # if it is one, what is created in it inherits no reader, and the parent's rule must not
            # cover it. For a real file the rule covers nothing.
            self.rules[key + "/"] = _rule(key + "/", Readers(), self.bucket, f"if {entry.path} is a folder")
            self.aux.add(key + "/")

    def _keep_apart(self) -> None:
        """A file rule is a prefix: exported paths it would wrongly cover get exact rules of their own."""
        file_rules = sorted(k for k in self.rules if k and not k.endswith("/"))
        if not file_rules:
            return
        keys_sorted = sorted(p.key for p in self.paths)
        by_key = {p.key: p for p in self.paths}
        for fkey in file_rules:
            i = bisect.bisect_right(keys_sorted, fkey)
            while i < len(keys_sorted) and keys_sorted[i].startswith(fkey):
                other = by_key[keys_sorted[i]]
                if other.key not in self.rules:
                    self.rules[other.key] = _rule(
                        other.key, other.readers, self.bucket, f"kept apart from the rule for {fkey}"
                    )
                i += 1

    def _summaries(self) -> None:
        for trustee, count in sorted(self.ignored.items()):
            self.findings.append(
                Finding(
                    IGNORED_ACCOUNTS,
                    "",
                    trustee,
                    f"named on {count} path(s); not a person who searches (or an administrator): not in the map",
                    "",
                )
            )
        for principal, trustees in sorted(self.mapping.shared_targets().items()):
            self.findings.append(
                Finding(
                    SHARED_GROUP, "", ", ".join(trustees), f"all map to {principal}: docindex treats them as one", ""
                )
            )
