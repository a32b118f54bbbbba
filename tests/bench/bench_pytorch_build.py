"""Benchmark: the dispatcher library built from PyTorch 2.13's whole operator yaml, in one run.

    python tests/bench/bench_pytorch_build.py [--work DIR] [--no-torchgen]
    python tests/bench/bench_pytorch_build.py --work DIR --skip-cold [--project DIR]   # reuse a built tree

A report, not a test: it prints one table (measure | opgen | peer | goal | met) and exits 0, or 1
when a build, the library's start-up or `opgen generate` failed (the figures measured until then
are still printed; torchgen rejecting the yaml is a note, not a failure).

Everything happens in a private copy of the project (tests/helpers.copy_project) under --work
(<work>/project), with a copy of PyTorch's yaml directory inside it
(<project>/pt-yaml/{native_functions,tags,derivatives}.yaml: edits never touch the shared data)
and a private, initially empty codegen cache (OPGEN_CACHE_DIR=<project>/bench-cache). Every build
is `python -m SCons -j2 --ccache=off --yaml=pt-yaml/native_functions.yaml --tags=pt-yaml/tags.yaml
--missing-kernels=stub` (CUDA as detected; derivatives.yaml beside the yaml builds the autograd
layer; the default --kernels=auto compiles no hand-written kernel with a foreign yaml, so every
kernel the yaml names is a generated stub). The builds and every Python process the benchmark
starts run without PYTHONDONTWRITEBYTECODE, as a user's do: with it (this machine exports it)
each scons run would compile opgen's modules again (~0.15 s). The notes give the machine's load
average at the start and at the end.

1. Cold build (skipped by --skip-cold): wall and CPU seconds (user+sys of SCons and every
   compiler, getrusage(RUSAGE_CHILDREN) before and after), the peak resident memory of the
   largest process it ran (ru_maxrss of RUSAGE_CHILDREN) and of the SCons process itself (its
   own RUSAGE_SELF, written at exit), the compiles and steps (the `[ n/m] KIND target` lines),
   build/lib/libopdispatch.so's size and the stubbed kernels (`[opgen] missing kernels: N stubbed`).
2. Start-up, in fresh Python processes with PYTHONPATH=<project>/build/python, median of
   --startup-runs (default 5) each: ctypes.CDLL(libopdispatch.so, RTLD_GLOBAL) alone (the
   library's static registrations; goal <= 0.2 s) and `import opdispatch` (goal <= 0.2 s). One more process
   counts the operators registered (opdispatch.dispatcher.op_names(); goal: every schema of the
   yaml, 3,101 for PyTorch's), the static registrations that failed, and prints
   dump_table("aten::add.Tensor")'s keys.
3. The timed command once, as a user's checkout after `scons` (the edits find its record and
   freeze the groups they leave as they are: opgen/scons/frozen.py), then two one-operator edits
   with never-seen content, one after the other, each also once more with every group walked
   (OPGEN_FROZEN_GROUPS=off, another never-seen value: its wall and reading rows): one default value set to
   a number derived from time.time_ns(). PyTorch's: cov's `int correction` (a method variant, no
   derivatives.yaml entry) and addcmul's `Scalar value` (structured, with a backward formula:
   its derivatives.yaml `- name:` repeats the schema, so that line is edited too, as a user
   must, and so are addcmul.out's and addcmul_'s: torchgen rejects overloads that differ). Each rebuild is timed (`--debug=time`); each edit reports groups regenerated,
   generated files rewritten, objects recompiled (listed under the table; goal: only the
   group's own), whether the library relinked, wall seconds (goal <= 3 s, issue 40's), where
   that wall went, and `import opdispatch` in a fresh process after it (median of 3, goal
   <= 0.2 s). The parts (edit_parts), which add up to the wall (unless -j2 overlapped commands:
   a note says by how much): start-up (process start to the first SConscript: Python, SCons,
   its options, site_scons), reading the SConscripts ("Total SConscript file execution time"),
   then SCons' "Command execution time: <target>: X s" lines summed by the step each belongs to
   (the `[ n/m] KIND target` line naming the target, else its path): codegen (GEN, targets under
   build/gen/ops), the unit's compile (CXX/NVCC, .os/.o), archiving (AR, .a), the kernel check
   (STUB/CHECK, build/gen/missing_kernels.cpp or .ok), the link of libopdispatch.so, the other
   links (the Python extensions), any other command; SCons' own work ("Total SCons execution
   time" less the .sconsign write and what came before the SConscripts, plus what of the
   commands' span no command took), the .sconsign write ("Total SConsign sync time"), and exit
   (after SCons' "Total build time": opgen's report and state, interpreter teardown). Start-up
   and exit together are the wall less SCons' "Total build time"; a wrapper around SCons
   (SCONS_WRAPPER) gives the clocks that split them. One row names the linker that linked the
   library (`readelf -p .comment`: LLD, mold, GNU gold; else bfd).
4. No-op: the same scons again, median of 3 (goal <= 0.75 s).
5. The peer on the first edit: `opgen generate` and torchgen (torch==2.13.0 in build/bench-venv,
   or the virtualenv $OPGEN_BENCH_VENV names: peer_env.py; --per-operator-headers; skipped with a
   note when unavailable) each regenerate a tree made from the unedited yaml (bench_edits' Peer
   machinery): files and kB rewritten, seconds. The cited anchor, not measured: PyTorch PR 61915
   (per-operator headers) reports ~1,100 files recompiled for a change to native_functions.yaml.

How long: on 2 cores the cold build of PyTorch's yaml takes ~20+ minutes (both cores busy); the
rest a few minutes (torchgen's two runs ~40 s), plus installing torch into build/bench-venv the
first time. --yaml-dir yaml (a debugging aid: this repository's own 90-group yaml, its kernels
built in; torchgen rejects that yaml, which the notes say) exercises every step: 6.3 minutes on
a 2-core machine shared with other builds, 6 of them the cold build.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

_BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_BENCH]
import bench_edits  # noqa: E402  (puts tests/, tests/scons and the repository on sys.path)
from helpers import copy_project, scons_env  # noqa: E402
from peer_env import ensure_torchgen, pytorch_yaml  # noqa: E402
from scons_helpers import rewrite_in_a_later_second  # noqa: E402
from table import render_table  # noqa: E402

YAML_DIR = "pt-yaml"  # the yaml copy inside the project
YAML_FILES = ("native_functions.yaml", "tags.yaml", "derivatives.yaml")
LIBRARY = os.path.join("build", "lib", "libopdispatch.so")
GEN = os.path.join("build", "gen")
CACHE = "bench-cache"  # the project's private codegen cache (OPGEN_CACHE_DIR)
MARKER = "bench-pytorch-build.txt"  # in a project copy this benchmark made (and may replace)
# Every build's options (run in the project; the default --kernels=auto: no hand-written kernels
# with a foreign yaml, every kernel stubbed).
BUILD_OPTIONS = ("-j2", "--ccache=off", f"--yaml={YAML_DIR}/native_functions.yaml", f"--tags={YAML_DIR}/tags.yaml",
                 "--missing-kernels=stub")

STARTUP_GOAL_S = 0.2
IMPORT_GOAL_S = 0.2
EDIT_GOAL_S = 3.0  # issue 40's goal
NOOP_GOAL_S = 0.75
NOOP_RUNS = 3
SHORTCUT_LINE = "[opgen] nothing changed since the last build"  # opgen/scons/noop.py
LOAD_RUNS = 3  # fresh `import opdispatch` processes after each edit
# A user's Python writes bytecode; with this variable set (this machine exports it) every scons
# run would compile opgen's modules again. The benchmark's scons and Python runs go without it.
UNSET = {"PYTHONDONTWRITEBYTECODE": None}
# Cited, not measured: PyTorch PR 61915 (per-operator headers), files recompiled for a change to
# native_functions.yaml.
CITED_RECOMPILES = "~1,100 (cited)"
CITED_NOTE = ("peer, cited and not measured: PyTorch PR 61915 (per-operator headers) reports ~1,100 files recompiled "
              "for a change to native_functions.yaml")

STEP = re.compile(r"^\[\s*(\d+)/(\d+)\] (\S+) (\S+)\s*$", re.M)
ANY_STEP = re.compile(r"^\[\s*\d+/\d+\] (\S+) (.+?)\s*$", re.M)  # also "CHECK kernel definitions"
# --debug=time: SCons' per-command and total figures.
COMMAND_TIME = re.compile(r"^Command execution time: (.+): ([\d.]+) seconds$", re.M)
TOTALS = {name: re.compile(rf"^Total {text} time: ([\d.]+) seconds$", re.M)
          for name, text in (("build", "build"), ("sconscripts", "SConscript file execution"),
                             ("scons", "SCons execution"), ("commands", "command execution"),
                             ("sconsign", "SConsign sync"))}
COMPILE_KINDS = ("CXX", "CC", "NVCC")
STUBBED = re.compile(r"\[opgen\] missing kernels: (\d+) stubbed")
REGENERATED = re.compile(r"^\[opgen\] (?:regenerated|materialized from the cache) (\d+)/(\d+) ([a-zA-Z ]+?)(?::.*)?$",
                         re.M)
# What the SConscripts found: the yaml's size, CUDA, kernels, autograd, BLAS.
NOTICES = re.compile(r"^\[opgen\] (?:\d+ functions in .*|CUDA: .*|kernels: .*|autograd: .*|BLAS: .*)$", re.M)

# SCons in-process, writing at exit (registered first, so after every other exit handler: the
# codegen's report and state) its own peak RSS (KiB) to $OPGEN_BENCH_MAXRSS and its clocks
# (time.time()) to $OPGEN_BENCH_CLOCK: SCons' own start (SCons.Script.start_time, the zero of its
# "Total build time"), when the first SConscript began to be read, and when the exit handlers
# ended. /usr/bin/time -f %M would not do: wait4's figure includes the reaped compilers.
SCONS_WRAPPER = """\
import atexit, json, os, resource, runpy, sys, time
_maxrss = os.environ.pop("OPGEN_BENCH_MAXRSS", None)
_clock = os.environ.pop("OPGEN_BENCH_CLOCK", None)
_first_sconscript = []
if _clock:
    from SCons.Script import _SConscript as _module
    _read = _module._SConscript
    def _reading(*args, **kwargs):  # SCons' first call (the SConstruct) only: SConscript() finds its caller's frame
        _first_sconscript.append(time.time())
        _module._SConscript = _read
        return _read(*args, **kwargs)
    _module._SConscript = _reading
