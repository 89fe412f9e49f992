"""Plain text, CSV and HTML files in the encodings Japanese offices produce.

``make_text`` writes any Python codec plus ISO-2022-JP the Windows way (CP932
extensions such as ① included), with an optional byte order mark and Windows
line ends; CSV is written as Excel writes it; HTML pages can declare one
charset and be encoded in another, as Japanese sites do.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from devkit.samples.ooxml import escape

__all__ = ["HTML_NOISE_MARKERS", "make_csv", "make_html", "make_text"]

# Words that sit in <script>, <style>, <noscript> and <template> of make_html
# pages: extracted text must never contain them.
HTML_NOISE_MARKERS = ("SCRIPTNOISE", "STYLENOISE", "NOSCRIPTNOISE", "TEMPLATENOISE")


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
        f"\n<title>{escape(title)}</title>\n",
    ]
    if noise:
        parts.append(f"<style>.{HTML_NOISE_MARKERS[1]} {{ color: red; }}</style>\n")
        parts.append(f'<script>var marker = "{HTML_NOISE_MARKERS[0]}";</script>\n')
    parts.append("</head>\n<body>\n")
    parts += [f"<p>{escape(p)}</p>\n" for p in paragraphs]
    if table:
        parts.append("<table>\n")
        for row in table:
            parts.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>\n")
        parts.append("</table>\n")
    if noise:
        parts.append(f"<noscript>{HTML_NOISE_MARKERS[2]}</noscript>\n")
        parts.append(f"<template><p>{HTML_NOISE_MARKERS[3]}</p></template>\n")
        parts.append(f'<script type="application/json">{{"k": "{HTML_NOISE_MARKERS[0]}"}}</script>\n')
    parts.append("</body>\n</html>\n")
    return make_text("".join(parts), encoding, bom=bom)
