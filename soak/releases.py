"""The previous release's code, for the rolling upgrade the soak plays (issue 29).

docindex has no release tags: a release is a commit of main. ``LAST_RELEASE`` is the one the current
code replaces in a deployment; move it to the commit of the release just deployed each time one is
cut (docs/deploy.md#upgrades-old-and-new-consumers-on-one-queue). ``PREVIOUS_RELEASE`` stays the
hardest upgrade there is, from the release before message schema versions; the soak's seeds play
the upgrade from each of ``PREVIOUS_RELEASES`` in turn. A release's files come from
``git archive`` of this repository (a clone with its history, as CI's is: no network), and its code
runs on the current virtualenv: ``docindex`` and ``devkit`` are put ahead of the editable install
on the path of the processes that play it.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess  # git archive of a fixed commit  # nosec B404
import tarfile
from pathlib import Path

# The last release without message schema versions (main before issue 29): the hardest upgrade (its
# worker makes any field it does not know poison and polls no embed queue).
PREVIOUS_RELEASE = "9c5e4ddb5b5f669ef971502f34e17cf9a90c2603"
# The release the current code replaces (main before issue 44).
LAST_RELEASE = "0eb63cb0f0a1329a6fcfc90d8c6cfffba87da897"
# The releases the soak upgrades from, one per seed in turn (the first for a single seed).
PREVIOUS_RELEASES = (PREVIOUS_RELEASE, LAST_RELEASE)
REPO_ROOT = Path(__file__).resolve().parents[1]


class ReleaseError(RuntimeError):
    """The release's files could not be had (a shallow clone, an unknown commit)."""


def checkout(commit: str, into: Path) -> Path:
    """The files of ``commit`` under ``into/<commit>`` (extracted once, then reused)."""
    target = into / commit
    if (target / ".complete").exists():
        return target
    archive = subprocess.run(  # noqa: S603  # git, fixed argv  # nosec B603
        ["git", "-C", str(REPO_ROOT), "archive", "--format=tar", commit],  # noqa: S607
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise ReleaseError(
            f"git archive {commit} failed: {archive.stderr.decode(errors='replace').strip()} "
            "(the rolling upgrade needs a clone of the repository with its history)"
        )
    staging = into / f".{commit}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(staging, filter="data")
    (staging / ".complete").touch()
    try:
        staging.rename(target)
    except OSError:  # another run extracted it meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    return target


def python_path(root: Path) -> str:
    """``PYTHONPATH`` making the release's ``docindex`` and ``devkit`` the ones imported.

    Entries of ``PYTHONPATH`` come before the editable install of the current checkout (its
    finder runs after the path's).
    """
    return os.pathsep.join([str(root / "layers" / "docindex"), str(root)])
