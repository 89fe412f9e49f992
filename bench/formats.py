"""Extraction speed and peak memory per format: docs/s, MB/s, characters/s (``make bench`` runs it).

By default it measures the real-application corpus (tests/fixtures/real) and
a generated DOCX/PPTX of the same text for comparison. With ``--soffice`` it
first has LibreOffice write one long text (2000 paragraphs of a 就業規則) as
.doc/.docx/.rtf/.odt and one 50-slide deck as .ppt/.pptx/.odp, so legacy and
current formats are compared on identical content.

    .venv/bin/python -m bench.formats [--soffice] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

from devkit.legacy_samples import REAL
from docindex.extract import ExtractionLimits, extract

_FIXTURES = (
    "ringi.doc",
    "ringi.rtf",
    "ringi.odt",
    "gijiroku.ppt",
    "gijiroku.odp",
    "meibo.ods",
    "uchiawase.eml",
    "shiryou_cp932.zip",
    "apache-tika/testMSG_chinese.msg",
    "apache-tika/testMSG_att_doc.msg",
    "apache-tika/testRTFJapanese.rtf",
    # Excel's binary workbook (Apache Tika's test file, written by Excel; LibreOffice cannot write XLSB)
    "apache-tika/testEXCEL.xlsb",
)


def _same_text_corpus(workdir: Path) -> dict[str, bytes]:
    paragraphs = "".join(
        f"<text:p>第{i}条 従業員は、会社の定める就業規則を遵守し、誠実に職務を遂行しなければならない。"
        f"Employees shall comply with rule {i}.</text:p>"
        for i in range(2000)
    )
    text_ns = 'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    office_ns = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
    (workdir / "rules.fodt").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><office:document {office_ns} {text_ns} office:version="1.3" '
        f'office:mimetype="application/vnd.oasis.opendocument.text"><office:body><office:text>{paragraphs}'
        "</office:text></office:body></office:document>",
        encoding="utf-8",
    )
    slides = "".join(
        f'<draw:page draw:name="p{i}"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm">'
        f"<draw:text-box><text:p>第{i}回 営業会議の議題</text:p><text:p>売上は前年同期比で{i}パーセント増加した。"
        f"</text:p></draw:text-box></draw:frame></draw:page>"
        for i in range(50)
    )
    draw_ns = (
        'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
        'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
    )
    (workdir / "deck.fodp").write_text(
        f'<?xml version="1.0" encoding="UTF-8"?><office:document {office_ns} {text_ns} {draw_ns} office:version="1.3" '
        f'office:mimetype="application/vnd.oasis.opendocument.presentation"><office:body><office:presentation>'
        f"{slides}</office:presentation></office:body></office:document>",
        encoding="utf-8",
    )
    out = {}
    for source, targets in (("rules.fodt", ("doc", "docx", "rtf", "odt")), ("deck.fodp", ("ppt", "pptx", "odp"))):
        for target in targets:
            subprocess.run(  # noqa: S603 - the developer's own soffice on files written just above
                ["soffice", "--headless", "--convert-to", target, "--outdir", str(workdir), str(workdir / source)],  # noqa: S607
                check=True,
                capture_output=True,
                timeout=300,
            )
            name = Path(source).stem + "." + target
            out[name] = (workdir / name).read_bytes()
    return out


def _fixture_corpus() -> dict[str, bytes]:
    from devkit.samples import make_docx, make_pptx

    corpus = {name: (REAL / name).read_bytes() for name in _FIXTURES}
    paragraphs = [
        f"第{i}条 従業員は、会社の定める就業規則を遵守し、誠実に職務を遂行しなければならない。" for i in range(2000)
    ]
    corpus["generated.docx"] = make_docx(paragraphs)
    corpus["generated.pptx"] = make_pptx([f"第{i}回 営業会議の議題\n売上は{i}パーセント増加した。" for i in range(50)])
    return corpus


def measure(name: str, data: bytes, seconds: float) -> dict[str, object]:
    """Extract ``data`` repeatedly for about ``seconds``; rates and the peak Python memory of one extraction."""
    limits = ExtractionLimits()
    tracemalloc.start()
    doc = extract(data, name, limits)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    runs = 0
    started = time.perf_counter()
    while True:
        extract(data, name, limits)
        runs += 1
        elapsed = time.perf_counter() - started
        if elapsed >= seconds and runs >= 3:
            break
    per_doc = elapsed / runs
    return {
        "file": name,
        "kind": doc.kind,
        "error": doc.error,
        "bytes": len(data),
        "chars": len(doc.text),
        "docs_per_s": round(1 / per_doc, 1),
        "mb_per_s": round(len(data) / per_doc / 1e6, 1),
        "kchars_per_s": round(len(doc.text) / per_doc / 1000, 1),
        "peak_mib": round(peak / 2**20, 2),  # the Python heap of one extraction (tracemalloc)
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--soffice", action="store_true", help="also compare formats on identical text (LibreOffice)")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per file (default 1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    corpus = _fixture_corpus()
    if args.soffice:
        if shutil.which("soffice") is None:
            parser.error("soffice not found (apt-get install libreoffice-writer libreoffice-impress)")
        with tempfile.TemporaryDirectory() as tmp:
            corpus.update(_same_text_corpus(Path(tmp)))
    rows = [measure(name, data, args.seconds) for name, data in corpus.items()]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    header = f"{'file':36} {'kind':5} {'KB':>7} {'chars':>7} {'docs/s':>8} {'MB/s':>7} {'kchar/s':>8} {'peak MiB':>8}"
    print(header)
    for row in rows:
        print(
            f"{row['file']!s:36} {row['kind']!s:5} {int(row['bytes']) / 1024:7.0f} {row['chars']!s:>7} "  # type: ignore[call-overload]
            f"{row['docs_per_s']!s:>8} {row['mb_per_s']!s:>7} {row['kchars_per_s']!s:>8} {row['peak_mib']!s:>8}"
            + (f"  error={row['error']}" if row["error"] else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
