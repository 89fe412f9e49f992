"""Build the local OpenSearch node's home from Maven Central: download, verify, assemble, compile.

``home()`` returns the assembled directory (``bin/opensearch``, ``lib/``, ``modules/``,
``plugins/``), building it once into the cache (``DOCINDEX_OPENSEARCH_CACHE``, else
``$XDG_CACHE_HOME/docindex/opensearch``, else ``~/.cache/docindex/opensearch``): every artifact of
``devkit.opensearch.artifacts`` is downloaded once and checked against its pinned SHA-256, the
modules get their descriptors, and docindex's own analysis plugins are compiled with the JDK of
``devkit.opensearch.java`` against the server's own jars. A home is named by a digest of all of that,
so a change of a pin or of a plugin's source builds a new one beside the old; nodes only read it
(each keeps its config, data and logs in a directory of its own). Builds by parallel processes (the
test processes start together) wait for one another on a lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess  # runs the JDK's javac on docindex's own plugin sources  # nosec B404
import tempfile
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

from devkit.opensearch import artifacts
from devkit.opensearch.artifacts import Artifact, Module
from devkit.opensearch.java import java_home

JAVA_SOURCES = Path(__file__).resolve().parent / "java"
# Bumped when the way a home is assembled changes.
LAYOUT = 1


class BuildError(RuntimeError):
    """The node's home could not be built (a download, a checksum or the plugins' compilation)."""


def cache_dir() -> Path:
    named = os.environ.get("DOCINDEX_OPENSEARCH_CACHE")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "docindex" / "opensearch"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(artifact: Artifact, directory: Path) -> Path:
    """``artifact`` in ``directory``, downloaded if absent; BuildError if its SHA-256 is not the pinned one."""
    path = directory / artifact.filename
    if path.exists() and _sha256(path) == artifact.sha256:
        return path
    directory.mkdir(parents=True, exist_ok=True)
    url = artifact.url()
    if not url.startswith("https://"):
        raise BuildError(f"refusing a non-https Maven repository: {url}")
    part = path.with_name(path.name + ".part")
    try:
        _download(url, part)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise BuildError(f"could not download {artifact.coordinate} from {url}: {exc}") from exc
    got = _sha256(part)
    if got != artifact.sha256:
        part.unlink(missing_ok=True)
        raise BuildError(f"{artifact.coordinate} from {url} has SHA-256 {got}, not the pinned {artifact.sha256}")
    part.replace(path)
    return path


def _download(url: str, to: Path) -> None:
    with urllib.request.urlopen(url, timeout=120) as response, to.open("wb") as out:  # noqa: S310  # https only  # nosec B310
        shutil.copyfileobj(response, out, 1 << 20)


def digest() -> str:
    """What a home is built from: the pins, docindex's plugin sources and the layout."""
    h = hashlib.sha256(f"layout {LAYOUT}\n".encode())
    for artifact in artifacts.every_artifact():
        h.update(f"{artifact.coordinate} {artifact.sha256}\n".encode())
    for source in sorted(JAVA_SOURCES.rglob("*.java")):
        h.update(source.relative_to(JAVA_SOURCES).as_posix().encode() + b"\n" + source.read_bytes())
    return h.hexdigest()[:12]


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def home(cache: Path | None = None) -> Path:
    """The assembled node home, built into the cache first if it is not there yet."""
    cache = cache or cache_dir()
    target = cache / f"opensearch-{artifacts.OPENSEARCH_VERSION}-{digest()}"
    if (target / ".complete").exists():
        return target
    with _locked(cache):
        if (target / ".complete").exists():
            return target
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
        try:
            _assemble(work, cache / "artifacts")
            (work / ".complete").write_text(digest() + "\n")
            if target.exists():
                shutil.rmtree(target)
            work.rename(target)
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
    return target


def _unzip(archive: Path, into: Path, *, strip: bool) -> None:
    """Extract ``archive`` (its one top folder dropped when ``strip``), refusing paths that leave ``into``."""
    root = into.resolve()
    with zipfile.ZipFile(archive) as z:
        for member in z.infolist():
            name = member.filename.split("/", 1)[1] if strip and "/" in member.filename else member.filename
            if not name or name.endswith("/"):
                continue
            destination = (into / name).resolve()
            if root not in destination.parents:
                raise BuildError(f"{archive.name}: {member.filename} would leave the home")
            destination.parent.mkdir(parents=True, exist_ok=True)
            with z.open(member) as source, destination.open("wb") as out:
                shutil.copyfileobj(source, out)
            mode = (member.external_attr >> 16) & 0o777
            if mode:
                destination.chmod(mode)


def _module(directory: Path, module: Module, downloads: Path) -> None:
    directory.mkdir(parents=True)
    for jar in module.jars:
        shutil.copy2(fetch(jar, downloads), directory / jar.filename)
    (directory / "plugin-descriptor.properties").write_text(module.descriptor())
    if module.policy:
        (directory / "plugin-security.policy").write_text(module.policy)


def _compile(module: Module, directory: Path, server_lib: Path) -> None:
    """Compile a plugin of docindex's own into ``<directory>/<name>.jar``, against the server's jars and its own."""
    javac = java_home() / "bin" / "javac"
    sources = [str(p) for package in module.sources for p in sorted((JAVA_SOURCES / package).glob("*.java"))]
    if not sources:
        raise BuildError(f"{module.name}: no Java sources under {JAVA_SOURCES}")
    classpath = os.pathsep.join([str(server_lib / "*"), *(str(directory / jar.filename) for jar in module.jars)])
    with tempfile.TemporaryDirectory() as classes:
        done = subprocess.run(  # noqa: S603  # the JDK's javac on our own sources  # nosec B603
            [
                str(javac),
                "--release",
                module.java_version,
                "-encoding",
                "UTF-8",
                "-d",
                classes,
                "-cp",
                classpath,
                *sources,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise BuildError(f"compiling {module.name} failed:\n{done.stdout}{done.stderr}")
        with zipfile.ZipFile(directory / f"{module.name}.jar", "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: docindex devkit\n\n")
            for path in sorted(Path(classes).rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())


def _assemble(work: Path, downloads: Path) -> None:
    _unzip(fetch(artifacts.DISTRIBUTION, downloads), work, strip=True)
    for module in artifacts.MODULES:
        _module(work / "modules" / module.name, module, downloads)
    plugins = work / "plugins"
    plugins.mkdir(exist_ok=True)
    _unzip(fetch(artifacts.KNN, downloads), plugins / "opensearch-knn", strip=False)
    for module in artifacts.OWN_PLUGINS:
        _module(plugins / module.name, module, downloads)
        _compile(module, plugins / module.name, work / "lib")
    for script in (work / "bin").iterdir():
        script.chmod(0o755)


def main() -> int:
    print(home())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
