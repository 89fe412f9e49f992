"""What one extraction run carries: limits, deadline and the text collected so far.

Extractors write into an :class:`ExtractionContext` as they go instead of
returning a finished result, so that when they stop early (deadline, a corrupt
part half-way through) the dispatcher still has the partial text, the title and
the page count to index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from docindex.core.exceptions import ExtractionError
from docindex.extract.base import Deadline, ExtractionLimits, JobBounds

# At most this many dropped parts are named on a document, each in at most MAX_DROP_CHARS characters.
MAX_DROPPED = 20
MAX_DROP_CHARS = 200
# At most this many page boundaries are kept for one document (a page-per-row export, a mail
# of 10,000 attachments): OpenSearch's index.mapping.nested_objects.limit is 10,000.
MAX_PAGE_MARKS = 5000

PageMark = tuple[int, str, int, str | None]


def _aware(value: Any) -> datetime | None:
    if not isinstance(value, datetime) or not 1900 < value.year < 2200:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class TextBuffer:
    """Collects text up to ``max_chars``; remembers whether anything was cut off."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.truncated = False
        self._parts: list[str] = []
        self._size = 0

    @property
    def full(self) -> bool:
        """True once no more text fits (extractors stop reading then)."""
        return self.truncated or self._size >= self.max_chars

    def __len__(self) -> int:
        return self._size

    def append(self, text: str) -> bool:
        """Add ``text``; return False when the buffer is full and the caller should stop."""
        if not text:
            return not self.full
        room = self.max_chars - self._size
        if len(text) <= room:
            self._parts.append(text)
            self._size += len(text)
            return True
        # Dropping only whitespace (a trailing separator) is not a truncation.
        if text[room:].strip():
            self.truncated = True
        if room > 0:
            self._parts.append(text[:room])
            self._size += room
        return False

    def getvalue(self) -> str:
        """The text collected so far."""
        return "".join(self._parts)


@dataclass
class ExtractionContext:
    """Shared state of one extraction; extractors fill in what they learn."""

    limits: ExtractionLimits
    deadline: Deadline
    text: TextBuffer = field(init=False)
    title: str | None = None
    # What the format records about the document: who wrote it, who saved it last, when it was
    # created and last modified (index fields author, last_saved_by, created, modified).
    author: str | None = None
    last_saved_by: str | None = None
    created: datetime | None = None
    modified: datetime | None = None

    def set_dates(self, created: Any, modified: Any) -> None:
        """Record creation / modification times given as datetimes (naive ones are taken as UTC)."""
        self.created = _aware(created) or self.created
        self.modified = _aware(modified) or self.modified

    # Nesting depth: 0 for the file itself, 1 for an archive member or attachment, ...
    depth: int = 0
    page_count: int | None = None
    ocr_reason: str | None = None
    encoding: str | None = None
    # Set when the extractor stopped before the end for a reason other than
    # ``max_chars`` (e.g. ``max_pages``); the text is then marked truncated.
    incomplete: bool = False
    # Set in an extraction process (extract/isolation.py): the memory and time
    # this job may use, for refusals the format allows up front.
    bounds: JobBounds | None = None
    # Parts left out, "what: why" (``drop``); the document is then marked truncated.
    dropped: list[str] = field(default_factory=list)
    # Where pages start in ``text`` (``start_page``): (offset, kind, number, name).
    page_marks: list[PageMark] = field(default_factory=list)

    def start_page(self, kind: str, number: int, name: str | None = None) -> None:
        """Mark that the text appended from now on belongs to page ``number`` (a slide, a sheet, a part).

        Text appended before the first mark belongs to no page (a mail's headers are part 1's).
        Marks past :data:`MAX_PAGE_MARKS` are ignored: the text still counts, under the last page.
        """
        if len(self.page_marks) < MAX_PAGE_MARKS and not self.text.full:
            self.page_marks.append((len(self.text), kind, number, name[:MAX_DROP_CHARS] if name else None))

    def drop(self, what: str, why: str) -> None:
        """Record a part left out of the text (a sheet, pages, a member, an attachment) and why."""
        self.incomplete = True
        if len(self.dropped) < MAX_DROPPED:
            self.dropped.append(f"{what}: {why}"[:MAX_DROP_CHARS])
        elif len(self.dropped) == MAX_DROPPED:
            self.dropped.append("more parts left out")

    def __post_init__(self) -> None:
        self.text = TextBuffer(self.limits.max_chars)

    def check_deadline(self) -> None:
        """Raise ``ExtractionError('timeout')``; the text collected so far is kept."""
        if self.deadline.expired():
            raise ExtractionError("timeout", f"stopped after {len(self.text)} characters")
