"""The edit matrix: every kind of single-operator edit a user makes to the yaml (and to the
operator's kernel, where the edit needs it) regenerates that operator's group and recompiles
exactly the objects that depend on what changed, on real SCons builds of a temp copy.

Most edits are made to operators with a Tensor method variant: before the TensorBase split, any
edit to a method operator recompiled every object, because every object saw class op::Tensor.

For each edit, three things are checked against the build's own compile lines:
- the recompiled set equals the objects whose source or included files (read from the sources,
  tests/scons/include_graph.py) changed: SCons missed nothing and added nothing;
- that set lies within the edited group's objects, the objects that include the group's headers
  by name, the kernel files the edit touched, and UMBRELLA_CONSUMERS;
- the generated files that changed belong to the edited group, or are umbrella headers.
Then the library links and opdispatch imports from the built tree and runs the operator.

Each edit runs on its own copy of the session's built project (tests/conftest.py, its objects
mostly from ccache), so edits never depend on each other's reverts.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from edit_cases import EDITS, apply_edit
from include_graph import IncludeGraph
from opgen.gen.engine.plan import STATE_FILE
from helpers import copy_built, snapshot
from scons_helpers import GEN, ok, scons

# The one object built from code that calls operators as methods (api/tensor.h includes every
# group's methods): any edit that touches a method recompiles it, and nothing else may.
UMBRELLA_CONSUMERS = {"build/obj/tests/test_tensor_methods.o"}
FROZEN_LINE = "[opgen] only codegen inputs changed since the last build"
UMBRELLA_HEADERS = {"Functions.h", "MetaFunctions.h", "MethodOperators.h", "NativeFunctions.h", "Operators.h",
                    "TensorMethods.h"}


def _group_files(project, group: str) -> set[str]:
    """The edited group's generated files (project-relative), from the build's codegen state."""
    with open(project / GEN / STATE_FILE, encoding="utf-8") as handle:
        groups = json.load(handle)["groups"]
    return {os.path.join(GEN, path) for path in groups.get(group, {}).get("files", [])}


def _group_objects(graph: IncludeGraph, files: set[str]) -> set[str]:
    return {graph.objects[f] for f in files if f in graph.objects}


def _run_check(project, code: str):
    program = "import opdispatch as op\nt = op.tensor\n" + textwrap.dedent(code)
    env = {**os.environ, "PYTHONPATH": str(project / "build" / "python")}
    run = subprocess.run([sys.executable, "-c", program], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.fixture(scope="module")
def built(built_project):
    """Every default target built (scons(target=None)); only read here, edits go to copies."""
    return built_project.root


def _edited_build(built, root, edit):
    """Copies the built project to ``root``, applies ``edit`` and builds: (project, the generated
    files' bytes before, the objects including the group's headers by name before, the hand-written
    files the edit touched, the build)."""
    project = copy_built(built, root)
    if not edit.sources:
        # A no-op first, as in the checkout a user edits: it records the build where the copy is
        # (opgen/scons/noop.py), so an edit of the yaml alone freezes the groups it leaves as they
        # are (an edit of a kernel too walks every group whatever the record says).
        ok(scons(project, target=None))
    before = {p: data for p, (data, _) in snapshot(project / GEN).items()}
    graph_before = IncludeGraph(str(project))
    by_name_before = graph_before.objects_including_by_name(_headers_by_name(project, edit.group))
    touched = apply_edit(project, edit)
    return project, before, by_name_before, touched, scons(project, target=None)


@pytest.fixture(scope="module")
def edited_builds(built, tmp_path_factory, request):
    """edit name -> the future of _edited_build, for the edits this session selected, two at a
    time: each build is mostly one process (SCons' reading, codegen, a compile or two, the links),
    so two copies building at once keep both cores busy. Each edit still has a copy of its own."""
    selected = [item.callspec.params["edit"] for item in request.session.items
                if item.module is request.module and item.originalname == "test_one_operator_edit_recompiles_only_what_depends_on_it"]
    with ThreadPoolExecutor(2) as pool:
        yield {edit.name: pool.submit(_edited_build, built, tmp_path_factory.mktemp(edit.name) / "project", edit)
               for edit in selected}


@pytest.mark.parametrize("edit", EDITS, ids=[e.name for e in EDITS])
def test_one_operator_edit_recompiles_only_what_depends_on_it(built, edited_builds, edit):
    project, before, by_name_before, touched, build = edited_builds[edit.name].result()
    ok(build)

    after = {p: data for p, (data, _) in snapshot(project / GEN).items()}
    changed_gen = {os.path.join(GEN, p) for p in set(before) | set(after) if before.get(p) != after.get(p)}
    graph = IncludeGraph(str(project))

    # 1. SCons recompiled exactly what depends on a changed file.
    expected = graph.objects_depending_on(changed_gen | touched)
    assert build.compiled == expected, (f"recompiled but nothing it includes changed: {sorted(build.compiled - expected)}; "
                                        f"not recompiled though it changed: {sorted(expected - build.compiled)}")

    # 2. ... which is the group's own objects, its includers by name, the edited kernels, the umbrella consumers.
    group_files = _group_files(project, edit.group) | (_group_files(built, edit.group) if edit.group else set())
    allowed = (_group_objects(graph, group_files) | by_name_before
               | graph.objects_including_by_name(_headers_by_name(project, edit.group))
               | {graph.objects[p] for p in touched if p in graph.objects} | UMBRELLA_CONSUMERS)
    assert build.compiled <= allowed, f"objects outside the edited group recompiled: {sorted(build.compiled - allowed)}"

    # 3. Only the group's files (and umbrella include lists) were rewritten.
    assert changed_gen <= group_files | {os.path.join(GEN, u) for u in UMBRELLA_HEADERS}, sorted(changed_gen - group_files)

    if edit.name == "reordered_and_commented":
        assert build.regenerated == (0, build.regenerated[1]) and build.compiled == set() and not build.linked
    elif edit.name == "operator_removed":
        removed = _group_files(built, edit.group)
        assert removed and not _group_files(project, edit.group)
        assert not any((project / path).exists() for path in removed)
        assert build.linked
    else:
        assert build.regenerated[0] >= 1 and edit.group in build.regenerated_names
        assert bool(build.compiled) == edit.changes_code and bool(changed_gen) == edit.changes_code
    # Frozen groups (opgen/scons/frozen.py): an edit of the yaml alone walks the changed groups only.
    assert (FROZEN_LINE in build.output) == (not edit.sources), build.output[-3000:]
    if edit.has_method and edit.changes_code and edit.name not in ("reordered_and_commented", "kernel_renamed"):
        assert UMBRELLA_CONSUMERS <= build.compiled  # a method changed: the method test object recompiles

    _run_check(project, edit.check)


def _headers_by_name(project, group: str) -> set[str]:
    """Names as sources include them ("ops/add.h", "ops/add_native.h", ...) of the group's headers."""
    if not group:
        return set()
    return {f"ops/{group}{suffix}.h" for suffix in ("", "_ops", "_native", "_meta", "_methods")}


def test_every_edit_kind_of_the_issue_is_covered():
    assert len(EDITS) == 16 and len({e.name for e in EDITS}) == 16
    assert {"formula_changed", "formula_added", "entry_removed", "output_differentiability_changed"} <= {e.name for e in EDITS}
    assert sum(e.has_method for e in EDITS) >= 10  # all but "method added" (and the no-op reorder) hit method operators
