"""Index creation and search over real HTTP: kuromoji, width normalization, fallback, SigV4."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opensearchpy import OpenSearch

from docindex.index.mapping import ensure_index
from docindex.index.search import search


def test_index_is_created_behind_an_alias_with_kuromoji(opensearch: Any) -> None:
    # the node has kuromoji and analysis-icu: the production tier
    concrete = ensure_index(opensearch, "docs")
    assert concrete == "docs-v1"
    assert opensearch.indices.get_alias(name="docs") == {"docs-v1": {"aliases": {"docs": {"is_write_index": True}}}}
    analysis = opensearch.indices.get_settings(index="docs-v1")["docs-v1"]["settings"]["index"]["analysis"]
    assert analysis["tokenizer"]["docindex_ja"]["type"] == "kuromoji_tokenizer"
    # a second call finds it
    assert ensure_index(opensearch, "docs") == "docs"


def test_width_normalization_and_filename_fragments(opensearch: Any) -> None:
    ensure_index(opensearch, "docs")
    docs = [
        # half-width katakana and full-width letters in the content
        ("1", {"key": "a/price.pdf", "filename": "price.pdf", "content": "ｶﾀｶﾅ ＡＢＣ商事 御中", "bucket": "b"}),
        ("2", {"key": "b/議事録_営業会議.docx", "filename": "議事録_営業会議.docx", "content": "本文", "bucket": "b"}),
    ]
    for doc_id, body in docs:
        opensearch.index(index="docs", id=doc_id, body=body)
    opensearch.indices.refresh(index="docs")
    assert [h["key"] for h in search(opensearch, "docs", "カタカナ")] == ["a/price.pdf"]
    assert [h["key"] for h in search(opensearch, "docs", "abc")] == ["a/price.pdf"]
    assert [h["key"] for h in search(opensearch, "docs", "営業会")] == ["b/議事録_営業会議.docx"]
    assert [h["key"] for h in search(opensearch, "docs", "営業会", extension="pdf")] == []
    assert [h["key"] for h in search(opensearch, "docs", "本文", prefix="b/")] == ["b/議事録_営業会議.docx"]


class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, str]]
    refuse_kuromoji = False
    refuse_icu = True

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.seen.append(dict(self.headers.items()))
        self._reply(200, b'{"version": {"number": "2.19.0", "distribution": "opensearch"}}')

    def do_HEAD(self) -> None:
        self.seen.append(dict(self.headers.items()))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_PUT(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append({**dict(self.headers.items()), "body": body.decode()})
        if self.refuse_icu and b"icu_normalizer" in body:
            self._reply(
                400,
                b'{"error": {"type": "illegal_argument_exception", "reason": '
                b'"Unknown char_filter type [icu_normalizer] for [docindex_text]"}, "status": 400}',
            )
        elif self.refuse_kuromoji and b"kuromoji" in body:
            self._reply(
                400,
                b'{"error": {"type": "illegal_argument_exception", "reason": '
                b'"Unknown tokenizer type [kuromoji_tokenizer] for [docindex_ja]"}, "status": 400}',
            )
        else:
            self._reply(200, b'{"acknowledged": true}')


@pytest.fixture
def recorder() -> Iterator[tuple[str, type[_Recorder]]]:
    handler = type("Recorder", (_Recorder,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()


def test_cluster_with_icu_normalizes_before_tokenizing(recorder) -> None:
    url, handler = recorder
    handler.refuse_icu = False
    ensure_index(OpenSearch(hosts=[url]), "docs")
    creates = [json.loads(r["body"]) for r in handler.seen if "body" in r]
    assert len(creates) == 1
    analyzer = creates[0]["settings"]["index"]["analysis"]["analyzer"]["docindex_text"]
    assert analyzer["char_filter"] == ["docindex_width", "icu_normalizer"]
    assert analyzer["tokenizer"] == "docindex_ja"


def test_cluster_without_kuromoji_gets_cjk_bigrams(recorder) -> None:
    url, handler = recorder
    handler.refuse_kuromoji = True
    ensure_index(OpenSearch(hosts=[url]), "docs")
    creates = [r["body"] for r in handler.seen if "body" in r]
    assert len(creates) == 3
    assert "icu_normalizer" in creates[0]
    assert "kuromoji" in creates[1]
    assert "icu_normalizer" not in creates[1]
    assert "cjk_bigram" in creates[2]
    assert "kuromoji" not in creates[2]


@pytest.mark.parametrize("service", ["es", "aoss"])
def test_sigv4_signs_for_the_configured_service(recorder, service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from docindex.core.clients import opensearch_client
    from docindex.core.settings import Settings

    url, handler = recorder
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    settings = Settings.from_env(
        {
            "OPENSEARCH_ENDPOINT": url,
            "IDEMPOTENCY_TABLE": "t",
            "OPENSEARCH_SERVICE": service,
            "AWS_REGION": "ap-northeast-1",
        }
    )
    opensearch_client(settings).info()
    auth = handler.seen[-1]["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert f"/ap-northeast-1/{service}/aws4_request" in auth
    assert "x-amz-content-sha256" in {k.lower() for k in handler.seen[-1]}
