"""scons --codegen-only: SCons gets a node only for the groups the plan finds out of date, so a
no-op walks a handful of nodes whatever the yaml's size; what is regenerated, written, explained
and cleaned stays what one node per group gave. Counts, not times (tests/bench/bench_scons.py
times it on PyTorch's yaml)."""
import os
import re

import pytest

from helpers import copy_project, snapshot
from scons_helpers import GEN, GROUPS, changed_files, edit_add_default, ok, scons

CODEGEN_INPUTS = ("SConstruct", "site_scons", "opgen", "yaml")  # nothing compiles: no csrc/


def codegen(project, *args):
    return ok(scons(project, "--codegen-only", *args, target=None))


def node_count(build) -> int:
    """Every node SCons created (--debug=count's post-build Node.Node)."""
    match = re.search(r"^\s*\d+\s+\d+\s+\d+\s+(\d+)\s+Node\.Node$", build.result.stdout, re.MULTILINE)
    assert match, build.result.stdout[-2000:]
    return int(match.group(1))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = copy_project(tmp_path_factory.mktemp("codegen-only") / "project", CODEGEN_INPUTS)
    first = codegen(root, "--debug=count")
    assert first.regenerated == (GROUPS, GROUPS)
    assert node_count(first) > 2 * GROUPS  # a first build declares every group: its node and its Value
    return root


@pytest.fixture
def yaml_file(project):
    path = project / "yaml" / "native_functions.yaml"
    yield path
    edit_add_default(project, "1")
    codegen(project)


def test_noop_declares_no_group(project):
    before = snapshot(project / GEN)
    build = codegen(project, "--debug=count")
    assert build.regenerated == (0, GROUPS)
    assert node_count(build) < 21  # the umbrellas, the alias, directories, the yamls: no group's node
    assert snapshot(project / GEN) == before


def test_edit_declares_and_explains_only_the_edited_group(project, yaml_file):
    noop_nodes = node_count(codegen(project, "--debug=count"))
    before = snapshot(project / GEN)
    edit_add_default(project, "2")
    build = codegen(project, "--debug=explain", "--debug=count")
    assert build.regenerated == (1, GROUPS) and build.regenerated_names == ["add"]
    assert "`add:" in build.result.stdout  # --debug=explain names the group whose key changed
    # add's node, its Value, the ops/ directory, and the old Value --debug=explain reads back
    assert node_count(build) <= noop_nodes + 4
    changed = changed_files(before, snapshot(project / GEN))
    assert changed and all(os.path.basename(p).startswith("add") for p in changed)


def test_a_deleted_file_regenerates_its_group(project):
    victim = project / GEN / "ops" / "mm_native.h"
    text = victim.read_bytes()
    victim.unlink()
    build = codegen(project)
    assert build.regenerated == (1, GROUPS) and build.regenerated_names == ["mm"]
    assert victim.read_bytes() == text


def test_clean_removes_every_group_file(project):
    ops = project / GEN / "ops"
    try:
        ok(scons(project, "--codegen-only", "-c", target=None))
        assert not [name for name in os.listdir(ops) if not name.startswith(".")]
    finally:
        build = codegen(project)
        assert build.regenerated == (GROUPS, GROUPS)
