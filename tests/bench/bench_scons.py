"""Benchmark: SCons builds of opgen's library, of PyTorch 2.13's yaml and of synthetic yaml.

    python tests/bench/bench_scons.py [--runs N] [--sizes 500,1500,3000] [--only library,pytorch,synthetic] [--quick]

A report, not a test: it prints one table and exits 0 (1 when a build failed; the other
projects are still measured). Every project is a temp copy of this repo (SConstruct,
site_scons, opgen, csrc, yaml) with private opgen (and ccache) caches; runs are whole
`scons -j2` processes.
  library      our yaml, everything built (the compile uses ccache with a private, empty
               cache when ccache is installed, so "clean, warm ccache" shows a cache-served
               rebuild)
  PyTorch 2.13 ../shared/data/pytorch-2.13's native_functions.yaml and tags.yaml through
               `scons --codegen-only --yaml=PATH --tags=PATH` (generate the C++, compile nothing),
               beside `python -m opgen generate` on its own copy of the same yaml and torchgen
               (torch 2.13.0 in the peer virtualenv, peer_env.py), measured in the same run
  synthetic N  tests/bench/synthetic_yaml.py's N groups as yaml/native_functions.yaml, built
               with --codegen-only
Scenarios: cold (fresh copy, empty caches), no-op (again), one-op edit (`alpha=1` -> `alpha=N`
in one group, N a value no earlier run used, so every edit is content the parse and codegen
caches have never seen, as a real edit is; an edit and its revert would measure cache hits).
"regenerated" is scons' `[opgen] regenerated N/M groups` line; "compiles" counts compiler
invocations with -c; "nodes" is the number of nodes SCons created (--debug=count: Node.Node
after the build), the work a no-op cannot avoid.
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
from typing import Iterator, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (helpers)
from bench_codegen import CommandFailed, Generator, fresh_edits, opgen_generator, torchgen_generator  # noqa: E402
from helpers import ccache_hits, ccache_stats, copy_project, run_scons  # noqa: E402
from peer_env import PYTORCH_DATA, REPO, ensure_torchgen  # noqa: E402
from synthetic_yaml import TAGS_YAML, editable_group, synthetic_yaml  # noqa: E402
from table import render_table  # noqa: E402

EDIT_GROUP = "add"  # the library's and PyTorch's edited group
PYTORCH = "PyTorch 2.13"
# Seconds, by (project, scenario): issue 20's goals on this 2-core machine.
GOALS = {
    ("library", "no-op"): 0.5,
    (PYTORCH, "no-op"): 1.5,
    (PYTORCH, "one-op edit"): 2.0,
    (f"{PYTORCH}: opgen generate", "one-op edit"): 1.0,
}
COMPILERS = {"g++", "gcc", "c++", "cc", "clang", "clang++", "nvcc"}
REGENERATED = re.compile(r"\[opgen\] (?:regenerated|materialized from the cache) (\d+)/(\d+) groups")
NODES = re.compile(r"^\s*\d+\s+\d+\s+\d+\s+(\d+)\s+Node\.Node$", re.MULTILINE)  # --debug=count, post-build
HAS_CCACHE = shutil.which("ccache") is not None


class BuildFailed(Exception):
    pass


@dataclass
class Build:
    seconds: float
    regenerated: str
    compiles: Optional[int] = None  # SCons builds only: the command-line peers compile nothing
    ccache_hits: Optional[int] = None
    nodes: Optional[int] = None  # SCons' count


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


_SCHEMA = re.compile(r"^- func: (\S+?)\((.*)$", re.M)


def with_schemas_of(yaml_text: str, derivatives_text: str) -> str:
    """``derivatives_text`` with each `- name:` entry's schema as ``yaml_text`` writes it now."""
    schemas = {name: f"{name}({rest}" for name, rest in _SCHEMA.findall(yaml_text)}

    def current(match: re.Match) -> str:
        return "- name: " + schemas.get(match.group(1), match.group(1) + "(" + match.group(2))

    return re.sub(r"^- name: (\S+?)\((.*)$", current, derivatives_text, flags=re.M)


