"""Benchmark: autograd, opgen vs PyTorch 2.13 in one run: codegen on PyTorch's yaml, then the runtime.

    python tests/bench/bench_autograd.py [--quick] [--runs N] [--edit-runs N] [--only codegen,runtime] [--no-build]

A report, not a test: it prints one table per part, each row `measure, opgen, torch(gen), ratio,
goal, met`, and exits 0 (2 when PyTorch's yaml is absent, 1 when a generator fails).

1. Codegen, on ../shared/data/pytorch-2.13/{native_functions,tags,derivatives}.yaml. Every run is a
   whole process (interpreter start-up included); wall and CPU (user+sys) seconds, the median of
   --runs runs, interleaved (each run measures every scenario once, so a busy neighbour on the
   machine slows them alike).
   torchgen: what gen_autograd does for VariableType, ADInplaceOrViewType and Functions (its
     gen_variable_type, gen_inplace_or_view_type, gen_autograd_functions_lib on the same parsed
     inputs), from the wheel's torchgen/packaged/autograd, in the peer virtualenv (peer_env.py); its
     whole gen_autograd (also TraceType, ViewFuncs, variable_factories) is a row of its own.
   opgen: the autograd layer's share is `opgen generate --derivatives` minus `opgen generate`
     (both with an empty output directory and an empty cache); the whole
     `opgen generate --derivatives --no-cache` is shown beside it.
   One-formula edit: sin's `self:` formula gets ` * <a random number>` (content no cache has
     seen). opgen: a tree generated from the unedited yaml with a fresh cache under build/ (untimed),
     a no-op run on it, then the edited run; the autograd layer's share of the edit is the edited
     run minus that no-op run (start-up, the model and the codegen plan cost both alike), the median
     of --edit-runs such pairs. torchgen has no incremental mode: its full run on its previous
     output (it writes only files whose content changed). Files and bytes count what each rewrote.
   Sizes: opgen's ops/*_Autograd.cpp and ops/*_ADInplaceOrView.cpp against torchgen's compiled
     VariableType_*.cpp, VariableType.h, ADInplaceOrViewType_*.cpp, Functions.{h,cpp}.
2. Runtime (skipped, with a line saying why, until `od.tensor([1.0], requires_grad=True)` records a
   grad_fn): build/python through SCons, then each measure in a fresh process per side (opdispatch
   here; torch 2.13 in the peer virtualenv), float32, one thread (OMP/OpenBLAS/MKL 1,
   torch.set_num_threads(1)): ns per `a * b` / `a + b` on numel-1 tensors that require grad; an MLP
   training step 64x256 -> 512 -> 10 (relu, mean squared error, or log_softmax + nll_loss when
   opdispatch has both; backward; SGD under no_grad with p.sub_(p.grad * lr), p.grad = None);
   forward and backward of a 10,000-op chain y = y * 1.0001 and the peak RSS it adds (VmHWM after
   /proc/self/clear_refs, in a process of its own).
"""
from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (helpers)
from helpers import snapshot, written  # noqa: E402
from peer_env import PYTORCH_DATA, REPO, ensure_torchgen, pytorch_yaml  # noqa: E402
from runs import OPDISPATCH_PATH, build_extension, quiet_env, run_json  # noqa: E402
from table import render_table  # noqa: E402

WORK = os.path.join(REPO, "build", "bench-autograd")
EDIT_ENTRY = "- name: sin(Tensor self) -> Tensor\n"  # its next line is the `self:` formula
HEADER = ("measure", "opgen", "torch", "ratio", "goal", "met")
CODEGEN_GOALS = {"cold": 0.5, "edit": 0.05, "edit_kb": 100}
RUNTIME_GOALS = {"op": 1.0, "mlp": 2.0}

