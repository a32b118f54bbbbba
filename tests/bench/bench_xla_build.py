"""Benchmark: pytorch/xla's own backend yaml built, linked and loaded against PyTorch 2.13's library.

    python tests/bench/bench_xla_build.py [--work DIR] [--no-torchgen]
    python tests/bench/bench_xla_build.py --project DIR      # a project bench_pytorch_build.py built

A report, not a test: one table (measure | opgen | peer), exit 0, or 1 when a build or the load
failed. The project is bench_pytorch_build.py's (a private copy with PyTorch's yaml in pt-yaml/,
a private codegen cache, `-j2 --ccache=off --missing-kernels=stub`), plus a copy of
../shared/data/pytorch-xla/xla_native_functions.yaml in xla/. Steps:

1. PyTorch's library, built first when the project has none (its figures: bench_pytorch_build.py).
2. Cold backend build: `--backend-yaml=xla/xla_native_functions.yaml` on the built library: wall
   and CPU seconds, compiles, libopdispatch_xla.so's size, functions stubbed (kernels, lowerings,
   shape functions: the backend is built from its yaml alone).
3. Load: opdispatch.load_library(libopdispatch_xla.so) in a fresh process (seconds), then every
   operator torchgen 2.13 registers at XLA and AutogradXLA for this yaml
   (tests/data/torchgen_backend_registrations_2.13.json) looked up in the dispatcher's table.
4. Edit: one operator of `supported` moved to `full_codegen` (the first of EDIT_CANDIDATES still
   supported, so a work directory's caches have never seen the result): groups regenerated,
   objects recompiled, wall seconds. The peer: torchgen's gen_lazy_tensor, which pytorch/xla's
   build runs on this yaml (torch==2.13.0 in build/bench-venv, in bench_lazy.py's temporary
   PyTorch layout), on the same edit: the files and kB it rewrites and its seconds. What
   pytorch/xla's build then recompiles is not measured here: every source including a rewritten
   aggregate (LazyIr.h, XLANativeFunctions.cpp).
5. No-op: the same scons again, median of 3.

How long: on 2 cores ~12 minutes for step 1 when the project has no library, ~6 more for the rest.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

_BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_BENCH]
import bench_pytorch_build as pt  # noqa: E402  (puts tests/ and the repository on sys.path)
from bench_lazy import _complete_header, torchgen_layout  # noqa: E402
from peer_env import PYTORCH_DATA, REPO, ensure_torchgen  # noqa: E402
from scons_helpers import rewrite_in_a_later_second  # noqa: E402
from table import render_table  # noqa: E402

XLA_DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "pytorch-xla"))
BACKEND_YAML = os.path.join("xla", "xla_native_functions.yaml")
BACKEND_OPTION = (f"--backend-yaml={BACKEND_YAML}",)
BACKEND_LIBRARY = os.path.join("build", "lib", "libopdispatch_xla.so")
REFERENCE = os.path.join(os.path.dirname(_BENCH), "data", "torchgen_backend_registrations_2.13.json")
STUBBED = re.compile(r"\[opgen\] XLA missing kernels: (\d+) stubbed")
# The backend's codegen summary: "[opgen] regenerated 1/325 XLA backend groups: mm" then "... N files written".
WRITTEN = re.compile(r"XLA backend groups.*\n\[opgen\] \d+ unchanged, (\d+) files written")
# Supported operators whose kernels the edit moves to full_codegen, one per run of a work directory.
EDIT_CANDIDATES = ("mm", "bmm", "dot", "erfinv", "frac", "hardshrink", "lerp.Scalar", "mv")

LOAD_PROGRAM = """\
import json, sys, time
import opdispatch as od
start = time.perf_counter()
od.load_library(sys.argv[1])
seconds = time.perf_counter() - start
expected = json.load(open(sys.argv[2]))
found = {key: sum(key in od.dispatcher.dump_table("aten::" + op) for op in ops) for key, ops in expected.items()}
print(json.dumps({"seconds": seconds, "found": found, "errors": od.dispatcher.static_registration_errors()}))
"""


def backend_build(project: str) -> pt.SconsRun:
    return pt.run_scons(project, extra=BACKEND_OPTION)


def cold(project: str, report: pt.Report) -> bool:
    for name in ("backends/XLA",):
        shutil.rmtree(os.path.join(project, "build", "gen", name), ignore_errors=True)
        shutil.rmtree(os.path.join(project, "build", "obj", "gen", name), ignore_errors=True)
    run = backend_build(project)
    if run.returncode:
        report.fail("cold backend build", f"scons exited {run.returncode}")
        report.notes.append("cold backend build output (tail):\n" + pt._tail(run))
        return False
    stubbed = STUBBED.search(run.output)
    report.row("cold backend build on the built library: wall s", f"{run.seconds:.0f}")
    report.row("cold backend build: CPU s (user+sys)", f"{run.cpu:.0f}")
    report.row("cold backend build: compiles", f"{len(run.compiled):,}")
    report.row("libopdispatch_xla.so, MB", f"{os.path.getsize(os.path.join(project, BACKEND_LIBRARY)) / 1e6:,.1f}")
    report.row("functions stubbed (kernels, lowerings, shape functions)", f"{int(stubbed.group(1)):,}" if stubbed else "none")
    report.notes += ["cold backend build: " + line for line in run.regenerated()]
    return True


def load(project: str, report: pt.Report) -> bool:
    with open(REFERENCE, encoding="utf-8") as handle:
        keys = json.load(handle)["backends"]["pytorch-xla/xla_native_functions.yaml"]["keys"]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(keys, handle)
    try:
        got = json.loads(pt._python(project, LOAD_PROGRAM, os.path.join(project, BACKEND_LIBRARY), handle.name))
    except RuntimeError as error:
        report.fail("load libopdispatch_xla.so", error)
        return False
    finally:
        os.unlink(handle.name)
    report.row("load_library(libopdispatch_xla.so), s", f"{got['seconds']:.3f}")
    for key, ops in sorted(keys.items()):
        report.row(f"registered at {key} (of torchgen's)", f"{got['found'][key]:,}", f"{len(ops):,} (torchgen 2.13)")
    if got["errors"]:
        report.fail("static registrations", "; ".join(got["errors"][:5]))
    return not got["errors"] and all(got["found"][key] == len(ops) for key, ops in keys.items())


def _supported(text: str) -> tuple[int, int]:
    """Where the `supported:` list's entries start and end in the backend yaml's text."""
    start = text.index("\nsupported:\n") + len("\nsupported:\n")
    following = re.search(r"^\S", text[start:], re.M)
    return start, start + following.start() if following else len(text)


def _moved(text: str, operator: str) -> str:
    """``operator`` taken out of `supported` and listed first under `full_codegen`."""
    start, end = _supported(text)
    section = text[start:end].replace(f"  - {operator}\n", "", 1)
    text = text[:start] + section + text[end:]
    return text.replace("\nfull_codegen:\n", f"\nfull_codegen:\n  - {operator}\n", 1)


def edit(project: str, torchgen: Optional[str], report: pt.Report) -> None:
    path = os.path.join(project, BACKEND_YAML)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    start, end = _supported(text)
    operator = next((op for op in EDIT_CANDIDATES if f"\n  - {op}\n" in text[start - 1:end]), None)
    if operator is None:
        report.notes.append(f"edit: every candidate ({', '.join(EDIT_CANDIDATES)}) is moved already; use a new --work")
        return
    peer = _peer_edit(torchgen, text, operator, report) if torchgen else None
    rewrite_in_a_later_second(Path(path), _moved(text, operator))
    run = backend_build(project)
    if run.returncode:
        report.fail(f"edit ({operator} to full_codegen)", f"scons exited {run.returncode}")
        report.notes.append("edit output (tail):\n" + pt._tail(run))
        return
    groups = [line for line in run.regenerated() if "XLA backend groups" in line]
    report.row(f"edit: {operator} moved to full_codegen, wall s", f"{run.seconds:.1f}",
               f"{peer[0]:.1f} (gen_lazy_tensor alone)" if peer else "")
    report.row("edit: XLA groups regenerated", groups[0].split(" ")[2] if groups else "0")
    report.row("edit: objects recompiled", str(len(run.compiled)), "each includer of what it rewrote" if peer else "")
    written = WRITTEN.search(run.output)
    report.row("edit: generated files rewritten", written.group(1) if written else "?",
               f"{peer[1]} files, {peer[2] / 1024:,.0f} kB" if peer else "")
    report.notes.append(f"edit: recompiled {', '.join(run.compiled) or 'nothing'}")


def _peer_edit(python: str, text: str, operator: str, report: pt.Report) -> Optional[tuple[float, int, int]]:
    """torchgen's gen_lazy_tensor (what pytorch/xla's build runs on this yaml: the registrations,
    the full_codegen kernels and the IR classes) on the yaml, then on the edited yaml: (seconds,
    files rewritten, their bytes)."""
    work = tempfile.mkdtemp(prefix="bench-xla-peer-")
    try:
        pkg, header = torchgen_layout(python, work, os.path.join(PYTORCH_DATA, "native_functions.yaml"),
                                      os.path.join(PYTORCH_DATA, "tags.yaml"))
        backend, out = os.path.join(work, "xla_native_functions.yaml"), os.path.join(work, "out")
        os.makedirs(out)
        with open(backend, "w", encoding="utf-8") as handle:
            handle.write(_moved(text, operator))  # the header must declare the edited yaml's shape functions too
        _complete_header(python, pkg, header, backend, os.path.join(work, "probe"))
        with open(backend, "w", encoding="utf-8") as handle:
            handle.write(text)
        command = [python, "-m", "torchgen.gen_lazy_tensor", "-s", backend, "-o", out, "--shape_inference_hdr", header]
        _run(command, pkg)
        with open(backend, "w", encoding="utf-8") as handle:
            handle.write(_moved(text, operator))
        before = {name: os.stat(os.path.join(out, name)).st_mtime_ns for name in os.listdir(out)}
        start = time.perf_counter()
        _run(command, pkg)
        seconds = time.perf_counter() - start
        rewritten = [n for n in os.listdir(out) if before.get(n) != os.stat(os.path.join(out, n)).st_mtime_ns]
        report.notes.append(f"peer: gen_lazy_tensor rewrote {', '.join(sorted(rewritten)) or 'nothing'}")
        return seconds, len(rewritten), sum(os.path.getsize(os.path.join(out, n)) for n in rewritten)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
        report.notes.append(f"peer: gen_lazy_tensor failed on the edit: {str(error)[:300]}")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(command: list[str], cwd: str) -> None:
    run = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(run.stderr[-1500:])


def noop(project: str, report: pt.Report) -> None:
    runs = [backend_build(project) for _ in range(pt.NOOP_RUNS)]
    failed = [r for r in runs if r.returncode]
    if failed:
        report.fail("no-op", f"scons exited {failed[0].returncode}")
        return
    report.row(f"no-op with the backend, s (median of {len(runs)})", f"{statistics.median(r.seconds for r in runs):.2f}")
    report.row("no-op: compiles", str(sum(len(r.compiled) for r in runs)))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="scratch directory, kept (default: a temp dir, removed after)")
    parser.add_argument("--project", default=None, help="a project bench_pytorch_build.py made (default: <work>/project)")
    parser.add_argument("--no-torchgen", action="store_true", help="the peer rows without torchgen")
    args = parser.parse_args(argv)
    xla_yaml = os.path.join(XLA_DATA, "xla_native_functions.yaml")
    if not os.path.isfile(xla_yaml) or not os.path.isfile(os.path.join(PYTORCH_DATA, "native_functions.yaml")):
        print(f"bench: pytorch/xla's or PyTorch's yaml is missing under {os.path.dirname(XLA_DATA)}", file=sys.stderr)
        return 2
    work = args.work or tempfile.mkdtemp(prefix="bench-xla-build-")
    project = args.project or os.path.join(work, "project")
    report = pt.Report()
    started = time.perf_counter()
    if not os.path.isfile(os.path.join(project, pt.LIBRARY)):
        pt.make_project(project, PYTORCH_DATA)
        core = pt.run_scons(project)
        if core.returncode:
            print(pt._tail(core), file=sys.stderr)
            return 1
        report.notes.append(f"PyTorch's library built first: {core.seconds:.0f} s (figures: bench_pytorch_build.py)")
    os.makedirs(os.path.join(project, "xla"), exist_ok=True)
    if not os.path.isfile(os.path.join(project, BACKEND_YAML)):
        shutil.copy(xla_yaml, os.path.join(project, BACKEND_YAML))
    ok = cold(project, report) and load(project, report)
    if ok:
        edit(project, None if args.no_torchgen else ensure_torchgen(), report)
        noop(project, report)
    print(render_table(("measure", "opgen", "peer"), [row[:3] for row in report.rows], "<>>"))
    for note in report.notes:
        print(note)
    print(f"\n{time.perf_counter() - started:.0f} s in all; project: {project}")
    if not args.work and not args.project:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if report.failures or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
