"""``docindex plan`` (issue 36): S3 Inventory reports as S3 writes them, the census, and the sizing rules.

Reports are written here the way S3 writes them (docs: "Amazon S3 Inventory list"): a
``manifest.json`` whose ``fileSchema`` gives the field order, gzip'd CSV data files without a
header and with URL-encoded keys, or Parquet files whose columns are named in snake case.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from docindex.cli import main
from docindex.core.exceptions import CommandError
from docindex.ops.plan import census as census_module
from docindex.ops.plan.census import Census, kind_of, read_inventory, read_manifest
from docindex.ops.plan.model import KindFigures, default_assumptions, make_plan

ROWS = [
    # key, size, is latest, is delete marker
    ("営業部/見積書 No.1.pdf", 120_000, True, False),
    ("営業部/見積書 No.1.pdf", 90_000, False, False),  # an older version: not a file to index
    ("総務部/議事録 2026.docx", 40_000, True, False),
    ("総務部/削除済み.txt", 0, True, True),  # a delete marker
    ("経理部/集計+表.xlsx", 2_000_000, True, False),
    ("スキャン/受領書.PNG", 300_000, True, False),
    ("README", 10, True, False),
]
CURRENT = [r for r in ROWS if r[2] and not r[3]]


def write_csv_inventory(root: Path) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for key, size, latest, marker in ROWS:
        writer.writerow(["corp", quote_plus(key), "v1", str(latest).lower(), str(marker).lower(), str(size)])
    (root / "data").mkdir()
    (root / "data" / "part-0.csv.gz").write_bytes(gzip.compress(buffer.getvalue().encode()))
    return _manifest(root, "CSV", "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size", "part-0.csv.gz")


def write_parquet_inventory(root: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "data").mkdir()
    table = pa.table(
        {
            "bucket": ["corp"] * len(ROWS),
            "key": [r[0] for r in ROWS],  # Parquet keeps keys as they are
            "is_latest": [r[2] for r in ROWS],
            "is_delete_marker": [r[3] for r in ROWS],
            "size": [r[1] for r in ROWS],
        }
    )
    pq.write_table(table, root / "data" / "part-0.parquet")
    schema = "message s3.inventory { required binary bucket (UTF8); required binary key (UTF8); ... }"
    return _manifest(root, "Parquet", schema, "part-0.parquet")


def _manifest(root: Path, file_format: str, schema: str, name: str) -> Path:
    manifest = {
        "sourceBucket": "corp",
        "destinationBucket": "arn:aws:s3:::inventory",
        "version": "2016-11-30",
        "creationTimestamp": "1764000000000",
        "fileFormat": file_format,
        "fileSchema": schema,
        "files": [{"key": f"corp/config/data/{name}", "size": 1, "MD5checksum": "x"}],
    }
    path = root / "manifest.json"
    path.write_text(json.dumps(manifest))
    return path


def census_of(manifest: Path) -> Census:
    census = Census("test", "corp")
    read_inventory(read_manifest(str(manifest), None), None, census)
    return census


@pytest.mark.parametrize("write", [write_csv_inventory, write_parquet_inventory], ids=["csv", "parquet"])
def test_an_inventory_is_counted_by_kind_with_only_current_objects(tmp_path: Path, write) -> None:
    census = census_of(write(tmp_path))
    assert census.files == len(CURRENT)
    assert census.total_bytes == sum(r[1] for r in CURRENT)
    assert census.by_kind() == {
        kind: {"files": 1, "bytes": size}
        for kind, size in (("pdf", 120_000), ("word", 40_000), ("excel", 2_000_000), ("image", 300_000), ("other", 10))
    }
    # the sample holds the decoded keys, as S3 names the objects
    sampled = {key for stratum in census.strata.values() for key, _ in stratum.sample}
    assert sampled == {r[0] for r in CURRENT}


def test_without_pyarrow_csv_is_read_row_by_row_and_parquet_says_how_to_get_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(census_module, "_arrow", lambda: None)
    csv_root, parquet_root = tmp_path / "csv", tmp_path / "parquet"
    csv_root.mkdir()
    parquet_root.mkdir()
    assert census_of(write_csv_inventory(csv_root)).by_kind()["excel"] == {"files": 1, "bytes": 2_000_000}
    manifest = write_parquet_inventory(parquet_root)
    with pytest.raises(CommandError, match="pip install pyarrow"):
        census_of(manifest)


def test_an_orc_report_is_refused_with_the_fix(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path, "ORC", "struct<bucket:string,key:string>", "part-0.orc")
    with pytest.raises(CommandError, match="CSV or Parquet"):
        read_manifest(str(manifest), None)


def test_kinds_follow_the_extension_case_insensitively() -> None:
    assert [kind_of(k) for k in ("a/b.PDF", "x.Docx", "y.csv", "z.tif", "m.msg", "noext", "a.b/c")] == [
        "pdf",
        "word",
        "excel",
        "image",
        "mail",
        "other",
        "other",
    ]


def test_a_stratum_sample_is_uniform_and_its_prefix_too() -> None:
    # 40 files in one stratum, each sampled 5 at a time over many seeds: every file about as often
    hits = dict.fromkeys(range(40), 0)
    for seed in range(2000):
        census = Census("test", "b", seed=seed)
        for i in range(40):
            census.add(f"{i}.pdf", 100)
        for key, _ in census.allocate(5)[("pdf", 0)]:
            hits[int(key.split(".")[0])] += 1
    expected = 2000 * 5 / 40
    assert all(abs(count - expected) < expected * 0.25 for count in hits.values()), hits


def figures(files: int, passages: float = 10, sent: float = 50_000) -> dict[str, KindFigures]:
    return {"pdf": KindFigures(files, files * 200_000, 5, 1, passages, sent, 0, "test")}


def test_storage_and_knn_memory_follow_the_published_rules() -> None:
    assumptions = default_assumptions()
    plan = make_plan(figures(1_000_000), assumptions)
    f = plan.figures
    vector = assumptions["vector_bytes"].value
    # Lucene's files for the documents' JSON (the measured ratio) plus the vectors once
    documents = 1_000_000 * 50_000 * assumptions["index_bytes_per_sent_byte"].value
    source = documents + 1_000_000 * 10 * assumptions["vector_disk_bytes"].value
    assert f["index_documents_disk_bytes"] == round(documents)
    assert f["source_data_bytes"] == round(source)
    # AWS: x (1 + replicas) / 0.95 Linux reserved / 0.8 service overhead
    assert f["storage_bytes_with_replicas"] == round(source * 2 / 0.95 / 0.8)
    # OpenSearch's HNSW estimate, 1.1 x (vector + 8 m) bytes, for every copy
    assert f["knn_memory_bytes_with_replicas"] == round(10_000_000 * 1.1 * (vector + 8 * 16) * 2)
    d = plan.domain
    assert d["data_nodes"] >= 3
    assert d["data_nodes"] % 3 == 0
    assert d["primary_shards"] * 2 >= d["data_nodes"]  # every node holds a copy of a shard
    # Two replicas: a third more storage and k-NN memory, never a smaller domain
    assumptions["replicas"].value = 2
    more = make_plan(figures(1_000_000), assumptions)
    assert more.figures["storage_bytes_with_replicas"] == round(source * 3 / 0.95 / 0.8)
    assert more.monthly["total"] >= plan.monthly["total"]


def test_meaning_search_off_drops_vectors_and_embedding() -> None:
    assumptions = default_assumptions()
    assumptions["embeddings_off"].value = 1
    plan = make_plan(figures(100_000), assumptions)
    assert plan.figures["passages"] == 0
    assert plan.figures["knn_memory_bytes_with_replicas"] == 0


def test_the_command_prints_every_assumption_and_takes_overrides(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .docindex/local.env: the plan needs no AWS for a local report
    for name in ("AWS_ENDPOINT_URL", "DOCINDEX_BUCKET", "DOCINDEX_STACK"):
        monkeypatch.delenv(name, raising=False)
    manifest = write_csv_inventory(tmp_path)
    code = main(["plan", "--inventory", str(manifest), "--sample", "0", "--assume", "replicas=2", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    assert document["files"] == len(CURRENT)
    assert document["assumptions"]["replicas"] == {
        "value": 2.0,
        "unit": "replica per primary",
        "source": "AWS: at least one",
        "overridden": True,
    }
    assert document["domain"]["replicas"] == 2
    assert set(document["dollars_once"]) >= {"lambda", "fargate_ocr_and_embedding", "bedrock", "total"}
    assert set(document["dollars_per_month"]) >= {"domain_data_nodes", "domain_storage", "total"}
    # an unknown name is one line with the names
    assert main(["plan", "--inventory", str(manifest), "--sample", "0", "--assume", "replica=2"]) == 2
    assert "no such assumption" in capsys.readouterr().err


def test_passages_are_counted_as_the_worker_cuts_them() -> None:
    # The worker's embed_document (page by page, at most 16) with an embedder that only counts
    from docindex.embed.document import embed_document
    from docindex.extract.base import PageText
    from docindex.index.documents import page_entries
    from docindex.ops.plan.sample import passages_of

    class Counting:
        model_id, dimension = "count", 1

        def passages(self, texts):
            return [[1.0] for _ in texts]

    sentence = "本件の対応期限は十一月三十日です。不明点は総務部までご連絡ください。"
    pages = tuple(PageText(number=n, kind="page", text=sentence * (n * 7), name=None) for n in range(1, 6))
    text = "\n".join(p.text for p in pages)
    embedded = embed_document(Counting(), text, title="規程", pages=page_entries(pages), max_passages=16, max_chars=400)
    assert passages_of(text, pages, title="規程", max_passages=16, max_chars=400) == len(embedded.passages) > 5
    flat = embed_document(Counting(), sentence * 5, title="規程", max_passages=16, max_chars=400)
    assert passages_of(sentence * 5, (), title="規程", max_passages=16, max_chars=400) == len(flat.passages)


def test_answers_cost_per_thousand_from_tokens_and_the_models_list_price() -> None:
    assumptions = default_assumptions()
    plan = make_plan(figures(10_000), assumptions)
    a = {name: item.value for name, item in assumptions.items()}
    tokens = 1000 * (a["answer_input_tokens"] * 0.80 + a["answer_output_tokens"] * 4.00) / 1e6
    assert plan.answers["bedrock_tokens_only"] == pytest.approx(tokens)
    assert plan.answers["bedrock"] == pytest.approx(plan.answers["extractive"] + tokens)
    # the extractive answer costs the function's time only: a fraction of a cent per thousand
    assert 0 < plan.answers["extractive"] < 0.01
    # twice the passages sent, about twice the model's part
    assumptions["answer_input_tokens"].value *= 2
    assert make_plan(figures(10_000), assumptions).answers["bedrock_tokens_only"] > 1.9 * tokens * 0.9
