"""The HTTP routes: the JSON API (behind the JWT authorizer) and the page's static files (public).

The page is served by this same function from the same origin as the API, so
the browser never makes a cross-origin API call (no CORS needed unless the
page is hosted elsewhere: the template's ``SearchPageOrigin``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from pydantic import ValidationError

from docindex.core.observability import logger
from docindex.embed import Embedder
from docindex.search_api.principals import Caller, Unauthenticated, caller_from_claims
from docindex.search_api.query import SearchRequest, UnsearchableQuery, check_searchable
from docindex.search_api.service import NotFound, NotModified, SearchService
from docindex.search_api.settings import SearchApiSettings

if TYPE_CHECKING:
    from docindex.answer.service import AnswerService
    from docindex.core.clients import Clients

STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "filepath.js": "text/javascript; charset=utf-8",
    # the page's icon (index.html names it): without one the browser asks /favicon.ico, which no route serves
    "favicon.svg": "image/svg+xml",
}
NOT_FOUND = {"message": "not found"}
PAGE_NUMBER = re.compile(r"^[1-9][0-9]{0,5}$")
# A preview's q: the search's own bounds (SearchRequest.q).
MAX_PREVIEW_QUERY = 256
# A preview's quote (an answer's citation): marked on the page; its line breaks are kept.
MAX_PREVIEW_QUOTE = 600


@lru_cache(maxsize=len(STATIC))
def static_file(name: str) -> str:
    return resources.files("docindex.search_api.web").joinpath(name).read_text(encoding="utf-8")


def _origin(url: str) -> str:
    parsed = urlparse(url)
    return f"{parsed.scheme}://{parsed.netloc}" if parsed.scheme and parsed.netloc else ""


def page_headers(settings: SearchApiSettings) -> dict[str, str]:
    """Strict headers for the page: only our own scripts, only our API and the IdP's token endpoint."""
    connect = " ".join(x for x in ("'self'", _origin(settings.oidc_token_url)) if x)
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
            f"connect-src {connect}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }


def preview_headers(settings: SearchApiSettings, *, found_etag: str) -> dict[str, str]:
    """A preview is the caller's own: cached by their browser only, revalidated by its ETag."""
    return {
        "Cache-Control": f"private, max-age={settings.download_url_seconds}",
        "ETag": found_etag,
        "Vary": "Authorization",
        "X-Content-Type-Options": "nosniff",
    }


