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

from typing import Optional

from ..cache.remote import RemoteTier
from ..cache.session import CacheSession, open_codegen_cache
from ..model.backend_yaml import BackendYaml
from ..model.loader import Model
from ..writer import TreeWriter, write_if_changed
from . import layout
from .backend import render_backend_umbrella
from .config import CodegenConfig
from .jobs import GroupJob, backend_jobs, in_tree_jobs
from .umbrellas import render_umbrellas

MANIFEST = ".opgen-manifest.json"
MANIFEST_VERSION = 2


@dataclass
class GenerateReport:
    groups: int = 0
    regenerated: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)   # files whose bytes changed
    removed: list[str] = field(default_factory=list)
    cache_hits: Optional[int] = None     # regenerated groups materialized from the codegen cache (None: no cache)
    cache_misses: Optional[int] = None   # ... and rendered
    cache_line: str = "off"              # the session's account, remote tier included

    @property
    def unchanged(self) -> int:
        return self.groups - len(self.regenerated)

    def summary(self) -> str:
        names = ", ".join(self.regenerated[:10]) + (", ..." if len(self.regenerated) > 10 else "")
        line = f"[opgen] regenerated {len(self.regenerated)}/{self.groups} groups"
        line += f": {names}" if names else ""
        return (f"{line}\n[opgen] {self.unchanged} unchanged, {len(self.written)} files written, "
                f"{len(self.removed)} removed; codegen cache: {self.cache_line}")


def _read_manifest(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if data.get("version") == MANIFEST_VERSION and isinstance(data.get("groups"), dict):
            return data
    except (OSError, ValueError):
        pass
    return {"version": MANIFEST_VERSION, "groups": {}, "backends": {}}


def _exists_all(out_dir: str, files: list[str]) -> bool:
    return all(os.path.exists(os.path.join(out_dir, p)) for p in files)


def _generate(writer: TreeWriter, report: GenerateReport, previous: dict, jobs: list[GroupJob],
              session: CacheSession) -> dict[str, dict]:
    """Produces the jobs whose key or files changed (from the cache or by rendering); returns the
    new manifest entries."""
    current: dict[str, dict] = {}
    for job in jobs:
        report.groups += 1
        old = previous.get(job.name)
        if old and old.get("key") == job.key and _exists_all(writer.root, old.get("files", [])):
            current[job.name] = old
            continue
        files = session.produce(job)
        _write_all(writer, report, files)
        report.regenerated.append(job.name)
        current[job.name] = {"key": job.key, "files": list(files)}
    return current


def _write_all(writer: TreeWriter, report: GenerateReport, files: dict[str, str]) -> None:
    for path, text in files.items():
        if writer.write(path, text):
            report.written.append(path)


def generate_tree(model: Model, out_dir: str, config: CodegenConfig = CodegenConfig(),
                  backend: Optional[BackendYaml] = None, cache_dir: Optional[str] = None,
                  remote: Optional[RemoteTier] = None) -> GenerateReport:
    """In-tree files for every group and, with ``backend``, that backend's files for the groups it
    lists (under backends/<Key>/; a backend's entries are counted in the report as <group>@<Key>).
    Groups are materialized from the codegen cache in ``cache_dir`` when it has their key
    (default: $OPGEN_CACHE_DIR or <repo>/cache; "" renders everything)."""
    report = GenerateReport()
    session = CacheSession(open_codegen_cache(cache_dir), "opgen generate", remote)
    writer = TreeWriter(out_dir)
    manifest_path = os.path.join(out_dir, MANIFEST)
    manifest = _read_manifest(manifest_path)
    groups = _generate(writer, report, manifest["groups"], in_tree_jobs(model, config, session.cache), session)
    _write_all(writer, report, render_umbrellas({name: entry["files"] for name, entry in groups.items()}))
    expected = {p for entry in groups.values() for p in entry["files"]}
    report.removed = remove_stale(out_dir, expected)

    backends = dict(manifest.get("backends", {}))
    if backend is not None:
        key = str(backend.backend_key)
        entries = _generate(writer, report, backends.get(key, {}), backend_jobs(model, backend), session)
        backends[key] = entries
        _write_all(writer, report, render_backend_umbrella(backend, [name.split("@")[0] for name in entries]))
        owned = {p for entry in entries.values() for p in entry["files"]}
        report.removed += remove_stale(out_dir, owned, layout.backend_dir(backend.backend_key))
    # No indent: json's C encoder only runs without one, and PyTorch's manifest lists 7,939 files.
    write_if_changed(manifest_path, json.dumps({"version": MANIFEST_VERSION, "groups": groups, "backends": backends},
                                               sort_keys=True, separators=(",", ":")) + "\n")
    session.finish(report.groups)
    if session.cache is not None:
        report.cache_hits, report.cache_misses = len(session.hits), len(session.misses)
    report.cache_line = session.cache_line()
    return report


def remove_stale(out_dir: str, expected: set[str], under: str = "") -> list[str]:
    """Delete files under [under/]ops/ that no current group produces; returns their paths."""
    prefix = f"{under}/{layout.OPS_DIR}" if under else layout.OPS_DIR
    ops_dir = os.path.join(out_dir, prefix)
    try:
        names = sorted(os.listdir(ops_dir))
    except FileNotFoundError:
        return []
    removed = []
    for name in names:
        path = f"{prefix}/{name}"
        if path not in expected and not name.startswith("."):
            os.unlink(os.path.join(ops_dir, name))
            removed.append(path)
    return removed