# Runs in the peer virtualenv: argv = mode (autograd|full), native yaml, tags yaml, autograd dir
# (derivatives.yaml and templates), output dir.
TORCHGEN = r'''
import os, sys
from torchgen.api import cpp
from torchgen.api.autograd import match_differentiability_info
from torchgen.gen import parse_native_yaml
from torchgen.selective_build.selector import SelectiveBuilder
from torchgen.packaged.autograd.gen_autograd import gen_autograd
from torchgen.packaged.autograd.gen_autograd_functions import gen_autograd_functions_lib
from torchgen.packaged.autograd.gen_inplace_or_view_type import gen_inplace_or_view_type
from torchgen.packaged.autograd.gen_variable_type import gen_variable_type
from torchgen.packaged.autograd.load_derivatives import load_derivatives

mode, native, tags, autograd_dir, out = sys.argv[1:6]
os.makedirs(out, exist_ok=True)
selector = SelectiveBuilder.get_nop_selector()
if mode == "full":
    gen_autograd(native, tags, out, autograd_dir, selector)
else:  # gen_autograd's own steps for these three outputs
    infos, used_keys = load_derivatives(os.path.join(autograd_dir, "derivatives.yaml"), native, tags)
    templates = os.path.join(autograd_dir, "templates")
    functions = parse_native_yaml(native, tags).native_functions
    fns = sorted(filter(selector.is_native_function_selected_for_training, functions), key=lambda f: cpp.name(f.func))
    with_infos = match_differentiability_info(fns, infos)
    gen_variable_type(out, native, tags, with_infos, templates, used_keys)
    gen_inplace_or_view_type(out, native, tags, with_infos, templates)
    gen_autograd_functions_lib(out, infos, templates)
'''


class CommandFailed(Exception):
    pass


@dataclass
class Run:
    wall: float
    cpu: float  # user + sys of the process
    written: dict[str, int]  # bytes of each file created or rewritten (mtime or size changed)
    output: str

    @property
    def changed(self) -> list[str]:
        return sorted(self.written)

    def kb(self, generated_only: bool = False) -> float:
        return sum(n for p, n in self.written.items() if not (generated_only and _bookkeeping(p))) / 1e3


def _bookkeeping(path: str) -> bool:
    """opgen's hidden state file: rewritten by every run, compiled by nothing."""
    return os.path.basename(path).startswith(".")


def timed(command: list[str], out_dir: str, env: Optional[dict] = None, cwd: str = REPO) -> Run:
    before = snapshot(out_dir, ignore=()) if os.path.isdir(out_dir) else {}
    start_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    end_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise CommandFailed(f"{' '.join(command[:4])} ... exited with {result.returncode}:\n{tail}")
    after = snapshot(out_dir, ignore=())
    cpu = (end_cpu.ru_utime - start_cpu.ru_utime) + (end_cpu.ru_stime - start_cpu.ru_stime)
    return Run(wall, cpu, {p: len(after[p][0]) for p in written(before, after)}, result.stdout + result.stderr)


class Tools:
    """The two generators on one private copy of derivatives.yaml (the edit rewrites it)."""

    def __init__(self, work: str, peer: Optional[str], native: str, tags: str):
        self.work, self.peer, self.native, self.tags = work, peer, native, tags
        self.autograd_dir = os.path.join(work, "autograd")  # torchgen's layout: derivatives.yaml, templates/
        os.makedirs(self.autograd_dir)
        self.derivatives = os.path.join(self.autograd_dir, "derivatives.yaml")
        with open(os.path.join(PYTORCH_DATA, "derivatives.yaml"), encoding="utf-8") as handle:
            self.original = handle.read()
        self.write(self.original)
        if peer:
            templates = subprocess.run(
                [peer, "-c", "import os, torchgen.packaged.autograd as p; print(os.path.join(os.path.dirname(p.__file__), 'templates'))"],
                capture_output=True, text=True, check=True).stdout.strip()
            os.symlink(templates, os.path.join(self.autograd_dir, "templates"))
        # Bytecode as in a user's checkout (torchgen's was compiled when pip installed it).
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env["OPGEN_CACHE_REMOTE"] = "off"

    def write(self, text: str) -> None:
        with open(self.derivatives, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)

    def fresh(self, name: str) -> str:
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        return path

    def torchgen(self, mode: str, out: str) -> Run:
        return timed([self.peer, "-c", TORCHGEN, mode, self.native, self.tags, self.autograd_dir, out], out, cwd=self.work)

    def opgen(self, out: str, cache: Optional[str], derivatives: bool = True) -> Run:
        command = [sys.executable, "-m", "opgen", "generate", self.native, "--tags", self.tags, "--out", out]
        command += ["--derivatives", self.derivatives] if derivatives else []
        env = dict(self.env)
        if cache is None:
            command.append("--no-cache")
        else:
            env["OPGEN_CACHE_DIR"] = cache
        return timed(command, out, env)