def _write():
    if _maxrss:
        with open(_maxrss, "w") as handle:
            handle.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
    if _clock:
        import SCons.Script
        with open(_clock, "w") as handle:
            json.dump({"scons_start": SCons.Script.start_time, "sconscripts_start": (_first_sconscript or [None])[0],
                       "handlers_end": time.time()}, handle)
atexit.register(_write)
runpy.run_module("SCons", run_name="__main__", alter_sys=True)
"""


@dataclass(frozen=True)
class EditTarget:
    """A default value to set to a fresh number: ``yaml`` (groups: before, the number, after;
    ``overloads`` matches: the overloads of an operator share its defaults, or torchgen rejects
    the yaml) in the operator yaml and, where the derivatives entry repeats the schema,
    ``derivatives`` (one match) in derivatives.yaml."""
    group: str
    what: str
    yaml: str
    derivatives: Optional[str] = None
    overloads: int = 1


# Every target whose yaml pattern matches the yaml copy is edited, one after the other.
EDIT_TARGETS = (
    # PyTorch: a single-entry CompositeImplicitAutograd group with a method, no derivatives entry
    EditTarget("cov", "cov's default correction",
               r"(?m)^(- func: cov\(Tensor self, \*, int correction=)(-?\d+)(,)"),
    # PyTorch: a structured operator with a backward formula, whose derivatives entry repeats the
    # schema (the default too): the edit a user makes to both files, in addcmul, addcmul.out and
    # addcmul_ alike (torchgen will not group a structured operator whose overloads differ)
    EditTarget("addcmul", "addcmul's default value (its 3 overloads)",
               r"(?m)^(- func: addcmul(?:\.out|_)?\(Tensor(?:\(a!\))? self, Tensor tensor1, Tensor tensor2, \*, "
               r"Scalar value=)(-?\d+)([,)])",
               r"(?m)^(- name: addcmul\(Tensor self, Tensor tensor1, Tensor tensor2, \*, Scalar value=)(-?\d+)(\))",
               overloads=3),
    # this repository's yaml (--yaml-dir yaml): add.Scalar, whose derivatives entry repeats the schema
    EditTarget("add", "add.Scalar's default alpha",
               r"(?m)^(- func: add\.Scalar\(Tensor self, Scalar other, \*, Scalar alpha=)(-?\d+)(\))",
               r"(?m)^(- name: add\.Scalar\(Tensor self, Scalar other, \*, Scalar alpha=)(-?\d+)(\))"),
)


@dataclass
class Report:
    rows: list = field(default_factory=list)      # [measure, opgen, peer, goal, met]
    notes: list = field(default_factory=list)     # lines printed under the table
    failures: list = field(default_factory=list)

    def row(self, measure: str, opgen: str, peer: str = "", goal: str = "", met: Optional[bool] = None) -> None:
        self.rows.append([measure, opgen, peer, goal, "" if met is None else ("yes" if met else "NO")])

    def fail(self, what: str, error: BaseException | str) -> None:
        self.failures.append(f"{what}: {error}")
        self.row(what, "FAILED")


# ----- SCons -----

@dataclass
class SconsRun:
    returncode: int
    output: str
    seconds: float
    cpu: float
    maxrss_kb: int              # ru_maxrss of RUSAGE_CHILDREN after the run (the largest child so far)
    scons_maxrss_kb: Optional[int]
    launched: float = 0.0       # time.time() just before the process started, and just after it ended
    ended: float = 0.0
    clock: Optional[dict] = None  # timed runs: SCONS_WRAPPER's clocks

    @property
    def steps(self) -> list[tuple[int, int, str, str]]:
        return [(int(n), int(m), kind, target) for n, m, kind, target in STEP.findall(self.output)]

    @property
    def compiled(self) -> list[str]:
        return [target for _, _, kind, target in self.steps if kind in COMPILE_KINDS]

    @property
    def linked(self) -> bool:
        return any(kind == "LINK" and target == LIBRARY for _, _, kind, target in self.steps)

    def regenerated(self) -> list[str]:
        return [line.group(0) for line in REGENERATED.finditer(self.output)]


def run_scons(project: str, *, maxrss: bool = False, timed: bool = False, extra: tuple[str, ...] = (),
              env: Optional[dict] = None) -> SconsRun:
    """SCons without -Q (its notices, "[opgen] N functions ...", are wanted), no --verbose (one
    counted step line each); the private codegen cache; no PYTHONDONTWRITEBYTECODE (a user's
    Python writes bytecode). ``timed``: --debug=time and SCONS_WRAPPER's clocks (edit_parts);
    ``extra``: options after BUILD_OPTIONS; ``env``: variables on top."""
    env = scons_env(env={"OPGEN_CACHE_DIR": os.path.join(project, CACHE), **UNSET, **(env or {})})
    files = {}
    for wanted, variable, name in ((maxrss, "OPGEN_BENCH_MAXRSS", "bench-scons-maxrss.txt"),
                                   (timed, "OPGEN_BENCH_CLOCK", "bench-scons-clock.json")):
        if wanted:
            # Beside the project, not in it: written after the build's record (opgen/scons/noop.py),
            # a file new in the project's directory would make the next build read everything.
            files[variable] = env[variable] = os.path.join(os.path.dirname(os.path.abspath(project)), name)
            if os.path.exists(files[variable]):
                os.unlink(files[variable])
    argv = ([sys.executable] + (["-c", SCONS_WRAPPER] if files else ["-m", "SCons"]) + list(BUILD_OPTIONS)
            + (["--debug=time"] if timed else []) + list(extra))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    launched = time.time()
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    scons_kb = clock = None
    if os.path.exists(files.get("OPGEN_BENCH_MAXRSS", "")):
        with open(files["OPGEN_BENCH_MAXRSS"], encoding="utf-8") as handle:
            scons_kb = int(handle.read().strip() or 0) or None
    if os.path.exists(files.get("OPGEN_BENCH_CLOCK", "")):
        with open(files["OPGEN_BENCH_CLOCK"], encoding="utf-8") as handle:
            clock = json.load(handle)
    return SconsRun(run.returncode, run.stdout + run.stderr, seconds, cpu, after.ru_maxrss, scons_kb, launched, ended, clock)


def _tail(run: SconsRun, lines: int = 30) -> str:
    return "\n".join(run.output.rstrip().splitlines()[-lines:])


# ----- the project copy -----

def make_project(project: str, yaml_dir: str) -> None:
    """A fresh copy of the project with the yaml copy; refuses to replace a directory this
    benchmark did not make."""
    if os.path.isdir(project) and os.listdir(project) and not os.path.exists(os.path.join(project, MARKER)):
        raise RuntimeError(f"{project} exists and is not a copy this benchmark made (no {MARKER}): not replacing it")
    shutil.rmtree(project, ignore_errors=True)
    copy_project(project)
    Path(project, MARKER).write_text(f"a project copy of tests/bench/bench_pytorch_build.py, yaml from {yaml_dir}\n")
    os.makedirs(os.path.join(project, YAML_DIR))
    for name in YAML_FILES:
        source = os.path.join(yaml_dir, name)
        if os.path.isfile(source):
            shutil.copy(source, os.path.join(project, YAML_DIR, name))
    if not os.path.isfile(os.path.join(project, YAML_DIR, "native_functions.yaml")):
        raise RuntimeError(f"no native_functions.yaml in {yaml_dir}")


def yaml_schemas(project: str) -> tuple[int, int]:
    """(functions, operator groups) of the project's yaml copy, by opgen's model."""
    from opgen.model import load_model
    yaml = os.path.join(project, YAML_DIR)
    tags = os.path.join(yaml, "tags.yaml")
    model = load_model(os.path.join(yaml, "native_functions.yaml"), tags if os.path.isfile(tags) else None)
    return len(model.functions), len(model.operator_groups)


# ----- 1. cold build -----

def cold_build(project: str, report: Report) -> bool:
    shutil.rmtree(os.path.join(project, CACHE), ignore_errors=True)  # codegen renders everything
    run = run_scons(project, maxrss=True)
    if run.returncode:
        report.fail("cold build", f"scons exited {run.returncode}")
        report.notes.append("cold build output (tail):\n" + _tail(run))
        return False
    steps = run.steps
    stubbed = STUBBED.search(run.output)
    report.row("cold build: wall s (-j2 --ccache=off)", f"{run.seconds:.0f}")
    report.row("cold build: CPU s (user+sys, SCons and compilers)", f"{run.cpu:.0f}")
    report.row("cold build: peak RSS of the largest process, MB", f"{run.maxrss_kb / 1024:,.0f}")
    report.row("cold build: peak RSS of SCons itself, MB",
               f"{run.scons_maxrss_kb / 1024:,.0f}" if run.scons_maxrss_kb else "n/a")
    report.row("cold build: compiles (CXX/CC/NVCC steps)", f"{len(run.compiled):,}")
    report.row("cold build: SCons steps (printed / counted)",
               f"{len(steps):,} / {max(m for _, m, _, _ in steps):,}" if steps else "0")
    report.row("cold build: libopdispatch.so, MB", f"{os.path.getsize(os.path.join(project, LIBRARY)) / 1e6:,.1f}")
    report.row("cold build: kernels stubbed", f"{int(stubbed.group(1)):,}" if stubbed else "no stub line")
    report.notes += ["cold build: " + line for line in NOTICES.findall(run.output)]
    report.notes += ["cold build: " + line for line in run.regenerated()]
    return True


# ----- 2. start-up -----

CDLL_PROGRAM = """\
import ctypes, sys, time
start = time.perf_counter()
ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
print(time.perf_counter() - start)
"""
IMPORT_PROGRAM = """\
import time
start = time.perf_counter()
import opdispatch
print(time.perf_counter() - start)
"""
REGISTERED_PROGRAM = """\
import json, opdispatch
d = opdispatch.dispatcher
names = d.op_names()
try:
    add = list(d.dump_table("aten::add.Tensor"))
