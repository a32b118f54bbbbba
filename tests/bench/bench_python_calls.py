"""Benchmark: Python per-call time of a one-element add through opdispatch vs torch and numpy.

    python tests/bench/bench_python_calls.py [--repeat N]

A report, not a test: it builds build/python and build/tests/python (the C++ test operators)
through SCons, then times each call in a fresh
process (opdispatch in this interpreter's environment; torch 2.13 and numpy in the peer
virtualenv, see peer_env.py) and prints one table in ns per call. Every measurement is the
best and the median of N repeats of a loop long enough to take ~0.1 s; BLAS/OpenMP threads are
pinned to one so no library spins on the other core.
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
from runs import OPDISPATCH_PATH, TEST_OPS_PATH, build_extension, quiet_env, run_json  # noqa: E402
from table import render_table  # noqa: E402

# Shared by both snippets: times `stmt` with the names in `env`, prints {label: [ns, ...]}.
TIMER = """\
import json, sys, timeit
def measure(cases, repeat):
    out = {}
    for label, stmt, env in cases:
        timer = timeit.Timer(stmt, globals=env)
        number, _ = timer.autorange()  # calls per loop: >= 0.2 s
        number = max(1, number // 2)
        out[label] = [t / number * 1e9 for t in timer.repeat(repeat=repeat, number=number)]
    print(json.dumps(out))
"""

OPDISPATCH_SNIPPET = TIMER + """\
import numpy as np
import opdispatch
import opdispatch_test_ops
keep = opdispatch_test_ops.register_test_ops("bench")   # bench::add_one_element, a C++ CPU kernel
lib = opdispatch.library.Library("benchpy", "DEF")
lib.define("add_numpy(Tensor a, Tensor b) -> Tensor")
lib.define("first(Tensor a, Tensor b) -> Tensor")
lib.define("identity(Tensor a, Tensor b) -> Tensor")
lib.impl("add_numpy", "CPU", lambda a, b: opdispatch.from_numpy(a.numpy() + b.numpy()))
lib.impl("first", "CPU", lambda a, b: a)
lib.impl("identity", "CPU")                            # the built-in C++ identity kernel
a, b = opdispatch.tensor([1.0]), opdispatch.tensor([2.0])
assert opdispatch.ops.bench.add_one_element(a, b).tolist() == [3.0]
assert opdispatch.ops.benchpy.add_numpy(a, b).tolist() == [3.0]
env = {"ops": opdispatch.ops, "a": a, "b": b,
       "add": opdispatch.ops.bench.add_one_element.default,
       "add_any": opdispatch.ops.bench.add_one_element,
       "add_numpy": opdispatch.ops.benchpy.add_numpy.default,
       "first": opdispatch.ops.benchpy.first.default,
       "identity": opdispatch.ops.benchpy.identity.default}
measure([
    ("opdispatch  ops.bench.add_one_element.default(a, b)  [C++ kernel]", "add(a, b)", env),
    ("opdispatch  ops.bench.add_one_element(a, b)  [overload resolution]", "add_any(a, b)", env),
    ("opdispatch  ops.bench.add_one_element(a, b)  [attribute lookups each call]",
     "ops.bench.add_one_element(a, b)", env),
    ("opdispatch  C++ identity kernel, no arithmetic  [dispatch floor]", "identity(a, b)", env),
    ("opdispatch  Python kernel returning a, no arithmetic", "first(a, b)", env),
    ("opdispatch  Python kernel: from_numpy(a.numpy() + b.numpy())", "add_numpy(a, b)", env),
], int(sys.argv[1]))
"""

PEER_SNIPPET = TIMER + """\
import numpy as np
env = {"a": np.array([1.0], dtype=np.float32), "b": np.array([2.0], dtype=np.float32), "np": np,
       "f": lambda a, b: a}
cases = [("python  f(a, b) returning a  [interpreter floor]", "f(a, b)", env),
         ("numpy  np.add(a, b)", "np.add(a, b)", env),
         ("numpy  a + b", "a + b", env)]
if sys.argv[2] == "torch":
    import torch
    torch.set_num_threads(1)
    tenv = {"torch": torch, "a": torch.tensor([1.0]), "b": torch.tensor([2.0]),
            "add_overload": torch.ops.aten.add.Tensor, "add_packet": torch.ops.aten.add}
    cases[1:1] = [("torch " + torch.__version__.split("+")[0] + "  torch.add(a, b)", "torch.add(a, b)", tenv),
                  ("torch  a + b", "a + b", tenv),
                  ("torch  torch.ops.aten.add.Tensor(a, b)", "add_overload(a, b)", tenv),
                  ("torch  torch.ops.aten.add(a, b)  [overload resolution]", "add_packet(a, b)", tenv)]
measure(cases, int(sys.argv[1]))
"""


def format_table(results: dict, reference: Optional[str]) -> str:
    ref = statistics.median(results[reference]) if reference else None
    rows = []
    for label, times in results.items():
        ratio = "n/a" if ref is None else f"{statistics.median(times) / ref:.2f}x"
        rows.append((label, f"{min(times):,.0f}", f"{statistics.median(times):,.0f}", ratio))
    return render_table(("call", "best ns", "median ns", "vs torch.add"), rows, "<>>>")


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed loops per call (default 7)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    build_extension(os.path.join("build", "tests", "python"))
    results = run_json([sys.executable, "-c", OPDISPATCH_SNIPPET, str(args.repeat)],
                       quiet_env({"PYTHONPATH": os.pathsep.join((OPDISPATCH_PATH, TEST_OPS_PATH))}))
    peer_python = ensure_torchgen()
    peer = run_json([peer_python or sys.executable, "-c", PEER_SNIPPET, str(args.repeat),
                     "torch" if peer_python else "none"], quiet_env())
    results.update(peer)
    reference = next((label for label in results if label.endswith("torch.add(a, b)")), None)
    print(f"one-element float32 add, ns per call from Python; best and median of {args.repeat} loops; "
          f"single-threaded BLAS/OpenMP\n")
    print(format_table(results, reference))
    if reference is None:
        print("\nNOTE: torch 2.13.0 is unavailable in the peer virtualenv; opdispatch and numpy only.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