def edit_formula(text: str, factor: str) -> str:
    """sin's `self:` formula with ` * factor` appended."""
    head, entry, rest = text.partition(EDIT_ENTRY)
    line, newline, tail = rest.partition("\n")
    assert entry and line.startswith("  self: "), f"no `self:` formula after {EDIT_ENTRY.strip()!r}"
    return head + entry + line + " * " + factor + newline + tail


def fresh_factors():
    """Numbers no run has used, so every edit is content no cache has seen."""
    rng, used = random.Random(os.urandom(16)), set()
    while True:
        factor = f"{rng.uniform(1.0, 2.0):.6f}"
        if factor not in used:
            used.add(factor)
            yield factor


def median(runs: list[Run], value=lambda r: r.wall) -> float:
    return statistics.median(value(r) for r in runs)


def measure_codegen(tools: Tools, runs: int, edit_runs: int) -> dict:
    """Runs per scenario (lists of Run) and "sizes" (see sizes())."""
    m: dict[str, list[Run]] = {name: [] for name in ("tg", "tg_full", "plain", "ad", "no_cache", "noop", "tg_edit", "edit",
                                                      "edit_noop")}
    peer = tools.peer is not None
    for i in range(runs):
        print(f"bench: codegen cold, run {i + 1}/{runs} ...", file=sys.stderr)
        if peer:
            m["tg"].append(tools.torchgen("autograd", tools.fresh("tg")))
            m["tg_full"].append(tools.torchgen("full", tools.fresh("tg-full")))
        m["plain"].append(tools.opgen(tools.fresh("plain"), tools.fresh("plain-cache"), derivatives=False))
        m["ad"].append(tools.opgen(tools.fresh("ad"), tools.fresh("ad-cache")))
        m["no_cache"].append(tools.opgen(tools.fresh("no-cache"), None))
    for name in ("tg-full", "plain", "plain-cache", "no-cache"):
        tools.fresh(name)
    for _ in range(runs):
        m["noop"].append(tools.opgen(os.path.join(tools.work, "ad"), os.path.join(tools.work, "ad-cache")))
    m["sizes"] = sizes(tools.work, peer)
    factors = fresh_factors()
    try:
        for i in range(edit_runs):
            print(f"bench: one-formula edit, run {i + 1}/{edit_runs} ...", file=sys.stderr)
            tools.write(tools.original)
            out, cache = tools.fresh(f"edit-{i}"), tools.fresh(f"edit-cache-{i}")
            tools.opgen(out, cache)  # the tree and the cache the edit starts from
            m["edit_noop"].append(tools.opgen(out, cache))  # what the edit costs beyond: a no-op on the same tree
            tools.write(edit_formula(tools.original, next(factors)))
            m["edit"].append(tools.opgen(out, cache))
            if peer and i < runs:  # on its previous output: the cold run's, then the previous edit's
                m["tg_edit"].append(tools.torchgen("autograd", os.path.join(tools.work, "tg")))
            shutil.rmtree(out)
            shutil.rmtree(cache)
    finally:
        tools.write(tools.original)
    return m


