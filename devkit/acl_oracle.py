"""Windows' own answer for the ACL property test: an evaluator written from [MS-DTYP] alone.

Independent of docindex's import code (it imports nothing from ``docindex``): its own ACE model,
its own inheritance ([MS-DTYP] 2.5.3.4, as NTFS applies it when a file or folder is created) and
its own access check for ``FILE_READ_DATA`` ([MS-DTYP] 2.5.3.2, with the mandatory integrity check
that precedes it), plus a generator of hostile trees and writers of the export formats
(``icacls /save``, ``Get-Acl`` JSON and CSV with their ``Sddl``, ``smbcacls`` listings).

Where the specification leaves the outcome open, the evaluator takes the answer that lets fewer
people in, so the property "the map never allows what Windows denies" is checked against the
strictest reading: an object ACE carrying an object type GUID never grants on a file and always
denies; a callback object allow never grants (observed: Windows ignores them); a conditional ACE's
condition is TRUE, FALSE or UNKNOWN per user (deterministic), an allow granting only on TRUE and a
deny denying on TRUE or UNKNOWN ([MS-DTYP] 2.4.4.17.3).

The mapping file is generated too (``random_mapping``): besides the groups, lines an admin writes that
say more than the file server can — a universal trustee (every user's token holds it: Everyone,
Authenticated Users, NETWORK, BUILTIN\\Users, Domain Users) mapped to the identity provider's
``all-staff`` group (which leaves two users out) or to ``-``, any trustee mapped to ``-`` — each in the
forms the file accepts (alias, SID, name). Only lines true for allows are drawn (everyone the line's
group names holds the trustee): a line then cannot widen an allow, and any wider decision is a deny the
import lost.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

OI, CI, NP, IO, ID = 0x1, 0x2, 0x4, 0x8, 0x10
FILE_READ_DATA = 0x1
GENERIC_READ, GENERIC_WRITE, GENERIC_EXECUTE, GENERIC_ALL = 0x80000000, 0x40000000, 0x20000000, 0x10000000
NO_READ_UP = 0x2
WD, AU, NU, SY, BA, BU, CO, CG, OW, AS = (
    "S-1-1-0",
    "S-1-5-11",
    "S-1-5-2",
    "S-1-5-18",
    "S-1-5-32-544",
    "S-1-5-32-545",
    "S-1-3-0",
    "S-1-3-1",
    "S-1-3-4",
    "S-1-18-1",
)
LEVELS = {"LW": 0x1000, "ME": 0x2000, "MP": 0x2100, "HI": 0x3000, "SI": 0x4000}
DOMAIN = "S-1-5-21-1004336348-1177238915-682003330"
SALES, HR, AUDIT, STRANGER, DU = (f"{DOMAIN}-{rid}" for rid in (1105, 1106, 1107, 1199, 513))
# Windows writes the machine's own domain's Domain Users as DU in SDDL
ALIASES = {WD: "WD", AU: "AU", NU: "NU", SY: "SY", BA: "BA", BU: "BU", DU: "DU", CO: "CO", CG: "CG", OW: "OW", AS: "AS"}
UNIVERSAL = (WD, AU, NU, BU, DU)  # in every user's token: BUILTIN\\Users holds Authenticated Users, DU is the primary
STAFF = "group:all-staff"  # the identity provider's group of employees: the stranger and the plain user are not in it
MAPPING = f"nas,docindex\n{SALES},営業部\n{HR},人事部\n{AUDIT},監査\n".encode()
GROUPS = {SALES: "group:営業部", HR: "group:人事部", AUDIT: "group:監査"}
GUID = "bf967aba-0de6-11d0-a285-00aa003049e2"


@dataclass(frozen=True)
class Ace:
    type: str  # A, D, OA, OD, XA, XD, ZA (the DACL's); ML, TL, FL, AU (the SACL's)
    flags: int
    mask: int
    sid: str
    guid: bool = False  # an object ACE with an object type GUID
    condition: str = ""  # a callback ACE's condition


@dataclass
class Node:
    path: tuple[str, ...]
    folder: bool
    owner: str
    explicit: list[Ace] = field(default_factory=list)
    protected: bool = False
    null: bool = False  # D:NO_ACCESS_CONTROL
    labels: list[Ace] = field(default_factory=list)  # explicit SACL ACEs (ML, TL, FL, AU)


@dataclass(frozen=True)
class Sd:
    """A stored security descriptor: DACL (None: a NULL DACL) and SACL, and the owner."""

    dacl: tuple[Ace, ...] | None
    sacl: tuple[Ace, ...]
    owner: str
    protected: bool = False


@dataclass(frozen=True)
class User:
    name: str
    sids: frozenset[str]
    integrity: int
    principals: frozenset[str]  # what docindex's token holds: everyone and the mapped groups


def _user(
    name: str, rid: int, groups: tuple[str, ...], *, admin: bool = False, kerberos: bool = True, staff: bool = True
) -> User:
    sid = f"{DOMAIN}-{rid}"
    sids = {sid, *UNIVERSAL, *groups} | ({BA} if admin else set()) | ({AS} if kerberos else set())
    return User(
        name,
        frozenset(sids),
        LEVELS["HI"] if admin else LEVELS["ME"],
        frozenset({"everyone", *(GROUPS[g] for g in groups if g in GROUPS)} | ({STAFF} if staff else set())),
    )


USERS = (
    _user("sales", 2001, (SALES,)),
    _user("hr", 2002, (HR,)),
    _user("audit-sales", 2003, (AUDIT, SALES)),
    _user("sales-admin", 2004, (SALES,), admin=True),
    _user("stranger", 2005, (STRANGER,), kerberos=False, staff=False),
    _user("plain", 2006, (), staff=False),
)
OWNERS = tuple(sorted(next(s for s in u.sids if s.startswith(DOMAIN + "-2")) for u in USERS))


def _generic(mask: int) -> int:
    rights = mask & 0x0FFFFFFF
    if mask & (GENERIC_READ | GENERIC_ALL):
        rights |= 0x120089
    if mask & GENERIC_WRITE:
        rights |= 0x120116
    if mask & GENERIC_EXECUTE:
        rights |= 0x1200A0
    return rights


def _inherit(aces: tuple[Ace, ...], folder: bool, owner: str) -> list[Ace]:
    """What a new child inherits from its parent's ACEs: [MS-DTYP] 2.5.3.4.2 (ContainsInheritableACEs and
    the flags each copy keeps), with CREATOR OWNER / GROUP replaced by the creator in the copy that applies."""
    out: list[Ace] = []
    for ace in aces:
        creator = ace.sid in (CO, CG)
        if folder:
            if ace.flags & CI:
                if ace.flags & NP:
                    out.append(replace(ace, flags=ID, sid=owner if creator else ace.sid))
                elif creator:
                    out.append(replace(ace, flags=ID, sid=owner))
                    out.append(replace(ace, flags=(ace.flags & (OI | CI)) | IO | ID))
                else:
                    out.append(replace(ace, flags=(ace.flags & (OI | CI)) | ID))
            elif ace.flags & OI and not ace.flags & NP:
                out.append(replace(ace, flags=OI | IO | ID))
        elif ace.flags & OI:
            out.append(replace(ace, flags=ID, sid=owner if creator else ace.sid))
    return out


def create(parent: Sd | None, node: Node) -> Sd:
    """The descriptor NTFS stores on ``node`` created in ``parent``: explicit ACEs first, then the inherited
    ones (none when protected); no inheritable ACE and no explicit DACL: the creator's default DACL."""
    sacl = tuple(node.labels) + (
        tuple(_inherit(parent.sacl, node.folder, node.owner)) if parent and not node.protected else ()
    )
    if node.null:
        return Sd(None, sacl, node.owner, node.protected)
    inherited = (
        _inherit(parent.dacl, node.folder, node.owner)
        if parent is not None and parent.dacl is not None and not node.protected
        else []
    )
    if not node.explicit and not inherited and not node.protected:
        return Sd((Ace("A", 0, GENERIC_ALL, node.owner), Ace("A", 0, GENERIC_ALL, SY)), sacl, node.owner)
    return Sd(tuple(node.explicit) + tuple(inherited), sacl, node.owner, node.protected)


