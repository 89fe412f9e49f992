"""The JDK the local OpenSearch node runs on and its plugins are compiled with.

OpenSearch 2.19 runs on Java 11 to 23 with its security manager; Java 24 removed the security
manager (JEP 486), so a newer JDK such as Temurin 25 cannot run it. The first JDK with ``javac``
in that range wins: ``DOCINDEX_JAVA_HOME``, ``JAVA_HOME``, then the JDKs under ``/usr/lib/jvm``
(the newest LTS first). ``make opensearch`` installs Debian's ``openjdk-17-jdk-headless`` when none
is found.
"""

from __future__ import annotations

import os
import re
import subprocess  # runs `java -version` of a candidate JDK  # nosec B404
from functools import lru_cache
from pathlib import Path

MIN_JAVA = 11
MAX_JAVA = 23  # the security manager is gone from Java 24 on
PREFERRED = (21, 17, 11)


class NoJdk(RuntimeError):
    """No JDK that can run the local OpenSearch node was found."""


def major_version(java_home: Path) -> int | None:
    """The feature version of the JDK at ``java_home`` (17 for 17.0.15), or None if it does not run."""
    java = java_home / "bin" / "java"
    if not java.is_file():
        return None
    try:
        out = subprocess.run(  # noqa: S603  # a JDK's own launcher, fixed arguments  # nosec B603
            [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major  # 1.8 -> 8


def _usable(home: Path) -> int | None:
    if not (home / "bin" / "javac").is_file():
        return None
    major = major_version(home)
    return major if major is not None and MIN_JAVA <= major <= MAX_JAVA else None


@lru_cache(maxsize=1)
def java_home() -> Path:
    """The JDK to use (see the module's docstring); NoJdk with what to install when there is none."""
    for variable in ("DOCINDEX_JAVA_HOME", "JAVA_HOME"):
        named = os.environ.get(variable)
        if named and _usable(Path(named)) is not None:
            return Path(named)
    jvm = Path("/usr/lib/jvm")
    usable: list[tuple[int, Path]] = []
    if jvm.is_dir():
        for home in sorted(p for p in jvm.iterdir() if p.is_dir() and not p.is_symlink()):
            major = _usable(home)
            if major is not None:
                usable.append((major, home))
    if not usable:
        raise NoJdk(
            f"no JDK {MIN_JAVA}-{MAX_JAVA} with javac found (DOCINDEX_JAVA_HOME, JAVA_HOME, /usr/lib/jvm): OpenSearch "
            "2.19 needs one; `make opensearch` installs Debian's openjdk-17-jdk-headless"
        )
    rank = {major: n for n, major in enumerate(PREFERRED)}
    usable.sort(key=lambda item: (rank.get(item[0], len(PREFERRED)), -item[0]))
    return usable[0][1]
