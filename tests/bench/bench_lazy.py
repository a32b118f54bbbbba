"""Benchmark: lazy-tensor codegen, `opgen generate --backend-yaml` vs torchgen's gen_lazy_tensor,
on PyTorch 2.13's yaml with PyTorch's lazy backend yaml (ts_native_functions.yaml).

    python tests/bench/bench_lazy.py [--runs N]

Scenarios (median of N runs each, same machine, same run):
  cold          a fresh output directory (opgen: also an empty cache; it generates the in-tree
                files of all 1342 groups as well as the backend's)
  no-op         the same inputs again
  one-entry edit  one full_codegen operator moved to supported (`gelu`)

gen_lazy_tensor needs a PyTorch source layout (it reads aten/src/ATen/native/ three levels above
torchgen) and a shape-inference header; the benchmark builds both in a temporary directory from
the torch 2.13 wheel of build/bench-venv, appending the one declaration the wheel's header lacks
for this yaml. It writes three aggregate sources and three headers (only those whose bytes
changed: an edit rewrites the aggregates that list the operator); opgen writes one set per group.
Columns: median seconds, files and bytes written (created or rewritten).
The IR node classes both declare are compared at the end.
"""
from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]
from helpers import snapshot, written  # noqa: E402
from peer_env import REPO  # noqa: E402
from runs import peer_comparison  # noqa: E402
from table import render_table, side_by_side  # noqa: E402

LAZY_YAML = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "pytorch-lazy", "ts_native_functions.yaml"))
EDIT = (("  - gelu\n", ""), ("supported:\n", "supported:\n  - gelu\n"))
OURS = re.compile(r"^class (\w+) final : public Node", re.M)
THEIRS = re.compile(r"^class (\w+) : public", re.M)
MISSING = re.compile(r"^(TORCH_API std::vector<torch::lazy::Shape> compute_shape_\w+\(.*\);)$", re.M)


def timed(command: list[str], out_dir: str, cwd: str, env: Optional[dict] = None) -> tuple[float, int, int]:
    before = snapshot(out_dir, ignore=()) if os.path.isdir(out_dir) else {}
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {result.returncode}:\n{(result.stderr or result.stdout)[-2000:]}")
    after = snapshot(out_dir, ignore=())
    paths = written(before, after)
    return seconds, len(paths), sum(len(after[p][0]) for p in paths)