def _condition(user: User, ace: Ace) -> str:
    digest = hashlib.sha256(f"{user.name}|{ace.condition}".encode()).digest()[0] % 3
    return ("TRUE", "FALSE", "UNKNOWN")[digest]


def can_read(sd: Sd, user: User) -> bool:
    """[MS-DTYP] 2.5.3.2 for FILE_READ_DATA: the mandatory integrity check, then the DACL in order. A process
    trust label or an access filter (winnt.h's types 0x14 and 0x15, which [MS-DTYP] does not define) that applies
    denies: a network logon has no trust level, the filter's condition is not evaluated, and what their masks
    leave is not published (the strictest reading)."""
    if any(a.type in ("TL", "FL") and not a.flags & IO for a in sd.sacl):
        return False
    for label in sd.sacl:
        if (
            label.type == "ML"
            and not label.flags & IO
            and label.mask & NO_READ_UP
            and user.integrity < LEVELS.get(label.sid, 0x4000)
        ):
            return False
    if sd.dacl is None:
        return True
    for ace in sd.dacl:
        if ace.flags & IO or not _generic(ace.mask) & FILE_READ_DATA:
            continue
        held = ace.sid in user.sids or (ace.sid == OW and sd.owner in user.sids)
        if not held:
            continue
        if ace.type in ("D", "OD") or (ace.type == "XD" and _condition(user, ace) != "FALSE"):
            return False
        if (
            ace.type == "A"
            or (ace.type == "OA" and not ace.guid)
            or (ace.type == "XA" and _condition(user, ace) == "TRUE")
        ):
            return True
    return False


