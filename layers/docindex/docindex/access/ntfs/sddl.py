"""A reader of SDDL strings, by their published specification ([MS-DTYP] 2.5.1, "Security Descriptor
Description Language"), for the DACLs of files and folders.

Written here rather than taken from PyPI: ``winacl`` (MIT) parses a rights field only as one token
(``GRGX`` fails), wants a domain SID even for ``BA`` and splits on ``:`` (conditional ACEs break);
``sddl-parser`` states no licence and requires ``O:`` and ``G:`` (``icacls /save`` writes neither);
``winsddl`` is GPL-3.

What it reads (``parse_sddl``)::

    O:<sid> G:<sid> D:<flags>(<ace>)(<ace>)... S:<flags>(<ace>)...

in any order; ``<flags>`` is any of ``P`` (protected: the DACL does not inherit), ``AI``, ``AR``,
``NO_ACCESS_CONTROL`` (a NULL DACL: everyone may do everything); an ACE (any type of [MS-DTYP] 2.5.1.1, and
the ``TL`` and ``FL`` of Windows Server 2016's sddl.h) is
``type;flags;rights;object_guid;inherit_object_guid;sid[;condition or resource attribute]`` with
rights as concatenated two-letter tokens (``FA``, ``GRGX``, ``CCDCLCSWRPWPDTLOCRSDRCWDWO``: the
tokens name bits, and the bits are what counts: ``LC`` on a file is ``FILE_APPEND_DATA``) or as a
hexadecimal, octal or decimal number. A SID is ``S-1-...`` or a two-letter alias (``WD``, ``BA``,
``DU``, ...; :mod:`docindex.access.ntfs.principals` knows what each stands for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SDDL_CHARS = 1_000_000  # a DACL is at most 64 KiB binary; its SDDL stays well below this
MAX_ACES = 10_000

# ACE flags ([MS-DTYP] 2.4.4.1)
OBJECT_INHERIT = 0x01
CONTAINER_INHERIT = 0x02
NO_PROPAGATE_INHERIT = 0x04
INHERIT_ONLY = 0x08
INHERITED = 0x10

_ACE_FLAGS = {
    "OI": OBJECT_INHERIT,
    "CI": CONTAINER_INHERIT,
    "NP": NO_PROPAGATE_INHERIT,
    "IO": INHERIT_ONLY,
    "ID": INHERITED,
    "CR": 0x20,  # critical
    "SA": 0x40,  # audit success (and TP, trust-protected filter, shares the bit)
    "TP": 0x40,
    "FA": 0x80,  # audit failure
}

# Access mask bits ([MS-DTYP] 2.4.3) and what the two-letter rights tokens stand for.
FILE_READ_DATA = 0x1  # FILE_LIST_DIRECTORY on a folder
GENERIC_READ = 0x80000000
GENERIC_WRITE = 0x40000000
GENERIC_EXECUTE = 0x20000000
GENERIC_ALL = 0x10000000
FILE_GENERIC_READ = 0x120089
FILE_GENERIC_WRITE = 0x120116
FILE_GENERIC_EXECUTE = 0x1200A0
FILE_ALL_ACCESS = 0x1F01FF

_RIGHTS = {
    "GA": GENERIC_ALL,
    "GR": GENERIC_READ,
    "GW": GENERIC_WRITE,
    "GX": GENERIC_EXECUTE,
    "RC": 0x20000,
    "SD": 0x10000,
    "WD": 0x40000,
    "WO": 0x80000,
    "RP": 0x10,
    "WP": 0x20,
    "CC": 0x1,
    "DC": 0x2,
    "LC": 0x4,
    "SW": 0x8,
    "LO": 0x80,
    "DT": 0x40,
    "CR": 0x100,
    "FA": FILE_ALL_ACCESS,
    "FR": FILE_GENERIC_READ,
    "FW": FILE_GENERIC_WRITE,
    "FX": FILE_GENERIC_EXECUTE,
    "KA": 0xF003F,
    "KR": 0x20019,
    "KW": 0x20006,
    "KX": 0x20019,
    "NR": 0x2,
    "NW": 0x1,
    "NX": 0x4,
}

ALLOW = "allow"
DENY = "deny"
OTHER = "other"  # audit, alarm, labels and filters of the SACL, resource attribute, scoped policy: not in the DACL walk
# SACL ACEs that take rights away from what the DACL grants: the mandatory label ([MS-DTYP] 2.4.4.13, checked by
# 2.5.3.3), the process trust label (TL, SYSTEM_PROCESS_TRUST_LABEL_ACE, 0x14) and the access filter (FL,
# SYSTEM_ACCESS_FILTER_ACE, 0x15, with a condition). [MS-DTYP] defines the first only; winnt.h and sddl.h the others.
RESTRICTING = frozenset({"ML", "TL", "FL"})

# ACE type token -> (kind, conditional (callback), object-specific)
_ACE_TYPES = {
    "A": (ALLOW, False, False),
    "D": (DENY, False, False),
    "OA": (ALLOW, False, True),
    "OD": (DENY, False, True),
    "XA": (ALLOW, True, False),
    "XD": (DENY, True, False),
    "ZA": (ALLOW, True, True),
    "AU": (OTHER, False, False),
    "AL": (OTHER, False, False),
    "OU": (OTHER, False, True),
    "OL": (OTHER, False, True),
    "ML": (OTHER, False, False),
    "XU": (OTHER, True, False),
    "RA": (OTHER, False, False),
    "SP": (OTHER, False, False),
    "TL": (OTHER, False, False),
    "FL": (OTHER, True, False),
}

_SID = re.compile(r"S-1-(?:0[xX][0-9A-Fa-f]{1,12}|\d{1,15})(?:-\d{1,10}){0,15}|[A-Z]{2}")
_GUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
_ACL_FLAGS = ("NO_ACCESS_CONTROL", "AI", "AR", "P")


class SddlError(ValueError):
    """Not an SDDL string this reader accepts; the message says where."""


@dataclass(frozen=True, slots=True)
class Ace:
    """One access control entry: who (``trustee``: ``S-1-...`` or a two-letter alias), what, how inherited."""

    kind: str  # ALLOW, DENY or OTHER
    type: str  # the SDDL type token: A, D, XA, ...
    flags: int
    mask: int
    trustee: str
    conditional: bool = False  # a callback ACE: it applies only when its condition holds
    object_specific: bool = False  # an object ACE carrying GUIDs (meaningless on files)

    @property
    def inherited(self) -> bool:
        return bool(self.flags & INHERITED)

    @property
    def inherit_only(self) -> bool:
        return bool(self.flags & INHERIT_ONLY)

    @property
    def object_inherit(self) -> bool:
        return bool(self.flags & OBJECT_INHERIT)

    @property
    def container_inherit(self) -> bool:
        return bool(self.flags & CONTAINER_INHERIT)

    @property
    def no_propagate(self) -> bool:
        return bool(self.flags & NO_PROPAGATE_INHERIT)

    def flag_text(self) -> str:
        names = [n for n, bit in _ACE_FLAGS.items() if n not in ("TP", "CR") and self.flags & bit]
        return "".join(names)

    def to_sddl(self) -> str:
        return f"({self.type};{self.flag_text()};0x{self.mask:x};;;{self.trustee})"


@dataclass(frozen=True, slots=True)
class Dacl:
    """A DACL in order. ``null``: no DACL at all (``D:NO_ACCESS_CONTROL``), which lets everyone do everything."""

    aces: tuple[Ace, ...] = ()
    protected: bool = False
    auto_inherited: bool = False
    null: bool = False

    def to_sddl(self) -> str:
        if self.null:
            return "D:NO_ACCESS_CONTROL"
        flags = ("P" if self.protected else "") + ("AI" if self.auto_inherited else "")
        return "D:" + flags + "".join(a.to_sddl() for a in self.aces)


@dataclass(frozen=True, slots=True)
class SecurityDescriptor:
    owner: str | None
    group: str | None
    dacl: Dacl | None  # None: the string has no D: part
    sacl: Dacl | None = None  # audit ACEs, labels and access filters, where the export carries them

    @property
    def labels(self) -> tuple[Ace, ...]:
        """The SACL's ACEs that restrict what the DACL grants (``RESTRICTING``: ML, TL, FL), in order."""
        return tuple(a for a in self.sacl.aces if a.type in RESTRICTING) if self.sacl is not None else ()


