from __future__ import annotations

import pytest

from docindex.settings import Settings, SettingsError

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
