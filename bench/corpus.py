"""The benchmark corpus: deterministic documents shaped like an office file server.

Everything is generated at run time from a fixed seed with the sample
generators of ``devkit.samples`` (plus embedded "photos" to reach
realistic file sizes) and cached under ``bench/corpus/`` (gitignored). The
same ``(seed, docs)`` always gives the same bytes, and document ``i`` does
not depend on how many documents were asked for, so a 50-document run is a
prefix of the 300-document one.

Mix (per block of 20 documents, shuffled within the block): 8 PDF (text
layer, 1-50 pages), 5 DOCX, 3 XLSX, 2 PPTX, 2 text (TXT / CSV / HTML, UTF-8
or Shift_JIS), i.e. 40/25/15/10/10 %. Sizes range from 10 KB to 5 MB: the
text amount is drawn per document, then files whose target size (log-normal,
median 120 KB, sigma 1.6) exceeds their text are filled up with incompressible JPEG
"photos" (pictures in PDFs and Office files), as on a real file server
where the big files are big because of images, not text.

Separate sets: ``warmup`` (one of each kind, processed before anything is
timed), ``large`` (10 PDFs of about 20 MB: a text layer on every page plus a
photo, for the memory figure) and ``scans`` (image-only Japanese pages with
their ground truth, for the OCR figure).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import random
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

CORPUS_VERSION = 1
DEFAULT_SEED = 20240401
KB = 1024
MB = 1024 * 1024
MIN_BYTES = 10 * KB
MAX_BYTES = 5 * MB

# One block of 20 documents: the mix the issue asks for.
BLOCK = ["pdf"] * 8 + ["docx"] * 5 + ["xlsx"] * 3 + ["pptx"] * 2 + ["text"] * 2

_ORGS = [
    "営業部",
    "総務部",
    "経理部",
    "人事部",
    "開発部",
    "経営企画部",
    "法務部",
    "品質保証部",
    "購買部",
    "情報システム部",
]
_PLACES = ["東京都", "大阪府", "名古屋市", "福岡県", "札幌市", "横浜市", "京都府", "仙台市", "広島県", "神戸市"]
_PEOPLE = ["髙橋", "山﨑", "佐藤", "鈴木", "田中", "伊藤", "渡辺", "中村", "小林", "加藤", "吉田", "山本"]
_ITEMS = ["ノートPC", "複合機", "サーバー", "ソフトウェア保守", "オフィス家具", "物流委託", "広告出稿", "研修費用"]
_TOPICS = ["売上", "予算", "見積", "契約更新", "品質改善", "業務委託", "採用計画", "設備投資", "顧客満足度", "在庫"]
_DOC_NAMES = ["報告書", "議事録", "見積書", "請求書", "契約書", "提案書", "仕様書", "手順書", "計画書", "稟議書"]
_JA_TEMPLATES = [
    "{org}は{year}年度第{q}四半期の{topic}について、前年同期比{pct}%の{trend}となったことを報告します。",
    "{place}の拠点では{item}の導入が完了し、{person}が運用手順を取りまとめました。",
    "次回の定例会議は{month}月{day}日に本社第{room}会議室で開催し、{topic}の進捗を確認する。",
    "{person}より、{item}の単価を{price}円とする見積が提出され、{org}で検討することとなった。",
    "本件の対応期限は{month}月{day}日です。不明点は{org}の{person}（内線{ext}）までご連絡ください。",
    "{topic}に関する課題として、{place}での作業手順の標準化と教育体制の整備が挙げられる。",
    "契約期間は{year}年{month}月1日から1年間とし、双方から申し出がない場合は自動更新とする。",
    "①{topic}の現状分析　②{item}の費用対効果　③今後の対応方針について説明を行った。",
    "顧客からの問い合わせは前月比{pct}件増加しており、{org}では対応人員の増強を計画している。",
    "以上の結果から、{place}における{topic}は概ね計画どおり推移していると判断する。",
]
_EN_TEMPLATES = [
    "Quarterly revenue in {place_en} grew by {pct} percent compared with the same period last year.",
    "The {dept} team completed the rollout of the new {item_en} and documented the operating procedure.",
    "Action items: review the {topic_en} budget, confirm the vendor quote and report back by {month}/{day}.",
    "The contract renews automatically for one year unless either party gives notice in writing.",
    "Customer inquiries increased by {pct} cases month over month; additional staff are being planned.",
]
_PLACES_EN = ["Tokyo", "Osaka", "Nagoya", "Fukuoka", "Sapporo", "Yokohama", "Kyoto", "Sendai"]
_DEPTS_EN = ["sales", "finance", "legal", "engineering", "procurement", "support"]
_ITEMS_EN = ["document management system", "printer fleet", "VPN gateway", "expense tool", "CRM"]
_TOPICS_EN = ["marketing", "hiring", "infrastructure", "training", "facilities"]


@dataclass(frozen=True)
class Doc:
    """One corpus file: where it goes in the bucket and what it is."""

    key: str
    kind: str  # pdf, docx, xlsx, pptx, text (txt/csv/html)
    fmt: str  # the file's own format: pdf, docx, xlsx, pptx, txt, csv, html
    size: int
    path: str  # relative to the corpus directory
    pages: int = 0  # PDF pages / slides / sheets rows, for the record
    lang: str = "ja"
    encoding: str = ""

    def read(self, root: Path) -> bytes:
        return (root / self.path).read_bytes()


@dataclass(frozen=True)
class Scan:
    """A scanned page set for the OCR figure, with the text printed on it."""

    key: str
    fmt: str  # pdf or png
    pages: int
    dpi: int
    size: int
    path: str
    truth: list[str]


# ----------------------------------------------------------------------------- text


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        org=rng.choice(_ORGS),
        place=rng.choice(_PLACES),
        person=rng.choice(_PEOPLE),
        item=rng.choice(_ITEMS),
        topic=rng.choice(_TOPICS),
        year=rng.randint(2019, 2025),
        q=rng.randint(1, 4),
        pct=rng.randint(1, 40),
        trend=rng.choice(["増加", "減少", "横ばい"]),
        month=rng.randint(1, 12),
        day=rng.randint(1, 28),
        room=rng.randint(1, 9),
        price=f"{rng.randint(1, 999) * 1000:,}",
        ext=rng.randint(100, 999),
        place_en=rng.choice(_PLACES_EN),
        dept=rng.choice(_DEPTS_EN),
        item_en=rng.choice(_ITEMS_EN),
        topic_en=rng.choice(_TOPICS_EN),
    )


def sentences(rng: random.Random, chars: int, lang: str) -> list[str]:
    """Paragraph-sized sentences totalling about ``chars`` characters (mostly Japanese, some English)."""
    out: list[str] = []
    total = 0
    while total < chars:
        english = lang == "en" or rng.random() < 0.08
        text = _fill(rng, rng.choice(_EN_TEMPLATES if english else _JA_TEMPLATES))
        out.append(text)
        total += len(text)
    return out


def _title(rng: random.Random, lang: str) -> str:
    if lang == "en":
        kind = rng.choice(["report", "minutes", "proposal", "plan"])
        return f"{rng.choice(_DEPTS_EN).title()} {kind} {rng.randint(1, 999)}"
    return f"{rng.randint(2019, 2025)}年度 {rng.choice(_TOPICS)}{rng.choice(_DOC_NAMES)}"


# ----------------------------------------------------------------------------- photos


def photo(rng: random.Random, nbytes: int) -> bytes:
    """An incompressible JPEG of roughly ``nbytes`` (noise: what a photo costs to store, not to read)."""
    from PIL import Image

    pixels = max(64 * 64, int(nbytes / 0.285))  # noise at quality 88, 4:2:0: ~0.285 bytes per RGB pixel sample
    side = max(64, int(math.sqrt(pixels / 3)))
    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=88)
    return buf.getvalue()


def _photos(rng: random.Random, target: int, plain: int, count: int) -> list[bytes]:
    """Photos making a file of ``plain`` bytes about ``target`` bytes (and at least ``MIN_BYTES``)."""
    nbytes = max(target, MIN_BYTES + 2 * KB) - plain
    if nbytes <= 0:
        return []
    count = max(1, min(count, nbytes // (8 * KB)))
    return [photo(rng, nbytes // count) for _ in range(count)]


def _zip_add(package: bytes, members: Sequence[tuple[str, bytes]]) -> bytes:
    """Add stored members (pictures under the package's media folder) to an OOXML zip, deterministically."""
    buf = io.BytesIO(package)
    with zipfile.ZipFile(buf, "a") as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2024, 4, 1, 9, 0, 0))
            info.compress_type = zipfile.ZIP_STORED  # JPEGs do not deflate
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


