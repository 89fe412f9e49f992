"""Hostile input: zip bombs, XXE, billion laughs, lying zip headers, and "never raises"."""

from __future__ import annotations

import dataclasses
import io
import struct
import time
import zipfile
from pathlib import Path

import pytest

from devkit.samples import (
    make_billion_laughs_docx,
    make_docx,
    make_pdf,
    make_pptx,
    make_xlsx,
    make_xxe_docx,
    make_zip_bomb,
)
from docindex.extract import ExtractedDocument, ExtractionLimits, extract
from docindex.extract.ooxml import PARSER_OPTIONS

SECRET = "TOPSECRET-4f1c-MARKER"


def _all_text(doc: ExtractedDocument) -> str:
    return " ".join(str(v) for v in dataclasses.asdict(doc).values())


@pytest.mark.parametrize("kind", ["docx", "xlsx", "pptx"])
def test_zip_bomb_rejected_from_the_directory(
    limits: ExtractionLimits, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a ~200 KB file declaring a 200 MiB member of zeros (1000:1)
    bomb = make_zip_bomb(kind, inflated_mb=200)
    assert len(bomb) < 1_000_000
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def recording_open(self: zipfile.ZipFile, name: str | zipfile.ZipInfo, *args: object, **kwargs: object) -> object:
        opened.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return real_open(self, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(zipfile.ZipFile, "open", recording_open)
    # When it is extracted
    started = time.perf_counter()
    doc = extract(bomb, f"bomb.{kind}", limits)
    elapsed = time.perf_counter() - started
    # Then it is refused as a zip bomb, without inflating the member
    assert doc.error == "zip_bomb"
    assert "compresses" in (doc.error_detail or "")
    assert not any(name.endswith("image1.bin") for name in opened)
    assert elapsed < 1.0


def test_declared_total_size_limit(limits: ExtractionLimits) -> None:
    doc = extract(make_docx(["本文"] * 100), "a.docx", dataclasses.replace(limits, max_zip_uncompressed_bytes=2000))
    assert doc.error == "zip_bomb"
    assert "declared uncompressed size" in (doc.error_detail or "")


def _shrink_declared_size(package: bytes, member: str, fake_size: int) -> bytes:
    """Make the zip's local header and directory lie about a member's uncompressed size."""
    data = bytearray(package)
    name = member.encode()
    local = data.find(b"PK\x03\x04" + data[4:4])  # first local header
    while local != -1:
        name_len = struct.unpack_from("<H", data, local + 26)[0]
        if data[local + 30 : local + 30 + name_len] == name:
            struct.pack_into("<I", data, local + 22, fake_size)
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46 : central + 46 + name_len] == name:
            struct.pack_into("<I", data, central + 24, fake_size)
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(data)


def test_a_member_that_lies_about_its_size_is_not_trusted(limits: ExtractionLimits) -> None:
    # The body claims 100 bytes but inflates to far more: reading stops at
    # the declared size and the CRC check fails, instead of inflating freely.
    package = make_docx([f"段落{i} 東京都の四半期売上報告" for i in range(3000)])
    doc = extract(_shrink_declared_size(package, "word/document.xml", 100), "liar.docx", limits)
    assert doc.error == "corrupt"
    assert len(doc.text) < 100


def test_xxe_does_not_leak_a_local_file(limits: ExtractionLimits, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    doc = extract(make_xxe_docx(str(secret)), "xxe.docx", limits)
    assert doc.error == "corrupt"
    assert SECRET not in _all_text(doc)


def test_parser_settings_alone_do_not_resolve_external_entities(tmp_path: Path) -> None:
    # Even without the DOCTYPE rejection, the locked-down parser leaves the entity unresolved.
    from lxml import etree

    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    xml = f'<!DOCTYPE r [<!ENTITY xxe SYSTEM "file://{secret}">]><r><t>a&xxe;b</t></r>'.encode()
    root = etree.fromstring(xml, etree.XMLParser(**PARSER_OPTIONS))
    assert SECRET not in "".join(root.itertext())
    assert SECRET.encode() not in etree.tostring(root)


def test_billion_laughs_finishes_quickly(limits: ExtractionLimits) -> None:
    started = time.perf_counter()
    doc = extract(make_billion_laughs_docx(depth=10, width=10), "lol.docx", limits)
    assert time.perf_counter() - started < 1.0
    assert doc.error == "corrupt"
    assert "lol" not in doc.text


def test_parser_settings_alone_do_not_expand_billion_laughs() -> None:
    from lxml import etree

    entities = '<!ENTITY a "lollollollollollollollollollol">' + "".join(
        f'<!ENTITY {chr(98 + i)} "{f"&{chr(97 + i)};" * 10}">' for i in range(8)
    )
    xml = f"<!DOCTYPE r [{entities}]><r>&i;</r>".encode()
    started = time.perf_counter()
    try:
        root = etree.fromstring(xml, etree.XMLParser(**PARSER_OPTIONS))
        assert len("".join(root.itertext())) < 1000
    except etree.XMLSyntaxError:
        pass  # libxml2's amplification guard is an acceptable outcome too
    assert time.perf_counter() - started < 1.0


def _mutations(data: bytes, count: int) -> list[bytes]:
    """Deterministic damage: flipped bytes spread over the file, and truncations."""
    out = []
    for i in range(count):
        mutated = bytearray(data)
        for j in range(1 + i % 4):
            position = (i * 7919 + j * 104729) % len(mutated)
            mutated[position] ^= 0x5A
        out.append(bytes(mutated))
        out.append(data[: len(data) * (i + 1) // (count + 1)])
    return out


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("a.pdf", make_pdf(["四半期売上報告", "東京都"], "題名")),
        ("a.docx", make_docx(["会議議事録"], header="ヘッダー", table=[["a", "b"]], textbox="枠")),
        ("a.pptx", make_pptx(["スライド", "二枚目"], ["ノート", None])),
        ("a.xlsx", make_xlsx({"S": [["見積書", 1]], "T": [["備考"]]})),
    ],
)
def test_damaged_files_never_raise(limits: ExtractionLimits, name: str, data: bytes) -> None:
    allowed = {
        None,
        "corrupt",
        "empty",
        "unsupported",
        "zip_bomb",
        "encrypted",
        "too_large",
        "extractor_failed",
    }
    for mutated in _mutations(data, 15):
        doc = extract(mutated, name, limits)
        assert doc.error in allowed
        assert isinstance(doc.text, str)
        doc.text.encode("utf-8")  # no lone surrogates: the document must be serialisable


def test_control_characters_are_removed(limits: ExtractionLimits) -> None:
    doc = extract("東京\x07都\x0b 見積\x1b書\r\n次の行".encode(), "a.txt", limits)
    assert doc.text == "東京都 見積書\n次の行"


def test_a_zip_bomb_inside_an_archive_costs_only_its_own_text(limits: ExtractionLimits) -> None:
    # Given an archive holding a DOCX that is a zip bomb, next to a readable note
    inner = make_zip_bomb("docx", inflated_mb=200)
    outer = io.BytesIO()
    with zipfile.ZipFile(outer, "w") as zf:
        zf.writestr("inner.docx", inner)
        zf.writestr("メモ.txt", "議事録の保管場所".encode())
    doc = extract(outer.getvalue(), "a.zip", limits)
    # Then the bomb is refused from its directory (nothing inflated), the archive is indexed
    assert doc.error is None
    assert doc.text.splitlines() == ["inner.docx", "メモ.txt", "議事録の保管場所"]


def test_a_real_10_000_slide_deck_is_read_not_refused_as_a_zip_bomb() -> None:
    # 20,011 zip members: refused as zip_bomb while the member limit was 20,000.
    deck = make_pptx([f"スライド {i} slide{i}" for i in range(10_000)])
    with zipfile.ZipFile(io.BytesIO(deck)) as zf:
        assert len(zf.namelist()) > 20_000

    result = extract(deck, "deck.pptx", ExtractionLimits(max_pages=10_000))

    assert result.error is None
    assert result.page_count == 10_000
    assert "slide9999" in result.text
    assert result.truncated is False


# --------------------------------------------------------------------------- PDF: declared bombs


def _pdf_with_stream(dictionary: bytes, payload: bytes) -> bytes:
    """A minimal PDF whose page content is one stream with ``dictionary`` (no xref: PDFium rebuilds it)."""
    return (
        b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
        b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >> endobj\n"
        b"4 0 obj << "
        + dictionary
        + b" /Length "
        + str(len(payload)).encode()
        + b" >>\nstream\n"
        + payload
        + b"\nendstream endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
    )


def test_a_pdf_stream_compressed_twice_over_is_refused_before_inflating(limits: ExtractionLimits) -> None:
    import zlib

    # 64 MiB of zeros deflated twice is a few hundred bytes: the classic nested-compression bomb
    payload = zlib.compress(zlib.compress(b"\0" * (64 * 1024 * 1024), 9), 9)
    assert len(payload) < 2_000
    bomb = _pdf_with_stream(b"/Filter [/FlateDecode /FlateDecode]", payload)
    started = time.monotonic()
    result = extract(bomb, "bomb.pdf", limits)
    assert result.error == "zip_bomb"
    assert "decompressed 2 times over" in (result.error_detail or "")
    assert time.monotonic() - started < 5  # refused from the declaration, nothing inflated


def test_a_pdf_stream_declaring_a_huge_decoded_length_is_refused(limits: ExtractionLimits) -> None:
    import zlib

    declared = limits.max_zip_uncompressed_bytes + 1
    bomb = _pdf_with_stream(b"/Filter /FlateDecode /DL " + str(declared).encode(), zlib.compress(b"BT ET"))
    result = extract(bomb, "declared.pdf", limits)
    assert result.error == "zip_bomb"
    assert "/DL" in (result.error_detail or "")


def test_a_single_flate_stream_is_read(limits: ExtractionLimits) -> None:
    import zlib

    # The same construction with one Flate stage and a text operator: an ordinary page
    content = zlib.compress(b"BT /F1 12 Tf 20 100 Td (hello declared) Tj ET")
    page = _pdf_with_stream(b"/Filter [/FlateDecode]", content)
    result = extract(page, "ordinary.pdf", limits)
    assert result.error != "zip_bomb"
