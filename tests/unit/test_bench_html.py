"""bench.html's judge of a correct HTML extractor: the ratio it reports is only as good as this."""

from __future__ import annotations

from bench.html import EXTRACTORS, judge, make_page


def test_docindex_is_judged_correct_and_flat_text_is_not() -> None:
    page = make_page(sections=2)
    for name, expected in (("docindex", True), ("lexbor_flat", False), ("resiliparse", True)):
        noise, sentences, rows = judge(page, EXTRACTORS[name][1](page.html))
        assert (not noise and sentences == 1.0 and rows == 1.0) is expected, (name, noise, sentences, rows)


def test_script_text_and_split_sentences_are_caught() -> None:
    page = make_page(sections=1)
    good = EXTRACTORS["docindex"][1](page.html)
    assert judge(page, good) == ([], 1.0, 1.0)
    noise, _, _ = judge(page, good + "\nvar v = 'スクリプト内文字列';")
    assert noise == ["スクリプト内文字列"]
    first = page.sentences[1]
    split = good.replace(first, first[:4] + "\n" + first[4:], 1)
    assert judge(page, split)[1] < 1.0
    cells = page.rows[1]
    assert judge(page, good.replace(f"{cells[0]}\t{cells[1]}", f"{cells[0]}\n{cells[1]}", 1))[2] < 1.0