MAPPABLE = frozenset({WD, AU, NU, SALES, HR, AUDIT})


def why_granted(sd: Sd, user: User, lines: dict[str, str] | None = None) -> str:  # noqa: PLR0911 - one reason per return
    """Why Windows lets ``user`` read (for the narrower side's tally): what the map cannot say, or 'other'.
    ``lines``: the generated mapping's extra lines, trustee SID -> what it is mapped to."""
    lines = lines or {}
    labelled = any(
        a.type == "ML" and not a.flags & IO and a.mask & NO_READ_UP and LEVELS.get(a.sid, 0x4000) > 0x2000
        for a in sd.sacl
    )
    if labelled:
        return "a no-read-up label an administrator's logon passes"
    if sd.dacl is None:
        return "a NULL DACL"
    for ace in sd.dacl:
        if ace.flags & IO or not _generic(ace.mask) & FILE_READ_DATA:
            continue
        if ace.sid in user.sids or (ace.sid == OW and sd.owner in user.sids):
            if ace.type in ("XA", "OA", "ZA"):
                return "a conditional or object allow"
            if (
                ace.sid in lines
                and lines[ace.sid] != "everyone"
                and not (lines[ace.sid] == STAFF and STAFF in user.principals)
            ):
                return "an allow for a trustee a mapping line narrows (to '-', or a universal one to a group)"
            if ace.sid not in MAPPABLE:
                return "an allow for an identity the map cannot name (owner, BA, OW, AS, an unmapped SID)"
            denied = [
                a
                for a in sd.dacl
                if a.type in ("D", "OD", "XD")
                and not a.flags & IO
                and _generic(a.mask) & FILE_READ_DATA
                and a.sid not in MAPPABLE
            ]
            if denied:
                return "a deny for an identity the map cannot name (closes)"
            skipped = [a for a in sd.dacl if a.type == "XD" and a.sid in user.sids and _condition(user, a) == "FALSE"]
            if skipped:
                return "a conditional deny whose condition is false (the map denies)"
            later = [a for a in sd.dacl[sd.dacl.index(ace) + 1 :] if a.type in ("D", "OD", "XD") and a.sid in user.sids]
            if later:
                return "an allow before a deny (the deny wins in the map)"
            return "other"
    return "other"


# --------------------------------------------------------------------------- trees


NAMES = (
    "a",
    "a.txt",
    "a.txt.d",
    "人事部",
    "人事部\u3000",
    "報告 ",
    " 報告",
    "報告\u00a0",
    "報告.",
    "[旧]営業部",
    "{下書き}",
    "営業部(旧)",
    "b b",
)
TRUSTEES = (SALES, HR, AUDIT, STRANGER, WD, AU, NU, BU, DU, BA, OW, AS, CO, SY)
MASKS = (0x1F01FF, 0x1301BF, 0x1200A9, 0x120089, 0x1, 0x100021, 0x100116, GENERIC_READ, GENERIC_ALL, 0x20, 0x80)
FLAGS = (OI | CI, OI | CI, OI | CI | NP, OI | CI | IO, OI, CI, OI | IO, CI | IO, 0, OI | NP, CI | NP, OI | CI | NP | IO)
TYPES = ("A",) * 6 + ("D",) * 3 + ("XA", "XD", "OA", "OD", "ZA")


