"""Address-space bounds for code that runs native parsers (the indexer's extraction children, the OCR pool).

A native decoder (PDFium, Pillow, Tesseract) that is asked for gigabytes gets an allocation
failure at the bound instead of taking the process, or the task, to the kernel's OOM killer.
``RLIMIT_AS`` bounds virtual size, so the bound is *growth* over what the process already maps
(the interpreter, the loaded models): whatever was reserved before the work does not count
against it.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager


def address_space() -> int:
    """This process's current virtual size (bytes); 0 where /proc is not available."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def peak_rss() -> int:
    """This process's peak resident size (bytes) since it started.

    VmHWM, not ``getrusage``: Linux carries ``ru_maxrss`` across ``exec``, so
    a child spawned by a big parent would report the parent's size.
    """
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def limit_growth(growth: int) -> bool:
    """Let this process's address space grow by ``growth`` bytes at most; False where it cannot be read."""
    base = address_space()
    if not base:
        return False
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = base + growth if hard == resource.RLIM_INFINITY else min(base + growth, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return True


def unlimit() -> None:
    """Back to the hard limit (unlimited unless whoever started the process set one)."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


@contextmanager
def growth_bound(growth: int | None) -> Iterator[None]:
    """``limit_growth`` for the duration of the block (no bound when ``growth`` is None)."""
    if growth is None:
        yield
        return
    limit_growth(growth)
    try:
        yield
    finally:
        unlimit()
