"""The codegen plan: the one engine behind ``opgen generate`` and the SCons tool.

A plan holds the jobs of one run (one per operator group, with its content key), which files
each job produces, the umbrella headers, and one state file per section (the in-tree files, and
each external backend's) recording each group's key and files as last produced. Front ends
only present it: the CLI produces every job that is not current (``produce_all``: those the
caches lack render in worker processes, engine/workers.py) and calls ``finish``; SCons declares
a node per job from ``files`` and calls ``produce`` from its actions. New kinds of
per-group files plug in as layers (engine/layer.py, gen/registry.py), new trees as sections
(gen/sections.py builds them), not as another orchestrator.
"""
from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ...cache.session import CacheSession, Rendered, render_here
from ...model.dispatch_keys import DispatchKey
from ...writer import TreeWriter, write_if_changed
from . import layout
from .early import EarlyRenders
from .jobs import GroupJob, JobId
from .workers import render_pool, worth_a_pool

STATE_FILE = ".opgen-state.json"
STATE_VERSION = 3


@dataclass(frozen=True)
class Section:
    """Files generated under one directory of the tree, with their own state and umbrellas."""
    backend_key: Optional[DispatchKey]           # None: the in-tree files; else an external backend's
    jobs: tuple[GroupJob, ...]
    umbrellas: tuple[str, ...]                   # paths the umbrella renderer writes
    render_umbrellas: Callable[[dict[str, list[str]]], dict[str, str]]  # {group: files} -> {path: text}
    umbrella_inputs: str = ""                    # what the umbrellas render besides the layout (a digest)

    @property
    def label(self) -> str:
        """What reports and SCons messages call the section's jobs: groups, or XLA backend groups."""
        return "groups" if self.backend_key is None else f"{self.backend_key} backend groups"

    @property
    def under(self) -> str:
        """The section's directory in the tree: the root (""), or backends/<Key>."""
        return "" if self.backend_key is None else layout.backend_dir(self.backend_key)

    @property
    def state_path(self) -> str:
        return os.path.join(self.under, STATE_FILE) if self.under else STATE_FILE


@dataclass
class Report:
    """What one run did, counted by the plan whichever front end drove it."""
    label: str
    groups: int
    backend_key: Optional[DispatchKey] = None  # a backend's report: its jobs are shown by group
    regenerated: list[JobId] = field(default_factory=list)
    written: list[str] = field(default_factory=list)   # files whose bytes changed
    removed: list[str] = field(default_factory=list)
    cache_line: str = "off"
    cache_hits: Optional[int] = None     # produced groups materialized from the codegen cache (None: no cache)
    cache_misses: Optional[int] = None   # ... and rendered

    def summary(self) -> str:
        # "mul@XLA" of the "XLA backend groups" is just mul
        names = [job.group if self.backend_key is not None and job.backend_key == self.backend_key else str(job)
                 for job in sorted(self.regenerated, key=str)]
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        # Every produced group came from the cache, none was rendered: not "regenerated".
        materialized = bool(names) and self.cache_misses == 0 and self.cache_hits == len(names)
        line = (f"[opgen] materialized from the cache {len(names)}/{self.groups} {self.label}" if materialized
                else f"[opgen] regenerated {len(names)}/{self.groups} {self.label}") + (f": {shown}" if shown else "")
        return (f"{line}\n[opgen] {self.groups - len(names)} unchanged, {len(self.written)} files written, "
                f"{len(self.removed)} removed\n[opgen] codegen cache: {self.cache_line}")


