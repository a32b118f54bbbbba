"""The no-op shortcut (opgen/scons/noop.py, opgen/build_manifest.py): a build of the same command
with nothing changed ends before the SConscripts are read; every kind of change a user makes
reads them again and builds what SCons would."""
import os
import shutil
import subprocess
import sys

import pytest

from helpers import copy_built, run_scons
from opgen.build_manifest import changed_files, snapshot, unchanged
from scons_helpers import LIBRARY, ok, rewrite_in_a_later_second, scons, edit_add_default

SHORTCUT = "[opgen] nothing changed since the last build"
MANIFEST = ".sconsign.noop.json"


@pytest.fixture
def project(built_project, tmp_path):
    """A copy of the built project in which a first plain build has written the manifest."""
    root = copy_built(built_project.root, tmp_path / "project")
    first = ok(scons(root))
    assert SHORTCUT not in first.output  # another directory: the copy's own first run reads them
    assert (root / MANIFEST).is_file()
    return root


def shortcut(build) -> bool:
    return SHORTCUT in build.result.stdout


def test_a_noop_ends_before_reading_the_sconscripts(project):
    build = ok(scons(project))
    assert shortcut(build)
    assert "is up to date" in build.result.stdout and "[opgen] regenerated 0/" in build.result.stdout
    assert not build.compiled and not build.linked


def test_an_operator_edit_reads_them_and_rebuilds(project):
    edit_add_default(project, "2")
    build = ok(scons(project))
    assert not shortcut(build) and "build/obj/gen/ops/add_unit.os" in build.compiled and build.linked
    assert shortcut(ok(scons(project)))  # and the build after it is a no-op again


def test_a_hand_written_source_edit_rebuilds(project):
    source = project / "csrc" / "native" / "binary_ops.cpp"
    rewrite_in_a_later_second(source, source.read_text() + "\n// an edit\n")
    build = ok(scons(project))
    assert not shortcut(build) and "build/obj/native/binary_ops.os" in build.compiled


def test_a_new_source_where_a_glob_looks_is_compiled(project):
    (project / "csrc" / "native" / "added_by_a_user.cpp").write_text("int opgen_added_by_a_user() { return 1; }\n")
    build = ok(scons(project))
    assert not shortcut(build) and "build/obj/native/added_by_a_user.os" in build.compiled


def test_a_deleted_output_is_built_again(project):
    (project / LIBRARY).unlink()
    build = ok(scons(project))
    assert not shortcut(build) and build.linked and (project / LIBRARY).is_file()


def test_a_deleted_generated_header_is_generated_again(project):
    header = project / "build" / "gen" / "ops" / "add.h"
    header.unlink()
    build = ok(scons(project))
    assert not shortcut(build) and header.is_file()


def test_another_option_or_environment_reads_them(project):
    assert not shortcut(ok(scons(project, "--pch=off")))
    assert not shortcut(ok(scons(project, env={"OPGEN_A_VARIABLE_NOBODY_READS": "1"})))
    assert not shortcut(ok(scons(project, env={"OPGEN_NOOP_SHORTCUT": "off"})))


def test_runs_that_are_not_builds_never_take_it(project):
    dry = run_scons(project, "-n")
    assert dry.returncode == 0 and SHORTCUT not in dry.stdout
    # -n removed the manifest (it decides nothing about the next build), so the next run reads them
    assert not (project / MANIFEST).exists()


def test_a_failed_build_leaves_no_manifest_and_the_fix_builds(project):
    yaml_path = project / "yaml" / "native_functions.yaml"
    text = yaml_path.read_text()
    rewrite_in_a_later_second(yaml_path, text.replace("CPU, CUDA: add_out", "CPU, CUDAA: add_out", 1))
    failed = scons(project)
    assert failed.result.returncode == 2 and not (project / MANIFEST).exists()
    rewrite_in_a_later_second(yaml_path, text)
    fixed = ok(scons(project))
    assert not shortcut(fixed)
    assert shortcut(ok(scons(project)))


def test_a_rewrite_within_the_same_timestamp_is_seen(tmp_path):
    """A file rewritten with the same size and mtime as recorded (within one timestamp tick of
    the snapshot): recorded as racy, its bytes were kept, and they differ."""
    source = tmp_path / "native_functions.yaml"
    source.write_text("- func: add(Tensor self, Scalar alpha=1) -> Tensor\n")
    manifest = snapshot("key", [str(source)], [str(tmp_path)], ["scons: `all' is up to date."])
    assert str(source) in manifest.digests and unchanged(manifest, "key")
    stat = os.stat(source)
    source.write_text("- func: add(Tensor self, Scalar alpha=2) -> Tensor\n")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert os.stat(source).st_size == stat.st_size
    assert not unchanged(manifest, "key")
    assert not unchanged(snapshot("key", [str(source)], [], []), "another key")


def test_the_manifest_says_which_files_changed_and_when_anything_may_have(tmp_path):
    """changed_files: the recorded files that changed; None for another invocation or a
    directory holding other names. A codegen input's directory keeps its listing, so a yaml
    saved by renaming a new file over it is a changed file, not a changed directory."""
    yaml_dir, other_dir = tmp_path / "yaml", tmp_path / "csrc"
    yaml_dir.mkdir()
    other_dir.mkdir()
    yaml, source = yaml_dir / "native_functions.yaml", other_dir / "a.cpp"
    yaml.write_text("- func: add(Tensor self) -> Tensor\n")
    source.write_text("int a;\n")
    manifest = snapshot("key", [str(yaml), str(source)], [str(yaml_dir), str(other_dir)], [], codegen_inputs=[str(yaml)])
    assert changed_files(manifest, "key") == frozenset() and changed_files(manifest, "another key") is None
    saved = yaml_dir / ".native_functions.yaml.swp"
    saved.write_text("- func: add(Tensor self, Scalar alpha=1) -> Tensor\n")
    os.replace(saved, yaml)
    assert changed_files(manifest, "key") == {str(yaml)}
    source.write_text("int b = 1;\n")
    assert changed_files(manifest, "key") == {str(yaml), str(source)}
    (other_dir / "b.cpp").write_text("int b;\n")  # a new name where a Glob may look
    assert changed_files(manifest, "key") is None


def test_importing_the_built_package_keeps_the_shortcut(project):
    """The first import from the built tree writes Python's bytecode cache beside the package:
    a directory whose mtime changed but whose names a build can find did not."""
    cache = project / "build" / "python" / "opdispatch" / "__pycache__"
    shutil.rmtree(cache, ignore_errors=True)
    ok(scons(project, target=None))  # every default target (the package too), recorded without it
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(project / "build" / "python")
    subprocess.run([sys.executable, "-c", "import opdispatch"], cwd=project, env=env, check=True, timeout=120)
    assert cache.is_dir()
    assert shortcut(ok(scons(project, target=None)))