# ----------------------------------------------------------------------------- PDF


def pdf_with_photos(pages: Sequence[str], title: str, photos: Sequence[bytes]) -> bytes:
    """A text PDF (built-in Japanese CID font, like ``samples.make_pdf``) with a photo on some pages."""
    from reportlab import rl_config

    from devkit.samples.pdf import register_cid_font

    font, size = "HeiseiKakuGo-W5", 10.5
    register_cid_font(font)
    # Binary streams, as PDF writers store photos (reportlab's default ASCII85 adds 25 %).
    use_a85, rl_config.useA85 = rl_config.useA85, 0
    try:
        return _pdf_pages(pages, title, photos, font, size)
    finally:
        rl_config.useA85 = use_a85


def _pdf_pages(pages: Sequence[str], title: str, photos: Sequence[bytes], font: str, size: float) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    from devkit.samples.pdf import wrap_text

    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4, invariant=1)
    pdf.setAuthor("docindex bench")
    pdf.setCreator("docindex bench")
    pdf.setTitle(title)
    width, height = A4
    margin = 56.0
    for number, text in enumerate(pages):
        block = pdf.beginText(margin, height - margin - size)
        block.setFont(font, size, size * 1.6)
        for line in wrap_text(text, font, size, width - 2 * margin):
            block.textLine(line)
        pdf.drawText(block)
        if number < len(photos):
            # Each photo is distinct bytes: reportlab would store a repeated image once.
            pdf.drawImage(ImageReader(io.BytesIO(photos[number])), margin, margin, width=200, height=150)
        pdf.showPage()
    pdf.save()
    return buf.getvalue()


