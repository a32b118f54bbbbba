"""Benchmark: operator throughput (add, mul, exp, sum, mm) and per-call overhead from Python,
opdispatch vs numpy vs torch 2.13 in one run.

    python tests/bench/bench_ops.py [--repeat N] [--quick]

A report, not a test. It builds build/python through SCons, then times each workload in a fresh
process per library (opdispatch in this interpreter's environment; numpy and torch 2.13 in the
peer virtualenv, see peer_env.py), everything on one thread (OMP/BLAS pinned to 1,
torch.set_num_threads(1)). Inputs are float32 and contiguous. Sizes are element counts: 1e3 and
1e7 for the pointwise ops and sum; for mm the count is the elements of each square matrix
(32x32 and 3162x3162). The goal column checks the issue's target for large pointwise ops:
within 1.5x of numpy.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (runs.py's helpers)
from peer_env import ensure_torchgen  # noqa: E402
from runs import OPDISPATCH_PATH, build_extension, quiet_env, run_json  # noqa: E402
from table import render_table  # noqa: E402

POINTWISE_GOAL = 1.5  # large pointwise ops: at most this many times numpy's time

# One snippet per library: builds the inputs, times each case, prints {case: [seconds, ...]}.
# `lib` chooses the spelling; every library runs the same workloads on the same shapes.
SNIPPET = r"""
import json, math, sys, timeit
import numpy as np
lib, repeat, quick = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "quick"
sizes = [1000, 10**6] if quick else [1000, 10**7]
rng = np.random.default_rng(0)

if lib == "opdispatch":
    import opdispatch as od
    aten = od.ops.aten
    add, mul, exp, total, mm = aten.add.Tensor, aten.mul.Tensor, aten.exp.default, aten.sum.default, aten.mm.default
    wrap = lambda a: od.tensor(a)
    calls = {"x + y": lambda x, y: x + y, "add(x, y)": od.add, "ops.aten.add.Tensor(x, y)": add}
elif lib == "torch":
    import torch
    torch.set_num_threads(1)
    add, mul, exp, total, mm = torch.add, torch.mul, torch.exp, torch.sum, torch.mm
    wrap = torch.from_numpy
    calls = {"x + y": lambda x, y: x + y, "add(x, y)": torch.add, "ops.aten.add.Tensor(x, y)": torch.ops.aten.add.Tensor}
else:
    add, mul, exp, total, mm = np.add, np.multiply, np.exp, np.sum, np.matmul
    wrap = lambda a: a
    calls = {"x + y": lambda x, y: x + y, "add(x, y)": np.add}

def best_of(fn):
    timer = timeit.Timer(fn)
    number, elapsed = timer.autorange()
    number = max(1, number // 2) if elapsed > 0.2 else number
    return [t / number for t in timer.repeat(repeat=repeat, number=number)]

out = {}
for n in sizes:
    x = wrap(rng.standard_normal(n, dtype=np.float32))
    y = wrap(rng.standard_normal(n, dtype=np.float32))
    out[f"add {n}"] = best_of(lambda: add(x, y))
    out[f"mul {n}"] = best_of(lambda: mul(x, y))
    out[f"exp {n}"] = best_of(lambda: exp(x))
    out[f"sum {n}"] = best_of(lambda: total(x))
    side = int(round(math.sqrt(n)))
    a = wrap(rng.standard_normal((side, side), dtype=np.float32))
    b = wrap(rng.standard_normal((side, side), dtype=np.float32))
    out[f"mm {n}"] = best_of(lambda: mm(a, b))
x, y = wrap(np.ones(1, dtype=np.float32)), wrap(np.ones(1, dtype=np.float32))
for label, fn in calls.items():
    out[f"call {label}"] = best_of(lambda: fn(x, y))
print(json.dumps(out))
"""


def _time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.2f} ms"
    return f"{seconds * 1e6:,.2f} us"


def _rate(case: str, seconds: float) -> str:
    op, n = case.split()
    n = int(n)
    if op == "mm":
        side = round(n ** 0.5)
        return f"{2 * side ** 3 / seconds / 1e9:.1f} GFLOP/s"
    operands = {"add": 3, "mul": 3, "exp": 2, "sum": 1}[op]
    return f"{operands * 4 * n / seconds / 1e9:.1f} GB/s"


def throughput_table(results: dict[str, dict]) -> str:
    libs = [lib for lib in ("opdispatch", "numpy", "torch") if lib in results]
    rows = []
    for case in results["opdispatch"]:
        if case.startswith("call "):
            continue
        median = {lib: statistics.median(results[lib][case]) for lib in libs}
        ratio = median["opdispatch"] / median["numpy"]
        op, n = case.split()
        goal = ""
        if op in ("add", "mul", "exp") and int(n) >= 10**6:
            goal = "ok" if ratio <= POINTWISE_GOAL else f"MISSED (> {POINTWISE_GOAL}x)"
        rows.append((case, *(_time(median[lib]) for lib in libs), _rate(case, median["opdispatch"]),
                     f"{ratio:.2f}x", f"{median['opdispatch'] / median['torch']:.2f}x" if "torch" in median else "n/a",
                     goal))
    header = ("op elements", *libs, "opdispatch rate", "vs numpy", "vs torch", "goal")
    return render_table(header, rows, "<" + ">" * (len(header) - 2) + "<")


def overhead_table(results: dict[str, dict]) -> str:
    rows = []
    for lib, cases in results.items():
        for case, times in cases.items():
            if case.startswith("call "):
                rows.append((lib, case[len("call "):], f"{statistics.median(times) * 1e9:,.0f}"))
    return render_table(("library", "one-element float32 call", "median ns"), rows, "<<>")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed loops per case (default 5)")
    parser.add_argument("--quick", action="store_true", help="1e6 instead of 1e7 elements")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    mode = "quick" if args.quick else "full"
    build_extension()
    results = {"opdispatch": run_json([sys.executable, "-c", SNIPPET, "opdispatch", str(args.repeat), mode],
                                      quiet_env({"PYTHONPATH": OPDISPATCH_PATH}))}
    peer_python = ensure_torchgen()
    results["numpy"] = run_json([peer_python or sys.executable, "-c", SNIPPET, "numpy", str(args.repeat), mode],
                                quiet_env())
    if peer_python:
        results["torch"] = run_json([peer_python, "-c", SNIPPET, "torch", str(args.repeat), mode], quiet_env())
    print(f"float32, contiguous, one thread; median of {args.repeat} timed loops\n")
    print(throughput_table(results))
    print()
    print(overhead_table(results))
    if not peer_python:
        print("\nNOTE: torch 2.13.0 is unavailable in the peer virtualenv; opdispatch and numpy only.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
