"""Benchmark: a recorded program's selective builds, training and inference, beside the full build,
in one run (issues 31 and 41).

    python tests/bench/bench_selective.py [--work DIR] [--steps N] [--cuda auto|on|off]

A report, not a test: it prints the recorded selection, the size report and a table, and exits 0
(1 when a build, the program or the report failed, or the program's results on the builds
differ). It takes three cold builds: ~20 minutes on 2 cores shared with other builds.

Each build is a private copy of the project (tests/helpers.copy_project), `scons -j2
--ccache=off`, CUDA as detected (or as --cuda says), with a codegen cache of its own, empty, so each is really cold
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
4. training: `scons -j2 --ccache=off --ops=ops.yaml` in a fresh copy: the same figures, the
   groups after closure, the estimate beside the real size, and the library as its link map
   measured it (group units, hand-written sources, the linker's own: object_sizes.json's "measured").
5. inference: the same for the MLP's forward alone, without autograd (mlp_program.py --inference),
   recorded on the full build and built in a third copy.
6. The program on each build, unrecorded: loss and gradients equal to the bit (yes/no) and the
   median step time, which should be the same on all (the same kernels, the same dispatch).

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
    selective = any(option.startswith("--ops=") for option in options)
    groups = int(_search(SELECTED if selective else GROUPS, output).group(2))
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


def measured(project: str) -> Optional[dict]:
    """The selective library's figures its link map gave (object_sizes.json's "measured"), if any."""
    try:
        with open(os.path.join(cache_of(project), "object_sizes.json"), encoding="utf-8") as handle:
            return json.load(handle).get("measured", {}).get(SELECTION)
    except (OSError, ValueError):
        return None


def size_report(project: str, selection: str = SELECTION) -> str:
    """`opgen select SELECTION --report` in ``project``, reading its build's codegen cache."""
    command = [sys.executable, "-m", "opgen", "select", selection, "--report", "--cache-dir", cache_of(project)]
    run = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600,
                         env={k: v for k, v in os.environ.items() if k != "OPGEN_CACHE_DIR"})
    if run.returncode:
        raise RuntimeError(f"opgen select --report failed:\n{run.stdout}{run.stderr}")
    return run.stdout


def _ratio(selected: float, full: float) -> str:
    return f"{selected / full:.2f}x" if full else ""


@dataclass
class Selective:
    """A selective build and what was known of it: the estimate before, the link map after, its runs."""
    build: Build
    estimate_mib: float
    measured: Optional[dict]
    run: dict


def table(full: Build, full_run: dict, full_inference: dict, training: Selective, inference: Selective) -> str:
    builds = (full, training.build, inference.build)

    def row(name, cells, ratio=None):
        values = [ratio(b) for b in (training, inference)] if ratio else ["", ""]
        return [name, *cells, *values]

    def ratios(value):
        return lambda sel: _ratio(value(sel.build), value(full))

    def split(key):
        return [""] + [f"{sel.measured[key] / MIB:.2f}" if sel.measured else "" for sel in (training, inference)]

    def same(sel, reference):
        return "equal" if (sel.run["loss"], sel.run["grads"]) == (reference["loss"], reference["grads"]) else "DIFFERENT"

    ms = lambda run: 1e3 * statistics.median(run["step_s"])  # noqa: E731
    rows = [
        row("operator groups", [str(b.groups) for b in builds], ratios(lambda b: b.groups)),
        row("compiles", [str(len(b.compiled)) for b in builds], ratios(lambda b: len(b.compiled))),
        row("  of the library", [str(b.library_compiles) for b in builds], ratios(lambda b: b.library_compiles)),
        row("cold build wall s", [f"{b.seconds:.0f}" for b in builds], ratios(lambda b: b.seconds)),
        row("cold build CPU s", [f"{b.cpu:.0f}" for b in builds], ratios(lambda b: b.cpu)),
        row("libopdispatch.so MiB", [f"{b.library_bytes / MIB:.2f}" for b in builds], ratios(lambda b: b.library_bytes)),
        row("  estimated before building", ["", f"{training.estimate_mib:.2f}", f"{inference.estimate_mib:.2f}"],
            lambda sel: _ratio(sel.estimate_mib * MIB, sel.build.library_bytes) + " of built"),
        row("  group units (link map)", split("groups_bytes")),
        row("  hand-written sources (link map)", split("sources_bytes")),
        row("  the linker's own (link map)", split("linker_bytes")),
        row("MLP loss and gradients", ["", same(training, full_run), same(inference, full_inference)]),
        row(f"MLP step ms (median of {len(full_run['step_s'])})", [f"{ms(full_run):.3f}", f"{ms(training.run):.3f}",
            f"{ms(inference.run):.3f}"], lambda sel: _ratio(ms(sel.run), ms(full_run if sel is training else full_inference))),
    ]
    return render_table(["", "full", "training", "inference", "training/full", "inference/full"], rows, "<>>>>>")


