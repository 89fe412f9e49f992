"""Load the Lambda handlers from ``functions/`` exactly as SAM packages them."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# devkit/local/handlers.py → repository root
REPO_ROOT = Path(__file__).resolve().parents[2]


def load_handler(function: str) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """``functions/<function>/app.py: lambda_handler`` from a checkout of the repository."""
    path = REPO_ROOT / "functions" / function / "app.py"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found: the local run needs a checkout of the docindex repository "
            "(pip install -e . from the clone)"
        )
    module_name = f"docindex_function_{function}"
    if module_name in sys.modules:
        module = sys.modules[module_name]
    else:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    handler: Callable[[dict[str, Any], Any], dict[str, Any]] = module.lambda_handler
    return handler