class Project:
    """A temp copy of the repo that scons builds, with private opgen and ccache caches."""

    def __init__(self, label: str, root: str, scons_args: list[str], edit_group: str, yaml_path: Optional[str] = None):
        self.label, self.root, self.scons_args, self.edit_group = label, root, scons_args, edit_group
        self.yaml_path = yaml_path or os.path.join(root, "yaml", "native_functions.yaml")
        self.ccache_dir = os.path.join(root, "ccache")

    def build(self) -> Build:
        hits_before = self._ccache_hits()
        start = time.perf_counter()
        # --debug=count only counts objects (no tracing): its cost is lost in the noise. Python may
        # write bytecode, as in a user's checkout (a sandbox's PYTHONDONTWRITEBYTECODE would make
        # every run recompile opgen's modules: ~0.06 s of a no-op).
        # --verbose: compiles are counted from their command lines.
        result = run_scons(self.root, "-j2", "--debug=count", "--verbose", *self.scons_args,
                           ccache_dir=self.ccache_dir, env={"PYTHONDONTWRITEBYTECODE": None}, timeout=None)
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
            raise BuildFailed(f"{self.label}: scons exited with {result.returncode}:\n{tail}")
        found = REGENERATED.findall(result.stdout)
        nodes = NODES.search(result.stdout)
        hits_after = self._ccache_hits()
        return Build(seconds, "/".join(found[-1]) if found else "",
                     sum(is_compile(line) for line in result.stdout.splitlines()),
                     None if hits_before is None else hits_after - hits_before,
                     int(nodes.group(1)) if nodes else None)

    def _ccache_hits(self) -> Optional[int]:
        if not HAS_CCACHE or "--codegen-only" in self.scons_args:
            return None
        return ccache_hits(ccache_stats(self.ccache_dir))

    def read_yaml(self) -> str:
        return read_text(self.yaml_path)

    def write_yaml(self, text: str) -> None:
        write_text(self.yaml_path, text)
        # derivatives.yaml beside the yaml repeats each schema it covers, defaults included (as
        # torchgen requires): an edited default is edited there too, or the build stops.
        derivatives = os.path.join(os.path.dirname(self.yaml_path), "derivatives.yaml")
        if os.path.isfile(derivatives):
            write_text(derivatives, with_schemas_of(text, read_text(derivatives)))

    def clean(self) -> None:
        shutil.rmtree(os.path.join(self.root, "build"), ignore_errors=True)
        for name in os.listdir(self.root):
            if name.startswith(".sconsign"):
                os.remove(os.path.join(self.root, name))


class Peer:
    """A command-line generator on its own copy of a yaml, measured like a Project (bench_codegen's runner)."""

    def __init__(self, label: str, generator: Generator, yaml_path: str, out_dir: str, edit_group: str):
        self.label, self.generator, self.yaml_path, self.out_dir = label, generator, yaml_path, out_dir
        self.edit_group = edit_group

    def build(self) -> Build:
        try:
            run = self.generator.run(self.out_dir)
        except CommandFailed as exc:
            raise BuildFailed(f"{self.label}: {exc}") from exc
        return Build(run.seconds, run.regenerated)

    def read_yaml(self) -> str:
        return read_text(self.yaml_path)

    def write_yaml(self, text: str) -> None:
        write_text(self.yaml_path, text)


def read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def library_project(work: str) -> Project:
    root = copy_project(os.path.join(work, "library"))
    ccache = ["--ccache=on"] if HAS_CCACHE else ["--ccache=off"]
    return Project("library", root, ccache, EDIT_GROUP)


def private_pytorch_yaml(directory: str) -> tuple[str, str]:
    """A copy of PyTorch 2.13's native_functions.yaml and tags.yaml that one tool edits."""
    os.makedirs(directory)
    paths = []
    for name in ("native_functions.yaml", "tags.yaml"):
        paths.append(os.path.join(directory, name))
        shutil.copyfile(os.path.join(PYTORCH_DATA, name), paths[-1])
    return paths[0], paths[1]


def pytorch_projects(work: str, with_torchgen: bool) -> list:
    """scons --codegen-only on PyTorch's yaml, then opgen generate and torchgen on copies of it."""
    root = copy_project(os.path.join(work, "pytorch"))
    yaml_path, tags_path = private_pytorch_yaml(os.path.join(root, "pytorch-yaml"))
    args = ["--codegen-only", f"--yaml={os.path.relpath(yaml_path, root)}", f"--tags={os.path.relpath(tags_path, root)}"]
    projects = [Project(PYTORCH, root, args, EDIT_GROUP, yaml_path)]
    peer_work = os.path.join(work, "pytorch-opgen")
    yaml_path, tags_path = private_pytorch_yaml(os.path.join(peer_work, "yaml"))
    projects.append(Peer(f"{PYTORCH}: opgen generate", opgen_generator(yaml_path, tags_path, peer_work),
                         yaml_path, os.path.join(peer_work, "out"), EDIT_GROUP))
    python = ensure_torchgen() if with_torchgen else None
    if python:
        peer_work = os.path.join(work, "pytorch-torchgen")
        yaml_path, tags_path = private_pytorch_yaml(os.path.join(peer_work, "yaml"))
        projects.append(Peer(f"{PYTORCH}: torchgen", torchgen_generator(python, yaml_path, tags_path, peer_work),
                             yaml_path, os.path.join(peer_work, "out"), EDIT_GROUP))
    return projects


def synthetic_project(work: str, count: int) -> Project:
    root = copy_project(os.path.join(work, f"synthetic-{count}"))
    for name, text in (("native_functions.yaml", synthetic_yaml(count)), ("tags.yaml", TAGS_YAML)):
        write_text(os.path.join(root, "yaml", name), text)
    return Project(f"synthetic {count}", root, ["--codegen-only"], editable_group(count))