def _ace(rng: random.Random, *, folder: bool, hostile: bool, types: tuple[str, ...] = TYPES) -> Ace:
    kind = rng.choice(types)
    flags = rng.choice(FLAGS) if folder or hostile else 0
    guid = kind in ("OA", "OD", "ZA") and rng.random() < 0.8
    condition = f'(@User.department == "d{rng.randint(0, 9)}")' if kind in ("XA", "XD", "ZA") else ""
    return Ace(kind, flags, rng.choice(MASKS), rng.choice(TRUSTEES), guid, condition)


TRUST_LEVEL = "S-1-19-512-8192"  # a process trust label's SID: PPL, Windows


def _label(rng: random.Random, folder: bool) -> Ace:
    """A SACL ACE that restricts: a mandatory label mostly, else a process trust label or an access filter."""
    flags = rng.choice((OI | CI, OI, 0, OI | CI | NP, OI | CI | IO)) if folder else 0
    kind = rng.choice(("ML",) * 4 + ("TL", "FL"))
    if kind == "TL":
        return Ace("TL", flags, rng.choice((0x1200A9, 0x20000)), TRUST_LEVEL)
    if kind == "FL":
        return Ace("FL", flags, rng.choice((0x1200A9, 0x20000)), WD, condition="(Member_of {SID(BA)})")
    return Ace("ML", flags, rng.choice((1, 2, 3)), rng.choice(tuple(LEVELS)))


def random_tree(
    rng: random.Random, *, labels: bool = True, size: int = 14, types: tuple[str, ...] = TYPES
) -> list[Node]:
    """A share's tree: every ACE type and flag, the well-known SIDs, protected and NULL DACLs, mandatory
    labels, files with inheritance flags (an edited ``icacls /restore``), names that differ by a trailing
    space, U+3000, NBSP or dot, that are prefixes of each other, and files and folders of one name. ``types``:
    the DACL's ACE types to draw from (those the export format can carry)."""
    owner = rng.choice(OWNERS)
    root = Node((), True, owner, [_ace(rng, folder=True, hostile=False, types=types) for _ in range(rng.randint(1, 3))])
    root.explicit.append(Ace("A", OI | CI, 0x1200A9, rng.choice((WD, SALES, HR))))
    root.protected = True
    nodes = [root]
    folders = [root]
    for _ in range(size):
        parent = rng.choice(folders)
        folder = rng.random() < 0.5
        name = rng.choice(NAMES) + ("" if folder or rng.random() < 0.5 else ".docx")
        path = (*parent.path, name)
        if any(n.path == path for n in nodes):
            continue
        hostile = not folder and rng.random() < 0.15
        count = rng.choice((0, 0, 1, 2, 3)) if folder else rng.choice((0, 0, 0, 1, 2))
        aces = [_ace(rng, folder=folder, hostile=hostile, types=types) for _ in range(count)]
        node = Node(path, folder, rng.choice(OWNERS), aces)
        node.protected = bool(node.explicit) and rng.random() < 0.25
        node.null = rng.random() < 0.04
        if labels and rng.random() < 0.1:
            node.labels.append(_label(rng, folder))
        nodes.append(node)
        if folder:
            folders.append(node)
    return nodes


def stored(nodes: list[Node]) -> dict[tuple[str, ...], Sd]:
    out: dict[tuple[str, ...], Sd] = {}
    for node in sorted(nodes, key=lambda n: (len(n.path), n.path)):
        out[node.path] = create(out.get(node.path[:-1]) if node.path else None, node)
    return out


# --------------------------------------------------------------------------- writers


def _flags(flags: int) -> str:
    return "".join(t for bit, t in ((OI, "OI"), (CI, "CI"), (NP, "NP"), (IO, "IO"), (ID, "ID")) if flags & bit)


