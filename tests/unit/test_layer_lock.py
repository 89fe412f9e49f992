"""The Lambda layer ships exactly its pinned closure, without opensearch-py's unused gRPC stack.

layers/docindex/Makefile installs layers/docindex/requirements.txt with --no-deps, so a dependency
missing from the file would be missing in Lambda (an ImportError on the first cold start), and a
version that drifts from the dev venv's would ship code nobody tested.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO_ROOT

LOCK = REPO_ROOT / "layers" / "docindex" / "requirements.txt"
CONSTRAINTS = REPO_ROOT / "requirements" / "constraints.txt"
# Left out of the layer on purpose: opensearch-py 3.x requires these for its gRPC transport, which
# docindex never uses (HTTP only) and opensearchpy never imports.
LEFT_OUT = {"opensearch-protobufs", "grpcio", "protobuf"}
# The Lambda runtime's environment, for dependency markers.
LAMBDA = {
    "python_version": "3.13",
    "python_full_version": "3.13.0",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "aarch64",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
}


def _pins(path: Path) -> dict[str, Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    requirements = [Requirement(line) for line in lines if line and not line.startswith("-")]
    return {canonicalize_name(req.name): req for req in requirements}


def _pinned_version(req: Requirement) -> str:
    (spec,) = req.specifier
    assert spec.operator == "==", f"{req} is not an exact pin"
    return spec.version


def _dependencies(name: str, extras: set[str]) -> set[str]:
    needed = set()
    for line in importlib.metadata.requires(name) or []:
        req = Requirement(line)
        wanted = req.marker is None or any(req.marker.evaluate({**LAMBDA, "extra": e}) for e in extras | {""})
        if wanted:
            needed.add(canonicalize_name(req.name))
    return needed


def test_every_dependency_of_a_shipped_package_is_pinned_in_the_layer() -> None:
    lock = _pins(LOCK)
    missing = {
        f"{name} needs {dependency}"
        for name, req in lock.items()
        for dependency in _dependencies(name, set(req.extras))
        if dependency not in lock and dependency not in LEFT_OUT
    }
    assert missing == set()
    assert not LEFT_OUT & set(lock), "a package left out on purpose is back in the layer"


def test_the_layer_pins_what_the_tests_run_with() -> None:
    constraints = _pins(CONSTRAINTS)
    for name, req in _pins(LOCK).items():
        assert _pinned_version(req) == _pinned_version(constraints[name]), name
        assert importlib.metadata.version(name) == _pinned_version(req), name


GUARD = """
import importlib.abc, importlib.util, json, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "grpc" or name.startswith(("google.protobuf", "opensearch.protobufs")):
            raise ImportError(f"{name} is not in the Lambda layer")
sys.meta_path.insert(0, Absent())
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("app_" + str(len(sys.modules)), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
# What the functions do with OpenSearch: the client, its bulk helpers and SigV4 signing.
from opensearchpy import OpenSearch, AWSV4SignerAuth, RequestsHttpConnection, helpers
from docindex.index import bulk, search, store
client = OpenSearch(hosts=["http://127.0.0.1:9"], connection_class=RequestsHttpConnection)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("grpc", "google", "opensearch"))))
"""


def test_the_functions_run_without_the_grpc_stack() -> None:
    handlers = [str(REPO_ROOT / "functions" / name / "app.py") for name in ("indexer", "redrive", "search")]
    result = subprocess.run(
        [sys.executable, "-c", GUARD, *handlers],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT / "layers" / "docindex"), "AWS_REGION": "us-east-1"},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
