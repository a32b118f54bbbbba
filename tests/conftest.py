"""Shared paths and fixtures for every test room: the repo root (importable), tests/ (so every
room imports the harness as `helpers`), PyTorch's reference yaml and the project built once."""
import collections
import os
import shutil
import sys
import tempfile

import pytest
import yaml as pyyaml

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TESTS_DIR)
REAL_DATA_DIR = os.path.join(os.path.dirname(REPO_ROOT), "shared", "data", "pytorch-2.13")

for _path in (REPO_ROOT, TESTS_DIR):  # plain `pytest` as well as `python -m pytest`, any import mode
    if _path not in sys.path:
        sys.path.insert(0, _path)

from helpers import PROJECT_BUILD, copy_built, copy_project, run_scons  # noqa: E402
from quick_tier import is_quick  # noqa: E402
from worker_share import made_once, set_worker  # noqa: E402

# The suite never writes into the checkout's cache/ (it once left 2,033 entries of PyTorch's groups
# in the user's `opgen cache ls`): every in-process call and subprocess that names no cache of its
# own uses this session's, removed at the end. Set at import, before any test module reads it.
SESSION_CACHE_DIR = tempfile.mkdtemp(prefix="opgen-test-cache-")
os.environ["OPGEN_CACHE_DIR"] = SESSION_CACHE_DIR


def pytest_unconfigure(config):
    shutil.rmtree(SESSION_CACHE_DIR, ignore_errors=True)


def pytest_configure(config):
    config.addinivalue_line("markers", "quick: the tier run after each edit (-m quick; tests/quick_tier.py)")
    set_worker(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """The parallel run's split (tests/parallel_schedule.py); xdist is imported only when it runs."""
    from parallel_schedule import RoomOrFileScheduling
    return RoomOrFileScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if is_quick(item.nodeid):
            item.add_marker(pytest.mark.quick)

BuiltProject = collections.namedtuple("BuiltProject", "root first_build")


@pytest.fixture(scope="session")
def repo_root() -> str:
    return REPO_ROOT


@pytest.fixture(scope="session")
def real_data_dir() -> str:
    """../shared/data/pytorch-2.13, or a clean skip where it is absent."""
    if not os.path.isfile(os.path.join(REAL_DATA_DIR, "native_functions.yaml")):
        pytest.skip(f"PyTorch 2.13 reference yaml not found at {REAL_DATA_DIR}")
    return REAL_DATA_DIR


def read_yaml_variants(path):
    """(functions, methods): name -> qualified overloads, read from a native_functions.yaml
    with plain pyyaml, independently of opgen: an entry's `variants` (default: function);
    autogen'd names are functions."""
    functions, methods = {}, {}
    with open(path, encoding="utf-8") as handle:
        entries = pyyaml.safe_load(handle)
    for entry in entries:
        full = entry["func"].split("(")[0]
        variants = [v.strip() for v in str(entry.get("variants", "function")).split(",")]
        for variant, table in (("function", functions), ("method", methods)):
            if variant in variants:
                table.setdefault(full.split(".")[0], set()).add("aten::" + full)
        for generated in filter(None, (g.strip() for g in str(entry.get("autogen", "")).split(","))):
            functions.setdefault(generated.split(".")[0], set()).add("aten::" + generated)
    return functions, methods


@pytest.fixture(scope="session")
def yaml_variants_of():
    """read_yaml_variants, for tests in any room (each room has its own conftest module)."""
    return read_yaml_variants


@pytest.fixture(scope="session")
def largest_yaml() -> str:
    """The real yaml when present (the most to be nondeterministic about), else the repo's own."""
    real = os.path.join(REAL_DATA_DIR, "native_functions.yaml")
    return real if os.path.isfile(real) else os.path.join(REPO_ROOT, "yaml", "native_functions.yaml")


@pytest.fixture(scope="session")
def built_project(tmp_path_factory) -> BuiltProject:
    """A copy of the project with every default target built (PROJECT_BUILD), once per run for
    the SCons and remote rooms (made_once: one build shared by the parallel workers), and the
    CompletedProcess of that first build. Read it, never edit it: a test that edits takes its own
    copy (helpers.copy_built), which SCons finds up to date."""
    def make(directory):
        root = copy_project(directory)
        first = run_scons(root, *PROJECT_BUILD)
        assert first.returncode == 0, (first.stdout + first.stderr)[-4000:]
        return root, first
    return BuiltProject(*made_once(tmp_path_factory, "built-project", make))


def _with_backend(built_project, tmp_path_factory, backend) -> BuiltProject:
    """A copy of built_project with ``backend``'s library built on top (--verbose, as the SCons
    tests' builds), and that build, once per run; read it, never edit it (copy it: helpers.copy_built)."""
    def make(directory):
        root = copy_built(built_project.root, directory / "project")
        first = run_scons(root, *PROJECT_BUILD, "--verbose", f"--backend={backend}",
                          os.path.join("build", "lib", f"libopdispatch_{backend}.so"))
        assert first.returncode == 0, (first.stdout + first.stderr)[-4000:]
        return root, first
    return BuiltProject(*made_once(tmp_path_factory, f"built-{backend}-project", make))


@pytest.fixture(scope="session")
def built_xla_project(built_project, tmp_path_factory) -> BuiltProject:
    """built_project with the XLA backend built on top, once for the backend and distcc tests."""
    return _with_backend(built_project, tmp_path_factory, "xla")


@pytest.fixture(scope="session")
def built_lazy_project(built_project, tmp_path_factory) -> BuiltProject:
    """built_project with the lazy backend built on top, once for the lazy and same-second tests."""
    return _with_backend(built_project, tmp_path_factory, "lazy")
