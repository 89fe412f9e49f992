"""Text PDFs in reportlab's built-in Japanese CID fonts (``HeiseiKakuGo-W5``, ``HeiseiMin-W3``: no font files).

reportlab is imported inside the functions that need it: importing this
module costs nothing. ``register_cid_font`` and ``wrap_text`` are public
because the benchmark corpus lays out its own PDFs the same way.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

__all__ = ["make_encrypted_pdf", "make_pdf", "register_cid_font", "wrap_text"]


def register_cid_font(name: str) -> None:
    """Register one of reportlab's built-in CID fonts (e.g. ``HeiseiKakuGo-W5``) once per process."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    if name not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(name))


def wrap_text(text: str, font: str, size: float, width: float) -> list[str]:
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

    register_cid_font(font)
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
        for line in wrap_text(text, font, font_size, width - 2 * margin):
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
