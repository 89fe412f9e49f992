"""The Japanese TrueType font that scans are rendered in, found on the system.

Debian: ``fonts-ipafont-gothic`` (``make system-deps``); ``DOCINDEX_JA_FONT``
names any other font file.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess  # fc-list lookup of a Japanese font, fixed argv  # nosec B404

__all__ = ["find_japanese_font"]

_JA_FONT_PACKAGE = "fonts-ipafont-gothic"
_JA_FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
    "/usr/share/fonts/truetype/fonts-japanese-gothic.ttf",
    "/usr/share/fonts/opentype/ipaexfont-gothic/ipaexg.ttf",
    "/usr/share/fonts/truetype/takao-gothic/TakaoGothic.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/System/Library/Fonts/ヒラギノ角ゴシック W3.ttc",
)


@functools.lru_cache(maxsize=1)
def find_japanese_font() -> str:
    """Path of a TrueType/OpenType font with Japanese glyphs.

    ``DOCINDEX_JA_FONT`` wins; then well-known paths; then fontconfig
    (``fc-list :lang=ja``). Raises RuntimeError naming the Debian package to
    install when there is none.
    """
    configured = os.environ.get("DOCINDEX_JA_FONT")
    if configured and os.path.isfile(configured):
        return configured
    for path in _JA_FONT_CANDIDATES:
        if os.path.isfile(path):
            return path
    fc_list = shutil.which("fc-list")
    if fc_list:
        # fc-match always answers with *some* font; fc-list :lang=ja lists
        # only fonts that really cover Japanese.
        result = subprocess.run(  # noqa: S603  # fixed argument list, no shell  # nosec B603
            [fc_list, ":lang=ja", "file"], capture_output=True, text=True, timeout=30, check=False
        )
        files = sorted(line.split(":", 1)[0].strip() for line in result.stdout.splitlines() if line.strip())
        for path in files:
            if path.lower().endswith((".ttf", ".otf", ".ttc")) and os.path.isfile(path):
                return path
    raise RuntimeError(
        "no Japanese font found for rendering scans: install the Debian package "
        f"{_JA_FONT_PACKAGE} (apt-get install {_JA_FONT_PACKAGE}) or set DOCINDEX_JA_FONT"
    )
