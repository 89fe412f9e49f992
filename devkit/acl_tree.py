"""File-server folder trees with NTFS ACLs, for the ACL import tests and the drift benchmark.

A tree is a list of ``Node``s (folders and files) with their *explicit* ACEs and protected flag;
``stored_dacls`` computes the DACL Windows stores on each after inheritance ([MS-DTYP] 2.5.3.4,
as NTFS does it: object-inherit ACEs reach files and, inherit-only, sub-folders; container-inherit
ones reach sub-folders; no-propagate stops after one level; a protected DACL takes nothing from
above; CREATOR OWNER becomes each object's owner). The writers produce the export formats
byte for byte as the tools write them (icacls /save: UTF-16 LE without BOM, CRLF), and
``can_read`` is Windows' access check for ``FILE_READ_DATA`` (first deciding ACE in order), the
oracle the tests hold the imported map to. None of this is docindex's import code.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from docindex.access.ntfs.sddl import (
    CONTAINER_INHERIT,
    INHERIT_ONLY,
    INHERITED,
    NO_PROPAGATE_INHERIT,
    OBJECT_INHERIT,
    Ace,
    Dacl,
    file_rights,
)

OI, CI, NP, IO, ID = OBJECT_INHERIT, CONTAINER_INHERIT, NO_PROPAGATE_INHERIT, INHERIT_ONLY, INHERITED
FULL = 0x1F01FF
MODIFY = 0x1301BF
READ_EXECUTE = 0x1200A9
READ = 0x120089
LIST_TRAVERSE = 0x100021  # list folder / read data, traverse, synchronize
WRITE = 0x100116
CREATOR_OWNER = "S-1-3-0"
_TOKENS = {
    FULL: "FA",
    READ: "FR",
    0x120116: "FW",
    0x1200A0: "FX",
    0x10000000: "GA",
    0x80000000: "GR",
    0xA0000000: "GXGR",
}


def allow(trustee: str, mask: int, flags: int = 0) -> Ace:
    return Ace(kind="allow", type="A", flags=flags, mask=mask, trustee=trustee)


def deny(trustee: str, mask: int, flags: int = 0) -> Ace:
    return Ace(kind="deny", type="D", flags=flags, mask=mask, trustee=trustee)


@dataclass
class Node:
    path: tuple[str, ...]  # components under the share's root; () is the root
    folder: bool = True
    explicit: list[Ace] = field(default_factory=list)
    protected: bool = False
    owner: str = "S-1-5-21-1-2-3-1000"

    @property
    def name(self) -> str:
        return "\\".join(self.path)


def _inherit(parent: Dacl, child: Node) -> list[Ace]:
    out: list[Ace] = []
    for ace in parent.aces:
        flags = ace.flags
        trustee = ace.trustee
        if not child.folder:
            if flags & OI:
                out.append(_copy(ace, ID, child.owner if trustee == CREATOR_OWNER else trustee))
            continue
        if flags & CI:
            if flags & NP:
                out.append(_copy(ace, ID, child.owner if trustee == CREATOR_OWNER else trustee))
            elif trustee == CREATOR_OWNER:
                out.append(_copy(ace, ID, child.owner))  # effective on the folder
                out.append(_copy(ace, (flags & (OI | CI)) | IO | ID, trustee))  # passed on
            else:
                out.append(_copy(ace, (flags & (OI | CI)) | ID, trustee))
        elif flags & OI and not flags & NP:
            out.append(_copy(ace, OI | IO | ID, trustee))
    return out


def _copy(ace: Ace, flags: int, trustee: str) -> Ace:
    return Ace(kind=ace.kind, type=ace.type, flags=flags, mask=ace.mask, trustee=trustee, conditional=ace.conditional)


def stored_dacls(nodes: Sequence[Node]) -> dict[tuple[str, ...], Dacl]:
    """The DACL stored on each node: its explicit ACEs, then what it inherits (unless protected)."""
    result: dict[tuple[str, ...], Dacl] = {}
    for node in sorted(nodes, key=lambda n: (len(n.path), n.path)):
        inherited: list[Ace] = []
        if not node.protected and node.path:
            parent = result.get(node.path[:-1])
            if parent is not None:
                inherited = _inherit(parent, node)
        explicit = [a for a in node.explicit if a.kind == "deny"] + [a for a in node.explicit if a.kind != "deny"]
        result[node.path] = Dacl(aces=tuple(explicit + inherited), protected=node.protected, auto_inherited=True)
    return result


def can_read(dacl: Dacl, sids: Iterable[str]) -> bool:
    """Windows' access check for FILE_READ_DATA on a file with this DACL, by a token holding ``sids``."""
    if dacl.null:
        return True
    held = set(sids)
    for ace in dacl.aces:
        if ace.inherit_only or ace.trustee not in held or not file_rights(ace.mask) & 0x1:
            continue
        if ace.kind == "deny":
            return False
        if ace.kind == "allow" and not ace.conditional:
            return True
    return False


