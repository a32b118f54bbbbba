"""Running benchmark snippets in fresh processes: one thread for every math library, JSON back."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Callable, Optional

from helpers import run_scons
from peer_env import REPO, ensure_torchgen, pytorch_yaml

OPDISPATCH_PATH = os.path.join(REPO, "build", "python")
# The tests' extension of C++ operators (opdispatch_test_ops), beside the public package.
TEST_OPS_PATH = os.path.join(REPO, "build", "tests", "python")


def quiet_env(extra: Optional[dict] = None) -> dict:
    """The environment with BLAS/OpenMP pinned to one thread, so no library spins on the other core."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.update(extra or {})
    return env


def run_json(cmd: list[str], env: dict) -> dict:
    """Runs cmd in the repo and parses the JSON on its last stdout line."""
    result = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])} ... failed (exit {result.returncode}):\n{result.stderr.strip()}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def build_extension(*also: str) -> None:
    """build/python (the opdispatch package), and the targets ``also`` names, through SCons; a
    no-op when they are up to date."""
    build = run_scons(REPO, "-j2", os.path.join("build", "python"), *also, drop=(), timeout=None)  # the checkout's own build
    if build.returncode != 0:
        raise RuntimeError(f"scons failed:\n{build.stdout}\n{build.stderr}")


def peer_comparison(argv: Optional[list[str]], doc: str, name: str, needs: str,
                    run_ours: Callable[[str, int, str, str], dict], run_theirs: Callable[[str, str, int, str, str], dict],
                    report: Callable[[str, dict, dict], None]) -> int:
    """The main() of a benchmark that runs opgen and torchgen on PyTorch's yaml: ``--runs N``,
    ``needs`` (a backend yaml) must exist, ``run_ours(work, runs, yaml, tags)`` and, when the peer
    virtualenv has torchgen, ``run_theirs(python, work, runs, yaml, tags)`` in work/o and work/t of
    a temporary directory, then ``report(work, ours, theirs)`` (theirs: {} without the peer)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    yaml_path, tags_path = pytorch_yaml()
    if not os.path.exists(needs):
        print(f"{name}: {needs} not found", file=sys.stderr)
        return 2
    peer = ensure_torchgen()
    with tempfile.TemporaryDirectory(prefix=f"opgen-{name.replace('_', '-')}-") as work:
        for side in ("o", "t"):
            os.makedirs(os.path.join(work, side))
        ours = run_ours(os.path.join(work, "o"), args.runs, yaml_path, tags_path)
        theirs = run_theirs(peer, os.path.join(work, "t"), args.runs, yaml_path, tags_path) if peer else {}
        report(work, ours, theirs)
        if not theirs:
            print("\nNOTE: torchgen (torch 2.13.0) is unavailable in the peer virtualenv; opgen's figures only.")
    return 0
