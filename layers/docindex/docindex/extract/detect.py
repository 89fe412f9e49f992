"""Type detection from content (magic bytes, container directories); the file name only breaks ties.

- PDF: ``%PDF-`` within the first 1024 bytes (where readers accept it).
- Zip: the zip directory says what the package is: ``[Content_Types].xml``
  names the main part's content type (DOCX vs DOCM vs DOTX, XLSX vs XLSM,
  PPTX vs PPSX...), falling back to the ``word/``, ``xl/``, ``ppt/`` folders;
  ODF packages by their ``mimetype`` member. (filetype only looks at the
  first few zip entries, whose order depends on the writer.)
- OLE2 (legacy Office): the compound file's directory is read and the
  stream names decide: ``Workbook`` -> .xls, ``WordDocument`` -> .doc,
  ``PowerPoint Document`` -> .ppt, ``EncryptedPackage`` -> a
  password-protected OOXML file (``encrypted``). filetype's fixed-offset
  heuristics mistake some .xls for .ppt.
- Everything else binary: ``filetype`` (images, archives, media).
- Text: no NUL bytes (unless UTF-16/32) and few control characters; HTML by
  its opening markup or, failing that, its extension; otherwise the
  extension picks text/csv, text/markdown, ... (default text/plain).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib

from docindex.extract.base import FileType

# Apart from zip and OLE2 packages (see is_package), the type is decided from this many leading bytes.
SNIFF_BYTES = 8192
_CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLS = "application/vnd.ms-excel"

# Main part content type in [Content_Types].xml -> (kind, MIME type of the file).
_OOXML_MAIN = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml": ("docx", DOCX),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": (
        "docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.template",
    ),
    "application/vnd.ms-word.document.macroEnabled.main+xml": (
        "docx",
        "application/vnd.ms-word.document.macroEnabled.12",
    ),
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml": (
        "docx",
        "application/vnd.ms-word.template.macroEnabled.12",
    ),
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": ("xlsx", XLSX),
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml": (
        "xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.template",
    ),
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml": (
        "xlsx",
        "application/vnd.ms-excel.sheet.macroEnabled.12",
    ),
    "application/vnd.ms-excel.template.macroEnabled.main+xml": (
        "xlsx",
        "application/vnd.ms-excel.template.macroEnabled.12",
    ),
    "application/vnd.ms-excel.sheet.binary.macroEnabled.main": (
        "xlsb",
        "application/vnd.ms-excel.sheet.binary.macroEnabled.12",
    ),
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml": ("pptx", PPTX),
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml": (
        "pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.slideshow",
    ),
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml": (
        "pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.template",
    ),
    "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml": (
        "pptx",
        "application/vnd.ms-powerpoint.presentation.macroEnabled.12",
    ),
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml": (
        "pptx",
        "application/vnd.ms-powerpoint.slideshow.macroEnabled.12",
    ),
    "application/vnd.ms-powerpoint.template.macroEnabled.main+xml": (
        "pptx",
        "application/vnd.ms-powerpoint.template.macroEnabled.12",
    ),
}
_OOXML_BY_EXTENSION = {
    "docx": ("docx", DOCX),
    "docm": ("docx", "application/vnd.ms-word.document.macroEnabled.12"),
    "dotx": ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.template"),
    "xlsx": ("xlsx", XLSX),
    "xlsm": ("xlsx", "application/vnd.ms-excel.sheet.macroEnabled.12"),
    "xlsb": ("xlsb", "application/vnd.ms-excel.sheet.binary.macroEnabled.12"),
    "pptx": ("pptx", PPTX),
    "pptm": ("pptx", "application/vnd.ms-powerpoint.presentation.macroEnabled.12"),
    "ppsx": ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.slideshow"),
}
_OOXML_FOLDERS = (("word/", "docx", DOCX), ("xl/", "xlsx", XLSX), ("ppt/", "pptx", PPTX))
_ODF = {
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
}
_CONTENT_TYPE_ATTR = re.compile(rb'ContentType\s*=\s*"([^"]+)"')

# Images the OCR worker reads (Pillow + Tesseract).
_OCR_IMAGES = {
    "image/png",
    "image/jpeg",
    "image/tiff",
    "image/gif",
    "image/bmp",
    "image/webp",
    "image/x-ms-bmp",
}

_TEXT_BY_EXTENSION = {
    "txt": "text/plain",
    "text": "text/plain",
    "log": "text/plain",
    "ini": "text/plain",
    "cfg": "text/plain",
    "conf": "text/plain",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "tab": "text/tab-separated-values",
    "md": "text/markdown",
    "markdown": "text/markdown",
    "rst": "text/x-rst",
    "json": "application/json",
    "xml": "application/xml",
    "yaml": "application/yaml",
    "yml": "application/yaml",
    "eml": "message/rfc822",
}
_HTML_EXTENSIONS = {"html", "htm", "xhtml", "shtml"}
_HTML_START = re.compile(
    rb"^\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def extension(filename: str) -> str:
    """Lowercase extension without the dot ("" when there is none)."""
    base = filename.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


def is_package(head: bytes) -> bool:
    """Whether ``head`` starts a zip (OOXML, ODF, EPUB) or OLE2 (legacy Office) package.

    Only such a file's directory, which can be anywhere in it, tells what it is
    (DOCX or plain zip, XLS or DOC): its type cannot be decided from its start alone.
    """
    return head.startswith((*_ZIP_MAGICS, _CFB_MAGIC))


_IMAGE_MAGICS: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


def detect_type(data: bytes, filename: str) -> FileType:  # noqa: PLR0911 - one return per outcome
    """Detect the file's type from its bytes; the extension only breaks ties."""
    ext = extension(filename)
    if not data:
        return FileType("empty", "application/x-empty")
    if b"%PDF-" in data[:1024]:
        return FileType("pdf", "application/pdf")
    if data.startswith(_ZIP_MAGICS):
        return _detect_zip(data, ext)
    if data.startswith(_CFB_MAGIC):
        return _detect_cfb(data, ext)
    # Image signatures are unambiguous: a damaged image is a damaged image
    # (the OCR worker reports it corrupt), never text in some 8-bit encoding.
    for magic, mime in _IMAGE_MAGICS:
        if data.startswith(magic):
            return FileType("image", mime)
    head = data[:SNIFF_BYTES]
    if looks_like_text(head):
        return _detect_text(head, ext)

    import filetype

    guess = filetype.guess(head)
    if guess is None:
        return FileType("unknown", "application/octet-stream")
    mime = guess.mime
    if mime in _OCR_IMAGES:
        return FileType("image", "image/bmp" if mime == "image/x-ms-bmp" else mime)
    if mime.startswith(("image/", "audio/", "video/")):
        return FileType("media", mime)
    return FileType("binary", mime)