def _ace_sddl(ace: Ace) -> str:
    guid = GUID if ace.guid else ""
    tail = f";{ace.condition}" if ace.condition else ""
    return f"({ace.type};{_flags(ace.flags)};0x{ace.mask:x};{guid};;{ALIASES.get(ace.sid, ace.sid)}{tail})"


def sddl(sd: Sd, *, owner: bool = False, sacl: bool = True) -> str:
    head = f"O:{ALIASES.get(sd.owner, sd.owner)}G:DU" if owner else ""
    if sd.dacl is None:
        dacl = "D:NO_ACCESS_CONTROL"
    else:
        dacl = "D:" + ("P" if sd.protected else "") + "AI" + "".join(_ace_sddl(a) for a in sd.dacl)
    labels = [a for a in sd.sacl if a.type in ("ML", "TL", "FL")]
    tail = ("S:AI" + "".join(_ace_sddl(a) for a in labels)) if labels else "S:AINO_ACCESS_CONTROL"
    return head + dacl + (tail if sacl else "")


def write_icacls(nodes: list[Node], sds: dict[tuple[str, ...], Sd], entries: list[Node]) -> bytes:
    """``icacls share /save acl.txt /t``: UTF-16 LE without BOM, CRLF, the label in its S: part."""
    lines = []
    for node in entries:
        lines += ["\\".join(("share", *node.path)), sddl(sds[node.path])]
    return ("\r\n".join(lines) + "\r\n").encode("utf-16-le")


def _ps_path(node: Node) -> str:
    return "Microsoft.PowerShell.Core\\FileSystem::" + "\\".join(("D:\\Shares\\share", *node.path))


def write_getacl_json(nodes: list[Node], sds: dict[tuple[str, ...], Sd], entries: list[Node]) -> bytes:
    """``Get-Acl -Audit | Select Path, Sddl | ConvertTo-Json`` (Out-File: UTF-16 with BOM)."""
    items = [{"Path": _ps_path(n), "Sddl": sddl(sds[n.path], owner=True)} for n in entries]
    return b"\xff\xfe" + json.dumps(items, ensure_ascii=False).encode("utf-16-le")


