"""``docindex reindex``: rebuild the index with the current analysis, switch with no downtime.

Exit codes: 0 done, 2 it could not run (no alias, nothing to roll back to, unreachable).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError, ReindexError


def register(subparsers: Any) -> None:
    """Add the ``reindex`` subcommand."""
    parser = subparsers.add_parser(
        "reindex",
        help="rebuild the index with the current analysis and switch the alias to it (--rollback, --cleanup)",
        description=(
            "Create <alias>-v{N+1} with the current settings (normalization, user dictionary, synonyms), copy every "
            "document at its external version while the pipeline keeps writing, switch the alias atomically, then "
            "catch up what was written meanwhile (checked against the ordering ledger) and propagate deletes. The "
            "old index is kept: --rollback switches back to it (with what was written since), --cleanup deletes "
            "the versions no longer behind the alias. Exit code: 0 done, 2 error."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex analysis validate && docindex reindex --stack docindex-prod\n"
            "  docindex reindex --stack docindex-prod --rollback\n"
            "  docindex reindex --stack docindex-prod --cleanup"
        ),
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--rollback", action="store_true", help="switch back to the index the current one was built from"
    )
    action.add_argument(
        "--cleanup", action="store_true", help="delete the index versions the alias no longer points at"
    )
    parser.add_argument(
        "--analysis-config",
        type=Path,
        metavar="PATH",
        help="vocabulary file (default: the shipped docindex/index/analysis.toml)",
    )
    parser.add_argument(
        "--settle",
        type=_ops.bounded_float(0, 3600),
        default=None,
        metavar="SECONDS",
        help="wait after the switch for writes already sent to the old index (default 45)",
    )
    _ops.add_target_options(parser)
    _ops.add_output_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from opensearchpy.exceptions import ConnectionError as OpenSearchUnreachable
    from opensearchpy.exceptions import OpenSearchException

    from docindex.index.vocabulary import VocabularyError

    try:
        return _run(args)
    except OpenSearchUnreachable:
        raise  # the central handler says "cannot reach OpenSearch" with the fix
    except (CommandError, ReindexError, VocabularyError, OpenSearchException) as exc:
        print(f"docindex reindex: {exc}", file=sys.stderr)
        return _ops.EXIT_FAIL


def _run(args: argparse.Namespace) -> int:
    from docindex.index import vocabulary as vocabulary_module
    from docindex.ingest.ledger import Ledger
    from docindex.ops import reindex as ops

    deployment, clients = _ops.resolve(args)
    client = _ops.opensearch_for(deployment)
    alias = deployment.opensearch_index
    if args.cleanup:
        deleted = ops.cleanup(client, alias)
        if args.json:
            _ops.emit_json({"alias": alias, "deleted": deleted})
        else:
            print(f"deleted {', '.join(deleted)}" if deleted else f"nothing to delete: only {alias}'s index exists")
        return _ops.EXIT_OK
    table = deployment.ledger_table or deployment.idempotency_table
    if not table:
        raise CommandError("no ledger table (LEDGER_TABLE, --ledger-table or --stack): the catch-up needs it")
    ledger = Ledger(clients.client("dynamodb"), table)
    settle = ops.DEFAULT_SETTLE_SECONDS if args.settle is None else args.settle
    output = _ops.Output(progress=not args.json)

    def progress(step: str, done: int) -> None:
        if not args.json:
            print(f"  {step}: {done} documents", file=sys.stderr)

    if args.rollback:
        result = ops.rollback(client, alias, ledger, settle_seconds=settle, progress=progress)
    else:
        vocabulary = vocabulary_module.load(args.analysis_config)
        findings = vocabulary_module.check(vocabulary)
        if not findings.ok:
            raise CommandError(f"{vocabulary.source}: " + "; ".join(findings.errors) + " (docindex analysis validate)")
        from docindex.core.settings import EmbeddingSettings
        from docindex.embed.settings import vector_spec

        # The vectors the pipeline writes (EMBEDDINGS, EMBEDDING_MODEL: the env file or the stack's).
        vectors = vector_spec(EmbeddingSettings.from_env())
        result = ops.reindex(
            client, alias, ledger, vocabulary=vocabulary, settle_seconds=settle, progress=progress, vectors=vectors
        )
    if args.json:
        _ops.emit_json(result.to_dict())
        return _ops.EXIT_OK
    output.line(f"{alias}: {result.source} -> {result.target} (analysis {result.analysis})")
    output.table(
        ["copied", "caught up", "refused by the ledger", "deletes propagated"],
        [[str(result.copied), str(result.caught_up), str(result.skipped_stale), str(result.deleted)]],
    )
    kept = result.source
    output.line(f"{kept} is kept: `docindex reindex --rollback` switches back, `docindex reindex --cleanup` deletes it")
    return _ops.EXIT_OK
