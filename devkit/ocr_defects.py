"""The OCR defect corpus (tests/fixtures/ocr): pages as offices scan, fax and print them.

Every file under ``tests/fixtures/ocr`` is listed in its ``manifest.json`` with its defect
class, and for each page the text it holds (``truth``, for the character error rate that
``bench/ocr_defects.py`` reports), the words a search must find in it (``words``, asserted
through the real pipeline by ``tests/integration/test_ocr_defects.py``) and how the page must
be read (``read``: ``ocr`` or ``text_layer``).

Two kinds of files:

- **Real files** from public test suites of OCR and PDF projects, copied as they are (or,
  where a file was too large, converted losslessly to a 1-bit G4 TIFF; the README says which),
  with their source, path, commit and licence in ``tests/fixtures/ocr/README.md``. Their
  entries are ``REAL`` below.
- **Generated files** (Japanese: nothing public and permissively licensed exists for these
  defects): the documents are written by LibreOffice (Writer for horizontal and vertical
  pages, Draw for a page mixing horizontal headings with a vertical body), rendered by PDFium
  and then degraded the way a copier or a fax machine does (blur, speckle, a slight skew,
  thresholding to 1 bit, anisotropic resampling), or edited the way broken PDF producers
  leave them (no ``/ToUnicode``, a ``/ToUnicode`` mapping every glyph to U+25A0, a Type3
  bitmap font). ``python -m devkit.ocr_defects`` writes them and the manifest again; it needs
  ``soffice`` (``apt-get install libreoffice-writer libreoffice-draw fonts-ipafont-mincho``),
  which the tests never do.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess  # soffice, fixed argv  # nosec B404
import sys
import tempfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ocr"
MANIFEST = FIXTURES / "manifest.json"
# Real Japanese pages nobody on the team made, with their text written down (tests/fixtures/ocr_real/README.md).
REAL_PAGES = FIXTURES.parent / "ocr_real" / "manifest.json"

Read = Literal["ocr", "text_layer"]

# The defect classes, in the order the benches report them: scanned pages (images and image-only
# PDFs), then PDFs whose text layer is judged (lying ones and ones to keep).
SCANNED_CLASSES = (
    "upright",
    "rotated_90",
    "rotated_180",
    "rotated_270",
    "skewed",
    "fax",
    "vertical",
    "vertical_mixed",
    "page_image",
)
TEXT_LAYER_CLASSES = ("no_tounicode", "type3", "placeholder", "text_with_scan", "text_layer_ok")


@dataclass(frozen=True)
class DefectPage:
    """One page: what it says, the words a search must find, and how it must be read."""

    truth: str
    words: tuple[str, ...] = ()
    read: Read = "ocr"


@dataclass(frozen=True)
class DefectFile:
    name: str
    defect: str  # the class the bench reports on
    pages: tuple[DefectPage, ...]
    source: str = "generated"
    note: str = ""
    # The folder the file is in: the defect corpus's, or the real pages' (``REAL_PAGES``).
    folder: Path = FIXTURES

    @property
    def kind(self) -> Literal["pdf", "image"]:
        return "pdf" if self.name.endswith(".pdf") else "image"

    @property
    def path(self) -> Path:
        return self.folder / self.name


def load_manifest(path: Path = MANIFEST) -> list[DefectFile]:
    """The corpus as listed in ``manifest.json``."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [
        DefectFile(
            name=item["name"],
            defect=item["defect"],
            pages=tuple(DefectPage(p["truth"], tuple(p.get("words", ())), p.get("read", "ocr")) for p in item["pages"]),
            source=item.get("source", "generated"),
            note=item.get("note", ""),
            folder=path.parent,
        )
        for item in raw["files"]
    ]


# -- the documents -------------------------------------------------------------

NOTICE = (
    "健康診断のお知らせ",
    "令和八年度の定期健康診断を次のとおり実施します。",
    "日時　十一月二十日（木）午前九時から正午まで",
    "場所　本社三階　大会議室",
    "対象　全従業員（派遣社員を含む）",
    "当日は朝食を取らずにお越しください。",
    "受診票は総務部で事前に受け取ってください。",
)
NOTICE_WORDS = ("健康診断", "大会議室", "受診票", "総務部")

MINUTES = (
    "第十二回取締役会議事録",
    "日時　令和八年十月十五日午前十時",
    "場所　本社四階第一会議室",
    "第一号議案　大阪支店の移転に関する件",
    "議長より北区への移転について説明があり、全員異議なく承認可決した。",
    "第二号議案　新製品の販売価格に関する件",
    "原案どおり承認可決した。",
)
MINUTES_WORDS = ("取締役会", "議事録", "大阪支店", "承認可決")