def file_rights(mask: int) -> int:
    """``mask`` with the generic rights mapped to the file rights they stand for ([MS-DTYP] 2.4.3, files)."""
    rights = mask & 0x0FFFFFFF
    if mask & GENERIC_READ:
        rights |= FILE_GENERIC_READ
    if mask & GENERIC_WRITE:
        rights |= FILE_GENERIC_WRITE
    if mask & GENERIC_EXECUTE:
        rights |= FILE_GENERIC_EXECUTE
    if mask & GENERIC_ALL:
        rights |= FILE_ALL_ACCESS
    return rights


def reads_data(mask: int) -> bool:
    """Whether ``mask`` includes reading a file's content (``FILE_READ_DATA``; on a folder: listing it)."""
    return bool(file_rights(mask) & FILE_READ_DATA)


def _rights(text: str, where: str) -> int:
    if not text:
        return 0
    lowered = text.lower()
    try:
        if lowered.startswith("0x"):
            value = int(text[2:], 16)
        elif text.isdigit():
            value = int(text, 8) if len(text) > 1 and text.startswith("0") else int(text)
        else:
            value = None
    except ValueError:
        raise SddlError(f"{where}: rights {text!r} are not a number") from None
    if value is not None:
        if value > 0xFFFFFFFF:
            raise SddlError(f"{where}: rights {text!r} do not fit 32 bits")
        return value
    if len(text) % 2:
        raise SddlError(f"{where}: rights {text!r} are neither a number nor two-letter tokens")
    mask = 0
    for i in range(0, len(text), 2):
        token = text[i : i + 2].upper()
        if token not in _RIGHTS:
            raise SddlError(f"{where}: unknown right {token!r} in {text!r}")
        mask |= _RIGHTS[token]
    return mask


