"""Where an indexed file lives on the file server: key prefixes mapped back to the shares they were copied from.

A sync copied a share into the bucket under a prefix (``aws s3 sync //fs01/Shares s3://docs/nas/``);
this module turns a key back into the path people paste into Explorer or Finder::

    nas/=\\\\fs01\\Shares                  nas/営業部/見積 #3.xlsx -> \\\\fs01\\Shares\\営業部\\見積 #3.xlsx
    synology/営業/=\\\\synology\\営業       synology/営業/2024/a.pdf -> \\\\synology\\営業\\2024\\a.pdf

in the terms of ``docindex access import``: the prefix is its ``--prefix`` (read by the importer's own
``normalize_prefix``: ``nas``, ``nas/`` and ``\\nas\\`` are one prefix), the share is the file server
path whose contents went under it, written as the importer reads paths (``split_path``: ``\\`` or
``/``, ``\\\\?\\UNC\\``, PowerShell's provider prefix). The relation is the importer's inverted: the
import makes a key of ``prefix + the path below --strip with /``; here a key becomes ``share + the key
below prefix with \\``. Names are kept exactly as written (spaces, Japanese, ``#``, ``%``, ``&``,
leading and trailing dots): nothing is trimmed or re-encoded in the Windows path. The ``smb://`` form
for a Mac percent-encodes each name as RFC 3986 requires (UTF-8, everything but the unreserved characters).

A key under no mapped prefix, or one no Windows share can hold (a backslash, a character Windows
forbids in names, an empty or ``.``/``..`` segment), has no path: no path is better than a wrong one.

The setting (``FILE_SERVER_SHARES``; template parameter ``FileServerShares``) is ``PREFIX=SHARE`` entries
separated by ``;`` or new lines, or a JSON list of ``{"prefix", "share", "bucket"?, "smb"?}`` objects
(for a share whose path holds ``;``, one mapping per bucket, or an ``smb://`` address other than the
server's name, e.g. its DNS name for Macs). A prefix written ``s3://bucket/prefix`` applies to that
bucket only. The longest matching prefix wins.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

# Characters Windows refuses in a file or folder name ([MS-FSCC] 2.1.5.2, plus the separators).
_NOT_IN_WINDOWS_NAMES = re.compile(r'[\x00-\x1f<>:"|?*\\]')
_DRIVE = re.compile(r"^[A-Za-z]:$")
# An entry's share starts here: \\server, //server, \\?\..., a drive (S:), or PowerShell's provider prefix.
_SHARE_START = re.compile(r"=(?=\\\\|//|[A-Za-z]:(?:[\\/]|$)|[A-Za-z.]+\\FileSystem::)")
MAX_SHARES = 200


class SharesError(ValueError):
    """The share mapping cannot be read (which entry, and what was expected)."""


@dataclass(frozen=True, slots=True)
class Location:
    """A file's place on the file server: its Windows path, its folder's, and both as ``smb://`` URLs."""

    path: str
    folder: str
    smb: str | None
    smb_folder: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "folder": self.folder, "smb": self.smb, "smb_folder": self.smb_folder}


@dataclass(frozen=True, slots=True)
class Share:
    """One mapping: keys under ``prefix`` (of ``bucket``, or any) live under the share ``root``."""

    prefix: str
    root: tuple[str, ...]  # ('fs01', 'Shares') for \\fs01\Shares, ('S:',) for a mapped drive
    bucket: str | None = None
    smb_root: str | None = None  # smb://host/share, when given apart from the UNC path

    @property
    def unc(self) -> bool:
        return not _DRIVE.match(self.root[0])

    def windows(self, parts: tuple[str, ...]) -> str:
        if self.unc:
            return "\\\\" + "\\".join((*self.root, *parts))
        return "\\".join((self.root[0], *self.root[1:], *parts)) if parts or len(self.root) > 1 else self.root[0] + "\\"

    def smb(self, parts: tuple[str, ...], *, folder: bool) -> str | None:
        if self.smb_root is None and not self.unc:
            return None  # a drive letter says nothing of the server
        base = self.smb_root or "smb://" + "/".join(quote(p, safe="") for p in self.root)
        tail = "".join("/" + quote(p, safe="") for p in parts)
        return base.rstrip("/") + tail + ("/" if folder else "")


class Shares:
    """The share mapping: which key prefix is which share (``locate`` a key)."""

    def __init__(self, shares: list[Share] | tuple[Share, ...] = ()) -> None:
        # Longest prefix first; a bucket-bound entry before an unbound one of the same prefix.
        self.shares = tuple(sorted(shares, key=lambda s: (-len(s.prefix), s.bucket is None)))

    def __bool__(self) -> bool:
        return bool(self.shares)

    def __len__(self) -> int:
        return len(self.shares)

    def locate(self, bucket: str | None, key: str) -> Location | None:
        """Where ``key`` (of ``bucket``) is on the file server; None when no share holds it."""
        for share in self.shares:
            if key.startswith(share.prefix) and (share.bucket is None or share.bucket == bucket):
                return _location(share, key[len(share.prefix) :])
        return None

    def describe(self) -> list[str]:
        """Each mapping as one line, for the operator (``nas/ -> \\\\fs01\\Shares``)."""
        return [
            f"{'s3://' + s.bucket + '/' if s.bucket else ''}{s.prefix or '(every key)'} -> {s.windows(())}"
            for s in self.shares
        ]


