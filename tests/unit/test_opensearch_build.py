"""The local OpenSearch node's build (devkit/opensearch): pinned artifacts, safe unpacking, a JDK that can run it."""

from __future__ import annotations

import hashlib
import re
import zipfile
from pathlib import Path

import pytest

from devkit.opensearch import build, java
from devkit.opensearch.artifacts import DISTRIBUTION, Artifact, every_artifact


def test_an_artifact_whose_bytes_are_not_the_pinned_ones_is_refused_and_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    artifact = Artifact("org.example", "thing", "1.0", hashlib.sha256(b"the real jar").hexdigest())
    monkeypatch.setattr(build, "_download", lambda url, to: to.write_bytes(b"a tampered jar"))
    with pytest.raises(build.BuildError, match="not the pinned"):
        build.fetch(artifact, tmp_path)
    assert list(tmp_path.iterdir()) == []
    # the right bytes are kept, and not downloaded again
    monkeypatch.setattr(build, "_download", lambda url, to: to.write_bytes(b"the real jar"))
    assert build.fetch(artifact, tmp_path).read_bytes() == b"the real jar"
    monkeypatch.setattr(build, "_download", lambda url, to: pytest.fail("downloaded again"))
    assert build.fetch(artifact, tmp_path).name == "thing-1.0.jar"


def test_every_artifact_is_pinned_and_fetched_over_https_from_maven_central() -> None:
    for artifact in every_artifact():
        assert re.fullmatch(r"[0-9a-f]{64}", artifact.sha256)
        assert artifact.url().startswith("https://repo1.maven.org/maven2/")
    assert DISTRIBUTION.url().endswith(
        "/org/opensearch/distribution/integ-test-zip/opensearch/2.19.1/opensearch-2.19.1.zip"
    )


def test_an_archive_entry_that_would_leave_the_home_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("opensearch-2.19.1/../../outside.txt", "x")
    with pytest.raises(build.BuildError, match="would leave"):
        build._unzip(archive, tmp_path / "home", strip=True)
    assert not (tmp_path / "outside.txt").exists()


def _fake_jdk(root: Path, version: str, javac: bool = True) -> Path:
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "java").write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2025-01-01' >&2\n")
    (bin_dir / "java").chmod(0o755)
    if javac:
        (bin_dir / "javac").write_text("#!/bin/sh\n")
        (bin_dir / "javac").chmod(0o755)
    return root


def test_a_jdk_without_the_security_manager_or_without_javac_is_not_chosen(tmp_path: Path) -> None:
    # OpenSearch 2.19 needs the security manager, which Java 24 removed (Temurin 25 cannot run it)
    assert java._usable(_fake_jdk(tmp_path / "temurin-25", "25.0.1")) is None
    assert java._usable(_fake_jdk(tmp_path / "jre-17", "17.0.15", javac=False)) is None
    assert java._usable(_fake_jdk(tmp_path / "jdk-17", "17.0.15")) == 17
    assert java._usable(_fake_jdk(tmp_path / "jdk-8", "1.8.0_402")) is None