def write_getacl_csv(nodes: list[Node], sds: dict[tuple[str, ...], Sd], entries: list[Node]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(["Path", "Owner", "Sddl"])
    for n in entries:
        writer.writerow([_ps_path(n), "BUILTIN\\Administrators", sddl(sds[n.path], owner=True)])
    return out.getvalue().encode("utf-8-sig")


_SMB_TYPES = {"A": "ALLOWED", "D": "DENIED", "OA": "5", "OD": "6", "XA": "9", "XD": "10", "ZA": "11"}


def write_smbcacls(nodes: list[Node], sds: dict[tuple[str, ...], Sd], entries: list[Node]) -> bytes:
    """``echo "$d"; smbcacls //nas/share "$d" --numeric`` per path: no SACL, no condition, no GUID printed."""
    out: list[str] = []
    for node in entries:
        sd = sds[node.path]
        out.append("/".join(node.path) if node.path else "/")
        out += [
            "REVISION:1",
            "CONTROL:SR|" + ("PD|" if sd.protected else "") + ("DI|DP" if sd.dacl is not None else "DI"),
        ]
        out += [f"OWNER:{sd.owner}", f"GROUP:{DOMAIN}-513"]
        for a in sd.dacl or ():
            flags = "|".join(
                t for bit, t in ((OI, "OI"), (CI, "CI"), (NP, "NP"), (IO, "IO"), (ID, "I")) if a.flags & bit
            )
            out.append(f"ACL:{a.sid}:{_SMB_TYPES[a.type]}/{flags or '0x0'}/0x{a.mask:08x}")
    return ("\n".join(out) + "\n").encode("utf-8")


# What Get-Acl's Access rules name a SID by (an NTAccount; a SID no account has stays a SID string)
NAMES_OF = {
    WD: "Everyone",
    AU: "NT AUTHORITY\\Authenticated Users",
    NU: "NT AUTHORITY\\NETWORK",
    BU: "BUILTIN\\Users",
    DU: "CONTOSO\\Domain Users",
    SY: "NT AUTHORITY\\SYSTEM",
    BA: "BUILTIN\\Administrators",
    CO: "CREATOR OWNER",
    CG: "CREATOR GROUP",
    OW: "OWNER RIGHTS",
    AS: "Authentication authority asserted identity",
    SALES: "CONTOSO\\営業部",
    HR: "CONTOSO\\人事部",
    AUDIT: "CONTOSO\\監査",
    **{owner: f"CONTOSO\\u{owner.rsplit('-', 1)[1]}" for owner in OWNERS},
}
MAPPING_BY_NAME = "nas,docindex\nCONTOSO\\営業部,営業部\nCONTOSO\\人事部,人事部\nCONTOSO\\監査,監査\n".encode()
RULE_TYPES = ("A",) * 6 + ("D",) * 3  # the only ACEs Access rules show as what they are


def _dotnet_rules(sd: Sd, folder: bool) -> list[Ace]:
    """The DACL as .NET's FileSystemSecurity gives it to Get-Acl's Access (CommonAcl.InspectAce, GetRules): a
    NULL DACL as one Everyone allow of every bit (inheritable on a folder); ACEs with no rights dropped; on a
    file, inherit-only ACEs dropped and inheritance flags cleared; on a folder, IO and NP without OI/CI
    meaningless. (A canonical ACL is also sorted and merged, which keeps what it means.)"""
    if sd.dacl is None:
        return [Ace("A", (OI | CI) if folder else 0, 0xFFFFFFFF, WD)]
    out = []
    for ace in sd.dacl:
        flags = ace.flags
        if not ace.mask:
            continue
        if not folder:
            if flags & IO:
                continue
            flags &= ~(OI | CI | NP | IO)
        elif not flags & (OI | CI):
            if flags & IO:
                continue
            flags &= ~NP
        out.append(replace(ace, flags=flags))
    return out


def write_getacl_rules(nodes: list[Node], sds: dict[tuple[str, ...], Sd], entries: list[Node]) -> bytes:
    """``Get-Acl | Select-Object Path, Access, AreAccessRulesProtected | ConvertTo-Json -Depth 4`` (no Sddl): enums
    as numbers, FileSystemRights an Int32 (GENERIC_READ negative), IdentityReference an NTAccount's Value."""

    def rule(ace: Ace) -> dict[str, object]:
        return {
            "FileSystemRights": ace.mask - (1 << 32) if ace.mask & 0x80000000 else ace.mask,
            "AccessControlType": 0 if ace.type == "A" else 1,
            "IdentityReference": {"Value": NAMES_OF.get(ace.sid, ace.sid)},
            "IsInherited": bool(ace.flags & ID),
            "InheritanceFlags": (1 if ace.flags & CI else 0) | (2 if ace.flags & OI else 0),
            "PropagationFlags": (1 if ace.flags & NP else 0) | (2 if ace.flags & IO else 0),
        }

    items = [
        {
            "Path": _ps_path(n),
            "Access": [rule(a) for a in _dotnet_rules(sds[n.path], n.folder)],
            "AreAccessRulesProtected": sds[n.path].protected,
        }
        for n in entries
    ]
    return b"\xff\xfe" + json.dumps(items, ensure_ascii=False).encode("utf-16-le")


# How a mapping line may name each trustee the generator writes lines for (any form the file accepts)
LINE_FORMS: dict[str, tuple[str, ...]] = {
    WD: ("Everyone", "WD", WD),
    AU: ("NT AUTHORITY\\Authenticated Users", "AU", AU),
    NU: ("NT AUTHORITY\\NETWORK", "NU", NU),
    BU: ("BUILTIN\\Users", "BU", BU),
    DU: ("CONTOSO\\Domain Users", "DU", DU),
    STRANGER: (STRANGER,),
    BA: ("BUILTIN\\Administrators", "BA", BA),
    SY: ("NT AUTHORITY\\SYSTEM", "SY"),
}


@dataclass(frozen=True)
class MappingFile:
    """A generated mapping file: its bytes, the domain SID given with it, and its extra lines by trustee SID."""

    data: bytes
    domain_sid: str | None
    lines: dict[str, str]  # trustee SID -> what the line maps it to ('-', STAFF, 'everyone')


def random_mapping(rng: random.Random, base: bytes) -> MappingFile:
    """``base`` (the groups), and in half the trees one to three lines that say more than the file server can. Only
    lines true for allows: '-' for anyone, ``all-staff`` or ``everyone`` for a universal trustee (every user holds
    it). ``--domain-sid`` in half, so that ``DU`` and the SID of Domain Users are one trustee."""
    lines: dict[str, str] = {}
    text = base.decode()
    if rng.random() < 0.5:
        for sid in rng.sample(sorted(LINE_FORMS), rng.randint(1, 3)):
            target = rng.choice(("-", "all-staff", "everyone")) if sid in UNIVERSAL else "-"
            lines[sid] = STAFF if target == "all-staff" else target
            text += f"{rng.choice(LINE_FORMS[sid])},{target}\n"
    return MappingFile(text.encode(), DOMAIN if rng.random() < 0.5 else None, lines)


@dataclass(frozen=True)
class Format:
    """An export format as the property run writes it."""

    writer: Callable[[list[Node], dict[tuple[str, ...], Sd], list[Node]], bytes]
    base: str  # where the tree's root lands as a key
    sacl: bool  # carries the SACL (labels are generated)
    types: tuple[str, ...] = TYPES  # the DACL ACE types it carries as what they are
    mapping: bytes = MAPPING


FORMATS = {
    "icacls": Format(write_icacls, "nas/share/", True),
    "getacl-json": Format(write_getacl_json, "nas/share/", True),
    "getacl-csv": Format(write_getacl_csv, "nas/share/", True),
    "smbcacls": Format(write_smbcacls, "nas/", False),
    # Access rules show a callback ACE as a plain one and leave object ACEs out: only allow and deny are drawn
    "getacl-rules": Format(write_getacl_rules, "nas/share/", False, RULE_TYPES, MAPPING_BY_NAME),
}


def probes(nodes: list[Node], sds: dict[tuple[str, ...], Sd], rng: random.Random) -> list[tuple[str, str, Sd]]:
    """(kind, path under the tree's root, the descriptor Windows gives it) for every file of the tree (in the
    export or not), a file and a sub-folder's file created later in every folder, and names that start
    with another's."""
    taken = {n.path for n in nodes}
    out: list[tuple[str, str, Sd]] = []
    for node in nodes:
        rel = "/".join(node.path)
        if node.folder:
            creator = rng.choice(OWNERS)
            new_file = create(sds[node.path], Node((*node.path, "新規.txt"), False, creator))
            sub = create(sds[node.path], Node((*node.path, "新しいフォルダー"), True, creator))
            deep = create(sub, Node((*node.path, "新しいフォルダー", "新規.txt"), False, creator))
            base = rel + "/" if rel else ""
            out += [
                ("new file", base + "新規.txt", new_file),
                ("new sub-folder's file", base + "新しいフォルダー/新規.txt", deep),
            ]
            if (*node.path, "a") not in taken:
                out.append(("new file named like others", base + "a", new_file))
        else:
            out.append(("file", rel, sds[node.path]))
            twin = (*node.path[:-1], node.path[-1] + ".bak")
            if twin not in taken:
                out.append(
                    (
                        "new file starting with a file's name",
                        rel + ".bak",
                        create(sds[node.path[:-1]], Node(twin, False, rng.choice(OWNERS))),
                    )
                )
    return out


OUTSIDE = ("x.txt", "other/人事部/x.txt", "nas/share2/x.txt", "nas/shar/x.txt", "na/x.txt")


@dataclass
class Tally:
    """What the property run checked: trees, (key, user) decisions, and where the map differs from Windows."""

    trees: int = 0
    keys: int = 0
    decisions: int = 0
    windows_allows: int = 0
    wider: list[str] = field(default_factory=list)  # the map allows, Windows denies: must stay empty
    # a file absent from a folders-only export with an ACL of its own: no export shows it (diff on a schedule)
    unseen: int = 0
    unseen_wider: int = 0
    mapping_lines: dict[str, int] = field(default_factory=dict)  # the generated lines, by what they map to
    narrower: dict[str, int] = field(default_factory=dict)  # Windows allows, the map does not: by probe kind
    narrower_why: dict[str, int] = field(default_factory=dict)  # the same, by why Windows allows
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, other: Tally) -> None:
        self.trees += other.trees
        self.keys += other.keys
        self.decisions += other.decisions
        self.windows_allows += other.windows_allows
        self.wider += other.wider
        self.unseen += other.unseen
        self.unseen_wider += other.unseen_wider
        for k, v in other.mapping_lines.items():
            self.mapping_lines[k] = self.mapping_lines.get(k, 0) + v
        for k, v in other.narrower.items():
            self.narrower[k] = self.narrower.get(k, 0) + v
        for why, count in other.narrower_why.items():
            self.narrower_why[why] = self.narrower_why.get(why, 0) + count
        for why, lines in other.examples.items():
            self.examples.setdefault(why, []).extend(lines[: max(0, 5 - len(self.examples.get(why, [])))])


