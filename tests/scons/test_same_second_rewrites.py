"""A build that rewrites generated files within the second of the build before (SCons keeps
whole-second timestamps) recompiles every object that includes one of them: a generated group
unit, a hand-written kernel of the library (csrc/native) and a backend's kernel (csrc/backends/
lazy); tests/plugin/test_downstream_same_second.py does the same for a downstream project's kernel.
Each build runs with helpers.same_second_env(), which gives every rewritten generated file an mtime
in the second of its previous write: the timing that once left graph.os stale
(opgen/scons/rebuild.py has the mechanisms) happens on every rewrite."""
import os

from helpers import copy_built, same_second_env, snapshot
from include_graph import IncludeGraph
from scons_helpers import GEN, ok, rewrite_in_a_later_second, scons, with_add_default

YAML = os.path.join("yaml", "native_functions.yaml")
LAZY_YAML = os.path.join("yaml", "lazy_native_functions.yaml")
LAZY_LIBRARY = os.path.join("build", "lib", "libopdispatch_lazy.so")
DERIVATIVES = os.path.join("yaml", "derivatives.yaml")


def edit_and_build(project, yaml, text, *args, target=None):
    """Writes ``text`` to ``yaml`` (a later second than its last edit) and builds under
    same_second_env(); returns (build, written): the generated files the build rewrote (paths
    relative to the project), each checked to have kept the whole second of its previous mtime."""
    before = snapshot(project / GEN)
    rewrite_in_a_later_second(yaml, text)
    build = ok(scons(project, *args, target=target, env=same_second_env()))
    after = snapshot(project / GEN)
    written = {p for p in after if before.get(p) != after[p]}
    for path in written & set(before):
        assert after[path][1] // 10**9 == before[path][1] // 10**9, f"{path} left the second of its previous write"
    return build, {os.path.join(GEN, p) for p in written}


def test_in_tree_includers_of_a_header_rewritten_in_the_same_second_recompile(built_project, tmp_path):
    project = copy_built(built_project.root, tmp_path / "project")
    yaml, derivatives = project / YAML, project / DERIVATIVES
    for alpha in ("2", "1"):  # the edit, then its undo; the derivatives entry repeats the schema
        rewrite_in_a_later_second(derivatives, with_add_default(derivatives.read_text(), alpha))
        build, written = edit_and_build(project, yaml, with_add_default(yaml.read_text(), alpha))
        assert os.path.join(GEN, "ops", "add.h") in written
        expected = IncludeGraph(str(project)).objects_depending_on(written)
        # every kind of includer: the group's generated unit, a hand-written kernel, a test object
        assert {os.path.join("build", "obj", "gen", "ops", "add_unit.os"),
                os.path.join("build", "obj", "native", "binary_ops.os")} <= expected
        assert build.compiled == expected, f"not recompiled: {sorted(expected - build.compiled)}"


def test_backend_kernels_including_a_header_rewritten_in_the_same_second_recompile(built_lazy_project, tmp_path):
    project = copy_built(built_lazy_project.root, tmp_path / "project")
    ok(scons(project, "--backend=lazy", target=LAZY_LIBRARY))  # up to date: the lazy backend is built
    yaml = project / LAZY_YAML
    original = yaml.read_text()
    for text in (original.replace("opkind: lazy::cast", "opkind: lazy::convert"), original):
        build, written = edit_and_build(project, yaml, text, "--backend=lazy", target=LAZY_LIBRARY)
        assert written == {os.path.join(GEN, "backends", "Lazy", "LazyNonNativeIr.h")}
        assert build.compiled == {"build/obj/backends/lazy/ir_operands.os", "build/obj/backends/lazy/non_native.os"}
