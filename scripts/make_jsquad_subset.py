"""Write bench/jsquad/jsquad-subset.json.gz from JSQuAD (yahoojapan/JGLUE, CC BY-SA 4.0): the answers' bench set.

    python scripts/make_jsquad_subset.py JGLUE_CHECKOUT [--commit 6f071c0]

Reads ``datasets/jsquad-v1.3/valid-v1.3.json`` of a JGLUE checkout (the train split's file is not in the public
snapshot this was made from; the **test split is never read**: it is kept for acceptance). Deterministic:

- six whole articles (titles) are held out: none of their paragraphs is indexed, so no indexed paragraph answers
  their questions — the unanswerable questions (three articles for calibration, three for the report);
- every paragraph of the other articles is a document, in a folder per article under six top folders;
- the indexed articles are split in two halves by title: questions of the first half calibrate the answers'
  rule, questions of the second are reported (docs/search-api.md): up to ``--per-paragraph`` questions each.

``--second-calibration``: also write ``bench/jsquad/jsquad-calibration2.json.gz``, questions only (set
``calibration2``): the next ``--second-per-paragraph`` questions of every calibration-half paragraph (ones
the subset did not take) and other questions of the calibration half's held-out articles - questions on the
same indexed files that no rule has been chosen on, to choose the next one without looking at the report half.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import subprocess  # nosec B404 - git, to read the dataset at a commit
from pathlib import Path

HELD_OUT = 6
FOLDERS = ("地理", "歴史", "社会", "科学", "文化", "人物")


def _rank(title: str) -> str:
    return hashlib.sha256(title.encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--commit", default="6f071c0")
    parser.add_argument("--per-paragraph", type=int, default=1)
    parser.add_argument("--unanswerable-per-article", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("bench/jsquad/jsquad-subset.json.gz"))
    parser.add_argument("--second-calibration", type=Path, default=None, metavar="OUT")
    parser.add_argument("--second-per-paragraph", type=int, default=2)
    args = parser.parse_args()
    raw = subprocess.run(  # noqa: S603  # nosec B603 - git with fixed arguments
        ["git", "-C", str(args.checkout), "show", f"{args.commit}:datasets/jsquad-v1.3/valid-v1.3.json"],  # noqa: S607
        check=True,
        capture_output=True,
    ).stdout
    articles = sorted(json.loads(raw)["data"], key=lambda a: _rank(a["title"]))
    held, indexed = articles[:HELD_OUT], articles[HELD_OUT:]
    documents, questions, second = [], [], []
    for number, article in enumerate(indexed):
        title = article["title"]
        half = "calibration" if number % 2 == 0 else "report"
        folder = FOLDERS[int(_rank(title)[:8], 16) % len(FOLDERS)]
        for p, paragraph in enumerate(article["paragraphs"]):
            context = paragraph["context"]
            head, _, body = context.partition(" [SEP] ")
            text = f"{head}\n{body}" if body else context
            key = f"百科/{folder}/{title}/{title} {p:03d}.txt"
            documents.append({"key": key, "text": text})
            taken = 0
            for qa in paragraph["qas"]:
                golds = sorted({a["text"] for a in qa["answers"] if a["text"] and a["text"] in text})
                if qa.get("is_impossible") or not golds or taken >= args.per_paragraph + args.second_per_paragraph:
                    continue
                question = {"q": qa["question"], "key": key, "answers": golds, "set": half, "id": qa["id"]}
                if taken < args.per_paragraph:
                    questions.append(question)
                elif half == "calibration":
                    second.append(question)
                taken += 1
    for number, article in enumerate(held):
        half = "calibration" if number % 2 == 0 else "report"
        asked = [qa for p in article["paragraphs"] for qa in p["qas"]]
        chosen = asked[::3][: args.unanswerable_per_article]
        questions += [{"q": qa["question"], "key": None, "answers": [], "set": half, "id": qa["id"]} for qa in chosen]
        if half == "calibration":
            others = asked[1::3][: args.unanswerable_per_article]
            second += [
                {"q": qa["question"], "key": None, "answers": [], "set": "calibration2", "id": qa["id"]}
                for qa in others
            ]
    body = {
        "source": "JSQuAD v1.3 (yahoojapan/JGLUE, datasets/jsquad-v1.3/valid-v1.3.json, commit " + args.commit + ")",
        "licence": "CC BY-SA 4.0",
        "held_out_titles": [a["title"] for a in held],
        "documents": documents,
        "questions": questions,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as out:
        json.dump(body, out, ensure_ascii=False, separators=(",", ":"))
    counts: dict[str, int] = {}
    for q in questions:
        name = q["set"] + (" unanswerable" if q["key"] is None else "")
        counts[name] = counts.get(name, 0) + 1
    print(f"{len(documents)} documents, {counts}, {args.out.stat().st_size:,} bytes")
    if args.second_calibration:
        write_second(args.second_calibration, body, second)


def write_second(path: Path, body: dict[str, object], questions: list[dict[str, object]]) -> None:
    """The ``calibration2`` questions, beside the subset whose documents they are asked of."""
    extra = {key: value for key, value in body.items() if key != "documents"}
    extra["questions"] = [q | {"set": "calibration2"} for q in questions]
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as out:
        json.dump(extra, out, ensure_ascii=False, separators=(",", ":"))
    answerable = sum(1 for q in questions if q["key"])
    print(f"{answerable} + {len(questions) - answerable} unanswerable calibration2 questions: {path}")


if __name__ == "__main__":
    main()
