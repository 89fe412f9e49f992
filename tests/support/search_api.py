"""A signed-in search world for the API and page tests: indexed files in two departments, two users.

Real parts only: files indexed by the real indexer with an access map file,
users in moto's Cognito with real RS256 tokens, tokens verified against moto's
JWKS as API Gateway's authorizer would, and the search function's resolver
called with HTTP API payload 2.0 events.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from devkit.local.gateway import http_api_event
from devkit.local.signin import JwtVerifier, ensure_user, provision_user_pool, sign_in
from devkit.messages import sqs_event
from docindex.core.changes import doc_id
from tests.conftest import REGION, Aws, Stack, shared_stack
from tests.integration.conftest import build_indexer, invoke

if TYPE_CHECKING:
    from docindex.worker.pool import OcrPool
    from tests.support.worker import WorkerFactory

PASSWORD = "Passw0rd!local"  # nosec B105  # a moto user, never a real secret

FILES = {
    "営業部/見積/2024_見積書_A社.txt": "A社向け 見積書 売上 見込み 四半期",
    "営業部/提案/提案書_B社.md": "B社への提案 売上 拡大 施策",
    "人事部/評価/2024_人事評価_山田.txt": "人事評価 山田 売上 貢献 昇給",
    "人事部/給与/給与テーブル.csv": "等級,基本給\n1,250000\n売上連動,あり",
    "共有/規程/就業規則.txt": "就業規則 全社員 売上 とは関係ない",
}

JST = timezone(timedelta(hours=9), "JST")
# When each of FILES was last modified on the file server (uploaded with it as DataSync writes it: file-mtime).
# The estimate was saved on 2024/10/01 before 9:00 in Japan: 2024-09-30 in UTC; the proposal on New Year's
# morning 2020 in Japan: still 2019 in UTC.
FILE_DATES = {
    "営業部/見積/2024_見積書_A社.txt": datetime(2024, 10, 1, 8, 30, tzinfo=JST),
    "営業部/提案/提案書_B社.md": datetime(2020, 1, 1, 7, 50, tzinfo=JST),
    "人事部/評価/2024_人事評価_山田.txt": datetime(2025, 2, 10, 10, 0, tzinfo=JST),
    "人事部/給与/給与テーブル.csv": datetime(2016, 4, 1, 9, 0, tzinfo=JST),
    "共有/規程/就業規則.txt": datetime(2021, 4, 1, 10, 0, tzinfo=JST),
}

ACCESS_MAP = {
    "rules": [
        {"prefix": "営業部/", "allow": {"groups": ["営業部"]}},
        {"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部"]}},
        {"prefix": "共有/", "allow": {"everyone": True}},
    ]
}


@dataclass
class SearchWorld:
    stack: Stack
    cognito: Any
    pool_id: str
    client_id: str
    map_path: Path
    resolver: Any
    verifier: JwtVerifier
    tokens: dict[str, dict[str, str]] = field(default_factory=dict)
    subs: dict[str, str] = field(default_factory=dict)
    # The answers' service behind GET /answer (None when ANSWERS=off).
    answers: Any = None

    def resolver_answers(self) -> Any:
        assert self.answers is not None, "ANSWERS=off: no answers' service"
        return self.answers

    def add_user(self, name: str, groups: list[str]) -> str:
        self.subs[name] = ensure_user(self.cognito, self.pool_id, name, PASSWORD, groups)
        self.tokens[name] = sign_in(self.cognito, self.pool_id, self.client_id, name, PASSWORD)
        return self.tokens[name]["access_token"]

    def call(self, path: str, token: str | None, **params: Any) -> tuple[int, Any]:
        """What API Gateway + the function answer: 401 for a token the authorizer refuses."""
        claims = None
        if token is not None:
            from devkit.local.signin import TokenRejected

            try:
                claims = self.verifier.verify(token)
            except TokenRejected:
                return 401, {"message": "Unauthorized"}
        event = http_api_event("GET", path, urlencode(params), {"host": "localhost"}, claims)
        from devkit.local.context import LocalLambdaContext

        response = self.resolver.resolve(event, LocalLambdaContext(timeout_seconds=10))
        body = response.get("body") or ""
        try:
            return int(response["statusCode"]), json.loads(body)
        except ValueError:
            return int(response["statusCode"]), body

    def search(self, user: str, **params: Any) -> dict[str, Any]:
        status, body = self.call("/search", self.tokens[user]["access_token"], **params)
        assert status == 200, body
        return dict(body)

    def index_files(
        self,
        files: Mapping[str, str | bytes],
        *,
        map_uri: str | None = None,
        dates: Mapping[str, datetime] | None = None,
    ) -> None:
        """Put and index ``files`` (key -> text or bytes), stamped with the map at ``map_uri`` (default:
        ``map_path``); ``dates``: each key's modification time on the file server, put as DataSync does
        (``file-mtime``)."""
        from docindex.core.filedates import datasync_metadata

        indexer = build_indexer(self.stack, ACCESS_MAP_URI=map_uri or str(self.map_path), ACCESS_MAP_TTL_SECONDS="0")
        bodies = []
        for key, text in files.items():
            body = text.encode() if isinstance(text, str) else text
            metadata = datasync_metadata(dates[key]) if dates and key in dates else {}
            self.stack.aws.s3.put_object(Bucket=self.stack.bucket, Key=key, Body=body, Metadata=metadata)
            bodies.append({"docindex": "change", "bucket": self.stack.bucket, "key": key, "action": "created"})
        assert invoke(indexer, sqs_event(*bodies), timeout=120) == set()
        self.stack.opensearch.indices.refresh(index=self.stack.index)

    def id_of(self, key: str) -> str:
        return doc_id(self.stack.bucket, key)


def build_world(
    stack: Stack, tmp_path: Path, cognito: Any, *, answerer: Any = None, **settings_env: str
) -> SearchWorld:
    """The search function's resolver on ``stack`` (``settings_env``: settings over the stack's), users in ``cognito``;
    ``answerer``: the answers' answerer instead of the one ``ANSWERS`` names (an instrumented one)."""
    from docindex.embed.settings import embedder_for
    from docindex.search_api.routes import answer_service, build_resolver
    from docindex.search_api.service import SearchService
    from docindex.search_api.settings import SearchApiSettings

    env = provision_user_pool(cognito, prefix=f"t{uuid.uuid4().hex[:8]}", admin_group="docindex-admins", region=REGION)
    map_path = tmp_path / "access-map.json"
    map_path.write_text(json.dumps(ACCESS_MAP, ensure_ascii=False))
    settings = SearchApiSettings.from_env(stack.settings_env(**settings_env))
    # The configured embedder, as the deployed function builds it (None where the stack has EMBEDDINGS=off).
    service = SearchService(settings, opensearch=stack.opensearch, s3=stack.aws.s3, embedder=embedder_for(settings))
    answers = answer_service(settings, service, bedrock_client=lambda: stack.aws.client("bedrock-runtime"))
    if answers is not None and answerer is not None:
        answers.answerer = answerer
    verifier = JwtVerifier(
        jwks_url=f"{stack.aws.endpoint}/{env['COGNITO_USER_POOL_ID']}/.well-known/jwks.json",
        issuer=env["OIDC_ISSUER"],
        audience=env["COGNITO_CLIENT_ID"],
    )
    return SearchWorld(
        stack=stack,
        cognito=cognito,
        pool_id=env["COGNITO_USER_POOL_ID"],
        client_id=env["COGNITO_CLIENT_ID"],
        map_path=map_path,
        resolver=build_resolver(settings, service, answers),
        verifier=verifier,
        answers=answers,
    )


