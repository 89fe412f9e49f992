"""``docindex analysis validate``: check the company vocabulary before it reaches a cluster.

Exit codes: 0 valid, 1 warnings only, 2 errors (or the cluster refused the settings).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from docindex.cli import _ops
from docindex.core.exceptions import CommandError


def register(subparsers: Any) -> None:
    """Add the ``analysis`` subcommand."""
    parser = subparsers.add_parser(
        "analysis",
        help="the search vocabulary (user dictionary, synonyms): validate it",
        description="The company's search vocabulary, docindex/index/analysis.toml (docs/search.md).",
        formatter_class=_ops.HelpFormatter,
    )
    commands = parser.add_subparsers(dest="analysis_command", metavar="COMMAND", required=True)
    validate = commands.add_parser(
        "validate",
        help="check the user dictionary and synonyms; with a target, on the cluster too",
        description=(
            "Check the file: CSV shape of the user dictionary rules, segmentation and readings, duplicates, "
            "synonym syntax, entries written in a form normalization rewrites (they would never match), package "
            "IDs. With --stack, --env-file or --opensearch-endpoint, also create a throwaway index with the full "
            "settings on that cluster (which parses the dictionary and synonyms as the real index would), "
            "analyze every entry with it, and delete it. Exit code: 0 valid, 1 warnings, 2 errors."
        ),
        formatter_class=_ops.HelpFormatter,
        epilog=(
            "examples:\n"
            "  docindex analysis validate\n"
            "  docindex analysis validate --config my-analysis.toml --stack docindex-dev"
        ),
    )
    validate.add_argument("--config", type=Path, metavar="PATH", help="default: the shipped analysis.toml")
    group = validate.add_argument_group("cluster (optional)")
    group.add_argument("--stack", metavar="NAME", help="CloudFormation stack deployed from template.yaml")
    group.add_argument("--env-file", type=Path, metavar="PATH", help="KEY=VALUE file (e.g. .docindex/local.env)")
    group.add_argument("--opensearch-endpoint", help="OpenSearch endpoint URL")
    group.add_argument("--region", help="AWS region (SigV4)")
    group.add_argument("--profile", help="AWS named profile")
    validate.add_argument("--json", action="store_true", help="print the findings as JSON")
    validate.set_defaults(func=run_validate)


def _on_cluster(args: argparse.Namespace, vocabulary: Any, findings: Any) -> dict[str, Any] | None:
    """Try the settings on the target cluster (a throwaway index); its refusals become findings."""
    from opensearchpy.exceptions import ConnectionError as OpenSearchUnreachable
    from opensearchpy.exceptions import OpenSearchException

    from docindex.index.mapping import try_on_cluster

    try:
        deployment, _ = _ops.resolve(argparse.Namespace(**{**vars(args), "bucket": None, "index": None}))
        client = _ops.opensearch_for(deployment)
        cluster: dict[str, Any] = try_on_cluster(client, vocabulary)
    except OpenSearchUnreachable:
        raise  # not a finding about the settings: the central handler says "cannot reach OpenSearch"
    except (CommandError, OpenSearchException) as exc:
        findings.errors.append(f"the cluster refused the settings: {exc}")
        return None
    findings.warnings += _index_warnings(client, deployment.opensearch_index)
    cluster["meaning_search"] = _meaning_search_on(client, findings)
    if cluster["analysis"] == "cjk" and (vocabulary.dictionary_rules or vocabulary.dictionary_package):
        findings.warnings.append(
            "the cluster created the index without kuromoji: it lacks analysis-kuromoji, or it refused "
            "the dictionary (run with -v to see its answer)"
        )
    return cluster


def _meaning_search_on(client: Any, findings: Any) -> dict[str, Any] | None:
    """The vector mapping and the permission-filtered vector query, on the cluster (meaning search)."""
    from docindex.core.settings import EmbeddingSettings
    from docindex.embed.settings import vector_spec
    from docindex.index.hybrid import try_vectors_on_cluster

    spec = vector_spec(EmbeddingSettings.from_env())
    if spec is None:
        return None
    found = try_vectors_on_cluster(client, spec)
    if not found["vectors"]:
        findings.warnings.append(f"meaning search: {found['reason']}; search will be by words only")
    elif not found["query"]:
        why = found.get("reason") or "it did not answer as expected"
        findings.errors.append(f"meaning search: the permission-filtered vector query failed: {why}")
    else:
        _storage_findings(found, findings)
    return found


def _storage_findings(found: dict[str, Any], findings: Any) -> None:
    """The vector field as the cluster made it (docindex.index.encodings): what it costs, what it refused."""
    if not found.get("vector_read_back"):
        findings.errors.append(
            "meaning search: a document read back lost its vectors (reindex and the access re-stamp would "
            "drop them): the cluster excludes them from _source without deriving them"
        )
    if found.get("encoding") != found.get("encoding_wanted"):
        findings.warnings.append(
            f"meaning search: the cluster refused the {found.get('encoding_wanted')} vector encoding; vectors are "
            f"{found.get('encoding')} (more memory per vector: docs/meaning-search.md)"
        )
    if not found.get("derived_source"):
        findings.warnings.append(
            "meaning search: this cluster has no derived source for vectors (OpenSearch before 2.19): each "
            "vector is kept twice, in _source as JSON and in the vector field (docs/meaning-search.md)"
        )


def _index_warnings(client: Any, index: str) -> list[str]:
    """What the deployment's index lacks of the current analysis: the fix is `docindex reindex`."""
    from docindex.ops.diagnose.checks.index import names_warnings, variants_warnings

    mappings = client.indices.get_mapping(index=index, ignore=[404])
    return [
        f"index {concrete}: {warning}"
        for concrete, body in mappings.items()
        if isinstance(body, dict) and "mappings" in body
        for warning in variants_warnings(body["mappings"]) + names_warnings(body["mappings"])
    ]


