"""Extraction keeps the structure reading needs (issue 48): rows with their header, text boxes and notes as
passages of their own, line boundaries kept in the passages an answer is read from."""

from __future__ import annotations

from devkit.samples import sample_corpus
from docindex.embed.chunks import passages
from docindex.extract.base import ExtractionLimits
from docindex.extract.dispatch import extract
from docindex.extract.structure import rows_with_header

SAMPLES = dict(sample_corpus())


def _extracted(key: str) -> str:
    return extract(SAMPLES[key], key.rsplit("/", 1)[-1], ExtractionLimits()).text


def test_a_sheet_row_reads_with_its_header() -> None:
    text = _extracted("営業部/見積書/見積書 No.2024-123.xlsx")
    assert "品名 ノートPC・数量 10・単価 128000" in text.splitlines()
    # a key/value list has no header row: its rows stay as they are
    assert "納期\tご注文後 2 週間" in text.splitlines()


def test_a_word_table_and_a_csv_file_read_with_their_header() -> None:
    assert "議題 予算案・担当 髙橋・期限 10月10日" in _extracted("総務部/会議議事録/2024-10-01 定例会議 議事録.docx")
    assert "取引先 株式会社サンプル・所在地 東京都港区・担当 髙橋" in _extracted("経理部/取引先 一覧.csv")
    assert "部署 営業部・氏名 鈴木一郎・内線 5678" in _extracted("総務部/資料 一式.zip")


def test_a_text_box_is_a_passage_of_its_own_not_glued_to_the_heading() -> None:
    text = _extracted("総務部/会議議事録/2024-10-01 定例会議 議事録.docx")
    assert "会議議事録\n\n要確認：予算案の再提出\n\n日時：" in text
    assert "会議議事録要確認" not in "".join(p.text for p in passages(text))


def test_slide_notes_are_a_passage_of_their_own() -> None:
    text = _extracted("経営企画部/事業計画 説明資料.pptx")
    assert "東京都内の新拠点を開設\n\n冒頭で昨年度の実績に触れる" in text


def test_passages_keep_the_lines_of_a_notice_and_join_a_wrapped_line() -> None:
    notice = (
        "健康診断のお知らせ\n令和八年度の定期健康診断を次のとおり実施しますので、全従業員は必ず受\n診してください。\n"
        "日時　十一月二十日（木）午前九時から正午まで\n場所　本社三階　大会議室"
    )
    lines = [line for p in passages(notice) for line in p.text.split("\n")]
    assert lines == [
        "健康診断のお知らせ",
        "令和八年度の定期健康診断を次のとおり実施しますので、全従業員は必ず受診してください。",
        "日時 十一月二十日（木）午前九時から正午まで",
        "場所 本社三階 大会議室",
    ]


def test_a_sheet_passage_is_rows_not_a_run_of_cells() -> None:
    text = _extracted("営業部/見積書/見積書 No.2024-123.xlsx")
    joined = "\n".join(p.text for p in passages(text))
    assert "見積書見積書品名" not in joined
    assert "品名 ノートPC・数量 10・単価 128000" in joined.split("\n")


def test_rows_without_a_header_and_lone_tabs_are_left_as_they_are() -> None:
    assert rows_with_header("担当\t髙橋\n確認済み\tTRUE") == "担当\t髙橋\n確認済み\tTRUE"
    assert rows_with_header("一行\tだけ") == "一行\tだけ"
    named = "品名・金額\n品名 液晶プロジェクター・金額 158000"
    assert rows_with_header("品名\t金額\n液晶プロジェクター\t158000") == named