def _pdf(rng: random.Random, target: int, lang: str) -> tuple[bytes, int]:
    pages = rng.choice([1, 1, 2, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50])
    texts = ["\n".join(sentences(rng, rng.randint(500, 900), lang)) for _ in range(pages)]
    title = _title(rng, lang)
    data = pdf_with_photos(texts, title, [])
    photos = _photos(rng, target, len(data), min(pages, rng.randint(1, 6)))
    return (pdf_with_photos(texts, title, photos) if photos else data), pages


# ----------------------------------------------------------------------------- Office


def _docx(rng: random.Random, target: int, lang: str) -> tuple[bytes, int]:
    from devkit.samples import make_docx

    paragraphs = sentences(rng, rng.choice([1500, 3000, 6000, 12000, 25000, 50000]), lang)
    table = [["項目", "担当", "期限", "金額"]] + [
        [
            rng.choice(_TOPICS),
            rng.choice(_PEOPLE),
            f"{rng.randint(1, 12)}月{rng.randint(1, 28)}日",
            rng.randint(1, 999) * 1000,
        ]
        for _ in range(rng.randint(3, 30))
    ]
    data = make_docx(
        paragraphs,
        title=_title(rng, lang),
        header=f"株式会社サンプル {rng.choice(_ORGS)}",
        footer="社外秘",
        textbox=rng.choice(sentences(rng, 60, lang)),
        table=table,
    )
    photos = _photos(rng, target, len(data), rng.randint(1, 4))
    data = _zip_add(data, [(f"word/media/image{i + 1}.jpeg", p) for i, p in enumerate(photos)])
    return data, len(paragraphs)