@contextmanager
def meaning_world(
    tmp: Path,
    moto_endpoint: str,
    search_engine: Any,
    ocr_pool: Any,
    files: Mapping[str, str | bytes],
    access: dict[str, Any],
    users: dict[str, list[str]],
    **env: str,
) -> Iterator[tuple[SearchWorld, Stack, Any]]:
    """A search world with meaning search: a space of its own on the engine (on the emulator, a clone behind the
    HNSW k-NN stand-in), a stack with ``EMBEDDINGS=local``, ``files`` indexed by the real indexer under
    ``access`` and embedded by the real worker, and ``users`` (name -> groups) signed in. Yields the world,
    the stack and the space."""
    import boto3
    from opensearchpy import OpenSearch

    from devkit.local.stack import StackNames, StackOptions, provision
    from tests.conftest import Aws
    from tests.support.worker import worker_factory

    aws = Aws(moto_endpoint)
    space = search_engine.clone()
    try:
        opensearch = OpenSearch(hosts=[space.url], timeout=60)
        names = StackNames(f"t{uuid.uuid4().hex[:10]}")
        stack_env = provision(
            s3=aws.s3,
            sqs=aws.sqs,
            dynamodb=aws.dynamodb,
            opensearch=opensearch,
            names=names,
            options=StackOptions(embeddings="local", vector_encoding=search_engine.vector_encoding),
            region=REGION,
        )
        stack = Stack(aws, opensearch, space.url, stack_env)
        cognito = boto3.client("cognito-idp", region_name=REGION, endpoint_url=moto_endpoint)
        found = build_world(stack, tmp, cognito, **env)
        found.map_path.write_text(json.dumps(access, ensure_ascii=False))
        for name, groups in users.items():
            found.add_user(name, groups)
        # the files indexed by the real indexer (searchable by their words at once) ...
        found.index_files(files)
        # ... and the embed jobs it queued run by the real worker
        with worker_factory(ocr_pool) as make:
            drain(make(stack, ACCESS_MAP_URI=str(found.map_path), ACCESS_MAP_TTL_SECONDS="0"), stack)
        yield found, stack, space
    finally:
        space.close()


