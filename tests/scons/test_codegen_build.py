"""Real SCons builds of a temp copy of the repo: per-group nodes regenerate and recompile only
what changed; ccache hits after a clean build and from a second checkout.

Builds use the user's ccache (CCACHE_BASEDIR makes the temp copy hit what the repo's own build
stored), so the first build is mostly cache hits; the ccache test counts hits and misses with
the statistics zeroed around its own builds.

The module works on one copy of the session's built project (module scope); each test edits it,
rebuilds, checks the counts, and puts the inputs back.  Only the library is rebuilt here
(tests/runtime covers the rest).
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import ccache_hits, ccache_log_stats, copy_built, copy_project, snapshot
from scons_helpers import (EDITED_FILES, GEN, GROUPS, Build, changed_files, edit_add_default, generated_units_including,
                           hand_written_objects_including, ok, scons)


@pytest.fixture(scope="module")
def project(built_project, tmp_path_factory):
    first = ok(Build(built_project.first_build))  # the build of a fresh copy
    assert first.regenerated == (GROUPS, GROUPS)
    assert first.linked and len(first.compiled) > 40
    return copy_built(built_project.root, tmp_path_factory.mktemp("project") / "project")


@pytest.fixture
def yaml_file(project):
    """The project's yaml; restored and rebuilt after the test."""
    path = project / "yaml" / "native_functions.yaml"
    originals = {relative: (project / relative).read_text() for relative in EDITED_FILES}
    yield path
    for relative, text in originals.items():
        (project / relative).write_text(text)
    ok(scons(project))


def test_noop_build_does_nothing(project):
    before = snapshot(project / GEN)
    build = ok(scons(project))
    assert build.regenerated == (0, GROUPS)
    assert build.compiled == set() and not build.linked
    assert "up to date" in build.result.stdout
    assert snapshot(project / GEN) == before


