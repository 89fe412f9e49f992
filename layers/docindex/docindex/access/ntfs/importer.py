"""From an ACL export to an access map: one complete rule where the readers change, and a report.

- Each folder of the export stands for the files created in it: who may read a file created there
  (the folder's object-inherit ACEs, in order) and a file created in a sub-folder created there
  (the same less the no-propagate ones). A folder gets a rule ``{prefix: "<key>/", inherit: false,
  allow, deny, subfolders}`` with the whole answer, a file whose own ACL gives other readers a rule
  for its key (a prefix: it also covers ``報告.docx.bak``, so it holds what both the file and its
  folder allow, and every deny of either: reported). A rule the map would answer the same without
  is left out, so the map stays as small as the share's distinct ACLs.
- A file is told from a folder by what the export shows, never by its inheritance flags alone: a
  path with paths under it is a folder; one without is a file only when its ACL is exactly what
  Windows gives a file there (inherited from its folder as a file inherits, no explicit ACE with
  inheritance flags, not protected). Any other path without children (an empty folder, a folder of
  a folders-only export, an edited file) is read both ways: its key gets the file's readers, its
  ``key/`` the folder's.
- The export covers one folder tree (``covers``): the folder all its paths share. Every rule is
  under it; a key outside it is governed by no rule of this map (closed; ``access apply --merge``
  leaves the applied map's rules there untouched). A folder between two exported paths that the
  export does not list is closed (its ACL is unknown), and reported.
- Paths become keys with the sync's prefix rules: ``--strip`` removes the export's leading path
  (``D:\\Shares``; by default the path above the export's root folder: an export of
  ``D:\\Shares\\人事部`` keeps ``人事部``), ``--prefix`` puts what the sync put in front
  (``nas/``); Windows separators become ``/``; names are kept exactly as written (Japanese names,
  the case, a trailing space or U+3000 as the file server has them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docindex.access.ntfs.exports import AclEntry, ExportError, split_path
from docindex.access.ntfs.principals import Mapping, describe
from docindex.access.ntfs.readers import (
    ACCESS_RULES,
    FILE_LEVEL,
    IGNORED_ACCOUNTS,
    LIST_ONLY,
    MISSING_FOLDER,
    NULL_DACL,
    RESTRICTIVE,
    SHARED_GROUP,
    UNIVERSAL_MAPPING,
    Note,
    Readers,
    folder_listers,
    own_aces,
    reaching_new_files,
    readers_of,
)
from docindex.access.ntfs.sddl import CONTAINER_INHERIT, INHERIT_ONLY, NO_PROPAGATE_INHERIT, OBJECT_INHERIT, Ace, Dacl
from docindex.access.ntfs.sddl import file_rights as _file_rights
from docindex.access.policy import EVERYONE, MAX_RULES

FOLDER = "folder"
FILE = "file"
SUBFOLDERS = "subfolders"  # a folder's readers for files in sub-folders created later (key '<folder>/*/')
BOTH = "both"  # a path without children whose kind the export does not show: read as file and as folder
_CREATORS = ("S-1-3-0", "S-1-3-1", "CO", "CG")


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

    key: str  # a folder's prefix ('営業部/見積/'), '営業部/見積/*/' for its sub-folders, or a file's key
    kind: str  # FOLDER, SUBFOLDERS or FILE
    readers: Readers  # already in the safe direction (restricted where the report says so)
    where: str


@dataclass
class KeyRules:
    """How the sync named the objects: ``strip`` the export's leading path, put ``prefix`` in front."""

    strip: tuple[str, ...] | None = None  # None: the path above the export's root folder
    prefix: str = ""

    def resolve(self, paths: Sequence[tuple[str, ...]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(what to strip, the export's root folder): the root is the path all entries share."""
        common = list(paths[0]) if paths else []
        for parts in paths[1:]:
            n = 0
            while n < len(common) and n < len(parts) and common[n].casefold() == parts[n].casefold():
                n += 1
            del common[n:]
        root = tuple(common)
        if self.strip is not None:
            return self.strip, root if len(root) >= len(self.strip) else self.strip
        # The root folder keeps its name when the export lists it: `icacls D:\Shares\人事部 /save /t` writes
        # 人事部 and 人事部\評価, which the sync of D:\Shares put at 人事部/ (a wrong guess closes, never opens).
        return (root[:-1] if root and root in set(paths) else root), root

    def key_of(self, parts: tuple[str, ...], strip: tuple[str, ...], where: str) -> str:
        if len(parts) < len(strip) or any(a.casefold() != b.casefold() for a, b in zip(parts, strip, strict=False)):
            raise ExportError(f"{where}: the path {'/'.join(parts)!r} is not under --strip {'/'.join(strip)!r}")
        return self.prefix + "/".join(parts[len(strip) :])

    def folder_prefix(self, parts: tuple[str, ...], strip: tuple[str, ...], where: str) -> str:
        key = self.key_of(parts, strip, where)
        return key + "/" if len(parts) > len(strip) else self.prefix


@dataclass
class ImportResult:
    rules: list[dict[str, Any]]
    paths: list[PathReaders]
    findings: list[Finding]
    strip: tuple[str, ...]
    aux_prefixes: frozenset[str] = frozenset()
    folders: int = 0
    files: int = 0
    both: int = 0  # paths read as a file and as a folder
    covers: str = ""  # the key prefix of the export's root folder: every rule is under it
    root: tuple[str, ...] = ()
    bucket: str | None = None

    @property
    def restrictive(self) -> list[Finding]:
        return [f for f in self.findings if f.restrictive]

    def access_map(self, description: str = "") -> dict[str, Any]:
        document: dict[str, Any] = {"rules": self.rules}
        if description:
            document["description"] = description
        document["covers"] = [{"prefix": self.covers, **({"bucket": self.bucket} if self.bucket else {})}]
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


def _entries(readers: Readers) -> dict[str, Any]:
    n = readers.normal()
    out: dict[str, Any] = {}
    if n.allow:
        out["allow"] = principals_json(n.allow)
    if n.allow and n.deny:
        out["deny"] = principals_json(n.deny)
    return out


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A rule the map may need: what it gives keys right under its prefix (``own``) and deeper (``sub``)."""

    own: Readers
    sub: Readers
    description: str
    exact: bool = False  # a file's: the key itself only

    def gives(self, rest: str) -> Readers:
        return self.sub if "/" in rest else self.own


def _rule(prefix: str, candidate: _Candidate, bucket: str | None) -> dict[str, Any]:
    rule: dict[str, Any] = {"prefix": prefix}
    if bucket:
        rule["bucket"] = bucket
    rule["inherit"] = False
    if candidate.exact:
        rule["exact"] = True
    rule.update(_entries(candidate.own))
    if not candidate.exact and candidate.sub != candidate.own:
        rule["subfolders"] = _entries(candidate.sub)
    rule["description"] = candidate.description[:300]
    return rule


def normalize_prefix(prefix: str) -> str:
    value = prefix.replace("\\", "/").lstrip("/")
    return value if not value or value.endswith("/") else value + "/"


def import_acls(
    entries: Sequence[AclEntry], mapping: Mapping, keys: KeyRules, *, bucket: str | None = None
) -> ImportResult:
    """The access map rules, each exported path's readers, and the report."""
    return _Importer(entries, mapping, keys, bucket).run()


Atom = tuple[str, str, int, int, str]


def _atoms(ace: Ace, flags: int) -> list[Atom]:
    """An ACE by what it does: applies to the object itself, and/or passes on (with which flags). Windows
    writes one inherited ACE as two (the owner's copy of CREATOR OWNER, generic rights mapped) or one."""
    trustee = "*" if ace.trustee.upper() in _CREATORS else ace.trustee.upper()  # the owner's SID in the copy
    rights = _file_rights(ace.mask)
    out = []
    if not flags & INHERIT_ONLY:
        out.append(("applies", ace.kind, 0, rights, trustee))
    if flags & (OBJECT_INHERIT | CONTAINER_INHERIT):
        out.append(
            ("passes", ace.kind, flags & (OBJECT_INHERIT | CONTAINER_INHERIT | NO_PROPAGATE_INHERIT), rights, trustee)
        )
    return out


def _inherited(parent: Dacl, *, folder: bool) -> list[Atom]:
    """What a new child inherits from ``parent``'s ACEs ([MS-DTYP] 2.5.3.4.1), sorted."""
    out: list[Atom] = []
    for ace in parent.aces:
        if folder:
            if ace.container_inherit:
                keep = 0 if ace.no_propagate else ace.flags & (OBJECT_INHERIT | CONTAINER_INHERIT)
                out += _atoms(ace, keep)
            elif ace.object_inherit and not ace.no_propagate:
                out += _atoms(ace, OBJECT_INHERIT | INHERIT_ONLY)
        elif ace.object_inherit:
            out += _atoms(ace, 0)
    return sorted(out)


def _matches(found: list[Atom], derived: list[Atom]) -> bool:
    """The same atoms, a derived ``*`` (CREATOR OWNER's copy) standing for any one trustee."""
    if len(found) != len(derived):
        return False
    rest = list(found)
    for atom in sorted(derived, key=lambda a: a[4] == "*"):
        match = next((f for f in rest if f[:4] == atom[:4] and (atom[4] == "*" or f[4] == atom[4])), None)
        if match is None:
            return False
        rest.remove(match)
    return True


_FLAGS = OBJECT_INHERIT | CONTAINER_INHERIT | NO_PROPAGATE_INHERIT | INHERIT_ONLY


def leaf_kind(entry: AclEntry, parent: AclEntry | None) -> str:
    """FILE when the ACL is exactly what Windows gives a file in ``parent``; FOLDER when exactly what it gives
    a folder; BOTH otherwise (protected, no parent in the export, edited, or the two look alike)."""
    dacl = entry.dacl
    if parent is None or parent.dacl.null or dacl.null or dacl.protected:
        return BOTH
    as_file, as_folder = _inherited(parent.dacl, folder=False), _inherited(parent.dacl, folder=True)
    if as_file == as_folder:
        return BOTH
    found = sorted(atom for a in dacl.aces if a.inherited for atom in _atoms(a, a.flags & _FLAGS))
    explicit_flags = any(a.flags & (OBJECT_INHERIT | CONTAINER_INHERIT) for a in dacl.aces if not a.inherited)
    if _matches(found, as_file) and not explicit_flags:
        return FILE
    if _matches(found, as_folder):
        return FOLDER
    return BOTH


class _Importer:
    def __init__(self, entries: Sequence[AclEntry], mapping: Mapping, keys: KeyRules, bucket: str | None) -> None:
        self.mapping = mapping
        self.keys = keys
        self.bucket = bucket
        parsed = [(split_path(e.path), e) for e in entries]
        self.strip, self.root = keys.resolve([p for p, _ in parsed])
        self.by_parts: dict[tuple[str, ...], AclEntry] = {}
        for parts, entry in parsed:
            if parts in self.by_parts:
                raise ExportError(
                    f"{entry.where}: the path {entry.path!r} is listed twice (also {self.by_parts[parts].where})"
                )
            self.keys.key_of(parts, self.strip, entry.where)  # under --strip, or a clear error
            self.by_parts[parts] = entry
        self.findings: list[Finding] = []
        self.ignored: dict[str, int] = defaultdict(int)
        self.candidates: dict[str, _Candidate] = {}
        self.folder_values: dict[tuple[str, ...], _Candidate] = {}
        self.paths: list[PathReaders] = []
        self.aux: set[str] = set()
        self.pending_file_notes: dict[str, tuple[list[Note], str]] = {}
        self.file_levels: dict[str, Finding] = {}
        self.folder_notes: dict[tuple[str, ...], set[tuple[str, str]]] = {}

    def run(self) -> ImportResult:
        has_children = {parts[:-1] for parts in self.by_parts if parts}
        folders: list[tuple[str, ...]] = []  # parents before children
        files: list[tuple[tuple[str, ...], str]] = []
        counts = {FOLDER: 0, FILE: 0, BOTH: 0}
        missing = {
            parts[:n]
            for parts in self.by_parts
            for n in range(len(self.root), len(parts))
            if parts[:n] not in self.by_parts
        }
        for parts in sorted(set(self.by_parts) | missing | {self.root}, key=lambda p: (len(p), p)):
            entry = self.by_parts.get(parts)
            if entry is None or parts in has_children or parts == self.root:
                kind = FOLDER
            else:
                kind = leaf_kind(entry, self.by_parts.get(parts[:-1]))
            if entry is not None:
                counts[kind] += 1
            if kind in (FOLDER, BOTH):
                folders.append(parts)
                self._folder(parts, entry, certain=kind == FOLDER)
            if kind in (FILE, BOTH):
                files.append((parts, kind))
        for parts, kind in files:
            self._file(parts, self.by_parts[parts], kind)
        self._prune()
        for key, (notes, where) in self.pending_file_notes.items():
            if key in self.candidates:
                self._add(notes, key, where)
        self._summaries()
        if len(self.candidates) > MAX_RULES:
            raise ExportError(
                f"the imported map would have {len(self.candidates)} rules, more than the {MAX_RULES} a map may hold; "
                "import one share (or one part of it, with --strip) at a time"
            )
        return ImportResult(
            rules=[_rule(k, self.candidates[k], self.bucket) for k in sorted(self.candidates)],
            paths=self.paths,
            findings=self.findings,
            strip=self.strip,
            aux_prefixes=frozenset(self.aux),
            folders=counts[FOLDER],
            files=counts[FILE],
            both=counts[BOTH],
            covers=self._prefix(self.root),
            root=self.root,
            bucket=self.bucket,
        )

    def _prefix(self, parts: tuple[str, ...]) -> str:
        return self.keys.folder_prefix(parts, self.strip, "the export")

    def _add(self, notes: list[Note], key: str, where: str) -> None:
        for note in notes:
            if note.kind == IGNORED_ACCOUNTS:
                self.ignored[note.trustee] += 1
            else:
                self.findings.append(Finding(note.kind, key, note.trustee, note.detail, where))

    def _folder(self, parts: tuple[str, ...], entry: AclEntry | None, *, certain: bool) -> None:
        """Who may read a file created in this folder (``own``) and in a sub-folder created in it (``sub``)."""
        prefix = self._prefix(parts)
        if entry is None:
            where = ""
            value = _Candidate(Readers(), Readers(), f"{'/'.join(parts) or '(root)'}: not in the export")
            if parts != self.root:
                self.findings.append(
                    Finding(MISSING_FOLDER, prefix, "", "not in the export, its ACL unknown: closed", "")
                )
            self.aux.add(prefix)
        elif entry.dacl.null:
            where = entry.where
            value = _Candidate(Readers(), Readers(), f"from {entry.path} (no DACL)")
            detail = "no DACL: what is created in it gets its creator's default DACL, not the folder's: closed"
            self.findings.append(Finding(NULL_DACL, prefix, "", detail, where))
        else:
            where = entry.where
            own, notes = readers_of(
                reaching_new_files(entry.dacl.aces), self.mapping, labels=reaching_new_files(entry.labels)
            )
            sub, deeper = own, list[Note]()
            if any(a.no_propagate for a in (*entry.dacl.aces, *entry.labels)):  # else a sub-folder's files get the same
                sub, deeper = readers_of(
                    reaching_new_files(entry.dacl.aces, in_subfolder=True),
                    self.mapping,
                    labels=reaching_new_files(entry.labels, in_subfolder=True),
                )
            seen = {(n.kind, n.trustee) for n in notes}
            deeper = [n for n in deeper if (n.kind, n.trustee) not in seen]
            self._add(notes + deeper, prefix, where)
            self.folder_notes[parts] = seen | {(n.kind, n.trustee) for n in deeper}
            if certain or any(a.container_inherit for a in entry.dacl.aces):  # a file's ACL names no listing
                self._list_only(prefix, entry, own)
            value = _Candidate(own.normal(), sub.normal(), f"from {entry.path}")
        self.candidates[prefix] = value
        self.folder_values[parts] = value
        self.paths.append(PathReaders(prefix, FOLDER, value.own, where))
        if value.sub != value.own:
            self.paths.append(PathReaders(prefix + "*/", SUBFOLDERS, value.sub, where))

    def _list_only(self, prefix: str, entry: AclEntry, readers: Readers) -> None:
        # list-only: the file server lets them list the folder but not read its files. Every signed-in
        # person holds `everyone`; a folder closed for a deny docindex cannot attribute is not list-only
        # (the report names that deny), so this asks the file server's readers before the closing.
        nas = Readers(allow=readers.allow, deny=readers.deny)
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

    def _file(self, parts: tuple[str, ...], entry: AclEntry, kind: str) -> None:
        key = self.keys.key_of(parts, self.strip, entry.where)
        if len(parts) <= len(self.strip) or key.endswith("/") or not parts[-1]:
            raise ExportError(f"{entry.where}: {entry.path!r} looks like a file but becomes the key {key!r}")
        found, notes = readers_of(own_aces(entry.dacl), self.mapping, null=entry.dacl.null, labels=own_aces_of(entry))
        readers = found.normal()
        description = f"file-level ACL of {entry.path}" if kind == FILE else f"{entry.path} as a file"
        self.candidates[key] = _Candidate(readers, readers, description, exact=True)  # this key only
        self.paths.append(PathReaders(key, FILE, readers, entry.where))
        if kind == FILE:
            self._add(notes, key, entry.where)
            detail = "its own ACL gives other readers than its folder's: a rule for this key only"
            self.file_levels[key] = Finding(FILE_LEVEL, key, "", detail, entry.where)
        else:  # read both ways: its notes count only if the file reading needs a rule, and once
            told = self.folder_notes.get(parts, set())
            self.pending_file_notes[key] = ([n for n in notes if (n.kind, n.trustee) not in told], entry.where)

    def _prune(self) -> None:
        """Leave out each rule the map answers the same without: for every key it governs, the next shorter
        rule gives the same readers (the root rule stays: it closes the export's tree to what is above)."""
        root = self._prefix(self.root)
        for prefix in sorted(self.candidates, key=len, reverse=True):
            if prefix == root:
                continue
            mine = self.candidates[prefix]
            parent = next(
                (
                    prefix[:n]
                    for n in range(len(prefix) - 1, -1, -1)
                    if prefix[:n] in self.candidates and not self.candidates[prefix[:n]].exact
                ),
                None,
            )
            if parent is None:
                continue
            above = self.candidates[parent]
            if mine.own == above.gives(prefix[len(parent) :]) and (mine.exact or mine.sub == above.sub):
                del self.candidates[prefix]
        self.findings.extend(f for key, f in self.file_levels.items() if key in self.candidates)

    def _summaries(self) -> None:
        from_rules = [e for e in self.by_parts.values() if e.access_rules]
        if from_rules:
            detail = (
                f"{len(from_rules)} path(s) read from Get-Acl's Access rules, which show a conditional (callback) "
                "allow as a plain allow and leave object ACEs out: export Select-Object Path, Sddl for a map that "
                "is never wider"
            )
            self.findings.append(Finding(ACCESS_RULES, "", "", detail, from_rules[0].where))
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
        for trustee, principals, lines in self.mapping.universal_lines():
            # Reported whether or not the export names it: the line is the admin's and says more than it can
            if principals:
                what = (
                    f"its allows give {', '.join(sorted(principals))} only (as the line says); its denies deny "
                    "everyone (every person's logon holds it)"
                )
            else:
                what = "its allows give nothing (as the line says); its denies close the folder (ignored-trustee-deny)"
            self.findings.append(
                Finding(
                    UNIVERSAL_MAPPING,
                    "",
                    describe(trustee),
                    f"a universal trustee not mapped to everyone: {what}",
                    lines,
                )
            )
        for principal, trustees in sorted(self.mapping.shared_targets().items()):
            self.findings.append(
                Finding(
                    SHARED_GROUP, "", ", ".join(trustees), f"all map to {principal}: docindex treats them as one", ""
                )
            )


def own_aces_of(entry: AclEntry) -> list[Ace]:
    """The SACL's labels and access filters that apply to the entry itself (not inherit-only)."""
    return [a for a in entry.labels if not a.inherit_only]
