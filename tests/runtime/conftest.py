"""Fixtures for the runtime tests: the C++ test binary, the opdispatch Python package and the
sample xla backend, all built by SCons on demand, plus per-test namespaces and libraries that
are always closed."""
import importlib
import itertools
import os
import shutil
import sys

import pytest

from helpers import run_scons


def _scons_build(repo_root: str, target: str, *options: str) -> None:
    # The checkout's own build, as the user's environment configures it: nothing dropped.
    build = run_scons(repo_root, "-j2", *options, target, drop=(), timeout=None)
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
    module.register_device_type("lazy", "Lazy")  # the external device the tests register kernels for
    return module


@pytest.fixture(scope="session")
def test_ops(opdispatch, repo_root: str):
    """opdispatch_test_ops, the tests' own C++ operators (csrc/tests/python/test_ops.cpp): an
    extension of their own in build/tests/python, not in opdispatch._C, (re)built through SCons."""
    target = os.path.join("build", "tests", "python")
    _scons_build(repo_root, target)
    path = os.path.join(repo_root, target)
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module("opdispatch_test_ops")


@pytest.fixture(scope="session")
def cuda(opdispatch):
    """The opdispatch package, when a CUDA device can run kernels (the CUDA tests skip without one)."""
    if not opdispatch._C._cuda_is_available():
        pytest.skip("no CUDA device available")
    return opdispatch


@pytest.fixture(scope="session")
def aten(opdispatch):
    """The aten operator namespace (opdispatch.ops.aten)."""
    return opdispatch.ops.aten


@pytest.fixture(scope="session")
def xla(opdispatch, repo_root: str):
    """opdispatch.xla with the sample backend loaded (scons --backend=xla first). Its kernels
    and CPU fallback stay registered for the rest of the session, which is why the other
    tests register their Python kernels at the Lazy key instead of XLA."""
    _scons_build(repo_root, os.path.join("build", "python"), "--backend=xla")
    module = importlib.import_module("opdispatch.xla")
    assert module.is_built(), "scons --backend=xla did not build opdispatch/_xla"
    return module


@pytest.fixture(scope="session")
def lazy_python(repo_root: str) -> str:
    """build/python with the lazy backend (scons --backend=lazy), for programs that run in their
    own interpreter (test_lazy_backend.py): its kernels and fallback at the Lazy key would take the
    place of the Python kernels the other tests register there, so this process never loads it."""
    _scons_build(repo_root, os.path.join("build", "python"), "--backend=lazy")
    return os.path.join(repo_root, "build", "python")


@pytest.fixture
def python_tree_without(opdispatch, repo_root: str, tmp_path):
    """python_tree_without("_xla"): a PYTHONPATH whose opdispatch is the built one minus that
    backend extension, as in a build without the backend: build/python and build/lib copied side
    by side (the extension finds the library through a relative rpath), the module files left out."""
    def tree(extension: str) -> str:
        for name in ("python", "lib"):
            shutil.copytree(os.path.join(repo_root, "build", name), tmp_path / name, symlinks=True,
                            ignore=shutil.ignore_patterns(f"{extension}.*", "__pycache__"))
        return str(tmp_path / "python")
    return tree


@pytest.fixture
def backend_fallbacks() -> dict:
    """Dispatch-table rows every operator gets from C++ backends loaded into this session:
    once the xla fixture has loaded the backend, its CPU fallback fills the XLA row of every
    operator without an XLA kernel. Functionalization's fallback fills the Functionalize row of
    every operator without a Functionalize kernel (or a decomposition it runs there). Tests that
    check whole tables add these rows."""
    rows = {"Functionalize": "functionalize fallback"}
    return {**rows, "XLA": "xla cpu fallback"} if "opdispatch._xla" in sys.modules else rows


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
