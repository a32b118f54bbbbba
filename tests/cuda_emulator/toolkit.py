"""Lays out the CUDA emulator as a toolkit that the build's nvcc tool accepts:

    DEST/bin/nvcc            the emulator's nvcc (this folder's `nvcc`)
    DEST/include/...         its cuda_runtime.h and cuda_runtime_api.h
    DEST/lib64/libcudart.so  runtime.cpp, compiled here with the host's C++ compiler

    python tests/cuda_emulator/toolkit.py DEST    # then: NVCC=DEST/bin/nvcc CUDA_HOME=DEST scons

A build made so runs its CUDA kernels on the CPU (tests/runtime/test_cuda_emulated.py runs the
CUDA tests against one), so the kernels' logic is tested on machines without a GPU."""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def make_toolkit(dest: str, cxx: str = "g++") -> str:
    """Writes the toolkit into ``dest`` (created) and returns dest. Raises CalledProcessError
    when the runtime does not compile."""
    for sub in ("bin", "lib64"):
        os.makedirs(os.path.join(dest, sub), exist_ok=True)
    shutil.copytree(os.path.join(HERE, "include"), os.path.join(dest, "include"), dirs_exist_ok=True)
    shutil.copy2(os.path.join(HERE, "nvcc"), os.path.join(dest, "bin", "nvcc"))
    subprocess.run([cxx, "-std=c++17", "-O2", "-fPIC", "-shared", "-I", os.path.join(dest, "include"),
                    os.path.join(HERE, "runtime.cpp"), "-o", os.path.join(dest, "lib64", "libcudart.so")],
                   check=True, capture_output=True, text=True)
    return dest


def build_env(toolkit: str) -> dict:
    """The variables that point a build at the toolkit (the nvcc tool reads both). ccache knows
    the emulator's nvcc by its content, not its mtime: a fresh clone's copy is the same compiler,
    and its compiles (minutes: the pointwise kernels' templates) hit."""
    return {"NVCC": os.path.join(toolkit, "bin", "nvcc"), "CUDA_HOME": toolkit, "CUDA_EMULATOR": "1",
            "CCACHE_COMPILERCHECK": "content"}


def main(argv) -> int:
    if len(argv) != 1:
        print("usage: toolkit.py DEST", file=sys.stderr)
        return 2
    toolkit = make_toolkit(os.path.abspath(argv[0]))
    print(" ".join(f"{k}={v}" for k, v in build_env(toolkit).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
