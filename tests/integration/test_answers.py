"""GET /answer through the real pipeline: answers only from files the caller may read, with file, page and quote.

Two departments each keep a travel regulation with a different per-diem, and 人事部 a file that holds the exact
answer to a question about pay rises. The files are indexed by the real indexer under an access map and embedded
by the real worker (multilingual-e5-small); the search function's resolver answers with real Cognito tokens;
a real OpenSearch node with the k-NN plugin is the cluster. The answerer is the real one, wrapped in an
instrumented stand-in that records every passage handed to it: what no file a caller may not read may reach.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docindex.answer.models import Answer, Document
from docindex.worker.pool import OcrPool
from tests.conftest import Stack
from tests.support.search_api import SearchWorld, meaning_world

pytestmark = pytest.mark.integration

SALES_RULES = "営業部/規程/営業部 出張旅費規程.txt"
HR_RULES = "人事部/規程/人事部 出張旅費規程.txt"
HR_SECRET = "人事部/給与/2025年度 昇給について.txt"
FILES = {
    SALES_RULES: (
        "営業部 出張旅費規程\n第1条 出張の旅費について定める。\n"
        "第2条 日当は1日につき3,000円とする。宿泊費は実費とする。"
    ),
    HR_RULES: (
        "人事部 出張旅費規程\n第1条 出張の旅費について定める。\n"
        "第2条 日当は1日につき5,000円とする。宿泊費は実費とする。"
    ),
    HR_SECRET: "2025年度 昇給について\n2025年度の昇給額は全社員一律12,000円とする。支給は4月の給与からとする。",
    "共有/お知らせ/年末年始 休業のお知らせ.txt": (
        "年末年始 休業のお知らせ\n本年は12月29日から翌年1月4日まで休業いたします。緊急の連絡は総務部までお願いします。"
    ),
    "共有/規程/情報機器持出管理規程.txt": (
        "情報機器持出管理規程\n会社が貸与するノートPCを社外に持ち出すときは、事前に持出申請書を提出し所属長の承認を得る。"
    ),
}
ACCESS = {
    "rules": [
        {"prefix": "営業部/", "allow": {"groups": ["営業部"]}},
        {"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部"]}},
        {"prefix": "共有/", "allow": {"everyone": True}},
    ]
}
SECRET_TEXTS = ("5,000円", "12,000円", "昇給額")


class Recording:
    """The real extractive answerer, recording every file and passage it is handed (an instrumented stand-in)."""

    name = "extractive"

    def __init__(self) -> None:
        from docindex.answer.refusal import AnswerRule
        from docindex.answer.service import ExtractiveAnswerer

        self.real = ExtractiveAnswerer(AnswerRule())
        self.seen: list[tuple[str, list[Document]]] = []

    def answer(self, question: str, documents: list[Document]) -> Answer:
        self.seen.append((question, documents))
        return self.real.answer(question, documents)

    def texts(self) -> str:
        return "\n".join(p.text for _, docs in self.seen for d in docs for p in d.passages)

    def paths(self) -> set[str]:
        return {d.path for _, docs in self.seen for d in docs}


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, moto_endpoint: str, search_engine: Any, ocr_pool: OcrPool
) -> Iterator[tuple[SearchWorld, Stack]]:
    users = {"eigyo": ["営業部"], "jinji": ["人事部"]}
    tmp = tmp_path_factory.mktemp("answers")
    with meaning_world(tmp, moto_endpoint, search_engine, ocr_pool, FILES, ACCESS, users) as (found, stack, _):
        yield found, stack


@pytest.fixture
def recording(world: tuple[SearchWorld, Stack]) -> Iterator[Recording]:
    found, _ = world
    answers = found.resolver_answers()
    real = answers.answerer
    answers.answerer = stand_in = Recording()
    answers.cache.seconds = 0  # each test asks afresh (the cache has a test of its own)
    try:
        yield stand_in
    finally:
        answers.answerer = real
        answers.cache.seconds = 60


def ask(found: SearchWorld, user: str, **params: Any) -> dict[str, Any]:
    status, body = found.call("/answer", found.tokens[user]["access_token"], **params)
    assert status == 200, body
    return dict(body)


def test_each_employee_is_answered_from_their_own_departments_file(
    world: tuple[SearchWorld, Stack], recording: Recording
) -> None:
    found, _ = world
    # When both ask the same question
    sales = ask(found, "eigyo", q="出張の日当はいくら？")
    hr = ask(found, "jinji", q="出張の日当はいくら？")
    # Then each answer quotes their own regulation, with its file and page
    assert not sales["no_answer"]
    assert sales["answered_by"] == "extractive"
    assert "3,000円" in sales["answer"]
    assert [c["path"] for c in sales["citations"]] == [SALES_RULES]
    assert sales["citations"][0]["page"] == 1
    assert sales["citations"][0]["id"] == found.id_of(SALES_RULES)
    assert "5,000円" in hr["answer"]
    assert [c["path"] for c in hr["citations"]] == [HR_RULES]
    # every quote is text of the cited file, and the answer is the unit of a quote that holds the fact
    for body in (sales, hr):
        for citation in body["citations"]:
            assert citation["quote"] in FILES[citation["path"]]
            assert body["answer"] in citation["quote"]  # the answer is the fact; its quote may say more
    # and nothing of 人事部's files ever reached the answerer while 営業部 asked
    first_question, first_documents = recording.seen[0]
    assert first_question == "出張の日当はいくら？"
    assert not {d.path for d in first_documents} & {HR_RULES, HR_SECRET}
    assert not any(t in p.text for d in first_documents for p in d.passages for t in SECRET_TEXTS)


def test_a_file_that_holds_the_exact_answer_is_never_read_for_someone_who_may_not_open_it(
    world: tuple[SearchWorld, Stack], recording: Recording
) -> None:
    found, _ = world
    # Given 人事部's file that holds the exact answer: 人事部 is answered from it
    hr = ask(found, "jinji", q="2025年度の昇給額はいくら？")
    assert "12,000円" in hr["answer"]
    assert hr["citations"][0]["path"] == HR_SECRET
    recording.seen.clear()
    # When 営業部 asks the same
    sales = ask(found, "eigyo", q="2025年度の昇給額はいくら？")
    # Then no answer, no citation, and none of the file's text reached the answerer, the answer or the citations
    assert sales == {
        "answer": None,
        "no_answer": True,
        "answered_by": "extractive",
        "citations": [],
        "reason": sales.get("reason"),
    }
    assert HR_SECRET not in recording.paths()
    assert not any(t in recording.texts() for t in SECRET_TEXTS)
    assert not any(t in json.dumps(sales, ensure_ascii=False) for t in SECRET_TEXTS)


def test_a_question_no_readable_file_answers_is_refused_plainly(
    world: tuple[SearchWorld, Stack], recording: Recording
) -> None:
    found, _ = world
    for question in ("株主総会の議決権行使の方法は？", "ブロックチェーン"):
        body = ask(found, "eigyo", q=question)
        assert body["no_answer"] is True
        assert body["answer"] is None
        assert body["citations"] == []


def test_a_paraphrase_is_answered_by_meaning(world: tuple[SearchWorld, Stack], recording: Recording) -> None:
    found, _ = world
    body = ask(found, "eigyo", q="お正月は会社が何日から休みになる？")
    assert not body["no_answer"]
    assert body["citations"][0]["path"] == "共有/お知らせ/年末年始 休業のお知らせ.txt"
    assert "12月29日" in body["answer"]


def test_the_cache_is_keyed_on_who_asks(world: tuple[SearchWorld, Stack]) -> None:
    found, _ = world
    answers = found.resolver_answers()
    answers.cache.seconds = 60
    # 人事部 asks first (its answer is cached), then 営業部 the same question: never 人事部's answer
    assert "5,000円" in ask(found, "jinji", q="出張の日当は？")["answer"]
    sales = ask(found, "eigyo", q="出張の日当は？")
    assert "5,000円" not in json.dumps(sales, ensure_ascii=False)
    assert "3,000円" in sales["answer"]


def test_logs_keep_no_question_or_passage_text(
    world: tuple[SearchWorld, Stack], recording: Recording, caplog: pytest.LogCaptureFixture
) -> None:
    found, _ = world
    with caplog.at_level(logging.INFO, logger="docindex"):
        body = ask(found, "jinji", q="2025年度の昇給額はいくら？")
    answered = [r for r in caplog.records if r.getMessage() == "answer"]
    assert answered
    assert answered[0].__dict__["citations"] == len(body["citations"]) >= 1
    # every field of every line, as the JSON formatter would write it: no question, no passage
    logged = json.dumps([{k: str(v) for k, v in r.__dict__.items()} for r in caplog.records], ensure_ascii=False)
    assert "昇給" not in logged
    assert "12,000" not in logged


def test_bounds_and_sign_in_are_the_searchs(world: tuple[SearchWorld, Stack]) -> None:
    found, _ = world
    token = found.tokens["eigyo"]["access_token"]
    assert found.call("/answer", None, q="日当")[0] == 401
    assert found.call("/answer", token, q="x" * 257)[0] == 400
    assert found.call("/answer", token)[0] == 400
    assert found.call("/answer", token, q="日当", prefix="p" * 1025)[0] == 400
    # a folder the caller cannot read answers nothing, as an empty one would
    assert ask(found, "eigyo", q="出張の日当はいくら？", prefix="人事部/")["no_answer"] is True
    status, config = found.call("/config.json", None)
    assert status == 200
    assert config["answers"] == "extractive"


def test_docindex_ask_answers_refuses_and_says_when_it_cannot_run(
    world: tuple[SearchWorld, Stack],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from docindex.cli import main

    _, stack = world
    for name, value in {**stack.settings_env(), "OPENSEARCH_AUTH": "none", "ANSWER_CACHE_SECONDS": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)  # no .docindex/local.env here
    # An employee's view (--group): 0 and the API's JSON
    assert main(["ask", "出張の日当はいくら？", "--group", "営業部", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [c["path"] for c in body["citations"]] == [SALES_RULES]
    # Refused: 1, and nothing of 人事部's file for 営業部
    assert main(["ask", "2025年度の昇給額はいくら？", "--group", "営業部"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("no answer (not_near_enough): no readable file holds a passage near enough"), out
    assert "12,000" not in out
    # The operator (no --group) reads every file: the file that holds it answers, and a note says so
    assert main(["ask", "2025年度の昇給額はいくら？"]) == 0
    captured = capsys.readouterr()
    assert "12,000円" in captured.out
    assert HR_SECRET in captured.out
    assert "access map not applied" in captured.err
    # Could not run: 2
    assert main(["ask", "x" * 300]) == 2
    monkeypatch.setenv("ANSWERS", "off")
    assert main(["ask", "出張の日当は？"]) == 2


def test_bedrock_is_sent_only_passages_of_files_the_caller_may_read(world: tuple[SearchWorld, Stack]) -> None:
    import boto3

    from devkit.local.converse import ConverseStandIn
    from docindex.answer.bedrock import BedrockAnswerer
    from docindex.answer.refusal import AnswerRule

    found, _ = world
    answers = found.resolver_answers()
    real, seconds = answers.answerer, answers.cache.seconds
    with ConverseStandIn() as stand_in:
        client = boto3.Session(region_name="us-east-1", aws_access_key_id="l", aws_secret_access_key="l").client(
            "bedrock-runtime", endpoint_url=stand_in.url
        )
        answers.answerer = BedrockAnswerer(
            client, "us.anthropic.claude-3-5-haiku-20241022-v1:0", rule=AnswerRule(), passages=6, max_tokens=400
        )
        answers.cache.seconds = 0
        try:
            # Given 人事部's file that holds the exact answer, and 営業部's regulation
            sales = ask(found, "eigyo", q="出張の日当はいくら？")
            secret = ask(found, "eigyo", q="2025年度の昇給額はいくら？")
            hr = ask(found, "jinji", q="2025年度の昇給額はいくら？")
        finally:
            answers.answerer, answers.cache.seconds = real, seconds
    # Then 営業部 is answered by Bedrock from its own regulation, and refused the pay rise
    assert sales["answered_by"] == "bedrock"
    assert "3,000円" in sales["answer"]
    assert [c["path"] for c in sales["citations"]] == [SALES_RULES]
    assert secret["no_answer"] is True
    assert "12,000円" in hr["answer"]
    # and no request made while 営業部 asked held any text of 人事部's files
    sent_for_sales = json.dumps(stand_in.requests[:-1], ensure_ascii=False)
    assert not any(t in sent_for_sales for t in SECRET_TEXTS)
    assert "5,000円" not in sent_for_sales
    assert "12,000円" in json.dumps(stand_in.requests[-1], ensure_ascii=False)


def test_answers_off_removes_the_route_and_the_box(world: tuple[SearchWorld, Stack], tmp_path: Path) -> None:
    import boto3

    from tests.conftest import REGION
    from tests.support.search_api import build_world

    _, stack = world
    cognito = boto3.client("cognito-idp", region_name=REGION, endpoint_url=stack.aws.endpoint)
    off = build_world(stack, tmp_path, cognito, ANSWERS="off")
    off.add_user("someone", ["営業部"])
    assert off.answers is None
    assert off.call("/answer", off.tokens["someone"]["access_token"], q="出張の日当は？")[0] == 404
    assert off.call("/config.json", None)[1]["answers"] == "off"


def test_a_cached_answer_never_outlives_its_files_permission_or_version(world: tuple[SearchWorld, Stack]) -> None:
    from docindex.access.policy import parse_access_map
    from docindex.ops.access import Restamper

    found, stack = world
    answers = found.resolver_answers()
    answers.cache.seconds = 60
    notice = "人事部/お知らせ/健康診断のお知らせ.txt"
    question = "今年の健康診断はいつ実施する？"

    def restamp(access: dict[str, Any]) -> None:
        access_map = parse_access_map(json.dumps(access, ensure_ascii=False), admin_group="docindex-admins")
        Restamper(stack.opensearch, stack.index, access_map, still_current=None).run()

    # Given 人事部's notice, quoted to 人事部 and cached
    found.index_files({notice: "健康診断のお知らせ\n今年の健康診断は10月7日に本社で実施します。"})
    first = ask(found, "jinji", q=question)
    assert [c["path"] for c in first["citations"]] == [notice]
    assert "10月7日" in first["answer"]
    # When the map narrows the notice's folder to 人事部長 and it is applied (re-stamped, as access apply does),
    # within the cache's 60 s: the same caller, with the same principals, gets no quote of it
    closed = {"prefix": "人事部/お知らせ/", "inherit": False, "allow": {"groups": ["人事部長"]}}
    narrower = {"rules": [*ACCESS["rules"], closed]}
    restamp(narrower)
    try:
        revoked = ask(found, "jinji", q=question)
        assert notice not in [c["path"] for c in revoked["citations"]]
        assert "10月7日" not in json.dumps(revoked, ensure_ascii=False)
    finally:
        restamp(ACCESS)
    # When the notice is readable again and answers (cached; the refusal above is kept for its own key until it
    # expires: it quotes nothing), then is rewritten, the same caller is answered from what it says now
    again = "健康診断はいつ実施しますか？"
    assert "10月7日" in ask(found, "jinji", q=again)["answer"]
    found.index_files({notice: "健康診断のお知らせ\n今年の健康診断は10月14日に本社で実施します。"})
    rewritten = ask(found, "jinji", q=again)
    assert "10月14日" in rewritten["answer"]
    assert "10月7日" not in json.dumps(rewritten, ensure_ascii=False)
