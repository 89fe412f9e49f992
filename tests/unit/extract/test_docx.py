"""DOCX: every text-bearing part, in order, each text once."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from typing import Any

import pytest

from devkit.samples import make_corrupt_docx, make_docx
from docindex.extract import Deadline, ExtractionLimits, extract

FULL: dict[str, Any] = {
    "title": "定例会議 議事録",
    "header": "株式会社サンプル 総務部",
    "footer": "社外秘 ①",
    "footnote": "脚注：髙橋が確認済み",
    "endnote": "文末脚注：山﨑",
    "comment": "コメント：要再確認",
    "textbox": "テキストボックス：予算案の再提出",
    "table": [["議題", "担当", "期限"], ["予算案", "髙橋", "10月10日"]],
}


def _full_docx() -> bytes:
    return make_docx(["会議議事録", "日時：2024年10月1日", "場所：東京都千代田区"], **FULL)


def test_every_part_is_extracted(limits: ExtractionLimits) -> None:
    doc = extract(_full_docx(), "議事録.docx", limits)
    assert (doc.kind, doc.error, doc.title) == ("docx", None, "定例会議 議事録")
    assert doc.content_type == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    for key in ("header", "footer", "footnote", "endnote", "comment", "textbox"):
        assert doc.text.count(str(FULL[key])) == 1, key  # the text box's VML fallback copy is skipped
    # a table's rows read with their header
    assert "議題・担当・期限\n議題 予算案・担当 髙橋・期限 10月10日" in doc.text


def test_body_order_and_paragraph_lines(limits: ExtractionLimits) -> None:
    doc = extract(make_docx(["一段落目", "二段落目\tタブ", "三段落目\n改行後"]), "a.docx", limits)
    assert doc.text == "一段落目\n二段落目\tタブ\n三段落目\n改行後"


def test_empty_cells_keep_their_place(limits: ExtractionLimits) -> None:
    table = [["品名", "", "単価"], ["", "10", ""], ["ノートPC", "", "128000"]]
    doc = extract(make_docx(["見積"], table=table), "a.docx", limits)
    # A trailing empty cell gives way to the row end, like a spreadsheet row.
    assert doc.text == "見積\n品名\t\t単価\n\t10\nノートPC\t\t128000"


def test_body_comes_before_headers_and_notes(limits: ExtractionLimits) -> None:
    text = extract(_full_docx(), "a.docx", limits).text
    assert text.index("場所：東京都千代田区") < text.index("株式会社サンプル") < text.index("脚注：")


def test_text_box_follows_its_anchor_paragraph(limits: ExtractionLimits) -> None:
    text = extract(_full_docx(), "a.docx", limits).text
    assert text.index("会議議事録") < text.index("テキストボックス") < text.index("日時")


def test_parts_found_without_relationships(limits: ExtractionLimits) -> None:
    # Hand-made or damaged packages may lack word/_rels/document.xml.rels.
    source = zipfile.ZipFile(io.BytesIO(_full_docx()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for name in source.namelist():
            if name != "word/_rels/document.xml.rels":
                out.writestr(name, source.read(name))
    doc = extract(buf.getvalue(), "a.docx", limits)
    assert doc.error is None
    assert "株式会社サンプル 総務部" in doc.text
    assert "脚注：髙橋が確認済み" in doc.text


def test_truncated_zip_is_corrupt(limits: ExtractionLimits) -> None:
    doc = extract(make_corrupt_docx("truncated"), "broken.docx", limits)
    assert (doc.kind, doc.error, doc.text) == ("docx", "corrupt", "")


def test_malformed_xml_is_corrupt_but_keeps_what_was_read(limits: ExtractionLimits) -> None:
    doc = extract(make_corrupt_docx("bad_xml"), "broken.docx", limits)
    assert doc.error == "corrupt"
    assert doc.text.startswith("壊れた文書です。")


def test_max_chars(limits: ExtractionLimits) -> None:
    doc = extract(_full_docx(), "a.docx", dataclasses.replace(limits, max_chars=9))
    # the text box anchored in the heading is a passage of its own: a blank line before it
    assert (doc.text, doc.truncated, doc.error) == ("会議議事録\n\nテ", True, None)


def test_deadline_between_paragraph_chunks(limits: ExtractionLimits) -> None:
    paragraphs = [f"段落{i}" for i in range(1000)]
    doc = extract(make_docx(paragraphs), "big.docx", limits, deadline=Deadline(0))
    assert (doc.error, doc.truncated) == ("timeout", True)
    # Checked every 256 paragraphs: the first chunk is kept.
    assert doc.text.splitlines() == paragraphs[:256]


def test_one_giant_paragraph_is_bounded(limits: ExtractionLimits) -> None:
    # 20000 runs in a single paragraph: text is flushed (and the deadline
    # checked) by pending size, not only at paragraph ends.
    runs = "".join(f'<w:r><w:t xml:space="preserve">語{i} </w:t></w:r>' for i in range(20000))
    data = make_docx([], body_xml=f"<w:p>{runs}</w:p>")
    full = extract(data, "giant.docx", limits)
    assert (full.error, full.text.count("語")) == (None, 20000)
    timed_out = extract(data, "giant.docx", limits, deadline=Deadline(0))
    assert (timed_out.error, timed_out.truncated) == ("timeout", True)
    assert 0 < timed_out.text.count("語") < 20000
    short = extract(data, "giant.docx", dataclasses.replace(limits, max_chars=100))
    assert (len(short.text), short.truncated) == (100, True)


@pytest.mark.parametrize("count", [2000])
def test_large_document(limits: ExtractionLimits, count: int) -> None:
    paragraphs = [f"第{i}段落 東京都の四半期売上報告について記載する。" for i in range(count)]
    doc = extract(make_docx(paragraphs, table=[["a", "b"]] * 50), "big.docx", limits)
    assert doc.error is None
    assert doc.text.count("\n") >= count - 1
    assert doc.text.splitlines()[count - 1] == paragraphs[-1]