MIXED_TITLE = "社内行事のお知らせ"
MIXED_ROWS = ("避難訓練　十二月五日　本社中庭", "防災講習　十二月十二日　第二会議室")
MIXED_BODY = (
    "避難訓練では非常階段を使って中庭へ移動します。",
    "各部署の防火責任者は点呼を行ってください。",
    "防災講習の参加者は筆記用具を持参してください。",
)
MIXED_WORDS = ("避難訓練", "本社中庭", "非常階段", "防火責任者", "筆記用具")

REPORT = (
    (
        "営業報告書",
        "第三四半期の売上高は前年同期比で一二パーセント増加しました。",
        "東京本社と名古屋営業所の新規契約が好調です。",
    ),
    ("経費の状況", "出張旅費と広告宣伝費を見直し、販売管理費を削減しました。", "来期は物流倉庫の自動化に投資します。"),
    ("今後の課題", "海外拠点の人材育成と情報セキュリティ対策を強化します。", "以上"),
)
REPORT_WORDS = (("営業報告書", "名古屋営業所"), ("広告宣伝費", "物流倉庫"), ("人材育成", "海外拠点"))

CONTRACT = (
    "秘密保持契約書",
    "甲と乙は、相互に開示する技術情報の取扱いについて次のとおり合意する。",
    "第一条　乙は甲の書面による承諾なく第三者に開示してはならない。",
    "第二条　本契約の有効期間は締結日から三年間とする。",
)
CONTRACT_WORDS = ("秘密保持契約書", "技術情報", "有効期間")


def _text(lines: Iterable[str]) -> str:
    return "\n".join(lines)


# -- real files (copied from public test suites; README.md names source and licence) -------

_PHOTOTEST = (
    "This is a lot of 12 point text to test the\nocr code and see if it works on all types\nof file format.\n"
    "The quick brown dog jumped over the\nlazy fox. The quick brown dog jumped\n"
    "over the lazy fox. The quick brown dog\njumped over the lazy fox. The quick\nbrown dog jumped over the lazy fox."
)
_EUROTEXT = (
    "The (quick) [brown] {fox} jumps!\nOver the $43,456.78 <lazy> #90 dog\n& duck/goose, as 12.5% of E-mail\n"
    "from aspammer@website.com is spam.\nDer „schnelle” braune Fuchs springt\nüber den faulen Hund. Le renard brun\n"
    "«rapide» saute par-dessus le chien\nparesseux. La volpe marrone rapida\nsalta sopra il cane pigro. El zorro\n"
    "marrón rápido salta sobre el perro\nperezoso. A raposa marrom rápida\nsalta sobre o cão preguiçoso."
)

