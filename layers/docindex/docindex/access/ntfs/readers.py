"""Who may read a file, from the DACL that applies to it, in docindex's principals.

Windows walks a DACL in order and the first ACE that decides ``FILE_READ_DATA`` for a SID in the
caller's token wins ([MS-DTYP] 2.5.3.2). docindex's map says per key which principals are allowed
and which denied, deny winning. The translation, always in the safe direction:

- an allow ACE whose rights include reading the content (``FILE_READ_DATA``, after mapping generic
  rights: ``GA``, ``GR``, ``FA``, ``FR``, modify, read & execute, ...) allows its trustee's
  principals; rights without it (write, traverse, delete, change permissions, read attributes)
  give nothing;
- a deny ACE that covers ``FILE_READ_DATA`` denies its trustee's principals, wherever it stands:
  an *explicit allow before an inherited deny*, which Windows honours, becomes a deny (reported);
- an unmapped trustee's allow is dropped; its deny (and a deny for CREATOR OWNER, whose owner a
  folder's ACL does not name, or for an identity people hold that docindex cannot name:
  Administrators, OWNER RIGHTS, the asserted identities, ...) closes the file to all but the
  administrators: it applies to people docindex cannot recognise (reported);
- the mapping file narrows allows only: a deny to a trustee it maps to ``-`` closes the file too (the
  line says nobody who searches holds it, which docindex cannot check: ``BU,-`` would open what Windows
  refuses every employee), and a deny to a universal trustee it maps to a group (``Everyone,all-staff``)
  denies everyone, as on Windows (both reported);
- a conditional (callback) allow is dropped, a conditional deny applies unconditionally (Windows
  denies when the condition is true or cannot be evaluated, [MS-DTYP] 2.4.4.17.3); an object ACE
  with GUIDs likewise (reported);
- a mandatory label with no-read-up above medium integrity (``S:(ML;;NR;;;HI)``) closes the file:
  a person's logon on the share is medium, an administrator's high (reported);
- a process trust label (``S:(TL;;0x1200a9;;;S-1-19-512-8192)``) or an access filter (``S:(FL;;...;;;WD;(cond))``)
  closes the file (reported): both only take rights away from what the DACL grants, and [MS-DTYP] defines
  neither (no TL or FL in its SDDL grammar, 2.5.1.1; of the SACL its access check, 2.5.3.2, reads the
  mandatory label, 2.5.3.3, and the scoped policy), so nothing published says their mask leaves a user's read
  alone: Windows restricts a caller below the label's trust level (every network logon) or whose filter
  condition fails, to what their mask means, which is not published (winnt.h and sddl.h name the types only);
- a NULL DACL (``D:NO_ACCESS_CONTROL``) on a file lets everyone read (reported); a folder's is not
  inherited (docindex.access.ntfs.importer closes what is created in it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from docindex.access.ntfs.principals import (
    CREATOR,
    EXCLUDED,
    IGNORED,
    MAPPED,
    UNMAPPED,
    UNNAMED,
    Mapping,
    Who,
    canonical,
)
from docindex.access.ntfs.sddl import ALLOW, DENY, Ace, Dacl, reads_data
from docindex.access.policy import EVERYONE

# Finding kinds. RESTRICTIVE ones are places where the map gives less than the file server.
UNMAPPED_ALLOW = "unmapped-allow"
UNMAPPED_DENY = "unmapped-deny"
CREATOR_OWNER = "creator-owner"
CONDITIONAL = "conditional-ace"
ALLOW_BEFORE_DENY = "allow-before-deny"
FILE_LEVEL = "file-level"
LIST_ONLY = "list-only"
IGNORED_ACCOUNTS = "ignored-accounts"
NULL_DACL = "null-dacl"  # a folder's: what is created in it does not inherit it (closed)
NULL_DACL_FILE = "null-dacl-file"  # a file's: everyone reads it
UNNAMED_DENY = "unnamed-deny"
IGNORED_TRUSTEE_DENY = "ignored-trustee-deny"  # a deny to a trustee the mapping file maps to '-': closes
UNIVERSAL_DENY = "universal-deny"  # a deny to a universal trustee the mapping file maps to a group: denies everyone
UNIVERSAL_MAPPING = "universal-mapping"  # a line mapping a universal trustee to anything but everyone (once a line)
INTEGRITY_LABEL = "integrity-label"
TRUST_LABEL = "trust-label"
ACCESS_FILTER = "access-filter"
MISSING_FOLDER = "missing-folder"
SHARED_GROUP = "shared-group"
ACCESS_RULES = "access-rules"  # an export of Get-Acl's Access rules: it cannot show what the Sddl shows
RESTRICTIVE = frozenset(
    {
        UNMAPPED_ALLOW,
        UNMAPPED_DENY,
        UNNAMED_DENY,
        IGNORED_TRUSTEE_DENY,
        CREATOR_OWNER,
        CONDITIONAL,
        ALLOW_BEFORE_DENY,
        LIST_ONLY,
        NULL_DACL,
        INTEGRITY_LABEL,
        TRUST_LABEL,
        ACCESS_FILTER,
        MISSING_FOLDER,
    }
)
NO_READ_UP = 0x2  # SYSTEM_MANDATORY_LABEL_NO_READ_UP
MEDIUM = 0x2000  # a person's logon on the share; an administrator's is high (0x3000)


@dataclass(frozen=True, slots=True)
class Readers:
    """Who may read, as docindex principals. ``closed``: nobody but the administrators (a deny docindex
    cannot attribute); ``allow`` and ``deny`` then say what the ACEs named, for the report."""

    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    closed: bool = False

    def normal(self) -> Readers:
        """The same access in one form: denied principals out of allow, ``everyone`` alone, nobody as empty."""
        if self.closed or EVERYONE in self.deny:
            return Readers()
        allow = self.allow - self.deny
        if EVERYONE in allow:
            allow = frozenset({EVERYONE})
        if not allow:
            return Readers()
        return Readers(allow=allow, deny=self.deny)

    def restrictive_with(self, other: Readers) -> Readers:
        """Allowed by both, denied by either."""
        a, b = self.normal(), other.normal()
        allow = (
            (a.allow & b.allow)
            | ({p for p in a.allow if EVERYONE in b.allow})
            | ({p for p in b.allow if EVERYONE in a.allow})
        )
        return Readers(allow=frozenset(allow), deny=a.deny | b.deny).normal()

    def permits(self, principals: Iterable[str]) -> bool:
        held = set(principals)
        n = self.normal()
        return bool(held & n.allow) and not (held & n.deny)


@dataclass(frozen=True, slots=True)
class Note:
    kind: str
    trustee: str = ""
    detail: str = ""


def _label_level(trustee: str) -> int | None:
    sid = canonical(trustee)
    tail = sid.removeprefix("S-1-16-")
    return int(tail) if sid.startswith("S-1-16-") and tail.isdigit() else None


# What the report says of a restricting SACL ACE that closes: (finding kind, detail)
_CLOSING = {
    "ML": (
        INTEGRITY_LABEL,
        "no-read-up above medium: a person's logon may not read, an administrator's may; only the administrators read",
    ),
    "TL": (
        TRUST_LABEL,
        "a process trust label limits every caller below its trust level (a person's logon on the share) to rights "
        "no specification names: only the administrators read",
    ),
    "FL": (
        ACCESS_FILTER,
        "an access filter limits every caller whose condition fails to rights no specification names: only the "
        "administrators read",
    ),
}


def label_closes(labels: Iterable[Ace]) -> Ace | None:
    """The SACL ACE that keeps a person's logon from reading, if any: a mandatory label with no-read-up above
    medium, any process trust label, any access filter."""
    for label in labels:
        if label.type in ("TL", "FL"):
            return label
        level = _label_level(label.trustee)
        if label.type == "ML" and label.mask & NO_READ_UP and (level is None or level > MEDIUM):
            return label
    return None


def readers_of(
    aces: Iterable[Ace], mapping: Mapping, *, null: bool = False, labels: Iterable[Ace] = ()
) -> tuple[Readers, list[Note]]:
    """Who may read a file these ACEs (and mandatory labels) apply to, in order, and what could not be
    represented exactly."""
    if null:
        readers, notes = Readers(allow=frozenset({EVERYONE})), [Note(NULL_DACL_FILE, detail="no DACL: everyone reads")]
    else:
        walk = _Walk(mapping)
        for ace in aces:
            if ace.kind in (ALLOW, DENY) and reads_data(ace.mask):
                (walk.allow if ace.kind == ALLOW else walk.deny)(ace)
        readers = Readers(allow=frozenset(walk.allowed), deny=frozenset(walk.denied), closed=walk.closed)
        notes = walk.notes
    label = label_closes(labels)
    if label is not None:
        kind, detail = _CLOSING[label.type]
        notes.append(Note(kind, mapping.who(label.trustee).label, detail))
        readers = Readers(allow=readers.allow, deny=readers.deny, closed=True)
    return readers, notes


class _Walk:
    def __init__(self, mapping: Mapping) -> None:
        self.mapping = mapping
        self.allowed: set[str] = set()
        self.denied: set[str] = set()
        self.closed = False
        self.notes: list[Note] = []

    def allow(self, ace: Ace) -> None:
        who = self.mapping.who(ace.trustee)
        if ace.conditional or ace.object_specific:
            self.notes.append(Note(CONDITIONAL, who.label, f"{ace.type} ACE not evaluated: its allow is dropped"))
        elif who.kind == MAPPED:
            self.allowed |= who.principals
        elif who.kind == UNMAPPED:
            self.notes.append(Note(UNMAPPED_ALLOW, who.label, "allow dropped"))
        elif who.kind == CREATOR or who.label.startswith("OWNER RIGHTS"):
            self.notes.append(
                Note(CREATOR_OWNER, who.label, "each file's owner may read it; the map cannot name owners")
            )
        else:
            self.notes.append(Note(IGNORED_ACCOUNTS, who.label))

    def deny(self, ace: Ace) -> None:
        who = self.mapping.who(ace.trustee)
        if ace.conditional or ace.object_specific:
            self.notes.append(Note(CONDITIONAL, who.label, f"{ace.type} ACE applied without its condition"))
        if who.kind == MAPPED:
            # Windows honours an allow that stands first: one for anyone, before a deny to everyone
            if self.allowed & who.denies or (self.allowed and (EVERYONE in self.allowed or EVERYONE in who.denies)):
                self.notes.append(
                    Note(ALLOW_BEFORE_DENY, who.label, "an allow stands before this deny; docindex denies")
                )
            self.denied |= who.denies
            if who.universal and EVERYONE not in who.principals:
                self.notes.append(Note(UNIVERSAL_DENY, who.label, _universal_deny(who)))
        elif who.kind == IGNORED:
            self.notes.append(Note(IGNORED_ACCOUNTS, who.label))
        else:
            self.closed = True
            kind = {CREATOR: CREATOR_OWNER, UNNAMED: UNNAMED_DENY, EXCLUDED: IGNORED_TRUSTEE_DENY}.get(
                who.kind, UNMAPPED_DENY
            )
            detail = "deny for people docindex cannot name: only the administrators read"
            if who.kind == EXCLUDED:
                detail = (
                    f"deny for a trustee {who.lines} maps to '-': docindex cannot check that nobody who searches "
                    "holds it, so only the administrators read"
                )
            self.notes.append(Note(kind, who.label, detail))


def _universal_deny(who: Who) -> str:
    mapped = ", ".join(sorted(who.principals))
    return (
        f"every person's logon holds it, and {who.lines} maps it to {mapped}: its deny denies everyone, "
        "as on the file server"
    )


def reaching_new_files(aces: Iterable[Ace], *, in_subfolder: bool = False) -> list[Ace]:
    """The ACEs a file created in this folder inherits, in order: those marked object-inherit; for a file in
    a sub-folder (created later, at any depth) only those not marked no-propagate ([MS-DTYP] 2.5.3.4: NP
    passes an ACE to the folder's children, not further)."""
    return [a for a in aces if a.object_inherit and not (in_subfolder and a.no_propagate)]


def file_aces_of_folder(dacl: Dacl) -> list[Ace]:
    """The ACEs a file created in this folder inherits: those marked object-inherit, in order."""
    return reaching_new_files(dacl.aces)


def own_aces(dacl: Dacl) -> list[Ace]:
    """The ACEs that apply to the object itself (not inherit-only)."""
    return [a for a in dacl.aces if not a.inherit_only]


def folder_listers(dacl: Dacl, mapping: Mapping) -> frozenset[str]:
    """Principals the folder's own ACEs let list it (``FILE_LIST_DIRECTORY``): allowed, and not denied
    by an ACE of the folder itself."""
    if dacl.null:
        return frozenset({EVERYONE})
    listing, _ = readers_of(own_aces(dacl), mapping)
    if EVERYONE in listing.deny:
        return frozenset()
    return listing.allow - listing.deny


__all__ = [
    "RESTRICTIVE",
    "UNMAPPED",
    "Note",
    "Readers",
    "file_aces_of_folder",
    "folder_listers",
    "own_aces",
    "readers_of",
]
