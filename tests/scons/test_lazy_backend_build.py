"""scons --backend=lazy in a copy of the session's built project: the lazy backend builds on top
of the in-tree library, a second build does nothing, and editing one operator's entry in the
lazy yaml regenerates and recompiles that group's lazy files only."""
import os

import pytest

from helpers import copy_built, snapshot
from scons_helpers import GEN, Build, ok, rewrite_in_a_later_second, scons

LAZY_LIBRARY = os.path.join("build", "lib", "libopdispatch_lazy.so")
LAZY_YAML = os.path.join("yaml", "lazy_native_functions.yaml")


def lazy_build(project):
    return scons(project, "--backend=lazy", target=LAZY_LIBRARY)


def lazy_groups(build):
    return build.progress("Lazy backend groups")


@pytest.fixture(scope="module")
def project(built_lazy_project, tmp_path_factory):
    root = copy_built(built_lazy_project.root, tmp_path_factory.mktemp("lazy-project") / "project")
    first = ok(Build(built_lazy_project.first_build))  # the in-tree library was built already: the backend on top
    (done, total), _ = lazy_groups(first)
    assert done == total > 50
    assert os.path.exists(root / LAZY_LIBRARY)
    assert "-o build/lib/libopdispatch.so" not in first.output
    return root


def test_noop_lazy_build_does_nothing(project):
    build = ok(lazy_build(project))
    assert lazy_groups(build)[0][0] == 0 and build.compiled == set()


def test_one_yaml_entry_edited_regenerates_and_recompiles_that_group_only(project):
    yaml = project / LAZY_YAML
    original = yaml.read_text()
    for text in (original.replace("  - where.ScalarSelf\n", ""), original):  # the edit, then its undo
        before = snapshot(project / GEN)
        rewrite_in_a_later_second(yaml, text)
        build = ok(lazy_build(project))
        assert lazy_groups(build) == ((1, lazy_groups(build)[0][1]), ["where"])
        assert build.regenerated[0] == 0  # no in-tree group
        written = {p for p, state in snapshot(project / GEN).items() if before.get(p) != state}
        # where.ScalarSelf's node, its generated kernel and that kernel's declaration
        assert written == {"backends/Lazy/ops/where_ir.h", "backends/Lazy/ops/where_Lazy.cpp",
                           "backends/Lazy/ops/where_native.h"}
        assert build.compiled == {"build/obj/gen/backends/Lazy/ops/where_Lazy.os"}
        assert "-o build/lib/libopdispatch_lazy.so" in build.output
        assert "-o build/lib/libopdispatch.so" not in build.output


def test_editing_a_non_native_node_rewrites_its_header_and_recompiles_what_includes_it(project):
    yaml = project / LAZY_YAML
    original = yaml.read_text()
    for text in (original.replace("opkind: lazy::cast", "opkind: lazy::convert"), original):
        before = snapshot(project / GEN)
        rewrite_in_a_later_second(yaml, text)
        build = ok(lazy_build(project))
        assert lazy_groups(build)[0][0] == 0  # no group's files change
        written = {p for p, state in snapshot(project / GEN).items() if before.get(p) != state}
        assert written == {"backends/Lazy/LazyNonNativeIr.h"}
        # the hand-written files that make non-native nodes (scalar and SymInt operands, cast)
        assert build.compiled == {"build/obj/backends/lazy/ir_operands.os", "build/obj/backends/lazy/non_native.os"}