REAL: tuple[DefectFile, ...] = (
    DefectFile(
        "tesseract-phototest.tif",
        "upright",
        (DefectPage(_PHOTOTEST, ("quick", "brown", "format")),),
        "tesseract-ocr/test",
    ),
    DefectFile(
        "tesseract-eurotext.tif",
        "upright",
        (DefectPage(_EUROTEXT, ("schnelle", "renard", "zorro")),),
        "tesseract-ocr/test",
    ),
    DefectFile(
        "tesseract-phototest-rotated-L.png",
        "rotated_90",
        (DefectPage(_PHOTOTEST, ("quick", "format")),),
        "tesseract-ocr/test",
    ),
    DefectFile(
        "tesseract-phototest-rotated-R.png",
        "rotated_270",
        (DefectPage(_PHOTOTEST, ("quick", "format")),),
        "tesseract-ocr/test",
    ),
    DefectFile(
        "tesseract-phototest-rotated-180.png",
        "rotated_180",
        (DefectPage(_PHOTOTEST, ("quick", "format")),),
        "tesseract-ocr/test",
    ),
    DefectFile(
        "tika-testRotated+10.tif",
        "skewed",
        (DefectPage("", ("resolving", "otherwise", "contented")),),
        "apache/tika",
        note="no transcription: words only; Tesseract's OSD calls this page upside down (Tika's testPSM0)",
    ),
    DefectFile(
        "pdfminer-issue-791-non-unicode-cmap.pdf",
        "no_tounicode",
        (DefectPage("Peněžní prostředky na účtech"),),
        "pdfminer/pdfminer.six",
        note=(
            "a subset TrueType font without a Unicode mapping: PDFium decodes it shifted and with control "
            "characters. OCR (jpn+eng) reads 'prostredky', without the diacritics: no word is listed, since "
            "finding it as typed needs accent folding in the analyzer"
        ),
    ),
    DefectFile(
        "pdfminer-issue-625-identity-cmap.pdf",
        "text_layer_ok",
        (DefectPage("", ("Faktura",), "text_layer"), DefectPage("", ("Faktura",), "text_layer")),
        "pdfminer/pdfminer.six",
        note="PDFium flags most glyphs as unmapped yet decodes them right: must keep its text layer",
    ),
    DefectFile(
        "pdfminer-jo.pdf",
        "text_layer_ok",
        (DefectPage("", ("銀河", "修羅"), "text_layer"),),
        "pdfminer/pdfminer.six",
        note="vertical Japanese set by LaTeX and dvipdfm: a text layer to keep",
    ),
    DefectFile(
        "pdfminer-matplotlib.pdf",
        "text_layer_ok",
        (DefectPage("0 2468 02468", ()),),
        "pdfminer/pdfminer.six",
        note="a chart whose Type3 font maps to Unicode: too few characters for the text layer to count, so OCR'd",
    ),
    DefectFile(
        "ocrmypdf-aspect.pdf",
        "page_image",
        (DefectPage("This should be a perfect circle.", ("circle", "perfect")),),
        "ocrmypdf/OCRmyPDF",
        note=(
            "one 200 x 100 dpi image drawn through a soft mask (/SMask): its own samples are a grey square and a "
            "black bar, the page shows a circle and the line"
        ),
    ),
    DefectFile(
        "ocrmypdf-palette.pdf",
        "page_image",
        (DefectPage("", ("BAIONA", "Komunikabideak", "Hiriburu")),),
        "ocrmypdf/OCRmyPDF",
        note="a map as one image with an indexed palette (/Indexed, 8 bits): words only",
    ),
)


# -- image degradations ----------------------------------------------------------


def _noise(size: tuple[int, int], seed: int) -> Any:
    from PIL import Image

    return Image.frombytes("L", size, random.Random(seed).randbytes(size[0] * size[1]))  # noqa: S311 - fixed seed


def copier(image: Any, *, dpi: int, out_dpi: int = 300, angle: float = 0.4, seed: int = 1) -> Any:
    """A copier's or document scanner's 1-bit page: slightly skewed, blurred, speckled, thresholded."""
    from PIL import Image, ImageFilter

    page = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255) if angle else image
    page = page.filter(ImageFilter.GaussianBlur(0.7 * dpi / 300))
    page = Image.blend(page, _noise(page.size, seed), 0.12)
    if out_dpi != dpi:
        page = page.resize(
            (round(page.width * out_dpi / dpi), round(page.height * out_dpi / dpi)), Image.Resampling.LANCZOS
        )
    return page.point(lambda value: 0 if value < 150 else 255).convert("1")


def fax(image: Any, *, dpi: int, xdpi: int, ydpi: int, seed: int = 2) -> Any:
    """A fax machine's page: resampled to ``xdpi`` x ``ydpi`` (non-square pixels) and thresholded."""
    from PIL import Image

    page = Image.blend(image, _noise(image.size, seed), 0.08)
    page = page.resize((round(image.width * xdpi / dpi), round(image.height * ydpi / dpi)), Image.Resampling.BOX)
    return page.point(lambda value: 0 if value < 160 else 255).convert("1")


def photo(image: Any, *, dpi: int, angle: float, out_dpi: int = 200) -> Any:
    """A phone photo of a page: grey, askew, softly lit."""
    from PIL import Image, ImageFilter

    page = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    page = page.resize(
        (round(page.width * out_dpi / dpi), round(page.height * out_dpi / dpi)), Image.Resampling.LANCZOS
    )
    shade = Image.linear_gradient("L").resize(page.size).point(lambda value: 200 + value // 5)
    return Image.composite(page, shade, page.point(lambda value: 255 if value < 128 else 0)).filter(
        ImageFilter.GaussianBlur(0.6)
    )


def tiff(frames: Sequence[Any], dpi: tuple[int, int], compression: str = "group4") -> bytes:
    buf = io.BytesIO()
    first, *rest = frames
    first.save(buf, format="TIFF", save_all=True, append_images=rest, dpi=dpi, compression=compression)
    return buf.getvalue()


def image_file(image: Any, fmt: str, dpi: int, **options: Any) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format=fmt, dpi=(dpi, dpi), **options)
    return buf.getvalue()


