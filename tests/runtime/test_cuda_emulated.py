"""The CUDA tests on a machine without a GPU: the checkout's build, rebuilt against the CUDA
emulator (tests/cuda_emulator), runs test_cuda_ops.py, test_cuda_kernel_paths.py and
test_cuda_memory.py in a fresh interpreter with every CUDA kernel executed on the CPU.

The emulator runs each block's threads in turn on fibers, so it checks what the kernels compute
(index math, reduction plans and their second pass, the row folds, tiles, the allocator's pools)
but not timing, races or device memory faults: those need a GPU (docs/cuda.md)."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import PROJECT_INPUTS, run_scons

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cuda_emulator"))
from toolkit import build_env, make_toolkit  # noqa: E402

CUDA_TESTS = ("tests/runtime/test_cuda_ops.py", "tests/runtime/test_cuda_kernel_paths.py",
              "tests/runtime/test_cuda_memory.py")


@pytest.fixture(scope="session")
def emulated_project(opdispatch, repo_root, tmp_path_factory):
    """A copy of the checkout, its build included (so only the CUDA objects and the links
    rebuild), built against the emulator's toolkit; returns (root, env)."""
    if opdispatch._C._cuda_is_available():
        pytest.skip("a real GPU is present: the CUDA tests run on it")
    if shutil.which("g++") is None:
        pytest.skip("the emulator's runtime needs g++")
    base = tmp_path_factory.mktemp("cuda-emulated")
    env = build_env(make_toolkit(str(base / "toolkit")))
    root = base / "project"
    root.mkdir()
    for name in (*PROJECT_INPUTS, "tests", "build", ".sconsign.dblite"):
        source = os.path.join(repo_root, name)
        if os.path.isdir(source):
            shutil.copytree(source, root / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".hypothesis"))
        elif os.path.exists(source):
            shutil.copy2(source, root / name)
    build = run_scons(root, "-j2", "build/python", drop=(), env=env, timeout=None)
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    assert "NVCC build/obj/native/cuda/" in build.stdout, build.stdout[-2000:]  # the kernels went through the emulator
    return root, env


def test_the_cuda_tests_pass_with_kernels_run_by_the_emulator(emulated_project):
    root, env = emulated_project
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CUDA_TESTS],
                         cwd=root, env={**os.environ, **env}, capture_output=True, text=True, timeout=1800)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|errors?|skipped)", summary)}
    assert run.returncode == 0 and counts.get("failed", 0) == 0, run.stdout[-6000:] + run.stderr[-2000:]
    # The device tests ran: only the no-device cases (and the one too large to emulate) skip.
    assert counts.get("passed", 0) >= 240, summary
