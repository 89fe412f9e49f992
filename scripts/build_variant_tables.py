#!/usr/bin/env python3
"""Build docindex's spelling-variant tables from their published sources.

    scripts/build_variant_tables.py --unihan DIR --unihan-12 FILE --opencc FILE --sudachi-synonyms FILE

writes ``layers/docindex/docindex/text/data/kanji_variants.tsv`` and ``word_variants.tsv``
(the sources, their versions and licences: ``layers/docindex/docindex/text/data/NOTICE.md``).

- ``--unihan DIR``: the Unihan field files of unicode-org/unicodetools
  (``unicodetools/data/ucd/dev/Unihan/``: kJapaneseNewVariant.txt, kJinmeiyoKanji.txt,
  kJoyoKanji.txt, kZVariant.txt, kSemanticVariant.txt, kJis0.txt, kJis1.txt, kJIS0213.txt,
  kIBMJapan.txt).
- ``--unihan-12 FILE``: ``Unihan_Variants.txt`` of Unicode 12.1 (``unicodetools/data/ucd/12.1.0-Update/
  Unihan/``), the last Unihan with the full ``kZVariant`` field (2,560 entries; 13.0 kept 123).
- ``--opencc FILE``: OpenCC's ``JPShinjitaiCharactersRev.txt`` (old Japanese forms to new).
- ``--sudachi-synonyms FILE``: SudachiDict's ``src/main/text/synonyms.txt``.

Kanji: an old or variant form becomes the standard form (Jōyō or Jinmeiyō kanji). Taken as they
are: Unihan's kJapaneseNewVariant and kJinmeiyoKanji variant mappings and OpenCC's table (first
target). Taken from kZVariant/kSemanticVariant only when the source is a character of a
Japanese character set (JIS X 0208/0212/0213, IBM extensions) that is neither Jōyō nor
Jinmeiyō, and exactly one of its variants is standard (or exactly one Morohashi calls the same
character, ``:Z``); kSemanticVariant only for the IBM extensions (Chinese usage makes 吃/喫 or
鯰/鮎 "semantic variants" that Japanese keeps apart): 髙 → 高, 﨑 → 崎. Last, a Japanese character
still without a standard form whose Unicode 12.1 kZVariant was an old form the table already maps
(邉 → 邊 → 辺, 劔 → 劍 → 剣, 圀 → 國 → 国), when the two share a Japanese on reading (kJapaneseOn:
this drops 12.1's entries of another word, 尨/龍 or 坯/壞). Unicode 13 withdrew most of 12.1's
kZVariant entries because many were semantic, not glyph, variants in Chinese usage (吃/喫); through
an old form that Japanese data already calls one, only the glyph variants of names pass. A standard
character is never rewritten.

Words: SudachiDict's synonym groups; within one lexeme and word form, each *different spelling*
(表記揺れ 2) of a noun (体言) becomes the representative spelling (0). Skipped: verbs and
adjectives (conjugation; 亡くなる/なくなる mixes words), entries that must not trigger an
expansion, spellings claimed by two representatives, pairs the character fold already makes
equal, one-letter spellings and spellings with digits (both would rewrite other words: 守 → 守り
inside 保守, 1度 → 一度 inside 21度). Both sides go through ``fold_characters`` (the table matches folded text).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "layers" / "docindex" / "docindex" / "text" / "data"


def _codepoints(value: str) -> list[str]:
    return [chr(int(code[2:].split("<")[0], 16)) for code in value.split() if code.startswith("U+")]


def _field(directory: Path, name: str) -> dict[str, str]:
    """A Unihan field file (``XXXX<TAB>value``, with ``XXXX..YYYY`` ranges) as char -> value."""
    values: dict[str, str] = {}
    for line in (directory / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        codes, value = line.split("\t", 1)
        first, _, last = codes.partition("..")
        for code in range(int(first, 16), int(last or first, 16) + 1):
            values[chr(code)] = value
    return values


def _glyphs_of_old_forms(unihan: Path, unihan_12: Path, sources: set[str], table: dict[str, str]) -> dict[str, str]:
    """Unicode 12.1's kZVariant, only through an old form ``table`` maps, and only with a shared on reading."""
    withdrawn: dict[str, list[str]] = defaultdict(list)
    for line in unihan_12.read_text(encoding="utf-8").splitlines():
        if line.startswith("U+"):
            code, field, value = line.split("\t")
            if field == "kZVariant":
                withdrawn[chr(int(code[2:], 16))].extend(_codepoints(value))
    readings = {c: set(v.split()) for c, v in _field(unihan, "kJapaneseOn").items()}
    found: dict[str, str] = {}
    for source in sorted(sources):
        on = readings.get(source, set())
        old_forms = [t for t in withdrawn.get(source, []) if t in table and on & readings.get(t, set())]
        if len({table[t] for t in old_forms}) == 1:
            found[source] = table[old_forms[0]]
    return found


