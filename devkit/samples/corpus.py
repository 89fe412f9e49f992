"""The demo's corpus: a few business documents of every kind, in Japanese folders, names with spaces."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from devkit.samples.office import make_docx, make_pptx, make_xlsx
from devkit.samples.pdf import make_pdf
from devkit.samples.scans import make_scan_pdf, make_scan_png
from devkit.samples.text import make_csv, make_html, make_text

__all__ = ["sample_corpus", "sample_dates"]

JST = timezone(timedelta(hours=9), "JST")

# Files written by the real applications (tests/fixtures/real/README.md says where each comes from).
REAL = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "real"
# Pages as offices scan them (tests/fixtures/ocr/README.md).
DEFECTS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "ocr"


def sample_corpus() -> list[tuple[str, bytes]]:
    """A small mixed corpus for the demo: (S3 key, bytes), Japanese folders and names with spaces.

    Distinctive words to search for: 四半期売上報告, quarterly revenue,
    東京都, 会議議事録, 見積書, 髙橋, 請求書, 契約書, 議事録; in the scans as offices make them
    (sideways, by fax at 204 x 98 dpi, a vertical notice under a horizontal title): 健康診断,
    物流倉庫, 非常階段.
    """
    return [
        (
            "営業部/2024年度 報告/四半期売上報告 Q3.pdf",
            make_pdf(
                [
                    "四半期売上報告（第3四半期）\n東京都の売上は前年同期比 12% 増となりました。\n"
                    "Quarterly revenue grew 12% year over year in Tokyo.",
                    "大阪府と福岡県の売上は横ばいでした。\n来期は新製品の投入を予定しています。",
                ],
                "四半期売上報告 2024年度 Q3",
            ),
        ),
        (
            "総務部/会議議事録/2024-10-01 定例会議 議事録.docx",
            make_docx(
                [
                    "会議議事録",
                    "日時：2024年10月1日 10:00〜11:00　場所：東京都千代田区 本社 第1会議室",
                    "出席者：髙橋、山﨑、佐藤",
                    "決定事項：次回の定例会議は10月15日に開催する。",
                ],
                title="定例会議 議事録",
                header="株式会社サンプル 総務部",
                footer="社外秘",
                textbox="要確認：予算案の再提出",
                table=[["議題", "担当", "期限"], ["予算案", "髙橋", "10月10日"]],
            ),
        ),
        (
            "営業部/見積書/見積書 No.2024-123.xlsx",
            make_xlsx(
                {
                    "見積書": [
                        ["見積書", None, None],
                        ["品名", "数量", "単価"],
                        ["ノートPC", 10, 128000],
                        ["モニター", 10, 32000],
                    ],
                    "備考": [["納期", "ご注文後 2 週間"], ["有効期限", date(2024, 12, 31)]],
                },
                title="見積書 No.2024-123",
            ),
        ),
        (
            "経営企画部/事業計画 説明資料.pptx",
            make_pptx(
                [
                    "2025年度 事業計画\n東京都内の新拠点を開設",
                    "売上目標\nquarterly revenue target: 3.2 billion yen",
                ],
                notes=["冒頭で昨年度の実績に触れる", "質疑応答の時間を確保する"],
                title="2025年度 事業計画",
            ),
        ),
        (
            "社内ポータル/お知らせ/年末年始 休業のお知らせ.html",
            make_html(
                "年末年始休業のお知らせ",
                ["12月28日から1月5日まで休業いたします。", "緊急連絡先：総務部 髙橋（内線①）"],
                "cp932",
                charset_label="Shift_JIS",
            ),
        ),
        (
            "総務部/古い文書/社員名簿 メモ.txt",
            make_text(
                "社員名簿メモ\n髙橋 一郎　①総務\n山﨑 花子　②経理\n連絡は 9:00～18:00 に。\n",
                "cp932",
                newline="\r\n",
            ),
        ),
        (
            "開発部/設計メモ/README 検索基盤.md",
            make_text("# 検索基盤 設計メモ\n\n- 全文検索は OpenSearch を使う\n- 日本語は kuromoji で解析する\n"),
        ),
        (
            "経理部/取引先 一覧.csv",
            make_csv([["取引先", "所在地", "担当"], ["株式会社サンプル", "東京都港区", "髙橋"]], bom=True),
        ),
        (
            "スキャン/請求書 2024-09.png",
            make_scan_png(["請求書", "株式会社サンプル 御中", "ご請求金額 ¥128,000（税込）"], dpi=200),
        ),
        (
            "スキャン/契約書 署名済み.pdf",
            make_scan_pdf([["業務委託契約書", "甲と乙は以下のとおり契約を締結する。"]], dpi=200, title="契約書"),
        ),
        # Scanned as offices do: fed sideways through the copier's feeder, received by fax (two pages at
        # 200 x 100 dpi), a notice whose body is written vertically.
        ("スキャン/健康診断のお知らせ 横向き.tif", (DEFECTS / "rotated90-notice.tif").read_bytes()),
        ("FAX受信/2026-11-20 営業報告.tif", (DEFECTS / "fax-200x100-report-2pages.tif").read_bytes()),
        ("総務部/掲示/社内行事のお知らせ.tif", (DEFECTS / "vertical-mixed-notice.tif").read_bytes()),
        # Two departments' own folders: the demo's access map lets only their members read them.
        ("営業部/顧客/髙橋商事 訪問記録.txt", make_text("訪問記録\n髙橋商事様 新製品のご提案 次回は見積書を持参\n")),
        ("人事部/評価/2024年度 人事評価 髙橋.txt", make_text("人事評価 2024年度\n髙橋 一郎 評価：A 売上目標を達成\n")),
        # What an old Japanese file server keeps: Word 97-2003, an Outlook message, a zip with
        # Shift_JIS member names (written by LibreOffice, Outlook and Info-ZIP).
        ("総務部/稟議書/稟議書 会議室プロジェクター.doc", (REAL / "ringi.doc").read_bytes()),
        ("メール/台湾拠点 格式測試.msg", (REAL / "apache-tika" / "testMSG_chinese.msg").read_bytes()),
        ("総務部/資料 一式.zip", (REAL / "shiryou_cp932.zip").read_bytes()),
        (
            "English/Quarterly Revenue Report.docx",
            make_docx(
                ["Quarterly revenue report", "Revenue in the Tokyo region grew by 12 percent."],
                title="Quarterly revenue report",
            ),
        ),
    ]


def sample_dates() -> dict[str, datetime]:
    """When each sample was last modified on the file server (the demo uploads it with this date as DataSync
    would: ``file-mtime`` metadata), spread over years as a company's files are. Times are an office's
    (JST); 社員名簿 メモ was saved before 9:00, so its day in Japan is a day after its UTC day."""
    return {
        key: datetime(*when, tzinfo=JST)
        for key, when in {
            "営業部/2024年度 報告/四半期売上報告 Q3.pdf": (2024, 10, 15, 17, 40),
            "総務部/会議議事録/2024-10-01 定例会議 議事録.docx": (2024, 10, 1, 11, 30),
            "営業部/見積書/見積書 No.2024-123.xlsx": (2024, 9, 20, 14, 5),
            "経営企画部/事業計画 説明資料.pptx": (2025, 3, 10, 19, 20),
            "社内ポータル/お知らせ/年末年始 休業のお知らせ.html": (2025, 12, 1, 9, 0),
            "総務部/古い文書/社員名簿 メモ.txt": (2009, 4, 1, 8, 45),
            "開発部/設計メモ/README 検索基盤.md": (2023, 6, 12, 16, 0),
            "経理部/取引先 一覧.csv": (2021, 2, 8, 10, 15),
            "スキャン/請求書 2024-09.png": (2024, 9, 30, 18, 0),
            "スキャン/契約書 署名済み.pdf": (2022, 7, 1, 13, 30),
            "スキャン/健康診断のお知らせ 横向き.tif": (2025, 5, 12, 9, 10),
            "FAX受信/2026-11-20 営業報告.tif": (2026, 11, 20, 8, 30),
            "総務部/掲示/社内行事のお知らせ.tif": (2019, 11, 5, 12, 0),
            "営業部/顧客/髙橋商事 訪問記録.txt": (2024, 11, 7, 18, 30),
            "人事部/評価/2024年度 人事評価 髙橋.txt": (2025, 3, 28, 17, 0),
            "総務部/稟議書/稟議書 会議室プロジェクター.doc": (2012, 8, 23, 15, 0),
            "メール/台湾拠点 格式測試.msg": (2016, 5, 18, 10, 40),
            "総務部/資料 一式.zip": (2014, 1, 9, 11, 0),
            "English/Quarterly Revenue Report.docx": (2024, 10, 16, 9, 30),
        }.items()
    }
