"""Benchmark: the codegen phase of a fresh build directory with a warm codegen cache (every group
materialized) vs rendering every group, on our yaml and on PyTorch 2.13's.

    python tests/bench/bench_cache.py [--runs N]

Both sides run `python -m opgen generate YAML --out <fresh dir>` with the parse cache warm; the
"render" side passes --no-cache... except that also bypasses the parse cache, so it instead
points OPGEN_CACHE_DIR at a copy holding only the parse cache.  Goal: warm <= 0.2x render.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_env import PYTORCH_DATA, REPO  # noqa: E402
from table import render_table  # noqa: E402

GOAL = 0.2


def generate(yaml_path: str, out: str, cache_dir: str) -> float:
    env = dict(os.environ, OPGEN_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "opgen", "generate", yaml_path, "--out", out], cwd=REPO, env=env,
                            capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return seconds


def measure(yaml_path: str, work: str, runs: int) -> tuple[float, float]:
    warm, cold = os.path.join(work, "warm"), os.path.join(work, "models-only")
    generate(yaml_path, os.path.join(work, "prime"), warm)          # fills parse + codegen caches
    shutil.copytree(os.path.join(warm, "models"), os.path.join(cold, "models"))
    hits, renders = [], []
    for i in range(runs):
        hits.append(generate(yaml_path, os.path.join(work, f"hit{i}"), warm))
        shutil.rmtree(os.path.join(cold, "codegen"), ignore_errors=True)
        renders.append(generate(yaml_path, os.path.join(work, f"render{i}"), cold))
    return statistics.median(hits), statistics.median(renders)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    inputs = [("ours (yaml/native_functions.yaml)", os.path.join(REPO, "yaml", "native_functions.yaml"))]
    real = os.path.join(PYTORCH_DATA, "native_functions.yaml")
    if os.path.exists(real):
        inputs.append(("PyTorch 2.13", real))
    rows = []
    for label, yaml_path in inputs:
        with tempfile.TemporaryDirectory(prefix="opgen-bench-cache-") as work:
            warm, render = measure(yaml_path, work, args.runs)
        ratio = warm / render
        rows.append((label, f"{render:.3f}", f"{warm:.3f}", f"{ratio:.2f}x", f"<= {GOAL}x", "yes" if ratio <= GOAL else "no"))
    print(render_table(("yaml", "render all s", "warm cache s", "warm/render", "goal", "met"), rows, "<>>>>>"))
    print("\n(whole `opgen generate` process into a fresh directory, median of runs; includes Python start-up "
          "and the parse-cache load)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
