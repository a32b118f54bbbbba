"""Benchmark: a recorded program's selective build beside the full build, in one run (issue 31).

    python tests/bench/bench_selective.py [--work DIR] [--steps N]

A report, not a test: it prints the recorded selection, the size report and a table, and exits 0
(1 when a build, the program or the report failed, or the program's results on the two builds
differ). It takes two cold builds: ~15 minutes on 2 cores shared with other builds.

Each build is a private copy of the project (tests/helpers.copy_project), `scons -j2
--ccache=off`, CUDA as detected, with a codegen cache of its own, empty, so each is really cold
(nothing rendered before, nothing compiled before):

1. full: the default build (library, Python bindings, C++ unit tests): wall and CPU seconds
   (RUSAGE_CHILDREN: scons and every compiler it ran), compiles, libopdispatch.so's size.
2. The MLP of tests/runtime/mlp_program.py (test_py_record_operators.py's two-layer classifier,
   forward and backward; --steps timed steps after the first) recorded on the full build with
   opdispatch.record_operators -> ops.yaml, printed: its operators, roots marked.
3. `opgen select ops.yaml --report` in the full copy, reading the full build's codegen cache:
   the estimate a user has before building the selection is the one a full build recorded there
   (object_sizes.json); the selective build then gets its own empty cache, or it would be served
   rendered files and would not be cold.
4. selected: `scons -j2 --ccache=off --ops=ops.yaml` in a fresh copy: the same figures, the
   groups after closure, and the estimate beside the real size.
5. The program on each build, unrecorded: loss and gradients equal to the bit (yes/no) and the
   median step time, which should be the same on both (the same kernels, the same dispatch).

torchgen's selective build (--op-selection-yaml-path) is not runnable here and PyTorch documents
no size or build-time figure for it, so the baseline column is the full build.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Optional

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), _TESTS]
from helpers import REPO_ROOT, copy_project, run_scons_loud  # noqa: E402
from table import render_table  # noqa: E402

LIBRARY = os.path.join("build", "lib", "libopdispatch.so")
MLP_PROGRAM = os.path.join(REPO_ROOT, "tests", "runtime", "mlp_program.py")
SELECTION = "ops.yaml"
STEP = re.compile(r"^\[\s*\d+/\d+\] (?:CXX|CC|NVCC) (\S+)$", re.MULTILINE)
GROUPS = re.compile(r"\[opgen\] (\d+) functions in (\d+) operator groups")
SELECTED = re.compile(r"\[opgen\] operator selection \S+: (\d+) operators selected, (\d+)/(\d+) groups after closure")
ESTIMATE = re.compile(r"library size: ~([0-9.]+) MiB estimated")
MIB = 1 << 20


@dataclass
class Build:
    seconds: float
    cpu: float
    compiled: list[str]  # the objects compiled, as the step lines name them
    groups: int
    library_bytes: int
    output: str

    @property
    def library_compiles(self) -> int:
        """Compiles of the library's objects: not the C++ unit tests, not the Python extension."""
        return sum(1 for path in self.compiled if not path.startswith(("build/obj/tests/", "build/obj/python/")))


def cold_build(project: str, *options: str) -> Build:
    """`scons -j2 --ccache=off OPTIONS` in ``project`` with its own empty codegen cache."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = run_scons_loud(project, "-j2", "--ccache=off", *options, env={"OPGEN_CACHE_DIR": cache_of(project)},
                         timeout=None)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode:
        raise RuntimeError(f"cold build of {project} {' '.join(options)} failed:\n{(run.stdout + run.stderr)[-2000:]}")
    output = run.stdout + run.stderr
    groups = int(_search(SELECTED, output).group(2)) if options else int(_search(GROUPS, output).group(2))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    library_bytes = os.path.getsize(os.path.join(project, LIBRARY))
    return Build(seconds, cpu, STEP.findall(run.stdout), groups, library_bytes, output)


def _search(pattern: re.Pattern, text: str) -> re.Match:
    match = pattern.search(text)
    if match is None:
        raise RuntimeError(f"no line matching {pattern.pattern!r} in:\n{text[-2000:]}")
    return match


def cache_of(project: str) -> str:
    return os.path.join(project, "codegen-cache")


def mlp(project: str, steps: int, *args: str) -> dict:
    """mlp_program.py in ``project`` against its build: the JSON it printed."""
    env = {**os.environ, "PYTHONPATH": os.path.join(project, "build", "python")}
    run = subprocess.run([sys.executable, MLP_PROGRAM, "--steps", str(steps), *args], cwd=project, env=env,
                         capture_output=True, text=True, timeout=600)
    if run.returncode:
        raise RuntimeError(f"the MLP program failed in {project}:\n{(run.stdout + run.stderr)[-2000:]}")
    return json.loads(run.stdout.splitlines()[-1])


def size_report(project: str) -> str:
    """`opgen select ops.yaml --report` in ``project``, reading its build's codegen cache."""
    command = [sys.executable, "-m", "opgen", "select", SELECTION, "--report", "--cache-dir", cache_of(project)]
    run = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600,
                         env={k: v for k, v in os.environ.items() if k != "OPGEN_CACHE_DIR"})
    if run.returncode:
        raise RuntimeError(f"opgen select --report failed:\n{run.stdout}{run.stderr}")
    return run.stdout


