"""The CLI's contract pieces without servers: safe text, one settings precedence, the query syntax, error lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docindex.cli import _errors
from docindex.cli._ops import emit_json, safe_text
from docindex.index.search import QueryError, page_query_text, parse_query, user_query
from docindex.ops.deployment import layered
from docindex.ops.envfile import read_env_file, write_env_file

# ------------------------------------------------------------------ terminal injection


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("report\x1b[2J\x1b]0;pwned\x07.pdf", "report\\x1b[2J\\x1b]0;pwned\\x07.pdf"),
        ("invoice\u202efdp.exe", "invoice\\u202efdp.exe"),
        ("a\x00b", "a\\x00b"),
        ("line\nbreak\rback", "line\\x0abreak\\x0dback"),
        ("\u2066isolate\u2069 \u200fmark", "\\u2066isolate\\u2069 \\u200fmark"),
        ("bad\udcffbyte", "bad\\udcffbyte"),
        ("営業部/見積書 2026.txt", "営業部/見積書 2026.txt"),
    ],
)
def test_safe_text_shows_control_bidi_and_nul_literally(raw: str, shown: str) -> None:
    assert safe_text(raw) == shown


def test_json_output_escapes_what_json_leaves_raw(capsys: pytest.CaptureFixture[str]) -> None:
    emit_json({"key": "a\u202eb\x1bc\udcffd 日本"})
    out = capsys.readouterr().out
    assert "\u202e" not in out
    assert "\x1b" not in out
    assert json.loads(out)["key"].startswith("a\u202eb\x1bc")
    assert "日本" in out


# ------------------------------------------------------------------ settings precedence

FILE = {"OPENSEARCH_ENDPOINT": "http://127.0.0.1:9200", "OPENSEARCH_INDEX": "from-file", "AWS_REGION": "us-east-1"}


def test_flags_beat_the_environment_which_beats_the_env_file_which_beats_the_stack() -> None:
    from docindex.ops.deployment import Deployment

    stack = Deployment(
        source="stack s", stack_name="s", bucket="stack-bucket", opensearch_index="from-stack", region="eu-west-1"
    )
    d = layered(
        flags={"opensearch_endpoint": "http://127.0.0.1:1", "bucket": None},
        environ={"OPENSEARCH_INDEX": "from-env"},
        env_file=("env file local.env", FILE),
        stack=stack,
    )
    assert (d.opensearch_endpoint, d.opensearch_index, d.bucket, d.region) == (
        "http://127.0.0.1:1",
        "from-env",
        "stack-bucket",
        "us-east-1",
    )
    assert d.origins["opensearch_endpoint"] == "--opensearch-endpoint"
    assert d.origins["opensearch_index"] == "environment"
    assert d.origins["region"] == "env file local.env"
    assert d.origins["bucket"] == "stack s"
    assert d.settings_sources == ["--opensearch-endpoint", "environment", "env file local.env", "stack s"]


def test_an_endpoint_flag_keeps_the_env_files_local_settings() -> None:
    d = layered(
        flags={"opensearch_endpoint": "http://127.0.0.1:9201"},
        environ={},
        env_file=("env file .docindex/local.env", {**FILE, "OPENSEARCH_AUTH": "none", "AWS_ENDPOINT_URL": "http://m"}),
    )
    assert (d.opensearch_auth, d.endpoint_url, d.is_local) == ("none", "http://m", True)


def test_env_files_are_read_by_python_dotenv_and_written_back_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "local.env"
    values = {"A": "x y", "B": "http://h:1/q?a=b", "C": "a#b", "D": "plain"}
    write_env_file(path, values)
    assert read_env_file(path) == values
    path.write_text('export X="1 2"  # comment\nY=z\n# only a comment\n')
    assert read_env_file(path) == {"X": "1 2", "Y": "z"}


def test_the_exported_environment_wins_over_the_env_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from docindex.ops.envfile import apply_env_file

    path = tmp_path / "local.env"
    write_env_file(path, {"OPENSEARCH_INDEX": "from-file", "DOCINDEX_TEST_ONLY_FILE": "yes"})
    monkeypatch.setenv("OPENSEARCH_INDEX", "exported")
    monkeypatch.delenv("DOCINDEX_TEST_ONLY_FILE", raising=False)
    apply_env_file(path)
    import os

    assert os.environ["OPENSEARCH_INDEX"] == "exported"
    assert os.environ["DOCINDEX_TEST_ONLY_FILE"] == "yes"
    monkeypatch.delenv("DOCINDEX_TEST_ONLY_FILE")


# ------------------------------------------------------------------ query syntax


def test_phrases_exclusions_and_or_become_limited_simple_query_strings() -> None:
    parsed = parse_query('"quarterly revenue" -draft report OR 議事録 -"first draft"')
    query = user_query(parsed)["bool"]
    must = [c["simple_query_string"]["query"] for c in query["must"]]
    must_not = [c["simple_query_string"]["query"] for c in query["must_not"]]
    assert must == ['"quarterly revenue"', "report | 議事録"]
    assert must_not == ["draft", '"first draft"']
    for clause in query["must"] + query["must_not"]:
        assert clause["simple_query_string"]["flags"] == "PHRASE|OR|WHITESPACE"
        assert clause["simple_query_string"]["fields"] == ["title^3", "filename^2", "content"]
    # the page clause gets the wanted clauses in one simple_query_string: OR as |, no exclusions
    assert page_query_text(parsed) == '"quarterly revenue" (report | 議事録)'


@pytest.mark.parametrize("typed", ["content:secret", "a*", "(a|b)", "a~2", "+a", "/re.*/"])
def test_no_query_syntax_beyond_the_documented_one_reaches_opensearch(typed: str) -> None:
    for clause in parse_query(typed).clauses:
        for alternative in clause.alternatives:
            assert not set(alternative) & set('|+()*~\\"'), alternative


@pytest.mark.parametrize("typed", ["", "   ", "*", "-", '""', "-draft", "OR", "\udcff\udcfe"])
def test_unusable_queries_are_refused(typed: str) -> None:
    with pytest.raises(QueryError):
        parse_query(typed)


# ------------------------------------------------------------------ error lines


def test_error_lines_name_the_fix() -> None:
    from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError

    assert "aws configure" in _errors.describe(NoCredentialsError())
    assert "docindex local up" in _errors.describe(EndpointConnectionError(endpoint_url="http://127.0.0.1:1"))
    denied = ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "DescribeStacks")
    assert _errors.describe(denied).startswith("AWS denied access (DescribeStacks)")
    assert "OPENSEARCH_AUTH=none" in _errors.describe(ValueError("Credentials cannot be empty"))
    assert "-v" in _errors.describe(RuntimeError("boom"))