def looks_like_text(head: bytes) -> bool:
    """No NUL bytes (except UTF-16/32 text) and few control characters (1%, at least 2 allowed)."""
    if head.startswith(_BOMS):
        return True
    if b"\x00" in head:
        from docindex.extract.encoding import bomless_utf16

        return bomless_utf16(head) is not None
    return len(_CONTROL.findall(head)) <= max(2, len(head) // 100)


def _detect_text(head: bytes, ext: str) -> FileType:
    sample = head
    for bom in _BOMS:
        if sample.startswith(bom):
            sample = sample[len(bom) :]
            break
    if b"\x00" in sample[:64]:
        # UTF-16/32: look at the markup through the NULs.
        sample = sample.replace(b"\x00", b"")
    if sample.lstrip().startswith(b"{\\rtf"):
        return FileType("rtf", "application/rtf")
    if looks_like_mail(sample) or (ext in _MAIL_EXTENSIONS and _MAIL_HEADER_LINE.match(sample)):
        mht = ext in ("mht", "mhtml") or b"multipart/related" in sample[:SNIFF_BYTES].lower()
        return FileType("eml", "multipart/related" if mht else "message/rfc822")
    if _HTML_START.match(sample[:2048]) or ext in _HTML_EXTENSIONS:
        return FileType("html", "application/xhtml+xml" if ext == "xhtml" else "text/html")
    mime = _TEXT_BY_EXTENSION.get(ext)
    if mime is None and sample.lstrip().startswith(b"<?xml"):
        mime = "application/xml"
    return FileType("text", mime or "text/plain")


_MAIL_EXTENSIONS = {"eml", "mht", "mhtml", "msg"}
_MAIL_HEADER_LINE = re.compile(rb"^[!-9;-~]{1,76}:[ \t]?[^\r\n]*\r?\n")
_MAIL_HEADERS = {
    b"from",
    b"to",
    b"cc",
    b"subject",
    b"date",
    b"mime-version",
    b"received",
    b"message-id",
    b"return-path",
    b"content-type",
    b"delivered-to",
}


def looks_like_mail(sample: bytes) -> bool:
    """An RFC 5322 header block: only header lines up to the first blank line, with 3+ well-known names."""
    known = 0
    for number, line in enumerate(sample[:SNIFF_BYTES].splitlines()):
        if not line.strip():
            return known >= 3 and number > 0
        if line[:1] in (b" ", b"\t"):
            continue  # a folded header's continuation
        name, colon, _ = line.partition(b":")
        if not colon or not _MAIL_HEADER_LINE.match(line + b"\n"):
            return False
        known += name.strip().lower() in _MAIL_HEADERS
    return False


def _detect_zip(data: bytes, ext: str) -> FileType:  # noqa: PLR0911 - one return per outcome
    by_extension = _OOXML_BY_EXTENSION.get(ext)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
            main = _main_content_type(zf, names)
            odf = _odf_mimetype(zf, names)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError):
        # A damaged package: trust the name for the kind, so the extractor
        # reports ``corrupt`` instead of the file being ``unsupported``.
        if by_extension:
            return FileType(*by_extension)
        return FileType("zip", "application/zip")
    if main:
        return FileType(*main)
    for folder, kind, mime in _OOXML_FOLDERS:
        if any(name.startswith(folder) for name in names):
            if by_extension and by_extension[0] == kind:
                return FileType(*by_extension)
            return FileType(kind, mime)
    if odf:
        return FileType(_ODF.get(odf, "odf"), odf)
    if "META-INF/container.xml" in names and "mimetype" in names:
        return FileType("epub", "application/epub+zip")
    return FileType("zip", "application/zip")