def run_validate(args: argparse.Namespace) -> int:
    from docindex.index import vocabulary as vocabulary_module

    try:
        vocabulary = vocabulary_module.load(args.config)
    except vocabulary_module.VocabularyError as exc:
        print(f"docindex analysis validate: {exc}", file=sys.stderr)
        return _ops.EXIT_FAIL
    findings = vocabulary_module.check(vocabulary)
    cluster: dict[str, Any] | None = None
    if findings.ok and (args.stack or args.env_file or args.opensearch_endpoint):
        cluster = _on_cluster(args, vocabulary, findings)
    if args.json:
        _ops.emit_json(
            {
                "config": vocabulary.source,
                "dictionary_rules": len(vocabulary.dictionary_rules),
                "synonym_sets": len(vocabulary.synonym_sets),
                "errors": findings.errors,
                "warnings": findings.warnings,
                "cluster": cluster,
            }
        )
    else:
        print(
            f"{vocabulary.source}: {len(vocabulary.dictionary_rules)} dictionary rules"
            f"{' + package ' + vocabulary.dictionary_package if vocabulary.dictionary_package else ''}, "
            f"{len(vocabulary.synonym_sets)} synonym sets"
            f"{' + package ' + vocabulary.synonym_package if vocabulary.synonym_package else ''}"
        )
        for error in findings.errors:
            print(f"  ERROR  {error}")
        for warning in findings.warnings:
            print(f"  WARN   {warning}")
        if cluster:
            print(f"  cluster: accepted with analysis {cluster['analysis']}")
            for text, tokens in cluster["tokens"].items():
                print(f"    {text} -> {' '.join(tokens)}")
        if findings.ok and not findings.warnings:
            print("  OK")
    if not findings.ok:
        return _ops.EXIT_FAIL
    return _ops.EXIT_FINDINGS if findings.warnings else _ops.EXIT_OK
