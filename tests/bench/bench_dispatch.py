"""Benchmark: the dispatcher's C++ per-call overhead (bench_dispatch.cpp) vs a direct call.

    python tests/bench/bench_dispatch.py

A report, not a test. It builds build/lib/libopdispatch.so through SCons (a no-op when it is up
to date), compiles bench_dispatch.cpp against it with the flags csrc/SConscript gives the C++
tests into build/bench/bench_dispatch, runs that and prints its table. The production build
never compiles benchmark sources.
"""
from __future__ import annotations

import os
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE)]  # tests/, for the shared harness (helpers)
from helpers import REPO_ROOT, run_scons  # noqa: E402

LIBRARY = os.path.join("build", "lib", "libopdispatch.so")
SOURCE = os.path.join(_HERE, "bench_dispatch.cpp")
BINARY = os.path.join(REPO_ROOT, "build", "bench", "bench_dispatch")
# csrc/SConscript's prog_env (the C++ tests): same language level, optimization and guard.
FLAGS = ["-std=c++17", "-O2", "-fPIC", "-Wall", "-DOP_ASSERT_NO_TENSOR_METHODS",
         "-I" + os.path.join(REPO_ROOT, "csrc"), "-I" + os.path.join(REPO_ROOT, "build", "gen")]
# The binary finds the library next to it, as build/bin's programs do ($ORIGIN/../lib).
LINK = ["-L" + os.path.join(REPO_ROOT, "build", "lib"), "-lopdispatch", "-Wl,-rpath,$ORIGIN/../lib"]


def build_library() -> None:
    build = run_scons(REPO_ROOT, "-j2", LIBRARY, drop=(), timeout=None)  # the checkout's own build
    if build.returncode != 0:
        raise RuntimeError(f"scons {LIBRARY} failed:\n{(build.stdout + build.stderr)[-3000:]}")


def build_benchmark() -> str:
    os.makedirs(os.path.dirname(BINARY), exist_ok=True)
    compile_and_link = ["g++", *FLAGS, SOURCE, "-o", BINARY, *LINK]
    result = subprocess.run(compile_and_link, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(compile_and_link)} failed:\n{result.stderr[-3000:]}")
    return BINARY


def main() -> int:
    try:
        build_library()
        binary = build_benchmark()
    except RuntimeError as error:
        print(f"bench_dispatch: {error}", file=sys.stderr)
        return 1
    return subprocess.run([binary]).returncode


if __name__ == "__main__":
    sys.exit(main())
