"""Benchmark: an external backend's codegen, `opgen generate --backend-yaml` vs torchgen's
gen_backend_stubs, on PyTorch 2.13's yaml with pytorch/xla's xla_native_functions.yaml.

    python tests/bench/bench_backend.py [--runs N]

Scenarios (median of N runs each, same machine, same run):
  cold         a fresh output directory (opgen: also an empty parse cache; it generates the
               in-tree files of all 1342 groups as well as the backend's)
  add backend  opgen only: the backend added to an already generated tree (scons --backend=xla
               on an existing build)
  no-op        the same inputs again
  one-op edit  one more operator listed in the backend yaml

gen_backend_stubs has no incremental mode, so each of its scenarios is a full run; it writes
XLANativeFunctions.h and RegisterXLA.cpp / RegisterAutogradXLA.cpp, opgen writes one set of files
per operator group plus the in-tree tree (which the backend runs leave untouched).  The table
also checks that both declare the same kernels: (name, parameter names) of every declaration.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (helpers)
from helpers import snapshot, written  # noqa: E402
from peer_env import REPO  # noqa: E402
from runs import peer_comparison  # noqa: E402
from table import render_table, side_by_side  # noqa: E402

XLA_YAML = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "pytorch-xla", "xla_native_functions.yaml"))
EDIT = ("supported:\n", "supported:\n  - lgamma\n")  # in PyTorch's yaml, not in pytorch/xla's lists
DECLARATION = re.compile(r"^\s*(?:static\s+)?.+?\b(\w+)\((.*)\);\s*$")


def declared_kernels(paths: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """(kernel name, parameter names) of every declaration line in the given headers."""
    found = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                match = DECLARATION.match(line)
                if match and not line.lstrip().startswith(("//", "#", "using")):
                    params = [p.strip() for p in _split_top_level(match[2])]
                    found.append((match[1], tuple(p.split()[-1].lstrip("&*") for p in params if p)))
    return sorted(found)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        depth += char in "<(["
        depth -= char in ">)]"
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def timed(command: list[str], out_dir: str, env: Optional[dict] = None) -> tuple[float, int]:
    before = snapshot(out_dir, ignore=()) if os.path.isdir(out_dir) else {}
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {result.returncode}:\n{result.stderr[-2000:]}")
    return seconds, len(written(before, snapshot(out_dir, ignore=())))


def _incremental_runs(results, command: list[str], out: str, backend: str, env: Optional[dict] = None) -> None:
    """no-op, then one-op edit of the backend yaml, then the original back (for the declaration check)."""
    results["no-op"].append(timed(command, out, env))
    with open(XLA_YAML, encoding="utf-8") as handle:
        text = handle.read()
    with open(backend, "w", encoding="utf-8") as handle:
        handle.write(text.replace(*EDIT, 1))
    results["one-op edit"].append(timed(command, out, env))
    shutil.copyfile(XLA_YAML, backend)
    timed(command, out, env)


def run_opgen(work: str, runs: int, yaml_path: str, tags_path: str) -> dict[str, list[tuple[float, int]]]:
    backend = os.path.join(work, "xla_native_functions.yaml")
    cache = os.path.join(work, "opgen-cache")
    env = dict(os.environ, OPGEN_CACHE_DIR=cache)
    results: dict[str, list[tuple[float, int]]] = {"cold": [], "add backend": [], "no-op": [], "one-op edit": []}
    for i in range(runs):
        out = os.path.join(work, f"opgen-{i}")
        shutil.copyfile(XLA_YAML, backend)
        shutil.rmtree(cache, ignore_errors=True)
        in_tree = [sys.executable, "-m", "opgen", "generate", yaml_path, "--tags", tags_path, "--out"]
        command = in_tree[:-1] + ["--backend-yaml", backend, "--out", out]
        results["cold"].append(timed(command, out, env))
        shutil.rmtree(out)
        timed(in_tree + [out], out, env)
        results["add backend"].append(timed(command, out, env))
        _incremental_runs(results, command, out, backend, env)
    return results


def run_torchgen(python: str, work: str, runs: int) -> dict[str, list[tuple[float, int]]]:
    backend = os.path.join(work, "xla_native_functions.yaml")
    results: dict[str, list[tuple[float, int]]] = {"cold": [], "no-op": [], "one-op edit": []}
    for i in range(runs):
        out = os.path.join(work, f"torchgen-{i}")
        os.makedirs(out)
        shutil.copyfile(XLA_YAML, backend)
        command = [python, "-m", "torchgen.gen_backend_stubs", "-s", backend, "-o", out]
        results["cold"].append(timed(command, out))
        _incremental_runs(results, command, out, backend)
    return results


def report(work: str, ours: dict, theirs: dict) -> None:
    def files(runs) -> tuple[str]:
        counts = sorted({r[1] for r in runs})
        return ("-".join(map(str, (counts[0], counts[-1]))) if len(counts) > 1 else str(counts[0]),)

    rows = side_by_side(("cold", "add backend", "no-op", "one-op edit"), ("gen_backend_stubs", theirs), ("opgen", ours), files)
    print(render_table(("scenario", "tool", "runs", "median s", "files written", "opgen/stubs"), rows, "<<>>>>"))
    ops = os.path.join(work, "o", "opgen-0", "backends", "XLA", "ops")
    our_kernels = declared_kernels(sorted(os.path.join(ops, n) for n in os.listdir(ops) if n.endswith("_native.h")))
    print(f"\nopgen declares {len(our_kernels)} XLA/AutogradXLA kernels", end="")
    if theirs:
        stub_kernels = declared_kernels([os.path.join(work, "t", "torchgen-0", "XLANativeFunctions.h")])
        same = "the same" if our_kernels == stub_kernels else "DIFFERENT"
        print(f"; gen_backend_stubs declares {len(stub_kernels)}: {same} (name, parameter names) set")
        for kernel in sorted(set(our_kernels) ^ set(stub_kernels))[:10]:
            print(f"  only in {'opgen' if kernel in our_kernels else 'gen_backend_stubs'}: {kernel}")


def main(argv: Optional[list[str]] = None) -> int:
    return peer_comparison(argv, __doc__, "bench_backend", XLA_YAML, run_opgen,
                           lambda python, work, runs, *_: run_torchgen(python, work, runs), report)


if __name__ == "__main__":
    sys.exit(main())
