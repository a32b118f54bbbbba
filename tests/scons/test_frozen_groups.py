"""Frozen groups (opgen/scons/frozen.py): after an edit of the yaml alone, the build declares no
step for the groups the edit left as they were and walks their objects as plain files. What it
builds must be what the whole graph builds, and it must leave SCons' record as a whole-graph
build does: these tests build the same edit both ways, on twin copies of the session's project.
(test_edit_matrix.py checks every kind of edit through the frozen graph against the include graph.)
"""
import os

import pytest

from edit_cases import EDITS, apply_edit
from helpers import copy_built
from scons_helpers import LIBRARY, ok, scons

FROZEN_LINE = "[opgen] only codegen inputs changed since the last build"
WALK_EVERYTHING = {"OPGEN_FROZEN_GROUPS": "off"}
# add's default: ops/add.h changes, and the units whose formulas call op::add include it.
EDIT = next(edit for edit in EDITS if edit.name == "default_value")


def _recorded_copy(built_project, destination):
    """A copy of the built project, built once where it is (a no-op that records the build there)."""
    project = copy_built(built_project.root, destination)
    ok(scons(project, target=None))
    return project


@pytest.fixture(scope="module")
def twins(built_project, tmp_path_factory):
    """(frozen, walked): the same edit of add's default, built with frozen groups and without."""
    builds = {}
    for name, env in (("frozen", None), ("walked", WALK_EVERYTHING)):
        project = _recorded_copy(built_project, tmp_path_factory.mktemp(name) / "project")
        apply_edit(project, EDIT)
        builds[name] = (project, ok(scons(project, target=None, env=env)))
    return builds


def test_the_frozen_build_compiles_and_links_what_the_whole_graph_does(twins):
    (frozen_project, frozen), (walked_project, walked) = twins["frozen"], twins["walked"]
    assert FROZEN_LINE in frozen.output and FROZEN_LINE not in walked.output
    # add's own unit and the units including ops/add.h: more than one object, the same ones.
    assert "build/obj/gen/ops/add_unit.os" in frozen.compiled and len(frozen.compiled) > 1
    assert frozen.compiled == walked.compiled
    assert frozen.linked and walked.linked
    with open(frozen_project / LIBRARY, "rb") as a, open(walked_project / LIBRARY, "rb") as b:
        assert a.read() == b.read()


def test_after_a_frozen_build_the_whole_graph_is_up_to_date(twins):
    """The frozen build's manifest holds the frozen groups' files too (the no-op after it takes
    the shortcut), and SCons' record holds what a whole-graph build would have recorded: walking
    every node finds nothing to do."""
    project, _ = twins["frozen"]
    again = ok(scons(project, target=None))
    assert "[opgen] nothing changed since the last build" in again.output, again.output[-3000:]
    walked = ok(scons(project, target=None, env={"OPGEN_NOOP_SHORTCUT": "off"}))
    assert walked.compiled == set() and not walked.linked, walked.output[-3000:]
    assert walked.regenerated == (0, walked.regenerated[1]), walked.output[-3000:]


def test_an_editor_that_saves_by_renaming_still_freezes_and_the_manifest_keeps_the_frozen_files(
        built_project, tmp_path):
    """Saving through a new file renamed over the yaml changes its directory's mtime, not its
    names. A frozen group's files were no nodes of the frozen build; its manifest still holds
    them, so a file of theirs deleted afterwards is noticed, and generated again."""
    project = _recorded_copy(built_project, tmp_path / "project")
    yaml_path = project / "yaml" / "native_functions.yaml"
    text = yaml_path.read_text().replace(EDIT.yaml[0][0], EDIT.yaml[0][1])
    apply_edit(project, EDIT)  # waits for a later second, writes both yaml files in place
    saved = yaml_path.with_name(".native_functions.yaml.swp")
    saved.write_text(text)
    os.replace(saved, yaml_path)
    build = ok(scons(project, target=None))
    assert FROZEN_LINE in build.output and "build/obj/gen/ops/add_unit.os" in build.compiled

    (project / "build" / "gen" / "ops" / "mul.h").unlink()
    build = ok(scons(project, target=None))
    assert "[opgen] nothing changed" not in build.output
    assert build.regenerated_names == ["mul"] and (project / "build" / "gen" / "ops" / "mul.h").exists()


def test_an_edit_beside_a_runtime_source_walks_every_group(built_project, tmp_path):
    project = _recorded_copy(built_project, tmp_path / "project")
    apply_edit(project, EDIT)
    source = project / "csrc" / "core" / "scalar.cpp"
    source.write_text(source.read_text() + "\n// edited\n")
    build = ok(scons(project, target=None))
    assert FROZEN_LINE not in build.output
    assert {"build/obj/core/scalar.os", "build/obj/gen/ops/add_unit.os"} <= build.compiled