def _main_content_type(zf: zipfile.ZipFile, names: list[str]) -> tuple[str, str] | None:
    if "[Content_Types].xml" not in names:
        return None
    info = zf.getinfo("[Content_Types].xml")
    if info.file_size > 1024 * 1024:
        return None
    try:
        with zf.open(info) as stream:
            xml = stream.read(1024 * 1024)
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, ValueError, OSError, EOFError, zlib.error):
        return None
    for match in _CONTENT_TYPE_ATTR.finditer(xml):
        found = _OOXML_MAIN.get(match.group(1).decode("ascii", "replace"))
        if found:
            return found
    return None


def _odf_mimetype(zf: zipfile.ZipFile, names: list[str]) -> str | None:
    if "mimetype" not in names or zf.getinfo("mimetype").file_size > 200:
        return None
    try:
        with zf.open("mimetype") as stream:
            return stream.read(200).decode("ascii").strip() or None
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, ValueError, OSError, EOFError, zlib.error):
        return None  # any damage just means "not ODF"


_OLE_BY_EXTENSION = {
    "doc": ("doc", "application/msword"),
    "dot": ("doc", "application/msword"),
    "ppt": ("ppt", "application/vnd.ms-powerpoint"),
    "pps": ("ppt", "application/vnd.ms-powerpoint"),
    "pot": ("ppt", "application/vnd.ms-powerpoint"),
    "msg": ("msg", "application/vnd.ms-outlook"),
    "xls": ("xls", XLS),
}


