"""E-mail (``.eml``) and saved web pages (``.mht``): decoded headers, the body, attachments.

The standard library's ``email`` package parses the MIME structure and
undoes base64 and quoted-printable; the text is decoded here, not by the
codecs the message names: ``Shift_JIS`` is read as cp932 (Windows mailers
write its extensions: ①, 髙), and undeclared 8-bit headers and bodies go
through the Japanese-aware cascade. Encoded words in ISO-2022-JP, Shift_JIS
or UTF-8 (``=?ISO-2022-JP?B?...?=``) are decoded in headers and attachment
names.

The document's text is the From/To/Cc/Date/Subject lines, the body (plain
text preferred; HTML as its visible text) and then, for each attachment, its
name and, for formats docindex reads, its text (nested messages and archives
included, up to ``dispatch.MAX_NESTING`` levels). The subject is the title.
Bounds: at most ``MAX_PARTS`` MIME parts are looked at; the shared
``max_chars`` and deadline apply to attachments too.
"""

from __future__ import annotations

from email import policy
from email.errors import MessageError
from email.header import decode_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from typing import Any

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import FileType
from docindex.extract.context import ExtractionContext
from docindex.extract.encoding import decode, normalize_label
from docindex.extract.html import html_text

MAX_PARTS = 1000
_SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")


def extract_mail(data: bytes, ftype: FileType, ctx: ExtractionContext) -> None:
    """Headers, body and attachments of a MIME message into ``ctx``."""
    try:
        message = BytesParser(policy=policy.default).parsebytes(data)
    except (ValueError, TypeError, LookupError, MessageError) as exc:
        raise ExtractionError("corrupt", f"unreadable MIME message: {exc}") from None
    if not isinstance(message, EmailMessage):
        raise ExtractionError("corrupt", "not a MIME message")
    headers = {name: header_text(message, name) for name in _SHOWN_HEADERS}
    ctx.title = headers["Subject"] or None
    ctx.author = headers["From"] or None
    ctx.set_dates(_sent(headers["Date"]), None)
    lines = [f"{name}: {value}" for name, value in headers.items() if value]
    ctx.start_page("part", 1)  # the message itself; each named attachment is the next part
    if not ctx.text.append("\n".join(lines) + "\n\n"):
        return
    body, attachments = _split(message)
    if body is not None and not ctx.text.append(part_text(body) + "\n"):
        return
    for part in attachments:
        ctx.check_deadline()
        if not _attachment(part, ctx):
            return


def header_text(message: Message, name: str) -> str:
    """A header's value with encoded words decoded (all occurrences joined), "" when absent."""
    values = [value for key, value in message.raw_items() if key.lower() == name.lower()]
    return ", ".join(decode_words(str(v)) for v in values).strip()


def decode_words(raw: str) -> str:
    """Decode RFC 2047 encoded words and raw 8-bit text of one header value."""
    raw = " ".join(raw.split())  # unfold
    try:
        chunks = decode_header(raw)
    except (ValueError, LookupError, MessageError):  # a broken encoded word: keep the raw text
        chunks = [(raw, None)]
    out = []
    for chunk, charset in chunks:
        if isinstance(chunk, str):
            out.append(_from_surrogates(chunk))
            continue
        out.append(_decode_bytes(chunk, charset))
    return "".join(out)


def _from_surrogates(text: str) -> str:
    # The parser keeps undeclared 8-bit header bytes as surrogate escapes.
    if any("\udc80" <= ch <= "\udcff" for ch in text):
        return decode(text.encode("utf-8", "surrogateescape")).text
    return text


def _decode_bytes(raw: bytes, charset: str | None) -> str:
    if charset and charset.lower() not in ("unknown-8bit", "x-unknown"):
        codec = normalize_label(charset) or charset
        try:
            return raw.decode(codec, "replace")
        except LookupError:
            pass
    return decode(raw).text


def _split(message: EmailMessage) -> tuple[Message | None, list[Message]]:
    """The body part and the attachments (every other leaf, nested messages whole)."""
    try:
        body = message.get_body(preferencelist=("plain", "html"))
    except (KeyError, IndexError, AttributeError, TypeError):
        body = None
    if body is not None and body.is_multipart():
        body = None
    attachments: list[Message] = []
    stack: list[Message] = [message]
    seen = 0
    while stack:
        part = stack.pop(0)
        seen += 1
        if seen > MAX_PARTS:
            raise ExtractionError("corrupt", f"more than {MAX_PARTS} MIME parts")
        if part is body:
            continue
        if part.get_content_type() == "message/rfc822" or not part.is_multipart():
            if part is not message or body is None:
                attachments.append(part)
            continue
        payload = part.get_payload()
        if isinstance(payload, list):
            stack[0:0] = [p for p in payload if isinstance(p, Message)]
    return body, [a for a in attachments if a is not message or body is None]


def part_text(part: Message) -> str:
    """The text of a text/plain or text/html part, decoded."""
    raw = _payload(part)
    charset = part.get_content_charset()
    if part.get_content_type() == "text/html":
        from docindex.extract.html import declared_charset

        decoded = decode(raw, charset or declared_charset(raw))
        return html_text(decoded.text)[1]
    return decode(raw, charset).text


def _payload(part: Message) -> bytes:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], Message):
            return inner[0].as_bytes()
        return b""
    try:
        raw = part.get_payload(decode=True)
    except (ValueError, TypeError, AssertionError):
        return b""
    return raw if isinstance(raw, bytes) else b""


def attachment_name(part: Message) -> str:
    """An attachment's file name (decoded), or a name from its content type."""
    name = None
    for raw in (part.get_param("filename", header="content-disposition"), part.get_param("name")):
        if raw:
            if isinstance(raw, tuple):  # RFC 2231: (charset, language, value)
                charset, _, value = raw
                name = _decode_bytes(str(value).encode("latin-1", "replace"), charset)
            else:
                name = decode_words(str(raw))
            break
    if not name:
        name = part.get("Content-Location") or ""
        name = decode_words(str(name)).rsplit("/", 1)[-1]
    if not name and part.get_content_type() == "message/rfc822":
        name = "message.eml"
    return name


def _attachment(part: Message, ctx: ExtractionContext) -> bool:
    """List one attachment (name, then its text when docindex reads its format); False when full."""
    from docindex.extract.dispatch import extract_nested

    name = attachment_name(part)
    content_type = part.get_content_type()
    if not name and content_type in ("text/plain", "text/html"):
        # An inline text part that is not the body (a second text part of a mixed message).
        return ctx.text.append(part_text(part) + "\n")
    if not name and content_type.startswith("image/"):
        return True  # an inline picture of an HTML mail or a saved page
    label = name or content_type
    ctx.start_page("part", len(ctx.page_marks) + 1, label)
    if not ctx.text.append(f"\n[{label}]\n"):
        return False
    data = _payload(part)
    if not data:
        return True
    child = extract_nested(data, name or "attachment", ctx)
    if child is not None and child.text:
        return ctx.text.append(child.text + "\n")
    return not ctx.text.full


def _sent(value: str | None) -> Any:
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError):
        return None
