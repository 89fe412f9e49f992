"""The index document: one owner of its fields and their values."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from docindex.core.changes import Action, ObjectChange
from docindex.core.storage import FetchedObject
from docindex.embed import VectorSpec
from docindex.extract import ExtractedDocument
from docindex.index.documents import ExtractionErrorCode, IndexDocument, OcrStatus
from docindex.index.mapping import MAPPINGS, vector_properties
from tests.conftest import REPO_ROOT

SHIPPED = REPO_ROOT / "layers" / "docindex" / "docindex"


def change(key: str = "営業部/見積書 2024.PDF") -> ObjectChange:
    return ObjectChange(
        action=Action.CREATED,
        bucket="docs",
        key=key,
        size=10,
        etag="e1",
        version_id=None,
        sequencer="00AA",
        event_time="2024-04-01T00:00:00.000Z",
    )


def fetched() -> FetchedObject:
    return FetchedObject("docs", "営業部/見積書 2024.PDF", 2048, "e2", "v2", "2024-04-02T00:00:00.000Z", None)


def test_the_file_servers_date_is_the_documents_and_s3s_is_kept_apart() -> None:
    from dataclasses import replace

    from docindex.core.filedates import datasync_metadata, file_date

    extracted = ExtractedDocument(kind="pdf", content_type="application/pdf", text="見積金額", page_count=2)
    metadata = datasync_metadata(datetime(2019, 4, 1, 9, 30, tzinfo=UTC))
    dated = replace(fetched(), file_date=file_date(metadata, "2024-04-02T00:00:00.000Z", keys=("file-mtime",)))

    source = IndexDocument.extracted(change(), dated, extracted).source()

    assert source["last_modified"] == "2019-04-01T09:30:00.000000Z"
    assert source["last_modified_source"] == "file_server"
    assert source["s3_last_modified"] == "2024-04-02T00:00:00.000Z"
    assert "last_modified_problem" not in source
    # the ordering fields are S3's own, whatever the file server's clock said
    assert (source["sequencer"], source["etag"], source["version_id"]) == ("00AA", "e2", "v2")


def test_an_extracted_file_has_metadata_and_content_and_nothing_empty() -> None:
    extracted = ExtractedDocument(kind="pdf", content_type="application/pdf", text="見積金額", page_count=2)

    source = IndexDocument.extracted(change(), fetched(), extracted).source()

    assert source.pop("indexed_at")
    assert source == {
        "bucket": "docs",
        "key": "営業部/見積書 2024.PDF",
        "filename": "見積書 2024.PDF",
        "extension": "pdf",
        "content_type": "application/pdf",
        # what S3 returned wins over what the event said
        "size": 2048,
        "etag": "e2",
        "version_id": "v2",
        "sequencer": "00AA",
        # the object carries no file server date: the document's date is S3's, and says so
        "last_modified": "2024-04-02T00:00:00.000Z",
        "last_modified_source": "s3",
        "s3_last_modified": "2024-04-02T00:00:00.000Z",
        "ocr_status": "none",
        "content": "見積金額",
        "page_count": 2,
        "folders": ["営業部/"],
        # the file name and the content with their spelling variants folded (docindex.text.variants)
        "variants": ["見積書", "見積もり金額"],
        # the folder and file names for name search (docindex.index.names): folded, lower case
        "names": ["営業部/見積書 2024.pdf"],
        # the file name's key for sorting by name as Explorer does: numbers by their value (2024: four digits)
        "name_order": "見積書 042024.pdf",
    }


def test_every_field_a_document_can_carry_is_in_the_mapping() -> None:
    # The vector fields are in an index with vectors (meaning search); without them, they stay unset.
    vectors = vector_properties(VectorSpec("model", 4))
    assert set(IndexDocument.__dataclass_fields__) <= set(MAPPINGS["properties"]) | set(vectors)


def test_pending_quarantined_and_rejected_states() -> None:
    base = IndexDocument.for_change(change(), None, content_type=None)
    assert base.source()["size"] == 10  # no object in hand: the event's metadata

    pending = base.pending_ocr("scanned_pdf").source()
    assert (pending["ocr_status"], pending["ocr_reason"]) == ("pending", "scanned_pdf")

    assert base.quarantined().source()["extraction_error"] == "quarantined"

    full = base.with_content(text="本文", title="題名", page_count=1, truncated=True, error=None)
    slim = full.without_content().source()
    assert "content" not in slim
    assert "title" not in slim
    assert slim["extraction_error"] == "index_rejected"
    assert slim["content_truncated"] is True


def test_an_ocr_result_keeps_the_files_own_title_and_replaces_stale_content() -> None:
    indexed = {
        "bucket": "docs",
        "key": "スキャン/契約書.pdf",
        "title": "契約書（原本）",
        "ocr_status": "pending",
        "ocr_reason": "scanned_pdf",
        "extraction_error": "empty",
        "content_type": "application/pdf",
    }

    done = IndexDocument.from_source(indexed).ocr_result(
        status=OcrStatus.DONE,
        reason="scanned_pdf",
        content_type="image/png",
        text="甲と乙は",
        title="OCR title",
        page_count=3,
        truncated=False,
        error=None,
    )

    source = done.source()
    assert source["title"] == "契約書（原本）"
    assert source["content"] == "甲と乙は"
    assert source["ocr_status"] == "done"
    assert source["content_type"] == "application/pdf"
    assert "extraction_error" not in source
    assert type(source["ocr_status"]) is str  # plain JSON values, not enum members


@pytest.mark.parametrize(
    "code", ["corrupt", "encrypted", "unsupported", "zip_bomb", "timeout", "too_large", "memory", "empty"]
)
def test_extraction_error_codes_are_enum_members(code: str) -> None:
    assert ExtractionErrorCode(code).value == code


def test_every_extraction_error_raised_in_the_package_is_a_known_code() -> None:
    raised = {
        code
        for path in SHIPPED.rglob("*.py")
        for code in re.findall(r'ExtractionError\(\s*"([a-z_]+)"', path.read_text(encoding="utf-8"))
    }
    assert raised
    assert raised <= {member.value for member in ExtractionErrorCode}