def _edit(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    for old, new in EDIT:
        assert old in text, old
        text = text.replace(old, new, 1)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _runs(results, command, out, backend, cwd, env=None) -> None:
    results["cold"].append(timed(command, out, cwd, env))
    results["no-op"].append(timed(command, out, cwd, env))
    _edit(backend)
    results["one-entry edit"].append(timed(command, out, cwd, env))
    shutil.copyfile(LAZY_YAML, backend)
    timed(command, out, cwd, env)


def run_opgen(work: str, runs: int, yaml_path: str, tags_path: str) -> dict:
    backend = os.path.join(work, "ts_native_functions.yaml")
    cache = os.path.join(work, "opgen-cache")
    env = dict(os.environ, OPGEN_CACHE_DIR=cache)
    results: dict = {"cold": [], "no-op": [], "one-entry edit": []}
    for i in range(runs):
        out = os.path.join(work, f"opgen-{i}")
        shutil.copyfile(LAZY_YAML, backend)
        shutil.rmtree(cache, ignore_errors=True)
        command = [sys.executable, "-m", "opgen", "generate", yaml_path, "--tags", tags_path,
                   "--backend-yaml", backend, "--out", out]
        _runs(results, command, out, backend, REPO, env)
    return results


def torchgen_layout(python: str, work: str, yaml_path: str, tags_path: str) -> tuple[str, str]:
    """(directory to run torchgen from, shape-inference header) of a temporary PyTorch layout."""
    found = subprocess.run([python, "-c", "import torch, torchgen, os; print(os.path.dirname(torchgen.__file__)); "
                                          "print(os.path.dirname(torch.__file__))"], capture_output=True, text=True, check=True)
    torchgen_dir, torch_dir = found.stdout.split()
    pkg = os.path.join(work, "root", "pkg")
    shutil.copytree(torchgen_dir, os.path.join(pkg, "torchgen"), ignore=shutil.ignore_patterns("__pycache__"))
    native = os.path.join(work, "root", "aten", "src", "ATen", "native")
    os.makedirs(native)
    shutil.copyfile(yaml_path, os.path.join(native, "native_functions.yaml"))
    shutil.copyfile(tags_path, os.path.join(native, "tags.yaml"))
    os.symlink(os.path.join(pkg, "torchgen", "packaged", "ATen", "templates"), os.path.join(work, "root", "aten", "src", "ATen", "templates"))
    header = os.path.join(work, "shape_inference.h")
    shutil.copyfile(os.path.join(torch_dir, "include", "torch", "csrc", "lazy", "core", "shape_inference.h"), header)
    return pkg, header


def _complete_header(python: str, pkg: str, header: str, backend: str, out: str) -> None:
    """Appends the declarations gen_lazy_tensor reports missing, one run at a time."""
    for _ in range(10):
        run = subprocess.run([python, "-m", "torchgen.gen_lazy_tensor", "-s", backend, "-o", out,
                              "--shape_inference_hdr", header], cwd=pkg, capture_output=True, text=True)
        if run.returncode == 0:
            return
        missing = MISSING.findall(run.stderr)
        if not missing:
            raise RuntimeError(run.stderr[-2000:])
        with open(header, encoding="utf-8") as handle:
            text = handle.read()
        at = text.rfind("} // namespace torch::lazy")  # the declarations only need to be in the file
        at = at if at >= 0 else len(text)
        with open(header, "w", encoding="utf-8") as handle:
            handle.write(text[:at] + "".join(m + "\n" for m in missing) + text[at:])
    raise RuntimeError("gen_lazy_tensor keeps reporting missing shape functions")


def run_torchgen(python: str, work: str, runs: int, yaml_path: str, tags_path: str) -> dict:
    pkg, header = torchgen_layout(python, work, yaml_path, tags_path)
    backend = os.path.join(work, "ts_native_functions.yaml")
    shutil.copyfile(LAZY_YAML, backend)
    _complete_header(python, pkg, header, backend, os.path.join(work, "probe"))
    results: dict = {"cold": [], "no-op": [], "one-entry edit": []}
    for i in range(runs):
        out = os.path.join(work, f"torchgen-{i}")
        os.makedirs(out)
        command = [python, "-m", "torchgen.gen_lazy_tensor", "-s", backend, "-o", out, "--shape_inference_hdr", header]
        _runs(results, command, out, backend, pkg)
    return results


def our_classes(out: str) -> tuple[set, set]:
    root = os.path.join(out, "backends", "Lazy")
    native = set()
    for name in os.listdir(os.path.join(root, "ops")):
        if name.endswith("_ir.h"):
            with open(os.path.join(root, "ops", name), encoding="utf-8") as handle:
                native |= set(OURS.findall(handle.read()))
    with open(os.path.join(root, "LazyNonNativeIr.h"), encoding="utf-8") as handle:
        return native, set(OURS.findall(handle.read()))


def their_classes(out: str) -> tuple[set, set]:
    sets = []
    for name in ("LazyIr.h", "LazyNonNativeIr.h"):
        with open(os.path.join(out, name), encoding="utf-8") as handle:
            sets.append(set(THEIRS.findall(handle.read())))
    return sets[0], sets[1]


def report(work: str, ours: dict, theirs: dict) -> None:
    def sizes(runs) -> tuple[str, str]:
        return (f"{statistics.median(r[1] for r in runs):g}", f"{statistics.median(r[2] for r in runs) / 1024:,.0f} KB")

    rows = side_by_side(("cold", "no-op", "one-entry edit"), ("gen_lazy_tensor", theirs), ("opgen", ours), sizes)
    print(render_table(("scenario", "tool", "runs", "median s", "files written", "bytes written", "opgen/torchgen"),
                       rows, "<<>>>>>"))
    native, non_native = our_classes(os.path.join(work, "o", "opgen-0"))
    print(f"\nopgen declares {len(native)} IR node classes of operators and {len(non_native)} non-native", end="")
    if theirs:
        t_native, t_non_native = their_classes(os.path.join(work, "t", "torchgen-0"))
        same = "the same" if (native, non_native) == (t_native, t_non_native) else "DIFFERENT"
        print(f"; gen_lazy_tensor {len(t_native)} and {len(t_non_native)}: {same} class names")
        for name in sorted((native | non_native) ^ (t_native | t_non_native))[:10]:
            print(f"  only in {'opgen' if name in native | non_native else 'gen_lazy_tensor'}: {name}")


def main(argv: Optional[list[str]] = None) -> int:
    return peer_comparison(argv, __doc__, "bench_lazy", LAZY_YAML, run_opgen, run_torchgen, report)


if __name__ == "__main__":
    sys.exit(main())
