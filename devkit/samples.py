"""Deterministic sample documents, as bytes, for tests, the demo, benchmarks and soak tests.

Every generator returns the same bytes for the same arguments (fixed zip
timestamps, reportlab's invariant mode, fixed PDF dates), so benchmarks and
golden tests are stable. No binary fixtures are committed: tests build what
they need here at run time.

Office files are written as OOXML by hand (zipfile + strings), so neither
python-docx nor openpyxl is needed; the packages are minimal but well formed
(content types, relationships, core properties). PDFs use reportlab with its
built-in Japanese CID fonts (``HeiseiKakuGo-W5``, ``HeiseiMin-W3``: no font
files). Scans are rendered with Pillow and a Japanese TrueType font found on
the system (Debian: ``fonts-ipafont-gothic``).

reportlab and Pillow are imported inside the functions that need them:
importing this module costs nothing, and the Lambda layer (which ships
neither) can still import it.

Hostile samples (zip bombs, XXE, billion laughs, corrupt files) are here too,
so soak tests can mix them into a corpus.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import shutil
import struct
import subprocess  # fc-list lookup of a Japanese font, fixed argv  # nosec B404
import unicodedata
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time
from typing import Any, TypedDict, Unpack
from xml.sax.saxutils import escape as _escape  # escapes XML we generate; parses nothing  # nosec B406

__all__ = [
    "HTML_NOISE_MARKERS",
    "SCAN_PAGE_SIZES",
    "ScanLayout",
    "char_accuracy",
    "find_japanese_font",
    "make_bad_xref_pdf",
    "make_billion_laughs_docx",
    "make_billion_laughs_xml",
    "make_corrupt_docx",
    "make_corrupt_pdf",
    "make_corrupt_png",
    "make_csv",
    "make_docx",
    "make_encrypted_office",
    "make_encrypted_pdf",
    "make_html",
    "make_many_pages_pdf",
    "make_pdf",
    "make_png_bomb",
    "make_pptx",
    "make_scan_image",
    "make_scan_pdf",
    "make_scan_png",
    "make_scan_tiff",
    "make_text",
    "make_xls",
    "make_xlsx",
    "make_xxe_docx",
    "make_zip_bomb",
    "render_scan_page",
    "sample_corpus",
]

_ZIP_TIME = (2024, 4, 1, 9, 0, 0)
_JA_FONT_PACKAGE = "fonts-ipafont-gothic"
_JA_FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
    "/usr/share/fonts/truetype/fonts-japanese-gothic.ttf",
    "/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf",
    "/usr/share/fonts/truetype/takao-gothic/TakaoGothic.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/System/Library/Fonts/ヒラギノ角ゴシック W3.ttc",
)
# Words that sit in <script>, <style>, <noscript> and <template> of make_html
# pages: extracted text must never contain them.
HTML_NOISE_MARKERS = ("SCRIPTNOISE", "STYLENOISE", "NOSCRIPTNOISE", "TEMPLATENOISE")


def _x(text: str) -> str:
    """Escape text for XML element content and double-quoted attributes."""
    return _escape(text, {'"': "&quot;"})


# --------------------------------------------------------------------------- OOXML package


_NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_NS_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_NS_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NS_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_NS_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_NS_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_CT = "application/vnd.openxmlformats-officedocument"
_XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def _zip(parts: Mapping[str, str | bytes]) -> bytes:
    """A zip with fixed timestamps (deterministic bytes), members in the given order."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in parts.items():
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, content.encode("utf-8") if isinstance(content, str) else content)
    return buf.getvalue()


def _content_types(overrides: Mapping[str, str], defaults: Mapping[str, str] | None = None) -> str:
    items = {"rels": "application/vnd.openxmlformats-package.relationships+xml", "xml": "application/xml"}
    items.update(defaults or {})
    out = [_XML_DECL, '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">']
    out += [f'<Default Extension="{ext}" ContentType="{ct}"/>' for ext, ct in items.items()]
    out += [f'<Override PartName="/{name}" ContentType="{ct}"/>' for name, ct in overrides.items()]
    out.append("</Types>")
    return "".join(out)


def _rels(rels: Sequence[tuple[str, str, str]]) -> str:
    """Relationships part from (id, type, target); bare type names are officeDocument ones."""
    out = [_XML_DECL, f'<Relationships xmlns="{_NS_PKG_REL}">']
    for rid, kind, target in rels:
        full = kind if "://" in kind else f"{_NS_REL}/{kind}"
        out.append(f'<Relationship Id="{rid}" Type="{full}" Target="{_x(target)}"/>')
    out.append("</Relationships>")
    return "".join(out)


def _package_rels(main: str) -> str:
    return _rels(
        [
            ("rId1", "officeDocument", main),
            ("rId2", f"{_NS_PKG_REL}/metadata/core-properties", "docProps/core.xml"),
            ("rId3", "extended-properties", "docProps/app.xml"),
        ]
    )


def _core_xml(title: str | None) -> str:
    return (
        f"{_XML_DECL}<cp:coreProperties"
        ' xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"'
        ' xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        + (f"<dc:title>{_x(title)}</dc:title>" if title else "")
        + "<dc:creator>docindex samples</dc:creator>"
        '<dcterms:created xsi:type="dcterms:W3CDTF">2024-04-01T09:00:00Z</dcterms:created>'
        '<dcterms:modified xsi:type="dcterms:W3CDTF">2024-04-01T09:00:00Z</dcterms:modified>'
        "</cp:coreProperties>"
    )


_APP_XML = (
    f"{_XML_DECL}<Properties"
    ' xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
    "<Application>docindex samples</Application></Properties>"
)
_CORE_OVERRIDES = {
    "docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
    "docProps/app.xml": f"{_CT}.extended-properties+xml",
}


# --------------------------------------------------------------------------- DOCX


def _w_runs(text: str) -> str:
    """One w:r for ``text``: tabs become w:tab, newlines w:br."""
    out = []
    for i, line in enumerate(text.split("\n")):
        if i:
            out.append("<w:br/>")
        for j, piece in enumerate(line.split("\t")):
            if j:
                out.append("<w:tab/>")
            if piece:
                out.append(f'<w:t xml:space="preserve">{_x(piece)}</w:t>')
    return f'<w:r><w:rPr><w:rFonts w:hint="eastAsia"/></w:rPr>{"".join(out)}</w:r>'


def _w_p(text: str, extra: str = "") -> str:
    return f"<w:p>{_w_runs(text)}{extra}</w:p>"


def _w_textbox(paragraphs: Sequence[str]) -> str:
    """A DrawingML text box with the VML copy in mc:Fallback, the way Word 2010+ saves it."""
    content = "".join(_w_p(p) for p in paragraphs)
    return (
        "<w:p><w:r><mc:AlternateContent>"
        '<mc:Choice Requires="wps"><w:drawing>'
        '<wp:anchor distT="0" distB="0" distL="114300" distR="114300" simplePos="0" relativeHeight="1"'
        ' behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">'
        '<wp:simplePos x="0" y="0"/>'
        '<wp:positionH relativeFrom="column"><wp:posOffset>0</wp:posOffset></wp:positionH>'
        '<wp:positionV relativeFrom="paragraph"><wp:posOffset>0</wp:posOffset></wp:positionV>'
        '<wp:extent cx="2743200" cy="914400"/><wp:effectExtent l="0" t="0" r="0" b="0"/>'
        '<wp:wrapSquare wrapText="bothSides"/><wp:docPr id="1" name="Text Box 1"/><wp:cNvGraphicFramePr/>'
        '<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
        '<wps:wsp><wps:cNvSpPr txBox="1"/><wps:spPr><a:xfrm><a:off x="0" y="0"/>'
        '<a:ext cx="2743200" cy="914400"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></wps:spPr>'
        f"<wps:txbx><w:txbxContent>{content}</w:txbxContent></wps:txbx><wps:bodyPr/></wps:wsp>"
        "</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
        '<mc:Fallback><w:pict><v:shape id="TextBox1" type="#_x0000_t202" style="width:216pt;height:72pt">'
        f"<v:textbox><w:txbxContent>{content}</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r></w:p>"
    )


