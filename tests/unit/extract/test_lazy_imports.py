"""Cold start: importing docindex.extract must not load any heavy library."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = [
    "pypdfium2",
    "lxml",
    "selectolax",
    "python_calamine",
    "charset_normalizer",
    "filetype",
    "reportlab",
    "PIL",
]


def _loaded_after(statement: str) -> list[str]:
    script = (
        "import json, sys\n"
        f"{statement}\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(heavy))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    loaded: list[str] = json.loads(result.stdout)
    return loaded


def test_importing_the_package_loads_nothing_heavy() -> None:
    assert _loaded_after("import docindex.extract") == []


def test_importing_samples_loads_nothing_heavy() -> None:
    assert _loaded_after("import devkit.samples") == []


def test_plain_text_extraction_stays_light() -> None:
    # A UTF-8 text file needs neither the PDF nor the Office libraries.
    statement = (
        "from docindex.extract import ExtractionLimits, extract\n"
        "assert extract('東京都'.encode(), 'a.txt', ExtractionLimits()).text == '東京都'"
    )
    assert _loaded_after(statement) == []


def test_each_format_loads_only_its_library() -> None:
    statement = (
        "from docindex.extract import ExtractionLimits, extract\n"
        "from devkit.samples import make_xlsx\n"
        "data = make_xlsx({'S': [['a']]})\n"
        "assert extract(data, 'a.xlsx', ExtractionLimits()).text == 'S\\na'"
    )
    assert _loaded_after(statement) == ["lxml", "python_calamine"]
