"""The content cache's pure parts: what is cached, the S3 checksum, the inflate bound, the key."""

from __future__ import annotations

import base64
import gzip
import hashlib

import pytest

from docindex.core.filedates import FileDate
from docindex.core.storage import s3_sha256
from docindex.extract import ExtractedDocument
from docindex.extract.version import EXTRACTOR_VERSION
from docindex.index.documents import IndexDocument
from docindex.ingest import cache as cache_module
from docindex.ingest.cache import CachedContent, ContentCache

DIGEST = hashlib.sha256(b"hello").hexdigest()


def test_s3_full_object_sha256_is_the_content_hash_and_composite_ones_are_not() -> None:
    value = base64.b64encode(hashlib.sha256(b"hello").digest()).decode()
    assert s3_sha256({"ChecksumSHA256": value}) == DIGEST
    assert s3_sha256({"ChecksumSHA256": value, "ChecksumType": "FULL_OBJECT"}) == DIGEST
    assert s3_sha256({"ChecksumSHA256": value, "ChecksumType": "COMPOSITE"}) is None
    assert s3_sha256({"ChecksumSHA256": value + "-3"}) is None
    assert s3_sha256({"ChecksumCRC32": "NhCmhg=="}) is None
    assert s3_sha256({"ChecksumSHA256": "not base64!"}) is None


@pytest.mark.parametrize(
    ("error", "ocr_reason", "cached"),
    [
        (None, None, True),
        ("encrypted", None, True),
        ("unsupported", None, True),
        ("timeout", None, False),
        ("extractor_failed", None, False),
        ("too_large", None, False),
        (None, "scanned_pdf", False),
    ],
)
def test_only_results_the_same_bytes_give_again_are_cached(error, ocr_reason, cached) -> None:
    extracted = ExtractedDocument(
        kind="pdf", content_type="application/pdf", text="x", error=error, ocr_reason=ocr_reason
    )
    assert (CachedContent.from_extracted(extracted) is not None) is cached


def test_the_key_holds_the_extractor_version_so_a_new_version_misses() -> None:
    cache = ContentCache(None, "bucket")
    assert cache.key(DIGEST) == f"content-cache/v{EXTRACTOR_VERSION}/{DIGEST[:2]}/{DIGEST}.json.gz"


def test_a_disabled_cache_or_a_malformed_hash_never_touches_s3() -> None:
    class NoS3:
        def __getattr__(self, name: str) -> None:
            raise AssertionError(f"S3 called: {name}")

    assert ContentCache(NoS3(), None).get(DIGEST) is None
    assert ContentCache(NoS3(), "bucket").get("../../etc/passwd") is None
    ContentCache(NoS3(), "bucket").put("nothex", CachedContent(ocr_status="none"))


def test_an_entry_inflating_too_far_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "MAX_INFLATED_BYTES", 1000)
    with pytest.raises(ValueError, match="inflates too far"):
        cache_module._inflate(gzip.compress(b"0" * 5000))
    assert cache_module._inflate(gzip.compress(b"0" * 500)) == b"0" * 500


def test_unchanged_content_changes_only_the_identity() -> None:
    doc = IndexDocument.for_object(bucket="b", key="k.txt", etag="e", version_id="v1", sequencer="s1").with_content(
        text="本文", title="題", page_count=1, truncated=False, error=None
    )
    refreshed = doc.with_identity(
        version_id="v2", sequencer="s2", file_date=FileDate.from_s3("2026-11-20T09:00:00.000000Z"), etag="e"
    )
    assert refreshed.source()["version_id"] == "v2"
    assert refreshed.source()["sequencer"] == "s2"
    for name in ("content", "title", "page_count", "etag", "bucket", "key"):
        assert refreshed.source()[name] == doc.source()[name]
    assert IndexDocument.for_object(bucket="b", key="k").archived().source()["extraction_error"] == "archived"