TORCHGEN_SOURCES = re.compile(r"(VariableType_\d+\.cpp|VariableType\.h|ADInplaceOrViewType_\d+\.cpp|Functions\.(h|cpp))")
OPGEN_SOURCES = re.compile(r"ops/\w+_(Autograd|ADInplaceOrView)\.cpp")


def sizes(work: str, peer: bool) -> dict[str, tuple[int, int]]:
    """(files, bytes) of opgen's autograd files, torchgen's compiled ones and its *Everything.cpp."""
    def total(root: str, pattern: re.Pattern) -> tuple[int, int]:
        found = [os.path.join(d, n) for d, _, names in os.walk(root) for n in names
                 if pattern.fullmatch(os.path.relpath(os.path.join(d, n), root))]
        return len(found), sum(os.path.getsize(p) for p in found)
    result = {"opgen": total(os.path.join(work, "ad"), OPGEN_SOURCES)}
    if peer:
        result["torchgen"] = total(os.path.join(work, "tg"), TORCHGEN_SOURCES)
        result["everything"] = total(os.path.join(work, "tg"), re.compile(r"\w+Everything\.cpp"))
    return result


# ----- report -----

def ratio_cells(ours: Optional[float], theirs: Optional[float], goal: Optional[float], unit: str = "x") -> tuple[str, str, str]:
    """(ratio, goal, met) of ours / theirs against a goal ratio."""
    if ours is None or not theirs:
        return "", (f"<= {goal}{unit}" if goal else ""), ("n/a" if goal else "")
    ratio = ours / theirs
    return format_ratio(ratio), (f"<= {goal}x" if goal else ""), (("yes" if ratio <= goal else "NO") if goal else "")


def format_ratio(ratio: float) -> str:
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def seconds(value: Optional[float]) -> str:
    return "" if value is None else f"{value:.2f}"


def regenerated(run: Run) -> str:
    found = re.search(r"(?:regenerated|materialized from the cache) (\d+)/(\d+) groups", run.output)
    return f"{found[1]}/{found[2]} groups" if found else "?"


