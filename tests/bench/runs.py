"""Running benchmark snippets in fresh processes: one thread for every math library, JSON back."""
from __future__ import annotations

import json
import os
import subprocess
from typing import Optional

from helpers import run_scons
from peer_env import REPO

OPDISPATCH_PATH = os.path.join(REPO, "build", "python")


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


def build_extension() -> None:
    """build/python (the opdispatch package) through SCons; a no-op when it is up to date."""
    build = run_scons(REPO, "-j2", os.path.join("build", "python"), drop=(), timeout=None)  # the checkout's own build
    if build.returncode != 0:
        raise RuntimeError(f"scons failed:\n{build.stdout}\n{build.stderr}")
