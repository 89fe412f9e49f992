"""The file server's own permissions in docindex: read an ACL export, write the access map, see drift.

- :mod:`~docindex.access.ntfs.sddl`: SDDL strings ([MS-DTYP] 2.5.1) → ACEs.
- :mod:`~docindex.access.ntfs.exports`: icacls /save, Get-Acl JSON/CSV and smbcacls files → entries.
- :mod:`~docindex.access.ntfs.principals`: well-known SIDs and the mapping file → docindex principals.
- :mod:`~docindex.access.ntfs.readers`: an ordered DACL → who may read, in the safe direction.
- :mod:`~docindex.access.ntfs.importer`: entries → access map rules and the report.
- :mod:`~docindex.access.ntfs.drift`: a fresh export against the applied map.

``load`` ties them together for ``docindex access import`` and ``docindex access diff``. None of
it runs in the Lambda functions or the worker: the map it writes is an ordinary access map.
"""

from __future__ import annotations

from pathlib import Path

from docindex.access.ntfs.exports import ExportError, read_export, split_path
from docindex.access.ntfs.importer import ImportResult, KeyRules, import_acls, normalize_prefix
from docindex.access.ntfs.principals import Mapping, MappingError, read_mapping

__all__ = ["ExportError", "ImportResult", "MappingError", "load"]


def load(
    export: Path,
    *,
    mapping: Path | None = None,
    fmt: str = "auto",
    strip: str | None = None,
    prefix: str = "",
    bucket: str | None = None,
    domain_sid: str | None = None,
    expect_entries: int | None = None,
) -> tuple[ImportResult, str]:
    """Read ``export`` and ``mapping`` and import them; the result and the format the export was read as."""
    from docindex.access.ntfs.exports import MAX_EXPORT_BYTES

    try:
        if export.stat().st_size > MAX_EXPORT_BYTES:
            raise ExportError(f"{export}: larger than {MAX_EXPORT_BYTES // (1024 * 1024)} MiB; export folders only")
        data = export.read_bytes()
        names = (
            read_mapping(mapping.read_bytes(), name=str(mapping), domain_sid=domain_sid)
            if mapping is not None
            else Mapping(domain_sid=domain_sid.upper() if domain_sid else None)
        )
    except OSError as exc:
        raise ExportError(f"{exc.filename or export}: {exc.strerror or exc}") from None
    entries, found = read_export(data, name=str(export), fmt=fmt, expect_entries=expect_entries)
    keys = KeyRules(strip=split_path(strip) if strip is not None else None, prefix=normalize_prefix(prefix))
    return import_acls(entries, names, keys, bucket=bucket), found