def codegen_rows(m: dict) -> list[tuple[str, ...]]:
    tg = median(m["tg"]) if m["tg"] else None
    tg_cpu = median(m["tg"], lambda r: r.cpu) if m["tg"] else None
    share = median(m["ad"]) - median(m["plain"])
    share_cpu = median(m["ad"], lambda r: r.cpu) - median(m["plain"], lambda r: r.cpu)
    rows = [
        ("cold: autograd layer, wall s (generate --derivatives minus generate)", seconds(share), seconds(tg),
         *ratio_cells(share, tg, CODEGEN_GOALS["cold"])),
        ("cold: autograd layer, CPU s (the same difference)", seconds(share_cpu), seconds(tg_cpu),
         *ratio_cells(share_cpu, tg_cpu, None)),
        ("cold: generate --derivatives --no-cache, wall s (all of opgen's layers)", seconds(median(m["no_cache"])),
         seconds(tg), *ratio_cells(median(m["no_cache"]), tg, None)),
        ("cold: generate --derivatives, empty cache, wall s", seconds(median(m["ad"])), seconds(tg),
         *ratio_cells(median(m["ad"]), tg, None)),
        ("cold: generate without --derivatives, empty cache, wall s", seconds(median(m["plain"])), "", "", "", ""),
        ("cold: torchgen's whole gen_autograd, wall s (+TraceType, ViewFuncs, factories)", "",
         seconds(median(m["tg_full"]) if m["tg_full"] else None), "", "", ""),
        ("no-op: generate --derivatives on its output, wall s (torchgen: its full run)", seconds(median(m["noop"])),
         seconds(tg), *ratio_cells(median(m["noop"]), tg, None)),
    ]
    edit, tg_edit = m["edit"], m["tg_edit"]
    edit_s, tg_edit_s = median(edit), (median(tg_edit) if tg_edit else None)
    kb = statistics.median(r.kb(generated_only=True) for r in edit)
    tg_kb = statistics.median(r.kb() for r in tg_edit) if tg_edit else None
    state_kb = statistics.median(r.kb() - r.kb(generated_only=True) for r in edit)
    tg_edit_cpu = median(tg_edit, lambda r: r.cpu) if tg_edit else None
    # The edit's autograd share: each edited run minus the no-op run just before it on the same tree.
    edit_share = statistics.median(e.wall - n.wall for e, n in zip(edit, m["edit_noop"]))
    edit_share_cpu = statistics.median(e.cpu - n.cpu for e, n in zip(edit, m["edit_noop"]))
    rows += [
        ("one-formula edit: the autograd layer's share, wall s (edited run minus a no-op run on its tree)",
         seconds(edit_share), seconds(tg_edit_s), *ratio_cells(edit_share, tg_edit_s, CODEGEN_GOALS["edit"])),
        ("one-formula edit: the autograd layer's share, CPU s (the same difference)", seconds(edit_share_cpu),
         seconds(tg_edit_cpu), *ratio_cells(edit_share_cpu, tg_edit_cpu, None)),
        ("one-formula edit: wall s (the whole process)", seconds(edit_s), seconds(tg_edit_s), *ratio_cells(edit_s, tg_edit_s, None)),
        ("one-formula edit: CPU s (the whole process)", seconds(median(edit, lambda r: r.cpu)), seconds(tg_edit_cpu),
         *ratio_cells(median(edit, lambda r: r.cpu), tg_edit_cpu, None)),
        ("one-formula edit: the no-op run it is measured against, wall s", seconds(median(m["edit_noop"])), "", "", "", ""),
        ("one-formula edit: groups regenerated", regenerated(edit[0]), "all" if tg_edit else "", "", "", ""),
        ("one-formula edit: files written", spread(sum(not _bookkeeping(p) for p in r.written) for r in edit),
         spread(len(r.changed) for r in tg_edit) if tg_edit else "", "", "", ""),
        ("one-formula edit: kB written", f"{kb:,.1f}", "" if tg_kb is None else f"{tg_kb:,.1f}",
         "" if not tg_kb else format_ratio(kb / tg_kb), f"<= {CODEGEN_GOALS['edit_kb']} kB",
         "yes" if kb <= CODEGEN_GOALS["edit_kb"] else "NO"),
        ("one-formula edit: opgen's .opgen-state.json, kB (bookkeeping, not compiled)", f"{state_kb:,.1f}", "", "", "", ""),
    ]
    sz = m["sizes"]
    ours_files, ours_bytes = sz["opgen"]
    theirs_files, theirs_bytes = sz.get("torchgen", (None, None))
    rows += [
        ("sizes: autograd source files (opgen *_Autograd/_ADInplaceOrView.cpp)", f"{ours_files:,}",
         "" if theirs_files is None else f"{theirs_files:,}", "", "", ""),
        ("sizes: their MB (torchgen: VariableType_*, ADInplaceOrViewType_*, Functions)", f"{ours_bytes / 1e6:.2f}",
         "" if theirs_bytes is None else f"{theirs_bytes / 1e6:.2f}",
         *ratio_cells(ours_bytes, theirs_bytes, None)),
    ]
    if "everything" in sz:
        rows.append(("sizes: torchgen's *Everything.cpp, MB (also written, not compiled)", "",
                     f"{sz['everything'][1] / 1e6:.2f}", "", "", ""))
    return rows


