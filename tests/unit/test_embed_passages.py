"""Passages: what one vector stands for (Japanese sentence ends, headings, pages, long sentences)."""

from __future__ import annotations

from docindex.embed.chunks import passages

REGULATION = """旅費精算規程

第1条（目的）
この規程は、社員が業務のため出張する場合の旅費の精算について定める。
第2条（申請）
出張者は、出張から帰った日から7日以内に、出張報告書とともに領収書を添えて経理部に申請しなければならない。なお、申請が遅れた場合は所属長の承認を要する。

Travel expenses must be claimed within 7 days. Receipts are required.
"""


def test_each_article_starts_a_passage_with_its_heading() -> None:
    found = passages(REGULATION, max_chars=80)
    texts = [p.text for p in found]
    # The title keeps the first article under it; the second article's heading starts a passage.
    # (its lines kept: a heading is a line of its own)
    assert texts[0].startswith("旅費精算規程\n第1条（目的）\nこの規程は")
    assert texts[1].startswith("第2条（申請）\n出張者は")
    assert texts[-1] == "Travel expenses must be claimed within 7 days. Receipts are required."


def test_passages_are_whole_sentences_within_the_size() -> None:
    found = passages(REGULATION, max_chars=80)
    for passage in found:
        assert len(passage.text) <= 80
        assert passage.text.endswith(("。", ".", "）"))
    # Offsets point back into the content.
    for passage in found:
        assert REGULATION[passage.start : passage.end].split(maxsplit=1)[0] == passage.text.split(maxsplit=1)[0]


def test_a_line_wrapped_mid_sentence_is_not_a_heading_and_is_joined_without_a_space() -> None:
    wrapped = "この文書は長い文で、PDFのテキスト層では行の途中で折り返されて\nいるので、見出しと間違えない。\n"
    (only,) = passages(wrapped)
    assert only.text == "この文書は長い文で、PDFのテキスト層では行の途中で折り返されているので、見出しと間違えない。"


def test_a_sentence_longer_than_a_passage_is_cut_at_a_comma() -> None:
    sentence = "、".join(["経費の精算は所定の様式で行う"] * 40) + "。"
    found = passages(sentence, max_chars=100)
    assert len(found) > 1
    assert all(len(p.text) <= 100 for p in found)
    assert all(p.text.endswith(("、", "。")) for p in found)
    assert "".join(p.text for p in found) == sentence


def test_a_passage_never_spans_two_pages_and_knows_its_page() -> None:
    content = "一ページ目の文。続きの文。\n\n二ページ目の文。"
    second = content.index("二")
    found = passages(content, page_starts=[0, second])
    assert [(p.page, p.text) for p in found] == [(1, "一ページ目の文。続きの文。"), (2, "二ページ目の文。")]


def test_at_most_max_passages_and_nothing_for_blank_text() -> None:
    text = "\n\n".join(f"段落{i}の文。" for i in range(50))
    assert len(passages(text, max_passages=5)) == 5
    assert passages("  \n\n \u3000 ") == []
