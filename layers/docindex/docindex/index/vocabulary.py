"""The company's search vocabulary: a kuromoji user dictionary and synonym sets.

One TOML file (``docindex/index/analysis.toml``, shipped with the package)
holds both, either inline (small sets) or as Amazon OpenSearch Service custom
package IDs (large ones). :func:`load` reads it, :func:`check` finds what a
cluster would reject or silently never match, before it reaches one; the
mapping (``docindex.index.mapping``) turns it into analysis settings and tries it on a
cluster (``try_on_cluster``).
"""

from __future__ import annotations

import csv
import functools
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docindex.text.width import normalize

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
        if normalize(surface) != surface:
            findings.warnings.append(
                f"{where}: text is width-normalized before the dictionary sees it; "
                f"write the surface as {normalize(surface)!r}"
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
            if normalize(term).lower() != term:
                findings.warnings.append(
                    f"{where}: {term!r} is normalized before matching; write it as {normalize(term).lower()!r}"
                )
            key = normalize(term).lower()
            if key in seen and seen[key] != number and len(sides) == 1:
                findings.warnings.append(f"{where}: {term!r} is also in set {seen[key]}; merge the sets")
            seen.setdefault(key, number)


# -- the synonyms on the query side ------------------------------------------------------------

# At most this many forms of one query are searched (the query as typed included).
MAX_QUERY_VARIANTS = 8
_ASCII_TERM = re.compile(r"^[0-9a-z][0-9a-z .&+-]*$")


def synonym_rules(vocabulary: Vocabulary) -> list[tuple[str, tuple[str, ...]]]:
    """(term, what it may also be written as) for every term of the synonym sets, normalized and lowercased.

    ``a, b, c`` makes each of the three stand for the other two; ``a, b => c`` makes ``a`` and
    ``b`` stand for ``c`` (one way), as the cluster's ``synonym_graph`` reads Solr rules.
    """
    rules: list[tuple[str, tuple[str, ...]]] = []
    for line in vocabulary.synonym_sets:
        sides = line.split("=>")
        if len(sides) > 2:
            continue
        terms = [normalize(t.strip()).lower() for t in sides[0].split(",") if t.strip()]
        if len(sides) == 2:
            targets = tuple(normalize(t.strip()).lower() for t in sides[1].split(",") if t.strip())
            rules += [(term, targets) for term in terms if targets]
        else:
            rules += [(term, tuple(t for t in terms if t != term)) for term in terms if len(terms) > 1]
    # Longest terms first: 見積書 is replaced before a shorter term inside it.
    return sorted(rules, key=lambda rule: -len(rule[0]))


@functools.lru_cache(maxsize=1)
def _shipped_rules() -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(synonym_rules(load()))


def query_variants(query: str, rules: Iterable[tuple[str, tuple[str, ...]]] | None = None) -> list[str]:
    """The query as typed, then the same query with synonym-set terms written the other ways.

    The cluster applies the same synonyms in its search analyzer; doing it here as well makes
    them hold on any engine (the local emulator ignores ``synonym_graph``), and only ever
    replaces a term by another *term of the vocabulary file*: what the user typed stays text
    for ``multi_match`` / ``simple_query_string``, never query syntax. ASCII terms match whole
    words (``pc`` is not inside ``epcot``), Japanese terms anywhere (no spaces between words).
    """
    base = query.lower()
    variants = [base]
    ordered = list(rules if rules is not None else _shipped_rules())
    vocabulary_terms = {t for term, others in ordered for t in (term, *others)}
    for term, others in ordered:
        longer = [t for t in vocabulary_terms if len(t) > len(term) and term in t]
        for current in list(variants):
            for start in _occurrences(current, term):
                if _inside_longer(current, start, term, longer):
                    continue  # 稟議 inside 稟議書 (or 代表 inside 代表取締役) is part of a longer term
                for other in others:
                    variant = current[:start] + other + current[start + len(term) :]
                    if variant not in variants:
                        variants.append(variant)
                    if len(variants) >= MAX_QUERY_VARIANTS:
                        return variants
                break  # the first occurrence of a term is enough
    return variants


def _inside_longer(text: str, start: int, term: str, longer: list[str]) -> bool:
    end = start + len(term)
    for other in longer:
        found = text.find(other)
        while found >= 0:
            if found <= start and end <= found + len(other):
                return True
            found = text.find(other, found + 1)
    return False


def _occurrences(text: str, term: str) -> Iterator[int]:
    start = text.find(term)
    while start >= 0:
        end = start + len(term)
        whole_word = (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum())
        if not _ASCII_TERM.match(term) or whole_word:
            yield start
        start = text.find(term, start + 1)
