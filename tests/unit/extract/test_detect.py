"""Type detection: content first, the name only as a tiebreak."""

from __future__ import annotations

import io
import zipfile

import pytest

from devkit.samples import (
    make_docx,
    make_encrypted_office,
    make_html,
    make_pdf,
    make_pptx,
    make_scan_image,
    make_text,
    make_xls,
    make_xlsx,
)
from docindex.extract import ExtractionLimits, FileType, detect_type, extract
from docindex.extract.detect import DOCX, PPTX, XLS, XLSX, cfb_stream_names, extension


def _repack(package: bytes, replace: dict[str, bytes], first: list[str] | None = None) -> bytes:
    """Rewrite a zip, replacing members and putting ``first`` members at the front."""
    source = zipfile.ZipFile(io.BytesIO(package))
    names = source.namelist()
    order = [n for n in (first or []) if n in names] + [n for n in names if n not in (first or [])]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name in order:
            out.writestr(name, replace.get(name, source.read(name)))
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "name", "kind", "mime"),
    [
        (make_pdf(["PDF の本文"]), "見積書.docx", "pdf", "application/pdf"),
        (make_docx(["DOCX の本文"]), "memo.txt", "docx", DOCX),
        (make_xlsx({"S": [["a"]]}), "data.pdf", "xlsx", XLSX),
        (make_pptx(["スライド"]), "deck.xlsx", "pptx", PPTX),
        (make_xls({"S": [["a"]]}), "old.doc", "xls", XLS),
        (make_html("t", ["本文"]), "page.txt", "html", "text/html"),
        (make_text("東京都"), "noextension", "text", "text/plain"),
    ],
)
def test_content_wins_over_a_lying_extension(data: bytes, name: str, kind: str, mime: str) -> None:
    assert detect_type(data, name) == FileType(kind, mime)


def test_extracted_by_content_when_the_name_lies(limits: ExtractionLimits) -> None:
    assert extract(make_pdf(["四半期売上報告の本文です。東京都の売上について。"]), "x.docx", limits).kind == "pdf"
    doc = extract(make_docx(["会議議事録の本文"]), "x.txt", limits)
    assert (doc.kind, doc.text) == ("docx", "会議議事録の本文")


def test_ooxml_told_apart_even_when_folders_come_first() -> None:
    # filetype looks at the first few zip entries only; we read the directory.
    docx = _repack(make_docx(["x"]), {}, first=["word/document.xml", "docProps/core.xml"])
    assert detect_type(docx, "a").kind == "docx"


def test_ooxml_without_content_types_uses_the_folders() -> None:
    source = zipfile.ZipFile(io.BytesIO(make_pptx(["x"])))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for name in source.namelist():
            if name != "[Content_Types].xml":
                out.writestr(name, source.read(name))
    assert detect_type(buf.getvalue(), "a.bin") == FileType("pptx", PPTX)


def test_macro_enabled_variants_get_their_own_mime() -> None:
    package = make_docx(["x"])
    types = zipfile.ZipFile(io.BytesIO(package)).read("[Content_Types].xml")
    macro = types.replace(
        b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        b"application/vnd.ms-word.document.macroEnabled.main+xml",
    )
    detected = detect_type(_repack(package, {"[Content_Types].xml": macro}), "a.docm")
    assert detected == FileType("docx", "application/vnd.ms-word.document.macroEnabled.12")


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("TIFF", "image/tiff"),
        ("GIF", "image/gif"),
        ("BMP", "image/bmp"),
        ("WEBP", "image/webp"),
    ],
)
def test_images_go_to_ocr(limits: ExtractionLimits, japanese_font: str, fmt: str, mime: str) -> None:
    doc = extract(make_scan_image(["請求書"], dpi=30, fmt=fmt), "scan.dat", limits)
    assert (doc.kind, doc.content_type, doc.ocr_reason, doc.error, doc.text) == (
        "image",
        mime,
        "image",
        None,
        "",
    )


def test_encrypted_office_file(limits: ExtractionLimits) -> None:
    data = make_encrypted_office()
    assert detect_type(data, "売上.xlsx") == FileType("xlsx", XLSX, encrypted=True)
    assert detect_type(data, "noname").encrypted
    doc = extract(data, "売上.xlsx", limits)
    assert (doc.error, doc.text) == ("encrypted", "")


def test_cfb_directory_is_read() -> None:
    assert cfb_stream_names(make_xls({"S": [["a"]]})) == {"Root Entry", "Workbook"}
    assert cfb_stream_names(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600)) is None


def test_empty_file(limits: ExtractionLimits) -> None:
    assert detect_type(b"", "a.pdf") == FileType("empty", "application/x-empty")
    doc = extract(b"", "a.pdf", limits)
    assert (doc.kind, doc.error, doc.text) == ("empty", "empty", "")


def test_whitespace_only_text_is_empty(limits: ExtractionLimits) -> None:
    assert extract(b"  \r\n\t\n", "a.txt", limits).error == "empty"


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("a.csv", "text/csv"),
        ("a.TSV", "text/tab-separated-values"),
        ("a.md", "text/markdown"),
        ("a.txt", "text/plain"),
    ],
)
def test_text_extension_is_the_tiebreak(name: str, mime: str) -> None:
    assert detect_type(make_text("東京都,見積書\n"), name) == FileType("text", mime)


def test_html_extension_without_markup_is_still_html() -> None:
    assert detect_type(b"just words", "page.html").kind == "html"


def test_binary_and_unsupported(limits: ExtractionLimits) -> None:
    noise = bytes((i * 7919 + 13) % 256 for i in range(4096))
    assert extract(noise, "a.txt", limits).error == "unsupported"
    assert extract(make_text(r"{\rtf1\ansi 東京}"), "a.rtf", limits).kind == "rtf"
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("readme.txt", "hello")
    doc = extract(archive.getvalue(), "files.zip", limits)
    assert (doc.kind, doc.content_type, doc.error) == ("zip", "application/zip", None)
    assert doc.text == "readme.txt\nhello"


def test_gzip_is_binary_not_text() -> None:
    import gzip

    assert detect_type(gzip.compress(b"x" * 100), "a.txt").mime == "application/gzip"


def test_extension_helper() -> None:
    assert extension("営業部/見積書 No.1.XLSX") == "xlsx"
    assert extension("README") == ""
    assert extension(".bashrc") == ""
    assert extension("dir.d/file") == ""


def test_damaged_image_with_a_valid_signature_is_still_an_image() -> None:
    from docindex.extract import detect_type

    for head, mime in [
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff\xe0", "image/jpeg"),
        (b"II*\x00", "image/tiff"),
    ]:
        detected = detect_type(head + b"not really an image" * 20, "x.bin")
        assert (detected.kind, detected.mime) == ("image", mime)