def _with_totals(figures: Optional[dict]) -> Optional[dict]:
    if figures is None:
        return None
    # Handles objects (an inference selection's left-out groups) are generated sources: with the sources.
    return {**figures, "groups_bytes": sum(figures["groups"].values()),
            "sources_bytes": sum(figures["sources"].values()) + sum(figures.get("handles", {}).values())}


def _fresh(path: str) -> str:
    shutil.rmtree(path, ignore_errors=True)
    return str(copy_project(path))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="scratch directory (default: a temp dir, removed after)")
    parser.add_argument("--steps", type=int, default=20, help="timed MLP steps on each build (default 20)")
    parser.add_argument("--cuda", choices=("auto", "on", "off"), default="auto",
                        help="every build's --cuda (default auto: as detected). CUDA's device code is in every "
                             "library whole (the linker does not collect it): off compares the host code alone")
    args = parser.parse_args(argv)
    cuda_option = () if args.cuda == "auto" else (f"--cuda={args.cuda}",)
    work = args.work or tempfile.mkdtemp(prefix="bench-selective-")
    try:
        full_dir = _fresh(os.path.join(work, "full"))
        print("cold full build: scons -j2 --ccache=off ...", flush=True)
        full = cold_build(full_dir, *cuda_option)

        selections = {}
        for kind, args_ in (("training", ()), ("inference", ("--inference",))):
            name = f"{kind}.yaml"
            recorded = mlp(full_dir, args.steps, *args_, "--record", name)["operators"]
            print(f"\n{name}: the MLP's {'forward and backward' if kind == 'training' else 'forward alone'} recorded on "
                  f"the full build, {len(recorded)} operators, {sum(recorded.values())} roots (*)")
            print("  " + ", ".join(op + ("*" if root else "") for op, root in recorded.items()))
            report = size_report(full_dir, name)
            print(f"\nopgen select {name} --report, on the full build's codegen cache (before building it):")
            print(report.rstrip())
            selections[kind] = (name, float(_search(ESTIMATE, report).group(1)), args_)

        built = {}
        for kind, (name, estimate, args_) in selections.items():
            selected_dir = _fresh(os.path.join(work, kind))
            shutil.copy(os.path.join(full_dir, name), os.path.join(selected_dir, SELECTION))
            print(f"\ncold selective build ({kind}): scons -j2 --ccache=off --ops={SELECTION} ...", flush=True)
            build = cold_build(selected_dir, f"--ops={SELECTION}", *cuda_option)
            print(_search(SELECTED, build.output).group(0))
            print(size_report(selected_dir).rstrip())
            built[kind] = Selective(build, estimate, _with_totals(measured(selected_dir)), mlp(selected_dir, args.steps, *args_))

        full_run, full_inference = mlp(full_dir, args.steps), mlp(full_dir, args.steps, "--inference")
        cuda = "on" if "[opgen] CUDA: on" in full.output else "off"
        print(f"\nThe full build and the selective builds of the MLP's training and inference recordings, one after "
              f"the other in this run (-j2, --ccache=off, CUDA {cuda}, each with an empty codegen cache)\n")
        print(table(full, full_run, full_inference, built["training"], built["inference"]))
        for kind, reference in (("training", full_run), ("inference", full_inference)):
            if (built[kind].run["loss"], built[kind].run["grads"]) != (reference["loss"], reference["grads"]):
                print(f"bench_selective: the MLP's {kind} results differ between the builds", file=sys.stderr)
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