class CodegenPlan:
    """One run over an output tree: which jobs are current, producing the others, umbrellas,
    stale files, the state files and the report. Safe to call ``produce`` from several threads."""

    def __init__(self, out_dir: str, sections: list[Section], session: CacheSession, label: Optional[str] = None):
        self.out_dir = out_dir
        self.sections = sections
        self.session = session
        session.out_dir = os.path.realpath(out_dir)  # `cache explain` compares builds of one directory
        self.writer = TreeWriter(out_dir)
        self._recorded = {s.under: _read_state(os.path.join(out_dir, s.state_path)) for s in sections}
        self._produced: dict[str, tuple[str, list[str]]] = {}   # job name -> (key, files)
        self._lock = threading.Lock()
        self.report = Report(label or sections[0].label, sum(len(s.jobs) for s in sections), sections[0].backend_key)

    @property
    def jobs(self) -> list[GroupJob]:
        return [job for section in self.sections for job in section.jobs]

    def files(self, job: GroupJob, section: Section) -> list[str]:
        """The job's files (sorted, relative to the tree): as this run produced them, or from the
        state when its key is the recorded one (no codegen work on a no-op), else computed
        without rendering (which a run whose workers rendered would pay for in this process)."""
        produced = self._produced.get(job.name)
        if produced is not None:
            return list(produced[1])
        recorded = self._recorded[section.under].get(job.name)
        if recorded and recorded.get("key") == job.key:
            return list(recorded["files"])
        return job.codegen.files()

    def recorded_at_key(self, job: GroupJob, section: Section) -> bool:
        """The state records the job at its key (a stat-free ``is_current``: its files may be missing)."""
        recorded = self._recorded[section.under].get(job.name)
        return bool(recorded) and recorded.get("key") == job.key

    def is_current(self, job: GroupJob, section: Section) -> bool:
        """The tree holds the job's files at its key (the state says so and every file exists)."""
        if not self.recorded_at_key(job, section):
            return False
        files = self._recorded[section.under][job.name].get("files", [])
        return all(os.path.exists(os.path.join(self.out_dir, path)) for path in files)

    def produce(self, job: GroupJob, render: Callable[[GroupJob], Rendered] = render_here) -> list[str]:
        """Materializes or renders (``render``) the job's files and writes those whose bytes changed."""
        return self._write(job, self.session.produce(job, render))

    def _write(self, job: GroupJob, files: dict[str, str]) -> list[str]:
        written = [path for path, text in files.items() if self.writer.write(path, text)]
        with self._lock:
            self._produced[job.name] = (job.key, list(files))
            self.report.regenerated.append(job.id)
            self.report.written.extend(written)
        return written

    def produce_all(self, jobs: Sequence[GroupJob], workers: int = 1, early: Optional[EarlyRenders] = None) -> None:
        """Produces ``jobs`` in order; the ones neither cache holds render in ``workers``
        processes when there are enough of them (engine/workers.py; in those ``early`` forked
        while the keys were computed, when it did: engine/early.py), the rest here. A thread
        writes each job's files while the next is taken: a cold tree creates ~10,000 files, each
        creation a wait on the filesystem with the GIL released (docs/benchmarks.md). Writes keep
        the jobs' order, and a job that fails stops the run after the jobs before it are written."""
        pool = early.take_pool(jobs) if early is not None else None
        if pool is None:
            to_render = [job for job in jobs if self.session.will_render(job)] if worth_a_pool(len(jobs), workers) else []
            pool = render_pool(to_render, workers)
        render = pool.render if pool is not None else render_here
        writes = []
        try:
            with ThreadPoolExecutor(1, thread_name_prefix="opgen-write") as writer:
                try:
                    for job in jobs:
                        writes.append(writer.submit(self._write, job, self.session.produce(job, render)))
                finally:
                    for write in writes:
                        write.result()  # a write's error is raised here, in order
        finally:
            if pool is not None:
                pool.close()

    def layout(self, section: Section) -> dict[str, list[str]]:
        """{job name: files} of a section as this run leaves it (what the umbrellas list)."""
        return {job.name: self.files(job, section) for job in section.jobs}

    def write_umbrellas(self, section: Section, layout_of_section: Optional[dict[str, list[str]]] = None) -> list[str]:
        files = layout_of_section or self.layout(section)
        texts = section.render_umbrellas({job.id.group: files[job.name] for job in section.jobs})
        written = [path for path, text in texts.items() if write_if_changed(os.path.join(self.out_dir, path), text)]
        with self._lock:
            self.report.written.extend(written)
        return written

    def remove_stale(self, section: Section, layout_of_section: Optional[dict[str, list[str]]] = None) -> list[str]:
        """Deletes files under the section's ops/ that no job of it produces."""
        expected = {p for files in (layout_of_section or self.layout(section)).values() for p in files}
        removed = remove_stale(self.out_dir, expected, section.under)
        with self._lock:
            self.report.removed.extend(removed)
        return removed

    def finish(self) -> Report:
        """Writes each section's state (the jobs produced in this run, and the others as they were
        recorded) and records the run in the codegen cache."""
        for section in self.sections:
            recorded = self._recorded[section.under]
            state = {}
            for job in section.jobs:
                if job.name in self._produced:
                    key, files = self._produced[job.name]
                    state[job.name] = {"key": key, "files": files}
                elif job.name in recorded:
                    state[job.name] = recorded[job.name]
            _write_state(os.path.join(self.out_dir, section.state_path), state)
        self.session.finish(self.report.groups)
        self.report.cache_line = self.session.cache_line()
        if self.session.cache is not None:
            self.report.cache_hits, self.report.cache_misses = len(self.session.hits), len(self.session.misses)
        return self.report


def recorded_state(out_dir: str, under: str = "") -> dict[str, dict]:
    """{job name: {"key", "files"}} of a section as the tree's state records it (empty: none)."""
    return _read_state(os.path.join(out_dir, under, STATE_FILE))


def _read_state(path: str) -> dict[str, dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION or not isinstance(data.get("groups"), dict):
        return {}
    return data["groups"]


def _write_state(path: str, groups: dict[str, dict]) -> None:
    # No indent: json's C encoder only runs without one, and a large yaml's state lists many files.
    text = json.dumps({"version": STATE_VERSION, "groups": groups}, sort_keys=True, separators=(",", ":")) + "\n"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_if_changed(path, text)


def remove_stale(out_dir: str, expected: set[str], under: str = "") -> list[str]:
    """Deletes files under [under/]ops/ that no current group produces; returns their paths."""
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