def _xlsx(rng: random.Random, target: int, lang: str) -> tuple[bytes, int]:
    from devkit.samples import make_xlsx

    sheets: dict[str, list[list[Any]]] = {}
    rows_total = 0
    for sheet in range(rng.choice([1, 1, 2, 3])):
        rows = rng.choice([40, 100, 300, 800, 2000, 5000])
        rows_total += rows
        header = ["日付", "取引先", "部署", "品目", "数量", "単価", "金額", "備考"]
        body: list[list[Any]] = [header]
        for _ in range(rows):
            qty, price = rng.randint(1, 500), rng.randint(1, 9999) * 10
            body.append(
                [
                    date(rng.randint(2019, 2025), rng.randint(1, 12), rng.randint(1, 28)),
                    f"株式会社{rng.choice(_PLACES)}{rng.choice(['商事', '物産', '工業', 'システム'])}",
                    rng.choice(_ORGS),
                    rng.choice(_ITEMS),
                    qty,
                    price,
                    qty * price,
                    rng.choice(["", "", "至急", "分納", rng.choice(_PEOPLE) + "確認済み"]),
                ]
            )
        sheets[f"{rng.choice(_TOPICS)}{sheet + 1}"] = body
    data = make_xlsx(sheets, title=_title(rng, lang))
    photos = _photos(rng, target, len(data), 1)
    data = _zip_add(data, [(f"xl/media/image{i + 1}.jpeg", p) for i, p in enumerate(photos)])
    return data, rows_total


def _pptx(rng: random.Random, target: int, lang: str) -> tuple[bytes, int]:
    from devkit.samples import make_pptx

    count = rng.choice([3, 5, 8, 12, 20, 30, 40])
    slides = [_title(rng, lang) + "\n" + "\n".join(sentences(rng, rng.randint(80, 300), lang)) for _ in range(count)]
    notes = [rng.choice(sentences(rng, 60, lang)) if rng.random() < 0.5 else None for _ in range(count)]
    data = make_pptx(slides, notes, title=_title(rng, lang))
    photos = _photos(rng, target, len(data), min(count, rng.randint(2, 10)))
    data = _zip_add(data, [(f"ppt/media/image{i + 1}.jpeg", p) for i, p in enumerate(photos)])
    return data, count


# ----------------------------------------------------------------------------- text


def _text(rng: random.Random, target: int, lang: str) -> tuple[bytes, str, str]:
    from devkit.samples import make_csv, make_html, make_text

    fmt = rng.choice(["txt", "csv", "html"])
    encoding = "utf-8" if lang == "en" else rng.choice(["utf-8", "cp932"])
    bytes_per_char = 1 if lang == "en" else (3 if encoding == "utf-8" else 2)
    chars = max(MIN_BYTES + 2 * KB, min(target, 400 * KB)) // bytes_per_char
    if fmt == "txt":
        data = make_text("\n".join(sentences(rng, chars, lang)) + "\n", encoding, newline="\r\n")
    elif fmt == "csv":
        rows: list[list[Any]] = [["日付", "取引先", "担当", "金額", "備考"]]
        size = 0
        while size < chars:
            row = [
                f"2024/{rng.randint(1, 12)}/{rng.randint(1, 28)}",
                f"株式会社{rng.choice(_PLACES)}{rng.choice(['商事', '物産'])}",
                rng.choice(_PEOPLE),
                rng.randint(1, 99999) * 10,
                rng.choice(sentences(rng, 20, lang)),
            ]
            rows.append(row)
            size += sum(len(str(c)) for c in row)
        data = make_csv(rows, encoding, bom=encoding == "utf-8")
    else:
        label = "Shift_JIS" if encoding == "cp932" else "utf-8"
        data = make_html(_title(rng, lang), sentences(rng, chars, lang), encoding, charset_label=label)
    return data, fmt, encoding


