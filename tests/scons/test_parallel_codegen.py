"""scons -jN renders the groups in worker processes (opgen/scons/codegen.py's _Workers): forked
while the SConscripts are read, sent their jobs by the first codegen action. A --codegen-only
build and the codegen steps of a full build (the `generated` alias) write the bytes and the
report of -j1. Forks are counted by a sitecustomize (nothing else forks here: SCons starts its
commands through subprocess, which does not call os.fork). Counts and bytes, never times."""
import os
import re

import pytest

from helpers import PROJECT_INPUTS, copy_project, run_scons, snapshot
from scons_helpers import GEN, GROUPS

CODEGEN_INPUTS = ("SConstruct", "site_scons", "opgen", "yaml")  # nothing compiles: no csrc/
COUNT_FORKS = '''
import os
_fork = os.fork
def _counted():
    pid = _fork()
    if pid:
        with open(os.environ["OPGEN_TEST_FORK_LOG"], "a") as log:
            log.write(f"{pid}\\n")
    return pid
os.fork = _counted
'''


@pytest.fixture(scope="module")
def fork_counter(tmp_path_factory):
    directory = tmp_path_factory.mktemp("count-forks")
    (directory / "sitecustomize.py").write_text(COUNT_FORKS)
    return directory


def build(root, fork_counter, *args):
    """A codegen build of a fresh copy under ``root`` with an empty cache of its own:
    (its tree, its [opgen] report lines, how many processes it forked)."""
    project = copy_project(root / "project", CODEGEN_INPUTS if "--codegen-only" in args else PROJECT_INPUTS)
    log = root / "forks.log"
    env = {"OPGEN_CACHE_DIR": str(root / "cache"), "PYTHONPATH": str(fork_counter),
           "OPGEN_TEST_FORK_LOG": str(log)}
    result = run_scons(project, "--cuda=off", *args, env=env)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    report = [line for line in result.stdout.splitlines() if re.match(r"\[opgen\] (regenerated|\d+ unchanged|codegen cache)", line)]
    forks = len(log.read_text().split()) if log.exists() else 0
    tree = {path: data for path, (data, _) in snapshot(project / GEN, ignore=()).items()}
    return tree, report, forks


@pytest.fixture(scope="module")
def serial(tmp_path_factory, fork_counter):
    tree, report, forks = build(tmp_path_factory.mktemp("serial"), fork_counter, "-j1", "--codegen-only")
    assert forks == 0
    assert report[0].startswith(f"[opgen] regenerated {GROUPS}/{GROUPS} groups")
    return tree, report


@pytest.mark.parametrize("args", [("-j2", "--codegen-only"), ("-j2", "generated")], ids=["codegen-only", "full-build-nodes"])
def test_two_jobs_render_in_two_workers_and_write_the_serial_bytes(tmp_path, fork_counter, serial, args):
    tree, report, forks = build(tmp_path, fork_counter, *args)
    assert forks == 2
    assert sorted(tree) == sorted(serial[0])
    assert tree == serial[0]
    assert report == serial[1]


def test_a_noop_forks_nothing(tmp_path, fork_counter):
    project_root = tmp_path
    build(project_root, fork_counter, "-j2", "--codegen-only")
    env = {"OPGEN_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(fork_counter),
           "OPGEN_TEST_FORK_LOG": str(tmp_path / "noop-forks.log")}
    result = run_scons(tmp_path / "project", "--cuda=off", "-j2", "--codegen-only", env=env)
    assert result.returncode == 0, result.stderr
    assert f"[opgen] regenerated 0/{GROUPS} groups" in result.stdout
    assert not (tmp_path / "noop-forks.log").exists()