except Exception as error:  # an operator the yaml lacks
    add = [f"unavailable: {error}"]
print(json.dumps({"names": len(names), "aten": sum(n.startswith("aten::") for n in names),
                  "errors": d.static_registration_errors(), "add": add}))
"""


def _python(project: str, program: str, *args: str) -> str:
    env = scons_env(drop=(), env={"PYTHONPATH": os.path.join(project, "build", "python"), **UNSET})
    run = subprocess.run([sys.executable, "-c", program, *args], cwd=os.path.dirname(project), env=env,
                         capture_output=True, text=True, timeout=600)
    if run.returncode:
        raise RuntimeError(f"exit {run.returncode}: {(run.stderr or run.stdout).strip()[-1500:]}")
    return run.stdout.strip().splitlines()[-1]


def startup(project: str, runs: int, report: Report) -> None:
    library = os.path.join(project, LIBRARY)
    for label, program, args, goal in (("CDLL(libopdispatch.so, RTLD_GLOBAL)", CDLL_PROGRAM, (library,), STARTUP_GOAL_S),
                                       ("import opdispatch", IMPORT_PROGRAM, (), IMPORT_GOAL_S)):
        measure = f"start-up: {label}, s (median of {runs} processes)"
        try:
            seconds = statistics.median(float(_python(project, program, *args)) for _ in range(runs))
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
            report.fail(measure, error)
            continue
        report.row(measure, f"{seconds:.3f}", "", f"<= {goal} s" if goal else "", seconds <= goal if goal else None)
    try:
        registered = json.loads(_python(project, REGISTERED_PROGRAM))
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
        report.fail("start-up: operators registered", error)
        return
    schemas, _ = yaml_schemas(project)
    report.row("start-up: aten:: operators registered (op_names)", f"{registered['aten']:,}", "",
               f"= {schemas:,} (the yaml's schemas)", registered["aten"] == schemas)
    if registered["names"] != registered["aten"]:
        report.row("start-up: operators registered, every namespace", f"{registered['names']:,}")
    errors = registered["errors"]
    report.row("start-up: static registrations that failed", str(len(errors)), "", "0", not errors)
    report.notes.append("dump_table(\"aten::add.Tensor\") keys: " + ", ".join(registered["add"]))
    report.notes += [f"static registration error: {e}" for e in errors[:10]]


# ----- 3. one-operator edits -----

def _targets(project: str) -> list[EditTarget]:
    text = Path(project, YAML_DIR, "native_functions.yaml").read_text(encoding="utf-8")
    targets = [target for target in EDIT_TARGETS if len(re.findall(target.yaml, text)) == target.overloads]
    if not targets:
        raise RuntimeError(f"none of the edit targets ({', '.join(t.what for t in EDIT_TARGETS)}) is in the yaml")
    return targets


def _set_number(text: str, pattern: str, value: int, matches: int = 1) -> str:
    edited, count = re.subn(pattern, lambda m: f"{m.group(1)}{value}{m.group(3)}", text)
    assert count == matches, (pattern, count)
    return edited


def fresh_value(project: str, target: EditTarget) -> int:
    """A number no run used (the nanosecond clock), different from the current default."""
    current = re.search(target.yaml, Path(project, YAML_DIR, "native_functions.yaml").read_text(encoding="utf-8"))
    value = 2 + time.time_ns() % 999_999_937
    return value + 1 if current and int(current.group(2)) == value else value


def edited_texts(project: str, target: EditTarget, value: int) -> dict[str, str]:
    """{file under the yaml copy: its edited text}."""
    names = [("native_functions.yaml", target.yaml, target.overloads)] + (
        [("derivatives.yaml", target.derivatives, 1)] if target.derivatives else [])
    result = {}
    for name, pattern, matches in names:
        path = Path(project, YAML_DIR, name)
        if path.is_file():
            result[name] = _set_number(path.read_text(encoding="utf-8"), pattern, value, matches)
    return result


def _stat_tree(root: str) -> dict[str, tuple[int, int]]:
    """relative path -> (mtime_ns, size) of every file but opgen's state (a cheap snapshot: opgen
    writes a generated file only when its bytes change)."""
    result = {}
    for directory, _, files in os.walk(root):
        for name in files:
            if name.startswith(".opgen-"):
                continue
            path = os.path.join(directory, name)
            stat = os.stat(path)
            result[os.path.relpath(path, root)] = (stat.st_mtime_ns, stat.st_size)
    return result


def _group_sources(project: str, group: str) -> set[str]:
    """The group's generated files, project-relative (build/gen/.opgen-state.json)."""
    with open(os.path.join(project, GEN, ".opgen-state.json"), encoding="utf-8") as handle:
        groups = json.load(handle).get("groups", {})
    return {os.path.join(GEN, path) for path in groups.get(group, {}).get("files", [])}