# ----------------------------------------------------------------------------- the corpus


def _kind_of(index: int, seed: int) -> str:
    block = list(BLOCK)
    random.Random(f"{seed}-block-{index // len(BLOCK)}").shuffle(block)  # noqa: S311
    return block[index % len(BLOCK)]


def _target_size(rng: random.Random) -> int:
    return int(min(MAX_BYTES, max(MIN_BYTES, rng.lognormvariate(math.log(120 * KB), 1.6))))


def make_doc(index: int, seed: int = DEFAULT_SEED) -> tuple[dict[str, Any], bytes]:
    """Document ``index`` of the corpus: its description and its bytes (independent of the corpus size)."""
    rng = random.Random(f"{seed}-doc-{index}")  # noqa: S311 - a fixed seed, not secrecy
    kind = _kind_of(index, seed)
    lang = "en" if rng.random() < 0.15 else "ja"
    # One document in a hundred is a 5 MB file (the top of the size range), whatever the draw.
    target = MAX_BYTES - 64 * KB if index % 100 == 37 else _target_size(rng)
    folder = f"{rng.choice(_ORGS)}/{rng.randint(2019, 2025)}年度"
    name = f"{_title(rng, lang)} {index:05d}"
    info: dict[str, Any] = {"kind": kind, "lang": lang}
    if kind == "pdf":
        data, info["pages"] = _pdf(rng, target, lang)
        fmt = "pdf"
    elif kind == "docx":
        data, info["pages"] = _docx(rng, target, lang)
        fmt = "docx"
    elif kind == "xlsx":
        data, info["pages"] = _xlsx(rng, target, lang)
        fmt = "xlsx"
    elif kind == "pptx":
        data, info["pages"] = _pptx(rng, target, lang)
        fmt = "pptx"
    else:
        data, fmt, info["encoding"] = _text(rng, target, lang)
    info["fmt"] = fmt
    info["key"] = f"bench/{folder}/{name}.{fmt}"
    return info, data


