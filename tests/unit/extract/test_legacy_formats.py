"""Legacy Office, Outlook, mail, RTF, ODF and archives: words of real files, detection, hostile input."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from devkit.legacy_samples import make_cp932_zip, make_mail_iso2022jp, make_mail_shift_jis_html, make_mht, real
from docindex.extract import ExtractionLimits, detect_type, extract
from docindex.extract.msg import decompress_rtf, rtf_text

RINGI_WORDS = [
    "会議室用プロジェクターの購入について",
    "髙橋﨑子",  # CP932-only characters
    "①予算は二十万円以内",
    "projector purchase approval",
    "液晶プロジェクター\t158000",
]
# What only a reader of every story finds.
RINGI_STORIES = {
    "text box": "設置場所は第二会議室",
    "footnote": "見積書は三社から取得済み",
    "comment": "至急承認をお願いします",
    "header": "社外秘ヘッダー",
    "footer": "総務部フッター管理番号",
}


@pytest.mark.parametrize("name", ["ringi.doc", "ringi.rtf", "ringi.odt"])
def test_word_processor_files_give_every_story(limits: ExtractionLimits, name: str) -> None:
    doc = extract(real(name), name, limits)
    assert doc.error is None, doc.error_detail
    assert doc.title == "稟議書（備品購入）"
    for word in RINGI_WORDS[:4]:
        assert word in doc.text
    for story, word in RINGI_STORIES.items():
        assert word in doc.text, story
    # Field codes, style names and font tables stay out.
    for noise in ("PAGE", "Times New Roman", "MERGEFORMAT", "DejaVu"):
        assert noise not in doc.text


@pytest.mark.parametrize("name", ["ringi.doc", "ringi.rtf", "ringi.odt"])
def test_table_rows_are_lines(limits: ExtractionLimits, name: str) -> None:
    doc = extract(real(name), name, limits)
    assert "品名・金額\n品名 液晶プロジェクター・金額 158000\n" in doc.text


def test_doc_detected_by_its_streams_whatever_the_name(limits: ExtractionLimits) -> None:
    assert detect_type(real("ringi.doc"), "scan.pdf").kind == "doc"
    assert detect_type(real("gijiroku.ppt"), "x.doc").kind == "ppt"
    assert detect_type(real("apache-tika/testMSG_chinese.msg"), "mail").kind == "msg"
    assert detect_type(real("ringi.odt"), "ringi.zip").kind == "odt"
    assert detect_type(real("shiryou_cp932.zip"), "shiryou.docx").kind == "zip"
    assert detect_type(real("ringi.rtf"), "ringi.doc").kind == "rtf"
    assert detect_type(real("uchiawase.eml"), "uchiawase.txt").kind == "eml"


def test_ppt_slides_in_order_with_notes(limits: ExtractionLimits) -> None:
    doc = extract(real("gijiroku.ppt"), "gijiroku.ppt", limits)
    assert doc.error is None
    assert doc.title == "第三四半期 営業会議"
    assert doc.page_count == 2
    order = [
        "第三四半期の営業会議",
        "十二パーセント増加",
        "Revenue grew twelve percent",
        "数字は速報値です",
        "次回の議題",
        "髙橋が担当",
    ]
    positions = [doc.text.index(word) for word in order]
    assert positions == sorted(positions)
    assert "Click to" not in doc.text  # no master placeholder text


def test_odp_and_ods(limits: ExtractionLimits) -> None:
    odp = extract(real("gijiroku.odp"), "gijiroku.odp", limits)
    assert (odp.error, odp.page_count) == (None, 2)
    assert "発表者ノート：数字は速報値です" in odp.text
    ods = extract(real("meibo.ods"), "meibo.ods", limits)
    assert ods.error is None
    assert ods.text == "部署・氏名・内線\n部署 総務部・氏名 髙橋﨑子・内線 1234\n部署 営業部・氏名 鈴木一郎・内線 5678"


def test_msg_in_its_code_page(limits: ExtractionLimits) -> None:
    # Given an Outlook message whose strings are 8-bit Big5 (code page 950)
    doc = extract(real("apache-tika/testMSG_chinese.msg"), "a.msg", limits)
    assert doc.error is None
    assert doc.title == "Alfresco MSG format testing ( MSG 格式測試 )"
    assert "From: Tests Chang@FT (張毓倫)" in doc.text
    assert "Date: 2011-03-29" in doc.text
    assert "高票當選雲林縣總工會" in doc.text


def test_msg_attachments_are_named_and_read(limits: ExtractionLimits) -> None:
    doc = extract(real("apache-tika/testMSG_att_doc.msg"), "a.msg", limits)
    assert doc.error is None
    assert "[test-unicode.doc]" in doc.text
    assert "[pj1.txt]" in doc.text
    # The .doc attachment (written by Word) is read by the .doc reader.
    assert doc.text.count("euro : € (20AC)") == 2


def test_compressed_rtf_body() -> None:
    # The example of [MS-OXRTFCP] section 4.1.
    data = bytes.fromhex(
        "2d0000002b0000004c5a4675f1c5c7a703000a00726370673132354232 0af32068656c0900206277 05b06c647d0a800fa0".replace(
            " ", ""
        )
    )
    assert decompress_rtf(data) == b"{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"
    assert rtf_text(decompress_rtf(data)) == "hello world"


def test_eml_iso2022jp_headers_body_and_attached_doc(limits: ExtractionLimits) -> None:
    doc = extract(real("uchiawase.eml"), "uchiawase.eml", limits)
    assert doc.error is None
    assert doc.title == "【重要】来週の打ち合わせ日程について"
    assert "From: 山田 太郎 <yamada@example.co.jp>" in doc.text
    assert "水曜日の午後二時から" in doc.text
    assert "[稟議書.doc]" in doc.text
    assert "設置場所は第二会議室" in doc.text  # the attachment's text box
    assert "=?iso-2022-jp" not in doc.text.lower()
    assert "GyRC" not in doc.text


def test_eml_from_a_real_mailer(limits: ExtractionLimits) -> None:
    doc = extract(real("apache-tika/testThunderbirdEml.eml"), "a.eml", limits)
    assert (doc.kind, doc.error, doc.title) == ("eml", None, "JUnit test message")
    assert "Dear Vladimir" in doc.text
    assert "X-Message-Info" not in doc.text  # transport headers stay out


def test_eml_shift_jis_means_cp932_and_html_is_visible_text(limits: ExtractionLimits) -> None:
    doc = extract(make_mail_shift_jis_html(), "a.eml", limits)
    assert doc.title == "①髙橋さんへ：見積書の件"
    assert "①見積書を送付いたします。" in doc.text
    assert "隠しスクリプト" not in doc.text
    assert "<p>" not in doc.text


def test_mht_is_the_visible_page(limits: ExtractionLimits) -> None:
    doc = extract(make_mht(), "news.mht", limits)
    assert (doc.kind, doc.content_type, doc.error) == ("eml", "multipart/related", None)
    assert "十二月二十九日から一月三日まで休業します。" in doc.text
    assert "PNG" not in doc.text


def test_rtf_from_tika_in_fcharset128(limits: ExtractionLimits) -> None:
    doc = extract(real("apache-tika/testRTFJapanese.rtf"), "a.rtf", limits)
    assert doc.error is None
    assert doc.title == "ゾルゲと尾崎、淡々と最期"
    assert "国内最大のスパイ事件として知られ" in doc.text


def test_rtf_code_pages_and_escapes(limits: ExtractionLimits) -> None:
    rtf = (
        rb"{\rtf1\ansi\ansicpg932{\fonttbl{\f0\fcharset0 Arial;}{\f1\fcharset128 \u-253\'82\u-244\'82 Mincho;}}"
        rb"{\*\generator Hidden;}{\pict\pngblip 89504e47}"
        rb"\f1 \'93\'8c\'8b\'9e\par \uc1\u39641?\u-3985?"
        rb"\f0  caf\'e9 {\*\fldinst HYPERLINK x}{\fldrslt link}\bin4 \'00\'00}"
    )
    doc = extract(rtf, "a.rtf", limits)
    assert doc.error is None
    assert doc.text == "東京\n髙\uf06f café link"


def test_zip_cp932_names_and_member_text(limits: ExtractionLimits) -> None:
    doc = extract(real("shiryou_cp932.zip"), "shiryou.zip", limits)
    assert doc.error is None
    assert "議事録/稟議書.doc" in doc.text
    assert "社員名簿.ods" in doc.text
    assert "設置場所は第二会議室" in doc.text
    assert "髙橋﨑子" in doc.text


def test_zip_nesting_is_bounded(limits: ExtractionLimits) -> None:
    # Given an archive nested six deep with a note at the bottom
    data = make_cp932_zip({"最深部のメモ.txt": "最深部の合言葉".encode()})
    for level in range(6):
        data = make_cp932_zip({f"階層{level}.zip": data})
    doc = extract(data, "a.zip", limits)
    # Then the outer levels are listed and the bottom is not reached
    assert doc.error is None
    assert "階層5.zip" in doc.text
    assert "階層3.zip" in doc.text
    assert "最深部の合言葉" not in doc.text


# ---------------------------------------------------------------- hostile input

DAMAGEABLE = [
    "ringi.doc",
    "gijiroku.ppt",
    "apache-tika/testMSG_att_doc.msg",
    "ringi.rtf",
    "ringi.odt",
    "shiryou_cp932.zip",
    "uchiawase.eml",
]
ALLOWED = {None, "corrupt", "empty", "unsupported", "zip_bomb", "encrypted", "too_large"}


@pytest.mark.parametrize("name", DAMAGEABLE)
def test_truncated_and_flipped_files_end_in_a_reason(limits: ExtractionLimits, name: str) -> None:
    data = real(name)
    variants = [data[: len(data) // n] for n in (2, 3, 7, 50)]
    for seed in range(12):
        flipped = bytearray(data)
        for i in range(8):
            flipped[(seed * 7919 + i * 104729) % len(flipped)] ^= 0x5A
        variants.append(bytes(flipped))
    for variant in variants:
        doc = extract(variant, name, limits)
        assert doc.error in ALLOWED, (doc.error, doc.error_detail)
        doc.text.encode("utf-8")


def _directory_entry(data: bytes, stream: str) -> int:
    """Offset of a stream's entry in an OLE2 directory (entries are 128-byte aligned, named in UTF-16)."""
    name = stream.encode("utf-16-le")
    at = data.find(name)
    while at >= 0:
        if at % 128 == 0 and struct.unpack_from("<H", data, at + 0x40)[0] == len(name) + 2:
            return at
        at = data.find(name, at + 1)
    raise AssertionError(f"no directory entry for {stream}")


