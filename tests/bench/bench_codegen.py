"""Benchmark: code generation alone, `opgen generate` vs torchgen, on PyTorch 2.13's yaml.

    python tests/bench/bench_codegen.py [--runs N] [--quick] [--cold-only] [--work DIR]

A report, not a test: it prints one table and exits 0 (2 when PyTorch's yaml is absent, 1 when a
generator fails). Scenarios, each timed as whole processes (interpreter start-up included):
  cold         empty output directory (and, for opgen, an empty cache); opgen renders in a
               worker process per core (its default), and again with -j 1 (in one process)
  no-op        the same command again on its own output
  one-op edit  the default `alpha=1` -> `alpha=N` in every schema of operator group `add`, N a
               value no earlier run used (2, 3, 4, ...): every edit is content the parse and
               codegen caches have never seen, as a real edit is (an edit and its revert would
               measure a cache hit from the second pair on)
"Files"/"MB" count what a run created or rewrote in its output tree (mtime or size changed);
the edit goal allows only files named after the group (plus hidden bookkeeping files).
torchgen runs in the peer virtualenv (peer_env.py) with --per-operator-headers, PyTorch's
default build layout; its templates come from the wheel (torchgen/packaged/ATen/templates).
"""
from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Iterator, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (helpers)
from helpers import snapshot, written  # noqa: E402
from peer_env import REPO, ensure_torchgen, pytorch_yaml  # noqa: E402
from synthetic_yaml import edit_one_default  # noqa: E402
from table import render_table  # noqa: E402

EDIT_GROUP = "add"
GOALS = {"cold": 0.15, "no-op": 0.05, "one-op edit": 0.05}  # opgen median / torchgen median (cold: issue 40)
REGENERATED = re.compile(r"(?:regenerated|materialized from the cache) (\d+)/(\d+) groups")


class CommandFailed(Exception):
    pass


@dataclass
class Run:
    seconds: float
    paths: list[str]
    megabytes: float
    regenerated: str = ""


