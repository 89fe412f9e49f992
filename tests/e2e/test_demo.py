"""`docindex demo` (what `make demo` runs) from an empty directory."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import DemoRun

# One demo for this test and test_doc_examples.py (tests/e2e/conftest.py): one process runs both.
pytestmark = pytest.mark.xdist_group("demo")


def test_demo_indexes_samples_and_finds_japanese_and_english(demo_run: DemoRun) -> None:
    result = demo_run.result
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    # a normal run reads clean: no log record at warning level or above (the local engine's missing ICU
    # plugin is expected and logged at info), on either stream
    logged = [line for line in (out + result.stderr).splitlines() if line.startswith('{"level":')]
    assert not [line for line in logged if '"level":"INFO"' not in line and '"level":"DEBUG"' not in line], logged
    # every sample indexed, the redelivered notifications recognised as duplicates
    assert "DocumentsIndexed       20" in out
    assert "DuplicatesSkipped      3" in out
    # Japanese (kuromoji, CP932 髙) and English hits with highlighted snippets
    assert "営業部/2024年度 報告/四半期売上報告 Q3.pdf" in out
    assert "[四半期][売上]" in out
    assert "総務部/古い文書/社員名簿 メモ.txt" in out
    assert "[Quarterly] [revenue]" in out
    # the scans went through the OCR worker and their text is searchable
    assert "'done': 5" in out
    # ... and the worker's metrics are all in the totals (also the ones after the last indexer batch)
    assert "OcrJobsQueued          5" in out
    assert "OcrJobsCompleted       5" in out
    assert "ご[請求]金額" in out
    # the quarterly report's hit names the page its words are on (issue 28)
    assert "p. 2: 大阪府と[福岡県]の売上" in out.replace("[福岡][県]", "[福岡県]")
    # ... a page fed sideways, a fax at 200 x 100 dpi and a notice written vertically too
    for query, key in (
        ("健康診断", "スキャン/健康診断のお知らせ 横向き.tif"),
        ("物流倉庫", "FAX受信/2026-11-20 営業報告.tif"),
        # found by meaning (the worker embedded every document; the stand-in answers the vector leg)
        ("お正月は会社が何日から休みになる？", "社内ポータル/お知らせ/年末年始 休業のお知らせ.html  [by meaning]"),
        ("非常階段", "総務部/掲示/社内行事のお知らせ.tif"),
    ):
        assert key in out.split(f"$ docindex search {query!r}")[1].split("$ docindex search")[0], query
    # typed 高橋, the file writes 髙橋 (spelling variants)
    typed = out.split("$ docindex search '高橋 評価'")[1].split("$ docindex search")[0]
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" in typed
    # each hit shows its path on the file server the demo's bucket is a copy of (\\fileserver\文書)
    assert "\n       \\\\fileserver\\文書\\営業部\\2024年度 報告\\四半期売上報告 Q3.pdf\n" in out
    # a name search finds the file named 見積書, not the visit report whose text alone mentions it ...
    by_content = out.split("$ docindex search '見積書'")[1].split("$ docindex search")[0]
    by_name = out.split("$ docindex search --names '見積書'")[1].split("$ docindex search")[0]
    assert "営業部/顧客/髙橋商事 訪問記録.txt" in by_content
    assert "営業部/見積書/見積書 No.2024-123.xlsx" in by_name
    assert "営業部/顧客/髙橋商事 訪問記録.txt" not in by_name
    # ... a scan by a word of its name its text does not hold, and the files of a folder by its name
    sideways = out.split("$ docindex search --names '横向き'")[1].split("$ docindex search")[0]
    assert "スキャン/健康診断のお知らせ 横向き.tif" in sideways
    minutes = out.split("$ docindex search --names '会議議事録'")[1].split("$ docindex search")[0]
    assert "総務部/会議議事録/2024-10-01 定例会議 議事録.docx" in minutes
    # (`demo --stop` stops the servers at the end: test_doc_examples.py runs it once it is done with them)
    # two employees search the same word through the search API: each sees their own department's file
    sales = out.split("eigyo (営業部) searches")[1].split("jinji (人事部) searches")[0]
    hr = out.split("jinji (人事部) searches")[1].split("Search page:")[0]
    assert "営業部/顧客/髙橋商事 訪問記録.txt" in sales
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" not in sales
    assert "人事部/評価/2024年度 人事評価 髙橋.txt" in hr
    assert "営業部/顧客/髙橋商事 訪問記録.txt" not in hr
    assert "総務部/古い文書/社員名簿 メモ.txt" in sales
    assert "総務部/古い文書/社員名簿 メモ.txt" in hr
    assert "Search page: http://127.0.0.1:" in out
    # the employees' hits carry the path too (the search API's location)
    assert "\n       \\\\fileserver\\文書\\営業部\\顧客\\髙橋商事 訪問記録.txt\n" in sales


def test_demo_answers_questions_with_file_and_page_and_refuses_what_no_file_answers(demo_run: DemoRun) -> None:
    out = demo_run.result.stdout
    answers = out.split("7. Employees ask questions")[1]

    def asked(text: str, question: str) -> str:
        return text.split(f"asks {question!r}")[1].split(" asks ", maxsplit=1)[0]

    # two questions the samples answer: each answer with its file and page, and the quote
    holidays = asked(answers, "年末年始はいつから休み？")
    assert "12月28日" in holidays.split("answer:")[1]
    assert "[社内ポータル/お知らせ/年末年始 休業のお知らせ.html 本文]" in holidays
    meeting = asked(answers, "次回の定例会議はいつ？")
    # the fact itself (the line that holds it), from the file, named for what it has
    assert "answer: 決定事項：次回の定例会議は10月15日に開催する。\n" in meeting
    assert "[総務部/会議議事録/2024-10-01 定例会議 議事録.docx 本文]" in meeting
    price = asked(answers, "ノートPCの単価はいくら？")
    assert "answer: 品名 ノートPC・数量 10・単価 128000\n" in price
    assert "[営業部/見積書/見積書 No.2024-123.xlsx シート 見積書]" in price
    checkup = asked(answers, "健康診断はいつ？")
    assert "二十日" in checkup.split("answer:")[1].split("\n")[0]
    for answered in (meeting, price, checkup):
        assert len(answered.split("answer: ")[1].split("\n")[0]) <= 80
    # a file names the subject without answering, and one no file answers: refused, saying why
    assert "(no answer (" in asked(answers, "契約書の契約期間は？")
    assert "(no answer" in asked(answers, "株主総会の議決権行使の方法は？")
    # the same question, two employees: each answered from files they may read only
    sales = answers.split("eigyo (営業部) asks")[1].split("jinji (人事部) asks")[0]
    hr = answers.split("jinji (人事部) asks")[1].split("with ANSWERS=bedrock")[0]
    assert "人事部/" not in sales
    assert "営業部/" not in hr
    assert "[人事部/評価/2024年度 人事評価 髙橋.txt 本文]" in hr
    # the Bedrock path, through the dev kit's Converse stand-in: the same question, cited
    bedrock = answers.split("with ANSWERS=bedrock")[1]
    assert "12月28日" in bedrock.split("answer:")[1]
    assert "[社内ポータル/お知らせ/年末年始 休業のお知らせ.html 本文]" in bedrock
    assert "1 request" in bedrock


def test_docindex_failures_lists_every_demo_file_with_an_extraction_error(demo_run: DemoRun) -> None:
    import json

    from opensearchpy import OpenSearch

    from docindex.ops.envfile import read_env_file
    from tests.support.cli import docindex

    # Given the demo's password-protected PDF, indexed by name only
    assert "Indexed by name only: {'encrypted': 1}" in demo_run.result.stdout
    # When the operator asks which files could not be read, in the demo's local run
    result = docindex("failures", "--json", cwd=demo_run.directory, ok=(0, 1))
    report = json.loads(result.stdout)
    # Then every document with an extraction_error is listed once, counted against a direct query
    env = read_env_file(demo_run.directory / ".docindex" / "local.env")
    client = OpenSearch(hosts=[env["OPENSEARCH_ENDPOINT"]], timeout=30)
    query = {"query": {"exists": {"field": "extraction_error"}}, "size": 100, "_source": ["key"]}
    direct = {hit["_source"]["key"] for hit in client.search(index=env["OPENSEARCH_INDEX"], body=query)["hits"]["hits"]}
    listed = [d["key"] for reason in report["reasons"] for d in reason["documents"] if d["extraction_error"]]
    assert sorted(listed) == sorted(direct) == ["総務部/古い文書/パスワード付き 議事録.pdf"]
    # each reason names the command that retries it
    assert all(reason["retry"].startswith("docindex reprocess --") for reason in report["reasons"])
    assert result.returncode == (1 if report["reasons"] else 0)