def drain(worker: Any, stack: Stack) -> None:
    """Run ``worker`` until the OCR (and embed) queue is empty."""
    from tests.support.worker import ocr_queue_depth

    for _ in range(30):
        if not worker.poll_once(wait_seconds=1) and ocr_queue_depth(stack) == {"visible": 0, "in_flight": 0}:
            return
    raise AssertionError(f"the OCR queue did not drain: {ocr_queue_depth(stack)}")


@contextmanager
def shared_world(
    aws: Aws, search_engine: Any, ocr_pool: OcrPool, directory: Path
) -> Iterator[tuple[SearchWorld, WorkerFactory]]:
    """A world on a stack of its own (``shared_stack``) for a module-scoped fixture: the sales and hr
    users signed in, and a factory of OCR workers on ``ocr_pool`` that stamp with the access map."""
    import boto3

    from tests.support.worker import worker_factory

    with shared_stack(aws, search_engine) as stack, worker_factory(ocr_pool) as make_worker:
        cognito = boto3.client("cognito-idp", region_name=REGION, endpoint_url=stack.aws.endpoint)
        world = build_world(stack, directory, cognito)
        world.add_user("sales", ["営業部"])
        world.add_user("hr", ["人事部"])
        yield world, make_worker


def put_and_index(world: SearchWorld, files: dict[str, bytes], **access: str) -> None:
    """Put ``files`` in the bucket and index them in one batch, stamped with the access map ``access`` names."""
    stack = world.stack
    bodies = []
    for key, body in files.items():
        stack.aws.s3.put_object(Bucket=stack.bucket, Key=key, Body=body)
        bodies.append({"docindex": "change", "bucket": stack.bucket, "key": key, "action": "created"})
    assert invoke(build_indexer(stack, **access), sqs_event(*bodies), timeout=120) == set()
    stack.opensearch.indices.refresh(index=stack.index)
