from __future__ import annotations

import pytest

from docindex.core.exceptions import SettingsError
from docindex.core.settings import Settings

REQUIRED = {"OPENSEARCH_ENDPOINT": "https://search.example.com/", "IDEMPOTENCY_TABLE": "idem"}


def test_defaults() -> None:
    settings = Settings.from_env(REQUIRED)
    assert settings.opensearch_endpoint == "https://search.example.com"
    assert settings.opensearch_index == "documents"
    assert settings.opensearch_auth == "sigv4"
    assert settings.opensearch_service == "es"
    assert settings.ledger_table_name == "idem"
    assert settings.bulk_max_bytes < 10 * 1024 * 1024


def test_region_falls_back_to_aws_default_region() -> None:
    assert Settings.from_env({**REQUIRED, "AWS_DEFAULT_REGION": "ap-northeast-1"}).aws_region == "ap-northeast-1"


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"IDEMPOTENCY_TABLE": "idem"},
        {**REQUIRED, "OPENSEARCH_ENDPOINT": "search.example.com"},
        {**REQUIRED, "OPENSEARCH_AUTH": "basic"},
        {**REQUIRED, "OPENSEARCH_SERVICE": "lambda"},
        {**REQUIRED, "INDEXER_CONCURRENCY": "0"},
    ],
)
def test_invalid_configuration_is_reported_clearly(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError, match="invalid docindex configuration"):
        Settings.from_env(env)


def test_ocr_queue_url_is_optional_for_the_settings_class() -> None:
    # The CLI shares these settings and never sends OCR jobs
    assert Settings.from_env(REQUIRED).ocr_queue_url is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "required by the indexer"),
        ("", "required by the indexer"),
        ("  ", "required by the indexer"),
        ("arn:aws:sqs:us-east-1:123456789012:docindex-ocr", "must be the queue's URL"),
    ],
)
def test_the_indexer_refuses_to_start_without_an_ocr_queue_url(
    value: str | None, problem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import docindex.ingest.indexer
    from docindex.core.settings import get_settings
    from docindex.ingest.indexer import Indexer, get_indexer

    env = dict(REQUIRED) if value is None else {**REQUIRED, "OCR_QUEUE_URL": value}
    expected = f"invalid docindex configuration: OCR_QUEUE_URL: {problem}"
    # Constructing the indexer ...
    with pytest.raises(SettingsError, match=expected):
        Indexer(Settings.from_env(env), s3=None, sqs=None, dynamodb=None, opensearch=None)  # type: ignore[arg-type]
    # ... and the Lambda handler's setup, from the environment
    for name in ("OCR_QUEUE_URL", "LEDGER_TABLE", "OPENSEARCH_ENDPOINT", "IDEMPOTENCY_TABLE"):
        monkeypatch.delenv(name, raising=False)
    for name, setting in env.items():
        monkeypatch.setenv(name, setting)
    monkeypatch.setattr(docindex.ingest.indexer, "_indexer", None)
    get_settings.cache_clear()
    try:
        with pytest.raises(SettingsError, match=expected):
            get_indexer()
        assert docindex.ingest.indexer._indexer is None
    finally:
        get_settings.cache_clear()


def test_the_indexer_accepts_a_queue_url() -> None:
    url = "https://sqs.eu-west-1.amazonaws.com/123456789012/docindex-ocr"
    settings = Settings.from_env({**REQUIRED, "OCR_QUEUE_URL": url})
    assert settings.for_indexer() is settings


def _settings_defaults() -> dict[str, set[float]]:
    """Every numeric default of every settings model, by its variable's name."""
    import importlib
    import pkgutil

    import docindex
    from docindex.core.settings import EnvSettings

    for module in pkgutil.walk_packages(docindex.__path__, "docindex."):
        if module.name.endswith(".settings"):
            importlib.import_module(module.name)
    models: list[type[EnvSettings]] = []
    pending = [EnvSettings]
    while pending:
        for sub in pending.pop().__subclasses__():
            models.append(sub)
            pending.append(sub)
    defaults: dict[str, set[float]] = {}
    for model in models:
        for field in model.model_fields.values():
            value = field.default
            if field.alias and isinstance(value, int | float) and not isinstance(value, bool):
                defaults.setdefault(field.alias, set()).add(float(value))
    return defaults


def test_the_documented_numeric_defaults_are_the_codes() -> None:
    """docs/configuration.md's default column says what a variable left unset gives (a re-fit that
    changed the code but not the manual printed MEANING_MIN_LEAD 0.04 for 0.045)."""
    import re
    from pathlib import Path

    manual = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    defaults = _settings_defaults()
    compared, wrong = 0, []
    for line in manual.read_text(encoding="utf-8").splitlines():
        row = re.match(r"\| `([A-Z0-9_]+)` \|.*?\| `(-?[0-9.]+)` \|[^|]*\|$", line)
        if row is None or row[1] not in defaults:
            continue
        compared += 1
        if float(row[2]) not in defaults[row[1]]:
            wrong.append(f"{row[1]}: documented {row[2]}, code {sorted(defaults[row[1]])}")
    assert wrong == []
    assert compared >= 40  # the table is read at all