def _detect_cfb(data: bytes, ext: str) -> FileType:  # noqa: PLR0911 - one return per outcome
    names = cfb_stream_names(data)
    if names is None and ext in _OLE_BY_EXTENSION:
        # A damaged directory: trust the name for the kind, so the extractor reports ``corrupt``.
        return FileType(*_OLE_BY_EXTENSION[ext])
    if names is None:
        import filetype

        guess = filetype.guess(data[:SNIFF_BYTES])
        if guess is not None and guess.mime == XLS:
            return FileType("xls", XLS)
        if guess is not None:
            return FileType("ole", guess.mime)
        return FileType("ole", "application/x-ole-storage")
    if "EncryptedPackage" in names:
        kind, mime = _OOXML_BY_EXTENSION.get(ext, ("ooxml", "application/x-ole-storage"))
        return FileType(kind, mime, encrypted=True)
    if "Workbook" in names or "Book" in names:
        return FileType("xls", XLS)
    if "WordDocument" in names:
        return FileType("doc", "application/msword")
    if "PowerPoint Document" in names:
        return FileType("ppt", "application/vnd.ms-powerpoint")
    if any(name.startswith("__substg1.0_") for name in names):
        return FileType("msg", "application/vnd.ms-outlook")
    return FileType("ole", "application/x-ole-storage")


def cfb_stream_names(data: bytes, max_entries: int = 4096) -> set[str] | None:  # noqa: PLR0911
    """Names in an OLE2 compound file's directory; None if the structure is unreadable.

    Reads only the header, the FAT sectors needed to follow the directory
    chain, and the directory sectors; every loop is bounded.
    """
    if len(data) < 512 or not data.startswith(_CFB_MAGIC):
        return None
    (sector_shift,) = struct.unpack_from("<H", data, 0x1E)
    if sector_shift not in (9, 12):
        return None
    size = 1 << sector_shift
    num_fat, first_dir = struct.unpack_from("<II", data, 0x2C)
    first_difat, num_difat = struct.unpack_from("<II", data, 0x44)
    fat_sectors = [s for s in struct.unpack_from("<109I", data, 0x4C) if s < 0xFFFFFFFA]
    # Large files list further FAT sectors in a DIFAT chain.
    sector = first_difat
    for _ in range(min(num_difat, 1024)):
        if sector >= 0xFFFFFFFA:
            break
        offset = (sector + 1) * size
        if offset + size > len(data):
            return None
        entries = struct.unpack_from(f"<{size // 4}I", data, offset)
        fat_sectors += [s for s in entries[:-1] if s < 0xFFFFFFFA]
        sector = entries[-1]
    fat_sectors = fat_sectors[: max(num_fat, 0)]
    per_sector = size // 4

    def next_sector(current: int) -> int | None:
        index, slot = divmod(current, per_sector)
        if index >= len(fat_sectors):
            return None
        offset = (fat_sectors[index] + 1) * size + slot * 4
        if offset + 4 > len(data):
            return None
        return int(struct.unpack_from("<I", data, offset)[0])

    names: set[str] = set()
    sector = first_dir
    seen: set[int] = set()
    while sector < 0xFFFFFFFA and len(names) < max_entries:
        if sector in seen:
            return None  # a loop in the chain
        seen.add(sector)
        offset = (sector + 1) * size
        if offset + size > len(data):
            return None
        for entry in range(offset, offset + size, 128):
            (name_bytes,) = struct.unpack_from("<H", data, entry + 0x40)
            kind = data[entry + 0x42]
            if kind in (1, 2, 5) and 2 <= name_bytes <= 64:
                names.add(data[entry : entry + name_bytes - 2].decode("utf-16-le", "replace"))
        following = next_sector(sector)
        if following is None:
            return None
        sector = following
    return names