def measure(project, runs: int) -> list[Row]:
    """cold, (clean with a warm ccache,) no-op and one-op edit rows of a Project or a Peer."""
    cold = Row(project.label, "cold", [project.build()])
    rows = [cold]
    if cold.builds[0].ccache_hits is not None:
        warm = Row(project.label, "clean, warm ccache")
        for _ in range(runs):
            project.clean()
            warm.builds.append(project.build())
        rows.append(warm)
    noop = Row(project.label, "no-op", [project.build() for _ in range(runs)])
    original = project.read_yaml()
    edits: Iterator[str] = fresh_edits(original, project.edit_group)  # the project's caches never saw them
    edit = Row(project.label, "one-op edit")
    try:
        for _ in range(runs):
            project.write_yaml(next(edits))
            edit.builds.append(project.build())
    finally:
        project.write_yaml(original)
    for row in rows + [noop, edit]:
        judge(row, project.edit_group)
    return rows + [noop, edit]


def judge(row: Row, edit_group: str) -> None:
    """Sets the row's goal and whether it was met: seconds (GOALS) and, for an edit, one group."""
    seconds = GOALS.get((row.project, row.scenario))
    checks = []
    if seconds is not None:
        checks.append((f"<= {seconds:g} s", row.median <= seconds))
    if row.scenario == "one-op edit" and any(b.regenerated for b in row.builds):
        checks.append((f"1 group ({edit_group})", all(b.regenerated.startswith("1/") for b in row.builds)))
    row.goal = ", ".join(text for text, _ in checks)
    row.met = "" if not checks else ("yes" if all(ok for _, ok in checks) else "NO")


def format_table(rows: list[Row]) -> str:
    def hits(build: Build) -> str:
        return "" if build.ccache_hits is None else str(build.ccache_hits)

    def nodes(build: Build) -> str:
        return "" if build.nodes is None else str(build.nodes)

    def compiles(build: Build) -> str:
        return "" if build.compiles is None else str(build.compiles)

    body = [(r.project, r.scenario, str(len(r.builds)), f"{r.median:.2f}", r.spread(lambda b: b.regenerated),
             r.spread(compiles), r.spread(hits), r.spread(nodes), r.goal, r.met) for r in rows]
    header = ("project", "scenario", "runs", "median s", "regenerated", "compiles", "ccache hits", "nodes", "goal", "met")
    return render_table(header, body, "<<>>>>>><<")


PROJECT_KINDS = ("library", "pytorch", "synthetic")


def project_groups(work: str, kinds: list[str], sizes: list[int], with_torchgen: bool, notes: list[str]):
    """Lists of projects measured one list after the other (each list's temp trees removed after it)."""
    if "library" in kinds:
        yield lambda: [library_project(work)]
    if "pytorch" in kinds:
        if os.path.isfile(os.path.join(PYTORCH_DATA, "native_functions.yaml")):
            yield lambda: pytorch_projects(work, with_torchgen)
        else:
            notes.append(f"NOTE: PyTorch 2.13's yaml is not in {PYTORCH_DATA}; its rows were skipped.")
    if "synthetic" in kinds:
        for count in sizes:
            yield lambda count=count: [synthetic_project(work, count)]


def remove_trees(work: str) -> None:
    """Everything a measured list left under the work directory (a 3,000-group tree is large)."""
    for name in os.listdir(work):
        shutil.rmtree(os.path.join(work, name), ignore_errors=True)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per warm scenario (default 3; cold: 1)")
    parser.add_argument("--sizes", default="500,1500,3000", help="synthetic group counts (default 500,1500,3000)")
    parser.add_argument("--only", default=",".join(PROJECT_KINDS),
                        help=f"projects to measure, of {','.join(PROJECT_KINDS)} (default: all)")
    parser.add_argument("--no-torchgen", action="store_true", help="leave torchgen out of the PyTorch rows")
    parser.add_argument("--quick", action="store_true", help="one run each; 500 synthetic groups only")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    sizes = [500] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    kinds = [k.strip() for k in args.only.split(",") if k.strip()]
    if runs < 1 or any(n < 1 for n in sizes):
        parser.error("--runs and --sizes must be positive")
    if set(kinds) - set(PROJECT_KINDS):
        parser.error(f"--only takes {', '.join(PROJECT_KINDS)}")

    rows: list[Row] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="opgen-bench-scons-") as work:
        for make_projects in project_groups(work, kinds, sizes, not args.no_torchgen, notes):
            for project in make_projects():
                print(f"bench: building {project.label} ...", file=sys.stderr, flush=True)
                try:
                    rows += measure(project, runs)
                except BuildFailed as exc:  # report it, measure the other projects all the same
                    print(f"bench: {exc}", file=sys.stderr)
                    notes.append(f"FAILED: {project.label}: the build failed (details on stderr); no numbers.")
            remove_trees(work)
    print(f"scons -j2 on temp copies of {REPO}; median of {runs} runs (cold: 1)"
          f"{'; ccache with a private cache' if HAS_CCACHE else '; ccache not installed'}; "
          f"edits: alpha=1 -> alpha=N, N never used before\n")
    if rows:
        print(format_table(rows))
    for note in notes:
        print("\n" + note)
    return 1 if any(note.startswith("FAILED") for note in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
