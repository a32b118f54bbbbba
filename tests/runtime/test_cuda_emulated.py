"""The CUDA tests on a machine without a GPU: the checkout's build, rebuilt against the CUDA
emulator (tests/cuda_emulator), runs test_cuda_ops.py, test_cuda_kernel_paths.py and
test_cuda_memory.py in a fresh interpreter with every CUDA kernel executed on the CPU.

The emulator runs each block's threads in turn on fibers, so it checks what the kernels compute
(index math, reduction plans and their second pass, the row folds, tiles, the allocator's pools),
and, with every tensor an allocation of its own (OPDISPATCH_CUDA_NO_CACHING=1) between guard
bytes, writes out of bounds; not timing, races or reads out of bounds: those need a GPU and
compute-sanitizer (docs/cuda.md)."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import PROJECT_INPUTS, run_scons

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cuda_emulator"))
from toolkit import build_env, make_toolkit  # noqa: E402

# The kernels' tests run with every tensor a guarded allocation of its own; the allocator's tests
# need its pools.
KERNEL_TESTS = ("tests/runtime/test_cuda_ops.py", "tests/runtime/test_cuda_kernel_paths.py")
ALLOCATOR_TESTS = ("tests/runtime/test_cuda_memory.py",)


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


def run_tests(root, env, files, extra_env):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
                         cwd=root, env={**os.environ, **env, **extra_env}, capture_output=True, text=True, timeout=1800)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    counts = {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|errors?|skipped)", summary)}
    assert run.returncode == 0 and counts.get("failed", 0) == 0, run.stdout[-6000:] + run.stderr[-2000:]
    return counts, summary


def test_the_kernel_tests_pass_with_kernels_run_by_the_emulator(emulated_project):
    counts, summary = run_tests(*emulated_project, KERNEL_TESTS, {"OPDISPATCH_CUDA_NO_CACHING": "1"})
    # The device tests ran: only the no-device cases (and the one too large to emulate) skip.
    assert counts.get("passed", 0) >= 230, summary


def test_the_allocator_tests_pass_on_the_emulator(emulated_project):
    counts, summary = run_tests(*emulated_project, ALLOCATOR_TESTS, {})
    assert counts.get("passed", 0) >= 10, summary


# ----- the emulator's own checks -----

OUT_OF_BOUNDS = r"""
#include <cuda_runtime.h>
#include <cstdio>
__global__ void write(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;  // one past the end
}
int main() {
  float* p = nullptr;
  cudaMalloc((void**)&p, 100 * sizeof(float));
  write<<<1, 128>>>(p, 100);
  std::printf("launched\n");
  std::fflush(stdout);
  return cudaFree(p) == cudaSuccess ? 0 : 1;
}
"""

DIVERGENT_BARRIER = r"""
#include <cuda_runtime.h>
__global__ void diverge(int* out) {
  if (threadIdx.x > 0) __syncthreads();
  out[threadIdx.x] = 1;
}
int main() {
  int* p = nullptr;
  cudaMalloc((void**)&p, 64 * sizeof(int));
  diverge<<<1, 64>>>(p);
  return 0;
}
"""


@pytest.fixture(scope="module")
def toolkit(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("the emulator's runtime needs g++")
    return make_toolkit(str(tmp_path_factory.mktemp("emulator") / "toolkit"))


def compiled_program(toolkit, tmp_path, source):
    (tmp_path / "program.cu").write_text(source)
    nvcc = build_env(toolkit)["NVCC"]
    subprocess.run([nvcc, "-o", str(tmp_path / "program.o"), "-c", "-std=c++17", str(tmp_path / "program.cu")],
                   check=True, capture_output=True, text=True)
    lib = os.path.join(toolkit, "lib64")
    subprocess.run(["g++", "-o", str(tmp_path / "program"), str(tmp_path / "program.o"), "-L", lib, "-lcudart",
                    f"-Wl,-rpath,{lib}"], check=True, capture_output=True, text=True)
    return subprocess.run([str(tmp_path / "program")], capture_output=True, text=True, timeout=60)


def test_a_write_out_of_bounds_stops_the_program_at_its_cuda_free(toolkit, tmp_path):
    run = compiled_program(toolkit, tmp_path, OUT_OF_BOUNDS)
    assert run.returncode != 0 and "launched" in run.stdout
    assert "wrote outside a 400-byte device allocation" in run.stderr, run.stderr


def test_a_divergent_barrier_stops_the_program_naming_the_thread(toolkit, tmp_path):
    run = compiled_program(toolkit, tmp_path, DIVERGENT_BARRIER)
    assert run.returncode != 0
    assert "thread (1, 0, 0) of block (0, 0, 0) reached a barrier that thread 0 did not" in run.stderr, run.stderr