def test_ole_stream_declaring_a_huge_size_is_corrupt(limits: ExtractionLimits) -> None:
    data = bytearray(real("ringi.doc"))
    entry = _directory_entry(bytes(data), "WordDocument")
    struct.pack_into("<I", data, entry + 0x78, 0x7FFF0000)
    doc = extract(bytes(data), "ringi.doc", limits)
    assert doc.kind == "doc"
    assert doc.error == "corrupt"


def test_cyclic_fat_sectors_are_corrupt(limits: ExtractionLimits) -> None:
    # Given every FAT entry pointing at itself: every sector chain is a loop
    for name in ("ringi.doc", "gijiroku.ppt", "apache-tika/testMSG_chinese.msg"):
        data = bytearray(real(name))
        (first_fat,) = struct.unpack_from("<I", data, 0x4C)
        fat = (first_fat + 1) * 512
        for i in range(128):
            if i != first_fat:
                struct.pack_into("<I", data, fat + 4 * i, i)
        doc = extract(bytes(data), name, limits)
        assert doc.error == "corrupt", (name, doc.error, doc.error_detail)


def test_ppt_records_nested_without_end_are_corrupt(limits: ExtractionLimits) -> None:
    import olefile

    # Given a PowerPoint stream made of containers nested 1400 deep, no edit chain
    data = real("gijiroku.ppt")
    ole = olefile.OleFileIO(io.BytesIO(data))
    size = ole.get_size("PowerPoint Document")
    ole.close()
    depth = size // 8
    hostile = b"".join(struct.pack("<HHI", 0x000F, 0x03E8, size - 8 * (i + 1)) for i in range(depth))
    hostile = hostile.ljust(size, b"\x00")
    patched = io.BytesIO(bytearray(data))
    ole = olefile.OleFileIO(patched, write_mode=True)
    ole.write_stream("PowerPoint Document", hostile)
    ole.write_stream("Current User", b"\x00" * ole.get_size("Current User"))
    ole.close()
    doc = extract(patched.getvalue(), "a.ppt", limits)
    assert (doc.kind, doc.error) == ("ppt", "corrupt")