def _w_table(rows: Sequence[Sequence[Any]]) -> str:
    cols = max((len(r) for r in rows), default=0)
    grid = "".join('<w:gridCol w:w="3000"/>' for _ in range(cols))
    out = [
        '<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="0" w:type="auto"/></w:tblPr>',
        f"<w:tblGrid>{grid}</w:tblGrid>",
    ]
    for row in rows:
        cells = "".join(
            f'<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>{_w_p(str(cell))}</w:tc>' for cell in row
        )
        out.append(f"<w:tr>{cells}</w:tr>")
    out.append("</w:tbl><w:p/>")
    return "".join(out)


_W_ROOT_ATTRS = (
    f'xmlns:w="{_NS_W}" xmlns:r="{_NS_REL}" xmlns:a="{_NS_A}"'
    ' xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"'
    ' xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
    ' xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    ' xmlns:v="urn:schemas-microsoft-com:vml"'
    ' xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml" mc:Ignorable="w14"'
)


def make_docx(
    paragraphs: Sequence[str],
    *,
    title: str | None = None,
    header: str | None = None,
    footer: str | None = None,
    footnote: str | None = None,
    endnote: str | None = None,
    comment: str | None = None,
    textbox: str | Sequence[str] | None = None,
    table: Sequence[Sequence[Any]] | None = None,
    body_xml: str | None = None,
) -> bytes:
    """A DOCX whose body holds ``paragraphs`` (``\\t`` -> tab, ``\\n`` -> line break).

    The footnote, endnote and comment are anchored in the first paragraph,
    the text box (with Word's VML fallback copy) follows it, the table comes
    after the paragraphs. ``body_xml`` replaces the generated ``w:body``
    content (raw WordprocessingML, for hostile or unusual samples).
    """
    parts: dict[str, str | bytes] = {}
    overrides = {"word/document.xml": f"{_CT}.wordprocessingml.document.main+xml", **_CORE_OVERRIDES}
    rels: list[tuple[str, str, str]] = []
    sect = []
    first_extra = ""
    notes_xml = (
        '<w:{tag} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{tag}>'
        '<w:{tag} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r>'
        "</w:p></w:{tag}>"
    )
    if header is not None:
        parts["word/header1.xml"] = f"{_XML_DECL}<w:hdr {_W_ROOT_ATTRS}>{_w_p(header)}</w:hdr>"
        overrides["word/header1.xml"] = f"{_CT}.wordprocessingml.header+xml"
        rels.append(("rIdHeader1", "header", "header1.xml"))
        sect.append('<w:headerReference w:type="default" r:id="rIdHeader1"/>')
    if footer is not None:
        parts["word/footer1.xml"] = f"{_XML_DECL}<w:ftr {_W_ROOT_ATTRS}>{_w_p(footer)}</w:ftr>"
        overrides["word/footer1.xml"] = f"{_CT}.wordprocessingml.footer+xml"
        rels.append(("rIdFooter1", "footer", "footer1.xml"))
        sect.append('<w:footerReference w:type="default" r:id="rIdFooter1"/>')
    if footnote is not None:
        body = notes_xml.format(tag="footnote") + (
            f'<w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r>{_w_runs(footnote)}</w:p></w:footnote>'
        )
        parts["word/footnotes.xml"] = f"{_XML_DECL}<w:footnotes {_W_ROOT_ATTRS}>{body}</w:footnotes>"
        overrides["word/footnotes.xml"] = f"{_CT}.wordprocessingml.footnotes+xml"
        rels.append(("rIdFootnotes", "footnotes", "footnotes.xml"))
        first_extra += '<w:r><w:footnoteReference w:id="1"/></w:r>'
    if endnote is not None:
        body = notes_xml.format(tag="endnote") + (
            f'<w:endnote w:id="1"><w:p><w:r><w:endnoteRef/></w:r>{_w_runs(endnote)}</w:p></w:endnote>'
        )
        parts["word/endnotes.xml"] = f"{_XML_DECL}<w:endnotes {_W_ROOT_ATTRS}>{body}</w:endnotes>"
        overrides["word/endnotes.xml"] = f"{_CT}.wordprocessingml.endnotes+xml"
        rels.append(("rIdEndnotes", "endnotes", "endnotes.xml"))
        first_extra += '<w:r><w:endnoteReference w:id="1"/></w:r>'
    if comment is not None:
        body = (
            '<w:comment w:id="0" w:author="docindex" w:date="2024-04-01T09:00:00Z" w:initials="DI">'
            f"{_w_p(comment)}</w:comment>"
        )
        parts["word/comments.xml"] = f"{_XML_DECL}<w:comments {_W_ROOT_ATTRS}>{body}</w:comments>"
        overrides["word/comments.xml"] = f"{_CT}.wordprocessingml.comments+xml"
        rels.append(("rIdComments", "comments", "comments.xml"))
        first_extra += '<w:r><w:commentReference w:id="0"/></w:r>'

    if body_xml is None:
        blocks = []
        for i, text in enumerate(paragraphs):
            blocks.append(_w_p(text, first_extra if i == 0 else ""))
            if i == 0 and textbox is not None:
                blocks.append(_w_textbox([textbox] if isinstance(textbox, str) else textbox))
        if not paragraphs and textbox is not None:
            blocks.append(_w_textbox([textbox] if isinstance(textbox, str) else textbox))
        if table:
            blocks.append(_w_table(table))
        body_xml = "".join(blocks)
    sect_pr = (
        f"<w:sectPr>{''.join(sect)}"
        '<w:pgSz w:w="11906" w:h="16838"/>'
        '<w:pgMar w:top="1985" w:right="1701" w:bottom="1701" w:left="1701" w:header="851" w:footer="992"'
        ' w:gutter="0"/></w:sectPr>'
    )
    document = f"{_XML_DECL}<w:document {_W_ROOT_ATTRS}><w:body>{body_xml}{sect_pr}</w:body></w:document>"
    return _zip(
        {
            "[Content_Types].xml": _content_types(overrides),
            "_rels/.rels": _package_rels("word/document.xml"),
            "docProps/core.xml": _core_xml(title),
            "docProps/app.xml": _APP_XML,
            "word/document.xml": document,
            "word/_rels/document.xml.rels": _rels(rels),
            **parts,
        }
    )


# --------------------------------------------------------------------------- XLSX