def build_resolver(
    settings: SearchApiSettings, service: SearchService, answers: AnswerService | None = None
) -> APIGatewayHttpResolver:
    """The routes, bound to one service (and the answers' service: None when ``ANSWERS=off``)."""
    app = APIGatewayHttpResolver()

    def caller() -> Caller:
        claims: dict[str, Any] | None = None
        authorizer = app.current_event.request_context.authorizer
        if authorizer is not None:
            claims = authorizer.jwt_claim
        return caller_from_claims(claims, groups_claim=settings.groups_claim)

    def json_response(status: int, body: Any) -> Response:
        return Response(
            status_code=status,
            content_type=content_types.APPLICATION_JSON,
            body=json.dumps(body, ensure_ascii=False),
            headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"},
        )

    @app.get("/search")
    def search() -> Response:
        params = app.current_event.query_string_parameters or {}
        try:
            request = SearchRequest.model_validate(params)
            check_searchable(request.q)
            return json_response(200, service.search(request, caller()))
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in e['loc']) or 'query'}: {e['msg']}" for e in exc.errors()]
            return json_response(400, {"message": "invalid parameters", "problems": problems})
        except UnsearchableQuery as exc:
            # the page says it in its own language by the reason (docs/search-api.md#errors)
            return json_response(400, {"message": str(exc), "reason": exc.reason})
        except ValueError as exc:
            return json_response(400, {"message": str(exc)})

    @app.get("/answer")
    def answer() -> Response:
        """An answer from the files the caller may read, with its citations (docindex.answer)."""
        from docindex.answer.service import answer_response

        return json_response(*answer_response(answers, app.current_event.query_string_parameters or {}, caller))

    @app.get("/documents/<doc_id>")
    def document(doc_id: str) -> Response:
        try:
            return json_response(200, service.document(doc_id, caller()))
        except NotFound:
            return json_response(404, NOT_FOUND)

    @app.get("/documents/<doc_id>/download")
    def download(doc_id: str) -> Response:
        params = app.current_event.query_string_parameters or {}
        page = params.get("page") or ""
        if page and not PAGE_NUMBER.match(page):
            return json_response(400, {"message": "page must be a page number"})
        try:
            return json_response(200, service.download(doc_id, caller(), page=int(page) if page else None))
        except NotFound:
            return json_response(404, NOT_FOUND)

    @app.get("/documents/<doc_id>/pages/<number>/preview")
    def preview(doc_id: str, number: str) -> Response:
        if not PAGE_NUMBER.match(number):
            return json_response(404, NOT_FOUND)
        headers = app.current_event.headers or {}
        if_none_match = str(headers.get("if-none-match") or headers.get("If-None-Match") or "")
        query = ((app.current_event.query_string_parameters or {}).get("q") or "").strip()
        if len(query) > MAX_PREVIEW_QUERY or any(ord(c) < 32 for c in query):
            return json_response(400, {"message": f"q must be at most {MAX_PREVIEW_QUERY} characters of text"})
        quote = ((app.current_event.query_string_parameters or {}).get("quote") or "").strip()
        if len(quote) > MAX_PREVIEW_QUOTE or any(ord(c) < 32 and c != "\n" for c in quote):
            return json_response(400, {"message": f"quote must be at most {MAX_PREVIEW_QUOTE} characters of text"})
        try:
            found = service.preview(
                doc_id, caller(), int(number), if_none_match=if_none_match, query=query, quote=quote
            )
        except NotFound:
            return json_response(404, NOT_FOUND)
        except NotModified as exc:
            return Response(304, None, None, headers=preview_headers(settings, found_etag=str(exc.args[0])))
        return Response(200, found.media_type, found.body, headers=preview_headers(settings, found_etag=found.etag))

    @app.get("/config.json")
    def config() -> Response:
        return json_response(
            200,
            {
                "authorizeUrl": settings.oidc_authorize_url,
                "tokenUrl": settings.oidc_token_url,
                "logoutUrl": settings.oidc_logout_url,
                "clientId": settings.oidc_client_id,
                "scopes": settings.oidc_scopes,
                "apiToken": settings.oidc_api_token,
                # The page shows its answer box unless ANSWERS=off.
                "answers": settings.answers,
            },
        )

    @app.get("/")
    def index() -> Response:
        return Response(200, STATIC["index.html"], static_file("index.html"), headers=page_headers(settings))

    @app.get("/static/<name>")
    def static(name: str) -> Response:
        if name not in STATIC or name == "index.html":
            return json_response(404, NOT_FOUND)
        return Response(200, STATIC[name], static_file(name), headers=page_headers(settings))

    @app.exception_handler(Unauthenticated)
    def unauthenticated(exc: Unauthenticated) -> Response:
        logger.warning("request without a verified caller", extra={"path": app.current_event.path})
        return json_response(401, {"message": "sign-in required"})

    @app.not_found
    def not_found(exc: Exception) -> Response:
        return json_response(404, NOT_FOUND)

    return app


_resolver: APIGatewayHttpResolver | None = None


def get_resolver() -> APIGatewayHttpResolver:
    """The process-wide resolver, built from the environment on first use."""
    global _resolver  # noqa: PLW0603 - one per Lambda container, created lazily
    if _resolver is None:
        from docindex.core.clients import Clients

        settings = SearchApiSettings.from_env()
        clients = Clients(settings)
        embedder = _embedder(settings, clients)
        service = SearchService(settings, opensearch=clients.opensearch, s3=clients.s3, embedder=embedder)
        # Converse has bounds of its own (ANSWER_READ_TIMEOUT_SECONDS, ANSWER_MAX_ATTEMPTS): it must fit the request
        answers = answer_service(
            settings,
            service,
            bedrock_client=lambda: clients.aws.client("bedrock-runtime", **settings.converse_bounds()),
        )
        _resolver = build_resolver(settings, service, answers)
    return _resolver


def answer_service(
    settings: SearchApiSettings, service: SearchService, *, bedrock_client: Callable[[], Any] | None = None
) -> AnswerService | None:
    """The answers of ``ANSWERS`` on the search service's index and embedder (None when off);
    ``bedrock_client`` builds the ``bedrock-runtime`` client (asked only with ``ANSWERS=bedrock``)."""
    from docindex.answer.service import AnswerService, build_answerer

    answerer = build_answerer(settings, bedrock_client=bedrock_client)
    if answerer is None:
        return None
    return AnswerService(
        settings,
        opensearch=service.opensearch,
        index=service.index,
        embedder=service.embedder,
        meaning_rule=service.meaning_rule,
        answerer=answerer,
        max_analyzer_offset=settings.highlight_max_analyzer_offset,
    )


def _embedder(settings: SearchApiSettings, clients: Clients) -> Embedder | None:
    """The query embedder of meaning search; None (keyword search, logged) when it cannot load."""
    from docindex.embed import EmbedderUnavailable
    from docindex.embed.settings import embedder_for

    try:
        return embedder_for(settings, bedrock_client=lambda: clients.bedrock_runtime)
    except (EmbedderUnavailable, ValueError) as exc:
        logger.warning("no embedder: keyword search only", extra={"error": str(exc)[:300]})
        return None
