"""Who an ACE's trustee is, for docindex: the well-known SIDs and their aliases, and the mapping file
from the file server's SIDs and names to the names in the sign-in token's groups claim.

The mapping file is CSV, one ``nas,docindex`` pair a line (a header line and ``#`` comments are
fine)::

    nas,docindex
    S-1-5-21-1004336348-1177238915-682003330-1105,営業部
    CONTOSO\\人事部,人事部
    DU,everyone
    S-1-5-21-1004336348-1177238915-682003330-1201,user:3f6c0d2e-...
    BUILTIN\\Backup Operators,-

Left: a SID (``S-1-...``), an SDDL alias (``BU``, ``DU``, ...) or a name as ``smbcacls`` and
``Get-Acl`` print it (``DOMAIN\\group``, ``Everyone``), case-insensitive. Right: a group name as
the groups claim carries it (or ``group:NAME``), ``user:SUB``, ``everyone`` (any signed-in user),
or ``-`` (no docindex user is in it: its allows are ignored). A trustee may map to several.

A line is trusted for allows only. A deny is never narrowed by a line: the map is never wider than
Windows, and a line saying who is *not* in a trustee cannot be checked. A deny to a trustee mapped
to ``-`` closes the path, as a deny to a trustee docindex cannot name does (but a machine account
stays ignored: no person's logon holds SYSTEM). A *universal* trustee — one every person's logon on
the share holds by the way Windows builds the token, not by a directory group: Everyone,
Authenticated Users, NETWORK, This Organization, BUILTIN\\Users (which holds Authenticated Users)
and Domain Users (every account's primary group) — mapped to anything but ``everyone`` keeps the
line for its allows (``Everyone,all-staff``: a temp the identity provider leaves out of all-staff
does not read what the share gives Everyone) while its denies deny ``everyone``; both are reported.

Without a mapping line: Everyone, Authenticated Users and NETWORK are ``everyone``; accounts that
are never a person searching (SYSTEM, services, app packages, NT SERVICE\\*, ANONYMOUS) are
ignored and said so; identities people hold that docindex cannot name — Administrators (the
admins' group reads everything anyway), OWNER RIGHTS (the file's owner), the asserted identities
(every Kerberos logon), INTERACTIVE, integrity levels — are *unnamed*: their allow is ignored and
said so, their deny closes the path (a sales member who is also an administrator is denied on
Windows); CREATOR OWNER stands for each file's owner, whom a folder's ACL does not name; anything
else is *unmapped*: its allow is dropped and its deny closes the path to all but the
administrators (docindex.access.ntfs.readers).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from docindex.access.policy import EVERYONE, group_principal, user_principal

MAX_MAPPING_BYTES = 4 * 1024 * 1024
MAX_MAPPING_ROWS = 100_000

# SDDL SID aliases ([MS-DTYP] 2.5.1.1, "SID strings") -> (SID, name as Windows prints it)
WELL_KNOWN: dict[str, tuple[str, str]] = {
    "AN": ("S-1-5-7", "NT AUTHORITY\\ANONYMOUS LOGON"),
    "AO": ("S-1-5-32-548", "BUILTIN\\Account Operators"),
    "AU": ("S-1-5-11", "NT AUTHORITY\\Authenticated Users"),
    "BA": ("S-1-5-32-544", "BUILTIN\\Administrators"),
    "BG": ("S-1-5-32-546", "BUILTIN\\Guests"),
    "BO": ("S-1-5-32-551", "BUILTIN\\Backup Operators"),
    "BU": ("S-1-5-32-545", "BUILTIN\\Users"),
    "CG": ("S-1-3-1", "CREATOR GROUP"),
    "CO": ("S-1-3-0", "CREATOR OWNER"),
    "ED": ("S-1-5-9", "NT AUTHORITY\\ENTERPRISE DOMAIN CONTROLLERS"),
    "IU": ("S-1-5-4", "NT AUTHORITY\\INTERACTIVE"),
    "LS": ("S-1-5-19", "NT AUTHORITY\\LOCAL SERVICE"),
    "NS": ("S-1-5-20", "NT AUTHORITY\\NETWORK SERVICE"),
    "NU": ("S-1-5-2", "NT AUTHORITY\\NETWORK"),
    "OW": ("S-1-3-4", "OWNER RIGHTS"),
    "PO": ("S-1-5-32-550", "BUILTIN\\Print Operators"),
    "PS": ("S-1-5-10", "NT AUTHORITY\\SELF"),
    "PU": ("S-1-5-32-547", "BUILTIN\\Power Users"),
    "RC": ("S-1-5-12", "NT AUTHORITY\\RESTRICTED"),
    "RD": ("S-1-5-32-555", "BUILTIN\\Remote Desktop Users"),
    "RE": ("S-1-5-32-552", "BUILTIN\\Replicator"),
    "RU": ("S-1-5-32-554", "BUILTIN\\Pre-Windows 2000 Compatible Access"),
    "SO": ("S-1-5-32-549", "BUILTIN\\Server Operators"),
    "SU": ("S-1-5-6", "NT AUTHORITY\\SERVICE"),
    "SY": ("S-1-5-18", "NT AUTHORITY\\SYSTEM"),
    "WD": ("S-1-1-0", "Everyone"),
    "WR": ("S-1-5-33", "NT AUTHORITY\\WRITE RESTRICTED"),
    "AC": ("S-1-15-2-1", "APPLICATION PACKAGE AUTHORITY\\ALL APPLICATION PACKAGES"),
    "NO": ("S-1-5-32-556", "BUILTIN\\Network Configuration Operators"),
    "MU": ("S-1-5-32-558", "BUILTIN\\Performance Monitor Users"),
    "LU": ("S-1-5-32-559", "BUILTIN\\Performance Log Users"),
    "IS": ("S-1-5-32-568", "BUILTIN\\IIS_IUSRS"),
    "CY": ("S-1-5-32-569", "BUILTIN\\Cryptographic Operators"),
    "ER": ("S-1-5-32-573", "BUILTIN\\Event Log Readers"),
    "CD": ("S-1-5-32-574", "BUILTIN\\Certificate Service DCOM Access"),
    "RA": ("S-1-5-32-575", "BUILTIN\\RDS Remote Access Servers"),
    "ES": ("S-1-5-32-576", "BUILTIN\\RDS Endpoint Servers"),
    "MS": ("S-1-5-32-577", "BUILTIN\\RDS Management Servers"),
    "HA": ("S-1-5-32-578", "BUILTIN\\Hyper-V Administrators"),
    "AA": ("S-1-5-32-579", "BUILTIN\\Access Control Assistance Operators"),
    "RM": ("S-1-5-32-580", "BUILTIN\\Remote Management Users"),
    "UD": ("S-1-5-84-0-0-0-0-0", "USER MODE DRIVERS"),
    "AS": ("S-1-18-1", "Authentication authority asserted identity"),
    "SS": ("S-1-18-2", "Service asserted identity"),
    "LW": ("S-1-16-4096", "Mandatory Label\\Low Mandatory Level"),
    "ME": ("S-1-16-8192", "Mandatory Label\\Medium Mandatory Level"),
    "MP": ("S-1-16-8448", "Mandatory Label\\Medium Plus Mandatory Level"),
    "HI": ("S-1-16-12288", "Mandatory Label\\High Mandatory Level"),
    "SI": ("S-1-16-16384", "Mandatory Label\\System Mandatory Level"),
}

# Aliases relative to the domain (or the forest root domain): the SID is <domain SID>-<RID>.
DOMAIN_RELATIVE: dict[str, tuple[int, str]] = {
    "LA": (500, "Administrator"),
    "LG": (501, "Guest"),
    "RO": (498, "Enterprise Read-only Domain Controllers"),
    "DA": (512, "Domain Admins"),
    "DU": (513, "Domain Users"),
    "DG": (514, "Domain Guests"),
    "DC": (515, "Domain Computers"),
    "DD": (516, "Domain Controllers"),
    "CA": (517, "Cert Publishers"),
    "SA": (518, "Schema Admins"),
    "EA": (519, "Enterprise Admins"),
    "PA": (520, "Group Policy Creator Owners"),
    "CN": (522, "Cloneable Domain Controllers"),
    "AP": (525, "Protected Users"),
    "KA": (526, "Key Admins"),
    "EK": (527, "Enterprise Key Admins"),
    "RS": (553, "RAS and IAS Servers"),
}

TRUSTED_INSTALLER = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
EVERYONE_SIDS = frozenset({"S-1-1-0", "S-1-5-11", "S-1-5-2"})  # Everyone, Authenticated Users, NETWORK
# In every person's token on the share however the directory's groups are set: the above, This Organization,
# BUILTIN\Users (Authenticated Users and Domain Users are its members) and a domain's Domain Users (RID 513,
# every account's primary group). A line mapping one to a group cannot make its deny narrower.
UNIVERSAL_SIDS = EVERYONE_SIDS | {"S-1-5-15", "S-1-5-32-545"}
DOMAIN_USERS_RID = 513
# How Domain Users is named where no SID is printed (smbcacls, Get-Acl's Access rules): DOMAIN\<name>, by locale
_DOMAIN_USERS_NAMES = frozenset({"domain users", "domänen-benutzer", "utilisateurs du domaine", "usuarios del dominio"})
CREATOR_SIDS = frozenset({"S-1-3-0", "S-1-3-1"})  # CREATOR OWNER, CREATOR GROUP
# Never in the token of a person opening a file on the share: SYSTEM, LOCAL/NETWORK SERVICE, SERVICE,
# ANONYMOUS, enterprise domain controllers, user-mode drivers, services, app packages, VMs, ...
_MACHINE_SIDS = frozenset({"S-1-5-18", "S-1-5-19", "S-1-5-20", "S-1-5-6", "S-1-5-7", "S-1-5-9", "S-1-5-84-0-0-0-0-0"})
_MACHINE_PREFIXES = ("S-1-5-80-", "S-1-15-", "S-1-5-83-", "S-1-5-90-", "S-1-5-96-", "S-1-5-82-")
# In people's tokens, but not a group docindex can name: Administrators, OWNER RIGHTS (the owner),
# INTERACTIVE, SELF, RESTRICTED, WRITE RESTRICTED, the asserted identities, the integrity levels.
_UNNAMED_SIDS = frozenset(
    {"S-1-5-32-544", "S-1-3-4", "S-1-5-4", "S-1-5-10", "S-1-5-12", "S-1-5-33", "S-1-18-1", "S-1-18-2"}
)
_UNNAMED_PREFIXES = ("S-1-16-", "S-1-18-")

_NAMES: dict[str, str] = {name.casefold(): sid for sid, name in WELL_KNOWN.values()}
_NAMES.update(
    {
        "everyone": "S-1-1-0",
        "authenticated users": "S-1-5-11",
        "network": "S-1-5-2",
        "nt authority\\this organization": "S-1-5-15",
        "this organization": "S-1-5-15",
        # The universal trustees as German, French and Spanish Windows print them (Get-Acl's Access rules, smbcacls
        # against such a domain). Japanese Windows prints the English names above, which are already known.
        "jeder": "S-1-1-0",
        "nt-autorität\\authentifizierte benutzer": "S-1-5-11",
        "nt-autorität\\netzwerk": "S-1-5-2",
        "vordefiniert\\benutzer": "S-1-5-32-545",
        "tout le monde": "S-1-1-0",
        "autorite nt\\utilisateurs authentifiés": "S-1-5-11",
        "builtin\\utilisateurs": "S-1-5-32-545",
        "todos": "S-1-1-0",
        "nt authority\\usuarios autentificados": "S-1-5-11",
        "builtin\\usuarios": "S-1-5-32-545",
        "creator owner": "S-1-3-0",
        "creator group": "S-1-3-1",
        "system": "S-1-5-18",
        "nt service\\trustedinstaller": TRUSTED_INSTALLER,
        "application package authority\\all restricted application packages": "S-1-15-2-2",
        # what smbcacls prints for Samba's own accounts of a Unix share
        "unix user\\root": "S-1-22-1-0",
        "unix group\\root": "S-1-22-2-0",
    }
)

UNMAPPED = "unmapped"
MAPPED = "mapped"
IGNORED = "ignored"  # a machine account (with or without a line mapping it to '-')
EXCLUDED = "excluded"  # mapped to '-' by the mapping file: its allows are ignored, its denies close
UNNAMED = "unnamed"  # people hold it (Administrators, the owner, ...), docindex cannot name them
CREATOR = "creator"  # CREATOR OWNER / CREATOR GROUP


class MappingError(ValueError):
    """The mapping file cannot be used; the message names the line."""


@dataclass(frozen=True, slots=True)
class Who:
    """A trustee as docindex sees it."""

    kind: str  # MAPPED, IGNORED, EXCLUDED, UNNAMED, CREATOR or UNMAPPED
    principals: frozenset[str] = frozenset()  # what an allow to it gives
    label: str = ""  # how the report names it: 'S-1-5-21-...-1105 (CONTOSO\\営業部)'
    denies: frozenset[str] = frozenset()  # what a deny to it denies (MAPPED): its principals, or everyone
    lines: str = ""  # the mapping file's lines that decided it, for the report: 'groups.csv: line 5'
    universal: bool = False  # every person's logon holds it


def canonical(trustee: str, *, domain_sid: str | None = None) -> str:
    """A trustee as one string to compare: a numeric SID where one is known, else the name casefolded."""
    value = trustee.strip()
    if not value:
        return value
    upper = value.upper()
    if upper.startswith("S-1-"):
        return upper
    if len(value) == 2 and upper in WELL_KNOWN:
        return WELL_KNOWN[upper][0]
    if len(value) == 2 and upper in DOMAIN_RELATIVE:
        rid = DOMAIN_RELATIVE[upper][0]
        return f"{domain_sid.upper()}-{rid}" if domain_sid else f"alias:{upper}"
    folded = value.casefold()
    return _NAMES.get(folded, folded)


def is_universal(key: str) -> bool:
    """Whether a canonical trustee is one every person's logon on the share holds (``UNIVERSAL_SIDS``, a
    domain's Domain Users by SID, alias or name)."""
    if key in UNIVERSAL_SIDS or key == "alias:DU":
        return True
    if key.startswith("S-1-5-21-"):
        parts = key.split("-")
        return len(parts) == 8 and parts[-1] == str(DOMAIN_USERS_RID)
    return key.rpartition("\\")[2] in _DOMAIN_USERS_NAMES