def kanji_table(unihan: Path, unihan_12: Path, opencc: Path) -> dict[str, str]:
    joyo, jinmeiyo = _field(unihan, "kJoyoKanji"), _field(unihan, "kJinmeiyoKanji")
    standard = {c for c, v in joyo.items() if ":" not in v} | {c for c, v in jinmeiyo.items() if ":" not in v}
    japanese = set(_field(unihan, "kJis0")) | set(_field(unihan, "kJis1")) | set(_field(unihan, "kJIS0213"))
    japanese |= set(_field(unihan, "kIBMJapan"))
    table: dict[str, str] = {}
    conflicts: list[str] = []

    def add(source: str, target: str, why: str) -> None:
        if source == target or source in standard or target not in standard:
            return
        if table.setdefault(source, target) != target:
            conflicts.append(f"{source} -> {table[source]} / {target} ({why})")

    for source, value in _field(unihan, "kJapaneseNewVariant").items():
        for target in _codepoints(value)[:1]:
            add(source, target, "kJapaneseNewVariant")
    for table_name in ("kJinmeiyoKanji", "kJoyoKanji"):
        for source, value in _field(unihan, table_name).items():
            for target in _codepoints(value.split(":", 1)[1] if ":" in value else ""):
                add(source, target, table_name)
    for line in opencc.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            source, targets = line.split("\t")
            add(source, targets.split()[0], "OpenCC")
    # Unihan's kZVariant (the same character, another glyph) for any Japanese character; its
    # kSemanticVariant (interchangeable in Chinese usage: 吃/喫, 鯰/鮎 differ in Japanese) only for
    # the IBM extensions of Windows' code page 932, which are Japanese name forms (髙, 﨑).
    zvariants, semantic = _field(unihan, "kZVariant"), _field(unihan, "kSemanticVariant")
    ibm = set(_field(unihan, "kIBMJapan"))
    for source in sorted(japanese - standard - set(table)):
        values = zvariants.get(source, "") + (f" {semantic.get(source, '')}" if source in ibm else "")
        candidates = sorted({table.get(t, t) for t in _codepoints(values)} & standard)
        same = sorted({table.get(c, c) for c in _codepoints(" ".join(v for v in values.split() if ":Z" in v))})
        if len(candidates) == 1:
            add(source, candidates[0], "Unihan variant")
        elif len(set(same) & set(candidates)) == 1:
            add(source, (set(same) & set(candidates)).pop(), "Unihan variant (Morohashi: the same character)")
    for source, target in _glyphs_of_old_forms(unihan, unihan_12, japanese - standard - set(table), table).items():
        add(source, target, "Unicode 12.1 kZVariant of an old form")
    for line in conflicts:
        print(f"kanji conflict, first kept: {line}", file=sys.stderr)
    return dict(sorted(table.items()))


def word_table(synonyms: Path) -> dict[str, str]:
    from docindex.text.variants import fold_characters

    groups: dict[tuple[str, ...], list[list[str]]] = defaultdict(list)
    with synonyms.open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle):
            if len(row) < 9 or row[2] == "2" or row[1] != "1":
                continue
            group, _, _, lexeme, form, abbreviation = row[:6]
            groups[(group, lexeme, form, abbreviation)].append(row)
    claims: dict[str, set[str]] = defaultdict(set)
    for rows in groups.values():
        representatives = [r[8] for r in rows if r[6] == "0"]
        if len(representatives) != 1:
            continue
        target = fold_characters(representatives[0])
        for row in rows:
            if row[6] == "2" and row[2] != "1":
                source = fold_characters(row[8])
                # One letter (守 → 守り would rewrite 保守) and numbers (1度 → 一度 inside 21度)
                # are no spelling of a whole word once they sit inside running text.
                if len(source) < 2 or re.search("[0-9]", source + target) or source == target:
                    continue
                if re.search("[\u3041-\u30fa\u3400-\u9fff]", source):
                    claims[source].add(target)
    table = {source: next(iter(targets)) for source, targets in claims.items() if len(targets) == 1}
    # A representative that is itself another group's spelling: follow it to the end.
    for source in list(table):
        seen = {source}
        while table[source] in table and table[source] not in seen:
            seen.add(table[source])
            table[source] = table[table[source]]
    return dict(sorted((s, t) for s, t in table.items() if s != t))


HEADER = """# {what}
# Generated by scripts/build_variant_tables.py from {sources}; do not edit by hand.
# Sources, versions and licences: NOTICE.md in this folder.
# source<TAB>target
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--unihan", type=Path, required=True)
    parser.add_argument("--unihan-12", type=Path, required=True)
    parser.add_argument("--opencc", type=Path, required=True)
    parser.add_argument("--sudachi-synonyms", type=Path, required=True)
    args = parser.parse_args(argv)
    DATA.mkdir(parents=True, exist_ok=True)
    kanji = kanji_table(args.unihan, args.unihan_12, args.opencc)
    (DATA / "kanji_variants.tsv").write_text(
        HEADER.format(what="Old and variant kanji forms -> the standard form", sources="Unihan and OpenCC")
        + "".join(f"{s}\t{t}\n" for s, t in kanji.items()),
        encoding="utf-8",
    )
    # The word table matches text the kanji table has already folded: build it with the new one.
    from docindex.text import variants

    variants._kanji_table.cache_clear()
    words = word_table(args.sudachi_synonyms)
    (DATA / "word_variants.tsv").write_text(
        HEADER.format(what="Words written several ways -> the representative spelling", sources="SudachiDict")
        + "".join(f"{s}\t{t}\n" for s, t in words.items()),
        encoding="utf-8",
    )
    print(f"kanji_variants.tsv: {len(kanji)} characters; word_variants.tsv: {len(words)} spellings")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "layers" / "docindex"))
    raise SystemExit(main())