def new_file_dacl(dacls: dict[tuple[str, ...], Dacl], folder: tuple[str, ...], owner: str) -> Dacl:
    """The DACL of a file created in ``folder`` now (one the export does not list)."""
    return Dacl(aces=tuple(_inherit(dacls[folder], Node((*folder, "new"), folder=False, owner=owner))))


# --------------------------------------------------------------------------- writers


def mask_text(mask: int) -> str:
    return _TOKENS.get(mask, f"0x{mask:x}")


def sddl_of(dacl: Dacl) -> str:
    flags = ("P" if dacl.protected else "") + ("AI" if dacl.auto_inherited else "")
    aces = "".join(f"({a.type};{a.flag_text()};{mask_text(a.mask)};;;{_alias(a.trustee)})" for a in dacl.aces)
    return f"D:{flags}{aces}"


_ALIASES = {
    "S-1-1-0": "WD",
    "S-1-5-11": "AU",
    "S-1-5-32-544": "BA",
    "S-1-5-32-545": "BU",
    "S-1-5-18": "SY",
    "S-1-3-0": "CO",
}


def _alias(sid: str) -> str:
    return _ALIASES.get(sid, sid)


def write_icacls(nodes: Sequence[Node], root: str = "share") -> bytes:
    """``icacls <root> /save acl.txt /t``: UTF-16 LE, no BOM, CRLF; paths relative to the parent of ``root``."""
    dacls = stored_dacls(nodes)
    lines: list[str] = []
    for node in sorted(nodes, key=lambda n: n.path):
        lines.append("\\".join((root, *node.path)))
        lines.append(sddl_of(dacls[node.path]) + "S:AINO_ACCESS_CONTROL")
    return ("\r\n".join(lines) + "\r\n").encode("utf-16-le")


def _full(root: str, node: Node) -> str:
    return "Microsoft.PowerShell.Core\\FileSystem::" + "\\".join((root, *node.path))


def write_getacl_json(nodes: Sequence[Node], root: str = "D:\\Shares", *, rules: bool = False) -> bytes:
    """``Get-ChildItem -Recurse | Get-Acl | Select Path, Sddl | ConvertTo-Json`` (or the Access rules)."""
    dacls = stored_dacls(nodes)
    items = []
    for node in sorted(nodes, key=lambda n: n.path):
        dacl = dacls[node.path]
        if rules:
            items.append(
                {
                    "Path": _full(root, node),
                    "AreAccessRulesProtected": dacl.protected,
                    "Access": [
                        {
                            "FileSystemRights": a.mask if a.mask < 0x80000000 else a.mask - 0x100000000,
                            "AccessControlType": 0 if a.kind == "allow" else 1,
                            "IdentityReference": {"Value": a.trustee},
                            "IsInherited": bool(a.flags & ID),
                            "InheritanceFlags": (1 if a.flags & CI else 0) | (2 if a.flags & OI else 0),
                            "PropagationFlags": (1 if a.flags & NP else 0) | (2 if a.flags & IO else 0),
                        }
                        for a in dacl.aces
                    ],
                }
            )
        else:
            items.append({"Path": _full(root, node), "Sddl": f"O:BAG:DU{sddl_of(dacl)}"})
    return b"\xff\xfe" + json.dumps(items, ensure_ascii=False, indent=4).encode("utf-16-le")  # Out-File: UTF-16


