"""``docindex ask QUESTION``: an answer from the indexed files, with the file and page each sentence comes from.

Exit codes (docs/search-api.md, "Answers"): 0 an answer, 1 refused (no readable passage is near enough),
2 could not run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError


def _ask(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from docindex.answer.models import AnswerRequest
    from docindex.answer.service import AnswerService, build_answerer
    from docindex.answer.settings import AnswerSettings
    from docindex.core.settings import describe_validation_error
    from docindex.index.search import default_embedder, default_rule
    from docindex.search_api.principals import Caller

    try:
        request = AnswerRequest(q=args.question, prefix=args.prefix or "")
    except ValidationError as exc:
        raise CommandError(describe_validation_error(exc)) from None
    deployment, clients = _ops.resolve(argparse.Namespace(**{**vars(args), "bucket": None}))
    settings = AnswerSettings.from_env()
    answerer = build_answerer(
        settings, bedrock_client=lambda: clients.client("bedrock-runtime", **settings.converse_bounds())
    )
    if answerer is None:
        raise CommandError("answers are off (ANSWERS=off): set ANSWERS=extractive or ANSWERS=bedrock")
    service = AnswerService(
        settings,
        opensearch=_ops.opensearch_for(deployment),
        index=deployment.opensearch_index,
        embedder=default_embedder(),
        meaning_rule=default_rule(),
        answerer=answerer,
    )
    principals: list[str] | None = None
    if args.group or args.user:
        principals = Caller(sub=args.user or "docindex-ask", groups=tuple(args.group or ())).principals
    else:
        print("note: operator answer: access map not applied (employees ask through the search API)", file=sys.stderr)
    found = service.answer(request, principals)
    code = _ops.EXIT_FINDINGS if found.no_answer else _ops.EXIT_OK
    if args.json:
        _ops.emit_json(found.to_json())
        return code
    _ops.print_settings(deployment)
    _print(found.to_json())
    return code


# Why an answer was refused (docs/search-api.md#when-it-refuses), as an operator reads it.
REFUSALS = {
    "no_passage": "no readable file holds a passage with the question's words or near its meaning",
    "not_near_enough": "no readable file holds a passage near enough to the question",
    "kind_not_found": "the nearest readable file does not hold the kind of answer asked for (an amount, a date …)",
    "focus_not_found": "the readable files name the question's subject, but none holds what was asked about",
    "flagged_file": "only a file flagged for instructions aimed at an AI assistant holds an answer (docindex failures)",
    "model_refused": "the model found no answer in the passages it was given",
    "no_valid_citation": "the model's answer cited nothing it was given",
}


def _print(body: dict[str, Any]) -> None:
    if body["no_answer"]:
        reason = str(body.get("reason") or "not_near_enough")
        print(f"no answer ({reason}): {REFUSALS.get(reason, REFUSALS['not_near_enough'])}")
        return
    print(_ops.safe_text(body["answer"]))
    for number, citation in enumerate(body["citations"], 1):
        label = citation.get("label") or f"p. {citation['page']}"
        print(_ops.safe_text(f"  [{number}] {citation['path']}  {label}"))
        print(_ops.safe_text(f"      「{citation['quote']}」"))
    print(f"  (answered by: {body['answered_by']})")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="answer a question from the indexed files, citing file and page",
        description=(
            "Answer a question from the indexed files: the answer, then each file and page it comes from with the "
            "quote (ANSWERS: extractive quotes the sentences that answer; bedrock has Amazon Bedrock write it, "
            "citing the passages). Refuses when no passage is near enough. An administrator's tool: it reads the "
            "whole index unless --group/--user name whose permissions to apply. "
            "Exit code: 0 answered, 1 refused, 2 error."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex ask 年末年始はいつから休み？\n"
            "  docindex ask '出張の日当はいくら？' --prefix 総務部/ --json\n"
            "  docindex ask '育児休業は何か月？' --group 営業部   # what a 営業部 employee would be told"
        ),
    )
    parser.add_argument("question", help="the question, as an employee would type it (at most 256 characters)")
    parser.add_argument("--prefix", help="only files under this folder")
    parser.add_argument(
        "--group",
        action="append",
        metavar="NAME",
        help="answer as a member of this group (repeatable): the access map applies",
    )
    parser.add_argument("--user", metavar="SUB", help="answer as this user (the token's sub): the access map applies")
    _ops.add_index_options(parser, settings="ANSWERS, ")
    parser.add_argument("--json", action="store_true", help="print the answer as the API's JSON")
    parser.set_defaults(func=_ask)
