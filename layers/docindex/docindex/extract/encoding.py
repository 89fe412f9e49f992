"""Decode bytes of unknown encoding, tuned for Japanese Windows file servers.

The cascade (docs/extraction.md: measured it at 17/17 where charset-normalizer got
14/17): BOM -> ISO-2022-JP escape sequences -> (BOM-less UTF-16 by its NUL
pattern) -> strict UTF-8 -> strict CP932 vs EUC-JP, ranked by how Japanese
the result looks -> windows-1252 when high bytes come singly (accents) ->
charset-normalizer only as the fallback.

Shift_JIS is always decoded as ``cp932``: files written on Windows use its
extensions (①, 髙, 﨑, ～) and the strict ``shift_jis`` codec either fails on
them or, as charset-normalizer's ``shift_jis_2004``, silently maps them to
other characters.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

# Byte order marks, longest first: a UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Labels seen in HTML meta tags and mail headers, mapped to the codec that
# decodes what Windows and Unix tools actually wrote under that label.
_LABELS = {
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "s-jis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "ms-kanji": "cp932",
    "csshiftjis": "cp932",
    "windows-31j": "cp932",
    "cswindows31j": "cp932",
    "cp932": "cp932",
    "ms932": "cp932",
    "x-ms-cp932": "cp932",
    "euc-jp": "euc_jp",
    "x-euc-jp": "euc_jp",
    "eucjp": "euc_jp",
    "cseucpkdfmtjapanese": "euc_jp",
    "iso-2022-jp": "iso-2022-jp",
    "csiso2022jp": "iso-2022-jp",
    # WHATWG: these labels all mean windows-1252 on the web.
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
}

_ISO2022_ESCAPES = (b"\x1b$B", b"\x1b$@", b"\x1b(J", b"\x1b(I", b"\x1b$(D", b"\x1b$(Q", b"\x1b$(O")
# Characters scored to tell CP932 from EUC-JP: plenty to decide, and the
# Python-level loop stays cheap on a 2 MB file.
_SCORE_SAMPLE = 20_000
_WESTERN = frozenset({"cp1252", "latin_1", "iso8859-15", "ascii"})
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
_HIGH_RUN = re.compile(rb"[\x80-\xff]+")


@dataclass(frozen=True)
class DecodedText:
    """Text and the encoding it was decoded from."""

    text: str
    encoding: str


def normalize_label(label: str) -> str | None:
    """Map a declared charset label to a Python codec name, or None if unknown."""
    key = label.strip().strip("\"'").lower()
    if key in _LABELS:
        return _LABELS[key]
    try:
        name = codecs.lookup(key).name
    except LookupError:
        return None
    if name in {"shift_jis", "shift_jis_2004", "shift_jisx0213"}:
        return "cp932"
    # Binary and text-transform pseudo-codecs (base64, rot13, ...) are not charsets.
    if not codecs.lookup(name)._is_text_encoding:
        return None
    return name


def strip_bom(data: bytes) -> tuple[bytes, str | None]:
    """Remove a byte order mark; return the rest and the encoding it names."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            # FF FE 00 00 is also a UTF-16-LE BOM followed by U+0000; only
            # believe UTF-32 when the length fits.
            if encoding.startswith("utf-32") and (len(data) - len(bom)) % 4:
                continue
            return data[len(bom) :], encoding
    return data, None


def decode(data: bytes, declared: str | None = None) -> DecodedText:
    """Decode ``data``: BOM, strict UTF-8, the declared label if it decodes strictly, then the cascade."""
    body, bom_encoding = strip_bom(data)
    if bom_encoding:
        return DecodedText(body.decode(bom_encoding, errors="replace"), bom_encoding)
    if _is_iso2022(data):
        # 7-bit with JIS escapes: any ASCII-compatible label would "succeed"
        # and leave the escape sequences in the text.
        return _decode_iso2022jp(data)
    if declared and _HIGH_BYTE.search(data):
        # Valid UTF-8 with non-ASCII bytes is almost never anything else, and
        # pages converted to UTF-8 often keep their old Shift_JIS label.
        try:
            return DecodedText(data.decode("utf-8"), "utf-8")
        except UnicodeDecodeError:
            pass
    if declared:
        codec = normalize_label(declared)
        if codec in _WESTERN and _HIGH_BYTE.search(data):
            # windows-1252 decodes almost any bytes, so a Japanese page
            # mislabelled iso-8859-1 would "succeed" as mojibake: let a
            # convincingly Japanese reading win.
            japanese = _best_japanese(data)
            if japanese and japanese_score(japanese.text) >= 0.8:
                return japanese
        if codec:
            text = _try_decode(data, codec)
            if text is not None:
                return DecodedText(text, codec)
    return sniff_decode(data)