@dataclass
class Measurement:
    tool: str
    scenario: str
    runs: list[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(run.seconds for run in self.runs)

    def spread(self, value) -> str:
        """One value when every run agrees, else min-max."""
        values = sorted({value(run) for run in self.runs})
        return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


@dataclass
class Generator:
    name: str
    command: list[str]  # the output directory is appended
    cwd: str
    env: dict[str, str]
    cache_dir: Optional[str] = None  # emptied for cold runs

    def run(self, out_dir: str) -> Run:
        os.makedirs(out_dir, exist_ok=True)
        before = snapshot(out_dir, ignore=())
        start = time.perf_counter()
        result = subprocess.run(self.command + [out_dir], cwd=self.cwd, env=self.env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
            raise CommandFailed(f"{self.name} exited with {result.returncode}:\n{tail}")
        after = snapshot(out_dir, ignore=())
        paths = written(before, after)
        found = REGENERATED.search(result.stdout + result.stderr)
        megabytes = sum(len(after[path][0]) for path in paths) / 1e6
        return Run(seconds, paths, megabytes, f"{found[1]}/{found[2]}" if found else "")

    def clear_cache(self) -> None:
        if self.cache_dir:
            shutil.rmtree(self.cache_dir, ignore_errors=True)


def torchgen_generator(python: str, yaml_path: str, tags_path: str, work: str) -> Generator:
    """torchgen wants <src>/native/{native_functions,tags}.yaml and <src>/templates; link them."""
    templates = subprocess.run(
        [python, "-c", "import os, torchgen; print(os.path.join(os.path.dirname(torchgen.__file__), "
                       "'packaged', 'ATen', 'templates'))"],
        capture_output=True, text=True, check=True).stdout.strip()
    source = os.path.join(work, "torchgen-src")
    os.makedirs(os.path.join(source, "native"))
    os.symlink(yaml_path, os.path.join(source, "native", "native_functions.yaml"))
    os.symlink(tags_path, os.path.join(source, "native", "tags.yaml"))
    os.symlink(templates, os.path.join(source, "templates"))
    # --aoti-install-dir defaults to a path under the working directory; keep it in the output.
    command = [python, "-m", "torchgen.gen", "--source-path", source, "--per-operator-headers",
               "--aoti-install-dir", os.path.join(work, "torchgen-aoti"), "--install-dir"]
    return Generator("torchgen", command, work, dict(os.environ))


def opgen_generator(yaml_path: str, tags_path: str, work: str) -> Generator:
    cache = os.path.join(work, "opgen-cache")
    # Bytecode as in a user's checkout (torchgen's was compiled when pip installed it); a
    # sandbox's PYTHONDONTWRITEBYTECODE would recompile opgen's modules on every run.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["OPGEN_CACHE_DIR"] = cache
    command = [sys.executable, "-m", "opgen", "generate", yaml_path, "--tags", tags_path, "--out"]
    return Generator("opgen", command, REPO, env, cache_dir=cache)


def opgen_generate_missing() -> Optional[str]:
    """Why `python -m opgen generate` cannot run here, or None when it can."""
    probe = subprocess.run([sys.executable, "-m", "opgen", "generate", "--help"], cwd=REPO,
                           capture_output=True, text=True)
    if probe.returncode == 0:
        return None
    last = (probe.stderr or probe.stdout).strip().splitlines()[-1:] or ["no output"]
    return f"`python -m opgen generate --help` exited with {probe.returncode}: {last[0]}"


def fresh_edits(original: str, group: str = EDIT_GROUP) -> Iterator[str]:
    """``original`` with `alpha=1` -> `alpha=N` in ``group``, N = 2, 3, 4, ...: never the same text twice."""
    for value in itertools.count(2):
        yield edit_one_default(original, group, new=f"alpha={value}")


def measure(gen: Generator, yaml_path: str, original: str, edits: Iterator[str], work: str, runs: int,
            cold_only: bool = False) -> list[Measurement]:
    measurements = []
    if gen.cache_dir:  # opgen: in one process first, so its own cold run (by default parallel) is last
        serial = Generator(gen.name, gen.command[:-1] + ["-j", "1", "--out"], gen.cwd, gen.env, gen.cache_dir)
        measurements.append(measure_cold(serial, "cold, -j 1", work, runs))
        shutil.rmtree(os.path.join(work, f"{gen.name}-out-{runs - 1}"))
    measurements.append(measure_cold(gen, "cold", work, runs))
    if cold_only:
        return measurements
    out_dir = os.path.join(work, f"{gen.name}-out-{runs - 1}")
    if gen.cache_dir:
        warm = Measurement(gen.name, "clean output, warm cache")
        for i in range(runs):
            clean_dir = os.path.join(work, f"{gen.name}-clean-{i}")
            warm.runs.append(gen.run(clean_dir))
            shutil.rmtree(clean_dir)
        measurements.append(warm)
    noop = Measurement(gen.name, "no-op", [gen.run(out_dir) for _ in range(runs)])
    edit = Measurement(gen.name, "one-op edit")
    try:
        for _ in range(runs):
            write_text(yaml_path, next(edits))
            edit.runs.append(gen.run(out_dir))
    finally:
        write_text(yaml_path, original)
    return measurements + [noop, edit]


def measure_cold(gen: Generator, scenario: str, work: str, runs: int) -> Measurement:
    """``runs`` runs into empty directories with empty caches; the last run's tree is kept."""
    cold = Measurement(gen.name, scenario)
    for i in range(runs):
        out_dir = os.path.join(work, f"{gen.name}-out-{i}")
        gen.clear_cache()
        cold.runs.append(gen.run(out_dir))
        if i:
            shutil.rmtree(os.path.join(work, f"{gen.name}-out-{i - 1}"))
    return cold


def write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def outside_group(paths: list[str], group: str) -> list[str]:
    """Rewritten files not named after the group (ops/add.h, ops/add_ops.h, ops/add_CPU.cpp ...).

    Hidden files (a generator's manifest) are bookkeeping that nothing compiles: not counted.
    """
    def ours(path: str) -> bool:
        name = os.path.basename(path)
        stem = name.split(".")[0]
        return name.startswith(".") or stem == group or stem.startswith(group + "_")
    return [path for path in paths if not ours(path)]


def judge(ours: Measurement, theirs: Optional[Measurement]) -> tuple[str, str, str]:
    """(ratio, goal, met) for one opgen measurement."""
    goal = GOALS.get(ours.scenario)
    ratio = None if theirs is None else ours.median / theirs.median
    goal_text = "" if goal is None else f"<= {goal}x"
    if ours.scenario == "one-op edit":
        goal_text += f", only '{EDIT_GROUP}' files"
    if goal is None:
        met = ""
    elif ratio is None:
        met = "n/a"
    else:
        met = "yes" if ratio <= goal else "NO"
        if ours.scenario == "one-op edit":
            strays = {path for run in ours.runs for path in outside_group(run.paths, EDIT_GROUP)}
            if strays:
                met = f"NO ({len(strays)} other files)"
    return ("n/a" if ratio is None else f"{ratio:.3f}x"), goal_text, met


def format_table(measurements: list[Measurement]) -> str:
    torchgen = {m.scenario: m for m in measurements if m.tool == "torchgen"}
    torchgen["clean output, warm cache"] = torchgen.get("cold")  # torchgen has no cache: clean is cold
    torchgen["cold, -j 1"] = torchgen.get("cold")  # torchgen runs in one process
    rows = []
    for m in measurements:
        ratio, goal, met = judge(m, torchgen.get(m.scenario)) if m.tool == "opgen" else ("", "", "")
        rows.append((m.scenario, m.tool, str(len(m.runs)), f"{m.median:.3f}", ratio,
                     m.spread(lambda r: len(r.paths)), m.spread(lambda r: f"{r.megabytes:.2f}"),
                     m.spread(lambda r: r.regenerated), goal, met))
    header = ("scenario", "tool", "runs", "median s", "opgen/torchgen", "files", "MB", "regenerated",
              "goal", "met")
    return render_table(header, rows, "<<>>>>>><<")


def list_edited_files(measurements: list[Measurement], limit: int = 12) -> str:
    lines = []
    for m in measurements:
        if m.scenario == "one-op edit" and m.runs:
            paths = m.runs[0].paths
            shown = ", ".join(paths[:limit]) + (f", ... and {len(paths) - limit} more" if len(paths) > limit else "")
            lines.append(f"{m.tool} one-op edit rewrote {len(paths)} files: {shown or '(none)'}")
    return "\n".join(lines)


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def load_average() -> str:
    """The 1-minute load average now (other work on the machine slows both tools)."""
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "n/a"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per scenario and tool (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run per scenario")
    parser.add_argument("--cold-only", action="store_true", help="the cold scenarios only")
    parser.add_argument("--work", metavar="DIR", default=None,
                        help="where the trees and caches go (default: the system's temp directory); "
                             "/dev/shm leaves the disk's file system out of the figures")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    yaml_src, tags_src = pytorch_yaml()
    load_before = load_average()
    peer_python = ensure_torchgen()
    opgen_missing = opgen_generate_missing()

    measurements: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="opgen-bench-codegen-", dir=args.work) as work:
        # One private yaml that both generators read; the edit scenario rewrites it in place.
        yaml_path, tags_path = os.path.join(work, "native_functions.yaml"), os.path.join(work, "tags.yaml")
        shutil.copyfile(yaml_src, yaml_path)
        shutil.copyfile(tags_src, tags_path)
        with open(yaml_path, encoding="utf-8") as handle:
            original = handle.read()
        edits = fresh_edits(original)  # one sequence for both tools: no value is ever seen twice
        generators = []
        if peer_python:
            generators.append(torchgen_generator(peer_python, yaml_path, tags_path, work))
        if opgen_missing is None:
            generators.append(opgen_generator(yaml_path, tags_path, work))
        for gen in generators:
            print(f"bench: measuring {gen.name} ({runs} runs per scenario) ...", file=sys.stderr)
            try:
                measurements += measure(gen, yaml_path, original, edits, work, runs, args.cold_only)
            except CommandFailed as exc:
                print(f"bench: {exc}", file=sys.stderr)
                return 1

    order = ["cold", "cold, -j 1", "clean output, warm cache", "no-op", "one-op edit"]
    measurements.sort(key=lambda m: (order.index(m.scenario), m.tool != "torchgen"))
    print(f"{yaml_src}; median of {runs} runs per scenario; edit: alpha=1 -> alpha=N in group '{EDIT_GROUP}', "
          f"N never used before; {available_cores()} cores, load average {load_before} before, {load_average()} after\n")
    if measurements:
        print(format_table(measurements))
        print()
        print(list_edited_files(measurements))
    if peer_python is None:
        print("\nNOTE: torchgen (torch 2.13.0) is unavailable in the peer virtualenv; no ratios.")
    if opgen_missing:
        print(f"\nNOTE: opgen's half was skipped: {opgen_missing}.\n"
              "      `python -m opgen generate YAML --tags TAGS --out DIR` is not implemented yet.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
