"""The operator yaml of a selective build: the full yaml's entries of the selected groups only,
verbatim and in their order, so what a selective runtime installs describes what it holds."""
from __future__ import annotations

import re
from typing import Collection

from ..model.loader import Model

_ENTRY = re.compile(r"(?m)^(?=- func:)")
_NAME = re.compile(r"- func:\s*([\w.]+)\s*\(")


def subset_yaml(text: str, model: Model, groups: Collection[str]) -> str:
    """``text`` (the operator yaml ``model`` was loaded from) with only the entries whose function
    belongs to one of ``groups``. What precedes the first entry is kept; a comment between two
    entries stays with the one before it."""
    group_of = {str(f.func.name): f.root_name for f in model.functions}
    wanted = set(groups)
    preamble, *entries = _ENTRY.split(text)
    kept = [entry for entry in entries if group_of.get(_function_name(entry)) in wanted]
    return preamble + "".join(kept)


def _function_name(entry: str) -> str:
    match = _NAME.match(entry)
    return match.group(1) if match else ""
