"""Property: over generated hostile trees, the imported map never lets in anyone Windows refuses.

devkit/acl_oracle.py generates trees with every ACE type (allow, deny, callback, object, callback
object; mandatory labels, process trust labels and access filters in the SACL), flag (OI, CI, NP, IO,
ID), well-known SID (Everyone, Authenticated Users, BA, OWNER RIGHTS, asserted identity, CREATOR
OWNER, SYSTEM, an unmapped SID) and name shape (trailing and leading spaces, U+3000, NBSP, trailing
dots, brackets, prefixes of each other, files and folders of one name) and a mapping file for each
(the groups, and in half the trees lines that say more than the file server can: a universal trustee
— Everyone, Authenticated Users, NETWORK, BUILTIN\\Users, Domain Users — mapped to a group or to ``-``,
any trustee mapped to ``-``; issue 49), writes each as icacls /save,
Get-Acl JSON and CSV (Sddl), smbcacls and Get-Acl's Access rules do (that one with allows and denies
only, a NULL DACL as .NET shows it; a third as folders-only exports), and decides each (user, key)
with its own [MS-DTYP] 2.5.3.2 evaluator and Windows' inheritance: every file, a new file and a new
sub-folder's file in every folder, names that start with another's, and keys outside the export's
tree. Bounded and seeded here (200 trees); ``make bench`` (bench/acl_drift.py) runs thousands and
prints the counts.
"""

from __future__ import annotations

import pytest

from devkit import acl_oracle
from devkit.acl_oracle import BA, CI, IO, LEVELS, NP, OI, OW, SALES, USERS, Ace, Node, can_read, create, run

# Why Windows may let someone in that the map keeps out: each is a place the map cannot say who
# (owners, Administrators, unmapped SIDs, conditions) and takes the narrower side. Nothing else.
KNOWN_NARROWER = {
    "an allow for an identity the map cannot name (owner, BA, OW, AS, an unmapped SID)",
    "a deny for an identity the map cannot name (closes)",
    "a conditional or object allow",
    "an allow before a deny (the deny wins in the map)",
    "a conditional deny whose condition is false (the map denies)",
    "a no-read-up label an administrator's logon passes",
    "a NULL DACL",
    "an allow for a trustee a mapping line narrows (to '-', or a universal one to a group)",
}


def test_the_imported_map_never_allows_what_windows_denies() -> None:
    tally = run(range(40))
    assert tally.trees == 200
    assert tally.wider == [], tally.wider[:10]
    # not vacuous: many decisions, Windows allows a good share, and the map most of those
    assert tally.decisions > 10_000
    narrower = sum(tally.narrower.values())
    assert tally.windows_allows > 0.2 * tally.decisions
    assert narrower < 0.4 * tally.windows_allows
    # every place the map is narrower has a reason the docs list, for keys in the export and not
    assert set(tally.narrower_why) <= KNOWN_NARROWER, tally.examples.get("other")
    assert {"file", "new file", "new sub-folder's file"} <= set(tally.narrower)
    # and the generated mappings drew every kind of line the issue names
    assert {"universal -> -", "universal -> all-staff", "other -> -"} <= set(tally.mapping_lines)


def test_the_property_fails_when_a_mapping_line_narrows_a_deny(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an importer that takes a mapping line's word for denies too (as before issue 49): a trustee mapped to '-'
    # has its denies ignored, a universal trustee mapped to all-staff denies all-staff only
    from docindex.access.ntfs import principals

    def trusting(self: principals.Mapping, key: str, label: str, *, universal: bool) -> principals.Who:
        found = self.entries[key]
        return principals.Who(principals.MAPPED if found else principals.IGNORED, found, label, denies=found)

    monkeypatch.setattr(principals.Mapping, "_by_line", trusting)
    # Then the generated mappings show up as keys the map opens and Windows does not
    assert run(range(40)).wider


def test_the_property_fails_when_the_importer_drops_denies(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an importer that forgets deny ACEs (a bug of the kind the issue found)
    from docindex.access.ntfs import readers

    monkeypatch.setattr(readers._Walk, "deny", lambda self, ace: None)
    # Then the property run finds keys the map opens and Windows does not
    assert run(range(5)).wider


def test_the_property_fails_when_the_importer_ignores_trust_labels_and_access_filters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given an importer that reads the SACL's mandatory labels only (TL and FL set aside, as before)
    from docindex.access.ntfs import readers

    only_ml = readers.label_closes
    monkeypatch.setattr(readers, "label_closes", lambda labels: only_ml([a for a in labels if a.type == "ML"]))
    # Then the generated trees' trust labels and access filters show up as keys the map opens
    assert run(range(10), formats=("icacls",)).wider


def test_the_access_rules_format_is_held_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given Get-Acl's Access rules read without knowing how .NET shows a NULL DACL (as the reader once did)
    from docindex.access.ntfs import exports

    monkeypatch.setattr(exports, "_dotnet_null_dacl", lambda aces: False)
    # Then the generated NULL DACL folders show up as new files the map opens to everyone
    assert run(range(20), formats=("getacl-rules",)).wider


def test_the_oracle_decides_the_issues_examples_as_windows_does() -> None:
    sales, admin = next(u for u in USERS if u.name == "sales"), next(u for u in USERS if u.name == "sales-admin")
    root = create(None, Node((), True, "S-1-5-21-1-2-3-9", [Ace("A", OI | CI | NP, 0x1200A9, SALES)], protected=True))
    child = create(root, Node(("F",), True, "S-1-5-21-1-2-3-9"))
    assert can_read(create(root, Node(("x",), False, "o")), sales)  # NP reaches the folder's files
    assert not can_read(create(child, Node(("F", "x"), False, "o")), sales)  # not its sub-folders' files
    labelled = create(
        None,
        Node((), False, "o", [Ace("A", 0, 0x1200A9, SALES)], protected=True, labels=[Ace("ML", 0, 0x2, "HI")]),
    )
    assert not can_read(labelled, sales)
    assert can_read(labelled, admin)  # high integrity: an administrator's logon reads
    assert admin.integrity == LEVELS["HI"]
    owner = next(s for s in admin.sids if s.startswith(acl_oracle.DOMAIN + "-2"))
    owner_denied = [Ace("D", 0, 0x1, OW), Ace("A", 0, 0x1, SALES)]
    assert not can_read(create(None, Node((), False, owner, owner_denied, protected=True)), admin)  # OW: the owner
    assert can_read(create(None, Node((), False, "S-1-5-21-1-2-3-9", owner_denied, protected=True)), admin)
    admins_denied = [Ace("D", IO, 0x1, SALES), Ace("D", 0, 0x1, BA), Ace("A", 0, 0x1, SALES)]
    assert not can_read(create(None, Node((), False, "o", admins_denied, protected=True)), admin)
    assert can_read(create(None, Node((), False, "o", admins_denied, protected=True)), sales)  # IO: not this file
