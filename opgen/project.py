"""The yaml a command reads when none is named: a project's own (the ``opgen.json`` that
``opgen init`` writes, in the current directory or one above it), else this repository's
yaml/native_functions.yaml in the current directory."""
from __future__ import annotations

import json
import os
from typing import Optional

from .errors import Location, OpgenError

PROJECT_FILE = "opgen.json"
CHECKOUT_YAML = os.path.join("yaml", "native_functions.yaml")


def project_file(start: str = ".") -> Optional[str]:
    """The nearest ``opgen.json`` at or above ``start``."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, PROJECT_FILE)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def default_yaml(start: str = ".") -> Optional[str]:
    """The project's yaml (a path as the user would type it), else the checkout's, else None."""
    path = project_file(start)
    if path is not None:
        try:
            with open(path, encoding="utf-8") as handle:
                yaml = json.load(handle)["yaml"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OpgenError(f"not a project description ({{\"yaml\": FILE}}): {exc}", Location(path, 0)) from None
        resolved = os.path.join(os.path.dirname(path), yaml)
        return os.path.relpath(resolved) if not os.path.isabs(yaml) else yaml
    return CHECKOUT_YAML if os.path.isfile(CHECKOUT_YAML) else None


def project_text(yaml: str) -> str:
    """An ``opgen.json`` naming ``yaml`` (relative to the project)."""
    return json.dumps({"yaml": yaml}, indent=2, sort_keys=True) + "\n"
