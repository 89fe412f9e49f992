"""Index verdicts: the index exists, its mapping is the contract's, the cluster can take writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docindex.index.mapping import MAPPINGS
from docindex.index.names import NAMES_VERSION
from docindex.ops.diagnose.facts.services import IndexFacts
from docindex.ops.diagnose.report import Check, Status
from docindex.text.variants import NORMALIZATION_VERSION


def judge_index(facts: IndexFacts) -> Check:
    """FAIL when the index is missing, its mapping differs or the cluster is red; WARN without kuromoji."""
    index = facts.index
    evidence = [f"endpoint {facts.endpoint}, index {index}"]
    if not facts.exists:
        return Check(
            "index",
            "index and cluster",
            Status.FAIL,
            f"index or alias {index!r} does not exist",
            evidence,
            fix="the indexer creates it on its first batch; or create it with the mapping in docindex/index/mapping.py",
        )
    problems: list[str] = []
    warnings: list[str] = []
    for concrete, body in facts.mappings.items():
        evidence.append(f"concrete index {concrete}")
        mappings = body.get("mappings", {})
        problems += [f"{concrete}: {p}" for p in mapping_differences(mappings)]
        warnings += [f"{concrete}: {w}" for w in variants_warnings(mappings) + names_warnings(mappings)]
    for concrete, body in (facts.settings or {}).items():
        tokenizers = body.get("settings", {}).get("index", {}).get("analysis", {}).get("tokenizer", {})
        if not any(t.get("type") == "kuromoji_tokenizer" for t in tokenizers.values()):
            warnings.append(f"{concrete}: no kuromoji tokenizer (CJK bigram fallback): Japanese search is coarser")
    if facts.health is not None:
        status = str(facts.health.get("status"))
        evidence.append(
            f"cluster health {status}: {facts.health.get('number_of_nodes')} node(s), "
            f"{facts.health.get('unassigned_shards')} unassigned shard(s)"
        )
        if status == "red":
            problems.append("cluster health is red: some primary shards are unassigned, writes fail")
        elif status == "yellow":
            evidence.append("yellow: replicas unassigned (normal on a single node); reads and writes work")
    evidence.append(f"{facts.count} documents")
    if problems:
        return Check(
            "index",
            "index and cluster",
            Status.FAIL,
            "; ".join(problems[:3]),
            evidence + problems + warnings,
            fix="create a new index with the mapping of docindex/index/mapping.py, reindex, and move the alias "
            f"{index!r} to it (the pipeline writes through the alias)",
        )
    if warnings:
        return Check("index", "index and cluster", Status.WARN, "; ".join(warnings), evidence)
    return Check("index", "index and cluster", Status.OK, f"mapping matches, {facts.count} documents", evidence)


# Fields an index built by an older version lacks until `docindex reindex` rebuilds it: searches
# work without them (spelling variants are then found only where they are the spelling typed; a
# name search finds nothing).
REINDEX_FIELDS = ("variants", "names")


def variants_warnings(actual: Mapping[str, Any]) -> list[str]:
    """Why spelling variants (docs/search.md#spelling-variants) are not all found in this index."""
    if "variants" not in actual.get("properties", {}):
        return ["built before spelling variants (no `variants` field): run `docindex reindex`"]
    version = actual.get("_meta", {}).get("docindex", {}).get("variants")
    if version != NORMALIZATION_VERSION:
        return [
            f"spelling variants folded by normalization {version}, this version folds with "
            f"{NORMALIZATION_VERSION}: run `docindex reindex`"
        ]
    return []


def names_warnings(actual: Mapping[str, Any]) -> list[str]:
    """Why a name search (docs/search-api.md#name-search) does not find every file of this index."""
    if "names" not in actual.get("properties", {}):
        return ["built before name search (no `names` field: a name search finds nothing): run `docindex reindex`"]
    version = actual.get("_meta", {}).get("docindex", {}).get("names")
    if version != NAMES_VERSION:
        return [f"names indexed by version {version}, this version indexes {NAMES_VERSION}: run `docindex reindex`"]
    return []


def mapping_differences(actual: Mapping[str, Any], expected: Mapping[str, Any] = MAPPINGS) -> list[str]:
    """Fields of the contract's mapping that the index lacks or types differently."""
    problems = []
    props = actual.get("properties", {})
    for name, spec in expected.get("properties", {}).items():
        if name in REINDEX_FIELDS:
            continue  # a warning (variants_warnings), not a broken index
        have = props.get(name)
        if have is None:
            problems.append(f"field {name} is missing (expected {spec['type']})")
            continue
        if have.get("type", "object") != spec["type"]:
            problems.append(f"field {name} is {have.get('type', 'object')}, expected {spec['type']}")
        for sub, sub_spec in spec.get("fields", {}).items():
            sub_have = have.get("fields", {}).get(sub)
            if sub_have is None or sub_have.get("type") != sub_spec["type"]:
                problems.append(
                    f"field {name}.{sub} is {sub_have and sub_have.get('type')}, expected {sub_spec['type']}"
                )
    return problems
