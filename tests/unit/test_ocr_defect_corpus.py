"""The OCR defect corpus (tests/fixtures/ocr) is what its manifest says, and the CER arithmetic is right."""

from __future__ import annotations

from devkit.ocr_defects import FIXTURES, load_manifest
from devkit.samples.accuracy import char_accuracy, char_errors


def test_every_fixture_is_in_the_manifest_and_every_entry_has_its_file() -> None:
    listed = {entry.name for entry in load_manifest()}
    on_disk = {path.name for path in FIXTURES.iterdir()} - {"README.md", "manifest.json"}
    assert listed == on_disk


def test_fixtures_are_small_and_named_with_their_source_in_the_readme() -> None:
    for entry in load_manifest():
        assert entry.path.stat().st_size < 200 * 1024, entry.name
        assert entry.pages, entry.name
        assert f"`{entry.name}`" in (FIXTURES / "README.md").read_text(encoding="utf-8"), entry.name


def test_char_errors_counts_edits_after_nfkc_without_whitespace() -> None:
    assert char_errors("健康 診断", "健康診断") == (0, 4)
    assert char_errors("ＡＢＣ", "abc") == (3, 3)  # NFKC folds width, not case
    assert char_errors("健康診断", "健康珍断X") == (2, 4)
    assert char_errors("", "noise") == (5, 0)
    assert char_accuracy("健康診断", "健康珍断") == 0.75
    assert char_accuracy("", "") == 1.0
