"""``docindex demo``: the whole pipeline locally on sample documents, then search it."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from docindex.cli.local import DEFAULT_STATE_DIR, local_session

# Japanese and English queries over the sample corpus (devkit.samples.sample_corpus).
DEMO_QUERIES = (
    *("四半期 売上", "議事録", "見積書", "髙橋", "kuromoji", "quarterly revenue", "請求書", "契約書"),
    # spelling variants: typed 高橋 and 山崎, the files write 髙橋 and 山﨑 (docs/search.md#spelling-variants)
    *("高橋 評価", "山崎"),
    # found inside a Word 97-2003 file, a zip's members and an Outlook message
    *("会議室用プロジェクター", "第二会議室", "格式測試"),
    # in a page scanned sideways, a fax (200 x 100 dpi) and a notice written vertically
    *("健康診断", "物流倉庫", "非常階段"),
    # on the second page of the quarterly report: the hit names the page
    "福岡県",
    # by meaning: no word of it is in the notice of the year-end holidays (docs/meaning-search.md)
    "お正月は会社が何日から休みになる？",
)
# Found by their names or their folders' names (docindex search --names): 見積書 only in the file named
# so, not in the visit report whose text mentions it; 横向き is in a scan's name, never in its text.
DEMO_NAME_QUERIES = ("見積書", "横向き", "会議議事録")
# The demo's bucket is a copy of one share of a file server: each hit shows its path there.
DEMO_SHARE = "\\\\fileserver\\文書"
DEMO_SHARES = f"={DEMO_SHARE}"
DUPLICATES = 3
# Who may read what in the demo (docs/search-api.md): everything is shared except two departments'
# folders, and two employees of those departments sign in to the search page.
DEMO_ACCESS_MAP = {
    "rules": [
        {"prefix": "", "allow": {"everyone": True}},
        {"prefix": "営業部/", "inherit": False, "allow": {"groups": ["営業部"]}},
        {"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部"]}},
    ]
}
DEMO_USERS = {"eigyo": "営業部", "jinji": "人事部"}
DEMO_PASSWORD = "Demo-Passw0rd!"  # noqa: S105  # nosec B105 - a local emulator user pool, never AWS
EMPLOYEE_QUERY = "髙橋"


# A file the demo cannot read: indexed by name with extraction_error encrypted, listed by `docindex failures`.
DEMO_UNREADABLE = "総務部/古い文書/パスワード付き 議事録.pdf"


# The unreadable file's own date on the file server: an old one.
DEMO_UNREADABLE_DATE = (2011, 6, 30, 16, 20)


def _upload(env: dict[str, str]) -> int:
    """The samples, each with its own modification time as DataSync uploads a file server's files
    (``file-mtime`` user metadata): the search page shows, sorts and filters by those dates."""
    from datetime import datetime

    import boto3

    from devkit.samples import make_encrypted_pdf, sample_corpus
    from devkit.samples.corpus import JST, sample_dates
    from docindex.core.filedates import datasync_metadata

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"])
    corpus = [*sample_corpus(), (DEMO_UNREADABLE, make_encrypted_pdf(["議事録 (パスワード付き)"]))]
    dates = {**sample_dates(), DEMO_UNREADABLE: datetime(*DEMO_UNREADABLE_DATE, tzinfo=JST)}
    for key, data in corpus:
        metadata = datasync_metadata(dates[key]) if key in dates else {}
        s3.put_object(Bucket=env["DOCINDEX_BUCKET"], Key=key, Body=data, Metadata=metadata)
    return len(corpus)


def _fresh_index(env: dict[str, str]) -> bool:
    """Start the demo's index afresh when the emulated bucket is new but the node kept the last demo's index.

    moto keeps the bucket and the ledger in memory (gone after ``docindex local down``), the OpenSearch node
    keeps its index on disk: the index would hold the last run's documents at versions the new ledger has
    not handed out yet. True when it was started again.
    """
    import boto3
    from opensearchpy import OpenSearch

    from docindex.index.mapping import ensure_index

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"])
    if s3.list_objects_v2(Bucket=env["DOCINDEX_BUCKET"], MaxKeys=1).get("KeyCount", 0):
        return False
    client = OpenSearch(hosts=[env["OPENSEARCH_ENDPOINT"]], timeout=30)
    index = env["OPENSEARCH_INDEX"]
    if not int(client.count(index=index).get("count", 0)):
        return False
    for concrete in client.indices.get_alias(name=index):
        client.indices.delete(index=concrete)
    from docindex.core.settings import EmbeddingSettings
    from docindex.embed.settings import vector_spec

    ensure_index(client, index, vectors=vector_spec(EmbeddingSettings.from_env(env)))
    return True


def _redeliver(env: dict[str, str], count: int) -> int:
    """Send copies of the first notifications again: what at-least-once delivery and redrives do."""
    import boto3

    sqs = boto3.client("sqs", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"])
    deadline = time.monotonic() + 10
    seen: list[dict[str, Any]] = []
    while len(seen) < count and time.monotonic() < deadline:
        got = sqs.receive_message(QueueUrl=env["INGEST_QUEUE_URL"], MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in got.get("Messages", []):
            sqs.change_message_visibility(
                QueueUrl=env["INGEST_QUEUE_URL"], ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
            if json.loads(message["Body"]).get("Records") and len(seen) < count:
                seen.append(message)
    for message in seen:
        sqs.send_message(QueueUrl=env["INGEST_QUEUE_URL"], MessageBody=message["Body"])
    return len(seen)


def _index_summary(env: dict[str, str]) -> dict[str, Any]:
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[env["OPENSEARCH_ENDPOINT"]], timeout=30)
    client.indices.refresh(index=env["OPENSEARCH_INDEX"])
    body = {
        "size": 0,
        "aggs": {
            "ocr": {"terms": {"field": "ocr_status"}},
            "errors": {"terms": {"field": "extraction_error"}},
        },
    }
    result = client.search(index=env["OPENSEARCH_INDEX"], body=body)
    return {
        "documents": result["hits"]["total"]["value"],
        "ocr_status": {b["key"]: b["doc_count"] for b in result["aggregations"]["ocr"]["buckets"]},
        "extraction_errors": {b["key"]: b["doc_count"] for b in result["aggregations"]["errors"]["buckets"]},
    }


def _employees(env: dict[str, str], env_file: Path, state_dir: Path) -> None:
    """The access map every write is stamped with, and two employees in the local user pool."""
    import boto3

    from devkit.local.signin import ensure_user
    from docindex.ops.envfile import write_env_file

    access_map = state_dir / "access-map.json"
    access_map.write_text(json.dumps(DEMO_ACCESS_MAP, ensure_ascii=False, indent=1), encoding="utf-8")
    env["ACCESS_MAP_URI"] = str(access_map.resolve())
    write_env_file(env_file, {k: v for k, v in env.items() if k != "SEARCH_PAGE_URL"})
    cognito = boto3.client("cognito-idp", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"])
    for user, group in DEMO_USERS.items():
        ensure_user(cognito, env["COGNITO_USER_POOL_ID"], user, DEMO_PASSWORD, [group])


def _employee_search(env: dict[str, str]) -> None:
    """The same query through the search API as each employee: the access map decides what they see."""
    import urllib.parse
    import urllib.request

    import boto3

    from devkit.local.signin import sign_in

    page = env["SEARCH_PAGE_URL"]
    cognito = boto3.client("cognito-idp", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"])
    print(f"6. Employees search through the search API (access map: {env['ACCESS_MAP_URI']})")
    for user, group in DEMO_USERS.items():
        token = sign_in(cognito, env["COGNITO_USER_POOL_ID"], env["COGNITO_CLIENT_ID"], user, DEMO_PASSWORD)
        request = urllib.request.Request(  # noqa: S310  # the local gateway, http://127.0.0.1
            f"{page}search?{urllib.parse.urlencode({'q': EMPLOYEE_QUERY})}",
            headers={"Authorization": f"Bearer {token['access_token']}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310  # nosec B310
            result = json.loads(response.read())
        print(f"\n   {user} ({group}) searches {EMPLOYEE_QUERY!r}: {result['total']} documents")
        for hit in result["hits"]:
            print(f"     {hit['path']}")
            if hit.get("location"):
                print(f"       {hit['location']['path']}")
    print(f"\n   Search page: {page}  (sign in as {' or '.join(DEMO_USERS)}, password {DEMO_PASSWORD}; local only)")


# Questions the demo asks through GET /answer (docs/search-api.md#answers): two the samples answer, one none
# does, and one each employee is answered from their own department's file (or refused).
DEMO_QUESTIONS = (
    "年末年始はいつから休み？",
    "次回の定例会議はいつ？",
    "ノートPCの単価はいくら？",
    "健康診断はいつ？",
    # a file names the subject (the signed contract) without answering: refused, saying why
    "契約書の契約期間は？",
    "株主総会の議決権行使の方法は？",
)
EMPLOYEE_QUESTION = "髙橋さんの人事評価は？"


def _answer_via_api(page: str, token: str, question: str) -> dict[str, Any]:
    import urllib.parse
    import urllib.request

    request = urllib.request.Request(  # noqa: S310  # the local gateway, http://127.0.0.1
        f"{page}answer?{urllib.parse.urlencode({'q': question})}", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310  # nosec B310
        return dict(json.loads(response.read()))


def _print_answer(body: dict[str, Any]) -> None:
    if body["no_answer"]:
        from docindex.cli.ask import REFUSALS

        reason = str(body.get("reason") or "not_near_enough")
        print(f"     (no answer ({reason}): {REFUSALS.get(reason, REFUSALS['not_near_enough'])})")
        return
    print(f"     answer: {' '.join(str(body['answer']).split())}")
    for citation in body["citations"]:
        label = citation.get("label") or f"p. {citation['page']}"
        print(f"       [{citation['path']} {label}] 「{' '.join(citation['quote'].split())}」")


def _employee_answers(env: dict[str, str]) -> None:
    """Questions through the answers API as each employee: answers quote only files they may read."""
    import boto3

    from devkit.local.signin import sign_in

    page = env["SEARCH_PAGE_URL"]
    cognito = boto3.client("cognito-idp", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"])
    tokens = {
        user: sign_in(cognito, env["COGNITO_USER_POOL_ID"], env["COGNITO_CLIENT_ID"], user, DEMO_PASSWORD)
        for user in DEMO_USERS
    }
    print(
        f"7. Employees ask questions through the answers API (GET /answer, ANSWERS={env.get('ANSWERS', 'extractive')})"
    )
    first = next(iter(DEMO_USERS))
    for question in DEMO_QUESTIONS:
        print(f"\n   {first} asks {question!r}")
        _print_answer(_answer_via_api(page, tokens[first]["access_token"], question))
    for user, group in DEMO_USERS.items():
        print(f"\n   {user} ({group}) asks {EMPLOYEE_QUESTION!r}")
        _print_answer(_answer_via_api(page, tokens[user]["access_token"], EMPLOYEE_QUESTION))


def _bedrock_answer(env: dict[str, str]) -> None:
    """The same question with ANSWERS=bedrock: the real request builder, boto3 client and response reader against
    the dev kit's Converse stand-in (it validates each request against botocore's service model)."""
    import boto3

    from devkit.local.converse import ConverseStandIn
    from docindex.answer.bedrock import BedrockAnswerer
    from docindex.answer.models import AnswerRequest
    from docindex.answer.refusal import AnswerRule
    from docindex.answer.service import AnswerService
    from docindex.answer.settings import AnswerSettings
    from docindex.core.clients import opensearch_client
    from docindex.core.settings import Settings
    from docindex.index.search import default_embedder, default_rule
    from docindex.search_api.principals import Caller

    settings = AnswerSettings.from_env({**env, "ANSWERS": "bedrock", "ANSWER_CACHE_SECONDS": "0"})
    indexed = Settings.from_env(env)
    question = DEMO_QUESTIONS[0]
    with ConverseStandIn() as stand_in:
        client = boto3.client("bedrock-runtime", endpoint_url=stand_in.url, region_name=env["AWS_REGION"])
        answerer = BedrockAnswerer(
            client,
            settings.answer_model,
            rule=AnswerRule.from_settings(settings),
            passages=settings.answer_passages,
            max_tokens=settings.answer_max_tokens,
        )
        service = AnswerService(
            settings,
            opensearch=opensearch_client(indexed),
            index=indexed.opensearch_index,
            embedder=default_embedder(),
            meaning_rule=default_rule(),
            answerer=answerer,
        )
        user, group = next(iter(DEMO_USERS.items()))
        found = service.answer(AnswerRequest(q=question), Caller(sub=user, groups=(group,)).principals)
    print(
        f"\n   {user} asks {question!r} with ANSWERS=bedrock (the dev kit's Converse stand-in, {settings.answer_model})"
    )
    _print_answer(found.to_json())
    print(f"     ({found.usage.get('requests', 0)} request, {found.usage.get('input_tokens', 0)} input tokens)")


def _search_samples(env: dict[str, str], queries: list[str]) -> None:
    """Step 5: the queries (default: by content, then by name), each hit with its path on the file server."""
    from docindex.access.shares import parse_shares
    from docindex.core.clients import opensearch_client
    from docindex.core.settings import Settings
    from docindex.index.search import search

    shares = parse_shares(DEMO_SHARES)
    settings = Settings.from_env(env)
    client = opensearch_client(settings)
    print(f"5. Search (the bucket is a copy of the share {DEMO_SHARE}: each hit shows its path there)")
    searches = [(query, False) for query in queries or DEMO_QUERIES]
    searches += [(query, True) for query in ([] if queries else DEMO_NAME_QUERIES)]
    for query, names in searches:
        hits = search(client, settings.opensearch_index, query, size=3, names=names)
        print(f"\n   $ docindex search {'--names ' if names else ''}{query!r}")
        if not hits:
            print("     (no file contains it, and none is near enough in meaning)")
        else:
            more = f", {hits.by_meaning} more found by meaning" if hits.by_meaning else ""
            print(f"     ({hits.total} containing it{more})")
        for hit in hits:
            status = "" if hit.get("ocr_status") in (None, "none", "done") else f"  [ocr {hit['ocr_status']}]"
            meaning = "  [by meaning]" if hit.get("found_by") == "meaning" else ""
            print(f"     {str(hit.get('last_modified') or '')[:10]}  {hit['key']}{status}{meaning}")
            location = shares.locate(hit.get("bucket"), str(hit.get("key")))
            if location:
                print(f"       {location.path}")
            if hit.get("snippet"):
                print(f"       … {' '.join(hit['snippet'].split())[:110]} …")
            for page in hit.get("pages") or []:
                print(f"       {page['label']}: {' '.join(page['snippet'].split())[:100]}")


def _demo(args: argparse.Namespace) -> int:
    session = local_session()
    print(
        "1. Starting the local stack: moto server (S3, SQS, DynamoDB) + an OpenSearch 2.19 node (k-NN, kuromoji, ICU)"
    )
    env = session.local_up(state_dir=args.state_dir, serve_api=True, file_server_shares=DEMO_SHARES)
    from docindex.ops.envfile import apply_env_file

    # The demo's own S3/SQS clients use the same endpoint and credentials as the handlers.
    apply_env_file(session.default_env_file(args.state_dir))
    if _fresh_index(env):
        print("   (the node still held the last demo's index, the emulated bucket is new: index started afresh)")
    _employees(env, session.default_env_file(args.state_dir), args.state_dir)
    print(f"   bucket s3://{env['DOCINDEX_BUCKET']} → {env['INGEST_QUEUE_URL']}")
    uploaded = _upload(env)
    print(
        f"2. Uploaded {uploaded} sample documents (PDF, DOCX, XLSX, PPTX, HTML, CP932 text, CSV, scans: "
        "one sideways, a fax, a vertical notice; a password-protected PDF), each with its modification time "
        "on the file server (2009-2026) as DataSync writes it (file-mtime metadata)"
    )
    copies = _redeliver(env, DUPLICATES)
    print(f"   ...and delivered {copies} of their notifications a second time (as SQS and redrives may)")
    print("3. Running the indexer and the OCR worker until the queues drain")
    stats = session.run_local(session.default_env_file(args.state_dir), once=True, max_seconds=args.max_seconds)
    metrics = dict(sorted(stats.metrics.items()))
    print(
        f"   {stats.records} messages in {stats.batches} batches, {stats.failures} failed, "
        f"{stats.seconds:.1f} s" + ("" if stats.drained else " (not drained: stopped at --max-seconds)")
    )
    for name, value in metrics.items():
        print(f"   {name:<22} {value:g}")
    summary = _index_summary(env)
    print(f"4. Index {env['OPENSEARCH_INDEX']}: {summary['documents']} documents, ocr_status {summary['ocr_status']}")
    if summary["extraction_errors"]:
        print(
            f"   Indexed by name only: {summary['extraction_errors']} (`docindex failures` lists them, each with "
            "the command that retries it)"
        )
    if summary["ocr_status"].get("pending"):
        print(
            "   Scans and images wait with ocr_status=pending for the OCR worker; they are already "
            "findable by file name."
        )
    _search_samples(env, args.queries)
    _employee_search(env)
    _employee_answers(env)
    _bedrock_answer(env)
    if args.stop:
        for info in session.local_down(args.state_dir):
            print(f"stopped {info.name} ({info.url})")
    else:
        print(
            f"\nThe servers keep running: try `.venv/bin/docindex search 東京都`; "
            f"stop them with `.venv/bin/docindex local down` (state in {args.state_dir})."
        )
    ok = stats.drained and stats.failures == 0
    return 0 if ok else 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("demo", help="index the sample documents locally and search them")
    parser.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR)
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument("--stop", action="store_true", help="stop the local servers at the end")
    parser.add_argument("queries", nargs="*", help="queries to run (default: a Japanese and English set)")
    parser.set_defaults(func=_demo)
