"""Search, document metadata and download links, each for one caller and only what they may read.

A document the caller may not read and a document that does not exist look
the same (``NotFound``): the API answers 404 for both, so guessing ids tells
nothing. Query text and document content are never logged.
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import quote

from docindex.core.observability import logger
from docindex.search_api.principals import Caller
from docindex.search_api.query import SearchRequest, document_body, search_body, segments
from docindex.search_api.settings import SearchApiSettings

DOC_ID = re.compile(r"^[0-9a-f]{64}$")


class NotFound(Exception):
    """No such document, or not one the caller may read (indistinguishable on purpose)."""


def _folder(key: str) -> str:
    return key.rsplit("/", 1)[0] + "/" if "/" in key else ""


def _summary(hit: dict[str, Any]) -> dict[str, Any]:
    source = hit.get("_source") or {}
    key = str(source.get("key", ""))
    return {
        "id": hit["_id"],
        "filename": source.get("filename"),
        "path": key,
        "folder": _folder(key),
        "extension": source.get("extension") or "",
        "size": source.get("size"),
        "modified": source.get("last_modified"),
        "title": source.get("title"),
        "content_type": source.get("content_type"),
        "ocr_status": source.get("ocr_status"),
        "page_count": source.get("page_count"),
        "extraction_error": source.get("extraction_error"),
        "ocr_confidence": source.get("ocr_confidence"),
    }


def _buckets(aggregations: dict[str, Any], name: str, *, key: str = "key") -> list[dict[str, Any]]:
    return [
        {"value": str(b.get(key, b.get("key"))), "count": int(b["doc_count"])}
        for b in aggregations.get(name, {}).get("buckets", [])
        if int(b.get("doc_count", 0)) > 0
    ]


class SearchService:
    """The search API's logic; clients passed in."""

    def __init__(self, settings: SearchApiSettings, *, opensearch: Any, s3: Any) -> None:
        self.settings = settings
        self.opensearch = opensearch
        self.s3 = s3
        self.index = settings.opensearch_index

    def search(self, request: SearchRequest, caller: Caller) -> dict[str, Any]:
        """Hits, total and facet counts, all within what ``caller`` may read."""
        body = search_body(
            request,
            caller.principals,
            max_page_size=self.settings.max_page_size,
            max_result_window=self.settings.max_result_window,
            max_analyzer_offset=self.settings.highlight_max_analyzer_offset,
        )
        started = time.perf_counter()
        response = self.opensearch.search(index=self.index, body=body)
        hits = []
        for hit in response["hits"]["hits"]:
            summary = _summary(hit)
            highlight = hit.get("highlight") or {}
            fragment = (highlight.get("content") or [""])[0]
            summary["snippet"] = segments(fragment)
            summary["title_highlight"] = segments((highlight.get("title") or [""])[0])
            summary["filename_highlight"] = segments((highlight.get("filename") or [""])[0])
            hits.append(summary)
        total = response["hits"]["total"]
        total_value = int(total["value"] if isinstance(total, dict) else total)
        aggregations = response.get("aggregations") or {}
        logger.info(
            "search",
            extra={
                "query_chars": len(request.q),
                "filters": sum(bool(x) for x in (request.prefix, request.extension, request.modified_from)),
                "total": total_value,
                "returned": len(hits),
                "opensearch_ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return {
            "total": total_value,
            "page": request.page,
            "size": body["size"],
            "hits": hits,
            "facets": {
                "extension": _buckets(aggregations, "extension"),
                "folder": _buckets(aggregations, "folder"),
                "year": _buckets(aggregations, "year", key="key_as_string"),
                "ocr_status": _buckets(aggregations, "ocr_status"),
                # How many of the hits OCR read with low confidence (filter: ocr_confidence_below).
                "low_ocr_confidence": int((aggregations.get("low_ocr_confidence") or {}).get("doc_count", 0)),
            },
        }

    def _readable(self, doc_id: str, caller: Caller) -> dict[str, Any]:
        if not DOC_ID.match(doc_id):
            raise NotFound(doc_id)
        response = self.opensearch.search(index=self.index, body=document_body(doc_id, caller.principals))
        hits = response["hits"]["hits"]
        if not hits:
            raise NotFound(doc_id)
        return dict(hits[0])

    def document(self, doc_id: str, caller: Caller) -> dict[str, Any]:
        """A document's metadata (no content), if the caller may read it."""
        hit = self._readable(doc_id, caller)
        summary = _summary(hit)
        source = hit.get("_source") or {}
        summary.update({"indexed_at": source.get("indexed_at"), "content_truncated": source.get("content_truncated")})
        return summary

    def download(self, doc_id: str, caller: Caller) -> dict[str, Any]:
        """A short-lived presigned GetObject URL for a file the caller may read."""
        source = self._readable(doc_id, caller).get("_source") or {}
        filename = str(source.get("filename") or "download")
        params = {
            "Bucket": source["bucket"],
            "Key": source["key"],
            # RFC 6266/5987: the browser saves the file under its own (possibly Japanese) name.
            "ResponseContentDisposition": f"attachment; filename*=UTF-8''{quote(filename, safe='')}",
        }
        seconds = self.settings.download_url_seconds
        url = self.s3.generate_presigned_url("get_object", Params=params, ExpiresIn=seconds)
        logger.info("download link issued", extra={"id": doc_id, "expires_in": seconds})
        return {"url": url, "expires_in": seconds, "filename": filename}