def describe(trustee: str) -> str:
    """The trustee with the name Windows gives it, where it is well known."""
    key = canonical(trustee)
    for alias, (sid, name) in WELL_KNOWN.items():
        if key == sid:
            return f"{name} ({alias})"
    if key == TRUSTED_INSTALLER:
        return "NT SERVICE\\TrustedInstaller"
    if key.startswith("alias:"):
        alias = key.removeprefix("alias:")
        return f"{DOMAIN_RELATIVE[alias][1]} ({alias}; give --domain-sid to compare by SID)"
    return trustee


def _docindex_principal(text: str, where: str) -> str | None:
    value = text.strip()
    if value == "-":
        return None
    if value.casefold() == "everyone":
        return EVERYONE
    if value.startswith("user:"):
        sub = value.removeprefix("user:").strip()
        if not sub:
            raise MappingError(f"{where}: user: needs the user's sub")
        return user_principal(sub)
    name = value.removeprefix("group:").strip()
    if not name:
        raise MappingError(f"{where}: no docindex name (a group name, group:NAME, user:SUB, everyone or -)")
    return group_principal(name)


@dataclass
class Mapping:
    """The mapping file, read: canonical trustee -> docindex principals (an empty set: mapped to '-')."""

    entries: dict[str, frozenset[str]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    lines: dict[str, list[str]] = field(default_factory=dict)  # canonical trustee -> 'groups.csv: line 5', ...
    domain_sid: str | None = None
    source: str = "(no mapping file)"
    _seen: dict[str, Who] = field(default_factory=dict, repr=False, compare=False)

    def who(self, trustee: str) -> Who:
        """The trustee as docindex sees it (remembered: a share names the same few trustees on every path)."""
        known = self._seen.get(trustee)
        if known is None:
            known = self._seen[trustee] = self._who(trustee)
        return known

    def _who(self, trustee: str) -> Who:
        key = canonical(trustee, domain_sid=self.domain_sid)
        label = describe(trustee)
        universal = is_universal(key)
        machine = key in _MACHINE_SIDS or key.startswith(_MACHINE_PREFIXES) or key.startswith("nt service\\")
        if key in self.entries and not (machine and not self.entries[key]):
            return self._by_line(key, label, universal=universal)
        if key in EVERYONE_SIDS:
            return Who(MAPPED, frozenset({EVERYONE}), label, denies=frozenset({EVERYONE}), universal=True)
        if key in CREATOR_SIDS:
            return Who(CREATOR, frozenset(), label)
        if machine:
            return Who(IGNORED, frozenset(), label)
        if key in _UNNAMED_SIDS or key.startswith(_UNNAMED_PREFIXES):
            return Who(UNNAMED, frozenset(), label)
        return Who(UNMAPPED, frozenset(), label)

    def _by_line(self, key: str, label: str, *, universal: bool) -> Who:
        principals = self.entries[key]
        lines = self.where(key)
        if not principals:
            return Who(EXCLUDED, frozenset(), label, lines=lines, universal=universal)
        # A deny to a trustee every logon holds refuses everyone, whatever the line names for its allows
        denies = frozenset({EVERYONE}) if universal else principals
        return Who(MAPPED, principals, label, denies=denies, lines=lines, universal=universal)

    def where(self, key: str) -> str:
        """The mapping file's lines for a canonical trustee, as the report names them."""
        found = self.lines.get(key, [])
        if len(found) <= 1:
            return "".join(found)
        return f"{self.source}: lines {', '.join(w.rpartition(' line ')[2] for w in found)}"

    def universal_lines(self) -> list[tuple[str, frozenset[str], str]]:
        """(trustee, principals, lines) of each universal trustee the file maps to something but ``everyone``."""
        return [
            (self.labels.get(key, key), principals, self.where(key))
            for key, principals in self.entries.items()
            if is_universal(key) and EVERYONE not in principals
        ]

    def shared_targets(self) -> dict[str, list[str]]:
        """docindex principal -> the file server trustees mapped to it, where more than one is."""
        by_target: dict[str, list[str]] = {}
        for key, principals in self.entries.items():
            for p in principals:
                by_target.setdefault(p, []).append(self.labels.get(key, key))
        return {p: sorted(ts) for p, ts in by_target.items() if len(ts) > 1 and p != EVERYONE}


def read_mapping(data: bytes, *, name: str, domain_sid: str | None = None) -> Mapping:
    """Parse a mapping file (CSV, UTF-8 or UTF-16 with BOM, or CP932); ``MappingError`` names the line."""
    if len(data) > MAX_MAPPING_BYTES:
        raise MappingError(f"{name}: larger than {MAX_MAPPING_BYTES} bytes")
    from docindex.access.ntfs.exports import decode_text

    text, _ = decode_text(data, name)
    mapping = Mapping(domain_sid=domain_sid.upper() if domain_sid else None, source=name)
    reader = csv.reader(io.StringIO(text))
    for row in reader:
        line = reader.line_num
        where = f"{name}: line {line}"
        if line > MAX_MAPPING_ROWS:
            raise MappingError(f"{name}: more than {MAX_MAPPING_ROWS} lines")
        cells = [c.strip() for c in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if len(cells) != 2:
            raise MappingError(f"{where}: expected two columns (nas,docindex), found {len(cells)}")
        left, right = cells
        if line == 1 and left.casefold() in ("nas", "sid", "trustee", "source") and not left.upper().startswith("S-1-"):
            continue  # a header
        if not left:
            raise MappingError(f"{where}: the first column (a SID, an alias or DOMAIN\\name) is empty")
        if left.upper().startswith("S-1-") and not _looks_like_sid(left):
            raise MappingError(f"{where}: {left!r} is not a SID")
        key = canonical(left, domain_sid=mapping.domain_sid)
        principal = _docindex_principal(right, where)
        current = set(mapping.entries.get(key, frozenset()))
        if principal is not None:
            current.add(principal)
        mapping.entries[key] = frozenset(current)
        mapping.labels.setdefault(key, left)
        mapping.lines.setdefault(key, []).append(where)
    return mapping


def _looks_like_sid(text: str) -> bool:
    parts = text.upper().split("-")
    return len(parts) >= 3 and parts[0] == "S" and all(p.isdigit() for p in parts[1:])