def test_scons_and_the_cli_generate_the_same_files(project, tmp_path):
    # The library needs no umbrella header (nothing it compiles includes one): build them too.
    ok(scons(project, target="generated"))
    result = subprocess.run([sys.executable, "-m", "opgen", "generate", "yaml/native_functions.yaml", "--out", str(tmp_path),
                             "--derivatives", "yaml/derivatives.yaml"],
                            cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert {p: d for p, (d, _) in snapshot(tmp_path).items()} == {p: d for p, (d, _) in snapshot(project / GEN).items()}


def test_default_edit_regenerates_one_group_and_recompiles_its_objects(project, yaml_file):
    before = snapshot(project / GEN)
    edit_add_default(project, "2", write=lambda path, text: path.write_text(text))
    build = ok(scons(project, "--debug=explain"))
    assert build.regenerated == (1, GROUPS) and build.regenerated_names == ["add"]
    assert "`add:" in build.result.stdout  # --debug=explain names the group whose key changed
    # The unit names its schema's digest.
    assert changed_files(before, snapshot(project / GEN)) == {"ops/add.h", "ops/add_methods.h", "ops/add_schema.cpp",
                                                              "ops/add_unit.cpp"}
    # add's schema, and the hand-written kernels and generated units that call op::add through
    # ops/add.h (op::add's declaration holds the default: its callers compile it in).
    assert build.compiled == ({"build/obj/gen/ops/add_unit.os"} | hand_written_objects_including("ops/add.h")
                              | generated_units_including(project, "ops/add.h"))
    assert build.linked


def test_the_build_after_an_edit_stores_what_the_next_one_needs(project, yaml_file):
    """SCons' stored signatures are compared, not pickled, and only changed entries are stored
    (site_scons/scons_patches.py: sconsign_unchanged): the edit's build stored every new signature (the next
    build does nothing), and a build that does nothing leaves .sconsign.dblite as it was."""
    edit_add_default(project, "3", write=lambda path, text: path.write_text(text))
    assert ok(scons(project)).compiled
    build = ok(scons(project))
    assert build.regenerated == (0, GROUPS) and build.compiled == set() and not build.linked
    sconsign = project / ".sconsign.dblite"
    stored, stamp = sconsign.read_bytes(), sconsign.stat().st_mtime_ns
    build = ok(scons(project))
    assert build.compiled == set() and not build.linked
    assert sconsign.read_bytes() == stored and sconsign.stat().st_mtime_ns == stamp


def test_comment_and_reorder_edits_rebuild_nothing(project, yaml_file):
    text = yaml_file.read_text()
    first = text.index("- func:")
    entries = re.split(r"\n(?=- func:)", text[first:])
    yaml_file.write_text(text[:first] + "# moved around\n" + "\n".join(e.rstrip("\n") + "\n" for e in reversed(entries)))
    build = ok(scons(project))
    assert build.regenerated == (0, GROUPS)
    assert build.compiled == set() and not build.linked


def test_added_operator_adds_files_and_removed_operator_deletes_them(project, yaml_file):
    ok(scons(project, target="generated"))  # umbrella headers too
    before = snapshot(project / GEN)
    original = yaml_file.read_text()
    yaml_file.write_text(original + "\n- func: twice(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: twice\n")
    # No source defines the kernel twice: stubbed (the default, --missing-kernels=error, stops before linking).
    build = ok(scons(project, "--missing-kernels=stub"))
    assert build.regenerated == (1, GROUPS + 1) and build.regenerated_names == ["twice"]
    after = snapshot(project / GEN)
    added = {p for p in after if p not in before}
    # twice has no derivatives entry: its Autograd kernel records a NotImplemented node
    assert added == {"ops/twice.h", "ops/twice_ops.h", "ops/twice_native.h", "ops/twice_schema.cpp",
                     "ops/twice_CompositeExplicitAutograd.cpp", "ops/twice_Autograd.cpp", "ops/twice_unit.cpp",
                     "missing_kernels.cpp"}
    # Nothing the library compiles includes an umbrella: a new operator rewrites no existing file ...
    assert changed_files(before, after) - added == set()
    assert build.compiled == {"build/obj/gen/ops/twice_unit.os", "build/obj/gen/missing_kernels.os"}  # one object per group
    # ... and the umbrellas list it once they are built.
    ok(scons(project, "--missing-kernels=stub", target="generated"))
    assert changed_files(after, snapshot(project / GEN)) == {"Functions.h", "NativeFunctions.h", "Operators.h"}

    yaml_file.write_text(original)
    build = ok(scons(project))  # --missing-kernels=error: the stubs file goes too
    assert build.regenerated == (0, GROUPS)
    assert not any(name.startswith("twice") for name in os.listdir(project / GEN / "ops"))
    assert snapshot(project / GEN).keys() == before.keys()
    assert build.compiled == set() and build.linked


def test_template_edit_rerenders_all_but_recompiles_only_changed_sources(project):
    template = project / "opgen" / "templates" / "meta_declarations.h.j2"
    original = template.read_text()
    template.write_text(original.replace("namespace op::meta {", "namespace op::meta {\n// edited"))
    try:
        build = ok(scons(project))
        assert build.regenerated == (GROUPS, GROUPS)
        compiled = {os.path.basename(p) for p in build.compiled}
        # The objects of structured groups (their units include the meta header) recompile ...
        assert {"add_unit.os", "mm_unit.os", "sum_unit.os"} <= compiled
        # ... those of groups without structured kernels do not: factories, composites, views.
        assert not {"empty_unit.os", "relu_unit.os", "copy_unit.os", "view_unit.os"} & compiled
    finally:
        template.write_text(original)
        ok(scons(project))


def test_bad_yaml_stops_with_file_and_line_and_keeps_build(project, yaml_file):
    before = snapshot(project / "build")
    text = yaml_file.read_text()
    line = text[: text.index("- func: mm(")].count("\n") + 1
    yaml_file.write_text(text.replace("- func: mm(Tensor self,", "- func: mm(Tensr self,", 1))
    build = scons(project)
    assert build.result.returncode == 2
    assert f"yaml/native_functions.yaml:{line}:" in build.output and "Tensr" in build.output
    assert "Traceback" not in build.output
    assert snapshot(project / "build") == before


@pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache is not installed")
def test_clean_rebuild_and_second_checkout_hit_ccache(project, tmp_path):
    shutil.rmtree(project / "build")
    # Counters from each build's own stats log: the cache's are shared with any concurrent build.
    build = ok(scons(project, env={"CCACHE_STATSLOG": str(tmp_path / "clean.log")}))
    stats = ccache_log_stats(tmp_path / "clean.log")
    assert stats.get("cache_miss", 0) == 0 and ccache_hits(stats) == len(build.compiled) > 40
    # The codegen cache (project/cache/codegen) gives every group back without rendering.
    assert build.regenerated == (GROUPS, GROUPS)
    assert f"[opgen] codegen cache: {GROUPS} hits, 0 rendered" in build.output

    other = tmp_path / "second" / "checkout"
    other.mkdir(parents=True)
    copy_project(other)
    build = ok(scons(other, env={"CCACHE_STATSLOG": str(tmp_path / "second.log")}))
    stats = ccache_log_stats(tmp_path / "second.log")
    assert stats.get("cache_miss", 0) == 0 and ccache_hits(stats) == len(build.compiled) > 40
