"""The search API's settings (docs/configuration.md, "Search API")."""

from __future__ import annotations

from functools import cached_property

from pydantic import Field, field_validator

from docindex.access.shares import Shares, SharesError, parse_shares
from docindex.answer.settings import AnswerSettings
from docindex.core.settings import AccessSettings, EmbeddingSettings, OpenSearchSettings


class SearchApiSettings(OpenSearchSettings, AccessSettings, EmbeddingSettings, AnswerSettings):
    """The index to search, the claim that carries groups, bounds, and what the page needs to sign in."""

    groups_claim: str = Field("cognito:groups", alias="GROUPS_CLAIM", min_length=1)
    max_page_size: int = Field(50, alias="SEARCH_MAX_PAGE_SIZE", ge=1, le=100)
    # from + size never goes past this (deep pages cost the cluster; nobody reads page 500).
    max_result_window: int = Field(1000, alias="SEARCH_MAX_RESULT_WINDOW", ge=10, le=10_000)
    # The highlighter analyzes at most this many characters of a document (the index's
    # index.highlight.max_analyzer_offset defaults to 1,000,000; docindex keeps 2,000,000).
    highlight_max_analyzer_offset: int = Field(
        999_999, alias="SEARCH_HIGHLIGHT_MAX_ANALYZER_OFFSET", ge=1000, le=1_000_000
    )
    # Each hit names at most this many of its matching pages (best first); 0: no page hits.
    page_hits: int = Field(3, alias="SEARCH_PAGE_HITS", ge=0, le=10)
    # Page previews (GET /documents/{id}/pages/{n}/preview): the picture's longest edge in pixels,
    # and the largest object read to render one (a larger file's preview is the page's text).
    preview_max_edge: int = Field(1024, alias="SEARCH_PREVIEW_MAX_EDGE", ge=256, le=2048)
    preview_max_object_bytes: int = Field(
        256 * 1024 * 1024, alias="SEARCH_PREVIEW_MAX_OBJECT_BYTES", ge=1024 * 1024, le=2 * 1024 * 1024 * 1024
    )
    # The content cache bucket, where the OCR worker keeps each page's word boxes (ocr-words/): a
    # preview asked with q marks the query's words on an OCR'd page. Unset: previews are not marked.
    content_cache_bucket: str | None = Field(None, alias="CONTENT_CACHE_BUCKET")
    download_url_seconds: int = Field(300, alias="DOWNLOAD_URL_SECONDS", ge=10, le=3600)
    # The page's sign-in (authorization code + PKCE against this OIDC provider).
    oidc_authorize_url: str = Field("", alias="OIDC_AUTHORIZE_URL")
    oidc_token_url: str = Field("", alias="OIDC_TOKEN_URL")
    oidc_logout_url: str = Field("", alias="OIDC_LOGOUT_URL")
    oidc_client_id: str = Field("", alias="OIDC_CLIENT_ID")
    oidc_scopes: str = Field("openid email profile", alias="OIDC_SCOPES")
    # Which token the page sends to the API: access (Cognito) or id (some IdPs put groups only there).
    oidc_api_token: str = Field("access", alias="OIDC_API_TOKEN", pattern="^(access|id)$")
    # Which key prefix is which file server share (docindex.access.shares): each hit's Windows path,
    # its folder's and their smb:// forms. Unset: hits show their key only.
    file_server_shares: str = Field("", alias="FILE_SERVER_SHARES")

    @field_validator("file_server_shares")
    @classmethod
    def _shares_readable(cls, value: str) -> str:
        try:
            parse_shares(value)
        except SharesError as exc:
            raise ValueError(str(exc).removeprefix("FILE_SERVER_SHARES: ")) from None
        return value

    @cached_property
    def shares(self) -> Shares:
        """The share mapping, read once."""
        return parse_shares(self.file_server_shares)
