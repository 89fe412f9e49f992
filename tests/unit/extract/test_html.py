"""HTML: our own decoding (meta charset, then the cascade), visible text only."""

from __future__ import annotations

import pytest

from devkit.samples import HTML_NOISE_MARKERS, make_html
from docindex.extract import ExtractionLimits, extract
from docindex.extract.html import declared_charset

PARAGRAPHS = ["年末年始休業のお知らせ", "緊急連絡先：総務部 髙橋（内線①）", "山﨑 9:00～18:00"]


def test_shift_jis_label_with_cp932_characters(limits: ExtractionLimits) -> None:
    # Sites label pages Shift_JIS and write CP932 (①, 髙, 﨑, ～): a strict
    # shift_jis decode would fail and lose the rest of the page.
    data = make_html("お知らせ①", PARAGRAPHS, "cp932", charset_label="Shift_JIS")
    doc = extract(data, "お知らせ.html", limits)
    assert (doc.kind, doc.content_type, doc.encoding) == ("html", "text/html", "cp932")
    assert doc.title == "お知らせ①"
    assert doc.text.splitlines() == PARAGRAPHS


def test_invisible_elements_are_dropped(limits: ExtractionLimits) -> None:
    doc = extract(make_html("t", ["本文"], noise=True), "a.html", limits)
    assert doc.text == "本文"
    for marker in HTML_NOISE_MARKERS:
        assert marker not in doc.text


def test_invisible_elements_inside_each_other_are_dropped(limits: ExtractionLimits) -> None:
    # Inline SVG icons carry their own <style>, templates hold scripts, objects hold iframes and
    # noscript fallbacks: the outer and the inner element both match, and both must go (once).
    page = (
        "<html><body><p>前<svg><style>.a{fill:red}</style><text>図の文字</text></svg>後</p>"
        "<template><div><script>var t = 'テンプレート';</script></div></template>"
        "<object data='x.swf'><iframe src='y'></iframe><noscript>代替</noscript></object>"
        "<div><noscript><style>.n{}</style>無効時</noscript>本文<script>var s='スクリプト'</script></div>"
        "</body></html>"
    ).encode()
    doc = extract(page, "a.html", limits)
    assert doc.text.splitlines() == ["前後", "本文"]


@pytest.mark.parametrize("meta", ["charset", "http-equiv"])
def test_euc_jp_declared(limits: ExtractionLimits, meta: str) -> None:
    data = make_html("会議議事録", ["東京都の本社で開催"], "euc_jp", charset_label="EUC-JP", meta=meta)
    doc = extract(data, "a.htm", limits)
    assert (doc.encoding, doc.title, doc.text) == ("euc_jp", "会議議事録", "東京都の本社で開催")


def test_undeclared_cp932_is_sniffed(limits: ExtractionLimits) -> None:
    doc = extract(make_html("見積書", ["髙橋様 ①"], "cp932", charset_label=None), "a.html", limits)
    assert (doc.encoding, doc.text) == ("cp932", "髙橋様 ①")


def test_wrong_label_falls_back_to_the_cascade(limits: ExtractionLimits) -> None:
    # Declared Shift_JIS, actually UTF-8: the strict decode fails, the cascade finds UTF-8.
    doc = extract(make_html("見積書", ["東京都"], "utf-8", charset_label="Shift_JIS"), "a.html", limits)
    assert (doc.encoding, doc.text) == ("utf-8", "東京都")


def test_iso_8859_1_label_on_a_japanese_page(limits: ExtractionLimits) -> None:
    doc = extract(make_html("議事録", ["東京都の会議議事録"], "euc_jp", charset_label="iso-8859-1"), "a.html", limits)
    assert doc.text == "東京都の会議議事録"


def test_iso_2022_jp_page_labelled_utf8(limits: ExtractionLimits) -> None:
    doc = extract(make_html("会議", ["①東京都～"], "iso-2022-jp", charset_label="utf-8"), "a.html", limits)
    assert (doc.encoding, doc.title, doc.text) == ("iso-2022-jp", "会議", "①東京都～")


def test_blocks_lines_and_table_cells(limits: ExtractionLimits) -> None:
    data = make_html("t", ["一行目", "二行目 &amp; <b>"], table=[["品名", "数量"], ["ノートPC", "10"]])
    doc = extract(data, "a.html", limits)
    assert doc.text.splitlines() == ["一行目", "二行目 &amp; <b>", "品名・数量", "品名 ノートPC・数量 10"]


def test_inline_markup_does_not_split_words(limits: ExtractionLimits) -> None:
    html = "<html><body><p>東京<b>都</b>の<span>見積</span>書</p><div>a<br>b</div></body></html>"
    doc = extract(html.encode(), "a.html", limits)
    assert doc.text.splitlines() == ["東京都の見積書", "a", "b"]


def test_html_detected_from_content_despite_txt_name(limits: ExtractionLimits) -> None:
    doc = extract(make_html("題名", ["本文"]), "page.txt", limits)
    assert (doc.kind, doc.title, doc.text) == ("html", "題名", "本文")


def test_declared_charset_variants() -> None:
    assert declared_charset(b'<meta charset="Shift_JIS">') == "Shift_JIS"
    assert declared_charset(b"<meta http-equiv=Content-Type content='text/html; charset=euc-jp'>") == "euc-jp"
    assert declared_charset(b'<?xml version="1.0" encoding="Shift_JIS"?><html>') == "Shift_JIS"
    assert declared_charset(b"<html><body>no declaration</body></html>") is None
