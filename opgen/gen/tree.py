"""Generate a whole output tree for a model: the ``python -m opgen generate`` engine.

Each group is re-rendered only when its content key differs from the one recorded in the
tree's manifest (or a file of it is missing); files are written only when their bytes
change; files of groups that disappeared are deleted; umbrella headers are rewritten only
when the set of groups changes.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..model.loader import Model
from ..writer import write_if_changed
from . import layout
from .config import CodegenConfig
from .content_key import group_key
from .group import GroupCodegen
from .umbrellas import render_umbrellas

MANIFEST = ".opgen-manifest.json"
MANIFEST_VERSION = 1


@dataclass
class GenerateReport:
    groups: int = 0
    regenerated: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)   # files whose bytes changed
    removed: list[str] = field(default_factory=list)

    @property
    def unchanged(self) -> int:
        return self.groups - len(self.regenerated)

    def summary(self) -> str:
        names = ", ".join(self.regenerated[:10]) + (", ..." if len(self.regenerated) > 10 else "")
        line = f"[opgen] regenerated {len(self.regenerated)}/{self.groups} groups"
        line += f": {names}" if names else ""
        return (f"{line}\n[opgen] {self.unchanged} unchanged, {len(self.written)} files written, "
                f"{len(self.removed)} removed")


def _read_manifest(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("version") == MANIFEST_VERSION and isinstance(data.get("groups"), dict):
            return data
    except (OSError, ValueError):
        pass
    return {"version": MANIFEST_VERSION, "groups": {}}


def _exists_all(out_dir: str, files: list[str]) -> bool:
    return all(os.path.exists(os.path.join(out_dir, p)) for p in files)


def generate_tree(model: Model, out_dir: str, config: CodegenConfig = CodegenConfig()) -> GenerateReport:
    report = GenerateReport(groups=len(model.operator_groups))
    manifest_path = os.path.join(out_dir, MANIFEST)
    previous = _read_manifest(manifest_path)["groups"]
    current: dict[str, dict] = {}
    for group in model.operator_groups:
        key = group_key(group, model.indices, config)
        old = previous.get(group.name)
        if old and old.get("key") == key and _exists_all(out_dir, old.get("files", [])):
            current[group.name] = old
            continue
        files = GroupCodegen(group, model.indices, config).render()
        for path, text in files.items():
            if write_if_changed(os.path.join(out_dir, path), text):
                report.written.append(path)
        report.regenerated.append(group.name)
        current[group.name] = {"key": key, "files": list(files)}

    for path, text in render_umbrellas({name: entry["files"] for name, entry in current.items()}).items():
        if write_if_changed(os.path.join(out_dir, path), text):
            report.written.append(path)
    report.removed = remove_stale(out_dir, {p for entry in current.values() for p in entry["files"]})
    write_if_changed(manifest_path, json.dumps({"version": MANIFEST_VERSION, "groups": current}, indent=1, sort_keys=True) + "\n")
    return report


def remove_stale(out_dir: str, expected: set[str]) -> list[str]:
    """Delete files under ops/ that no current group produces; returns their paths."""
    ops_dir = os.path.join(out_dir, layout.OPS_DIR)
    try:
        names = sorted(os.listdir(ops_dir))
    except FileNotFoundError:
        return []
    removed = []
    for name in names:
        path = f"{layout.OPS_DIR}/{name}"
        if path not in expected and not name.startswith("."):
            os.unlink(os.path.join(ops_dir, name))
            removed.append(path)
    return removed