def _source_of(obj: str) -> str:
    """build/obj/gen/ops/cov_unit.os -> build/gen/ops/cov_unit (no extension)."""
    stem = os.path.splitext(obj)[0]
    prefix = os.path.join("build", "obj") + os.sep
    return os.path.join("build", stem[len(prefix):]) if stem.startswith(prefix) else stem


# The parts of an edit's rebuild, in the order they happen (edit_parts).
PARTS = (
    ("start", "start-up: process start to reading the SConscripts (Python, SCons, site_scons)"),
    ("sconscripts", "reading the SConscripts"),
    ("codegen", "codegen (GEN)"),
    ("compile", "the unit's compile (CXX/NVCC)"),
    ("archive", "archiving (AR)"),
    ("kernels", "the kernel check (STUB/CHECK)"),
    ("library", "link of libopdispatch.so"),
    ("links", "the other links (Python extensions)"),
    ("commands", "other commands"),
    ("scons", "SCons' own work (walk, signatures, between commands)"),
    ("sconsign", ".sconsign write"),
    ("exit", "exit: opgen's report and state, interpreter teardown"),
)
OPS_DIR = os.path.join(GEN, "ops") + os.sep


def _part_of(target: str, kind: Optional[str]) -> str:
    """The part a "Command execution time" line's target belongs to: by the kind of the step line
    that named it (``kind``), else by its path (a codegen step's line names the group, and any
    target of a multi-target step may be the one SCons times)."""
    name = os.path.basename(target)
    if kind == "GEN" or target.startswith(OPS_DIR):
        return "codegen"
    if kind in ("STUB", "CHECK") or name in ("missing_kernels.cpp", "missing_kernels.ok"):
        return "kernels"
    if kind in COMPILE_KINDS or name.endswith((".os", ".o")):
        return "compile"
    if kind in ("AR", "RANLIB") or name.endswith(".a"):
        return "archive"
    if target == LIBRARY:
        return "library"
    if kind == "LINK" or name.endswith(".so"):
        return "links"
    return "commands"


