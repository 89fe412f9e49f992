"""The company's search vocabulary: a kuromoji user dictionary and synonym sets.

One TOML file (``docindex/index/analysis.toml``, shipped with the package)
holds both, either inline (small sets) or as Amazon OpenSearch Service custom
package IDs (large ones). :func:`load` reads it, :func:`check` finds what a
cluster would reject or silently never match, before it reaches one; the
mapping (``docindex.index.mapping``) turns it into analysis settings.
"""

from __future__ import annotations

import csv
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_PATH = Path(__file__).with_name("analysis.toml")

# Amazon OpenSearch Service package IDs look like F123456789.
_PACKAGE_ID = re.compile(r"^F[0-9]{6,12}$")
_KATAKANA = re.compile(r"^[\u30a0-\u30ff]+$")
MAX_RULES = 10_000  # inline rules live in the index settings (cluster state); larger sets are packages


@dataclass(frozen=True)
class Vocabulary:
    """What the analysis config file says."""

    dictionary_rules: tuple[str, ...] = ()
    dictionary_package: str = ""
    synonym_sets: tuple[str, ...] = ()
    synonym_package: str = ""
    source: str = "(built in)"

    def tokenizer_options(self) -> dict[str, Any]:
        """The kuromoji tokenizer's user dictionary settings."""
        if self.dictionary_package:
            return {"user_dictionary": f"analyzers/{self.dictionary_package}"}
        if self.dictionary_rules:
            return {"user_dictionary_rules": list(self.dictionary_rules)}
        return {}

    def synonym_filter(self) -> dict[str, Any] | None:
        """The search analyzer's ``synonym_graph`` filter, or None without synonyms."""
        if self.synonym_package:
            # updateable: the package can be refreshed on the domain without a reindex.
            return {"type": "synonym_graph", "synonyms_path": f"analyzers/{self.synonym_package}", "updateable": True}
        if self.synonym_sets:
            # lenient: a rule the analyzer reduces to nothing is skipped, not a failed index creation.
            return {"type": "synonym_graph", "synonyms": list(self.synonym_sets), "lenient": True}
        return None