def write_getacl_csv(nodes: Sequence[Node], root: str = "D:\\Shares", encoding: str = "utf-8-sig") -> bytes:
    """``... | Get-Acl | Export-Csv acl.csv`` (Windows PowerShell 5.1: with its #TYPE line)."""
    dacls = stored_dacls(nodes)
    out = io.StringIO()
    out.write("#TYPE System.Security.AccessControl.DirectorySecurity\r\n")
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(["PSPath", "PSParentPath", "Path", "Owner", "Group", "Access", "Sddl", "AreAccessRulesProtected"])
    for node in sorted(nodes, key=lambda n: n.path):
        dacl = dacls[node.path]
        writer.writerow(
            [
                _full(root, node),
                _full(root, Node(node.path[:-1])),
                _full(root, node),
                "BUILTIN\\Administrators",
                "CONTOSO\\Domain Users",
                "System.Security.AccessControl.AuthorizationRuleCollection",
                f"O:BAG:DU{sddl_of(dacl)}",
                str(dacl.protected),
            ]
        )
    return out.getvalue().encode(encoding)


def write_smbcacls(nodes: Sequence[Node], names: dict[str, str] | None = None) -> bytes:
    """``for d in ...; do echo "$d"; smbcacls //nas/share "$d"; done`` (names where known, else SIDs)."""
    dacls = stored_dacls(nodes)
    names = names or {}
    out: list[str] = []
    flag_names = ((OI, "OI"), (CI, "CI"), (NP, "NP"), (IO, "IO"), (ID, "I"))
    for node in sorted(nodes, key=lambda n: n.path):
        dacl = dacls[node.path]
        out.append("/".join(node.path) if node.path else "/")
        out.append("REVISION:1")
        out.append("CONTROL:SR|" + ("PD|" if dacl.protected else "") + "DI|DP")
        out.append("OWNER:BUILTIN\\Administrators")
        out.append("GROUP:CONTOSO\\Domain Users")
        for a in dacl.aces:
            flags = "|".join(n for bit, n in flag_names if a.flags & bit) or "0x0"
            perm = {0x1200A9: "READ", 0x1301BF: "CHANGE", 0x1F01FF: "FULL"}.get(a.mask, f"0x{a.mask:08x}")
            kind = "ALLOWED" if a.kind == "allow" else "DENIED"
            out.append(f"ACL:{names.get(a.trustee, a.trustee)}:{kind}/{flags}/{perm}")
    return ("\n".join(out) + "\n").encode("utf-8")


# --------------------------------------------------------------------------- random trees


def random_tree(rng: random.Random, trustees: Sequence[str], *, folders: int = 12, files: int = 12) -> list[Node]:
    """A tree with every kind of ACE: allow and deny, every inheritance flag, protected folders,
    file-level ACEs, list-only and write-only rights, CREATOR OWNER, and names that are prefixes
    of each other (``a``, ``a.txt``, ``a.txt.d``)."""
    masks = [FULL, MODIFY, READ_EXECUTE, READ, LIST_TRAVERSE, WRITE, 0x10000000, 0x80000000, 0x20, 0x1]
    flag_sets = [OI | CI, OI | CI, OI | CI | NP, OI | CI | IO, OI, CI, OI | IO, CI | IO, 0, OI | NP]
    names = ["a", "a.txt", "a.txt.d", "b", "営業部", "人事 評価", "x"]

    def ace(folder: bool) -> Ace:
        trustee = rng.choice([*trustees, CREATOR_OWNER] if folder else list(trustees))
        flags = rng.choice(flag_sets) if folder else 0
        maker = deny if rng.random() < 0.3 else allow
        return maker(trustee, rng.choice(masks), flags)

    nodes = [Node((), explicit=[allow(t, READ_EXECUTE, OI | CI) for t in rng.sample(list(trustees), 2)])]
    folder_paths: list[tuple[str, ...]] = [()]
    for _ in range(folders):
        parent = rng.choice(folder_paths)
        path = (*parent, rng.choice(names))
        if any(n.path == path for n in nodes):
            continue
        nodes.append(Node(path, explicit=[ace(True) for _ in range(rng.randint(0, 3))], protected=rng.random() < 0.2))
        folder_paths.append(path)
    for i in range(files):
        parent = rng.choice(folder_paths)
        path = (*parent, rng.choice(names) + (".docx" if i % 3 == 0 else ""))
        if any(n.path == path for n in nodes):
            continue
        explicit = [ace(False) for _ in range(rng.randint(0, 2))] if rng.random() < 0.4 else []
        nodes.append(Node(path, folder=False, explicit=explicit, protected=bool(explicit) and rng.random() < 0.3))
    return nodes