def edit_parts(run: SconsRun) -> tuple[dict[str, float], list[str]]:
    """Where a timed run's wall time went ({part: seconds}, PARTS' keys) and notes on it.

    SCons' --debug=time gives the SConscripts' reading, each command's seconds, its own
    execution time (which holds the .sconsign write and what it did before the SConscripts, both
    taken out as parts of their own) and its total from its clock's start; SCONS_WRAPPER gives
    when that clock started, when the first SConscript began and when the exit handlers ended:
    start-up and exit are the wall less SCons' "Total build time", split there. With -j2 SCons'
    command time is the span from the first command's start to the last's end: what of the span
    no command took is SCons' own work between them (counted with it); commands that overlapped
    make the parts add up to more than the wall (a note says by how much)."""
    totals = {name: float(m.group(1)) for name, pattern in TOTALS.items() if (m := pattern.search(run.output))}
    if set(totals) != set(TOTALS) or not run.clock or not run.clock.get("sconscripts_start"):
        return {}, ["no --debug=time totals or clocks in the output: no parts"]
    kinds = {}
    for kind, target in ANY_STEP.findall(run.output):
        kinds.setdefault(target, kind)
    parts = dict.fromkeys(key for key, _ in PARTS)
    parts.update({key: 0.0 for key in parts})
    commands = {}
    for target, seconds in COMMAND_TIME.findall(run.output):
        part = _part_of(target, kinds.get(target))
        parts[part] += float(seconds)
        commands.setdefault(part, []).append(f"{target} {float(seconds):.2f}")
    timed = sum(parts.values())
    wall = run.ended - run.launched
    before_sconscripts = run.clock["sconscripts_start"] - run.clock["scons_start"]  # in SCons' execution time
    parts["start"] = run.clock["sconscripts_start"] - run.launched
    parts["sconscripts"] = totals["sconscripts"]
    parts["sconsign"] = totals["sconsign"]
    parts["scons"] = (totals["scons"] - totals["sconsign"] - before_sconscripts
                      + max(0.0, totals["commands"] - timed))
    parts["exit"] = run.ended - (run.clock["scons_start"] + totals["build"])
    notes = [f"{'other' if key == 'commands' else key}: {', '.join(lines[:6])}" + (", ..." if len(lines) > 6 else "")
             for key, lines in commands.items()]
    overlap = timed - totals["commands"]
    if overlap > 0.005:
        notes.append(f"commands overlapped (-j2) by {overlap:.2f} s: the parts add up to {sum(parts.values()):.2f} s "
                     f"of {wall:.2f} s")
    return parts, notes


