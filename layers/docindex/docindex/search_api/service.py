"""Search, document metadata and download links, each for one caller and only what they may read.

A document the caller may not read and a document that does not exist look
the same (``NotFound``): the API answers 404 for both, so guessing ids tells
nothing. Query text and document content are never logged.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from docindex.access.shares import Shares
from docindex.core.observability import logger
from docindex.embed import Embedder
from docindex.index.hybrid import Legs, MeaningRule, VectorHit, on_page, query_vector, search_hybrid, total_of
from docindex.index.pages import page_hits
from docindex.ingest.wordboxes import WordBoxStore
from docindex.search_api.principals import Caller
from docindex.search_api.query import (
    MARK_START,
    SUMMARY_FIELDS,
    SearchRequest,
    document_body,
    page_body,
    permission_filter,
    request_filters,
    search_body,
    segments,
)
from docindex.search_api.settings import SearchApiSettings

DOC_ID = re.compile(r"^[0-9a-f]{64}$")
# A hit found by meaning alone shows this much of its best passage.
SNIPPET_CHARS = 160


def is_pdf(source: dict[str, Any]) -> bool:
    """Whether the indexed file is a PDF (detected from its bytes, not its name)."""
    return source.get("content_type") == "application/pdf"


class NotFound(Exception):
    """No such document, or not one the caller may read (indistinguishable on purpose)."""


class NotModified(Exception):
    """The caller's cached preview (``If-None-Match``) is still this page's."""


# Bumped when what a preview shows for the same page changes (size, marks, format): old ETags miss.
PREVIEW_VERSION = "3"  # 2: the query's words marked; 3: a page OCR turned upright is shown upright
# A page shown as text shows at most this many characters of it.
PREVIEW_TEXT_CHARS = 4000


@dataclass(frozen=True)
class PagePreview:
    """A page's preview: a JPEG, or (for formats without a renderer) the page's text as JSON."""

    media_type: str
    body: bytes | str  # JPEG bytes, or the JSON text
    etag: str


def _folder(key: str) -> str:
    return key.rsplit("/", 1)[0] + "/" if "/" in key else ""


def _summary(hit: dict[str, Any], shares: Shares | None = None) -> dict[str, Any]:
    source = hit.get("_source") or {}
    key = str(source.get("key", ""))
    # Where the file is on the file server (FILE_SERVER_SHARES); null for a key under no share.
    location = shares.locate(source.get("bucket"), key) if shares else None
    return {
        "id": hit["_id"],
        "filename": source.get("filename"),
        "path": key,
        "folder": _folder(key),
        "extension": source.get("extension") or "",
        "size": source.get("size"),
        # The file server's modification time when the object carried one, else S3's (modified_source).
        "modified": source.get("last_modified"),
        "modified_source": source.get("last_modified_source") or "s3",
        "uploaded": source.get("s3_last_modified") or source.get("last_modified"),
        "title": source.get("title"),
        "content_type": source.get("content_type"),
        "ocr_status": source.get("ocr_status"),
        "page_count": source.get("page_count"),
        "extraction_error": source.get("extraction_error"),
        "ocr_confidence": source.get("ocr_confidence"),
        "location": location.to_dict() if location else None,
    }


def _meaning_hit(found: VectorHit, shares: Shares | None = None) -> dict[str, Any]:
    """A file found by meaning alone: its best passage is the snippet, nothing in it is marked."""
    summary = _summary({"_id": found.doc_id, "_source": found.source}, shares)
    summary.update(
        {
            "snippet": segments(found.passage[:SNIPPET_CHARS]),
            "title_highlight": [],
            "filename_highlight": [],
            "pages": [],
            "matching_pages": 0,
            "found_by": "meaning",
            "passage_page": found.page,
            "meaning_score": round(found.score, 4),
        }
    )
    return summary


def _buckets(aggregations: dict[str, Any], name: str, *, key: str = "key") -> list[dict[str, Any]]:
    return [
        {"value": str(b.get(key, b.get("key"))), "count": int(b["doc_count"])}
        for b in aggregations.get(name, {}).get("buckets", [])
        if int(b.get("doc_count", 0)) > 0
    ]


class SearchService:
    """The search API's logic; clients passed in."""

    def __init__(
        self, settings: SearchApiSettings, *, opensearch: Any, s3: Any, embedder: Embedder | None = None
    ) -> None:
        self.settings = settings
        self.opensearch = opensearch
        self.s3 = s3
        self.index = settings.opensearch_index
        # Embeds queries for the vector leg (None: keyword search only); see docindex.index.hybrid.
        self.embedder = embedder
        # The OCR worker's word boxes (beside the content cache): the marks of a preview.
        self.word_boxes = WordBoxStore(s3, settings.content_cache_bucket)

    @property
    def meaning_rule(self) -> MeaningRule:
        """When a file found by meaning alone is offered (docs/meaning-search.md)."""
        return MeaningRule.from_settings(self.settings)

    def search(self, request: SearchRequest, caller: Caller) -> dict[str, Any]:
        """Hits, total and facet counts, all within what ``caller`` may read.

        ``total`` and the facets count the files that contain the query; ``more_by_meaning`` how
        many more the vector leg offers (they follow the last match, marked ``found_by: "meaning"``).
        """
        body = search_body(
            request,
            caller.principals,
            max_page_size=self.settings.max_page_size,
            max_result_window=self.settings.max_result_window,
            max_analyzer_offset=self.settings.highlight_max_analyzer_offset,
            page_hits=self.settings.page_hits,
        )
        started = time.perf_counter()
        legs = self._hybrid(request, caller, body)
        response = legs.keyword if legs is not None else self.opensearch.search(index=self.index, body=body)
        hits = [self._keyword_hit(hit) for hit in response["hits"]["hits"]]
        if request.scope == "name" and request.q:
            from docindex.index.names import NameMarker

            # The name search matches grams of `names` (no highlighter sees them): marked here, as found.
            marker = NameMarker(request.q)
            for named in hits:
                named["filename_highlight"] = marker.marks(str(named.get("filename") or ""))
        total_value = total_of(response)
        by_meaning: list[VectorHit] = legs.by_meaning if legs is not None else []
        for found in on_page(len(hits), total_value, by_meaning, start=body["from"], size=body["size"]):
            hits.append(_meaning_hit(found, self.settings.shares))
        aggregations = response.get("aggregations") or {}
        notice = self._notice(request) if not total_value and not by_meaning else None
        logger.info(
            "search",
            extra={
                "query_chars": len(request.q),
                "filters": sum(bool(x) for x in (request.prefix, request.extension, request.modified_from)),
                "total": total_value,
                "by_meaning": len(by_meaning),
                "returned": len(hits),
                "hybrid": legs is not None,
                "opensearch_ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return {
            "total": total_value,
            "more_by_meaning": len(by_meaning),
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
            # Why a query found nothing, when the query itself is why (null otherwise).
            "notice": notice,
        }

    def _notice(self, request: SearchRequest) -> dict[str, Any] | None:
        """``ignored_words`` when the index's search analyzer keeps no word of the query (の, は, the...):
        the search found nothing because nothing of it was searched. Asked only of a search that found
        nothing; a cluster that cannot answer (no ``_analyze``) gives no notice."""
        if not request.q or request.scope != "content":
            return None
        try:
            analyzed = self.opensearch.indices.analyze(
                index=self.index, body={"analyzer": "docindex_search", "text": request.q}
            )
        except Exception as exc:  # noqa: BLE001 - a notice is a courtesy: the search's answer stands without it
            logger.info("could not analyze the query for a notice", extra={"error": f"{type(exc).__name__}"})
            return None
        if analyzed.get("tokens"):
            return None
        return {
            "reason": "ignored_words",
            "message": "every word of the query is one the index does not search (particles such as の or は, "
            "words too common to tell files apart): add a word, or search file names (scope=name)",
        }

    def _keyword_hit(self, hit: dict[str, Any]) -> dict[str, Any]:
        summary = _summary(hit, self.settings.shares)
        highlight = hit.get("highlight") or {}
        summary["snippet"] = segments((highlight.get("content") or [""])[0])
        summary["title_highlight"] = segments((highlight.get("title") or [""])[0])
        summary["filename_highlight"] = segments((highlight.get("filename") or [""])[0])
        pages, matching = page_hits(hit, MARK_START)
        summary["pages"] = [
            {"number": p.number, "kind": p.kind, "label": p.label, "snippet": segments(p.fragment)} for p in pages
        ]
        summary["matching_pages"] = matching
        return summary

    def _hybrid(self, request: SearchRequest, caller: Caller, body: dict[str, Any]) -> Legs | None:
        """Both legs in one round trip when the request and the index allow it (docindex.index.hybrid).

        Both are limited by the caller's permission filter and the user's filters; ``body`` (the
        keyword search, page, facets and total) is the keyword leg unchanged.
        """
        if not request.q or request.sort != "relevance" or request.mode != "auto" or request.scope != "content":
            return None
        vector = query_vector(self.opensearch, self.index, request.q, self.embedder)
        if vector is None:
            return None
        filters = request_filters(request, caller.principals)
        must = body["query"]["bool"]["must"][0]
        return search_hybrid(
            self.opensearch,
            self.index,
            keyword_body=body,
            keyword_query=must,
            filters=filters,
            vector=vector,
            query=request.q,
            rule=self.meaning_rule,
            source=SUMMARY_FIELDS,
        )

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
        summary = _summary(hit, self.settings.shares)
        source = hit.get("_source") or {}
        summary.update({"indexed_at": source.get("indexed_at"), "content_truncated": source.get("content_truncated")})
        return summary

    def download(self, doc_id: str, caller: Caller, *, page: int | None = None) -> dict[str, Any]:
        """A short-lived presigned GetObject URL for a file the caller may read.

        With ``page``, a PDF opens in the browser's viewer at that page (``inline`` and the
        viewer's ``#page=N``, PDF open parameters); any other file is the download as without it.
        """
        source = self._readable(doc_id, caller).get("_source") or {}
        filename = str(source.get("filename") or "download")
        page_count = source.get("page_count")
        at_page = (
            page
            if page is not None and is_pdf(source) and isinstance(page_count, int) and 1 <= page <= page_count
            else None
        )
        # RFC 6266/5987: the browser saves (or shows) the file under its own (possibly Japanese) name.
        disposition = "inline" if at_page else "attachment"
        params = {
            "Bucket": source["bucket"],
            "Key": source["key"],
            "ResponseContentDisposition": f"{disposition}; filename*=UTF-8''{quote(filename, safe='')}",
        }
        if at_page:
            # S3's stored type may be anything the scanner PC sent: the viewer needs application/pdf.
            params["ResponseContentType"] = "application/pdf"
        seconds = self.settings.download_url_seconds
        url = self.s3.generate_presigned_url("get_object", Params=params, ExpiresIn=seconds)
        logger.info("download link issued", extra={"id": doc_id, "expires_in": seconds, "page": at_page})
        answer: dict[str, Any] = {"url": url, "expires_in": seconds, "filename": filename}
        if at_page:
            answer["url"] = f"{url}#page={at_page}"
            answer["page"] = at_page
        return answer

    def preview(
        self, doc_id: str, caller: Caller, number: int, *, if_none_match: str = "", query: str = "", quote: str = ""
    ) -> PagePreview:
        """Page ``number`` of a document the caller may read: a picture (PDF, scans) or its text.

        ``NotFound`` for a document the caller may not read, a missing one and a page it does not
        have, alike; ``NotModified`` when ``if_none_match`` is this preview's ``ETag`` (checked
        after the permission, so a cached tag tells nothing either). With ``query``, an OCR'd
        page's picture has the query's words marked where the worker kept their boxes (read
        only after the permission check); the ``ETag`` differs with the query. With ``quote`` (an answer's
        citation), the quote's lines are marked instead. A file without pages (Word, text, HTML, an archive) has
        one: page 1 is its text (``本文``).
        """
        from docindex.search_api.preview import PreviewRefused, fetch_to_file, render, renderer_for

        if not DOC_ID.match(doc_id) or not 0 < number < 1_000_000:
            raise NotFound(doc_id)
        response = self.opensearch.search(index=self.index, body=page_body(doc_id, caller.principals, number))
        hits = response["hits"]["hits"]
        if not hits:
            raise NotFound(doc_id)
        source = hits[0].get("_source") or {}
        page = _inner_page(hits[0])
        kind = renderer_for(source.get("content_type"))
        page_count = source.get("page_count")
        renderable = kind is not None and number <= (page_count if isinstance(page_count, int) else 1)
        if not renderable and page is None and number == 1:
            # A file without pages (text, Word, HTML, an archive's member) is one page: its text (本文).
            page = self._whole_text(doc_id, caller)
        if not renderable and page is None:
            raise NotFound(doc_id)
        identity = ":".join(
            str(source.get(name) or "") for name in ("etag", "version_id", "content_sha256", "indexed_at")
        )
        tag = hashlib.sha256(
            f"{PREVIEW_VERSION}:{doc_id}:{identity}:{number}:{self.settings.preview_max_edge}:{query}:{quote}".encode()
        )
        etag = f'"{tag.hexdigest()[:32]}"'
        if etag in {t.strip() for t in if_none_match.split(",")}:
            raise NotModified(etag)
        started = time.perf_counter()
        if renderable and kind is not None:
            try:
                with tempfile.TemporaryDirectory(prefix="docindex-preview-") as directory:
                    path = fetch_to_file(
                        self.s3,
                        source["bucket"],
                        source["key"],
                        version_id=source.get("version_id"),
                        max_bytes=self.settings.preview_max_object_bytes,
                        directory=directory,
                    )
                    marks = self._marks(source, number, query, quote)
                    if quote and not marks and kind == "pdf":
                        # a text layer: the quote's lines where PDFium finds them on the page
                        from docindex.search_api.preview import pdf_quote_marks

                        marks = pdf_quote_marks(path, number, quote)
                    turn = page_turn(source, number)
                    image = render(path, kind, number, self.settings.preview_max_edge, marks, turn=turn)
                logger.info(
                    "page preview rendered",
                    extra={
                        "id": doc_id,
                        "page": number,
                        "renderer": kind,
                        "marks": len(marks),
                        "bytes": len(image.jpeg),
                        "ms": round((time.perf_counter() - started) * 1000, 1),
                    },
                )
                return PagePreview("image/jpeg", image.jpeg, etag)
            except PreviewRefused as exc:
                logger.info("page preview not rendered; showing its text", extra={"id": doc_id, "why": str(exc)})
                if page is None:
                    raise NotFound(doc_id) from None
        if page is None:  # not renderable and no page text: checked above, kept for the type checker
            raise NotFound(doc_id)
        text = {
            "number": number,
            "kind": page.get("kind") or "page",
            "label": page.get("label") or f"p. {number}",
            "text": str(page.get("text") or "")[:PREVIEW_TEXT_CHARS],
        }
        return PagePreview("application/json", json.dumps(text, ensure_ascii=False), etag)

    def _marks(
        self, source: dict[str, Any], number: int, query: str, quote: str = ""
    ) -> list[tuple[float, float, float, float]]:
        """The query's words (or the quote's lines) on an OCR'd page (boxes as fractions of the page); none
        without boxes.

        Called only for a document the caller may read: its boxes are read by its bytes' hash.
        """
        if not (query or quote) or source.get("ocr_status") != "done" or not source.get("content_sha256"):
            return []
        from docindex.search_api.marks import marked_boxes, marked_quote

        words = self.word_boxes.get(str(source["content_sha256"]), number)
        if words is None:
            return []
        return marked_quote(words, quote) if quote else marked_boxes(words, query)

    def _whole_text(self, doc_id: str, caller: Caller) -> dict[str, Any] | None:
        """The text of a file without pages as its one page (本文), if the caller may read it and it has text."""
        body = {
            "size": 1,
            "query": {"bool": {"filter": [{"ids": {"values": [doc_id]}}, permission_filter(caller.principals)]}},
            "_source": ["content", "pages.n"],
        }
        hits = self.opensearch.search(index=self.index, body=body)["hits"]["hits"]
        source = hits[0].get("_source") or {} if hits else {}
        if not source.get("content") or source.get("pages"):
            return None
        return {"n": 1, "kind": "body", "label": "本文", "text": str(source["content"])[:PREVIEW_TEXT_CHARS]}


def page_turn(source: dict[str, Any], number: int) -> int:
    """The quarter turn (counter-clockwise, 0/90/180/270) OCR gave page ``number`` to read it upright:
    a page fed sideways through a copier is shown the way it reads (``ocr_pages`` of the document)."""
    for entry in source.get("ocr_pages") or ():
        if isinstance(entry, dict) and entry.get("page") == number:
            rotation = entry.get("rotation")
            return rotation if rotation in (90, 180, 270) else 0
    return 0


def _inner_page(hit: dict[str, Any]) -> dict[str, Any] | None:
    """The nested page object a ``page_body`` search returned, if the document has that page."""
    inner = ((hit.get("inner_hits") or {}).get("page") or {}).get("hits") or {}
    for page in inner.get("hits") or []:
        source = page.get("_source") or {}
        # The nested object itself (OpenSearch), or under its path (other readers of the same answer).
        found = source.get("pages", source) if isinstance(source, dict) else None
        if isinstance(found, dict):
            return found
    return None
