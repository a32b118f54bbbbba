"""Benchmark: functionalization. Which operators get Functionalize kernels from opgen and from
torchgen on PyTorch 2.13's yaml (../shared/data/pytorch-2.13), and what a functionalized call
costs against eager.

    python tests/bench/bench_functionalize.py [--work DIR] [--write-reference] [--calls N]

Runs `python -m opgen generate --keys Functionalize` and torchgen (torch==2.13.0 in
build/bench-venv, see peer_env.py) and compares opgen's ops/<g>_Functionalize.cpp registrations
with torchgen's RegisterFunctionalization_*.cpp: both counts, every difference with its reason
(tests/codegen/functionalization_sets.py) and the operators whose opgen kernel raises an error.
--write-reference stores torchgen's set in tests/data/torchgen_functionalization_2.13.json (read
by tests/codegen/test_functionalization_parity.py). Then, with the library built (scons), the
per-call time of `add_` and of a view + in-place pair on functional tensors against eager.
A report, not a test: exits 0, or 1 when a generator failed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(_TESTS, "codegen")]
from bench_registrations import run_opgen, run_torchgen  # noqa: E402
from functionalization_sets import (KNOWN_DIFFERENCES, opgen_functionalize, torchgen_functionalize,  # noqa: E402
                                    write_reference)
from peer_env import REPO, ensure_torchgen, pytorch_yaml  # noqa: E402


def report_sets(ours: set[str], errors: dict[str, str], theirs: set[str] | None) -> None:
    print(f"Functionalize kernels on PyTorch 2.13's yaml: opgen {len(ours):,}"
          + (f", torchgen {len(theirs):,}" if theirs is not None else " (torchgen unavailable)"))
    if theirs is not None:
        for label, names in (("only in torchgen", theirs - ours), ("only in opgen", ours - theirs)):
            print(f"  {label}: {len(names)}")
            for name in sorted(names):
                print(f"    {name}: {KNOWN_DIFFERENCES.get(name, 'NOT EXPLAINED')}")
    print(f"  opgen error kernels (operators it cannot functionalize yet): {len(errors)}")
    for name, reason in sorted(errors.items()):
        print(f"    {name}: {reason}")


def _per_call(fn, calls: int) -> float:
    fn()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def report_overhead(calls: int) -> None:
    build = os.path.join(REPO, "build", "python")
    if not os.path.isdir(os.path.join(build, "opdispatch")):
        print("overhead: build the library first (scons); skipped")
        return
    sys.path.insert(0, build)
    import opdispatch as od  # noqa: PLC0415

    rows = []
    for n in (1, 1024):
        x = od.zeros([n])
        f = od.to_functional(od.zeros([n]))
        eager_add = _per_call(lambda: x.add_(1), calls)
        func_add = _per_call(lambda: f.add_(1), calls)
        eager_pair = _per_call(lambda: x.view([n]).add_(1), calls)
        func_pair = _per_call(lambda: f.view([n]).add_(1), calls)
        rows.append((n, eager_add, func_add, eager_pair, func_pair))
    print(f"per-call time, best of 5 x {calls:,} calls from Python (functional: on to_functional tensors)")
    print(f"  {'numel':>6}  {'add_ eager':>11}  {'functional':>11}  {'overhead':>9}  "
          f"{'view+add_ eager':>15}  {'functional':>11}  {'overhead':>9}")
    for n, ea, fa, ep, fp in rows:
        print(f"  {n:>6}  {ea * 1e6:>9.2f}us  {fa * 1e6:>9.2f}us  {(fa - ea) * 1e6:>7.2f}us  "
              f"{ep * 1e6:>13.2f}us  {fp * 1e6:>9.2f}us  {(fp - ep) * 1e6:>7.2f}us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", help="working directory (default: a temporary one)")
    parser.add_argument("--write-reference", action="store_true")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    yaml_path, tags_path = pytorch_yaml()
    work = args.work or tempfile.mkdtemp(prefix="bench-functionalize-")
    ours_dir, theirs_dir = os.path.join(work, "opgen"), os.path.join(work, "torchgen")
    try:
        seconds = run_opgen(yaml_path, tags_path, ours_dir, work, keys=("Functionalize",))
    except subprocess.CalledProcessError as exc:
        print(f"opgen failed:\n{exc.stderr}")
        return 1
    ours, errors = opgen_functionalize(ours_dir)
    print(f"opgen generate --keys Functionalize: {seconds:.2f} s")
    theirs = None
    python = ensure_torchgen()
    if python is not None:
        try:
            seconds = run_torchgen(python, yaml_path, tags_path, theirs_dir, work)
            theirs = torchgen_functionalize(theirs_dir)
            print(f"torchgen.gen (every file): {seconds:.2f} s")
        except subprocess.CalledProcessError as exc:
            print(f"torchgen failed:\n{exc.stderr[-2000:]}")
            return 1
        if args.write_reference:
            write_reference(theirs, "torchgen (torch==2.13.0) RegisterFunctionalization_*.cpp on "
                            "../shared/data/pytorch-2.13/native_functions.yaml")
    report_sets(ours, errors, theirs)
    report_overhead(args.calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