def large_pdf(index: int, seed: int = DEFAULT_SEED, *, nbytes: int = 20 * MB, pages: int = 20) -> bytes:
    """A ≈20 MB PDF: a text layer on every page and a photo on each (the memory figure)."""
    rng = random.Random(f"{seed}-large-{index}")  # noqa: S311 - a fixed seed, not secrecy
    texts = ["\n".join(sentences(rng, 800, "ja")) for _ in range(pages)]
    photos = [photo(rng, nbytes // pages) for _ in range(pages)]
    return pdf_with_photos(texts, f"大容量資料 {index}", photos)


def scan_pages(seed: int, pages: int) -> list[list[str]]:
    """Lines of Japanese text for scanned pages (about 500 characters a page, like a business letter)."""
    rng = random.Random(f"{seed}-scan")  # noqa: S311 - a fixed seed, not secrecy
    out = []
    for _ in range(pages):
        lines: list[str] = []
        while sum(len(line) for line in lines) < 500:
            lines.append(_fill(rng, rng.choice(_JA_TEMPLATES)))
        out.append(lines)
    return out


@dataclass
class Corpus:
    root: Path
    seed: int
    docs: list[Doc]
    warmup: list[Doc]
    large: list[Doc]
    scans: list[Scan]

    def total_bytes(self) -> int:
        return sum(d.size for d in self.docs)

    def load(self, docs: Sequence[Doc] | None = None) -> Iterator[tuple[Doc, bytes]]:
        for doc in self.docs if docs is None else docs:
            yield doc, doc.read(self.root)


class _Cache:
    """Generated files under ``base``, described in ``manifest.json``; reused while their size matches."""

    def __init__(self, base: Path, seed: int) -> None:
        self.base = base
        self.seed = seed
        self.path = base / "manifest.json"
        manifest: dict[str, Any] = json.loads(self.path.read_text()) if self.path.exists() else {}
        self.entries: dict[str, dict[str, Any]] = manifest.get("entries", {})
        self.made = 0

    def get(self, name: str, rel: str, make: Callable[[], tuple[dict[str, Any], bytes]]) -> dict[str, Any]:
        entry = self.entries.get(name)
        if (
            entry
            and (self.base / entry["path"]).exists()
            and (self.base / entry["path"]).stat().st_size == entry["size"]
        ):
            return entry
        info, data = make()
        path = self.base / rel.format(**info)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        entry = {**info, "path": str(path.relative_to(self.base)), "size": len(data)}
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        self.entries[name] = entry
        self.made += 1
        return entry

    def save(self) -> None:
        if self.made:
            self.base.mkdir(parents=True, exist_ok=True)
            payload = {"version": CORPUS_VERSION, "seed": self.seed, "entries": self.entries}
            self.path.write_text(json.dumps(payload, indent=1, ensure_ascii=False))


def build(
    root: Path,
    docs: int,
    *,
    seed: int = DEFAULT_SEED,
    large: int = 10,
    scans: int = 3,
    log: Callable[[str], None] = print,
) -> Corpus:
    """Generate (or reuse from ``root``) the corpus; returns its description."""
    cache = _Cache(root.resolve() / f"v{CORPUS_VERSION}-seed{seed}", seed)
    out_docs: list[Doc] = []
    for i in range(docs):
        entry = cache.get(f"doc-{i:05d}", f"docs/{i:05d}.{{fmt}}", partial(make_doc, i, seed))
        if cache.made and cache.made % 50 == 0:
            log(f"  generated {cache.made} files")
        out_docs.append(
            Doc(
                key=entry["key"],
                kind=entry["kind"],
                fmt=entry["fmt"],
                size=entry["size"],
                path=entry["path"],
                pages=entry.get("pages", 0),
                lang=entry["lang"],
                encoding=entry.get("encoding", ""),
            )
        )
    warm: list[Doc] = []
    for number, (kind, fmt) in enumerate(_WARMUP_KINDS):
        info = {"kind": kind, "fmt": fmt, "key": f"warmup/{number}.{fmt}"}
        entry = cache.get(f"warmup-{number}", info["key"], partial(_described, info, _warmup_doc, kind, fmt))
        warm.append(Doc(entry["key"], kind, fmt, entry["size"], entry["path"]))
    big: list[Doc] = []
    for i in range(large):
        info = {"key": f"large/大容量資料 {i:02d}.pdf"}
        entry = cache.get(f"large-{i:02d}", f"large/{i:02d}.pdf", partial(_described, info, large_pdf, i, seed))
        big.append(Doc(entry["key"], "pdf", "pdf", entry["size"], entry["path"], pages=20))
    scan_list = _scans(cache, seed, scans) if scans else []
    cache.save()
    return Corpus(cache.base, seed, out_docs, warm, big, scan_list)


def _described(info: dict[str, Any], make: Callable[..., bytes], *args: Any) -> tuple[dict[str, Any], bytes]:
    return info, make(*args)


_WARMUP_KINDS = [
    ("pdf", "pdf"),
    ("docx", "docx"),
    ("xlsx", "xlsx"),
    ("pptx", "pptx"),
    ("text", "html"),
    ("text", "csv"),
]


def _scans(cache: _Cache, seed: int, count: int) -> list[Scan]:
    """One image-only PDF of ``count`` pages, and each page again as a PNG (300 dpi)."""
    from devkit.samples import make_scan_pdf, make_scan_png

    pages = scan_pages(seed, count)
    variants = [("scan-pdf", "pdf", pages)] + [(f"scan-png-{i}", "png", [page]) for i, page in enumerate(pages)]
    out = []
    for name, fmt, content in variants:

        def make(fmt: str = fmt, content: list[list[str]] = content, name: str = name) -> tuple[dict[str, Any], bytes]:
            data = make_scan_pdf(content, dpi=300, title="スキャン文書") if fmt == "pdf" else make_scan_png(content[0])
            return {"key": f"scans/{name}.{fmt}", "pages": len(content)}, data

        entry = cache.get(name, f"scans/{name}.{fmt}", make)
        truth = ["\n".join(page) for page in content]
        out.append(Scan(entry["key"], fmt, len(content), 300, entry["size"], entry["path"], truth))
    return out


def _warmup_doc(kind: str, fmt: str) -> bytes:
    from devkit.samples import make_csv, make_docx, make_html, make_pdf, make_pptx, make_xlsx

    rng = random.Random("warmup")  # noqa: S311 - a fixed seed, not secrecy
    text = sentences(rng, 600, "ja")
    if kind == "pdf":
        return make_pdf(["\n".join(text)], "ウォームアップ")
    if kind == "docx":
        return make_docx(text, title="ウォームアップ")
    if kind == "xlsx":
        return make_xlsx({"Sheet1": [[t, i] for i, t in enumerate(text)]})
    if kind == "pptx":
        return make_pptx(["ウォームアップ\n" + t for t in text[:3]])
    if fmt == "html":
        return make_html("ウォームアップ", text, "cp932", charset_label="Shift_JIS")
    return make_csv([[t] for t in text], "cp932")


def describe(corpus: Corpus) -> dict[str, Any]:
    """Counts and sizes per kind, for the report."""
    kinds: dict[str, dict[str, Any]] = {}
    for doc in corpus.docs:
        entry = kinds.setdefault(doc.kind, {"docs": 0, "bytes": 0})
        entry["docs"] += 1
        entry["bytes"] += doc.size
    sizes = sorted(d.size for d in corpus.docs)
    return {
        "docs": len(corpus.docs),
        "bytes": corpus.total_bytes(),
        "mean_bytes": round(corpus.total_bytes() / max(1, len(corpus.docs))),
        "median_bytes": sizes[len(sizes) // 2] if sizes else 0,
        "min_bytes": sizes[0] if sizes else 0,
        "max_bytes": sizes[-1] if sizes else 0,
        "seed": corpus.seed,
        "by_kind": kinds,
        "large": {"docs": len(corpus.large), "bytes": sum(d.size for d in corpus.large)},
        "scans": [asdict(s) | {"truth": None} for s in corpus.scans],
    }


# ----------------------------------------------------------------------------- file names (name search)

_COMPANIES = [
    *("株式会社サンプル商事", "有限会社山田製作所", "ABC株式会社", "東京物流株式会社", "株式会社みらい電機"),
    *("大阪精工株式会社", "株式会社グリーンフーズ", "北海道酪農協同組合", "株式会社テクノソリューションズ"),
    *("合同会社ブルースカイ", "株式会社髙橋建設", "山﨑産業株式会社", "株式会社ｻﾝﾌﾟﾙ", "XYZ Holdings"),
]
_PROJECTS = ["基幹システム刷新", "新製品開発", "物流センター移転", "Webサイト改修", "ISO認証取得", "社内ポータル"]
_MODULES = ["受注管理", "在庫管理", "会計連携", "認証", "帳票出力", "API"]
_MEETINGS = ["定例会議", "営業会議", "経営会議", "部内ミーティング", "キックオフ", "打ち合わせ"]
_MARKS = [
    "",
    "",
    "",
    "",
    "【社外秘】",
    "【至急】",
    "(改)",
    "_最終版",
    "_最終版_修正",
    " - コピー",
    "_v2",
    "_ver1.2",
    "（案）",
]
_FORMS = ["申し込み書", "申込書", "申請書", "届出書", "同意書"]
_EXTENSIONS = ["xlsx"] * 6 + ["docx"] * 6 + ["pdf"] * 8 + ["pptx"] * 2 + ["txt", "csv", "msg", "zip", "jpg"]


def _day(rng: random.Random) -> date:
    return date(rng.randint(2016, 2025), rng.randint(1, 12), rng.randint(1, 28))


def file_path(index: int, seed: int = DEFAULT_SEED) -> str:
    """Key ``index`` of a file server's tree as a sync copies it: department folders by year and customer,
    dates and versions in the names, the marks people add (【社外秘】, _最終版_修正, - コピー), half-width
    katakana and full-width digits of old systems, spaces and brackets. Independent of how many are asked for."""
    rng = random.Random(f"{seed}-path-{index}")  # noqa: S311 - a fixed seed, not secrecy
    day = _day(rng)
    stamp = rng.choice([day.strftime("%Y%m%d"), day.isoformat(), day.strftime("%y%m%d"), f"{day.year}年{day.month}月"])
    fiscal = f"{day.year if day.month > 3 else day.year - 1}年度"
    mark = rng.choice(_MARKS)
    company = rng.choice(_COMPANIES)
    ext = rng.choice(_EXTENSIONS)
    shape = rng.randrange(8)
    if shape == 0:
        kind, title = rng.choice([("見積", "御見積書"), ("提案", "提案書"), ("契約", "契約書"), ("請求", "請求書")])
        name = f"{stamp}_{company}様_{title}{mark}"
        path = f"営業部/{fiscal}/{company}/{kind}/{name}.{ext}"
    elif shape == 1:
        meeting = rng.choice(_MEETINGS)
        path = f"{rng.choice(_ORGS)}/会議/{day.year}/{day.month:02d}月/議事録_{meeting}_{stamp}{mark}.{ext}"
    elif shape == 2:
        person = rng.choice(_PEOPLE)
        path = f"人事部/採用/{fiscal}/応募書類/{rng.choice(['履歴書', '職務経歴書', '面接評価'])}_{person}_{stamp}.pdf"
    elif shape == 3:
        kind = rng.choice(["請求書", "支払", "経費精算"])
        path = f"経理部/{kind}/{day.year}/{day.month:02d}/{company}_{stamp}{mark}.{ext}"
    elif shape == 4:
        project = rng.choice(_PROJECTS)
        module = rng.choice(_MODULES)
        doc = rng.choice(["仕様書", "設計書", "テスト計画書", "手順書"])
        phase = rng.choice(["01_要件定義", "02_設計", "03_開発", "04_テスト"])
        path = f"開発部/{project}/{phase}/{doc}_{module}_v{rng.randint(1, 5)}{mark}.{ext}"
    elif shape == 5:
        path = f"スキャン/{day.year}/{day.month:02d}/SCAN_{day.strftime('%Y%m%d')}_{rng.randint(0, 235959):06d}.pdf"
    elif shape == 6:
        form = rng.choice(_FORMS)
        section = rng.choice(["各種様式", "手続き", "福利厚生"])
        path = f"総務部/{section}/{rng.choice(_TOPICS)}/{form}_{rng.choice(_ITEMS)}{mark}.{ext}"
    else:
        org = rng.choice(_ORGS)
        title = rng.choice(_DOC_NAMES)
        year = (
            str(day.year).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
            if rng.random() < 0.1
            else day.year
        )
        path = f"{org}/{fiscal}/{rng.choice(_TOPICS)}/{year}年{rng.choice(_PLACES)} {title}{mark}.{ext}"
    if shape != 5 and rng.random() < 0.35:  # a working folder or a person's folder one level deeper
        folder, name = path.rsplit("/", 1)
        path = (
            f"{folder}/{rng.choice(['作業用', '過去分', '旧', 'アーカイブ', rng.choice(_PEOPLE), '確認済み'])}/{name}"
        )
    return path