# -- PDFs -----------------------------------------------------------------------------


def render(pdf: bytes, index: int, dpi: int) -> Any:
    """A page rendered by PDFium as 8-bit grey (what the scanner sees)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        return document[index].render(scale=dpi / 72, grayscale=True).to_pil().copy()
    finally:
        document.close()


def scan_pdf(images: Sequence[Any], dpi: int | tuple[int, int]) -> bytes:
    """An image-only PDF of 1-bit pages (CCITT G4), as a scanner's PDF mode writes it."""
    buf = io.BytesIO()
    first, *rest = images
    first.save(buf, format="PDF", save_all=True, append_images=rest, dpi=dpi if isinstance(dpi, tuple) else (dpi, dpi))
    return buf.getvalue()


def incremental_update(pdf: bytes, objects: dict[int, bytes]) -> bytes:
    """``pdf`` with ``objects`` (number → body between ``obj`` and ``endobj``) replaced by an
    incremental update, the way editors save changes (ISO 32000-1 7.5.6)."""
    import re

    start = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
    trailer = re.findall(rb"trailer\s*<<(.*?)>>\s*startxref", pdf, re.S)[-1]
    size = int(re.search(rb"/Size\s+(\d+)", trailer).group(1))  # type: ignore[union-attr]
    root = re.search(rb"/Root\s+\d+\s+\d+\s+R", trailer).group(0)  # type: ignore[union-attr]
    out = bytearray(pdf if pdf.endswith(b"\n") else pdf + b"\n")
    offsets = {}
    for number, body in sorted(objects.items()):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n"
    for number, offset in sorted(offsets.items()):
        out += b"%d 1\n%010d 00000 n \n" % (number, offset)
    out += b"trailer\n<< /Size %d %s /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (size, root, start, xref_at)
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    packed = zlib.compress(data)
    return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n" % (len(packed), extra) + packed + b"\nendstream"


def without_tounicode(pdf: bytes) -> bytes:
    """Every font's ``/ToUnicode`` entry renamed (same length, offsets unchanged): no Unicode mapping."""
    return pdf.replace(b"/ToUnicode ", b"/ToUnicodX ")


def placeholder_tounicode(pdf: bytes, base_font: bytes) -> bytes:
    """The ``/ToUnicode`` CMap of the font named ``base_font`` replaced by one mapping every code to U+25A0."""
    import re

    match = re.search(rb"/BaseFont\s*/" + re.escape(base_font) + rb"[^>]*?/ToUnicode\s+(\d+)\s+0\s+R", pdf, re.S)
    if match is None:
        raise ValueError(f"no font {base_font!r} with a /ToUnicode")
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        b"/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
        b"1 begincodespacerange <00> <FF> endcodespacerange\n"
        b"1 beginbfrange <01> <FF> <25A0> endbfrange\n"
        b"endcmap CMapName currentdict /CMap defineresource pop end end\n"
    )
    # One bfrange would count up (U+25A0, U+25A1, ...): map code by code to the same glyph.
    lines = b"".join(b"<%02X> <25A0>\n" % code for code in range(1, 256))
    cmap = cmap.replace(b"1 beginbfrange <01> <FF> <25A0> endbfrange\n", b"255 beginbfchar\n" + lines + b"endbfchar\n")
    return incremental_update(pdf, {int(match.group(1)): _stream(cmap)})