@dataclass
class Findings:
    """Problems found in a vocabulary: errors stop it from reaching a cluster, warnings do not."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


class VocabularyError(ValueError):
    """The analysis config file cannot be read."""


def load(path: Path | None = None) -> Vocabulary:
    """The vocabulary in ``path`` (default: the shipped ``analysis.toml``)."""
    path = path or DEFAULT_PATH
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise VocabularyError(f"{path}: {exc}") from exc
    unknown = set(raw) - {"user_dictionary", "synonyms"}
    if unknown:
        raise VocabularyError(f"{path}: unknown sections {sorted(unknown)} (user_dictionary, synonyms)")
    dictionary = raw.get("user_dictionary", {})
    synonyms = raw.get("synonyms", {})

    def strings(table: dict[str, Any], name: str) -> tuple[str, ...]:
        value = table.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise VocabularyError(f"{path}: {name} must be a list of strings")
        return tuple(v.strip() for v in value if v.strip() and not v.strip().startswith("#"))

    return Vocabulary(
        dictionary_rules=strings(dictionary, "rules"),
        dictionary_package=str(dictionary.get("package", "")).strip(),
        synonym_sets=strings(synonyms, "sets"),
        synonym_package=str(synonyms.get("package", "")).strip(),
        source=str(path),
    )


def _normalized(text: str) -> str:
    from docindex.index.mapping import normalize

    return normalize(text)


def check(vocabulary: Vocabulary) -> Findings:
    """Find what OpenSearch would reject (errors) or what would never match (warnings)."""
    findings = Findings()
    _check_packages(vocabulary, findings)
    _check_dictionary(vocabulary.dictionary_rules, findings)
    _check_synonyms(vocabulary.synonym_sets, findings)
    return findings


def _check_packages(vocabulary: Vocabulary, findings: Findings) -> None:
    for kind, package, inline in (
        ("user_dictionary", vocabulary.dictionary_package, vocabulary.dictionary_rules),
        ("synonyms", vocabulary.synonym_package, vocabulary.synonym_sets),
    ):
        if package and not _PACKAGE_ID.match(package):
            findings.errors.append(f"{kind}.package {package!r} is not a package ID (F followed by digits)")
        if package and inline:
            findings.errors.append(f"{kind}: both a package and inline entries; use one")
        if len(inline) > MAX_RULES:
            findings.errors.append(f"{kind}: {len(inline)} inline entries (max {MAX_RULES}); use a custom package")


def _check_dictionary(rules: tuple[str, ...], findings: Findings) -> None:
    seen: dict[str, int] = {}
    for number, rule in enumerate(rules, 1):
        where = f"user_dictionary rule {number} ({rule!r})"
        try:
            fields = next(csv.reader([rule]))
        except (csv.Error, StopIteration):
            findings.errors.append(f"{where}: not a CSV line")
            continue
        if len(fields) != 4:
            findings.errors.append(
                f"{where}: {len(fields)} fields; expected surface,segmentation,readings,part-of-speech"
            )
            continue
        surface, segmentation, readings, pos = (f.strip() for f in fields)
        segments, reading_parts = segmentation.split(), readings.split()
        if not surface or not segments or not reading_parts or not pos:
            findings.errors.append(f"{where}: an empty field")
            continue
        if "".join(segments) != surface:
            findings.errors.append(f"{where}: the segmentation {segmentation!r} does not spell the surface")
        if len(segments) != len(reading_parts):
            findings.errors.append(f"{where}: {len(segments)} segments but {len(reading_parts)} readings")
        if surface in seen:
            findings.errors.append(f"{where}: duplicate surface (also rule {seen[surface]})")
        seen.setdefault(surface, number)
        if _normalized(surface) != surface:
            findings.warnings.append(
                f"{where}: text is width-normalized before the dictionary sees it; "
                f"write the surface as {_normalized(surface)!r}"
            )
        if not all(_KATAKANA.match(part) for part in reading_parts):
            findings.warnings.append(f"{where}: readings are usually full-width katakana")


def _check_synonyms(sets: tuple[str, ...], findings: Findings) -> None:
    seen: dict[str, int] = {}
    for number, line in enumerate(sets, 1):
        where = f"synonym set {number} ({line!r})"
        sides = line.split("=>")
        if len(sides) > 2:
            findings.errors.append(f"{where}: more than one '=>'")
            continue
        terms = [t.strip() for side in sides for t in side.split(",")]
        if any(not t for t in terms):
            findings.errors.append(f"{where}: an empty term")
            continue
        if len(sides) == 1 and len(terms) < 2:
            findings.errors.append(f"{where}: one term is not a synonym set")
            continue
        for term in terms:
            if _normalized(term).lower() != term:
                findings.warnings.append(
                    f"{where}: {term!r} is normalized before matching; write it as {_normalized(term).lower()!r}"
                )
            key = _normalized(term).lower()
            if key in seen and seen[key] != number and len(sides) == 1:
                findings.warnings.append(f"{where}: {term!r} is also in set {seen[key]}; merge the sets")
            seen.setdefault(key, number)


def try_on_cluster(client: Any, vocabulary: Vocabulary) -> dict[str, Any]:
    """Create a throwaway index with the full settings on the cluster, analyze every entry, delete it.

    Index creation is where OpenSearch parses the user dictionary and the synonyms
    (a refusal raises); the tokens show what the search analyzer makes of each entry.
    """
    import uuid

    from docindex.index.mapping import create_index

    name = f"docindex-validate-{uuid.uuid4().hex[:12]}"
    analysis = create_index(client, name, vocabulary=vocabulary)
    try:
        texts = [rule.split(",", 1)[0] for rule in vocabulary.dictionary_rules]
        texts += [term.strip() for line in vocabulary.synonym_sets for term in re.split(r",|=>", line)]
        tokens: dict[str, list[str]] = {}
        for text in dict.fromkeys(t for t in texts if t):
            response = client.indices.analyze(index=name, body={"analyzer": "docindex_search", "text": text})
            tokens[text] = [t["token"] for t in response.get("tokens", [])]
        return {"analysis": analysis, "tokens": tokens}
    finally:
        client.indices.delete(index=name, ignore=[404])
