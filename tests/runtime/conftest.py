"""Fixtures for the runtime tests: the C++ test binary and the opdispatch Python package, both
built by SCons on demand, plus per-test namespaces and libraries that are always closed."""
import importlib
import itertools
import os
import subprocess
import sys

import pytest


def _scons_build(repo_root: str, target: str) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "SCons", "-Q", "-j2", target],
        cwd=repo_root, capture_output=True, text=True,
    )
    assert build.returncode == 0, f"scons failed to build {target}:\n{build.stdout}\n{build.stderr}"


@pytest.fixture(scope="session")
def cpp_test_binary(repo_root: str) -> str:
    """build/bin/opdispatch_tests, (re)built through SCons; a no-op when it is up to date."""
    target = os.path.join("build", "bin", "opdispatch_tests")
    _scons_build(repo_root, target)
    return os.path.join(repo_root, target)


@pytest.fixture(scope="session")
def opdispatch(repo_root: str):
    """The opdispatch package from build/python, (re)built through SCons first."""
    target = os.path.join("build", "python")
    _scons_build(repo_root, target)
    path = os.path.join(repo_root, target)
    if path not in sys.path:
        sys.path.insert(0, path)
    module = importlib.import_module("opdispatch")
    assert os.path.dirname(module.__file__) == os.path.join(path, "opdispatch"), module.__file__
    module.register_device_type("xla", "XLA")  # the external device the tests use
    return module


@pytest.fixture(scope="session")
def _namespace_numbers():
    return itertools.count()


@pytest.fixture
def ns(_namespace_numbers) -> str:
    """A namespace no other test uses, so registrations never collide."""
    return f"t{next(_namespace_numbers)}"


@pytest.fixture
def make_lib(opdispatch):
    """make_lib(ns, kind="FRAGMENT") -> Library; every library made is closed after the test."""
    made = []

    def make(namespace: str, kind: str = "FRAGMENT"):
        lib = opdispatch.library.Library(namespace, kind)
        made.append(lib)
        return lib

    yield make
    for lib in reversed(made):
        lib.close()
