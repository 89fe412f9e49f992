"""What every OOXML package (DOCX, XLSX, PPTX) is made of: a deterministic zip and its bookkeeping parts.

Content types, relationships, core and app properties, written by hand as
strings (no python-docx, no openpyxl). The zip has fixed timestamps, so the
same arguments give the same bytes.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape as _escape  # escapes XML we generate; parses nothing  # nosec B406

# Every member of every generated zip carries this timestamp (deterministic bytes).
ZIP_TIME = (2024, 4, 1, 9, 0, 0)


def escape(text: str) -> str:
    """Escape text for XML element content and double-quoted attributes."""
    return _escape(text, {'"': "&quot;"})


NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
NS_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
NS_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
NS_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
NS_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
CT = "application/vnd.openxmlformats-officedocument"
XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def zip_parts(parts: Mapping[str, str | bytes]) -> bytes:
    """A zip with fixed timestamps (deterministic bytes), members in the given order."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in parts.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, content.encode("utf-8") if isinstance(content, str) else content)
    return buf.getvalue()


def content_types(overrides: Mapping[str, str], defaults: Mapping[str, str] | None = None) -> str:
    """The ``[Content_Types].xml`` part: default types by extension plus one override per named part."""
    items = {"rels": "application/vnd.openxmlformats-package.relationships+xml", "xml": "application/xml"}
    items.update(defaults or {})
    out = [XML_DECL, '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">']
    out += [f'<Default Extension="{ext}" ContentType="{ct}"/>' for ext, ct in items.items()]
    out += [f'<Override PartName="/{name}" ContentType="{ct}"/>' for name, ct in overrides.items()]
    out.append("</Types>")
    return "".join(out)


def relationships(rels: Sequence[tuple[str, str, str]]) -> str:
    """Relationships part from (id, type, target); bare type names are officeDocument ones."""
    out = [XML_DECL, f'<Relationships xmlns="{NS_PKG_REL}">']
    for rid, kind, target in rels:
        full = kind if "://" in kind else f"{NS_REL}/{kind}"
        out.append(f'<Relationship Id="{rid}" Type="{full}" Target="{escape(target)}"/>')
    out.append("</Relationships>")
    return "".join(out)


def package_relationships(main: str) -> str:
    """The package's ``_rels/.rels``: the main part ``main`` and the two properties parts."""
    return relationships(
        [
            ("rId1", "officeDocument", main),
            ("rId2", f"{NS_PKG_REL}/metadata/core-properties", "docProps/core.xml"),
            ("rId3", "extended-properties", "docProps/app.xml"),
        ]
    )


def core_xml(title: str | None) -> str:
    """``docProps/core.xml`` with ``title`` (if any) and fixed author and dates."""
    return (
        f"{XML_DECL}<cp:coreProperties"
        ' xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"'
        ' xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        + (f"<dc:title>{escape(title)}</dc:title>" if title else "")
        + "<dc:creator>docindex samples</dc:creator>"
        '<dcterms:created xsi:type="dcterms:W3CDTF">2024-04-01T09:00:00Z</dcterms:created>'
        '<dcterms:modified xsi:type="dcterms:W3CDTF">2024-04-01T09:00:00Z</dcterms:modified>'
        "</cp:coreProperties>"
    )


APP_XML = (
    f"{XML_DECL}<Properties"
    ' xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
    "<Application>docindex samples</Application></Properties>"
)
CORE_OVERRIDES = {
    "docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
    "docProps/app.xml": f"{CT}.extended-properties+xml",
}