def spread(values) -> str:
    values = sorted(set(values))
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def edited_files(m: dict, limit: int = 8) -> str:
    lines = []
    for tool, runs in (("opgen", m["edit"]), ("torchgen", m["tg_edit"])):
        if runs:
            paths = runs[0].changed
            shown = ", ".join(f"{p} ({runs[0].written[p] / 1e3:,.1f} kB)" for p in paths[:limit])
            more = f", ... and {len(paths) - limit} more" if len(paths) > limit else ""
            lines.append(f"{tool}'s first edit rewrote {len(paths)} files: {shown or '(none)'}{more}")
    return "\n".join(lines)


# ----- 2. runtime -----

# One snippet for both sides: argv = library (opdispatch|torch), case, repeat, quick|full, loss
# (mse|nll); prints one JSON object. Both libraries spell everything used here alike.
RUNTIME = r'''
import json, os, statistics, sys, time, timeit
import numpy as np
name, case, repeat, quick, loss_kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "quick", sys.argv[5]
if name == "torch":
    import torch as lib
    lib.set_num_threads(1)
    nll_loss = lib.nn.functional.nll_loss
else:
    import opdispatch as lib
    nll_loss = getattr(lib, "nll_loss", None) or getattr(getattr(getattr(lib, "nn", None), "functional", None), "nll_loss", None)
f32 = np.float32

def tensor(array, requires_grad=False):
    return lib.tensor(np.asarray(array, dtype=f32), requires_grad=requires_grad)

def per_call_ns(stmt, env):
    timer = timeit.Timer(stmt, globals=env)
    number, _ = timer.autorange()
    number = max(1, number // (4 if quick else 2))
    return [t / number * 1e9 for t in timer.repeat(repeat=repeat, number=number)]

def peak_kb():
    with open("/proc/self/status") as handle:
        return {k: int(v.split()[0]) for k, v in (l.split(":", 1) for l in handle) if k in ("VmHWM", "VmRSS")}

out = {}
if case == "probe":
    a = tensor([1.0], requires_grad=True)
    out["grad_fn"] = type((a * a).grad_fn).__name__ if (a * a).grad_fn is not None else None
    out["nll"] = hasattr(lib, "log_softmax") and nll_loss is not None
elif case == "ops":
    env = {"a": tensor([1.5], True), "b": tensor([2.0], True), "c": tensor([1.5]), "d": tensor([2.0])}
    out["a * b, recording"] = per_call_ns("a * b", env)
    out["a + b, recording"] = per_call_ns("a + b", env)
    out["a * b, no input requires grad"] = per_call_ns("c * d", env)
    with lib.no_grad():
        out["a * b, requires grad, under no_grad"] = per_call_ns("a * b", env)
elif case == "mlp":
    rng = np.random.default_rng(0)
    x, target = tensor(rng.standard_normal((64, 256))), tensor(rng.standard_normal((64, 10)))
    labels = lib.tensor(rng.integers(0, 10, 64)) if loss_kind == "nll" else None
    params = [tensor(rng.standard_normal(s) * 0.05, True) for s in [(256, 512), (512,), (512, 10), (10,)]]
    w1, b1, w2, b2 = params
    def step(lr=0.01):
        logits = lib.addmm(b2, lib.addmm(b1, x, w1).relu(), w2)
        if loss_kind == "nll":
            loss = nll_loss(lib.log_softmax(logits, 1), labels)
        else:
            diff = logits - target
            loss = (diff * diff).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(p.grad * lr)
                p.grad = None
        return loss
    times, losses = [], []
    for _ in range(3 + (5 if quick else 30)):
        start = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - start)
        losses.append(float(loss.item()))
    out = {"step_s": times[3:], "first_loss": losses[0], "last_loss": losses[-1], "steps": len(losses)}
elif case == "chain":
    n = 10000
    try:  # reset VmHWM to the current RSS (Linux >= 4.0)
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        cleared = True
    except OSError:
        cleared = False
    base = peak_kb()
    forward, backward = [], []
    for i in range(1 if quick else repeat):
        x = tensor([1.0], True)
        start = time.perf_counter()
        y = x
        for _ in range(n):
            y = y * 1.0001
        total = y.sum()
        middle = time.perf_counter()
        total.backward()
        backward.append(time.perf_counter() - middle)
        forward.append(middle - start)
        if i == 0:
            peak = peak_kb()
            grad = float(x.grad.item())
        del x, y, total
    out = {"forward_s": forward, "backward_s": backward, "grad": grad,
           "peak_delta_kb": peak["VmHWM"] - (base["VmRSS"] if cleared else base["VmHWM"])}
print(json.dumps(out))
'''


