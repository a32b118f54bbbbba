"""Fixtures for the runtime tests: the C++ test binary, built by SCons on demand."""
import os
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def cpp_test_binary(repo_root: str) -> str:
    """build/bin/opdispatch_tests, (re)built through SCons; a no-op when it is up to date."""
    target = os.path.join("build", "bin", "opdispatch_tests")
    build = subprocess.run(
        [sys.executable, "-m", "SCons", "-Q", "-j2", target],
        cwd=repo_root, capture_output=True, text=True,
    )
    assert build.returncode == 0, f"scons failed to build {target}:\n{build.stdout}\n{build.stderr}"
    return os.path.join(repo_root, target)