def test_rtf_deep_nesting_is_corrupt_and_bin_is_skipped(limits: ExtractionLimits) -> None:
    deep = b"{\\rtf1 " + b"{" * 200_000 + b"x" + b"}" * 200_000 + b"}"
    assert extract(deep, "a.rtf", limits).error == "corrupt"
    binary = b"{\\rtf1 before\\bin2000000000 after}"
    doc = extract(binary, "a.rtf", limits)
    assert (doc.error, doc.text) == (None, "before")


def test_mail_with_too_many_parts_is_corrupt(limits: ExtractionLimits) -> None:
    parts = "".join(f"--b\r\nContent-Type: text/plain\r\n\r\npart {i}\r\n" for i in range(1500))
    head = "From: a@example.com\r\nTo: b@example.com\r\nSubject: many\r\nMIME-Version: 1.0\r\n"
    mail = f"{head}Content-Type: multipart/mixed; boundary=b\r\n\r\n{parts}--b--\r\n"
    doc = extract(mail.encode(), "a.eml", limits)
    assert doc.error == "corrupt"


def test_mail_nesting_is_bounded(limits: ExtractionLimits) -> None:
    # Given a mail forwarded as an attachment eight times over
    mail = make_mail_iso2022jp()
    for level in range(8):
        mail = make_mail_iso2022jp((f"転送{level}.eml", mail))
    doc = extract(mail, "a.eml", limits)
    assert doc.error is None
    assert "[転送7.eml]" in doc.text
    assert "[転送5.eml]" in doc.text
    assert "[転送0.eml]" not in doc.text