def type3_pdf(lines: Sequence[str], *, font_size: float = 12, page: tuple[float, float] = (510, 220)) -> bytes:
    """A PDF whose text is set in a Type3 bitmap font without ``/ToUnicode`` (dvipdfm and
    Ghostscript write bitmap fonts this way): each glyph an image mask, codes numbered in order
    of first use, glyph names ``/g1``, ``/g2``... which map to nothing."""
    from PIL import Image, ImageDraw, ImageFont

    from devkit.samples.fonts import find_japanese_font

    em = 64
    font = ImageFont.truetype(find_japanese_font(), size=em)
    codes: dict[str, int] = {}
    for line in lines:
        for ch in line:
            codes.setdefault(ch, len(codes) + 1)
    if len(codes) > 255:
        raise ValueError("at most 255 distinct characters")
    procs = []
    for ch in codes:
        glyph = Image.new("1", (em, em), 0)
        ImageDraw.Draw(glyph).text((0, 0), ch, fill=1, font=font)
        data = glyph.tobytes()  # 1 = ink: with /Decode [1 0] the image mask paints where a sample is 1
        procs.append(
            b"%d 0 0 0 %d %d d1 %d 0 0 %d 0 0 cm BI /IM true /W %d /H %d /BPC 1 /D [1 0] ID " % ((em,) * 7)
            + data
            + b" EI"
        )
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    proc_ids = [add(b"<< /Length %d >>\nstream\n" % len(proc) + proc + b"\nendstream") for proc in procs]
    names = b" ".join(b"/g%d" % code for code in codes.values())
    charprocs = b" ".join(b"/g%d %d 0 R" % (code, pid) for code, pid in zip(codes.values(), proc_ids, strict=True))
    widths = b" ".join(b"%d" % em for _ in codes)
    font_id = add(
        b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 %d %d] /FontMatrix [%f 0 0 %f 0 0] " % (em, em, 1 / em, 1 / em)
        + b"/CharProcs << "
        + charprocs
        + b" >> /Encoding << /Type /Encoding /Differences [1 "
        + names
        + b"] >> /FirstChar 1 /LastChar %d /Widths [" % len(codes)
        + widths
        + b"] /Resources << >> >>"
    )
    width, height = page
    content = bytearray(b"BT /T3 %g Tf %g TL 36 %g Td\n" % (font_size, font_size * 1.6, height - 48))
    for line in lines:
        content += b"<" + bytes(codes[ch] for ch in line).hex().encode() + b"> Tj T*\n"
    content += b"ET"
    content_id = add(b"<< /Length %d >>\nstream\n" % len(content) + bytes(content) + b"\nendstream")
    pages_id = len(objects) + 2
    page_id = add(
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %g %g] "
        b"/Resources << /Font << /T3 %d 0 R >> >> /Contents %d 0 R >>" % (pages_id, width, height, font_id, content_id)
    )
    add(b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % page_id)
    root = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)


def join_pdfs(parts: Sequence[tuple[bytes, Sequence[int]]]) -> bytes:
    """One PDF of the given pages of other PDFs (PDFium's page import), e.g. a text PDF plus a scanned page."""
    import pypdfium2 as pdfium

    target = pdfium.PdfDocument.new()
    for data, pages in parts:
        source = pdfium.PdfDocument(data)
        target.import_pages(source, list(pages))
    buf = io.BytesIO()
    target.save(buf)
    return buf.getvalue()


