"""The search API with real tokens: a user sees, counts and downloads only what the access map lets them read."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REGION, Stack
from tests.support.search_api import FILES, SearchWorld, build_world


@pytest.fixture
def world(stack: Stack, tmp_path: Path) -> SearchWorld:
    import boto3

    cognito = boto3.client("cognito-idp", region_name=REGION, endpoint_url=stack.aws.endpoint)
    world = build_world(stack, tmp_path, cognito)
    world.add_user("sales", ["営業部"])
    world.add_user("hr", ["人事部"])
    world.add_user("admin", ["docindex-admins"])
    world.index_files(FILES)
    return world


def keys(result: dict[str, Any]) -> set[str]:
    return {hit["path"] for hit in result["hits"]}


def test_each_user_sees_only_their_departments_files_and_the_shared_ones(world: SearchWorld) -> None:
    # When both search the same word
    sales = world.search("sales", q="売上")
    hr = world.search("hr", q="売上")
    # Then each gets their own department's files and the shared one, nothing of the other department
    assert keys(sales) == {"営業部/見積/2024_見積書_A社.txt", "営業部/提案/提案書_B社.md", "共有/規程/就業規則.txt"}
    assert keys(hr) == {"人事部/評価/2024_人事評価_山田.txt", "人事部/給与/給与テーブル.csv", "共有/規程/就業規則.txt"}
    assert sales["total"] == 3
    assert hr["total"] == 3
    # and the facet counts know nothing of the other department either
    assert {f["value"] for f in sales["facets"]["folder"]} == {"営業部/", "共有/"}
    assert sum(f["count"] for f in sales["facets"]["extension"]) == 3
    assert {f["value"]: f["count"] for f in sales["facets"]["extension"]} == {"txt": 2, "md": 1}
    # an administrator sees everything
    assert world.search("admin", q="売上")["total"] == len(FILES)


def test_a_query_for_the_other_departments_words_finds_nothing(world: SearchWorld) -> None:
    result = world.search("sales", q="人事評価 山田")
    assert result["total"] == 0
    assert result["hits"] == []
    assert result["facets"]["extension"] == []
    assert result["facets"]["folder"] == []
    # even a filter on the other department's folder
    assert world.search("sales", prefix="人事部/")["total"] == 0


def test_metadata_and_download_of_a_forbidden_file_are_404_like_a_missing_one(world: SearchWorld) -> None:
    sales_token = world.tokens["sales"]["access_token"]
    hr_file = world.id_of("人事部/評価/2024_人事評価_山田.txt")
    missing = "0" * 64
    for path in (f"/documents/{hr_file}", f"/documents/{hr_file}/download"):
        forbidden = world.call(path, sales_token)
        absent = world.call(path.replace(hr_file, missing), sales_token)
        assert forbidden == absent == (404, {"message": "not found"})
    # the owner's department gets both
    hr_token = world.tokens["hr"]["access_token"]
    status, meta = world.call(f"/documents/{hr_file}", hr_token)
    assert status == 200
    assert meta["path"] == "人事部/評価/2024_人事評価_山田.txt"
    assert "content" not in meta
    status, link = world.call(f"/documents/{hr_file}/download", hr_token)
    assert status == 200
    with urllib.request.urlopen(link["url"], timeout=10) as response:  # moto's presigned URL
        assert response.read().decode() == FILES["人事部/評価/2024_人事評価_山田.txt"]
    assert link["expires_in"] == 300


def test_hits_carry_name_path_size_date_and_a_highlighted_snippet(world: SearchWorld) -> None:
    hit = world.search("sales", q="見積書")["hits"][0]
    assert hit["filename"] == "2024_見積書_A社.txt"
    assert hit["folder"] == "営業部/見積/"
    assert hit["size"] == len(FILES["営業部/見積/2024_見積書_A社.txt"].encode())
    assert hit["modified"]
    assert {"text": "見積書", "match": True} in hit["snippet"]


def test_a_forged_or_expired_token_is_refused(world: SearchWorld) -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa
    from joserfc import jwt
    from joserfc.jwk import RSAKey

    real = world.tokens["sales"]["access_token"]
    claims = world.verifier.verify(real)
    # Forged: the same claims (any groups it likes) signed with another key
    other_key = RSAKey.import_key(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    forged = jwt.encode({"alg": "RS256", "kid": "dummy"}, {**claims, "cognito:groups": ["人事部"]}, other_key)
    assert world.call("/search", forged, q="売上") == (401, {"message": "Unauthorized"})
    # Tampered: the real token with its payload changed
    header, payload, signature = real.split(".")
    import base64

    changed = json.loads(base64.urlsafe_b64decode(payload + "=="))
    changed["cognito:groups"] = ["人事部"]
    tampered_payload = base64.urlsafe_b64encode(json.dumps(changed).encode()).rstrip(b"=").decode()
    assert world.call("/search", f"{header}.{tampered_payload}.{signature}", q="売上")[0] == 401
    # Expired: the real token, presented after its exp
    world.verifier.now = lambda: float(claims["exp"]) + 1
    assert world.call("/search", real, q="売上")[0] == 401
    world.verifier.now = time.time
    # No token at all
    assert world.call("/search", None, q="売上")[0] == 401
    assert world.call("/search", real, q="売上")[0] == 200


def test_user_input_cannot_reach_other_fields_or_unbounded_pages(world: SearchWorld) -> None:
    token = world.tokens["sales"]["access_token"]
    # field syntax is not syntax here: it is text, and finds nothing it should not
    status, body = world.call("/search", token, q="key:人事部* OR allow_principals:group\\:人事部")
    assert status == 200
    assert all(not h["path"].startswith("人事部/") for h in body["hits"])
    # bounds
    assert world.call("/search", token, q="売上", size=1000)[0] == 400
    assert world.call("/search", token, q="売上", page=100, size=50)[0] == 400
    assert world.call("/search", token, q="x" * 300)[0] == 400
    assert world.call("/search", token, modified_from="2025-01-02", modified_to="2025-01-01")[0] == 400


def test_a_map_change_takes_effect_after_apply(world: SearchWorld) -> None:
    from docindex.access.policy import parse_access_map
    from docindex.ingest.ledger import Ledger
    from docindex.ops.access import Restamper

    assert "営業部/提案/提案書_B社.md" in keys(world.search("sales", q="売上"))
    # Given a new map: 営業部/提案/ is now for 人事部 only, and the sales user is denied the shared folder
    new_map = {
        "rules": [
            {"prefix": "営業部/", "allow": {"groups": ["営業部"]}},
            {"prefix": "営業部/提案/", "inherit": False, "allow": {"groups": ["人事部"]}},
            {"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部"]}},
            {"prefix": "共有/", "allow": {"everyone": True}, "deny": {"users": [world.subs["sales"]]}},
        ]
    }
    access_map = parse_access_map(json.dumps(new_map), admin_group="docindex-admins")
    ledger = Ledger(world.stack.aws.dynamodb, world.stack.env["LEDGER_TABLE"])
    # When it is applied (re-stamped, no re-extraction)
    report = Restamper(world.stack.opensearch, world.stack.index, access_map, still_current=ledger.still_current).run()
    # Then the restrictive pass went first, and the result is what the new map says
    restrictive, final = report.passes
    assert restrictive.changed == 2  # 提案 loses 営業部; 共有 gains a deny
    assert final.changed == 1  # 提案 gains 人事部
    assert keys(world.search("sales", q="売上")) == {"営業部/見積/2024_見積書_A社.txt"}
    assert "営業部/提案/提案書_B社.md" in keys(world.search("hr", q="売上"))
    doc = world.stack.doc("営業部/提案/提案書_B社.md")
    assert doc is not None
    assert doc["_source"]["content"] == FILES["営業部/提案/提案書_B社.md"]  # content kept
    assert doc["_version"] == 1  # the external version (the ledger's generation) is untouched


def test_a_document_past_the_highlighters_million_characters_is_found_with_a_bounded_snippet(
    world: SearchWorld,
) -> None:
    # Given a shared log (under MAX_CONTENT_CHARS, 2,000,000: kept whole) whose one rare word is near the end,
    # beyond the 1,000,000 characters a cluster analyzes for highlighting by default (1,200,000 characters
    # show that as well as 2,000,000 and take the local engine's analyzers half the time)
    line = "東京都の売上は前年同期比で増加しました。会議議事録：次回の定例会議は来週の月曜日です。"
    filler = (line * (1_200_000 // len(line) + 1))[:1_190_000]
    world.index_files({"共有/ログ/巨大なログ.txt": filler + "最後の行にだけペンギン保守契約という語がある。"})
    assert world.stack.doc("共有/ログ/巨大なログ.txt")["_source"].get("content_truncated") is None
    # When a user searches that word through the API
    result = world.search("sales", q="ペンギン保守契約")
    # Then the file is found (the search did not fail on the document's length) with a short snippet:
    # the highlight is bounded by max_analyzer_offset, with the start of the text as a fallback
    assert keys(result) == {"共有/ログ/巨大なログ.txt"}
    snippet = "".join(part["text"] for part in result["hits"][0]["snippet"])
    assert 0 < len(snippet) <= 400


def test_documents_ocr_read_with_low_confidence_are_a_filter_and_a_facet_within_the_callers_rights(
    world: SearchWorld,
) -> None:
    # Given a file of each department OCR'd: 人事部's poorly (40), 営業部's well (92)
    stack = world.stack
    for key, confidence in (("人事部/評価/2024_人事評価_山田.txt", 40), ("営業部/見積/2024_見積書_A社.txt", 92)):
        current = stack.doc(key)
        assert current is not None
        source = {**current["_source"], "ocr_confidence": confidence, "ocr_page_reasons": ["image"]}
        stack.opensearch.index(
            index=stack.index,
            id=world.id_of(key),
            body=source,
            version=current["_version"] + 1,
            version_type="external_gte",
        )
    stack.opensearch.indices.refresh(index=stack.index)
    # When the administrator asks for documents read below 75
    admin = world.search("admin", q="売上", ocr_confidence_below=75)
    # Then only the poorly read one comes back, with its confidence, and the facet counts it
    assert keys(admin) == {"人事部/評価/2024_人事評価_山田.txt"}
    assert admin["hits"][0]["ocr_confidence"] == 40
    assert world.search("admin", q="売上")["facets"]["low_ocr_confidence"] == 1
    # And someone who may not read it neither finds nor counts it
    sales = world.search("sales", q="売上", ocr_confidence_below=75)
    assert sales["total"] == 0
    assert world.search("sales", q="売上")["facets"]["low_ocr_confidence"] == 0


def test_a_query_that_cannot_be_searched_says_why_and_what_to_do(world: SearchWorld) -> None:
    token = world.tokens["sales"]["access_token"]
    # Punctuation alone: nothing to search for, said with a reason the page puts in its own words
    for scope in ("content", "name"):
        status, body = world.call("/search", token, q="!!!", scope=scope)
        assert status == 400
        assert body["reason"] == "no_words"
        assert "letters or digits" in body["message"]
    # A word the index does not search (a particle): no file, and a notice saying so instead of silence
    world.index_files({"営業部/メモ/の字.txt": "これは の 字 の メモ"})
    found = world.search("sales", q="の")
    assert (found["total"], found["hits"]) == (0, [])
    assert found["notice"]["reason"] == "ignored_words"
    # ... and the file whose name holds it is found by name, as the notice suggests
    assert keys(world.search("sales", q="の", scope="name")) == {"営業部/メモ/の字.txt"}
    # a query that finds files, or finds none for want of files, has no notice
    assert world.search("sales", q="売上")["notice"] is None
    assert world.search("sales", q="量子コンピュータ")["notice"] is None


def test_the_pages_icon_is_served_without_sign_in_and_nothing_else_is(world: SearchWorld) -> None:
    status, body = world.call("/static/favicon.svg", None)
    assert status == 200
    assert body.startswith("<svg")
    # nothing beside the page's own files is public: an unknown name, a traversal, the API without a token
    assert world.call("/static/..%2Froutes.py", None)[0] == 404
    assert world.call("/static/secrets.json", None)[0] == 404
    assert world.call("/favicon.ico", None)[0] == 404