def test_zip_bomb_member_in_an_archive_is_refused_not_inflated(limits: ExtractionLimits) -> None:
    small = ExtractionLimits(max_zip_uncompressed_bytes=50 * 1024 * 1024)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zeros.txt", b"\x00" * (200 * 1024 * 1024))
    doc = extract(buffer.getvalue(), "a.zip", small)
    assert doc.error == "zip_bomb"


def test_encrypted_zip_members_are_listed_by_name(limits: ExtractionLimits) -> None:
    data = bytearray(make_cp932_zip({"給与明細.xlsx": b"secret"}))
    # Set the "encrypted" flag in the local header and the central directory.
    struct.pack_into("<H", data, 6, struct.unpack_from("<H", data, 6)[0] | 1)
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<H", data, central + 8, struct.unpack_from("<H", data, central + 8)[0] | 1)
    doc = extract(bytes(data), "a.zip", limits)
    assert doc.error is None
    assert doc.text == "給与明細.xlsx"


def test_an_excel_binary_workbook_is_read(limits: ExtractionLimits) -> None:
    doc = extract(real("apache-tika/testEXCEL.xlsb"), "集計.xlsb", limits)
    assert doc.error is None
    assert doc.kind == "xlsb"
    assert "This is an example spreadsheet created with Microsoft Excel 2007 Beta 2." in doc.text


def test_a_damaged_binary_workbook_is_corrupt_and_a_bomb_is_refused(limits: ExtractionLimits) -> None:
    import io
    import zipfile

    data = real("apache-tika/testEXCEL.xlsb")
    # every record stream cut in half
    src, cut = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(cut, "w") as out:
        for name in src.namelist():
            part = src.read(name)
            out.writestr(name, part[: len(part) // 2] if name.endswith(".bin") else part)
    damaged = extract(cut.getvalue(), "cut.xlsb", limits)
    assert damaged.error in ("corrupt", None)  # what is left readable is read; nothing raises
    # a member inflating 2,000:1 is refused from the zip directory before pyxlsb2 sees it
    bomb = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as original,
        zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for name in original.namelist():
            out.writestr(name, original.read(name))
        out.writestr("xl/worksheets/sheet9.bin", b"\0" * (64 * 1024 * 1024))
    assert extract(bomb.getvalue(), "bomb.xlsb", limits).error == "zip_bomb"


def test_a_rust_panic_in_a_library_is_the_documents_failure_not_the_batchs(limits: ExtractionLimits) -> None:
    from docindex.extract.base import Deadline, FileType
    from docindex.extract.context import ExtractionContext
    from docindex.extract.dispatch import _run
    from docindex.extract.spreadsheet import _read_workbook

    # Given a binary workbook written by Excel on which calamine panics (why XLSB is read by pyxlsb2)
    data = real("apache-tika/testEXCEL.xlsb")
    ctx = ExtractionContext(limits, Deadline(10))
    # When calamine reads it anyway
    error, detail = _run(lambda d, _f, c: _read_workbook(d, c), data, FileType("xlsb", "x"), ctx)
    # Then the panic is this document's extraction error, not an exception that fails the batch
    assert error == "extractor_failed"
    assert detail is not None
    assert detail.startswith("PanicException")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ringi.doc", ("山田太郎", "佐藤花子", None, None)),
        ("ringi.odt", ("山田太郎", "佐藤花子", None, None)),
        ("gijiroku.ppt", (None, "鈴木一郎", None, None)),
        ("uchiawase.eml", ("山田 太郎 <yamada@example.co.jp>", None, "2023-11-14T22:13:20Z", None)),
        ("apache-tika/testMSG_chinese.msg", ("Tests Chang@FT (張毓倫)", None, "2011-03-29T08:52:48Z", None)),
        (
            "apache-tika/testEXCEL.xlsb",
            ("Microsoft", "Christiaan Fluit", "2006-03-30T19:39:22Z", "2006-07-13T13:48:56Z"),
        ),
    ],
)
def test_document_properties_are_read(limits: ExtractionLimits, name: str, expected: tuple[str | None, ...]) -> None:
    # author, last saved by, created, modified: what each application wrote into the file
    doc = extract(real(name), name, limits)
    assert (doc.author, doc.last_saved_by, doc.created, doc.modified) == expected


def test_pdf_dates_are_read_with_their_offset() -> None:
    from docindex.extract.pdf import pdf_date

    assert pdf_date("D:20240401091530+09'00'").isoformat() == "2024-04-01T09:15:30+09:00"
    assert pdf_date("D:2024").isoformat() == "2024-01-01T00:00:00+00:00"
    assert pdf_date("not a date") is None
