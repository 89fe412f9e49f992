"""Reading the ACL exports an administrator can make with the tools they already have.

- ``icacls <share> /save acl.txt /t`` (and Samba's ``smbcacls --save acl.txt --recurse``, which
  writes the same format): UTF-16 LE, no BOM, CRLF; a line with the path, then a line with the
  DACL in SDDL, per file and folder; an empty path line is the share's root. The same pairs in
  UTF-8 (``smbcacls --sddl`` in a loop, ``Get-Acl`` piped through a script) are read too.
- PowerShell ``Get-Acl`` exported as JSON (``ConvertTo-Json``) or CSV (``Export-Csv``): the ``Path``
  (or ``PSPath``) and ``Sddl`` properties of each object; an object without ``Sddl`` may instead
  carry its ``Access`` rules (``IdentityReference``, ``FileSystemRights``, ``AccessControlType``,
  ``IsInherited``, ``InheritanceFlags``, ``PropagationFlags``, as numbers or names) and
  ``AreAccessRulesProtected``.
- ``smbcacls //nas/share <path>`` output, one block per path (``REVISION:``, ``CONTROL:``,
  ``OWNER:``, ``GROUP:``, ``ACL:trustee:type/flags/mask``), each block preceded by a line naming
  its path (``echo "$d"`` in the loop, or ``FILENAME:path``); a single block without one is the root.

Paths are kept exactly as the export has them (only the line end is removed): a folder ``人事部　``
(ending in U+3000) is not ``人事部``. Where an SDDL carries the SACL (``S:``), its mandatory label,
process trust label and access filter are kept with the entry (they can close, docindex.access.ntfs.readers).

Only a JSON export ends with a mark (the array's ``]``): an icacls, CSV or smbcacls file cut exactly
at an entry boundary reads as a complete, shorter export. ``expect_entries`` (the count the export
step printed, icacls' "Successfully processed N files") is compared with the entries read.

Hardened: at most ``MAX_EXPORT_BYTES`` and ``MAX_ENTRIES``; every error names the file and the line
(or the JSON item) and what was expected there.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from dataclasses import dataclass
from typing import Any

from docindex.access.ntfs.sddl import (
    ALLOW,
    CONTAINER_INHERIT,
    DENY,
    INHERIT_ONLY,
    INHERITED,
    NO_PROPAGATE_INHERIT,
    OBJECT_INHERIT,
    OTHER,
    RESTRICTING,
    Ace,
    Dacl,
    SddlError,
    parse_sddl,
)

MAX_EXPORT_BYTES = 512 * 1024 * 1024
MAX_ENTRIES = 1_000_000
MAX_LINE_CHARS = 1_000_000
FORMATS = ("auto", "icacls", "getacl-json", "getacl-csv", "smbcacls")
ENDS_WITH_A_MARK = frozenset({"getacl-json"})  # the others cannot show a cut at an entry boundary
_PROVIDER = re.compile(r"^[A-Za-z.]+\\FileSystem::", re.IGNORECASE)


class ExportError(ValueError):
    """The export cannot be read; the message names the file, the line and what was expected."""


@dataclass(frozen=True, slots=True)
class AclEntry:
    """One path of the export and its DACL, with where it was found (for the report)."""

    path: str  # as the export wrote it
    dacl: Dacl
    where: str  # 'acl.txt: line 12'
    labels: tuple[Ace, ...] = ()  # the SACL's labels and access filters (ML, TL, FL), where the export has them
    access_rules: bool = False  # read from Get-Acl's Access rules, not an SDDL string (see _item_entry)


def decode_text(data: bytes, name: str) -> tuple[str, str]:
    """Bytes as text: a BOM decides; else UTF-16 LE if it looks like it (icacls writes no BOM); else
    UTF-8; else CP932 (Japanese Windows' ANSI code page: ``Export-Csv`` in Windows PowerShell 5.1)."""
    if data.startswith(codecs.BOM_UTF8):
        candidates = ["utf-8-sig"]
    elif data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        candidates = ["utf-16"]
    elif b"\x00" in data:
        # UTF-8 and CP932 text has no NUL; UTF-16 without a BOM has one in every ASCII character (the SDDL
        # lines), at odd offsets in little-endian. The first character may be 共 (0x71 0x51): not a test.
        window = data[: 1 << 20]
        candidates = ["utf-16-le" if window[1::2].count(0) >= window[0::2].count(0) else "utf-16-be"]
    else:
        candidates = ["utf-8", "cp932"]
    error: UnicodeDecodeError | None = None
    for encoding in candidates:
        try:
            return data.decode(encoding).rstrip("\x00"), encoding
        except UnicodeDecodeError as exc:
            error = error or exc
    assert error is not None  # nosec B101 - the loop ran at least once
    line = data[: error.start].count(b"\n") + 1
    raise ExportError(
        f"{name}: line {line}: not text in {' or '.join(candidates)} (byte {error.start}); save it as UTF-8 or "
        "UTF-16 (icacls /save writes UTF-16)"
    ) from None


_JSON_START = re.compile(r'\[\s*(?:[{\]]|$)|\{\s*(?:["}]|$)')
# An SDDL line, not a path such as D:\Shares\営業部(旧): O:/G: and a SID, or D:/S:, flags, then an ACE or nothing
_SDDL_LINE = re.compile(r"(?:[OG]:(?:S-1-[\d-]+|[A-Z]{2})(?:[OGDS]:|$)|[DS]:(?:P|AI|AR|NO_ACCESS_CONTROL)*(?:\(|$))")


def detect_format(text: str) -> str:
    head = text.lstrip("\ufeff \t\r\n")[:4096]
    if _JSON_START.match(head):  # not a first path such as [旧]営業部
        return "getacl-json"
    first = head.splitlines()[0] if head else ""
    if first.startswith("#TYPE") or re.search(r'(^|,)"?(Sddl|Path|PSPath)"?(,|$)', first, re.IGNORECASE):
        return "getacl-csv"
    if re.search(r"^REVISION:", head, re.MULTILINE):
        return "smbcacls"
    return "icacls"


def read_export(
    data: bytes, *, name: str, fmt: str = "auto", expect_entries: int | None = None
) -> tuple[list[AclEntry], str]:
    """Every entry of an export, and the format it was read as; ``expect_entries``: the count the export
    step reported, compared with what was read (a file cut at an entry boundary reads as complete)."""
    if len(data) > MAX_EXPORT_BYTES:
        raise ExportError(f"{name}: larger than {MAX_EXPORT_BYTES // (1024 * 1024)} MiB; export folders only")
    if fmt not in FORMATS:
        raise ExportError(f"{name}: unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    text, _ = decode_text(data, name)
    text = text.lstrip("\ufeff")
    if fmt == "auto":
        fmt = detect_format(text)
    reader = {
        "icacls": _read_icacls,
        "getacl-json": _read_json,
        "getacl-csv": _read_csv,
        "smbcacls": _read_smbcacls,
    }[fmt]
    entries = reader(text, name)
    if not entries:
        raise ExportError(f"{name}: no entries found (read as {fmt})")
    if expect_entries is not None and len(entries) != expect_entries:
        raise ExportError(
            f"{name}: {len(entries)} entries, but the export step reported {expect_entries}: the file was cut short, "
            "or paths failed (icacls /c goes on past what it cannot read); export again"
        )
    return entries, fmt


def _check_count(entries: list[AclEntry], name: str) -> None:
    if len(entries) >= MAX_ENTRIES:
        raise ExportError(f"{name}: more than {MAX_ENTRIES} entries; export folders only (Get-ChildItem -Directory)")


def _entry(path: str, sddl: str, where: str, at: str) -> AclEntry:
    """An entry from an SDDL string: its DACL, and its SACL's mandatory label where there is one."""
    try:
        descriptor = parse_sddl(sddl, where=where)
    except SddlError as exc:
        raise ExportError(str(exc)) from None
    if descriptor.dacl is None:
        raise ExportError(f"{where}: the security descriptor has no DACL (D:...); export the DACL too")
    return AclEntry(path=path, dacl=descriptor.dacl, where=at, labels=descriptor.labels)


def _read_icacls(text: str, name: str) -> list[AclEntry]:
    lines = text.split("\n")
    while lines and not lines[-1].strip("\r\x00 "):
        lines.pop()
    entries: list[AclEntry] = []
    i = 0
    while i < len(lines):
        path = lines[i].rstrip("\r")
        if len(path) > MAX_LINE_CHARS:
            raise ExportError(f"{name}: line {i + 1}: longer than {MAX_LINE_CHARS} characters")
        if _SDDL_LINE.match(path):
            raise ExportError(f"{name}: line {i + 1}: an SDDL line where a path was expected (a path line is missing)")
        if i + 1 >= len(lines):
            raise ExportError(f"{name}: line {i + 1}: the path {path[:80]!r} has no SDDL line after it")
        sddl = lines[i + 1].rstrip("\r")
        if len(sddl) > MAX_LINE_CHARS:
            raise ExportError(f"{name}: line {i + 2}: longer than {MAX_LINE_CHARS} characters")
        if sddl[:2] not in ("D:", "O:", "G:", "S:"):
            raise ExportError(
                f"{name}: line {i + 2}: expected the SDDL (D:...) of {path[:80]!r}, found {sddl[:40]!r}; "
                "is this an icacls /save file?"
            )
        entries.append(_entry(path, sddl, f"{name}: line {i + 2}", f"{name}: line {i + 1}"))
        _check_count(entries, name)
        i += 2
    return entries


def _get(item: dict[str, Any], *names: str) -> Any:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for n in names:
        if n.lower() in lowered:
            return lowered[n.lower()]
    return None


def _path_of(item: dict[str, Any], where: str) -> str:
    value = _get(item, "Path", "PSPath", "FullName")
    if not isinstance(value, str) or not value.strip():
        raise ExportError(f"{where}: no Path (or PSPath) string; export with Select-Object Path, Sddl")
    return value


# FileSystemRights names ([System.Security.AccessControl.FileSystemRights]) -> bits
_FS_RIGHTS = {
    "readdata": 0x1,
    "listdirectory": 0x1,
    "writedata": 0x2,
    "createfiles": 0x2,
    "appenddata": 0x4,
    "createdirectories": 0x4,
    "readextendedattributes": 0x8,
    "writeextendedattributes": 0x10,
    "executefile": 0x20,
    "traverse": 0x20,
    "deletesubdirectoriesandfiles": 0x40,
    "readattributes": 0x80,
    "writeattributes": 0x100,
    "delete": 0x10000,
    "readpermissions": 0x20000,
    "changepermissions": 0x40000,
    "takeownership": 0x80000,
    "synchronize": 0x100000,
    "fullcontrol": 0x1F01FF,
    "read": 0x20089,
    "readandexecute": 0x200A9,
    "write": 0x116,
    "modify": 0x301BF,
    "genericread": 0x80000000,
    "genericwrite": 0x40000000,
    "genericexecute": 0x20000000,
    "genericall": 0x10000000,
}


def _names_or_number(value: Any, table: dict[str, int], where: str, what: str) -> int:
    if isinstance(value, bool):
        raise ExportError(f"{where}: {what} is a boolean")
    if isinstance(value, int):
        return value & 0xFFFFFFFF  # FileSystemRights is an Int32: GENERIC_READ arrives negative
    if isinstance(value, dict) and "value__" in value:
        return _names_or_number(value["value__"], table, where, what)
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+", text):
            return int(text) & 0xFFFFFFFF
        total = 0
        for part in text.split(","):
            key = part.strip().replace(" ", "").lower()
            if not key or key == "none":
                continue
            if key not in table:
                raise ExportError(f"{where}: unknown {what} {part.strip()!r}")
            total |= table[key]
        return total
    raise ExportError(f"{where}: {what} is missing or not a number or names")


def _rule_ace(rule: dict[str, Any], where: str) -> Ace:
    identity = _get(rule, "IdentityReference", "Identity", "Sid")
    if isinstance(identity, dict):
        identity = _get(identity, "Value")
    if not isinstance(identity, str) or not identity.strip():
        raise ExportError(f"{where}: no IdentityReference")
    kind_value = _get(rule, "AccessControlType")
    kind = {"0": ALLOW, "allow": ALLOW, "1": DENY, "deny": DENY}.get(str(kind_value).strip().lower())
    if kind is None:
        raise ExportError(f"{where}: AccessControlType {kind_value!r} is neither Allow (0) nor Deny (1)")
    mask = _names_or_number(_get(rule, "FileSystemRights", "Rights"), _FS_RIGHTS, where, "FileSystemRights")
    inheritance = _names_or_number(
        _get(rule, "InheritanceFlags") or 0, {"containerinherit": 1, "objectinherit": 2}, where, "InheritanceFlags"
    )
    propagation = _names_or_number(
        _get(rule, "PropagationFlags") or 0, {"nopropagateinherit": 1, "inheritonly": 2}, where, "PropagationFlags"
    )
    flags = 0
    flags |= CONTAINER_INHERIT if inheritance & 1 else 0
    flags |= OBJECT_INHERIT if inheritance & 2 else 0
    flags |= NO_PROPAGATE_INHERIT if propagation & 1 else 0
    flags |= INHERIT_ONLY if propagation & 2 else 0
    flags |= INHERITED if _get(rule, "IsInherited") in (True, "True", "true") else 0
    return Ace(kind=kind, type="A" if kind == ALLOW else "D", flags=flags, mask=mask, trustee=identity.strip())


def _item_entry(item: Any, where: str) -> AclEntry:
    if not isinstance(item, dict):
        raise ExportError(f"{where}: not an object with Path and Sddl")
    path = _path_of(item, where)
    sddl = _get(item, "Sddl")
    if isinstance(sddl, str) and sddl.strip():
        return _entry(path, sddl, f"{where} (Sddl)", where)
    rules = _get(item, "Access", "AccessRules")
    if not isinstance(rules, list):
        raise ExportError(f"{where}: neither Sddl nor a list of Access rules (ConvertTo-Json -Depth 4 keeps them)")
    aces = tuple(_rule_ace(r if isinstance(r, dict) else {}, f"{where}: Access[{i}]") for i, r in enumerate(rules))
    protected = _get(item, "AreAccessRulesProtected") in (True, "True", "true")
    # .NET's rules show a callback (conditional) ACE as a plain allow or deny and leave object ACEs out: the
    # importer says so (an exact map needs the Sddl)
    dacl = Dacl(null=True, protected=protected) if _dotnet_null_dacl(aces) else Dacl(aces=aces, protected=protected)
    return AclEntry(path=path, dacl=dacl, where=where, access_rules=True)


def _dotnet_null_dacl(aces: tuple[Ace, ...]) -> bool:
    """Whether Access rules are how .NET shows a NULL DACL: one explicit allow of every bit (-1) for Everyone
    (``CommonSecurityDescriptor`` fills a missing DACL with ``DiscretionaryAcl.CreateAllowEveryoneFullAccess``,
    inheritable on a folder). Read as what it is: a folder's new files do not inherit it (a real DACL with
    that one ACE would be read narrower, never wider)."""
    if len(aces) != 1:
        return False
    ace = aces[0]
    everyone = ace.trustee.upper() in ("S-1-1-0", "WD") or ace.trustee.casefold() == "everyone"
    return ace.kind == ALLOW and ace.mask == 0xFFFFFFFF and not ace.inherited and everyone


def _read_json(text: str, name: str) -> list[AclEntry]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", "?")
        raise ExportError(f"{name}: line {line}: not valid JSON ({exc})") from None
    items = document if isinstance(document, list) else [document]
    entries: list[AclEntry] = []
    for i, item in enumerate(items):
        path = item.get("Path") if isinstance(item, dict) else None
        entries.append(_item_entry(item, f"{name}: item {i}" + (f" ({str(path)[:80]})" if path else "")))
        _check_count(entries, name)
    return entries


def _read_csv(text: str, name: str) -> list[AclEntry]:
    lines = text.splitlines(keepends=True)
    skipped = 0
    while lines and lines[0].startswith("#TYPE"):
        lines.pop(0)
        skipped += 1
    csv.field_size_limit(MAX_LINE_CHARS)
    reader = csv.DictReader(io.StringIO("".join(lines)))
    fields = {f.lower() for f in reader.fieldnames or []}
    if "sddl" not in fields or not ({"path", "pspath"} & fields):
        raise ExportError(f"{name}: line {skipped + 1}: a CSV needs Path and Sddl columns (found {reader.fieldnames})")
    entries: list[AclEntry] = []
    try:
        for row in reader:
            entries.append(_item_entry(dict(row), f"{name}: line {reader.line_num + skipped}"))
            _check_count(entries, name)
    except csv.Error as exc:
        raise ExportError(f"{name}: line {reader.line_num + skipped}: {exc}") from None
    return entries


# smbcacls prints ALLOWED and DENIED by name and every other ACE type as its number ([MS-DTYP] 2.4.4.1):
# number -> (kind, the SDDL token, conditional (callback), object-specific). A callback ACE's condition
# is not printed: its allow gives nothing, its deny applies; an object ACE's GUID is not printed either.
_SMB_TYPES: dict[str, tuple[str, str, bool, bool]] = {
    "allowed": (ALLOW, "A", False, False),
    "denied": (DENY, "D", False, False),
    "0": (ALLOW, "A", False, False),
    "1": (DENY, "D", False, False),
    "4": (ALLOW, "A4", True, False),  # allowed compound (impersonation): never a plain allow
    "5": (ALLOW, "OA", False, True),
    "6": (DENY, "OD", False, True),
    "9": (ALLOW, "XA", True, False),
    "10": (DENY, "XD", True, False),
    "11": (ALLOW, "ZA", True, True),
    "12": (DENY, "D12", True, True),  # denied callback object: no SDDL token
    "17": (OTHER, "ML", False, False),  # the SACL's, should a listing carry them: they restrict (the entry's labels)
    "20": (OTHER, "TL", False, False),
    "21": (OTHER, "FL", True, False),
    **{str(n): (OTHER, str(n), False, False) for n in (2, 3, 7, 8, 13, 14, 15, 16, 18, 19)},  # audit, attributes, ...
}
_SMB_FLAGS = {
    "OI": OBJECT_INHERIT,
    "CI": CONTAINER_INHERIT,
    "NP": NO_PROPAGATE_INHERIT,
    "IO": INHERIT_ONLY,
    "I": INHERITED,
}
# smbcacls' permission names (Samba's source3/lib/util_sd.c): the combined ones, then the letters
_SMB_STANDARD = {"READ": 0x1200A9, "CHANGE": 0x1301BF, "FULL": 0x1F01FF}
_SMB_SPECIAL = {"R": 0x120089, "W": 0x120116, "X": 0x1200A0, "D": 0x10000, "P": 0x40000, "O": 0x80000}


def _smb_number(text: str) -> int | None:
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text) if text.isdigit() else None
    except ValueError:
        return None


def _smb_ace(spec: str, where: str) -> Ace:
    body = spec[len("ACL:") :]
    trustee, sep, rest = body.rpartition(":")
    if not sep or not trustee.strip():
        raise ExportError(f"{where}: expected ACL:<sid or name>:<type>/<flags>/<mask>, found {spec[:80]!r}")
    parts = rest.split("/")
    if len(parts) != 3:
        raise ExportError(f"{where}: expected <type>/<flags>/<mask> after the trustee, found {rest!r}")
    type_text, flags_text, mask_text = (p.strip() for p in parts)
    number = _smb_number(type_text)
    ace_type = _SMB_TYPES.get(str(number) if number is not None else type_text.lower())
    if ace_type is None:  # a type no version of [MS-DTYP] has: whether it denies is unknown
        raise ExportError(f"{where}: ACE type {type_text!r} is not an ACE type smbcacls prints (ALLOWED, DENIED, 0-21)")
    kind, token, conditional, object_specific = ace_type
    flags = _smb_number(flags_text)
    if flags is None:
        flags = 0
        for name in flags_text.split("|"):  # not `token`: that is the ACE's type
            if name.strip() not in _SMB_FLAGS:
                raise ExportError(f"{where}: unknown ACE flag {name!r} in {flags_text!r}")
            flags |= _SMB_FLAGS[name.strip()]
    mask = _smb_number(mask_text)
    if mask is None:
        if mask_text.upper() in _SMB_STANDARD:
            mask = _SMB_STANDARD[mask_text.upper()]
        else:
            mask = 0
            for letter in mask_text:
                if letter.upper() not in _SMB_SPECIAL:
                    raise ExportError(f"{where}: unknown permission {letter!r} in {mask_text!r}")
                mask |= _SMB_SPECIAL[letter.upper()]
    return Ace(
        kind=kind,
        type=token,
        flags=flags,
        mask=mask,
        trustee=trustee,
        conditional=conditional,
        object_specific=object_specific,
    )


class _SmbBlocks:
    """smbcacls output, line by line: a path line, then REVISION/CONTROL/OWNER/GROUP/ACL lines."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.entries: list[AclEntry] = []
        self.pending_path: str | None = None
        self.block: dict[str, Any] | None = None

    def close(self) -> None:
        if self.block is not None:
            b = self.block
            aces = tuple(a for a in b["aces"] if a.type not in RESTRICTING)
            labels = tuple(a for a in b["aces"] if a.type in RESTRICTING)
            self.entries.append(AclEntry(b["path"], Dacl(aces=aces, protected=b["protected"]), b["where"], labels))
            _check_count(self.entries, self.name)
        self.block = None

    def _current(self, line: str, where: str) -> dict[str, Any]:
        if self.block is None:
            raise ExportError(f"{where}: {line.split(':', maxsplit=1)[0]} before REVISION:")
        return self.block

    def line(self, line: str, where: str, raw: str) -> None:
        """``line`` stripped, to recognise smbcacls' own lines; ``raw`` as written, for a path."""
        if line.startswith("REVISION:"):
            self.close()
            path = self.pending_path
            if path is None:
                if self.entries:
                    raise ExportError(f"{where}: a second smbcacls block without a line naming its path before it")
                path = ""
            self.block = {"path": path, "aces": [], "protected": False, "where": where}
            self.pending_path = None
        elif line.startswith("CONTROL:"):
            value = line[len("CONTROL:") :].strip()
            number = _smb_number(value)
            protected = bool(number & 0x1000) if number is not None else "PD" in value.split("|")
            self._current(line, where)["protected"] = protected
        elif line.startswith(("OWNER:", "GROUP:", "GROUP ")):
            self._current(line, where)
        elif line.startswith("ACL:"):
            self._current(line, where)["aces"].append(_smb_ace(line, where))
        elif not line.startswith("Maximum access:"):
            self.close()
            if self.pending_path is not None:
                raise ExportError(
                    f"{where}: two path lines in a row ({self.pending_path[:60]!r}, {line[:60]!r}); "
                    "smbcacls printed nothing for the first?"
                )
            self.pending_path = raw.removeprefix("FILENAME:")  # a name may end in a space: kept


def _read_smbcacls(text: str, name: str) -> list[AclEntry]:
    blocks = _SmbBlocks(name)
    for number, written in enumerate(text.split("\n"), start=1):
        raw = written.removesuffix("\r")
        line = raw.strip()
        if len(line) > MAX_LINE_CHARS:
            raise ExportError(f"{name}: line {number}: longer than {MAX_LINE_CHARS} characters")
        if line:
            blocks.line(line, f"{name}: line {number}", raw)
    blocks.close()
    if blocks.pending_path is not None:
        raise ExportError(f"{name}: the last path {blocks.pending_path[:80]!r} has no smbcacls block after it")
    return blocks.entries


def split_path(raw: str) -> tuple[str, ...]:
    """A Windows (or POSIX) path as its components: provider prefix, ``\\\\?\\``, separators and ``.``
    removed; each name exactly as written (``報告 `` and ``人事部　`` keep their trailing space)."""
    text = _PROVIDER.sub("", raw)
    if text.startswith("\\\\?\\UNC\\"):
        text = "\\\\" + text[len("\\\\?\\UNC\\") :]
    elif text.startswith("\\\\?\\"):
        text = text[len("\\\\?\\") :]
    # '.' is the folder itself: `icacls . /save acl.txt /t` run in the share writes '.' and '.\\営業部'
    parts = tuple(p for p in re.split(r"[\\/]+", text) if p and p != ".")
    if ".." in parts:
        raise ExportError(f"path {raw!r}: '..' in it")
    return parts
