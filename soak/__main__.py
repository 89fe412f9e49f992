"""``python -m soak``: fault-injection soak runs, one per seed, figures to a JSON file.

Exit code 0 when every seed passed its judge, 1 when one did not, 2 when a
run could not finish.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from soak.config import DRILLS, SoakConfig, SoakError
from soak.releases import PREVIOUS_RELEASES
from soak.run import Soak
from soak.workload import KINDS, Workload


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m soak",
        description=(
            "Run the local pipeline (moto server, a real OpenSearch node, the real handlers and worker) under injected "
            "faults, then judge it: docindex reconcile must report 100 %% coverage with nothing stale or orphaned, "
            "the DLQs must hold only the poisoned messages, and no change may be written twice."
        ),
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[1], metavar="N", help="one run per seed (default 1)")
    parser.add_argument("--documents", type=int, default=2000, help="initial documents (default 2000)")
    parser.add_argument("--storm-ratio", type=float, default=0.75, help="storm operations per document (default 0.75)")
    parser.add_argument("--function-timeout", type=int, default=4, help="simulated Lambda timeout, s (default 4)")
    parser.add_argument(
        "--visibility-timeout", type=int, default=0, help="ingest queue visibility, s (default 6 x function timeout)"
    )
    parser.add_argument("--max-receive-count", type=int, default=5, help="maxReceiveCount of both queues (default 5)")
    parser.add_argument("--lambdas", type=int, default=2, help="concurrent indexer invocations (default 2)")
    parser.add_argument("--kill-probability", type=float, default=0.03, help="share of invocations killed mid-batch")
    parser.add_argument(
        "--worker-kill-probability", type=float, default=0.25, help="share of OCR jobs whose worker dies mid-job"
    )
    parser.add_argument(
        "--write-delay-probability",
        type=float,
        default=0.03,
        help="share of the indexer's document writes held after their claim, past gc_deletes (default 0.03)",
    )
    parser.add_argument(
        "--write-delay-seconds",
        type=_seconds_range,
        default=(1.2, 2.2),
        metavar="LOW:HIGH",
        help="how long a held write waits (default 1.2:2.2; keep HIGH below the function timeout)",
    )
    parser.add_argument(
        "--gc-deletes", type=float, default=1.0, help="seconds the local index remembers a delete (default 1)"
    )
    parser.add_argument(
        "--storm-weights",
        type=_weights,
        default={},
        metavar="OP=N,...",
        help="change the odds of storm operations, e.g. flash=30 (operations: " + ", ".join(Workload.STORM) + ")",
    )
    parser.add_argument(
        "--kind-weights",
        type=_kind_weights,
        default={},
        metavar="KIND=N,...",
        help="change the odds of kinds of new document, e.g. scan_tiff=30 (kinds: " + ", ".join(KINDS) + ")",
    )
    parser.add_argument("--no-faults", action="store_true", help="a clean run (baseline for the figures)")
    parser.add_argument("--no-poison", action="store_true", help="send no poison messages (shorter: no DLQ cycles)")
    parser.add_argument(
        "--no-resync",
        action="store_true",
        help="skip the re-sync phase (focused runs; a full run judges unchanged re-uploads, copies and renames)",
    )
    parser.add_argument(
        "--previous-release",
        action="append",
        metavar="COMMIT",
        help="start on this release's code and replace it by the current code during the load (a rolling "
        "upgrade; repeatable: the seeds take the releases in turn; default "
        f"{' and '.join(release[:7] for release in PREVIOUS_RELEASES)}: the hardest upgrade, then the release "
        "this code replaces)",
    )
    parser.add_argument("--no-rolling-upgrade", action="store_true", help="run the current code only, from the start")
    parser.add_argument(
        "--no-drills", action="store_true", help="skip the disaster drills after the other phases (soak/drills.py)"
    )
    parser.add_argument(
        "--drill",
        action="append",
        choices=DRILLS,
        help=f"run this disaster drill (repeatable; default all: {', '.join(DRILLS)})",
    )
    parser.add_argument(
        "--worker-range-pages", type=int, default=None, help="WORKER_RANGE_PAGES of the workers (default theirs)"
    )
    parser.add_argument(
        "--sabotage",
        action="append",
        choices=["duplicates", "rereads", "resurrection"],
        help="prove the judge (the run must fail): `duplicates` runs an indexer without its duplicate guards; "
        "`rereads` one that reads and extracts unchanged re-uploads, copies and renames again; "
        "`resurrection` one whose writes skip the ledger check (a delayed create lands after its delete). "
        "Give it more than once to break several guards in one run (each judge rule reports its own failure)",
    )
    parser.add_argument("--state-dir", type=Path, default=Path(".docindex/soak"), help="servers, logs (per seed)")
    parser.add_argument("--out", type=Path, default=Path("bench/soak.json"), help="figures (default bench/soak.json)")
    return parser


def _seconds_range(text: str) -> tuple[float, float]:
    low, _, high = text.partition(":")
    try:
        values = (float(low), float(high))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not LOW:HIGH seconds: {text!r}") from None
    if not 0 <= values[0] <= values[1]:
        raise argparse.ArgumentTypeError(f"not 0 <= LOW <= HIGH: {text!r}")
    return values


def _weights(text: str) -> dict[str, int]:
    weights: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name not in Workload.STORM or not value.isdigit():
            raise argparse.ArgumentTypeError(f"not OP=N with a storm operation: {part!r}")
        weights[name] = int(value)
    return weights


def _kind_weights(text: str) -> dict[str, int]:
    weights: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name not in KINDS or not value.isdigit():
            raise argparse.ArgumentTypeError(f"not KIND=N with a document kind: {part!r}")
        weights[name] = int(value)
    return weights


def previous_release(args: argparse.Namespace, run: int) -> str | None:
    """The release the ``run``-th seed upgrades from (None: no rolling upgrade)."""
    if args.no_rolling_upgrade:
        return None
    releases = args.previous_release or list(PREVIOUS_RELEASES)
    return str(releases[run % len(releases)])


def config_from(args: argparse.Namespace, seed: int, run: int = 0) -> SoakConfig:
    from devkit.faults import OpenSearchFaultRates, S3FaultRates
    from soak.delivery import DeliveryFaults

    config = SoakConfig(
        seed=seed,
        documents=args.documents,
        storm_ratio=args.storm_ratio,
        function_timeout=args.function_timeout,
        visibility_timeout=args.visibility_timeout,
        max_receive_count=args.max_receive_count,
        lambdas=args.lambdas,
        kill_probability=args.kill_probability,
        worker_kill_probability=args.worker_kill_probability,
        write_delay_probability=args.write_delay_probability,
        write_delay_seconds=args.write_delay_seconds,
        gc_deletes_seconds=args.gc_deletes,
        storm_weights=args.storm_weights,
        kind_weights=args.kind_weights,
        sabotage=tuple(args.sabotage or ()),
        poison=not args.no_poison,
        resync=not args.no_resync,
        previous_release=previous_release(args, run),
        worker_range_pages=args.worker_range_pages,
        drills=() if args.no_drills else tuple(args.drill or DRILLS),
        state_dir=args.state_dir,
    )
    if args.no_faults:
        config.kill_probability = 0.0
        config.worker_kill_probability = 0.0
        config.write_delay_probability = 0.0
        config.opensearch = OpenSearchFaultRates(0, 0, 0, 0, 0)
        config.s3 = S3FaultRates(0, 0, 0, 0)
        config.delivery = DeliveryFaults(copies=(1.0, 0.0, 0.0), eventbridge_share=0, sns_share=0, late_share=0)
    return config


def summary_lines(result: dict[str, Any]) -> list[str]:
    rec, writes = result.get("reconcile", {}), result.get("writes", {})
    dead, retries, faults = result.get("dead_lettered", {}), result.get("retries", {}), result.get("faults", {})
    opensearch = sum(v for k, v in faults.items() if k.startswith("opensearch_"))
    s3 = sum(v for k, v in faults.items() if k.startswith("s3_"))
    changes = result.get("changes", {})
    verdict = "PASSED" if result.get("passed") else "FAILED"
    lines = [
        f"seed {result['seed']}: {verdict} in {result.get('wall_seconds')} s",
        f"  changes        {changes.get('s3_changes')} S3 changes + {changes.get('backfill_enqueued')} backfill, "
        f"{writes.get('distinct_changes')} distinct; {result.get('delivery', {}).get('messages')} messages delivered",
        f"  suppressed     {result.get('duplicates_suppressed')} duplicates, "
        f"{result.get('stale_skipped')} stale events",
        f"  faults         {opensearch} OpenSearch, {s3} S3 GetObject; {faults.get('invocations_killed_mid_batch')} "
        f"invocations killed mid-batch, {faults.get('invocations_timed_out')} timed out; "
        f"{faults.get('ocr_pool_processes_killed')} OCR processes and "
        f"{faults.get('ocr_workers_killed')} workers killed; "
        f"{(faults.get('document_writes_delayed') or {}).get('held')} document writes held, "
        f"{(faults.get('document_writes_delayed') or {}).get('overtaken_while_held')} overtaken meanwhile",
        f"  retries        {retries.get('records_failed_and_redelivered')} records redelivered, "
        f"{retries.get('bulk_item_retries')} bulk items retried, {retries.get('ocr_jobs_retried')} OCR jobs retried",
        f"  dead-lettered  {dead.get('ingest')} ingest + {dead.get('ocr')} OCR; redriven {result.get('redriven')}",
        f"  reconcile      {rec.get('coverage_percent')} % coverage, {rec.get('missing')} missing, "
        f"{rec.get('stale')} stale, {rec.get('orphaned')} orphaned",
        f"  writes         {writes.get('writes')} accepted, {writes.get('duplicate_writes')} duplicate "
        f"(max {writes.get('max_writes_per_version')} per version; "
        f"{writes.get('versions_reused_after_restore', 0)} versions reused after the ledger restore)",
    ]
    deaths = result.get("ocr_process_deaths") or {}
    if deaths.get("pool_processes_killed"):
        lines.append(
            f"  OCR deaths     {deaths['pool_processes_killed']} pool processes killed: "
            f"{deaths['job_attempts_broken']} job attempts broken ({deaths['jobs_per_death']} per death), "
            f"{deaths['pages_redone']} pages read again ({deaths['pages_per_death']} per death)"
        )
    resync = result.get("resync") or {}
    if resync:
        lines.append(
            f"  re-sync        {resync.get('resynced')} unchanged re-uploads, {resync.get('unchanged_body_reads')} "
            f"body reads; {resync.get('copied')} copies + {resync.get('renamed')} renames, "
            f"{len(resync.get('extracted') or [])} extracted, {len(resync.get('ocr_jobs') or [])} OCR jobs"
        )
    rolling = result.get("rolling_upgrade") or {}
    if rolling:
        lines.append(
            f"  upgrade        from {str(rolling.get('previous_release'))[:7]}: the previous release applied "
            f"{rolling.get('previous_changes_applied')} changes and {rolling.get('previous_ocr_jobs')} OCR jobs, "
            f"failed {rolling.get('unreadable_by_previous')} of the current one's messages; "
            f"it finished {rolling.get('embed_jobs_finished_by_previous')} embed jobs, "
            f"{rolling.get('embed_jobs_taken_by_previous')} from the OCR queue"
        )
    for drill in result.get("drills") or []:
        lines.append(
            f"  drill          {drill['name']}: {drill['seconds']} s, {drill['documents_wrong']} documents wrong, "
            f"reconcile {drill['reconcile'].get('coverage_percent')} %; "
            + json.dumps(drill["figures"], ensure_ascii=False)
        )
    lines += [f"  FAIL: {failure}" for failure in result.get("failures", [])]
    if not result.get("passed") and result.get("replay"):
        lines.append(f"  replay: {result['replay']}")
    return lines


def replay_command(argv: Sequence[str] | None, seed: int, release: str | None = None) -> str:
    """The command that runs this seed again, with the same options (and the release it upgraded from)."""
    args = list(sys.argv[1:] if argv is None else argv)
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip and not arg.startswith("-"):
            continue
        skip = arg in ("--seeds", "--previous-release")
        if not skip:
            kept.append(arg)
    chosen = ["--previous-release", release] if release else []
    return " ".join(["python -m soak", "--seeds", str(seed), *chosen, *kept])


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _children_import_soak() -> None:
    """Servers and workers started by the run import ``soak`` (a top-level package) whatever their cwd."""
    root = str(Path(__file__).resolve().parents[1])
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _children_import_soak()
    # SIGTERM (and SIGINT, which a shell leaves ignored for background jobs) stop the run
    # through its teardown: no server, worker or sandbox outlives it.
    signal.signal(signal.SIGTERM, _interrupt)
    runs: list[dict[str, Any]] = []
    code = 0
    started = time.monotonic()
    for run, seed in enumerate(args.seeds):
        config = config_from(args, seed, run)
        try:
            result = Soak(config).run()
        except KeyboardInterrupt:
            print(f"seed {seed}: interrupted", file=sys.stderr)
            return 130
        except SoakError as exc:
            print(f"seed {seed}: could not finish: {exc}", file=sys.stderr)
            result = {"seed": seed, "passed": False, "failures": [f"could not finish: {exc}"]}
            code = 2
        result["replay"] = replay_command(argv, seed, config.previous_release)
        runs.append(result)
        for line in summary_lines(result):
            print(line, flush=True)
        if not result.get("passed") and code == 0:
            code = 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "passed": all(r.get("passed") for r in runs),
        "seeds": [r["seed"] for r in runs],
        "wall_seconds": round(time.monotonic() - started, 1),
        "runs": runs,
    }
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    print(f"figures written to {args.out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