def _column(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = chr(65 + rem) + name
    return name


def _excel_serial(value: date | datetime) -> float:
    base = datetime(1899, 12, 30)
    if not isinstance(value, datetime):
        value = datetime.combine(value, time())
    delta = value.replace(tzinfo=None) - base
    return delta.days + delta.seconds / 86400


_XLSX_STYLES = (
    f'{_XML_DECL}<styleSheet xmlns="{_NS_S}">'
    '<fonts count="1"><font><sz val="11"/><name val="Yu Gothic"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    "</styleSheet>"
)


def make_xlsx(
    sheets: Mapping[str, Sequence[Sequence[Any]]],
    *,
    title: str | None = None,
    shared_strings: bool = True,
    cells: Mapping[str, Mapping[str, Any]] | None = None,
) -> bytes:
    """An XLSX with one worksheet per entry of ``sheets`` (name -> rows of values).

    Values: str (shared strings, or inline strings with
    ``shared_strings=False``), int, float, bool, date/datetime (date
    style), None (empty). ``cells`` adds single cells by reference
    (sheet name -> {"XFD1048576": value}), e.g. for sparse-sheet tests.
    """
    strings: dict[str, int] = {}
    parts: dict[str, str | bytes] = {}
    overrides = {
        "xl/workbook.xml": f"{_CT}.spreadsheetml.sheet.main+xml",
        "xl/styles.xml": f"{_CT}.spreadsheetml.styles+xml",
        **_CORE_OVERRIDES,
    }
    wb_rels: list[tuple[str, str, str]] = []
    sheet_entries = []

    def cell_xml(ref: str, value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return f'<c r="{ref}" t="b"><v>{int(value)}</v></c>'
        if isinstance(value, int | float):
            return f'<c r="{ref}"><v>{value!r}</v></c>'
        if isinstance(value, date | datetime):
            return f'<c r="{ref}" s="1"><v>{_excel_serial(value)!r}</v></c>'
        text = str(value)
        if shared_strings:
            index = strings.setdefault(text, len(strings))
            return f'<c r="{ref}" t="s"><v>{index}</v></c>'
        return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{_x(text)}</t></is></c>'

    for number, (name, rows) in enumerate(sheets.items(), start=1):
        out = [f'{_XML_DECL}<worksheet xmlns="{_NS_S}" xmlns:r="{_NS_REL}"><sheetData>']
        for r, row in enumerate(rows, start=1):
            body = "".join(cell_xml(f"{_column(c)}{r}", v) for c, v in enumerate(row))
            out.append(f'<row r="{r}">{body}</row>')
        for ref, value in (cells or {}).get(name, {}).items():
            row_number = "".join(ch for ch in ref if ch.isdigit())
            out.append(f'<row r="{row_number}">{cell_xml(ref, value)}</row>')
        out.append("</sheetData></worksheet>")
        part = f"xl/worksheets/sheet{number}.xml"
        parts[part] = "".join(out)
        overrides[part] = f"{_CT}.spreadsheetml.worksheet+xml"
        wb_rels.append((f"rId{number}", "worksheet", f"worksheets/sheet{number}.xml"))
        sheet_entries.append(f'<sheet name="{_x(name)}" sheetId="{number}" r:id="rId{number}"/>')
    wb_rels.append(("rIdStyles", "styles", "styles.xml"))
    if strings:
        items = "".join(f'<si><t xml:space="preserve">{_x(s)}</t></si>' for s in strings)
        parts["xl/sharedStrings.xml"] = (
            f'{_XML_DECL}<sst xmlns="{_NS_S}" count="{len(strings)}" uniqueCount="{len(strings)}">{items}</sst>'
        )
        overrides["xl/sharedStrings.xml"] = f"{_CT}.spreadsheetml.sharedStrings+xml"
        wb_rels.append(("rIdStrings", "sharedStrings", "sharedStrings.xml"))
    workbook = (
        f'{_XML_DECL}<workbook xmlns="{_NS_S}" xmlns:r="{_NS_REL}"><sheets>{"".join(sheet_entries)}</sheets></workbook>'
    )
    return _zip(
        {
            "[Content_Types].xml": _content_types(overrides),
            "_rels/.rels": _package_rels("xl/workbook.xml"),
            "docProps/core.xml": _core_xml(title),
            "docProps/app.xml": _APP_XML,
            "xl/workbook.xml": workbook,
            "xl/_rels/workbook.xml.rels": _rels(wb_rels),
            "xl/styles.xml": _XLSX_STYLES,
            **parts,
        }
    )


# --------------------------------------------------------------------------- XLS (BIFF8)


def _biff(record: int, payload: bytes) -> bytes:
    return struct.pack("<HH", record, len(payload)) + payload


def _biff_string(text: str, length_bytes: int) -> bytes:
    """XLUnicodeString (2-byte length) or ShortXLUnicodeString (1-byte), always UTF-16."""
    encoded = text.encode("utf-16-le")
    count = len(encoded) // 2
    head = struct.pack("<H", count) if length_bytes == 2 else struct.pack("<B", count)
    return head + b"\x01" + encoded


def _cfb(streams: Mapping[str, bytes]) -> bytes:
    """A minimal OLE2 compound file (version 3, 512-byte sectors) holding ``streams`` at the root.

    Streams are padded to 4096 bytes so they live in regular sectors and no
    mini stream is needed. The directory is a degenerate (all-right-sibling)
    tree, which readers accept.
    """
    sector = 512
    end, free, fat_mark = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFD
    padded = [
        (name, data.ljust(max(4096, -(-len(data) // sector) * sector), b"\x00")) for name, data in streams.items()
    ]
    entries = 1 + len(padded)
    dir_sectors = -(-entries // 4)
    data_sectors = sum(len(data) // sector for _, data in padded)
    fat_sectors = 1
    while fat_sectors * 128 < fat_sectors + dir_sectors + data_sectors:
        fat_sectors += 1
    fat = [fat_mark] * fat_sectors
    fat += [fat_sectors + i + 1 for i in range(dir_sectors - 1)] + [end]
    starts = []
    next_sector = fat_sectors + dir_sectors
    for _, data in padded:
        count = len(data) // sector
        starts.append(next_sector)
        fat += [next_sector + i + 1 for i in range(count - 1)] + [end]
        next_sector += count
    fat += [free] * (fat_sectors * 128 - len(fat))
    difat = list(range(fat_sectors)) + [free] * (109 - fat_sectors)
    header = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
        + bytes(16)
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + bytes(6)
        + struct.pack("<IIIIIIIII", 0, fat_sectors, fat_sectors, 0, 4096, end, 0, end, 0)
        + struct.pack("<109I", *difat)
    )

    def entry(name: str, kind: int, *, right: int, child: int, start: int, size: int) -> bytes:
        encoded = (name + "\x00").encode("utf-16-le") if name else b""
        return (
            encoded.ljust(64, b"\x00")
            + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", free, right, child)
            + bytes(16 + 4 + 8 + 8)
            + struct.pack("<IQ", start, size)
        )

    directory = entry("Root Entry", 5, right=free, child=1 if padded else free, start=end, size=0)
    for index, ((name, data), start) in enumerate(zip(padded, starts, strict=True)):
        right = index + 2 if index + 1 < len(padded) else free
        directory += entry(name, 2, right=right, child=free, start=start, size=len(data))
    directory = directory.ljust(dir_sectors * sector, b"\x00")
    body = b"".join(data for _, data in padded)
    return header + struct.pack(f"<{len(fat)}I", *fat) + directory + body


def make_encrypted_office() -> bytes:
    """What Office saves for a password-protected DOCX/XLSX/PPTX: an OLE2 file with an ``EncryptedPackage``.

    The streams hold deterministic noise, not a real encryption; type
    detection only needs the container's directory.
    """
    noise = bytes((i * 131 + 7) % 256 for i in range(8192))
    return _cfb({"EncryptionInfo": b"\x04\x00\x04\x00" + noise[:1024], "EncryptedPackage": noise})


def make_xls(sheets: Mapping[str, Sequence[Sequence[Any]]]) -> bytes:
    """A legacy Excel 97-2003 ``.xls`` (BIFF8 in an OLE2 container) with strings and numbers.

    Strings are written as LABEL records (UTF-16), numbers as NUMBER
    records; enough for calamine and for content-based type detection.
    """
    bof_globals = _biff(0x0809, struct.pack("<HHHHII", 0x0600, 0x0005, 0x1F4D, 1997, 0, 0x0006))
    codepage = _biff(0x0042, struct.pack("<H", 1200))
    sheet_streams = []
    for rows in sheets.values():
        body = [_biff(0x0809, struct.pack("<HHHHII", 0x0600, 0x0010, 0x1F4D, 1997, 0, 0x0006))]
        width = max((len(r) for r in rows), default=0)
        body.append(_biff(0x0200, struct.pack("<IIHHH", 0, len(rows), 0, width, 0)))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if value is None:
                    continue
                if isinstance(value, int | float) and not isinstance(value, bool):
                    body.append(_biff(0x0203, struct.pack("<HHHd", r, c, 0, float(value))))
                else:
                    body.append(_biff(0x0204, struct.pack("<HHH", r, c, 0) + _biff_string(str(value), 2)))
        body.append(_biff(0x000A, b""))
        sheet_streams.append(b"".join(body))
    names = list(sheets)
    # BOUNDSHEET records hold each sheet's absolute offset: compute the size
    # of the globals first, then fill the offsets in.
    boundsheet_sizes = [4 + 6 + len(_biff_string(n, 1)) for n in names]
    offset = len(bof_globals) + len(codepage) + sum(boundsheet_sizes) + 4
    boundsheets = []
    for name, stream in zip(names, sheet_streams, strict=True):
        boundsheets.append(_biff(0x0085, struct.pack("<IBB", offset, 0, 0) + _biff_string(name, 1)))
        offset += len(stream)
    workbook = b"".join([bof_globals, codepage, *boundsheets, _biff(0x000A, b""), *sheet_streams])
    return _cfb({"Workbook": workbook})


# --------------------------------------------------------------------------- PPTX


_P_ROOT_ATTRS = f'xmlns:a="{_NS_A}" xmlns:r="{_NS_REL}" xmlns:p="{_NS_P}"'
_P_EMPTY_TREE = (
    '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
    '<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/>'
    '<a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>'
)
_CLR_MAP = (
    'bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3"'
    ' accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"'
)


def _theme_xml() -> str:
    colors = "".join(
        f'<a:{name}><a:srgbClr val="{rgb}"/></a:{name}>'
        for name, rgb in (
            ("dk1", "000000"),
            ("lt1", "FFFFFF"),
            ("dk2", "1F497D"),
            ("lt2", "EEECE1"),
            ("accent1", "4F81BD"),
            ("accent2", "C0504D"),
            ("accent3", "9BBB59"),
            ("accent4", "8064A2"),
            ("accent5", "4BACC6"),
            ("accent6", "F79646"),
            ("hlink", "0000FF"),
            ("folHlink", "800080"),
        )
    )
    font = '<a:latin typeface="Calibri"/><a:ea typeface="Yu Gothic"/><a:cs typeface=""/>'
    fill = '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>'
    line = f'<a:ln w="9525">{fill}</a:ln>'
    return (
        f'{_XML_DECL}<a:theme xmlns:a="{_NS_A}" name="docindex"><a:themeElements>'
        f'<a:clrScheme name="docindex">{colors}</a:clrScheme>'
        f'<a:fontScheme name="docindex"><a:majorFont>{font}</a:majorFont><a:minorFont>{font}</a:minorFont>'
        "</a:fontScheme>"
        f'<a:fmtScheme name="docindex"><a:fillStyleLst>{fill * 3}</a:fillStyleLst>'
        f"<a:lnStyleLst>{line * 3}</a:lnStyleLst>"
        f"<a:effectStyleLst>{'<a:effectStyle><a:effectLst/></a:effectStyle>' * 3}</a:effectStyleLst>"
        f"<a:bgFillStyleLst>{fill * 3}</a:bgFillStyleLst></a:fmtScheme>"
        "</a:themeElements></a:theme>"
    )


def _a_paragraphs(text: str) -> str:
    return "".join(
        f'<a:p><a:r><a:rPr lang="ja-JP" altLang="en-US"/><a:t>{_x(line)}</a:t></a:r></a:p>' if line else "<a:p/>"
        for line in text.split("\n")
    )


def _p_shape(shape_id: int, name: str, text: str, y: int, placeholder: str = "") -> str:
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{_x(name)}"/><p:cNvSpPr txBox="1"/>'
        f"<p:nvPr>{placeholder}</p:nvPr></p:nvSpPr>"
        f'<p:spPr><a:xfrm><a:off x="457200" y="{y}"/><a:ext cx="8229600" cy="914400"/></a:xfrm>'
        '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>'
        f"<p:txBody><a:bodyPr/><a:lstStyle/>{_a_paragraphs(text)}</p:txBody></p:sp>"
    )


def _p_slide_number(shape_id: int, number: int) -> str:
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="Slide Number"/><p:cNvSpPr txBox="1"/><p:nvPr/>'
        "</p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/><a:p>"
        '<a:fld id="{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}" type="slidenum"><a:rPr lang="ja-JP"/>'
        f"<a:t>{number}</a:t></a:fld></a:p></p:txBody></p:sp>"
    )


def _p_table(shape_id: int, rows: Sequence[Sequence[Any]]) -> str:
    cols = max((len(r) for r in rows), default=0)
    grid = "".join('<a:gridCol w="2743200"/>' for _ in range(cols))
    body = "".join(
        '<a:tr h="370840">'
        + "".join(
            f"<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>{_a_paragraphs(str(c))}</a:txBody><a:tcPr/></a:tc>" for c in row
        )
        + "</a:tr>"
        for row in rows
    )
    return (
        f'<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="{shape_id}" name="Table"/>'
        '<p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/>'
        '</p:nvGraphicFramePr><p:xfrm><a:off x="457200" y="3000000"/>'
        '<a:ext cx="8229600" cy="741680"/></p:xfrm>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table">'
        f'<a:tbl><a:tblPr firstRow="1" bandRow="1"/><a:tblGrid>{grid}</a:tblGrid>{body}</a:tbl>'
        "</a:graphicData></a:graphic></p:graphicFrame>"
    )


def _p_group(first_id: int, texts: Sequence[str]) -> str:
    shapes = "".join(
        _p_shape(first_id + 1 + i, f"Grouped {i + 1}", t, 4000000 + i * 500000) for i, t in enumerate(texts)
    )
    return (
        f'<p:grpSp><p:nvGrpSpPr><p:cNvPr id="{first_id}" name="Group"/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>'
        '<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="9144000" cy="6858000"/><a:chOff x="0" y="0"/>'
        f'<a:chExt cx="9144000" cy="6858000"/></a:xfrm></p:grpSpPr>{shapes}</p:grpSp>'
    )


def make_pptx(
    slides: Sequence[str],
    notes: Sequence[str | None] | None = None,
    *,
    title: str | None = None,
    tables: Mapping[int, Sequence[Sequence[Any]]] | None = None,
    groups: Mapping[int, Sequence[str]] | None = None,
    part_numbers: Sequence[int] | None = None,
    slide_numbers: bool = True,
) -> bytes:
    """A PPTX: slide i shows ``slides[i]`` (first line as title, the rest as body).

    ``notes[i]`` becomes slide i's speaker notes; ``tables`` and ``groups``
    (keyed by slide index) add a table or a group of text boxes;
    ``part_numbers`` names slide i's part ``slide{part_numbers[i]}.xml``, so
    the part-name order can differ from the presentation order. Every slide
    carries a slide-number field unless ``slide_numbers=False``.
    """
    numbers = list(part_numbers) if part_numbers is not None else list(range(1, len(slides) + 1))
    if len(numbers) != len(slides) or len(set(numbers)) != len(numbers):
        raise ValueError("part_numbers must give one distinct number per slide")
    notes = list(notes or [])
    ppt: dict[str, str | bytes] = {}
    overrides = {
        "ppt/presentation.xml": f"{_CT}.presentationml.presentation.main+xml",
        "ppt/slideMasters/slideMaster1.xml": f"{_CT}.presentationml.slideMaster+xml",
        "ppt/slideLayouts/slideLayout1.xml": f"{_CT}.presentationml.slideLayout+xml",
        "ppt/theme/theme1.xml": f"{_CT}.theme+xml",
        **_CORE_OVERRIDES,
    }
    pres_rels: list[tuple[str, str, str]] = [
        ("rId1", "slideMaster", "slideMasters/slideMaster1.xml"),
        ("rIdTheme", "theme", "theme/theme1.xml"),
    ]
    has_notes = any(n is not None for n in notes)
    if has_notes:
        ppt["ppt/notesMasters/notesMaster1.xml"] = (
            f"{_XML_DECL}<p:notesMaster {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}</p:spTree>"
            f"</p:cSld><p:clrMap {_CLR_MAP}/></p:notesMaster>"
        )
        ppt["ppt/notesMasters/_rels/notesMaster1.xml.rels"] = _rels([("rId1", "theme", "../theme/theme2.xml")])
        ppt["ppt/theme/theme2.xml"] = _theme_xml()
        overrides["ppt/notesMasters/notesMaster1.xml"] = f"{_CT}.presentationml.notesMaster+xml"
        overrides["ppt/theme/theme2.xml"] = f"{_CT}.theme+xml"
        pres_rels.append(("rIdNotesMaster", "notesMaster", "notesMasters/notesMaster1.xml"))
    slide_ids = []
    for index, (text, number) in enumerate(zip(slides, numbers, strict=True)):
        heading, _, rest = text.partition("\n")
        shapes = [
            _p_shape(2, "Title", heading, 274638, '<p:ph type="title"/>'),
            _p_shape(3, "Content", rest, 1600200) if rest else "",
        ]
        if tables and index in tables:
            shapes.append(_p_table(4, tables[index]))
        if groups and index in groups:
            shapes.append(_p_group(10, groups[index]))
        if slide_numbers:
            shapes.append(_p_slide_number(9, index + 1))
        name = f"ppt/slides/slide{number}.xml"
        ppt[name] = (
            f"{_XML_DECL}<p:sld {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}{''.join(shapes)}"
            "</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>"
        )
        overrides[name] = f"{_CT}.presentationml.slide+xml"
        slide_rels = [("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml")]
        note = notes[index] if index < len(notes) else None
        if note is not None:
            notes_name = f"ppt/notesSlides/notesSlide{number}.xml"
            body = (
                '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Slide Image"/><p:cNvSpPr/><p:nvPr>'
                '<p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:spPr/></p:sp>'
                '<p:sp><p:nvSpPr><p:cNvPr id="3" name="Notes"/><p:cNvSpPr/><p:nvPr>'
                '<p:ph type="body" idx="1"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>'
                f"{_a_paragraphs(note)}"
                "</p:txBody></p:sp>" + (_p_slide_number(4, index + 1) if slide_numbers else "")
            )
            ppt[notes_name] = (
                f"{_XML_DECL}<p:notes {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}{body}</p:spTree>"
                "</p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:notes>"
            )
            ppt[f"ppt/notesSlides/_rels/notesSlide{number}.xml.rels"] = _rels(
                [
                    ("rId1", "notesMaster", "../notesMasters/notesMaster1.xml"),
                    ("rId2", "slide", f"../slides/slide{number}.xml"),
                ]
            )
            overrides[notes_name] = f"{_CT}.presentationml.notesSlide+xml"
            slide_rels.append(("rId2", "notesSlide", f"../notesSlides/notesSlide{number}.xml"))
        ppt[f"ppt/slides/_rels/slide{number}.xml.rels"] = _rels(slide_rels)
        rid = f"rIdSlide{number}"
        pres_rels.append((rid, "slide", f"slides/slide{number}.xml"))
        slide_ids.append(f'<p:sldId id="{256 + index}" r:id="{rid}"/>')
    notes_master = (
        '<p:notesMasterIdLst><p:notesMasterId r:id="rIdNotesMaster"/></p:notesMasterIdLst>' if has_notes else ""
    )
    presentation = (
        f'{_XML_DECL}<p:presentation {_P_ROOT_ATTRS} saveSubsetFonts="1">'
        '<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>'
        f"{notes_master}<p:sldIdLst>{''.join(slide_ids)}</p:sldIdLst>"
        '<p:sldSz cx="9144000" cy="6858000" type="screen4x3"/><p:notesSz cx="6858000" cy="9144000"/>'
        "</p:presentation>"
    )
    master = (
        f"{_XML_DECL}<p:sldMaster {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}</p:spTree></p:cSld>"
        f'<p:clrMap {_CLR_MAP}/><p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/>'
        "</p:sldLayoutIdLst></p:sldMaster>"
    )
    layout = (
        f'{_XML_DECL}<p:sldLayout {_P_ROOT_ATTRS} type="blank" preserve="1"><p:cSld name="Blank"><p:spTree>'
        f"{_P_EMPTY_TREE}</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>"
    )
    return _zip(
        {
            "[Content_Types].xml": _content_types(overrides),
            "_rels/.rels": _package_rels("ppt/presentation.xml"),
            "docProps/core.xml": _core_xml(title),
            "docProps/app.xml": _APP_XML,
            "ppt/presentation.xml": presentation,
            "ppt/_rels/presentation.xml.rels": _rels(pres_rels),
            "ppt/slideMasters/slideMaster1.xml": master,
            "ppt/slideMasters/_rels/slideMaster1.xml.rels": _rels(
                [
                    ("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml"),
                    ("rId2", "theme", "../theme/theme1.xml"),
                ]
            ),
            "ppt/slideLayouts/slideLayout1.xml": layout,
            "ppt/slideLayouts/_rels/slideLayout1.xml.rels": _rels(
                [("rId1", "slideMaster", "../slideMasters/slideMaster1.xml")]
            ),
            "ppt/theme/theme1.xml": _theme_xml(),
            **ppt,
        }
    )


# --------------------------------------------------------------------------- text and HTML


def _encode_iso2022jp(text: str) -> bytes:
    """ISO-2022-JP the way Windows writes it (CP50220): CP932 extensions such as ① included.

    Python's iso2022_jp codec cannot encode NEC row-13 characters; mapping the
    CP932 bytes back onto JIS rows can. Half-width katakana use ``ESC ( I``.
    """
    out = bytearray()
    mode = "ascii"

    def switch(new: str) -> None:
        nonlocal mode
        if new != mode:
            out.extend({"ascii": b"\x1b(B", "jis": b"\x1b$B", "kana": b"\x1b(I"}[new])
            mode = new

    for ch in text:
        if ord(ch) < 0x80:
            switch("ascii")
            out.append(ord(ch))
            continue
        sjis = ch.encode("cp932")
        if len(sjis) == 1:
            switch("kana")
            out.append(sjis[0] - 0x80)
            continue
        s1, s2 = sjis
        if s1 >= 0xF0:
            raise ValueError(f"{ch!r} (IBM extension) has no ISO-2022-JP code")
        s1 -= 0xB0 if s1 >= 0xE0 else 0x70
        j1 = s1 * 2
        if s2 >= 0x9F:
            j2 = s2 - 0x7E
        else:
            j1 -= 1
            j2 = s2 - (0x20 if s2 >= 0x80 else 0x1F)
        switch("jis")
        out += bytes((j1, j2))
    switch("ascii")
    return bytes(out)


_BOM_FOR = {
    "utf-8": b"\xef\xbb\xbf",
    "utf-16-le": b"\xff\xfe",
    "utf-16-be": b"\xfe\xff",
    "utf-32-le": b"\xff\xfe\x00\x00",
    "utf-32-be": b"\x00\x00\xfe\xff",
}


def make_text(text: str, encoding: str = "utf-8", *, bom: bool = False, newline: str = "\n") -> bytes:
    """``text`` encoded as a file would hold it.

    ``encoding`` is any Python codec, plus ``iso-2022-jp`` written the
    Windows way (CP932 extensions allowed). ``bom`` prefixes the byte order
    mark for UTF-8/16/32 (``utf-16``/``utf-32`` always get one from Python).
    ``newline`` replaces ``\\n`` (``"\\r\\n"`` for Windows files).
    """
    text = text.replace("\n", newline)
    key = encoding.lower().replace("_", "-")
    if key in {"iso-2022-jp", "csiso2022jp", "cp50220"}:
        return _encode_iso2022jp(text)
    data = text.encode(encoding)
    normalized = {"utf8": "utf-8", "utf-16le": "utf-16-le", "utf-16be": "utf-16-be"}.get(key, key)
    if bom and normalized in _BOM_FOR:
        data = _BOM_FOR[normalized] + data
    return data


def make_csv(rows: Sequence[Sequence[Any]], encoding: str = "utf-8", *, bom: bool = False) -> bytes:
    """CSV with CRLF line ends, as Excel writes it (``encoding="cp932"`` for a Japanese Excel)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return make_text(buf.getvalue(), encoding, bom=bom, newline="\r\n")


def make_html(
    title: str,
    body: str | Sequence[str],
    encoding: str = "utf-8",
    *,
    charset_label: str | None = "",
    meta: str = "charset",
    noise: bool = True,
    table: Sequence[Sequence[Any]] | None = None,
    bom: bool = False,
) -> bytes:
    """An HTML page: ``<title>``, one ``<p>`` per body paragraph, optional table.

    ``charset_label`` is what the page declares ("" = the encoding's own
    name, None = no declaration, or any label, e.g. "Shift_JIS" while
    encoding with "cp932" as Japanese sites do). ``meta`` is ``charset``
    (``<meta charset>``) or ``http-equiv``. ``noise`` adds script, style,
    noscript and template elements holding :data:`HTML_NOISE_MARKERS`.
    """
    label = encoding if charset_label == "" else charset_label
    declaration = ""
    if label is not None:
        if meta == "http-equiv":
            declaration = f'<meta http-equiv="Content-Type" content="text/html; charset={label}">'
        else:
            declaration = f'<meta charset="{label}">'
    paragraphs = [body] if isinstance(body, str) else list(body)
    parts = [
        '<!DOCTYPE html>\n<html lang="ja">\n<head>\n',
        declaration,
        f"\n<title>{_x(title)}</title>\n",
    ]
    if noise:
        parts.append(f"<style>.{HTML_NOISE_MARKERS[1]} {{ color: red; }}</style>\n")
        parts.append(f'<script>var marker = "{HTML_NOISE_MARKERS[0]}";</script>\n')
    parts.append("</head>\n<body>\n")
    parts += [f"<p>{_x(p)}</p>\n" for p in paragraphs]
    if table:
        parts.append("<table>\n")
        for row in table:
            parts.append("<tr>" + "".join(f"<td>{_x(str(c))}</td>" for c in row) + "</tr>\n")
        parts.append("</table>\n")
    if noise:
        parts.append(f"<noscript>{HTML_NOISE_MARKERS[2]}</noscript>\n")
        parts.append(f"<template><p>{HTML_NOISE_MARKERS[3]}</p></template>\n")
        parts.append(f'<script type="application/json">{{"k": "{HTML_NOISE_MARKERS[0]}"}}</script>\n')
    parts.append("</body>\n</html>\n")
    return make_text("".join(parts), encoding, bom=bom)


# --------------------------------------------------------------------------- PDF


def _register_cid_font(name: str) -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    if name not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(name))


def _wrap(text: str, font: str, size: float, width: float) -> list[str]:
    """Greedy wrap by rendered width, character by character (Japanese has no spaces)."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for ch in paragraph:
            if line and stringWidth(line + ch, font, size) > width:
                lines.append(line)
                line = ""
            line += ch
        lines.append(line)
    return lines


def _pdf_bytes(
    pages: Sequence[str],
    title: str | None,
    font: str,
    font_size: float,
    encrypt: Any = None,
) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    _register_cid_font(font)
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4, invariant=1, encrypt=encrypt)
    pdf.setAuthor("docindex samples")
    pdf.setCreator("docindex samples")
    # reportlab writes "untitled" unless told otherwise.
    pdf.setTitle(title or "")
    width, height = A4
    margin = 56.0
    leading = font_size * 1.6
    for text in pages:
        block = pdf.beginText(margin, height - margin - font_size)
        block.setFont(font, font_size, leading)
        # Lines past the bottom margin stay on this page (clipped when
        # printed, still in the text layer): one entry of ``pages`` is one page.
        for line in _wrap(text, font, font_size, width - 2 * margin):
            block.textLine(line)
        pdf.drawText(block)
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def make_pdf(
    pages: Sequence[str],
    title: str | None = None,
    *,
    font: str = "HeiseiKakuGo-W5",
    font_size: float = 10.5,
) -> bytes:
    """A text PDF, one entry of ``pages`` per page, in a built-in Japanese CID font.

    ``font`` is ``HeiseiKakuGo-W5`` (gothic) or ``HeiseiMin-W3`` (mincho);
    ``title`` goes to the Info dictionary. Lines wrap at the page width.
    """
    return _pdf_bytes(pages, title, font, font_size)


def make_encrypted_pdf(
    pages: Sequence[str],
    *,
    user_password: str = "secret",  # noqa: S107 - a sample document's password
    owner_password: str = "owner",  # noqa: S107
    title: str | None = None,
) -> bytes:
    """A password-protected PDF (RC4, reportlab ``StandardEncryption``).

    With ``user_password=""`` it opens without a password and only the owner
    permissions (no print, no copy) are restricted, like many business PDFs.
    """
    from reportlab.lib.pdfencrypt import StandardEncryption

    encrypt = StandardEncryption(user_password, owner_password, canPrint=0, canCopy=0, canModify=0)
    return _pdf_bytes(pages, title, "HeiseiKakuGo-W5", 10.5, encrypt)


def make_corrupt_pdf(mode: str = "garbage") -> bytes:
    """A PDF that cannot be opened.

    ``garbage``: a PDF header followed by noise; ``truncated``: a real PDF cut short.
    """
    if mode == "truncated":
        data = make_pdf(["この PDF は途中で切れています。" * 20] * 3, "切れた PDF")
        return data[: len(data) * 2 // 5]
    if mode == "garbage":
        noise = bytes((i * 7919 + 13) % 251 for i in range(4096))
        return b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + noise + b"\n%%EOF\n"
    raise ValueError(f"unknown mode {mode!r}")


# --------------------------------------------------------------------------- scans

# Named page sizes for scans, (width, height) in inches; any other size is given as such a pair.
SCAN_PAGE_SIZES: dict[str, tuple[float, float]] = {
    "A4": (210 / 25.4, 297 / 25.4),
    "A5": (148 / 25.4, 210 / 25.4),
    "B5": (182 / 25.4, 257 / 25.4),  # JIS B5, common for Japanese forms
    "letter": (8.5, 11.0),
}


@functools.lru_cache(maxsize=1)
def find_japanese_font() -> str:
    """Path of a TrueType/OpenType font with Japanese glyphs.

    ``DOCINDEX_JA_FONT`` wins; then well-known paths; then fontconfig
    (``fc-list :lang=ja``). Raises RuntimeError naming the Debian package to
    install when there is none.
    """
    configured = os.environ.get("DOCINDEX_JA_FONT")
    if configured and os.path.isfile(configured):
        return configured
    for path in _JA_FONT_CANDIDATES:
        if os.path.isfile(path):
            return path
    fc_list = shutil.which("fc-list")
    if fc_list:
        # fc-match always answers with *some* font; fc-list :lang=ja lists
        # only fonts that really cover Japanese.
        result = subprocess.run(  # noqa: S603  # fixed argument list, no shell  # nosec B603
            [fc_list, ":lang=ja", "file"], capture_output=True, text=True, timeout=30, check=False
        )
        files = sorted(line.split(":", 1)[0].strip() for line in result.stdout.splitlines() if line.strip())
        for path in files:
            if path.lower().endswith((".ttf", ".otf", ".ttc")) and os.path.isfile(path):
                return path
    raise RuntimeError(
        "no Japanese font found for rendering scans: install the Debian package "
        f"{_JA_FONT_PACKAGE} (apt-get install {_JA_FONT_PACKAGE}) or set DOCINDEX_JA_FONT"
    )


def _page_inches(page: str | tuple[float, float]) -> tuple[float, float]:
    if isinstance(page, str):
        if page not in SCAN_PAGE_SIZES:
            raise ValueError(f"unknown page size {page!r}: one of {', '.join(SCAN_PAGE_SIZES)} or (width, height)")
        return SCAN_PAGE_SIZES[page]
    width, height = page
    if width <= 0 or height <= 0:
        raise ValueError(f"page size must be positive, got {page!r}")
    return width, height


class ScanLayout(TypedDict, total=False):
    """Layout keywords of the scan generators; see ``render_scan_page`` for their meaning and defaults."""

    page: str | tuple[float, float]
    font_size: float
    margin: float
    line_spacing: float
    vertical: bool


def render_scan_page(
    lines: Sequence[str],
    dpi: int = 300,
    *,
    page: str | tuple[float, float] = "A4",
    font_size: float = 10.5,
    margin: float = 20 / 25.4,
    line_spacing: float = 1.7,
    vertical: bool = False,
) -> Any:
    """A page at ``dpi`` with ``lines`` in black on white, 8-bit grey, like a scanner's output: a Pillow image.

    ``page`` is a name of ``SCAN_PAGE_SIZES`` or (width, height) in inches;
    ``font_size`` is in points; ``margin`` in inches on every side (20 mm);
    ``line_spacing`` is the distance between lines (columns when
    ``vertical``) in font sizes. ``vertical`` writes 縦書き: columns from the
    right edge leftwards, characters top to bottom. Lines longer than the page
    wrap (Japanese has no spaces to break at: by measured width, or height).
    """
    from PIL import Image, ImageDraw, ImageFont

    width_in, height_in = _page_inches(page)
    width, height = round(width_in * dpi), round(height_in * dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    size = max(8, round(font_size / 72 * dpi))
    font = ImageFont.truetype(find_japanese_font(), size=size)
    edge = round(margin * dpi)
    line_height = round(font_size / 72 * dpi * line_spacing)
    if vertical:
        x = width - edge - size
        advance = round(size * 1.1)
        for text in lines:
            y = edge
            for ch in text:
                if y > edge and y + size > height - edge:
                    x -= line_height
                    y = edge
                draw.text((x, y), ch, fill=0, font=font)
                y += advance
            x -= line_height
        return image
    y = edge
    for text in lines:
        line = ""
        for ch in text:
            if line and draw.textlength(line + ch, font=font) > width - 2 * edge:
                draw.text((edge, y), line, fill=0, font=font)
                y += line_height
                line = ""
            line += ch
        draw.text((edge, y), line, fill=0, font=font)
        y += line_height
    return image


def make_scan_image(lines: Sequence[str], dpi: int = 300, *, fmt: str = "PNG", **layout: Unpack[ScanLayout]) -> bytes:
    """A scanned page as an image file (``fmt``: PNG, JPEG, TIFF, GIF, BMP, WEBP), ``dpi`` recorded."""
    image = render_scan_page(lines, dpi, **layout)
    buf = io.BytesIO()
    options: dict[str, Any] = {"dpi": (dpi, dpi)}
    if fmt.upper() == "JPEG":
        options["quality"] = 85
    elif fmt.upper() == "WEBP":
        options = {"quality": 85}
    image.save(buf, format=fmt.upper(), **options)
    return buf.getvalue()


def make_scan_png(lines: Sequence[str], dpi: int = 300, **layout: Unpack[ScanLayout]) -> bytes:
    """A scanned page holding ``lines`` of Japanese text, as PNG."""
    return make_scan_image(lines, dpi, fmt="PNG", **layout)


def make_scan_pdf(
    pages: Sequence[Sequence[str]], dpi: int = 300, *, title: str | None = None, **layout: Unpack[ScanLayout]
) -> bytes:
    """An image-only PDF (no text layer), one scanned page per entry, JPEG-compressed like a scanner's.

    Pages are rendered one at a time (an A4 page at 300 dpi is 8.7 MB of
    pixels), so long scans for soak tests stay small in memory.
    """
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    if not pages:
        raise ValueError("a PDF needs at least one page")
    width_in, height_in = _page_inches(layout.get("page", "A4"))
    width, height = width_in * 72, height_in * 72
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=(width, height), invariant=1)
    pdf.setCreator("docindex samples")
    pdf.setTitle(title or "")
    for lines in pages:
        jpeg = io.BytesIO()
        render_scan_page(lines, dpi, **layout).save(jpeg, format="JPEG", quality=85, dpi=(dpi, dpi))
        jpeg.seek(0)
        # reportlab embeds JPEG data as is (DCTDecode), like a scanner driver.
        pdf.drawImage(ImageReader(jpeg), 0, 0, width=width, height=height)
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def make_scan_tiff(pages: Sequence[Sequence[str]], dpi: int = 300, **layout: Unpack[ScanLayout]) -> bytes:
    """A multi-page TIFF, one scanned page per entry, deflate-compressed (fax / document scanner style)."""
    if not pages:
        raise ValueError("a TIFF needs at least one page")
    first, *rest = [render_scan_page(lines, dpi, **layout) for lines in pages]
    buf = io.BytesIO()
    first.save(buf, format="TIFF", save_all=True, append_images=rest, dpi=(dpi, dpi), compression="tiff_deflate")
    return buf.getvalue()


def _accuracy_text(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def char_accuracy(expected: str, got: str) -> float:
    """1 - character error rate: Levenshtein distance / length of ``expected``, floored at 0.

    Both texts are compared after NFKC and without whitespace (OCR spacing and
    full-width/half-width forms are not errors). An empty ``expected`` scores 1
    only against an empty ``got``.
    """
    a, b = _accuracy_text(expected), _accuracy_text(got)
    if not a:
        return 1.0 if not b else 0.0
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return max(0.0, 1.0 - previous[-1] / len(a))


# --------------------------------------------------------------------------- hostile input


def _deflated_zeros(mib: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``mib`` MiB of zeros and its CRC-32, without deflating gigabytes.

    After a full flush the compressor starts over at a byte boundary, so every
    MiB of zeros compresses to the same bytes: one block, repeated.
    """
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush()
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return block * mib + tail, crc


def _deflated_zip(members: Sequence[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of already-deflated members ``(name, deflated, crc, size)`` (no zip64: sizes < 4 GiB)."""
    dos_time = (_ZIP_TIME[3] << 11) | (_ZIP_TIME[4] << 5) | (_ZIP_TIME[5] // 2)
    dos_date = ((_ZIP_TIME[0] - 1980) << 9) | (_ZIP_TIME[1] << 5) | _ZIP_TIME[2]
    body, directory = io.BytesIO(), io.BytesIO()
    for name, data, crc, size in members:
        raw = name.encode("utf-8")
        offset = body.tell()
        common = struct.pack("<HHHHHIII", 20, 0x0800, 8, dos_time, dos_date, crc, len(data), size)
        body.write(b"PK\x03\x04" + common + struct.pack("<HH", len(raw), 0) + raw + data)
        directory.write(
            b"PK\x01\x02"
            + struct.pack("<H", 20)
            + common
            + struct.pack("<HHHHHII", len(raw), 0, 0, 0, 0, 0o644 << 16, offset)
            + raw
        )
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), directory.tell(), body.tell(), 0)
    return body.getvalue() + directory.getvalue() + end


def make_zip_bomb(kind: str = "docx", inflated_mb: int = 200, *, member: str | None = None) -> bytes:
    """A small, otherwise valid DOCX/XLSX/PPTX carrying one member of ``inflated_mb`` MiB of zeros.

    Deflate packs zeros about 1000:1: 2 GiB cost ~2 MB on disk, and about a
    second to build (the compressed block is computed once and repeated).
    Below 4096 MiB (no zip64).
    """
    if not 0 < inflated_mb < 4096:
        raise ValueError("inflated_mb must be between 1 and 4095")
    base = {
        "docx": lambda: make_docx(["爆弾の外側にある本文です。"]),
        "xlsx": lambda: make_xlsx({"Sheet1": [["爆弾"]]}),
        "pptx": lambda: make_pptx(["爆弾の外側にあるスライド"]),
    }[kind]()
    name = (
        member or {"docx": "word/media/image1.bin", "xlsx": "xl/media/image1.bin", "pptx": "ppt/media/image1.bin"}[kind]
    )
    members: list[tuple[str, bytes, int, int]] = []
    with zipfile.ZipFile(io.BytesIO(base)) as zf:
        for info in zf.infolist():
            content = zf.read(info)
            compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
            members.append((info.filename, compressor.compress(content) + compressor.flush(), info.CRC, len(content)))
    deflated, crc = _deflated_zeros(inflated_mb)
    members.append((name, deflated, crc, inflated_mb << 20))
    return _deflated_zip(members)


def make_xxe_docx(target_path: str) -> bytes:
    """A DOCX whose body declares an external entity pointing at ``target_path`` and uses it."""
    url = "file://" + os.path.abspath(target_path)
    doc = _zip_replace_document(
        make_docx(["XXE before", "placeholder", "XXE after"]),
        lambda xml: xml.replace(
            _XML_DECL, f'{_XML_DECL}<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "{url}">]>\n'
        ).replace("placeholder", "&xxe;"),
    )
    return doc


def make_billion_laughs_docx(depth: int = 10, width: int = 10) -> bytes:
    """A DOCX whose body uses a nested internal entity expanding to ``width**depth`` "lol"s."""
    entities = ['<!ENTITY lol0 "lol">']
    for level in range(1, depth):
        entities.append(f'<!ENTITY lol{level} "{f"&lol{level - 1};" * width}">')
    doctype = f"<!DOCTYPE w:document [{''.join(entities)}]>\n"
    return _zip_replace_document(
        make_docx(["laughs before", "placeholder"]),
        lambda xml: xml.replace(_XML_DECL, _XML_DECL + doctype).replace("placeholder", f"&lol{depth - 1};"),
    )


def make_corrupt_docx(mode: str = "truncated") -> bytes:
    """A DOCX that cannot be read: ``truncated`` (zip cut short) or ``bad_xml`` (body is not well formed)."""
    good = make_docx(["壊れた文書です。"] * 50)
    if mode == "truncated":
        return good[: len(good) // 2]
    if mode == "bad_xml":
        return _zip_replace_document(good, lambda xml: xml[: len(xml) // 2])
    raise ValueError(f"unknown mode {mode!r}")


def _zip_replace_document(package: bytes, edit: Any) -> bytes:
    with zipfile.ZipFile(io.BytesIO(package)) as zf:
        parts: dict[str, str | bytes] = {name: zf.read(name) for name in zf.namelist()}
        parts["word/document.xml"] = edit(zf.read("word/document.xml").decode("utf-8"))
    return _zip(parts)


def make_billion_laughs_xml(depth: int = 10, width: int = 10) -> bytes:
    """A plain XML file whose one element uses a nested entity expanding to ``width**depth`` "lol"s."""
    entities = ['<!ENTITY lol0 "lol">']
    for level in range(1, depth):
        entities.append(f'<!ENTITY lol{level} "{f"&lol{level - 1};" * width}">')
    return (f'<?xml version="1.0"?>\n<!DOCTYPE lolz [{"".join(entities)}]>\n<lolz>&lol{depth - 1};</lolz>\n').encode()


def _pdf_objects(objects: Sequence[bytes], *, root: int = 1, xref_shift: int = 0) -> bytes:
    """A PDF from numbered objects (1..n), with a cross-reference table whose offsets are off by ``xref_shift``."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    start = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % (offset + xref_shift))
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, start))
    return out.getvalue()


# Page object i of the hand-built PDFs: parent 2, font 3, content stream 4 (``%`` a MediaBox width and height).
_PDF_PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"


def make_many_pages_pdf(pages: int = 20_000, text: str = "page of a very long report") -> bytes:
    """A PDF with ``pages`` real pages (about 70 bytes each): they share one font and one content stream."""
    content = b"BT /F1 12 Tf 20 20 Td (" + text.encode("latin-1") + b") Tj ET"
    first_page = 5
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count %d /Kids [%s] >>"
        % (pages, b" ".join(b"%d 0 R" % (first_page + i) for i in range(pages))),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    objects += [_PDF_PAGE % b"300 100"] * pages
    return _pdf_objects(objects)


def make_bad_xref_pdf(text: str = "the cross-reference table of this file lies") -> bytes:
    """A one-page PDF whose cross-reference table points every object to the wrong offset."""
    content = b"BT /F1 12 Tf 20 50 Td (" + text.encode("latin-1") + b") Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /Kids [5 0 R] >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        _PDF_PAGE % b"400 100",
    ]
    return _pdf_objects(objects, xref_shift=7)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_png_bomb(width: int = 20_000, height: int = 20_000) -> bytes:
    """A valid greyscale PNG of ``width`` x ``height`` black pixels: a few hundred KB, gigapixels decoded.

    Built without deflating the pixels: rows are compressed a MiB at a time,
    and after a full flush every such group compresses to the same bytes
    (see ``_deflated_zeros``); a fresh compressor ends the stream.
    """
    row = width + 1  # filter byte + one byte per pixel
    rows_per_group = max(1, (1 << 20) // row)
    groups, rest = divmod(height, rows_per_group)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    group = compressor.compress(bytes(row * rows_per_group)) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15)
    end = last.compress(bytes(row * rest)) + last.flush()
    adler = ((row * height % 65521) << 16) | 1  # Adler-32 of that many zero bytes
    idat = b"\x78\xda" + group * groups + end + struct.pack(">I", adler)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b"")


def make_corrupt_png() -> bytes:
    """A PNG signature and header followed by noise: an image that cannot be decoded."""
    noise = bytes((i * 7919 + 13) % 251 for i in range(2048))
    ihdr = struct.pack(">IIBBBBB", 640, 480, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", noise) + _png_chunk(b"IEND", b"")


# --------------------------------------------------------------------------- demo corpus


def sample_corpus() -> list[tuple[str, bytes]]:
    """A small mixed corpus for the demo: (S3 key, bytes), Japanese folders and names with spaces.

    Distinctive words to search for: 四半期売上報告, quarterly revenue,
    東京都, 会議議事録, 見積書, 髙橋, 請求書, 契約書, 議事録.
    """
    return [
        (
            "営業部/2024年度 報告/四半期売上報告 Q3.pdf",
            make_pdf(
                [
                    "四半期売上報告（第3四半期）\n東京都の売上は前年同期比 12% 増となりました。\n"
                    "Quarterly revenue grew 12% year over year in Tokyo.",
                    "大阪府と福岡県の売上は横ばいでした。\n来期は新製品の投入を予定しています。",
                ],
                "四半期売上報告 2024年度 Q3",
            ),
        ),
        (
            "総務部/会議議事録/2024-10-01 定例会議 議事録.docx",
            make_docx(
                [
                    "会議議事録",
                    "日時：2024年10月1日 10:00〜11:00　場所：東京都千代田区 本社 第1会議室",
                    "出席者：髙橋、山﨑、佐藤",
                    "決定事項：次回の定例会議は10月15日に開催する。",
                ],
                title="定例会議 議事録",
                header="株式会社サンプル 総務部",
                footer="社外秘",
                textbox="要確認：予算案の再提出",
                table=[["議題", "担当", "期限"], ["予算案", "髙橋", "10月10日"]],
            ),
        ),
        (
            "営業部/見積書/見積書 No.2024-123.xlsx",
            make_xlsx(
                {
                    "見積書": [
                        ["見積書", None, None],
                        ["品名", "数量", "単価"],
                        ["ノートPC", 10, 128000],
                        ["モニター", 10, 32000],
                    ],
                    "備考": [["納期", "ご注文後 2 週間"], ["有効期限", date(2024, 12, 31)]],
                },
                title="見積書 No.2024-123",
            ),
        ),
        (
            "経営企画部/事業計画 説明資料.pptx",
            make_pptx(
                [
                    "2025年度 事業計画\n東京都内の新拠点を開設",
                    "売上目標\nquarterly revenue target: 3.2 billion yen",
                ],
                notes=["冒頭で昨年度の実績に触れる", "質疑応答の時間を確保する"],
                title="2025年度 事業計画",
            ),
        ),
        (
            "社内ポータル/お知らせ/年末年始 休業のお知らせ.html",
            make_html(
                "年末年始休業のお知らせ",
                ["12月28日から1月5日まで休業いたします。", "緊急連絡先：総務部 髙橋（内線①）"],
                "cp932",
                charset_label="Shift_JIS",
            ),
        ),
        (
            "総務部/古い文書/社員名簿 メモ.txt",
            make_text(
                "社員名簿メモ\n髙橋 一郎　①総務\n山﨑 花子　②経理\n連絡は 9:00～18:00 に。\n",
                "cp932",
                newline="\r\n",
            ),
        ),
        (
            "開発部/設計メモ/README 検索基盤.md",
            make_text("# 検索基盤 設計メモ\n\n- 全文検索は OpenSearch を使う\n- 日本語は kuromoji で解析する\n"),
        ),
        (
            "経理部/取引先 一覧.csv",
            make_csv([["取引先", "所在地", "担当"], ["株式会社サンプル", "東京都港区", "髙橋"]], bom=True),
        ),
        (
            "スキャン/請求書 2024-09.png",
            make_scan_png(["請求書", "株式会社サンプル 御中", "ご請求金額 ¥128,000（税込）"], dpi=200),
        ),
        (
            "スキャン/契約書 署名済み.pdf",
            make_scan_pdf([["業務委託契約書", "甲と乙は以下のとおり契約を締結する。"]], dpi=200, title="契約書"),
        ),
        (
            "English/Quarterly Revenue Report.docx",
            make_docx(
                ["Quarterly revenue report", "Revenue in the Tokyo region grew by 12 percent."],
                title="Quarterly revenue report",
            ),
        ),
    ]