def sniff_decode(data: bytes) -> DecodedText:  # noqa: PLR0911 - one return per cascade step
    """Decode bytes that carry no BOM and no trustworthy label."""
    if _is_iso2022(data):
        return _decode_iso2022jp(data)
    utf16 = bomless_utf16(data)
    if utf16:
        return DecodedText(data.decode(utf16, errors="replace"), utf16)
    if not _HIGH_BYTE.search(data):
        return DecodedText(data.decode("ascii"), "ascii")
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    japanese = _best_japanese(data)
    if japanese:
        return japanese
    western = _western(data)
    if western:
        return western
    return _fallback(data)


def _is_iso2022(data: bytes) -> bool:
    return b"\x1b" in data and not _HIGH_BYTE.search(data) and any(e in data for e in _ISO2022_ESCAPES)


def _try_decode(data: bytes, codec: str) -> str | None:
    if codec == "iso-2022-jp":
        try:
            return _iso2022jp_to_cp932(data).decode("cp932")
        except (UnicodeDecodeError, ValueError):
            return None
    try:
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def bomless_utf16(data: bytes) -> str | None:
    """UTF-16 without BOM, recognised by NUL bytes in every other position (mostly-ASCII text)."""
    sample = data[:4096]
    if len(sample) < 8 or len(sample) % 2 or b"\x00" not in sample:
        return None
    pairs = len(sample) // 2
    even_nul = sample[0::2].count(0)
    odd_nul = sample[1::2].count(0)
    if odd_nul > pairs * 0.4 and even_nul < pairs * 0.05:
        return "utf-16-le"
    if even_nul > pairs * 0.4 and odd_nul < pairs * 0.05:
        return "utf-16-be"
    return None


def japanese_score(text: str) -> float:
    """Share of non-ASCII characters that are plausible in Japanese prose (0..1).

    EUC-JP bytes decoded as CP932 often succeed, but come out as half-width
    katakana; CP932 decoded as EUC-JP gives rare kanji and symbols. Kana and
    common kanji score 1, half-width katakana little, everything else 0.
    """
    total = 0
    score = 0.0
    for ch in text:
        cp = ord(ch)
        if cp < 0x80:
            continue
        total += 1
        if 0x3040 <= cp <= 0x30FF or 0x4E00 <= cp <= 0x9FFF or 0x3000 <= cp <= 0x303F:
            score += 1.0
        elif 0xFF01 <= cp <= 0xFF5E or 0x2460 <= cp <= 0x24FF or 0xF900 <= cp <= 0xFAFF:
            score += 0.8  # full-width ASCII, circled numbers, CJK compatibility (﨑)
        elif 0x2010 <= cp <= 0x266F or 0x00A0 <= cp <= 0x00FF:
            score += 0.5  # punctuation, arrows, ×÷, box drawing
        elif 0xFF61 <= cp <= 0xFF9F:
            score += 0.1  # half-width katakana: real, but the signature of mis-decoded EUC-JP
    return score / total if total else 0.0


