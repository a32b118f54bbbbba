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
kernel the yaml names is a generated stub).

1. Cold build (skipped by --skip-cold): wall and CPU seconds (user+sys of SCons and every
   compiler, getrusage(RUSAGE_CHILDREN) before and after), the peak resident memory of the
   largest process it ran (ru_maxrss of RUSAGE_CHILDREN) and of the SCons process itself (its
   own RUSAGE_SELF, written at exit), the compiles and steps (the `[ n/m] KIND target` lines),
   build/lib/libopdispatch.so's size and the stubbed kernels (`[opgen] missing kernels: N stubbed`).
2. Start-up, in fresh Python processes with PYTHONPATH=<project>/build/python, median of
   --startup-runs (default 5) each: ctypes.CDLL(libopdispatch.so, RTLD_GLOBAL) alone (the
   library's static registrations; goal <= 0.2 s) and `import opdispatch`. One more process
   counts the operators registered (opdispatch.dispatcher.op_names(); goal: every schema of the
   yaml, 3,101 for PyTorch's), the static registrations that failed, and prints
   dump_table("aten::add.Tensor")'s keys.
3. A one-operator edit with never-seen content: one default value of one operator (PyTorch's:
   cov's `int correction`, an operator with a method variant and no derivatives.yaml entry) set
   to a number derived from time.time_ns(), then the rebuild: groups regenerated, generated
   files rewritten, objects recompiled (listed under the table), whether the library relinked,
   wall seconds (goal: only that group's objects, <= 10 s).
4. No-op: the same scons again, median of 3 (goal <= 1.5 s).
5. The peer on the same edit: `opgen generate` and torchgen (torch==2.13.0 in build/bench-venv,
   --per-operator-headers; skipped with a note when unavailable) each regenerate a tree made from
   the unedited yaml (bench_edits' Peer machinery): files and kB rewritten, seconds. The cited
   anchor, not measured: PyTorch PR 61915 (per-operator headers) reports ~1,100 files recompiled
   for a change to native_functions.yaml.

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
EDIT_GOAL_S = 10.0
NOOP_GOAL_S = 1.5
NOOP_RUNS = 3
# Cited, not measured: PyTorch PR 61915 (per-operator headers), files recompiled for a change to
# native_functions.yaml.
CITED_RECOMPILES = "~1,100 (cited)"
CITED_NOTE = ("peer, cited and not measured: PyTorch PR 61915 (per-operator headers) reports ~1,100 files recompiled "
              "for a change to native_functions.yaml")

STEP = re.compile(r"^\[\s*(\d+)/(\d+)\] (\S+) (\S+)\s*$", re.M)
COMPILE_KINDS = ("CXX", "CC", "NVCC")
STUBBED = re.compile(r"\[opgen\] missing kernels: (\d+) stubbed")
REGENERATED = re.compile(r"^\[opgen\] (?:regenerated|materialized from the cache) (\d+)/(\d+) ([a-zA-Z ]+?)(?::.*)?$",
                         re.M)
# What the SConscripts found: the yaml's size, CUDA, kernels, autograd, BLAS.
NOTICES = re.compile(r"^\[opgen\] (?:\d+ functions in .*|CUDA: .*|kernels: .*|autograd: .*|BLAS: .*)$", re.M)

# SCons in-process, writing its own peak RSS (KiB) to $OPGEN_BENCH_MAXRSS at exit (after the
# codegen's own atexit report). /usr/bin/time -f %M would not do: wait4's figure includes the
# reaped compilers.
SCONS_WITH_MAXRSS = """\
import atexit, os, resource, runpy, sys
_out = os.environ.pop("OPGEN_BENCH_MAXRSS")
def _write():
    with open(_out, "w") as handle:
        handle.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
atexit.register(_write)
runpy.run_module("SCons", run_name="__main__", alter_sys=True)
"""


@dataclass(frozen=True)
class EditTarget:
    """A default value to set to a fresh number: ``pattern`` (one match, groups: before, the
    number, after) in the operator yaml and, where the derivatives entry repeats the schema, in
    derivatives.yaml."""
    group: str
    what: str
    yaml: str
    derivatives: Optional[str] = None


# The first target whose yaml pattern matches the yaml copy is edited.
EDIT_TARGETS = (
    # PyTorch: a single-entry CompositeImplicitAutograd group with a method, no derivatives entry
    EditTarget("cov", "cov's default correction",
               r"(?m)^(- func: cov\(Tensor self, \*, int correction=)(-?\d+)(,)"),
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


def run_scons(project: str, *, maxrss: bool = False, extra: tuple[str, ...] = ()) -> SconsRun:
    """SCons without -Q (its notices, "[opgen] N functions ...", are wanted), no --verbose (one
    counted step line each); the private codegen cache; ``extra``: options after BUILD_OPTIONS."""
    env = scons_env(env={"OPGEN_CACHE_DIR": os.path.join(project, CACHE)})
    maxrss_file = os.path.join(project, "bench-scons-maxrss.txt")
    if maxrss:
        env["OPGEN_BENCH_MAXRSS"] = maxrss_file
        if os.path.exists(maxrss_file):
            os.unlink(maxrss_file)
    argv = [sys.executable] + (["-c", SCONS_WITH_MAXRSS] if maxrss else ["-m", "SCons"]) + list(BUILD_OPTIONS) + list(extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    scons_kb = None
    if maxrss and os.path.exists(maxrss_file):
        with open(maxrss_file, encoding="utf-8") as handle:
            scons_kb = int(handle.read().strip() or 0) or None
    return SconsRun(run.returncode, run.stdout + run.stderr, seconds, cpu, after.ru_maxrss, scons_kb)


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
    env = dict(os.environ, PYTHONPATH=os.path.join(project, "build", "python"))
    run = subprocess.run([sys.executable, "-c", program, *args], cwd=os.path.dirname(project), env=env,
                         capture_output=True, text=True, timeout=600)
    if run.returncode:
        raise RuntimeError(f"exit {run.returncode}: {(run.stderr or run.stdout).strip()[-1500:]}")
    return run.stdout.strip().splitlines()[-1]


def startup(project: str, runs: int, report: Report) -> None:
    library = os.path.join(project, LIBRARY)
    for label, program, args, goal in (("CDLL(libopdispatch.so, RTLD_GLOBAL)", CDLL_PROGRAM, (library,), STARTUP_GOAL_S),
                                       ("import opdispatch", IMPORT_PROGRAM, (), None)):
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


# ----- 3. one-operator edit -----

def _target(project: str) -> EditTarget:
    text = Path(project, YAML_DIR, "native_functions.yaml").read_text(encoding="utf-8")
    for target in EDIT_TARGETS:
        if len(re.findall(target.yaml, text)) == 1:
            return target
    raise RuntimeError(f"none of the edit targets ({', '.join(t.what for t in EDIT_TARGETS)}) is in the yaml")


def _set_number(text: str, pattern: str, value: int) -> str:
    edited, count = re.subn(pattern, lambda m: f"{m.group(1)}{value}{m.group(3)}", text)
    assert count == 1, (pattern, count)
    return edited


def fresh_value(project: str, target: EditTarget) -> int:
    """A number no run used (the nanosecond clock), different from the current default."""
    current = re.search(target.yaml, Path(project, YAML_DIR, "native_functions.yaml").read_text(encoding="utf-8"))
    value = 2 + time.time_ns() % 999_999_937
    return value + 1 if current and int(current.group(2)) == value else value


def edited_texts(project: str, target: EditTarget, value: int) -> dict[str, str]:
    """{file under the yaml copy: its edited text}."""
    names = [("native_functions.yaml", target.yaml)] + ([("derivatives.yaml", target.derivatives)] if target.derivatives else [])
    result = {}
    for name, pattern in names:
        path = Path(project, YAML_DIR, name)
        if path.is_file():
            result[name] = _set_number(path.read_text(encoding="utf-8"), pattern, value)
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


def one_operator_edit(project: str, report: Report) -> tuple[EditTarget, str]:
    """Edits, rebuilds, reports; returns the target and the operator yaml before the edit."""
    target = _target(project)
    value = fresh_value(project, target)
    original = Path(project, YAML_DIR, "native_functions.yaml").read_text(encoding="utf-8")
    gen_before = _stat_tree(os.path.join(project, GEN))
    library = os.path.join(project, LIBRARY)
    library_mtime = os.stat(library).st_mtime_ns if os.path.exists(library) else None
    edited = edited_texts(project, target, value)
    for name, text in edited.items():
        rewrite_in_a_later_second(Path(project, YAML_DIR, name), text)
    run = run_scons(project)
    report.notes.append(f"one-operator edit: {target.what} = {value} (in {' and '.join(edited)} of the copy)")
    if run.returncode:
        report.fail("one-operator edit: rebuild", f"scons exited {run.returncode}")
        report.notes.append("edit rebuild output (tail):\n" + _tail(run))
        return target, original
    gen_after = _stat_tree(os.path.join(project, GEN))
    rewritten = sorted(p for p, state in gen_after.items() if gen_before.get(p) != state)
    removed = sorted(set(gen_before) - set(gen_after))
    compiled = run.compiled
    own = {os.path.splitext(p)[0] for p in _group_sources(project, target.group)}
    outside = [obj for obj in compiled if _source_of(obj) not in own]
    relinked = run.linked or (library_mtime is not None and os.stat(library).st_mtime_ns != library_mtime)
    regenerated = run.regenerated()
    groups = REGENERATED.search(run.output)
    report.row("one-operator edit: groups regenerated", f"{groups.group(1)}/{groups.group(2)}" if groups else "no line",
               "all (no incremental mode)", f"1 ({target.group})",
               bool(groups) and groups.group(1) == "1")
    report.row("one-operator edit: generated files rewritten (build/gen)",
               f"{len(rewritten)}" + (f" (-{len(removed)})" if removed else ""))
    report.row("one-operator edit: objects recompiled", str(len(compiled)), CITED_RECOMPILES,
               f"{target.group}'s own only", bool(compiled) and not outside)
    report.row("one-operator edit: library relinked", "yes" if relinked else "no")
    report.row("one-operator edit: rebuild wall s", f"{run.seconds:.1f}", "", f"<= {EDIT_GOAL_S:g} s",
               run.seconds <= EDIT_GOAL_S)
    report.notes.append(CITED_NOTE)
    report.notes += ["one-operator edit: " + line for line in regenerated]
    report.notes.append("one-operator edit: recompiled " + (", ".join(compiled) or "nothing")
                        + (f"; outside {target.group}'s files: {', '.join(outside)}" if outside else ""))
    report.notes.append("one-operator edit: rewrote (build/gen) " + (", ".join(rewritten[:20]) or "nothing")
                        + (", ..." if len(rewritten) > 20 else ""))
    return target, original


# ----- 4. no-op -----

def noop(project: str, report: Report) -> None:
    seconds = []
    for _ in range(NOOP_RUNS):
        run = run_scons(project)
        if run.returncode:
            report.fail("no-op", f"scons exited {run.returncode}")
            report.notes.append("no-op output (tail):\n" + _tail(run))
            return
        if run.steps:
            report.notes.append(f"no-op: ran {len(run.steps)} step(s): " + ", ".join(t for _, _, _, t in run.steps[:10]))
        seconds.append(run.seconds)
    median = statistics.median(seconds)
    report.row(f"no-op: wall s (median of {NOOP_RUNS})", f"{median:.2f}", "", f"<= {NOOP_GOAL_S} s", median <= NOOP_GOAL_S)


# ----- 5. the peer on the same edit -----

def peer_edit(work: str, project: str, original: str, torchgen: Optional[str], report: Report) -> None:
    """`opgen generate` and torchgen regenerate a tree made from ``original`` (the yaml before the
    edit) for the project's edited yaml (bench_edits' Peer machinery): files and kB rewritten,
    seconds. opgen's cache here is its own, empty: the edit is content it has not seen."""
    peer_work = os.path.join(work, "peer")
    shutil.rmtree(peer_work, ignore_errors=True)
    os.makedirs(peer_work)
    yaml_copy = os.path.join(project, YAML_DIR, "native_functions.yaml")
    tags = os.path.join(project, YAML_DIR, "tags.yaml")
    edited = Path(yaml_copy).read_text(encoding="utf-8")
    peers = [bench_edits._opgen(peer_work)] + ([bench_edits._torchgen(torchgen, peer_work)] if torchgen else [])
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
            _, original = one_operator_edit(project, report)
            if len(report.failures) == failed:  # a no-op after a failed rebuild would only fail again
                noop(project, report)
            torchgen = None if args.no_torchgen else ensure_torchgen()
            if torchgen is None:
                report.notes.append("peer: torchgen unavailable" + (" (--no-torchgen)" if args.no_torchgen else "")
                                    + "; its column shows the cited figure only")
            peer_edit(work, project, original, torchgen, report)
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        report.failures.append(str(error))
    finally:
        print("\nopgen's library from one operator yaml: cold build, start-up, a one-operator edit, no-op; "
              "the peer on the same edit\n")
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