def _linker(library: str) -> str:
    """Which linker linked ``library``, from its .comment section: LLD, mold, GNU gold, else bfd."""
    try:
        comment = subprocess.run(["readelf", "-p", ".comment", library], capture_output=True, text=True).stdout
    except OSError:
        return "unknown (no readelf)"
    for pattern in (r"Linker: (.*LLD [\d.]+)", r"(mold [\d.]+)", r"(GNU gold[^\n]*)"):
        match = re.search(pattern, comment)
        if match:
            return match.group(1).strip()
    return "bfd (no LLD, mold or gold in .comment)"


def _loads(project: str, runs: int) -> list[float]:
    return [float(_python(project, IMPORT_PROGRAM)) for _ in range(runs)]


def one_operator_edit(project: str, target: EditTarget, report: Report) -> tuple[str, str]:
    """Sets ``target``'s default to a fresh number, rebuilds (timed), reports; returns the
    operator yaml before and after the edit."""
    name = f"{target.group} edit"
    value = fresh_value(project, target)
    original = Path(project, YAML_DIR, "native_functions.yaml").read_text(encoding="utf-8")
    gen_before = _stat_tree(os.path.join(project, GEN))
    library = os.path.join(project, LIBRARY)
    library_mtime = os.stat(library).st_mtime_ns if os.path.exists(library) else None
    edited = edited_texts(project, target, value)
    for file, text in edited.items():
        rewrite_in_a_later_second(Path(project, YAML_DIR, file), text)
    run = run_scons(project, timed=True)
    report.notes.append(f"{name}: {target.what} = {value} (in {' and '.join(edited)} of the copy)")
    if run.returncode:
        report.fail(f"{name}: rebuild", f"scons exited {run.returncode}")
        report.notes.append(f"{name}: rebuild output (tail):\n" + _tail(run))
        return original, edited["native_functions.yaml"]
    gen_after = _stat_tree(os.path.join(project, GEN))
    rewritten = sorted(p for p, state in gen_after.items() if gen_before.get(p) != state)
    removed = sorted(set(gen_before) - set(gen_after))
    compiled = run.compiled
    own = {os.path.splitext(p)[0] for p in _group_sources(project, target.group)}
    outside = [obj for obj in compiled if _source_of(obj) not in own]
    relinked = run.linked or (library_mtime is not None and os.stat(library).st_mtime_ns != library_mtime)
    regenerated = run.regenerated()
    groups = REGENERATED.search(run.output)
    report.row(f"{name}: groups regenerated", f"{groups.group(1)}/{groups.group(2)}" if groups else "no line",
               "all (no incremental mode)", f"1 ({target.group})",
               bool(groups) and groups.group(1) == "1")
    report.row(f"{name}: generated files rewritten (build/gen)",
               f"{len(rewritten)}" + (f" (-{len(removed)})" if removed else ""))
    report.row(f"{name}: objects recompiled", str(len(compiled)), CITED_RECOMPILES,
               f"{target.group}'s own only", bool(compiled) and not outside)
    report.row(f"{name}: library relinked", "yes" if relinked else "no")
    report.row(f"{name}: rebuild wall s", f"{run.seconds:.2f}", "", f"<= {EDIT_GOAL_S:g} s", run.seconds <= EDIT_GOAL_S)
    parts, part_notes = edit_parts(run)
    for key, label in PARTS:
        if key in parts and (parts[key] >= 0.005 or key != "commands"):
            report.row(f"{name}: {label}, s", f"{parts[key]:.2f}")
    measure = f"{name}: load: import opdispatch in a fresh process, s (median of {LOAD_RUNS})"
    try:
        loads = _loads(project, LOAD_RUNS)
        load = statistics.median(loads)
        report.row(measure, f"{load:.3f}", "", f"<= {IMPORT_GOAL_S} s", load <= IMPORT_GOAL_S)
        report.notes.append(f"{name}: load: " + ", ".join(f"{s:.3f}" for s in loads) + " s (in order)")
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
        report.fail(measure, error)
    report.notes += [f"{name}: " + line for line in regenerated]
    report.notes.append(f"{name}: recompiled " + (", ".join(compiled) or "nothing")
                        + (f"; outside {target.group}'s files: {', '.join(outside)}" if outside else ""))
    report.notes.append(f"{name}: rewrote (build/gen) " + (", ".join(rewritten[:20]) or "nothing")
                        + (", ..." if len(rewritten) > 20 else ""))
    report.notes += [f"{name}: timed commands (s), {line}" for line in part_notes]
    return original, edited["native_functions.yaml"]