def with_rotate_attribute(pdf: bytes, degrees: int) -> bytes:
    """Every page's ``/Rotate`` set: a viewer (and PDFium's renderer) turns the page by ``degrees``."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    for page in document:
        page.set_rotation(degrees)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


# -- LibreOffice ------------------------------------------------------------------------

_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
)
_FONTS = (
    '<office:font-face-decls><style:font-face style:name="IPAMincho" svg:font-family="IPAMincho"/>'
    '<style:font-face style:name="IPAGothic" svg:font-family="IPAGothic"/></office:font-face-decls>'
)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def writer_document(
    pages: Sequence[Sequence[str]],
    *,
    vertical: bool = False,
    size_mm: tuple[int, int] = (148, 210),
    body_font: str = "IPAMincho",
    font_for_page: Sequence[str] = (),
    size_pt: float = 11,
) -> str:
    """A flat ODT: one page per entry (page breaks between), the first line of each a heading."""
    mode = "tb-rl" if vertical else "lr-tb"
    width, height = size_mm
    styles = []
    paragraphs = []
    page_break = ' fo:break-before="page"'
    for number, lines in enumerate(pages):
        font = font_for_page[number] if number < len(font_for_page) else body_font
        styles.append(
            f'<style:style style:name="H{number}" style:family="paragraph">'
            f'<style:paragraph-properties fo:margin-bottom="4mm"{page_break if number else ""}/>'
            f'<style:text-properties style:font-name="IPAGothic" style:font-name-asian="IPAGothic" '
            f'fo:font-size="{size_pt + 5}pt" style:font-size-asian="{size_pt + 5}pt"/></style:style>'
            f'<style:style style:name="B{number}" style:family="paragraph">'
            f'<style:text-properties style:font-name="{font}" style:font-name-asian="{font}" '
            f'fo:font-size="{size_pt}pt" style:font-size-asian="{size_pt}pt"/></style:style>'
        )
        head, *rest = lines
        paragraphs.append(f'<text:p text:style-name="H{number}">{_escape(head)}</text:p>')
        paragraphs += [f'<text:p text:style-name="B{number}">{_escape(line)}</text:p>' for line in rest]
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document {_NS} office:version="1.3" '
        'office:mimetype="application/vnd.oasis.opendocument.text">'
        + _FONTS
        + '<office:styles><style:default-style style:family="paragraph"><style:text-properties '
        'style:language-asian="ja" style:country-asian="JP"/></style:default-style></office:styles>'
        + '<office:automatic-styles><style:page-layout style:name="pm1"><style:page-layout-properties '
        f'fo:page-width="{width}mm" fo:page-height="{height}mm" fo:margin-top="15mm" fo:margin-bottom="15mm" '
        f'fo:margin-left="15mm" fo:margin-right="15mm" style:writing-mode="{mode}"/></style:page-layout>'
        + "".join(styles)
        + '</office:automatic-styles><office:master-styles><style:master-page style:name="Standard" '
        'style:page-layout-name="pm1"/></office:master-styles><office:body><office:text>'
        + "".join(paragraphs)
        + "</office:text></office:body></office:document>"
    )


def draw_mixed_document() -> str:
    """A flat ODG: an A5 notice with a horizontal title and schedule and a vertical text box below
    (Draw's text direction "top to bottom, right to left", set on the box's paragraphs)."""
    rows = "".join(f'<text:p text:style-name="PB">{_escape(row)}</text:p>' for row in MIXED_ROWS)
    body = "".join(f'<text:p text:style-name="PB">{_escape(line)}</text:p>' for line in MIXED_BODY)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document {_NS} office:version="1.3" '
        'office:mimetype="application/vnd.oasis.opendocument.graphics">' + _FONTS + "<office:automatic-styles>"
        '<style:page-layout style:name="PM1"><style:page-layout-properties fo:margin-top="0cm" '
        'fo:margin-bottom="0cm" fo:margin-left="0cm" fo:margin-right="0cm" fo:page-width="14.8cm" '
        'fo:page-height="21cm" style:print-orientation="portrait"/></style:page-layout>'
        '<style:style style:name="dp1" style:family="drawing-page"/>'
        '<style:style style:name="gh" style:family="graphic"><style:graphic-properties draw:stroke="none" '
        'draw:fill="none" draw:textarea-horizontal-align="left" draw:textarea-vertical-align="top" '
        'draw:auto-grow-height="false"/></style:style>'
        '<style:style style:name="gv" style:family="graphic"><style:graphic-properties draw:stroke="none" '
        'draw:fill="none" draw:textarea-horizontal-align="right" draw:textarea-vertical-align="top" '
        'draw:auto-grow-height="false" draw:auto-grow-width="false"/>'
        '<style:paragraph-properties style:writing-mode="tb-rl"/></style:style>'
        '<style:style style:name="PT" style:family="paragraph"><style:text-properties style:font-name="IPAGothic" '
        'style:font-name-asian="IPAGothic" fo:font-size="18pt" style:font-size-asian="18pt"/></style:style>'
        '<style:style style:name="PB" style:family="paragraph"><style:text-properties style:font-name="IPAMincho" '
        'style:font-name-asian="IPAMincho" fo:font-size="11pt" style:font-size-asian="11pt"/></style:style>'
        "</office:automatic-styles>"
        '<office:master-styles><style:master-page style:name="Default" style:page-layout-name="PM1" '
        'draw:style-name="dp1"/></office:master-styles>'
        '<office:body><office:drawing><draw:page draw:name="p1" draw:master-page-name="Default">'
        '<draw:frame draw:style-name="gh" svg:x="1.5cm" svg:y="1.5cm" svg:width="11.8cm" svg:height="1.4cm">'
        f'<draw:text-box><text:p text:style-name="PT">{MIXED_TITLE}</text:p></draw:text-box></draw:frame>'
        '<draw:frame draw:style-name="gh" svg:x="1.5cm" svg:y="3.4cm" svg:width="11.8cm" svg:height="1.6cm">'
        f"<draw:text-box>{rows}</draw:text-box></draw:frame>"
        '<draw:custom-shape draw:style-name="gv" svg:x="3cm" svg:y="6cm" svg:width="10.3cm" svg:height="13cm">'
        + body
        + '<draw:enhanced-geometry svg:viewBox="0 0 21600 21600" draw:type="rectangle" '
        'draw:enhanced-path="M 0 0 L 21600 0 21600 21600 0 21600 0 0 Z N"/></draw:custom-shape>'
        "</draw:page></office:drawing></office:body></office:document>"
    )


def soffice_pdf(source: str, suffix: str, workdir: Path) -> bytes:
    """``source`` (flat ODF) converted to PDF by LibreOffice."""
    soffice = shutil.which("soffice")
    if soffice is None:
        raise SystemExit("soffice not found: apt-get install libreoffice-writer libreoffice-draw fonts-ipafont-mincho")
    path = workdir / f"doc{suffix}"
    path.write_text(source, encoding="utf-8")
    subprocess.run(  # noqa: S603 - the developer's own soffice on a file written just above
        [soffice, "--headless", "--convert-to", "pdf", "--outdir", str(workdir), str(path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return (workdir / "doc.pdf").read_bytes()


# -- the generated corpus ------------------------------------------------------------------


@dataclass
class _Built:
    files: dict[str, bytes] = field(default_factory=dict)
    entries: list[DefectFile] = field(default_factory=list)

    def add(self, name: str, data: bytes, defect: str, pages: Sequence[DefectPage], note: str = "") -> None:
        self.files[name] = data
        self.entries.append(DefectFile(name, defect, tuple(pages), "generated", note))


def build(workdir: Path) -> _Built:
    """Every generated file and its manifest entry (LibreOffice writes the documents)."""
    out = _Built()
    # Small pages (postcard-sized) keep OCR in the tests short; the defects survive at any size.
    notice_pdf = soffice_pdf(writer_document([NOTICE], size_mm=(150, 105)), ".fodt", workdir)
    minutes_pdf = soffice_pdf(writer_document([MINUTES], vertical=True, size_mm=(105, 148)), ".fodt", workdir)
    mixed_pdf = soffice_pdf(draw_mixed_document(), ".fodg", workdir)
    report_pdf = soffice_pdf(
        writer_document(REPORT, size_mm=(150, 105), font_for_page=("IPAGothic", "IPAMincho", "IPAMincho")),
        ".fodt",
        workdir,
    )
    contract_pdf = soffice_pdf(writer_document([CONTRACT], size_mm=(180, 110), size_pt=10.5), ".fodt", workdir)

    notice = render(notice_pdf, 0, 300)
    minutes = render(minutes_pdf, 0, 300)
    # Draw keeps its default A4 page whatever the layout says: the notice is its top-left 148 x 150 mm.
    mixed = render(mixed_pdf, 0, 300).crop((0, 0, round(148 / 25.4 * 300), round(150 / 25.4 * 300)))
    notice_page = DefectPage(_text(NOTICE), NOTICE_WORDS)
    minutes_page = DefectPage(_text(MINUTES), MINUTES_WORDS)

    scanned = copier(notice, dpi=300)
    out.add("upright-notice.tif", tiff([scanned], (300, 300)), "upright", [notice_page], "copier, 300 dpi, G4")
    out.add("rotated90-notice.tif", tiff([scanned.rotate(90, expand=True)], (300, 300)), "rotated_90", [notice_page])
    out.add(
        "rotated180-notice.png",
        image_file(scanned.rotate(180, expand=True), "PNG", 300, optimize=True),
        "rotated_180",
        [notice_page],
    )
    out.add(
        "rotated270-notice.pdf",
        scan_pdf([scanned.rotate(270, expand=True)], 300),
        "rotated_270",
        [notice_page],
        "scanned sideways into a PDF (the image itself lies on its side)",
    )
    out.add(
        "rotate-attribute-notice.pdf",
        with_rotate_attribute(scan_pdf([scanned.rotate(90, expand=True)], 300), 90),
        "rotated_90",
        [notice_page],
        "image on its side and the page's /Rotate 90 turning it upright: must not be turned twice",
    )
    sideways_minutes = copier(minutes, dpi=300, out_dpi=200, seed=3).rotate(270, expand=True)
    out.add("rotated270-minutes-vertical.tif", tiff([sideways_minutes], (200, 200)), "rotated_270", [minutes_page])

    out.add(
        "skew4-notice-photo.jpg",
        image_file(photo(notice, dpi=300, angle=4), "JPEG", 200, quality=70),
        "skewed",
        [notice_page],
        "a phone photo, 4 degrees",
    )
    out.add("skew8-notice.tif", tiff([copier(notice, dpi=300, angle=8, seed=4)], (300, 300)), "skewed", [notice_page])
    out.add(
        "skew-12-notice.png",
        image_file(copier(notice, dpi=300, out_dpi=200, angle=-12, seed=5), "PNG", 200, optimize=True),
        "skewed",
        [notice_page],
    )

    out.add(
        "fax-204x98-notice.tif",
        tiff([fax(notice, dpi=300, xdpi=204, ydpi=98)], (204, 98)),
        "fax",
        [notice_page],
        "standard fax resolution, G4",
    )
    report_pages = [render(report_pdf, index, 300) for index in range(3)]
    report_truth = [DefectPage(_text(lines), words) for lines, words in zip(REPORT, REPORT_WORDS, strict=True)]
    out.add(
        "fax-200x100-report-2pages.tif",
        tiff(
            [fax(page, dpi=300, xdpi=200, ydpi=100, seed=6 + i) for i, page in enumerate(report_pages[:2])],
            (200, 100),
            "group3",
        ),
        "fax",
        report_truth[:2],
        "two pages, G3",
    )
    out.add(
        "fax-204x98-notice.pdf",
        scan_pdf([fax(notice, dpi=300, xdpi=204, ydpi=98, seed=8)], (204, 98)),
        "fax",
        [notice_page],
        "a fax server's PDF: one CCITT G4 image per page at 204 x 98 dpi",
    )

    out.add(
        "vertical-minutes.pdf",
        minutes_pdf,
        "vertical",
        [DefectPage(minutes_page.truth, minutes_page.words, "text_layer")],
        "the vertical minutes as LibreOffice writes them to PDF: PDFium gives one character per line",
    )
    out.add(
        "vertical-minutes.tif",
        tiff([copier(minutes, dpi=300, out_dpi=200, seed=9)], (200, 200)),
        "vertical",
        [minutes_page],
    )
    mixed_truth = _text([MIXED_TITLE, *MIXED_ROWS, *MIXED_BODY])
    out.add(
        "vertical-mixed-notice.tif",
        tiff([copier(mixed, dpi=300, out_dpi=200, seed=10)], (200, 200)),
        "vertical_mixed",
        [DefectPage(mixed_truth, MIXED_WORDS)],
        "LibreOffice Draw: horizontal title and schedule, vertical body",
    )

    out.add(
        "report.pdf", report_pdf, "text_layer_ok", [DefectPage(p.truth, p.words, "text_layer") for p in report_truth]
    )
    out.add("report-no-tounicode.pdf", without_tounicode(report_pdf), "no_tounicode", report_truth)
    first = report_truth[0]
    out.add(
        "report-placeholder-pages.pdf",
        placeholder_tounicode(report_pdf, b"CAAAAA+IPAMincho"),
        "placeholder",
        [DefectPage(first.truth, first.words, "text_layer"), *report_truth[1:]],
        "pages 2 and 3 decode to U+25A0 (their font's /ToUnicode maps every code to it)",
    )
    out.add(
        "type3-contract.pdf",
        type3_pdf(CONTRACT),
        "type3",
        [DefectPage(_text(CONTRACT), CONTRACT_WORDS)],
        "a Type3 bitmap font without /ToUnicode, glyphs named /g1, /g2...",
    )
    scan_page = scan_pdf([copier(render(contract_pdf, 0, 300), dpi=300, seed=11)], 300)
    out.add(
        "contract-last-page-scanned.pdf",
        join_pdfs([(report_pdf, [0, 1]), (scan_page, [0])]),
        "text_with_scan",
        [
            DefectPage(report_truth[0].truth, report_truth[0].words, "text_layer"),
            DefectPage(report_truth[1].truth, report_truth[1].words, "text_layer"),
            DefectPage(_text(CONTRACT), CONTRACT_WORDS),
        ],
        "two text pages and a scanned last page",
    )
    return out


def write_manifest(entries: Iterable[DefectFile], path: Path = MANIFEST) -> None:
    files = []
    for entry in entries:
        # The folder is where the manifest is: not written.
        item: dict[str, Any] = {
            key: value for key, value in asdict(entry).items() if value not in ("", ()) and key != "folder"
        }
        item["pages"] = [
            {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(page).items()} for page in entry.pages
        ]
        files.append(item)
    path.write_text(json.dumps({"files": files}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    del argv
    with tempfile.TemporaryDirectory(prefix="docindex-defects-") as tmp:
        built = build(Path(tmp))
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, data in built.files.items():
        (FIXTURES / name).write_bytes(data)
        print(f"{name:45s} {len(data) / 1024:7.1f} KB", file=sys.stderr)
    write_manifest([*REAL, *built.entries])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
