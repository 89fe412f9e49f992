"""Type detection from content (magic bytes), with the file name as a hint."""

from __future__ import annotations

from docindex.extract.base import FileType

_BY_EXTENSION = {
    "txt": FileType("text", "text/plain"),
    "csv": FileType("text", "text/csv"),
    "md": FileType("text", "text/markdown"),
    "html": FileType("html", "text/html"),
    "htm": FileType("html", "text/html"),
}


def detect_type(data: bytes, filename: str) -> FileType:
    """Detect the file's type from its bytes; the extension only breaks ties."""
    if data.startswith(b"%PDF-"):
        return FileType("pdf", "application/pdf")
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return FileType("image", "image/png")
    if data.startswith(b"\xff\xd8\xff"):
        return FileType("image", "image/jpeg")
    if data[:4] in (b"II*\x00", b"MM\x00*"):
        return FileType("image", "image/tiff")
    ext = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    return _BY_EXTENSION.get(ext, FileType("unknown", "application/octet-stream"))