def walked_edit(project: str, target: EditTarget, report: Report) -> None:
    """The same edit again (another never-seen value) with every group walked, as before frozen
    groups (OPGEN_FROZEN_GROUPS=off): the figure they are measured against."""
    name = f"{target.group} edit"
    for file, text in edited_texts(project, target, fresh_value(project, target)).items():
        rewrite_in_a_later_second(Path(project, YAML_DIR, file), text)
    run = run_scons(project, timed=True, env={"OPGEN_FROZEN_GROUPS": "off"})
    if run.returncode:
        report.fail(f"{name}: rebuild, every group walked", f"scons exited {run.returncode}")
        report.notes.append(f"{name}: rebuild output, every group walked (tail):\n" + _tail(run))
        return
    parts, _ = edit_parts(run)
    report.row(f"{name}: rebuild wall s, every group walked (OPGEN_FROZEN_GROUPS=off; {len(run.compiled)} compiled)",
               f"{run.seconds:.2f}")
    for key in ("sconscripts", "scons"):
        if key in parts:
            report.row(f"{name}: {dict(PARTS)[key]}, every group walked, s", f"{parts[key]:.2f}")


def edits(project: str, report: Report) -> tuple[str, str]:
    """Every edit target in turn (none after one whose rebuild failed); the library's linker;
    returns the first edit's operator yaml before and after (the peer's edit)."""
    first = None
    # The timed command once before the edits, as a user's checkout after `scons`: the edits
    # find its record (opgen/scons/noop.py) and freeze the groups they leave as they are.
    recorded = run_scons(project, timed=True)
    if recorded.returncode:
        report.fail("the build before the edits", f"scons exited {recorded.returncode}")
        report.notes.append("the build before the edits (tail):\n" + _tail(recorded))
        return first
    for target in _targets(project):
        failed = len(report.failures)
        texts = one_operator_edit(project, target, report)
        first = first or texts
        if len(report.failures) != failed:
            return first
        walked_edit(project, target, report)
        if len(report.failures) != failed:
            return first
    report.row("libopdispatch.so's linker (readelf -p .comment)", _linker(os.path.join(project, LIBRARY)))
    report.notes.append(CITED_NOTE)
    return first


# ----- 4. no-op -----

def noop(project: str, report: Report) -> None:
    """The first plain scons after the edits reads the SConscripts (the edits ran with --debug=time,
    another invocation) and writes the no-op manifest (opgen/scons/noop.py); the NOOP_RUNS after
    it are what a user's no-op after a plain build is. Both are reported, with SCons' own no-op
    (OPGEN_NOOP_SHORTCUT=off) beside them."""
    def timed(env=None):
        run = run_scons(project, env=env)
        if run.returncode:
            report.fail("no-op", f"scons exited {run.returncode}")
            report.notes.append("no-op output (tail):\n" + _tail(run))
            return None
        if run.steps:
            report.notes.append(f"no-op: ran {len(run.steps)} step(s): " + ", ".join(t for _, _, _, t in run.steps[:10]))
        return run
    first = timed()
    if first is None:
        return
    runs = [timed() for _ in range(NOOP_RUNS)]
    full = [timed({"OPGEN_NOOP_SHORTCUT": "off"}) for _ in range(NOOP_RUNS)]
    if any(run is None for run in runs + full):
        return
    median = statistics.median(run.seconds for run in runs)
    shortcut = sum(SHORTCUT_LINE in run.output for run in runs)
    report.row("no-op: the first after the edit, wall s (reads the SConscripts, writes the manifest)", f"{first.seconds:.2f}")
    report.row(f"no-op: wall s (median of {NOOP_RUNS}; {shortcut} took the shortcut)", f"{median:.2f}", "",
               f"<= {NOOP_GOAL_S} s", median <= NOOP_GOAL_S)
    report.row(f"no-op: SCons reading and walking, OPGEN_NOOP_SHORTCUT=off, wall s (median of {NOOP_RUNS})",
               f"{statistics.median(run.seconds for run in full):.2f}")


# ----- 5. the peer on the same edit -----

