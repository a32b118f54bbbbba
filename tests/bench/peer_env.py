"""The benchmarks' peer environment: torch (for torchgen) in its own virtualenv, never in opgen's.

The virtualenv lives at <repo>/build/bench-venv and is created with --system-site-packages, so it
sees the main environment's packages (PyYAML, ...) while torch is installed only inside it.
$OPGEN_BENCH_VENV names another one that already has torch (another checkout's build/bench-venv),
so a second checkout need not download torch again.
"""
from __future__ import annotations

import os
import subprocess
import sys
import venv
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_DIR = os.environ.get("OPGEN_BENCH_VENV") or os.path.join(REPO, "build", "bench-venv")
PEER_REQUIREMENT = "torch==2.13.0"
PYTORCH_DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "pytorch-2.13"))


def venv_python() -> str:
    return os.path.join(VENV_DIR, "bin", "python")


def _imports(python: str, module: str) -> bool:
    result = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
    return result.returncode == 0


def _create_venv() -> None:
    if not os.path.exists(venv_python()):
        print(f"peer: creating virtualenv {VENV_DIR}", file=sys.stderr)
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(VENV_DIR)


def _install(requirement: str) -> bool:
    print(f"peer: pip install {requirement} into {VENV_DIR}", file=sys.stderr)
    result = subprocess.run([venv_python(), "-m", "pip", "install", requirement], capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        print(f"peer: pip install {requirement} failed (exit {result.returncode}):\n{tail}", file=sys.stderr)
    return result.returncode == 0


def ensure_torchgen() -> Optional[str]:
    """The virtualenv's python with torchgen importable, or None (with a note on stderr)."""
    try:
        _create_venv()
    except Exception as exc:  # noqa: BLE001 - a report, not a test: say why and carry on
        print(f"peer: cannot create {VENV_DIR}: {exc}", file=sys.stderr)
        return None
    python = venv_python()
    if _imports(python, "torchgen") or (_install(PEER_REQUIREMENT) and _imports(python, "torchgen")):
        return python
    print("peer: NOTE torchgen is unavailable; reporting opgen's numbers only", file=sys.stderr)
    return None


def pytorch_yaml() -> tuple[str, str]:
    """(native_functions.yaml, tags.yaml) of PyTorch 2.13; exits with status 2 when absent."""
    yaml_path = os.path.join(PYTORCH_DATA, "native_functions.yaml")
    tags_path = os.path.join(PYTORCH_DATA, "tags.yaml")
    missing = [p for p in (yaml_path, tags_path) if not os.path.isfile(p)]
    if missing:
        print(f"bench: PyTorch 2.13's yaml is missing ({', '.join(missing)}); "
              f"put native_functions.yaml and tags.yaml in {PYTORCH_DATA}", file=sys.stderr)
        sys.exit(2)
    return yaml_path, tags_path
