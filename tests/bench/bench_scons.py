"""Benchmark: SCons builds of opgen's library and of synthetic yaml with 500 to 3,000 groups.

    python tests/bench/bench_scons.py [--runs N] [--sizes 500,1500,3000] [--quick]

A report, not a test: it prints one table and exits 0 (1 when a build failed; the other
projects are still measured). Every project is a temp copy of this repo (SConstruct,
site_scons, opgen, csrc, yaml); runs are whole `scons -j2` processes.
  library      our yaml, everything built (the compile uses ccache with a private, empty
               cache when ccache is installed, so "clean, warm ccache" shows a cache-served
               rebuild)
  synthetic N  tests/bench/synthetic_yaml.py's N groups as yaml/native_functions.yaml, built
               with --codegen-only (generate the C++, compile nothing)
Scenarios: cold (fresh copy), no-op (again), one-op edit (`alpha=1` -> `alpha=2` in one
group, alternately applied and reverted; each run is one edit). "regenerated" is scons'
`[opgen] regenerated N/M groups` line; "compiles" counts compiler invocations with -c.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (helpers)
from helpers import ccache_hits, ccache_stats, copy_project, run_scons  # noqa: E402
from peer_env import REPO  # noqa: E402
from synthetic_yaml import TAGS_YAML, edit_one_default, editable_group, synthetic_yaml  # noqa: E402
from table import render_table  # noqa: E402

LIBRARY_EDIT_GROUP = "add"
LIBRARY_NOOP_GOAL = 1.0  # seconds
COMPILERS = {"g++", "gcc", "c++", "cc", "clang", "clang++", "nvcc"}
REGENERATED = re.compile(r"\[opgen\] regenerated (\d+)/(\d+) groups")
HAS_CCACHE = shutil.which("ccache") is not None


class BuildFailed(Exception):
    pass


@dataclass
class Build:
    seconds: float
    regenerated: str
    compiles: int
    ccache_hits: Optional[int]


@dataclass
class Row:
    project: str
    scenario: str
    builds: list[Build] = field(default_factory=list)
    goal: str = ""
    met: str = ""

    @property
    def median(self) -> float:
        return statistics.median(b.seconds for b in self.builds)

    def spread(self, value) -> str:
        values = sorted({value(b) for b in self.builds}, key=str)
        return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def is_compile(line: str) -> bool:
    words = line.split()
    if words and os.path.basename(words[0]) == "ccache":
        words = words[1:]
    return bool(words) and os.path.basename(words[0]) in COMPILERS and "-c" in words


class Project:
    """A temp copy of the repo that scons builds, with private opgen and ccache caches."""

    def __init__(self, label: str, root: str, scons_args: list[str], edit_group: str):
        self.label, self.root, self.scons_args, self.edit_group = label, root, scons_args, edit_group
        self.yaml_path = os.path.join(root, "yaml", "native_functions.yaml")
        self.ccache_dir = os.path.join(root, "ccache")

    def scons(self) -> Build:
        hits_before = self._ccache_hits()
        start = time.perf_counter()
        result = run_scons(self.root, "-j2", *self.scons_args, ccache_dir=self.ccache_dir, timeout=None)
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
            raise BuildFailed(f"{self.label}: scons exited with {result.returncode}:\n{tail}")
        found = REGENERATED.findall(result.stdout)
        hits_after = self._ccache_hits()
        return Build(seconds, "/".join(found[-1]) if found else "",
                     sum(is_compile(line) for line in result.stdout.splitlines()),
                     None if hits_before is None else hits_after - hits_before)

    def _ccache_hits(self) -> Optional[int]:
        if not HAS_CCACHE or "--codegen-only" in self.scons_args:
            return None
        return ccache_hits(ccache_stats(self.ccache_dir))

    def read_yaml(self) -> str:
        with open(self.yaml_path, encoding="utf-8") as handle:
            return handle.read()

    def write_yaml(self, text: str) -> None:
        with open(self.yaml_path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)

    def clean(self) -> None:
        shutil.rmtree(os.path.join(self.root, "build"), ignore_errors=True)
        for name in os.listdir(self.root):
            if name.startswith(".sconsign"):
                os.remove(os.path.join(self.root, name))


def library_project(work: str) -> Project:
    root = copy_project(os.path.join(work, "library"))
    ccache = ["--ccache=on"] if HAS_CCACHE else ["--ccache=off"]
    return Project("library", root, ccache, LIBRARY_EDIT_GROUP)


def synthetic_project(work: str, count: int) -> Project:
    root = copy_project(os.path.join(work, f"synthetic-{count}"))
    for name, text in (("native_functions.yaml", synthetic_yaml(count)), ("tags.yaml", TAGS_YAML)):
        with open(os.path.join(root, "yaml", name), "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    return Project(f"synthetic {count}", root, ["--codegen-only"], editable_group(count))


def measure(project: Project, runs: int) -> list[Row]:
    cold = Row(project.label, "cold", [project.scons()])
    rows = [cold]
    if cold.builds[0].ccache_hits is not None:
        warm = Row(project.label, "clean, warm ccache")
        for _ in range(runs):
            project.clean()
            warm.builds.append(project.scons())
        rows.append(warm)
    noop = Row(project.label, "no-op", [project.scons() for _ in range(runs)])
    if project.label == "library":
        noop.goal = f"<= {LIBRARY_NOOP_GOAL:g} s"
        noop.met = "yes" if noop.median <= LIBRARY_NOOP_GOAL else "NO"
    original = project.read_yaml()
    edited = edit_one_default(original, project.edit_group)
    edit = Row(project.label, "one-op edit", goal=f"1 group ({project.edit_group})")
    try:
        for i in range(runs):
            project.write_yaml(edited if i % 2 == 0 else original)
            edit.builds.append(project.scons())
    finally:
        project.write_yaml(original)
    edit.met = "yes" if all(b.regenerated.startswith("1/") for b in edit.builds) else "NO"
    return rows + [noop, edit]


def format_table(rows: list[Row]) -> str:
    def hits(build: Build) -> str:
        return "" if build.ccache_hits is None else str(build.ccache_hits)

    body = [(r.project, r.scenario, str(len(r.builds)), f"{r.median:.2f}", r.spread(lambda b: b.regenerated),
             r.spread(lambda b: b.compiles), r.spread(hits), r.goal, r.met) for r in rows]
    header = ("project", "scenario", "runs", "median s", "regenerated", "compiles", "ccache hits", "goal", "met")
    return render_table(header, body, "<<>>>>><<")


def has_codegen_only(project_root: str) -> bool:
    """Whether the SConstruct declares --codegen-only (its local help lists it)."""
    result = run_scons(project_root, "-h", timeout=None)
    return "--codegen-only" in result.stdout


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per warm scenario (default 3; cold: 1)")
    parser.add_argument("--sizes", default="500,1500,3000", help="synthetic group counts (default 500,1500,3000)")
    parser.add_argument("--quick", action="store_true", help="one run each; library and 500 groups only")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    if runs < 1 or any(n < 1 for n in sizes):
        parser.error("--runs and --sizes must be positive")

    rows: list[Row] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="opgen-bench-scons-") as work:
        projects = [library_project(work)]
        if has_codegen_only(projects[0].root):
            projects += [synthetic_project(work, n) for n in sizes]
        else:
            notes.append("NOTE: the SConstruct has no --codegen-only option (not in `scons -h`); "
                         "the synthetic-yaml projects were skipped.")
        for project in projects:
            print(f"bench: building {project.label} ...", file=sys.stderr, flush=True)
            try:
                rows += measure(project, runs)
            except BuildFailed as exc:  # report it, measure the other projects all the same
                print(f"bench: {exc}", file=sys.stderr)
                notes.append(f"FAILED: {project.label}: the build failed (details on stderr); no numbers.")
            shutil.rmtree(project.root)  # a 3,000-group tree is large; keep the temp disk small
    print(f"scons -j2 on temp copies of {REPO}; median of {runs} runs (cold: 1)"
          f"{'; ccache with a private cache' if HAS_CCACHE else '; ccache not installed'}\n")
    if rows:
        print(format_table(rows))
    for note in notes:
        print("\n" + note)
    return 1 if any(note.startswith("FAILED") for note in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
