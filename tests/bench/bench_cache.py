"""Benchmark: a fresh build directory's codegen with a warm codegen cache (every group
materialized) vs rendering every group, on our yaml and on PyTorch 2.13's, with torchgen's
regeneration of a fresh directory (it has no cache) alongside.

    python tests/bench/bench_cache.py [--runs N] [--work DIR]

Two figures per side, each the median of --runs fresh processes:
- codegen phase: `generate_tree()` alone, timed inside the process after the (warm) parse cache
  loaded the model: keys, lookups or rendering, and writing every file. This is the goal's figure.
- whole process: `python -m opgen generate YAML --out <fresh dir>`, Python start-up included.
The render side uses a cache directory holding only the parse cache, so both sides load the model
alike. Work happens in --work (default: /dev/shm when present): this VM's disk is throttled at
times to ~2 ms per file creation, which would bury both sides under the same 7,939 creations.
Goal: warm <= 0.2x render.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from typing import Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]  # tests/bench, and tests/ for the shared harness (runs.py's helpers)
from bench_model import run  # noqa: E402
from peer_env import PYTORCH_DATA, REPO, ensure_torchgen, pytorch_yaml  # noqa: E402
from runs import run_json  # noqa: E402
from table import render_table  # noqa: E402

GOAL = 0.2

# Runs generate_tree in a fresh process and prints how long it took and what it did.
PHASE = """
import json, sys, time
from opgen.gen import CodegenConfig, generate_tree
from opgen.cache.parse_cache import load_model_cached
from opgen.model import default_tags_path
yaml_path, out = sys.argv[1:3]
model = load_model_cached(yaml_path, default_tags_path(yaml_path))
start = time.perf_counter()
report = generate_tree(model, out, CodegenConfig())
print(json.dumps({"seconds": time.perf_counter() - start, "files": len(report.written),
                  "hits": report.cache_hits, "misses": report.cache_misses}))
"""


def cache_env(cache_dir: str) -> dict[str, str]:
    env = dict(os.environ, OPGEN_CACHE_DIR=cache_dir)
    env.pop("OPGEN_DEBUG", None)
    return env


def phase(yaml_path: str, out: str, cache_dir: str) -> dict:
    return run_json([sys.executable, "-c", PHASE, yaml_path, out], cache_env(cache_dir))


def whole(yaml_path: str, out: str, cache_dir: str) -> float:
    return run([sys.executable, "-m", "opgen", "generate", yaml_path, "--out", out], cache_env(cache_dir))[0]


def measure(yaml_path: str, work: str, runs: int) -> dict[str, float]:
    warm, cold = os.path.join(work, "warm"), os.path.join(work, "models-only")
    whole(yaml_path, os.path.join(work, "prime"), warm)          # fills the parse and codegen caches
    shutil.copytree(os.path.join(warm, "models"), os.path.join(cold, "models"))
    figures: dict[str, list[float]] = {"warm phase": [], "render phase": [], "warm process": [], "render process": []}
    for i in range(runs):
        hit = phase(yaml_path, os.path.join(work, f"hit{i}"), warm)
        assert hit["misses"] == 0, hit
        figures["warm phase"].append(hit["seconds"])
        shutil.rmtree(os.path.join(cold, "codegen"), ignore_errors=True)
        rendered = phase(yaml_path, os.path.join(work, f"render{i}"), cold)
        assert rendered["hits"] == 0 and rendered["files"] == hit["files"], (rendered, hit)
        figures["render phase"].append(rendered["seconds"])
        figures["warm process"].append(whole(yaml_path, os.path.join(work, f"hit-process{i}"), warm))
        shutil.rmtree(os.path.join(cold, "codegen"), ignore_errors=True)
        figures["render process"].append(whole(yaml_path, os.path.join(work, f"render-process{i}"), cold))
        for name in os.listdir(work):  # keep tmpfs small: only the caches stay
            if name not in ("warm", "models-only"):
                shutil.rmtree(os.path.join(work, name))
    medians = {name: statistics.median(values) for name, values in figures.items()}
    medians["files"] = hit["files"]
    return medians


def torchgen_fresh(work: str, runs: int) -> Optional[float]:
    """torchgen regenerating PyTorch's yaml into a fresh directory (median of runs), or None."""
    python = ensure_torchgen()
    if python is None:
        return None
    import bench_codegen  # noqa: E402 - its torchgen runner knows the source layout torchgen wants

    yaml_path, tags_path = pytorch_yaml()
    generator = bench_codegen.torchgen_generator(python, yaml_path, tags_path, work)
    seconds = [generator.run(os.path.join(work, f"torchgen-out{i}")).seconds for i in range(runs)]
    return statistics.median(seconds)


def default_work_dir() -> Optional[str]:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", default=default_work_dir(), help="where the trees are written (default /dev/shm)")
    args = parser.parse_args(argv)
    inputs = [("ours", os.path.join(REPO, "yaml", "native_functions.yaml"))]
    real = os.path.join(PYTORCH_DATA, "native_functions.yaml")
    if os.path.exists(real):
        inputs.append(("PyTorch 2.13", real))
    rows = []
    for label, yaml_path in inputs:
        with tempfile.TemporaryDirectory(prefix="opgen-bench-cache-", dir=args.work) as work:
            m = measure(yaml_path, work, args.runs)
        for what in ("phase", "process"):
            ratio = m[f"warm {what}"] / m[f"render {what}"]
            met = ("yes" if ratio <= GOAL else "no") if what == "phase" else ""
            rows.append((label, f"codegen {what}" if what == "phase" else "whole process", f"{m['files']:,}",
                         f"{m[f'render {what}']:.3f}", f"{m[f'warm {what}']:.3f}", f"{ratio:.2f}x", met))
    with tempfile.TemporaryDirectory(prefix="opgen-bench-torchgen-", dir=args.work) as work:
        torchgen = torchgen_fresh(work, args.runs) if os.path.exists(real) else None
    print(render_table(("yaml", "measured", "files", "render all s", "warm cache s", "warm/render",
                        f"<= {GOAL}x"), rows, "<<>>>>>"))
    if torchgen is not None:
        print(f"\ntorchgen (torch 2.13.0, no cache) regenerating PyTorch 2.13 into a fresh directory: "
              f"{torchgen:.3f} s whole process (median of {args.runs})")
    else:
        print("\nNOTE: torchgen (torch 2.13.0) is unavailable in the peer virtualenv; no peer figure.")
    print(f"(median of {args.runs} fresh processes each; trees written under {args.work or tempfile.gettempdir()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
