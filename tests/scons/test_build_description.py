"""`scons`, `opgen select` and `opgen generate` read one description of the build
(opgen/project.py): on the same inputs, `scons --codegen-only` writes the tree `opgen generate`
writes, byte for byte, and `scons --ops=FILE` generates the closure `opgen select FILE` computes."""
import os
import re
import subprocess
import sys

import pytest

from helpers import copy_project, run_scons, snapshot

GEN = os.path.join("build", "gen")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("description") / "project")


def _opgen(project, *args):
    run = subprocess.run([sys.executable, "-m", "opgen", *args], cwd=project, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _generated_groups(project) -> set[str]:
    return {name[: -len("_ops.h")] for name in os.listdir(os.path.join(project, GEN, "ops")) if name.endswith("_ops.h")}


def test_scons_and_opgen_generate_write_the_same_tree(project, tmp_path):
    build = run_scons(project, "--codegen-only", "--cuda=off")
    assert build.returncode == 0, build.stderr[-3000:]
    _opgen(project, "generate", "yaml/native_functions.yaml", "--derivatives", "yaml/derivatives.yaml", "--out", str(tmp_path / "gen"))
    ours = {path: digest for path, (digest, *_) in snapshot(project / GEN).items()}
    theirs = {path: digest for path, (digest, *_) in snapshot(tmp_path / "gen").items()}
    assert ours == theirs and len(ours) > 500


def test_scons_ops_generates_the_closure_opgen_select_computes(project):
    (project / "ops.txt").write_text("mm\nadd.Tensor\n")
    build = run_scons(project, "--codegen-only", "--cuda=off", "--ops=ops.txt")
    assert build.returncode == 0, build.stderr[-3000:]
    generated = _generated_groups(project)
    report = _opgen(project, "select", "ops.txt")
    closure = re.search(r"^closure: (\d+) of (\d+) operator groups", report, re.M)
    # The build generates the kept groups and, for the kernel files compiled for them, the headers
    # of the others those files implement (declared only: neither compiled nor registered).
    declared_line = re.search(r"^declared only: (\d+) groups[^:]*: (.*)$", report, re.M)
    declared = set(declared_line.group(2).split(", ")) if declared_line else set()
    assert declared_line is None or int(declared_line.group(1)) == len(declared)
    kept = set(generated) - declared
    assert closure and int(closure.group(1)) == len(kept) < int(closure.group(2))
    assert declared <= set(generated)
    explained = _opgen(project, "select", "ops.txt", *(f"--explain={g}" for g in sorted(kept)[:5]))
    assert "not in the build" not in explained


def test_a_bad_option_is_named_alike_by_scons_and_opgen_select(project):
    (project / "ops.txt").write_text("mm\n")
    build = run_scons(project, "--codegen-only", "--cuda=off", "--backend=tpu")
    select = subprocess.run([sys.executable, "-m", "opgen", "select", "ops.txt", "--backend=tpu"], cwd=project,
                            capture_output=True, text=True, timeout=600)
    assert build.returncode == select.returncode == 2
    message = "--backend=tpu: no such backend; available: lazy, xla"
    assert message in build.stderr and message in select.stderr
