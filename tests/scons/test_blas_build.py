"""--blas=auto|on|off (opgen/scons/toolset/blas.py) on a copy of the session's built project
(built with the default, auto): switching the BLAS off recompiles the one gemm object and
relinks, the library then names no BLAS and the linalg tests pass on it; switching it back on
compiles that object alone, with the BLAS's header and define. The tests of this module run in
order on one copy (pytest's default order)."""
import os
import shutil
import subprocess
import sys

import pytest

from helpers import PROJECT_BUILD, REPO_ROOT, copy_built, run_scons_loud, scons_env
from opgen.scons.toolset.blas import find_blas
from scons_helpers import LIBRARY, Build

GEMM_OBJECT = os.path.join("build", "obj", "native", "cpu", "gemm_kernels.os")
FOUND = find_blas()  # what --blas=auto uses here, None without a BLAS
LINALG_TESTS = os.path.join("tests", "runtime", "test_ops_linalg.py")
needs_blas = pytest.mark.skipif(FOUND is None, reason="no BLAS installed (pip install scipy-openblas32)")


def names_blas(root):
    """Whether the built library calls a cblas gemm (its dynamic symbols name it)."""
    return b"cblas_sgemm" in (root / LIBRARY).read_bytes()


def build(project, *args):
    """The default targets, with the notices (-Q would quiet "[opgen] BLAS: ...")."""
    result = run_scons_loud(project, *PROJECT_BUILD, *args)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return Build(result)


@pytest.fixture(scope="module")
def project(built_project, tmp_path_factory):
    return copy_built(built_project.root, tmp_path_factory.mktemp("blas-project") / "project")


@pytest.fixture(scope="module")
def blas_off(project):
    return build(project, "--blas=off")


def test_the_default_build_uses_the_blas_it_finds(built_project):
    assert names_blas(built_project.root) == (FOUND is not None)


def test_blas_off_recompiles_only_the_gemm_kernel_and_relinks(project, blas_off):
    assert "[opgen] BLAS: off (hand-written gemm)" in blas_off.output
    assert blas_off.compiled == ({GEMM_OBJECT} if FOUND else set())
    assert blas_off.linked == (FOUND is not None)
    assert not names_blas(project)
    again = build(project, "--blas=off")
    assert not again.compiled and not again.linked


def test_the_linalg_tests_pass_without_a_blas(project, blas_off):
    """tests/runtime/test_ops_linalg.py on the copy: its fixture's build is the same --blas=off
    build (SCONSFLAGS), so it finds everything up to date."""
    shutil.copytree(os.path.join(REPO_ROOT, "tests"), project / "tests", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", LINALG_TESTS],
                            cwd=project, capture_output=True, text=True, timeout=600,
                            env=scons_env(env={"SCONSFLAGS": " ".join((*PROJECT_BUILD, "--blas=off"))}))
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert " passed" in result.stdout and not names_blas(project)


@needs_blas
def test_blas_on_compiles_only_the_gemm_kernel_with_the_blas_header(project, blas_off):
    description, include_dir = FOUND[0], FOUND[1]
    back = build(project, "--blas=on", "--verbose")
    assert f"[opgen] BLAS: {description}" in back.output
    assert back.compiled == {GEMM_OBJECT} and back.linked
    compile_line = next(line for line in back.result.stdout.splitlines() if f"-o {GEMM_OBJECT} -c " in line)
    assert "-DOP_WITH_BLAS" in compile_line and f"-isystem {include_dir}" in compile_line
    assert f"-rpath={FOUND[2]}" in back.result.stdout  # the library finds the BLAS where it is
    assert names_blas(project)
    again = build(project, "--blas=auto")
    assert not again.compiled and not again.linked


def test_an_unknown_blas_mode_exits_2(project):
    result = run_scons_loud(project, *PROJECT_BUILD, "--blas=maybe", "-n")
    assert result.returncode == 2 and "--blas" in result.stderr