def _ace_flags(text: str, where: str) -> int:
    if len(text) % 2:
        raise SddlError(f"{where}: ACE flags {text!r} are not two-letter tokens")
    flags = 0
    for i in range(0, len(text), 2):
        token = text[i : i + 2].upper()
        if token not in _ACE_FLAGS:
            raise SddlError(f"{where}: unknown ACE flag {token!r}")
        flags |= _ACE_FLAGS[token]
    return flags


def _sid(text: str, where: str) -> str:
    value = text.strip()
    match = _SID.fullmatch(value.upper() if value[:2].lower() == "s-" else value)
    if not match:
        raise SddlError(f"{where}: {text!r} is not a SID (S-1-...) or a two-letter alias")
    return match.group(0)


def _ace(body: str, where: str) -> Ace:
    parts = body.split(";", 6)
    if len(parts) < 6:
        raise SddlError(f"{where}: an ACE has 6 fields separated by ';', this one has {len(parts)}: ({body})")
    type_token, flags_text, rights_text, guid, inherit_guid, sid_text = (p.strip() for p in parts[:6])
    rest = parts[6].strip() if len(parts) == 7 else ""
    spec = _ACE_TYPES.get(type_token.upper())
    if spec is None:
        raise SddlError(f"{where}: unknown ACE type {type_token!r}")
    kind, conditional, object_specific = spec
    for value in (guid, inherit_guid):
        if value and not _GUID.fullmatch(value):
            raise SddlError(f"{where}: {value!r} is not a GUID")
    if rest and not conditional and type_token.upper() != "RA":
        raise SddlError(f"{where}: a {type_token} ACE has no 7th field, found {rest[:40]!r}")
    return Ace(
        kind=kind,
        type=type_token.upper(),
        flags=_ace_flags(flags_text, where),
        mask=_rights(rights_text, where),
        trustee=_sid(sid_text, where),
        conditional=conditional and bool(rest),
        object_specific=object_specific and bool(guid or inherit_guid),
    )


def _closing(text: str, start: int, where: str) -> int:
    """The index of the ``)`` closing the ACE opened at ``start``: conditions nest parentheses and quote strings."""
    depth = 0
    i = start
    quoted = False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise SddlError(f"{where}: an ACE opened at character {start + 1} is never closed")


def _acl(text: str, pos: int, where: str) -> tuple[Dacl, int]:
    protected = auto = null = False
    while True:
        for flag in _ACL_FLAGS:
            if text.startswith(flag, pos):
                pos += len(flag)
                if flag == "P":
                    protected = True
                elif flag == "AI":
                    auto = True
                elif flag == "NO_ACCESS_CONTROL":
                    null = True
                break
        else:
            break
    aces: list[Ace] = []
    while pos < len(text) and text[pos] == "(":
        end = _closing(text, pos, where)
        if len(aces) >= MAX_ACES:
            raise SddlError(f"{where}: more than {MAX_ACES} ACEs")
        aces.append(_ace(text[pos + 1 : end], f"{where}: ACE {len(aces) + 1}"))
        pos = end + 1
    if null and aces:
        raise SddlError(f"{where}: NO_ACCESS_CONTROL (no DACL) with ACEs")
    return Dacl(aces=tuple(aces), protected=protected, auto_inherited=auto, null=null), pos


def parse_sddl(text: str, *, where: str = "SDDL") -> SecurityDescriptor:
    """Parse a security descriptor string; ``SddlError`` names ``where`` and what is wrong."""
    if len(text) > MAX_SDDL_CHARS:
        raise SddlError(f"{where}: longer than {MAX_SDDL_CHARS} characters")
    text = text.strip()
    if not text:
        raise SddlError(f"{where}: empty")
    owner = group = None
    dacl: Dacl | None = None
    sacl: Dacl | None = None
    seen: set[str] = set()
    pos = 0
    while pos < len(text):
        section = text[pos : pos + 2]
        if section not in ("O:", "G:", "D:", "S:"):
            raise SddlError(
                f"{where}: expected O:, G:, D: or S: at character {pos + 1}, found {text[pos : pos + 20]!r}"
            )
        if section in seen:
            raise SddlError(f"{where}: a second {section} part")
        seen.add(section)
        pos += 2
        if section in ("O:", "G:"):
            match = _SID.match(text, pos)
            if not match:
                raise SddlError(f"{where}: {section} is not followed by a SID")
            if section == "O:":
                owner = match.group(0)
            else:
                group = match.group(0)
            pos = match.end()
        else:
            acl, pos = _acl(text, pos, f"{where}: {'DACL' if section == 'D:' else 'SACL'}")
            if section == "D:":
                dacl = acl
            else:
                sacl = acl
    return SecurityDescriptor(owner=owner, group=group, dacl=dacl, sacl=sacl)
