"""The access map: who may read a key (allow, deny, inheritance, inherit: false, the admin default, everyone)."""

from __future__ import annotations

import json

import pytest

from docindex.access.policy import (
    EVERYONE,
    AccessGrant,
    AccessMapError,
    group_principal,
    parse_access_map,
    user_principal,
)

MAP = {
    "rules": [
        {"prefix": "", "allow": {"everyone": True}},
        {"prefix": "営業部/", "allow": {"groups": ["営業部"]}, "deny": {"users": ["退職者"]}},
        {"prefix": "営業部/機密/", "inherit": False, "allow": {"groups": ["営業部長"]}},
        {"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部"]}},
        {"prefix": "人事部/", "bucket": "hr-archive", "inherit": False, "allow": {"users": ["監査役"]}},
    ]
}
ADMINS = group_principal("docindex-admins")


def readers(key: str, bucket: str = "docs", data: dict | None = None) -> AccessGrant:  # type: ignore[type-arg]
    return parse_access_map(json.dumps(data or MAP, ensure_ascii=False), admin_group="docindex-admins").grant(
        bucket, key
    )


def test_rules_add_up_from_the_longest_prefix_and_inherit_from_their_parents() -> None:
    grant = readers("営業部/見積/A社.xlsx")
    assert set(grant.allow) == {EVERYONE, group_principal("営業部"), ADMINS}
    assert grant.deny == (user_principal("退職者"),)


def test_inherit_false_stops_the_walk_up() -> None:
    grant = readers("営業部/機密/価格表.xlsx")
    assert set(grant.allow) == {group_principal("営業部長"), ADMINS}  # not everyone, not 営業部
    assert grant.deny == ()  # the parent's deny is not inherited either
    assert not grant.permits([group_principal("営業部"), EVERYONE])
    assert grant.permits([group_principal("営業部長"), EVERYONE])


def test_deny_wins_over_allow() -> None:
    grant = readers("営業部/見積/A社.xlsx")
    assert grant.permits([group_principal("営業部"), EVERYONE])
    assert not grant.permits([group_principal("営業部"), EVERYONE, user_principal("退職者")])


def test_a_bucket_rule_wins_over_the_generic_rule_of_the_same_prefix() -> None:
    assert set(readers("人事部/評価.xlsx", bucket="hr-archive").allow) == {user_principal("監査役"), ADMINS}
    assert set(readers("人事部/評価.xlsx", bucket="docs").allow) == {group_principal("人事部"), ADMINS}


def test_a_key_no_rule_covers_is_for_the_administrators_only() -> None:
    grant = readers("経理/決算.xlsx", data={"rules": [{"prefix": "営業部/", "allow": {"groups": ["営業部"]}}]})
    assert grant.allow == (ADMINS,)
    assert grant.permits([ADMINS])
    assert not grant.permits([EVERYONE, group_principal("営業部")])


def test_the_restrictive_in_between_of_two_maps_gives_nothing_away() -> None:
    old = AccessGrant(allow=(EVERYONE, ADMINS))
    new = AccessGrant(allow=(group_principal("人事部"), ADMINS), deny=(user_principal("x"),))
    middle = old.restrictive_with(new)
    assert middle.allow == (ADMINS,)
    assert middle.deny == (user_principal("x"),)


@pytest.mark.parametrize(
    "bad",
    [
        {"rules": [{"prefix": "a/", "allow": ["営業部"]}]},
        {"rules": [{"prefix": "a/", "allow": {"teams": ["x"]}}]},
        {"rules": [{"prefix": "a/", "allow": {"everyone": "yes"}}]},
        {"rules": [{"prefix": "a/", "allow": {"groups": [""]}}]},
    ],
)
def test_a_malformed_map_is_refused_with_where(bad: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(AccessMapError, match="rules\\[0\\]"):
        parse_access_map(json.dumps(bad), admin_group="docindex-admins")


def test_an_exact_rule_is_for_its_key_only_and_subfolders_for_keys_below_the_folder() -> None:
    data = {
        "rules": [
            {"prefix": "", "inherit": False, "allow": {"everyone": True}},
            {"prefix": "人事部/規程.docx", "exact": True, "inherit": False, "allow": {"groups": ["営業部"]}},
            {
                "prefix": "提出/",
                "inherit": False,
                "allow": {"groups": ["人事部", "営業部"]},
                "subfolders": {"allow": {"groups": ["営業部"]}},
            },
        ],
        "covers": [{"prefix": ""}],
    }
    assert set(readers("人事部/規程.docx", data=data).allow) == {group_principal("営業部"), ADMINS}
    assert set(readers("人事部/規程.docx.bak", data=data).allow) == {EVERYONE, ADMINS}  # not a prefix
    both = {group_principal("人事部"), group_principal("営業部"), ADMINS}
    assert set(readers("提出/案.docx", data=data).allow) == both
    assert set(readers("提出/下書き/案.docx", data=data).allow) == {group_principal("営業部"), ADMINS}
    parsed = parse_access_map(json.dumps(data, ensure_ascii=False), admin_group="docindex-admins")
    from docindex.access.policy import to_json

    again = parse_access_map(to_json(parsed), admin_group="docindex-admins")
    assert again.version == parsed.version  # exact, subfolders and covers survive `access apply`'s JSON
    assert again.covers == parsed.covers
    with pytest.raises(AccessMapError, match="subfolders"):
        parse_access_map(json.dumps({"rules": [{"prefix": "a/", "subfolders": []}]}), admin_group="a")


def test_merging_an_imported_subtree_replaces_its_rules_and_leaves_the_rest() -> None:
    from docindex.access.policy import merged

    applied = parse_access_map(
        json.dumps(
            {
                "rules": [
                    {"prefix": "", "allow": {"everyone": True}},
                    {"prefix": "営業部/", "inherit": False, "allow": {"groups": ["営業部"]}},
                    {"prefix": "人事部/古い/", "allow": {"everyone": True}},
                ]
            },
            ensure_ascii=False,
        ),
        admin_group="docindex-admins",
    )
    imported = parse_access_map(
        json.dumps(
            {
                "rules": [{"prefix": "人事部/", "inherit": False, "allow": {"groups": ["人事部"]}}],
                "covers": [{"prefix": "人事部/"}],
            },
            ensure_ascii=False,
        ),
        admin_group="docindex-admins",
    )
    result = merged(applied, imported)
    assert sorted(r.prefix for r in result.rules) == ["", "人事部/", "営業部/"]  # 人事部/古い/ was under the subtree
    assert set(result.grant("docs", "人事部/古い/a.xlsx").allow) == {group_principal("人事部"), ADMINS}
    assert set(result.grant("docs", "営業部/a.xlsx").allow) == {group_principal("営業部"), ADMINS}
    with pytest.raises(AccessMapError, match="covers"):
        merged(applied, applied)