def check_tree(seed: int, fmt: str, *, folders_only: bool = False) -> Tally:
    """One generated tree, exported in ``fmt``, imported with the defaults, held against Windows per user and key."""
    from docindex.access.ntfs.exports import read_export
    from docindex.access.ntfs.importer import KeyRules, import_acls
    from docindex.access.ntfs.principals import read_mapping
    from docindex.access.policy import parse_access_map

    spec = FORMATS[fmt]
    base = spec.base
    rng = random.Random(f"{seed}-{fmt}-{folders_only}")  # noqa: S311  # seeded trees, not crypto  # nosec B311
    nodes = random_tree(rng, labels=spec.sacl, types=spec.types)
    sds = stored(nodes)
    entries = sorted((n for n in nodes if n.folder or not folders_only), key=lambda n: n.path)
    data = spec.writer(nodes, sds, entries)
    parsed, _ = read_export(data, name=f"seed {seed} {fmt}")
    # its own generator: the trees stay what they are whatever the mapping draws
    mapping = random_mapping(random.Random(f"{seed}-{fmt}-{folders_only}-mapping"), spec.mapping)  # noqa: S311  # nosec B311
    names = read_mapping(mapping.data, name="groups.csv", domain_sid=mapping.domain_sid)
    result = import_acls(parsed, names, KeyRules(prefix="nas/"))
    access_map = parse_access_map(json.dumps(result.access_map(), ensure_ascii=False), admin_group="docindex-admins")
    tally = Tally(trees=1)
    for sid, target in mapping.lines.items():
        what = f"{'universal' if sid in UNIVERSAL else 'other'} -> {target.removeprefix('group:')}"
        tally.mapping_lines[what] = tally.mapping_lines.get(what, 0) + 1
    own_acl = {
        "/".join(n.path)
        for n in nodes
        if not n.folder and folders_only and (n.explicit or n.protected or n.null or n.labels)
    }
    checks: list[tuple[str, str, Sd | None]] = [
        ("file not in the export with an ACL of its own" if kind == "file" and rel in own_acl else kind, base + rel, sd)
        for kind, rel, sd in probes(nodes, sds, rng)
    ]
    checks += [("outside the export's tree", key, None) for key in OUTSIDE if not key.startswith(base)]
    for kind, key, sd in checks:
        tally.keys += 1
        grant = access_map.grant("docs", key)
        for user in USERS:
            windows = sd is not None and can_read(sd, user)
            mine = grant.permits(user.principals)
            if kind.startswith("file not in the export"):
                tally.unseen += 1
                tally.unseen_wider += mine and not windows
                continue
            tally.decisions += 1
            tally.windows_allows += windows
            if mine and not windows:
                tally.wider.append(
                    f"seed {seed} {fmt}{' folders-only' if folders_only else ''}: {user.name} {key!r} ({kind})"
                )
            elif windows and not mine and sd is not None:
                tally.narrower[kind] = tally.narrower.get(kind, 0) + 1
                why = why_granted(sd, user, mapping.lines)
                tally.narrower_why[why] = tally.narrower_why.get(why, 0) + 1
                if len(tally.examples.get(why, [])) < 5:
                    tally.examples.setdefault(why, []).append(f"seed {seed} {fmt}: {user.name} {key!r} ({kind})")
    return tally


def run(seeds: range, formats: tuple[str, ...] = tuple(FORMATS)) -> Tally:
    """Every seed in every format, with and without the files in the export."""
    total = Tally()
    for seed in seeds:
        for fmt in formats:
            total.add(check_tree(seed, fmt, folders_only=seed % 3 == 0))
    return total