def run_side(python: str, name: str, case: str, repeat: int, quick: bool, loss: str, env: dict) -> dict:
    return run_json([python, "-c", RUNTIME, name, case, str(repeat), "quick" if quick else "full", loss], env)


def runtime_rows(args, peer: Optional[str]) -> Optional[list[tuple[str, ...]]]:
    """The runtime table's rows, or None after a line saying why the part is skipped."""
    if not args.no_build:
        try:
            build_extension()
        except RuntimeError as error:
            lines = str(error).strip().splitlines()
            why = next((line for line in lines if "error:" in line), lines[-1] if lines else "?")
            print(f"runtime: SKIPPED: building build/python failed: {why.strip()[:200]}")
            return None
    ours_env = quiet_env({"PYTHONPATH": OPDISPATCH_PATH})
    try:
        probe = run_side(sys.executable, "opdispatch", "probe", 1, True, "mse", ours_env)
    except RuntimeError as error:
        last = str(error).strip().splitlines()[-1:] or ["?"]
        print(f"runtime: SKIPPED: od.tensor([1.0], requires_grad=True) and an op on it failed: {last[0][:200]}")
        return None
    if not probe["grad_fn"]:
        print("runtime: SKIPPED: (a * a).grad_fn is None for a = od.tensor([1.0], requires_grad=True): "
              "opdispatch records no autograd graph yet")
        return None
    loss = "nll" if probe["nll"] else "mse"
    results = {}
    for name, python, env in (("opdispatch", sys.executable, ours_env), ("torch", peer, quiet_env())):
        if python is None:
            continue
        print(f"bench: runtime, {name} ...", file=sys.stderr)
        results[name] = {case: run_side(python, name, case, args.repeat, args.quick, loss, env)
                         for case in ("ops", "mlp", "chain")}
    ours, theirs = results["opdispatch"], results.get("torch")
    rows = []
    for label in ours["ops"]:
        mine, peer_ns = statistics.median(ours["ops"][label]), theirs and statistics.median(theirs["ops"][label])
        goal = RUNTIME_GOALS["op"] if label.endswith("recording") else None
        rows.append((f"ns per {label} (numel 1)", f"{mine:,.0f}", f"{peer_ns:,.0f}" if peer_ns else "",
                     *ratio_cells(mine, peer_ns, goal)))
    loss_name = "log_softmax + nll_loss" if loss == "nll" else "mean squared error"
    step, peer_step = (statistics.median(side["mlp"]["step_s"]) * 1e3 if side else None for side in (ours, theirs))
    rows.append((f"MLP 64x256->512->10 train step ({loss_name}), median ms", f"{step:.3f}",
                 "" if peer_step is None else f"{peer_step:.3f}", *ratio_cells(step, peer_step, RUNTIME_GOALS["mlp"])))
    last, peer_last = (side["mlp"]["last_loss"] if side else None for side in (ours, theirs))
    same = "" if peer_last is None else ("same" if abs(last - peer_last) <= 1e-3 * max(1.0, abs(peer_last)) else "DIFFERS")
    rows.append((f"MLP loss after {ours['mlp']['steps']} steps (same data and weights)", f"{last:.6f}",
                 "" if peer_last is None else f"{peer_last:.6f}", "", "", same))
    for key, label in (("forward_s", "forward (recording)"), ("backward_s", "backward")):
        mine, peer_s = (statistics.median(side["chain"][key]) * 1e3 if side else None for side in (ours, theirs))
        rows.append((f"10,000-op chain y = y * 1.0001: {label}, ms", f"{mine:.2f}",
                     "" if peer_s is None else f"{peer_s:.2f}", *ratio_cells(mine, peer_s, None)))
    kb, peer_kb = (side["chain"]["peak_delta_kb"] if side else None for side in (ours, theirs))
    rows.append(("10,000-op chain: peak RSS added, MB (VmHWM, fresh process)", f"{kb / 1e3:.1f}",
                 "" if peer_kb is None else f"{peer_kb / 1e3:.1f}", *ratio_cells(kb, peer_kb, None)))
    grad, peer_grad = (side["chain"]["grad"] if side else None for side in (ours, theirs))
    rows.append(("10,000-op chain: x.grad (1.0001^10000, about 2.718)", f"{grad:.4f}", "" if peer_grad is None else f"{peer_grad:.4f}",
                 "", "", "" if peer_grad is None else ("same" if abs(grad - peer_grad) < 1e-3 * peer_grad else "DIFFERS")))
    return rows


