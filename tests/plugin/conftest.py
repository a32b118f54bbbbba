"""Fixtures for opgen used as a plugin by another project: a fresh virtualenv into which the
session's built project is installed as a runtime SDK (`scons install PREFIX=<venv>`: copies,
nothing compiles) and this checkout is `pip install`ed, non-editable; and the downstream project
of tests/plugin/downstream copied outside the checkout and built once in that venv."""
import os
import shutil
import subprocess
import sys
import types

import pytest

from helpers import DROPPED_ENV, PROJECT_BUILD, REPO_ROOT, copy_built, run_scons, scons_env
from plugin_venvs import make_venv
from worker_share import made_once

DOWNSTREAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "downstream")
# The checkout must not leak into the venv's processes: only what was installed counts.
VENV_DROPPED_ENV = DROPPED_ENV + ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "OPGEN_RUNTIME")


class Venv(types.SimpleNamespace):
    """root, python; env(**extra) is the environment its processes run with: its bin/ first on
    PATH, and opgen's caches and ccache private to the session."""

    def env(self, **extra):
        bin_dir = os.path.join(self.root, "bin")
        settings = {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "OPGEN_CACHE_DIR": self.cache_dir,
                    "CCACHE_DIR": self.ccache_dir, **extra}
        return scons_env(VENV_DROPPED_ENV + ("CCACHE_*",), settings)

    def run(self, args, cwd, timeout=900, **extra):
        return subprocess.run([self.python, *map(str, args)], cwd=cwd, env=self.env(**extra), capture_output=True,
                              text=True, timeout=timeout)

    def scons(self, cwd, *args, **extra):
        return self.run(["-m", "SCons", "-Q", *args], cwd, **extra)


@pytest.fixture(scope="session")
def plugin_venv(built_project, tmp_path_factory) -> Venv:
    """The venv, made once per run (made_once: the parallel workers share it; only read by the tests)."""
    return Venv(**made_once(tmp_path_factory, "plugin", lambda base: _make_plugin_venv(built_project, base)))


def _make_plugin_venv(built_project, base) -> dict:
    root = base / "venv"
    make_venv(root)
    venv = Venv(root=str(root), python=str(root / "bin" / "python"), cache_dir=str(base / "opgen-cache"),
                ccache_dir=str(base / "ccache"))

    project = copy_built(built_project.root, base / "runtime-project")
    install = run_scons(project, *PROJECT_BUILD, "install", f"PREFIX={root}")
    assert install.returncode == 0, (install.stdout + install.stderr)[-4000:]
    venv.install_log = install.stdout

    # setuptools' build directory keeps files of modules that no longer exist (it never cleans
    # build/pip/lib), and the wheel would ship them: build from a clean one.
    shutil.rmtree(os.path.join(REPO_ROOT, "build", "pip"), ignore_errors=True)
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", venv.python, "install", "--no-deps",
                          "--no-build-isolation", "--no-index", "-q", REPO_ROOT],
                         cwd=base, env=scons_env(VENV_DROPPED_ENV), capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return vars(venv)


@pytest.fixture(scope="session")
def downstream_built(plugin_venv, tmp_path_factory):
    """The downstream project (outside the checkout), built once; read it, never edit it (tests that edit take a copy: SCons finds the copy up to date)."""
    base = tmp_path_factory.mktemp("downstream")
    root = base / "project"
    shutil.copytree(DOWNSTREAM, root)
    build = plugin_venv.scons(root, "-j2")
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    return types.SimpleNamespace(root=root, first_build=build)