def peer_edit(work: str, project: str, original: str, edited: str, torchgen: Optional[str], report: Report) -> None:
    """`opgen generate` and torchgen regenerate a tree made from ``original`` (the operator yaml
    before the first edit) for ``edited`` (after it; bench_edits' Peer machinery): files and kB
    rewritten, seconds. opgen's cache here is its own, empty: the edit is content it has not seen."""
    peer_work = os.path.join(work, "peer")
    shutil.rmtree(peer_work, ignore_errors=True)
    os.makedirs(peer_work)
    tags = os.path.join(project, YAML_DIR, "tags.yaml")
    peers = [bench_edits._opgen(peer_work)] + ([bench_edits._torchgen(torchgen, peer_work)] if torchgen else [])
    for peer in peers:  # as the builds: Python writes bytecode
        peer.env.pop("PYTHONDONTWRITEBYTECODE", None)
    base_src = bench_edits._source_tree(os.path.join(peer_work, "src-base"), original, tags)
    edit_src = bench_edits._source_tree(os.path.join(peer_work, "src-edit"), edited, tags)
    figures = {}
    for peer in peers:
        out = os.path.join(peer_work, "out-" + peer.name)
        try:
            bench_edits._run(peer, base_src, out)
            before = bench_edits.snapshot(out)
            seconds, _ = bench_edits._run(peer, edit_src, out)
        except RuntimeError as error:  # the generator rejects the yaml (torchgen rejects ours): say so, as bench_edits does
            reason = str(error).strip().splitlines()[-1]
            figures[peer.name] = "rejected"
            report.notes.append(f"peer: {peer.name} rejected the yaml: {reason}")
            if peer.name == "opgen":
                report.failures.append(f"opgen generate on the edit: {error}")
            continue
        after = bench_edits.snapshot(out)
        changed = [p for p in bench_edits.written(before, after) if not p.startswith("aoti") and not bench_edits._is_state(p)]
        figures[peer.name] = (len(changed), sum(len(after[p][0]) for p in changed) / 1e3, seconds)
        report.notes.append(f"peer: {peer.name} rewrote " + (", ".join(changed[:12]) or "nothing")
                            + (f", ... ({len(changed)})" if len(changed) > 12 else ""))
        shutil.rmtree(out)
    ours, theirs = figures.get("opgen"), figures.get("torchgen", "unavailable" if torchgen is None else "")
    for index, (label, fmt) in enumerate((("files rewritten", "{:,}"), ("kB rewritten", "{:,.0f}"), ("wall s", "{:.1f}"))):
        cells = [fmt.format(f[index]) if isinstance(f, tuple) else (f if index == 0 else "-") for f in (ours, theirs)]
        report.row(f"generator on the edit (opgen generate | torchgen): {label}", *cells)
    shutil.rmtree(peer_work, ignore_errors=True)


# ----- report -----

def _load_average() -> str:
    return ", ".join(f"{load:.2f}" for load in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="scratch directory, kept (default: a temp dir, removed after)")
    parser.add_argument("--project", default=None,
                        help="the project copy (default: <work>/project); with --skip-cold, one an earlier run built")
    parser.add_argument("--skip-cold", action="store_true",
                        help="no copy and no cold build: reuse the built project (--project, or <work>/project)")
    parser.add_argument("--no-torchgen", action="store_true", help="the peer rows without torchgen")
    parser.add_argument("--startup-runs", type=int, default=5, help="fresh processes per start-up figure (default 5)")
    parser.add_argument("--yaml-dir", default=None, help=argparse.SUPPRESS)  # debugging: e.g. `yaml` (ours, 90 groups)
    args = parser.parse_args(argv)
    if args.skip_cold and not (args.project or args.work):
        parser.error("--skip-cold needs --project DIR or --work DIR (the tree an earlier run built)")
    yaml_dir = os.path.abspath(args.yaml_dir) if args.yaml_dir else None
    if yaml_dir is None and not args.skip_cold:
        yaml_dir = os.path.dirname(pytorch_yaml()[0])  # exits with status 2 when PyTorch's yaml is absent
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="bench-pytorch-build-"))
    os.makedirs(work, exist_ok=True)
    project = os.path.abspath(args.project or os.path.join(work, "project"))
    report = Report()
    report.notes.append("load average (1, 5, 15 min) at the start: " + _load_average())
    try:
        if args.skip_cold:
            if not os.path.isfile(os.path.join(project, LIBRARY)):
                print(f"bench_pytorch_build: --skip-cold: {project} has no {LIBRARY}", file=sys.stderr)
                return 1
            built = True
            report.notes.append(f"cold build skipped: reusing {project}")
        else:
            make_project(project, yaml_dir)
            print(f"cold build of {yaml_dir} in {project} (on 2 cores, PyTorch's yaml takes 20+ minutes) ...",
                  file=sys.stderr, flush=True)
            built = cold_build(project, report)
        if built:
            functions, groups = yaml_schemas(project)
            report.notes.insert(0, f"yaml: {functions:,} schemas in {groups:,} operator groups ({project}/{YAML_DIR})")
            startup(project, args.startup_runs, report)
            failed = len(report.failures)
            original, edited = edits(project, report)
            if len(report.failures) == failed:  # a no-op after a failed rebuild would only fail again
                noop(project, report)
            torchgen = None if args.no_torchgen else ensure_torchgen()
            if torchgen is None:
                report.notes.append("peer: torchgen unavailable" + (" (--no-torchgen)" if args.no_torchgen else "")
                                    + "; its column shows the cited figure only")
            peer_edit(work, project, original, edited, torchgen, report)
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        report.failures.append(str(error))
    finally:
        report.notes.append("load average (1, 5, 15 min) at the end: " + _load_average())
        print("\nopgen's library from one operator yaml: cold build, start-up, one-operator edits and their parts, "
              "no-op; the peer on the first edit\n")
        print(render_table(["measure", "opgen", "peer", "goal", "met"], report.rows, "<>><<"))
        if report.notes:
            print("\n" + "\n".join(report.notes))
        for failure in report.failures:
            print(f"bench_pytorch_build: {failure}", file=sys.stderr)
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