def _best_japanese(data: bytes) -> DecodedText | None:
    """Strict CP932 vs strict EUC-JP, then the same with a few bad bytes tolerated."""
    candidates: list[tuple[float, int, DecodedText]] = []
    for rank, codec in enumerate(("cp932", "euc_jp")):
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        candidates.append((japanese_score(text[:_SCORE_SAMPLE]), -rank, DecodedText(text, codec)))
    if candidates:
        score, _, best = max(candidates, key=lambda c: (c[0], c[1]))
        if score >= 0.5:
            return best
    # A CP932 file with one stray byte (a cut-off copy, a binary fragment) is
    # still a CP932 file: tolerate up to 1% replacement characters.
    for codec in ("cp932", "euc_jp"):
        text = data.decode(codec, errors="replace")
        non_ascii = len(text) - len(text.encode("ascii", "ignore"))
        bad = text.count("\ufffd")
        if non_ascii and bad <= max(1, non_ascii // 100) and japanese_score(text[:_SCORE_SAMPLE]) >= 0.6:
            return DecodedText(text, codec)
    return None


def _western(data: bytes) -> DecodedText | None:
    """windows-1252 when high bytes come alone, as accents in Western words do.

    Double-byte encodings (GBK, Big5, EUC-KR) put high bytes in pairs, and
    charset-normalizer labels short Western text oddly (cp1006 for
    "café résumé"), so this simple shape test goes first.
    """
    runs = [len(run) for run in _HIGH_RUN.findall(data)]
    if not runs or sum(1 for n in runs if n == 1) < 0.8 * len(runs):
        return None
    try:
        return DecodedText(data.decode("cp1252"), "cp1252")
    except UnicodeDecodeError:
        return None


def _fallback(data: bytes) -> DecodedText:
    """charset-normalizer for what the cascade cannot place (Latin-1, GBK, Korean...)."""
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or not best.encoding:
        return DecodedText(data.decode("utf-8", errors="replace"), "utf-8")
    codec = normalize_label(best.encoding) or "utf-8"
    return DecodedText(data.decode(codec, errors="replace"), codec)


def _decode_iso2022jp(data: bytes) -> DecodedText:
    """ISO-2022-JP as Windows writes it (CP50220/CP5022x), then the stricter variants."""
    try:
        return DecodedText(_iso2022jp_to_cp932(data).decode("cp932"), "iso-2022-jp")
    except (UnicodeDecodeError, ValueError):
        pass
    for codec in ("iso2022_jp_2", "iso2022_jp_2004"):
        try:
            return DecodedText(data.decode(codec), codec)
        except UnicodeDecodeError:
            continue
    return DecodedText(data.decode("iso2022_jp_ext", errors="replace"), "iso2022_jp_ext")


_ISO2022_MODES = {
    b"\x1b(B": "ascii",
    b"\x1b(J": "ascii",  # JIS X 0201 Roman: ASCII but for yen sign and overline
    b"\x1b(I": "kana",
    b"\x1b$B": "jis",
    b"\x1b$@": "jis",
}


def _iso2022jp_to_cp932(data: bytes) -> bytes:
    """Transcode ISO-2022-JP to CP932 bytes.

    Python's iso2022_jp codecs reject the NEC row-13 characters (①, ㈱) that
    Windows mail and documents put in ISO-2022-JP, and decode JIS 0x2141 as
    〜 where Windows reads ～. Mapping JIS X 0208 rows arithmetically onto
    Shift_JIS and decoding as CP932 reads them the way the author's PC did.
    Raises ValueError for escape sequences it cannot map (JIS X 0212/0213).
    """
    out = bytearray()
    mode = "ascii"
    i = 0
    n = len(data)
    while i < n:
        b = data[i]
        if b == 0x1B:
            if data.startswith(b"\x1b$(B", i):
                mode, i = "jis", i + 4
                continue
            new_mode = _ISO2022_MODES.get(data[i : i + 3])
            if new_mode is None:
                raise ValueError(f"unsupported ISO-2022 escape {data[i : i + 4]!r}")
            mode, i = new_mode, i + 3
        elif mode == "ascii" or b in (0x0A, 0x0D):
            # Line ends should return to ASCII first; be lenient when they don't.
            out.append(b)
            i += 1
        elif mode == "kana":
            if not 0x21 <= b <= 0x5F:
                raise ValueError("bad half-width katakana byte")
            out.append(b + 0x80)
            i += 1
        else:
            out += _jis_to_sjis(b, data[i + 1] if i + 1 < n else 0)
            i += 2
    return bytes(out)


def _jis_to_sjis(j1: int, j2: int) -> bytes:
    if not (0x21 <= j1 <= 0x7E and 0x21 <= j2 <= 0x7E):
        raise ValueError("byte outside the JIS X 0208 range")
    s1 = ((j1 + 1) >> 1) + 0x70
    if s1 >= 0xA0:
        s1 += 0x40
    # Odd JIS rows map to the lower half of an SJIS trail-byte range, even rows to the upper.
    s2 = j2 + (0x1F if j2 < 0x60 else 0x20) if j1 & 1 else j2 + 0x7E
    return bytes((s1, s2))
