"""Office Open XML documents: DOCX, XLSX and PPTX, written by hand as OOXML (zipfile + strings).

Neither python-docx nor openpyxl is needed; the packages are minimal but well
formed (content types, relationships, core properties, see ``ooxml``), and
the same arguments give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, time
from typing import Any

from devkit.samples.ooxml import (
    APP_XML,
    CORE_OVERRIDES,
    CT,
    NS_A,
    NS_P,
    NS_REL,
    NS_S,
    NS_W,
    XML_DECL,
    content_types,
    core_xml,
    escape,
    package_relationships,
    relationships,
    zip_parts,
)

__all__ = ["make_docx", "make_pptx", "make_xlsx"]


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
                out.append(f'<w:t xml:space="preserve">{escape(piece)}</w:t>')
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
    f'xmlns:w="{NS_W}" xmlns:r="{NS_REL}" xmlns:a="{NS_A}"'
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
    overrides = {"word/document.xml": f"{CT}.wordprocessingml.document.main+xml", **CORE_OVERRIDES}
    rels: list[tuple[str, str, str]] = []
    sect = []
    first_extra = ""
    notes_xml = (
        '<w:{tag} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{tag}>'
        '<w:{tag} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r>'
        "</w:p></w:{tag}>"
    )
    if header is not None:
        parts["word/header1.xml"] = f"{XML_DECL}<w:hdr {_W_ROOT_ATTRS}>{_w_p(header)}</w:hdr>"
        overrides["word/header1.xml"] = f"{CT}.wordprocessingml.header+xml"
        rels.append(("rIdHeader1", "header", "header1.xml"))
        sect.append('<w:headerReference w:type="default" r:id="rIdHeader1"/>')
    if footer is not None:
        parts["word/footer1.xml"] = f"{XML_DECL}<w:ftr {_W_ROOT_ATTRS}>{_w_p(footer)}</w:ftr>"
        overrides["word/footer1.xml"] = f"{CT}.wordprocessingml.footer+xml"
        rels.append(("rIdFooter1", "footer", "footer1.xml"))
        sect.append('<w:footerReference w:type="default" r:id="rIdFooter1"/>')
    if footnote is not None:
        body = notes_xml.format(tag="footnote") + (
            f'<w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r>{_w_runs(footnote)}</w:p></w:footnote>'
        )
        parts["word/footnotes.xml"] = f"{XML_DECL}<w:footnotes {_W_ROOT_ATTRS}>{body}</w:footnotes>"
        overrides["word/footnotes.xml"] = f"{CT}.wordprocessingml.footnotes+xml"
        rels.append(("rIdFootnotes", "footnotes", "footnotes.xml"))
        first_extra += '<w:r><w:footnoteReference w:id="1"/></w:r>'
    if endnote is not None:
        body = notes_xml.format(tag="endnote") + (
            f'<w:endnote w:id="1"><w:p><w:r><w:endnoteRef/></w:r>{_w_runs(endnote)}</w:p></w:endnote>'
        )
        parts["word/endnotes.xml"] = f"{XML_DECL}<w:endnotes {_W_ROOT_ATTRS}>{body}</w:endnotes>"
        overrides["word/endnotes.xml"] = f"{CT}.wordprocessingml.endnotes+xml"
        rels.append(("rIdEndnotes", "endnotes", "endnotes.xml"))
        first_extra += '<w:r><w:endnoteReference w:id="1"/></w:r>'
    if comment is not None:
        body = (
            '<w:comment w:id="0" w:author="docindex" w:date="2024-04-01T09:00:00Z" w:initials="DI">'
            f"{_w_p(comment)}</w:comment>"
        )
        parts["word/comments.xml"] = f"{XML_DECL}<w:comments {_W_ROOT_ATTRS}>{body}</w:comments>"
        overrides["word/comments.xml"] = f"{CT}.wordprocessingml.comments+xml"
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
    document = f"{XML_DECL}<w:document {_W_ROOT_ATTRS}><w:body>{body_xml}{sect_pr}</w:body></w:document>"
    return zip_parts(
        {
            "[Content_Types].xml": content_types(overrides),
            "_rels/.rels": package_relationships("word/document.xml"),
            "docProps/core.xml": core_xml(title),
            "docProps/app.xml": APP_XML,
            "word/document.xml": document,
            "word/_rels/document.xml.rels": relationships(rels),
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
    f'{XML_DECL}<styleSheet xmlns="{NS_S}">'
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
        "xl/workbook.xml": f"{CT}.spreadsheetml.sheet.main+xml",
        "xl/styles.xml": f"{CT}.spreadsheetml.styles+xml",
        **CORE_OVERRIDES,
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
        return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{escape(text)}</t></is></c>'

    for number, (name, rows) in enumerate(sheets.items(), start=1):
        out = [f'{XML_DECL}<worksheet xmlns="{NS_S}" xmlns:r="{NS_REL}"><sheetData>']
        for r, row in enumerate(rows, start=1):
            body = "".join(cell_xml(f"{_column(c)}{r}", v) for c, v in enumerate(row))
            out.append(f'<row r="{r}">{body}</row>')
        for ref, value in (cells or {}).get(name, {}).items():
            row_number = "".join(ch for ch in ref if ch.isdigit())
            out.append(f'<row r="{row_number}">{cell_xml(ref, value)}</row>')
        out.append("</sheetData></worksheet>")
        part = f"xl/worksheets/sheet{number}.xml"
        parts[part] = "".join(out)
        overrides[part] = f"{CT}.spreadsheetml.worksheet+xml"
        wb_rels.append((f"rId{number}", "worksheet", f"worksheets/sheet{number}.xml"))
        sheet_entries.append(f'<sheet name="{escape(name)}" sheetId="{number}" r:id="rId{number}"/>')
    wb_rels.append(("rIdStyles", "styles", "styles.xml"))
    if strings:
        items = "".join(f'<si><t xml:space="preserve">{escape(s)}</t></si>' for s in strings)
        parts["xl/sharedStrings.xml"] = (
            f'{XML_DECL}<sst xmlns="{NS_S}" count="{len(strings)}" uniqueCount="{len(strings)}">{items}</sst>'
        )
        overrides["xl/sharedStrings.xml"] = f"{CT}.spreadsheetml.sharedStrings+xml"
        wb_rels.append(("rIdStrings", "sharedStrings", "sharedStrings.xml"))
    workbook = (
        f'{XML_DECL}<workbook xmlns="{NS_S}" xmlns:r="{NS_REL}"><sheets>{"".join(sheet_entries)}</sheets></workbook>'
    )
    return zip_parts(
        {
            "[Content_Types].xml": content_types(overrides),
            "_rels/.rels": package_relationships("xl/workbook.xml"),
            "docProps/core.xml": core_xml(title),
            "docProps/app.xml": APP_XML,
            "xl/workbook.xml": workbook,
            "xl/_rels/workbook.xml.rels": relationships(wb_rels),
            "xl/styles.xml": _XLSX_STYLES,
            **parts,
        }
    )


# --------------------------------------------------------------------------- PPTX


_P_ROOT_ATTRS = f'xmlns:a="{NS_A}" xmlns:r="{NS_REL}" xmlns:p="{NS_P}"'
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
        f'{XML_DECL}<a:theme xmlns:a="{NS_A}" name="docindex"><a:themeElements>'
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
        f'<a:p><a:r><a:rPr lang="ja-JP" altLang="en-US"/><a:t>{escape(line)}</a:t></a:r></a:p>' if line else "<a:p/>"
        for line in text.split("\n")
    )


def _p_shape(shape_id: int, name: str, text: str, y: int, placeholder: str = "") -> str:
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="{escape(name)}"/><p:cNvSpPr txBox="1"/>'
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
        "ppt/presentation.xml": f"{CT}.presentationml.presentation.main+xml",
        "ppt/slideMasters/slideMaster1.xml": f"{CT}.presentationml.slideMaster+xml",
        "ppt/slideLayouts/slideLayout1.xml": f"{CT}.presentationml.slideLayout+xml",
        "ppt/theme/theme1.xml": f"{CT}.theme+xml",
        **CORE_OVERRIDES,
    }
    pres_rels: list[tuple[str, str, str]] = [
        ("rId1", "slideMaster", "slideMasters/slideMaster1.xml"),
        ("rIdTheme", "theme", "theme/theme1.xml"),
    ]
    has_notes = any(n is not None for n in notes)
    if has_notes:
        ppt["ppt/notesMasters/notesMaster1.xml"] = (
            f"{XML_DECL}<p:notesMaster {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}</p:spTree>"
            f"</p:cSld><p:clrMap {_CLR_MAP}/></p:notesMaster>"
        )
        ppt["ppt/notesMasters/_rels/notesMaster1.xml.rels"] = relationships([("rId1", "theme", "../theme/theme2.xml")])
        ppt["ppt/theme/theme2.xml"] = _theme_xml()
        overrides["ppt/notesMasters/notesMaster1.xml"] = f"{CT}.presentationml.notesMaster+xml"
        overrides["ppt/theme/theme2.xml"] = f"{CT}.theme+xml"
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
            f"{XML_DECL}<p:sld {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}{''.join(shapes)}"
            "</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>"
        )
        overrides[name] = f"{CT}.presentationml.slide+xml"
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
                f"{XML_DECL}<p:notes {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}{body}</p:spTree>"
                "</p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:notes>"
            )
            ppt[f"ppt/notesSlides/_rels/notesSlide{number}.xml.rels"] = relationships(
                [
                    ("rId1", "notesMaster", "../notesMasters/notesMaster1.xml"),
                    ("rId2", "slide", f"../slides/slide{number}.xml"),
                ]
            )
            overrides[notes_name] = f"{CT}.presentationml.notesSlide+xml"
            slide_rels.append(("rId2", "notesSlide", f"../notesSlides/notesSlide{number}.xml"))
        ppt[f"ppt/slides/_rels/slide{number}.xml.rels"] = relationships(slide_rels)
        rid = f"rIdSlide{number}"
        pres_rels.append((rid, "slide", f"slides/slide{number}.xml"))
        slide_ids.append(f'<p:sldId id="{256 + index}" r:id="{rid}"/>')
    notes_master = (
        '<p:notesMasterIdLst><p:notesMasterId r:id="rIdNotesMaster"/></p:notesMasterIdLst>' if has_notes else ""
    )
    presentation = (
        f'{XML_DECL}<p:presentation {_P_ROOT_ATTRS} saveSubsetFonts="1">'
        '<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>'
        f"{notes_master}<p:sldIdLst>{''.join(slide_ids)}</p:sldIdLst>"
        '<p:sldSz cx="9144000" cy="6858000" type="screen4x3"/><p:notesSz cx="6858000" cy="9144000"/>'
        "</p:presentation>"
    )
    master = (
        f"{XML_DECL}<p:sldMaster {_P_ROOT_ATTRS}><p:cSld><p:spTree>{_P_EMPTY_TREE}</p:spTree></p:cSld>"
        f'<p:clrMap {_CLR_MAP}/><p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/>'
        "</p:sldLayoutIdLst></p:sldMaster>"
    )
    layout = (
        f'{XML_DECL}<p:sldLayout {_P_ROOT_ATTRS} type="blank" preserve="1"><p:cSld name="Blank"><p:spTree>'
        f"{_P_EMPTY_TREE}</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>"
    )
    return zip_parts(
        {
            "[Content_Types].xml": content_types(overrides),
            "_rels/.rels": package_relationships("ppt/presentation.xml"),
            "docProps/core.xml": core_xml(title),
            "docProps/app.xml": APP_XML,
            "ppt/presentation.xml": presentation,
            "ppt/_rels/presentation.xml.rels": relationships(pres_rels),
            "ppt/slideMasters/slideMaster1.xml": master,
            "ppt/slideMasters/_rels/slideMaster1.xml.rels": relationships(
                [
                    ("rId1", "slideLayout", "../slideLayouts/slideLayout1.xml"),
                    ("rId2", "theme", "../theme/theme1.xml"),
                ]
            ),
            "ppt/slideLayouts/slideLayout1.xml": layout,
            "ppt/slideLayouts/_rels/slideLayout1.xml.rels": relationships(
                [("rId1", "slideMaster", "../slideMasters/slideMaster1.xml")]
            ),
            "ppt/theme/theme1.xml": _theme_xml(),
            **ppt,
        }
    )