# ----- main -----

def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="codegen: runs per scenario (default 3)")
    parser.add_argument("--edit-runs", type=int, default=7,
                        help="codegen: one-formula edits, each with its no-op run (default 7; torchgen runs --runs of them)")
    parser.add_argument("--repeat", type=int, default=7, help="runtime: timed loops per measure (default 7)")
    parser.add_argument("--quick", action="store_true", help="one codegen run per scenario, fewer runtime loops")
    parser.add_argument("--only", default="codegen,runtime", help="comma-separated parts: codegen, runtime")
    parser.add_argument("--no-build", action="store_true", help="runtime: use build/python as it is (no scons)")
    args = parser.parse_args(argv)
    parts = set(filter(None, args.only.split(",")))
    if not parts or parts - {"codegen", "runtime"}:
        parser.error("--only takes codegen, runtime or both")
    if args.quick:
        args.runs, args.edit_runs, args.repeat = 1, 3, 3
    if args.runs < 1 or args.edit_runs < 1 or args.repeat < 1:
        parser.error("--runs, --edit-runs and --repeat must be at least 1")
    peer = ensure_torchgen()
    if "codegen" in parts:
        native, tags = pytorch_yaml()
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK)
        try:
            m = measure_codegen(Tools(WORK, peer, native, tags), args.runs, args.edit_runs)
        except CommandFailed as error:
            print(f"bench: {error}", file=sys.stderr)
            return 1
        finally:
            shutil.rmtree(WORK, ignore_errors=True)
        print(f"Autograd codegen on PyTorch 2.13's yaml ({PYTORCH_DATA}): median of {args.runs} runs "
              f"({args.edit_runs} edits), whole processes; "
              f"torchgen = gen_autograd's VariableType + ADInplaceOrView + Functions; "
              f"edit: sin's formula * <never-seen number>; load average {os.getloadavg()[0]:.1f}\n")
        print(render_table(HEADER[:2] + ("torchgen",) + HEADER[3:], codegen_rows(m), "<>>>>>"))
        print()
        print(edited_files(m))
        if peer is None:
            print("\nNOTE: torchgen (torch 2.13.0) is unavailable in the peer virtualenv; opgen's figures only.")
    if "runtime" in parts:
        if "codegen" in parts:
            print()
        rows = runtime_rows(args, peer)
        if rows is not None:
            print(f"Autograd runtime, float32, one thread: opdispatch (build/python) vs torch 2.13; "
                  f"medians of {args.repeat} loops\n")
            print(render_table(HEADER, rows, "<>>>>>"))
            if peer is None:
                print("\nNOTE: torch 2.13.0 is unavailable in the peer virtualenv; opdispatch's figures only.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