def _location(share: Share, rest: str) -> Location | None:
    parts = tuple(rest.split("/"))
    if not rest or any(not p or p in (".", "..") or _NOT_IN_WINDOWS_NAMES.search(p) for p in parts):
        return None  # not a name a Windows share can hold: no path rather than a wrong one
    return Location(
        path=share.windows(parts),
        folder=share.windows(parts[:-1]),
        smb=share.smb(parts, folder=False),
        smb_folder=share.smb(parts[:-1], folder=True),
    )


def _share_root(text: str, where: str) -> tuple[str, ...]:
    from docindex.access.ntfs.exports import ExportError, split_path

    raw = text.strip()
    if "::" in raw:  # Microsoft.PowerShell.Core\FileSystem::\\fs01\Shares, as Get-Acl writes paths
        raw = raw.split("::", 1)[1]
    try:
        parts = split_path(raw)
    except ExportError as exc:
        raise SharesError(f"{where}: {exc}") from None
    unc = raw[:2] in ("\\\\", "//") and not (len(parts) > 0 and _DRIVE.match(parts[0]))
    if not parts or (not unc and not _DRIVE.match(parts[0])):
        raise SharesError(
            f"{where}: {text!r} is not a share: write \\\\server\\share (or //server/share) or a drive (S:\\)"
        )
    if unc and len(parts) < 2:
        raise SharesError(f"{where}: {text!r} names a server but no share: \\\\server\\share")
    bad = next((p for p in parts[1:] if _NOT_IN_WINDOWS_NAMES.search(p)), None)
    if bad is not None:
        raise SharesError(f"{where}: {bad!r} in {text!r} is not a Windows name")
    return parts


def _share(prefix: str, path: str, where: str, *, bucket: str | None = None, smb: str | None = None) -> Share:
    from docindex.access.ntfs.importer import normalize_prefix

    prefix = prefix.strip()
    if prefix.startswith("s3://"):
        if bucket is not None:
            raise SharesError(f"{where}: give the bucket once (in s3://bucket/prefix or as bucket)")
        bucket, _, prefix = prefix[len("s3://") :].partition("/")
        if not bucket:
            raise SharesError(f"{where}: s3:// without a bucket")
    if smb is not None and not re.match(r"^smb://[^/\s]+/[^/\s]+", smb):
        raise SharesError(f"{where}: smb must be smb://server/share, not {smb!r}")
    return Share(prefix=normalize_prefix(prefix), root=_share_root(path, where), bucket=bucket or None, smb_root=smb)


def _json_entries(text: str, name: str) -> list[Share]:
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SharesError(f"{name}: not JSON: {exc}") from None
    if not isinstance(entries, list):
        raise SharesError(f"{name}: a JSON list of {{prefix, share}} objects")
    shares = []
    for number, entry in enumerate(entries, 1):
        where = f"{name}: entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("share"), str):
            raise SharesError(f"{where}: an object with prefix and share")
        unknown = set(entry) - {"prefix", "share", "bucket", "smb", "description"}
        if unknown:
            raise SharesError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        bucket, smb = entry.get("bucket"), entry.get("smb")
        shares.append(
            _share(
                str(entry.get("prefix", "")),
                entry["share"],
                where,
                bucket=str(bucket) if bucket else None,
                smb=str(smb) if smb else None,
            )
        )
    return shares


def _text_entries(text: str, name: str) -> list[Share]:
    shares = []
    for number, line in enumerate((e for e in re.split(r"[;\n]", text) if e.strip()), 1):
        where = f"{name}: entry {number}"
        found = _SHARE_START.search(line)
        if found is None:
            raise SharesError(f"{where}: {line.strip()!r} is not PREFIX=\\\\server\\share")
        shares.append(_share(line[: found.start()], line[found.end() :], where))
    return shares


def parse_shares(text: str | None, *, name: str = "FILE_SERVER_SHARES") -> Shares:
    """The mapping written in ``text``: ``PREFIX=SHARE`` entries (``;`` or new lines), or a JSON list."""
    text = (text or "").strip()
    if not text:
        return Shares()
    shares = _json_entries(text, name) if text.startswith("[") else _text_entries(text, name)
    if len(shares) > MAX_SHARES:
        raise SharesError(f"{name}: {len(shares)} mappings, at most {MAX_SHARES}")
    seen: set[tuple[str, str | None]] = set()
    for share in shares:
        if (share.prefix, share.bucket) in seen:
            raise SharesError(f"{name}: the prefix {share.prefix!r} is mapped twice")
        seen.add((share.prefix, share.bucket))
    return Shares(shares)
