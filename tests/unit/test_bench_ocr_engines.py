"""bench.ocr_engines' judge of arm64 against x86 (``make check-ocr-arm64``): it fails only on what matters."""

from typing import Any

from bench.ocr_engines import ARM64, arm64_pages

TRUTH = "甲と乙は次のとおり契約を締結する。第一条　目的　本契約は業務の委託について定める。" * 3


def _files(*words: str) -> list[dict[str, Any]]:
    return [{"name": "page.png", "class": "upright", "pages": [{"truth": TRUTH, "words": list(words), "read": "ocr"}]}]


def _readings(x86: str, arm64: str, rotation: tuple[int, int] = (0, 0)) -> dict[str, Any]:
    def reading(text: str, turn: int) -> dict[str, Any]:
        page = {"text": text, "cpu": 1.0, "rotation": turn, "error": None}
        return {"files": {"page.png": {"pages": [page]}}}

    return {"ppocr": reading(x86, rotation[0]), ARM64: reading(arm64, rotation[1])}


def test_identical_text_passes() -> None:
    (row,) = arm64_pages(_files("契約"), _readings(TRUTH, TRUTH))
    assert row["identical"]
    assert row["problems"] == []
    assert row["found_arm64"] == ["契約"]


def test_one_character_apart_within_tolerance_passes_and_is_reported() -> None:
    # One character of 120 (0.008) read otherwise, no word lost: another float order, not a defect.
    arm64 = TRUTH.replace("乙", "己", 1)
    (row,) = arm64_pages(_files("契約"), _readings(TRUTH, arm64))
    assert not row["identical"]
    assert 0 < row["apart"] <= 0.01
    assert row["problems"] == []
    assert row["cer_x86"] == 0
    assert row["cer_arm64"] == row["apart"]


def test_a_lost_word_fails_even_within_tolerance() -> None:
    arm64 = TRUTH.replace("委託", "委記", 1).replace("委託", "委記")
    (row,) = arm64_pages(_files("委託"), _readings(TRUTH, arm64))
    assert row["lost"] == ["委託"]
    assert any("lost 委託" in problem for problem in row["problems"])


def test_text_beyond_tolerance_fails() -> None:
    arm64 = TRUTH[: len(TRUTH) // 2]
    (row,) = arm64_pages(_files(), _readings(TRUTH, arm64))
    assert row["apart"] > 0.01
    assert row["problems"]


def test_another_turn_fails() -> None:
    (row,) = arm64_pages(_files(), _readings(TRUTH, TRUTH, rotation=(90, 0)))
    assert row["identical"]
    assert row["problems"] == ["turned 90 on x86, 0 on arm64"]
