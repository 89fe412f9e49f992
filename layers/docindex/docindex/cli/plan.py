"""``docindex plan``: before a backfill, the domain to buy, the hours it takes and what it costs.

Reads an S3 Inventory report (``--inventory``, CSV or Parquet) or lists the bucket (bounded by
``--max-list``), opens a sample of the files the way the indexer does (``--sample``), and prints the
plan with every assumption it used (``--assume NAME=VALUE`` overrides one). Exit codes: 0 planned,
2 could not run.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError

JSON_VERSION = 1


def _assumption(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not NAME=NUMBER: {text!r}") from None


def register(subparsers: Any) -> None:
    """Add the ``plan`` subcommand."""
    parser = subparsers.add_parser(
        "plan",
        help="before a backfill: index size, k-NN memory, the domain, hours and dollars for a bucket",
        description=(
            "Count the bucket's files by kind and size from an S3 Inventory report (--inventory, CSV or Parquet) "
            "or a listing, open a sample of them as the indexer would (pages, scanned pages, passages, index "
            "bytes), and compute the plan: index size and k-NN memory with replicas, a domain following AWS's "
            "sizing rules, the indexer concurrency and worker tasks, hours to backfill, dollars once and per "
            "month. Every assumption is printed; --assume NAME=VALUE overrides one."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex plan --stack docindex-prod --inventory s3://inventory-bucket/corp/config/2026-11-01T01-00Z/manifest.json\n"
            "  docindex plan --stack docindex-prod --max-list 200000 --sample 400\n"
            "  docindex plan --inventory ./manifest.json --sample 0 --assume replicas=2 --json"
        ),
    )
    _ops.add_target_options(parser)
    parser.add_argument("--inventory", metavar="MANIFEST", help="S3 Inventory manifest.json (s3://... or a local path)")
    parser.add_argument("--prefix", default="", help="with a listing: only keys under this prefix")
    parser.add_argument(
        "--max-list",
        type=_ops.bounded_int(1),
        default=500_000,
        metavar="N",
        help="with a listing: stop after N objects (default 500000; an inventory has no bound)",
    )
    parser.add_argument(
        "--sample",
        type=_ops.bounded_int(0, 10_000),
        default=300,
        metavar="N",
        help="open about N files to measure them (default 300; 0 = the built-in figures per kind; 1000 or more "
        "when scans matter: a scanned PDF looks like any PDF in an inventory)",
    )
    parser.add_argument(
        "--kind-figures",
        metavar="PLAN.json",
        help="per-file figures of the kinds this plan samples none of, from an earlier `docindex plan --json` "
        "(of a representative prefix, say)",
    )
    parser.add_argument(
        "--assume",
        type=_assumption,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override an assumption (repeatable; the plan lists every name)",
    )
    _ops.add_output_options(parser, progress=True)
    parser.set_defaults(func=run)


class _Progress:
    """One line on stderr while the plan reads (rewritten in place on a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self._last = 0.0

    def say(self, text: str, *, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and now - self._last < (0.2 if self.tty else 2.0):
            return
        self._last = now
        if self.tty:
            print(f"\r\033[K{text}", end="\n" if final else "", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from docindex.ops.plan.census import Census, listing_rows, read_inventory, read_manifest, take
    from docindex.ops.plan.model import default_assumptions, figures_by_kind, make_plan
    from docindex.ops.plan.sample import measure_sample

    assumptions = default_assumptions()
    for name, value in args.assume:
        if name not in assumptions:
            raise CommandError(f"--assume {name}: no such assumption; the names: {', '.join(sorted(assumptions))}")
        assumptions[name].value = value
        assumptions[name].overridden = True
    progress = _Progress(not (args.no_progress))
    started = time.monotonic()
    s3, bucket = _s3_and_bucket(args)
    if args.inventory:
        manifest = read_manifest(args.inventory, s3)
        bucket = manifest.source_bucket
        census = Census(f"inventory {args.inventory}", bucket)
        read_inventory(manifest, s3, census, progress=lambda n: progress.say(f"plan: read {n:,} inventory rows"))
    else:
        if s3 is None or not bucket:
            raise CommandError("no bucket to list: give --inventory, --bucket, --stack, or run `docindex local up`")
        census = Census(f"listing s3://{bucket}/{args.prefix}", bucket)
        take(
            census,
            listing_rows(s3, bucket, prefix=args.prefix, limit=args.max_list),
            progress=lambda n: progress.say(f"plan: listed {n:,} objects"),
        )
        census.complete = census.rows < args.max_list
    progress.say(f"plan: {census.rows:,} files counted in {time.monotonic() - started:.1f} s", final=True)
    sample_run = None
    if args.sample and census.files:
        chosen = [item for items in census.allocate(args.sample).values() for item in items]
        if s3 is None:
            raise CommandError("opening a sample needs S3 access: give --stack or --env-file, or --sample 0")
        a = {name: item.value for name, item in assumptions.items()}
        sample_run = measure_sample(
            s3,
            bucket,
            chosen,
            max_passages=int(a["max_passages"]),
            max_chars=int(a["passage_chars"]),
            scan_chars=int(a["scan_chars_per_page"]),
            progress=lambda done, total: progress.say(f"plan: opened {done:,} of {total:,} sampled files"),
        )
        progress.say(f"plan: measured {len(sample_run.measured):,} sampled files", final=True)
    known = None
    if args.kind_figures:
        import json
        from pathlib import Path

        try:
            known = json.loads(Path(args.kind_figures).read_text(encoding="utf-8"))["kinds"]
        except (OSError, ValueError, KeyError) as exc:
            raise CommandError(
                f"--kind-figures {args.kind_figures}: not a `docindex plan --json` document ({exc})"
            ) from None
    kinds = figures_by_kind(census, sample_run, assumptions, known, args.kind_figures or "")
    plan = make_plan(kinds, assumptions)
    data = _document(census, sample_run, kinds, plan, assumptions, time.monotonic() - started)
    if args.json:
        _ops.emit_json({"version": JSON_VERSION, **data})
    else:
        _render(data)
    return _ops.EXIT_OK


def _s3_and_bucket(args: argparse.Namespace) -> tuple[Any, str | None]:
    """An S3 client for the deployment the flags describe, and its bucket (None, None with nothing configured
    and a local inventory: the plan then needs no AWS at all)."""
    try:
        deployment, clients = _ops.resolve(args)
    except CommandError:
        if args.inventory and not args.inventory.startswith("s3://"):
            return None, None
        raise
    if not (deployment.bucket or deployment.endpoint_url or deployment.stack_name or args.inventory):
        return None, None
    return clients.client("s3"), deployment.bucket


def _document(  # noqa: PLR0917 - the parts of one document
    census: Any, run: Any, kinds: dict[str, Any], plan: Any, assumptions: dict[str, Any], seconds: float
) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        "source": census.source,
        "bucket": census.bucket,
        "complete": census.complete,
        "reader": census.reader,
        "files": census.files,
        "bytes": census.total_bytes,
        "kinds": {name: asdict(k) for name, k in kinds.items()},
        "sample": {
            "measured": len(run.measured) if run else 0,
            "unreadable": run.unreadable if run else 0,
            "skipped_large": run.skipped_large if run else 0,
        },
        "figures": plan.figures,
        "domain": plan.domain,
        "fleet": plan.fleet,
        "hours": {k: round(v, 2) for k, v in plan.hours.items()},
        "dollars_once": {k: round(v, 2) for k, v in plan.once.items()},
        "dollars_per_month": {k: round(v, 2) for k, v in plan.monthly.items()},
        "dollars_per_thousand_answers": {k: round(v, 4) for k, v in plan.answers.items()},
        "notes": plan.notes,
        "assumptions": {name: asdict(item) for name, item in assumptions.items()},
        "seconds": round(seconds, 2),
    }


def _gib(value: float) -> str:
    return f"{value / 1024**3:,.1f} GiB"


def _render(data: dict[str, Any]) -> None:
    out = _ops.Output(progress=False)
    f, d, fleet, hours = data["figures"], data["domain"], data["fleet"], data["hours"]
    bound = "" if data["complete"] else " (listing bound)"
    out.line(f"plan for s3://{data['bucket']} from {data['source']}{bound}")
    out.line(f"  {data['files']:,} files, {_gib(data['bytes'])}; sample: {data['sample']['measured']} files measured")
    out.line(f"  {'kind':<11} {'files':>11} {'GiB':>9} {'pages/file':>10} {'scanned':>8} {'passages':>8} {'KB/doc':>7}")
    for name, k in data["kinds"].items():
        out.line(
            f"  {name:<11} {k['files']:>11,} {k['bytes'] / 1024**3:>9,.1f} {k['pages']:>10.1f}"
            f" {k['scanned_pages']:>8.1f} {k['passages']:>8.1f} {k['sent_bytes'] / 1000:>7.1f}  ({k['source']})"
        )
    out.line("index")
    out.line(f"  pages {f['pages']:,}, scanned pages {f['scanned_pages']:,}, passages (vectors) {f['passages']:,}")
    out.line(
        f"  index documents {_gib(f['index_documents_bytes'])} sent, {_gib(f['index_documents_disk_bytes'])} on disk"
        f" + vectors {_gib(f['vectors_bytes'])} = source data "
        f"{_gib(f['source_data_bytes'])}; storage with {d['replicas']} replica(s) "
        f"{_gib(f['storage_bytes_with_replicas'])}"
    )
    out.line(f"  k-NN memory with replicas {_gib(f['knn_memory_bytes_with_replicas'])}")
    out.line("domain (AWS sizing rules; bound by " + d["bound_by"] + ")")
    out.line(
        f"  {d['data_nodes']} x {d['instance_type']} ({d['vcpu_per_node']} vCPU, {d['memory_gib_per_node']} GiB), "
        f"{d['ebs_gib_per_node']} GiB gp3 each, {d['dedicated_masters']} dedicated masters, 3 AZs; "
        f"{d['primary_shards']} primary shard(s), {d['replicas']} replica(s)"
    )
    out.line("backfill")
    out.line(
        f"  indexer MaximumConcurrency {fleet['indexer_max_concurrency']} "
        f"({fleet['indexer_docs_per_second']:,} docs/s; the cluster takes {fleet['cluster_docs_per_second']:,}), "
        f"WorkerMaxTasks {fleet['worker_max_tasks']}"
    )
    out.line(
        f"  hours: indexers {hours['indexers']:.1f}, cluster {hours['cluster']:.1f}, OCR and embedding "
        f"{hours['ocr_and_embedding_workers']:.1f} -> backfill {hours['backfill']:.1f} h"
    )
    once, monthly = data["dollars_once"], data["dollars_per_month"]
    out.line("dollars once: " + ", ".join(f"{k} {v:,.2f}" for k, v in once.items() if k != "total"))
    out.line(f"  total once ${once['total']:,.2f}")
    out.line("dollars per month: " + ", ".join(f"{k} {v:,.2f}" for k, v in monthly.items() if k != "total"))
    out.line(f"  total per month ${monthly['total']:,.2f}")
    answers = data["dollars_per_thousand_answers"]
    out.line(
        f"dollars per 1,000 answers: extractive {answers['extractive']:,.4f}, bedrock {answers['bedrock']:,.4f} "
        f"(of which the model's tokens {answers['bedrock_tokens_only']:,.4f})"
    )
    for note in data["notes"]:
        out.line(f"note: {note}")
    out.line("assumptions (--assume NAME=VALUE):")
    for name, item in data["assumptions"].items():
        mark = " (given)" if item["overridden"] else ""
        out.line(f"  {name} = {item['value']:g} {item['unit']} — {item['source']}{mark}")
    out.line(f"planned in {data['seconds']:.1f} s")