def _ratio(selected: float, full: float) -> str:
    return f"{selected / full:.2f}x" if full else ""


def table(full: Build, selected: Build, estimate_mib: float, full_run: dict, selected_run: dict) -> str:
    equal = (full_run["loss"], full_run["grads"]) == (selected_run["loss"], selected_run["grads"])
    full_ms, selected_ms = (1e3 * statistics.median(run["step_s"]) for run in (full_run, selected_run))
    steps = len(full_run["step_s"])
    rows = [
        ["operator groups", str(full.groups), str(selected.groups), _ratio(selected.groups, full.groups)],
        ["compiles", str(len(full.compiled)), str(len(selected.compiled)),
         _ratio(len(selected.compiled), len(full.compiled))],
        ["  of the library", str(full.library_compiles), str(selected.library_compiles),
         _ratio(selected.library_compiles, full.library_compiles)],
        ["cold build wall s", f"{full.seconds:.0f}", f"{selected.seconds:.0f}", _ratio(selected.seconds, full.seconds)],
        ["cold build CPU s", f"{full.cpu:.0f}", f"{selected.cpu:.0f}", _ratio(selected.cpu, full.cpu)],
        ["libopdispatch.so MiB", f"{full.library_bytes / MIB:.2f}", f"{selected.library_bytes / MIB:.2f}",
         _ratio(selected.library_bytes, full.library_bytes)],
        ["  estimated before building", "", f"{estimate_mib:.1f}",
         _ratio(estimate_mib * MIB, selected.library_bytes) + " of built"],
        ["MLP loss and gradients", "", "equal" if equal else "DIFFERENT", ""],
        [f"MLP step ms (median of {steps})", f"{full_ms:.3f}", f"{selected_ms:.3f}", _ratio(selected_ms, full_ms)],
    ]
    return render_table(["", "full", "selected", "selected/full"], rows, "<>>>")


def _fresh(path: str) -> str:
    shutil.rmtree(path, ignore_errors=True)
    return str(copy_project(path))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="scratch directory (default: a temp dir, removed after)")
    parser.add_argument("--steps", type=int, default=20, help="timed MLP steps on each build (default 20)")
    args = parser.parse_args(argv)
    work = args.work or tempfile.mkdtemp(prefix="bench-selective-")
    try:
        full_dir = _fresh(os.path.join(work, "full"))
        print("cold full build: scons -j2 --ccache=off ...", flush=True)
        full = cold_build(full_dir)

        recorded = mlp(full_dir, args.steps, "--record", SELECTION)["operators"]
        roots = sum(recorded.values())
        print(f"\n{SELECTION}: the MLP's forward and backward recorded on the full build, {len(recorded)} operators, "
              f"{roots} roots (*)")
        print("  " + ", ".join(name + ("*" if root else "") for name, root in recorded.items()))

        report = size_report(full_dir)
        print(f"\nopgen select {SELECTION} --report, on the full build's codegen cache (before building it):")
        print(report.rstrip())
        estimate = float(_search(ESTIMATE, report).group(1))

        selected_dir = _fresh(os.path.join(work, "selected"))
        shutil.copy(os.path.join(full_dir, SELECTION), os.path.join(selected_dir, SELECTION))
        print(f"\ncold selective build: scons -j2 --ccache=off --ops={SELECTION} ...", flush=True)
        selected = cold_build(selected_dir, f"--ops={SELECTION}")
        print(_search(SELECTED, selected.output).group(0))

        full_run, selected_run = mlp(full_dir, args.steps), mlp(selected_dir, args.steps)
        cuda = "on" if "[opgen] CUDA: on" in full.output else "off"
        print(f"\nFull build vs the selective build of {SELECTION}, one after the other in this run "
              f"(-j2, --ccache=off, CUDA {cuda}, each with an empty codegen cache)\n")
        print(table(full, selected, estimate, full_run, selected_run))
        if (full_run["loss"], full_run["grads"]) != (selected_run["loss"], selected_run["grads"]):
            print("bench_selective: the MLP's results differ between the builds", file=sys.stderr)
            return 1
        return 0
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        print(f"bench_selective: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
