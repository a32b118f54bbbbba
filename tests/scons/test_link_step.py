"""What an edit pays between the compile and a loadable library (issue 40): the linker the
build chose (opgen/scons/toolset/linker.py), thin archives without an index (link.py), and the
kernel check reading only the objects that changed (opgen/object_symbols.py, link_check.py)."""
import os
import re
import shutil
import subprocess
import textwrap

import pytest

from helpers import copy_built, run_scons
from scons_helpers import (LIBRARY, edit_add_default, generated_units_including, hand_written_objects_including, ok,
                           rewrite_in_a_later_second, scons)

GROUP_ARCHIVES = os.path.join("build", "obj", "gen")


def _comment(library) -> str:
    """The library's .comment section: each linker that touched it signs it (LLD, mold, GNU gold)."""
    return subprocess.run(["readelf", "-p", ".comment", str(library)], capture_output=True, text=True).stdout


def _first_available():
    from opgen.scons.toolset.linker import AUTO_ORDER
    return next((name for name in AUTO_ORDER if shutil.which(f"ld.{name}")), None)


def test_auto_links_with_the_first_faster_linker_installed(built_project):
    linker = _first_available()
    if linker is None:
        pytest.skip("none of lld, mold, gold is installed")
    signature = {"lld": "LLD", "mold": "mold", "gold": "gold"}[linker]
    assert signature in _comment(built_project.root / LIBRARY)


def test_group_archives_are_thin_and_carry_no_index(built_project):
    archives = sorted((built_project.root / GROUP_ARCHIVES).glob("libopgen_shard*.a"))
    assert archives
    for archive in archives:
        assert archive.read_bytes()[:8] == b"!<thin>\n", archive
        # No armap: `nm --print-armap` lists an "Archive index:" only when there is one.
        index = subprocess.run(["nm", "--print-armap", str(archive)], capture_output=True, text=True).stdout
        assert "Archive index:" not in index, archive


def test_an_edit_that_keeps_the_archive_bytes_still_relinks(built_project, tmp_path):
    """A thin archive holds its members' names and sizes: a one-digit edit of a default leaves it
    byte-identical, and the library must relink from the objects all the same."""
    project = copy_built(built_project.root, tmp_path / "project")
    shard = next(p for p in sorted((project / GROUP_ARCHIVES).glob("libopgen_shard*.a"))
                 if b"ops/add_unit.os" in p.read_bytes())
    shard_before = shard.read_bytes()
    edit_add_default(project, "2")
    build = ok(scons(project))
    assert "build/obj/gen/ops/add_unit.os" in build.compiled
    assert build.linked
    assert shard.read_bytes() == shard_before  # the case this test is about
    assert b"Scalar alpha=2" in (project / LIBRARY).read_bytes()


def test_the_kernel_check_reads_only_recompiled_objects(built_project, tmp_path):
    """The check's memo (object_symbols.SymbolMemo) has every object; after an edit of one group,
    nm reads only objects that were recompiled (a wrapper on PATH logs what nm is asked)."""
    project = copy_built(built_project.root, tmp_path / "project")
    assert (project / "build" / "obj" / "gen" / "kernel_symbols.json").is_file()
    log = tmp_path / "nm.log"
    wrapper_dir = tmp_path / "bin"
    wrapper_dir.mkdir()
    wrapper = wrapper_dir / "nm"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {shutil.which("nm")} "$@"\n')
    wrapper.chmod(0o755)
    edit_add_default(project, "3")
    build = ok(scons(project, env={"PATH": f"{wrapper_dir}{os.pathsep}{os.environ['PATH']}"}))
    # add's default is in op::add's declaration: its unit and the kernels and units including
    # ops/add.h recompile, nothing else.
    assert build.compiled == ({"build/obj/gen/ops/add_unit.os"} | hand_written_objects_including("ops/add.h")
                              | generated_units_including(project, "ops/add.h"))
    read = [word for line in log.read_text().splitlines() for word in line.split() if word.endswith(".os")]
    assert str(project / "build" / "obj" / "gen" / "ops" / "add_unit.os") in read
    assert set(read) <= {str(project / path) for path in build.compiled}


def test_a_linker_the_compiler_cannot_use_stops_the_build(tmp_path):
    """--linker=NAME (LINKER_MODE) with a compiler that rejects -fuse-ld=NAME: exit status 2 and why."""
    compiler = tmp_path / "cxx"
    compiler.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        for a in "$@"; do case "$a" in -fuse-ld=mold) echo "no mold" >&2; exit 1;; esac; done
        exec {shutil.which("g++")} "$@"
        """))
    compiler.chmod(0o755)
    (tmp_path / "SConstruct").write_text(textwrap.dedent(f"""\
        import opgen.scons
        env = Environment(tools=["default", "linker"], toolpath=[opgen.scons.TOOLPATH], CXX="{compiler}",
                          LINKER_MODE=ARGUMENTS.get("linker", "auto"), LINKER_PROBE_CACHE="")
        print("linker:", env["LINKER"] or "default")
        """))
    stopped = run_scons(tmp_path, "linker=mold")
    assert stopped.returncode == 2
    assert "--linker=mold" in stopped.stderr and "-fuse-ld=mold" in stopped.stderr
    assert "Traceback" not in stopped.stderr
    bad = run_scons(tmp_path, "linker=ldd")
    assert bad.returncode == 2 and "--linker=ldd is not one of auto, lld, mold, gold, bfd" in bad.stderr
    chosen = ok_run(run_scons(tmp_path, "linker=bfd"))
    assert "linker: bfd" in chosen.stdout


def ok_run(result):
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_a_library_edit_relinks_what_links_it_only_when_its_exports_change(built_project, tmp_path):
    """The Python extensions and the C++ test program link libopdispatch.so by its exported
    symbols (opgen/scons/link_interface.py): an edit inside a kernel relinks the library alone;
    a new exported function relinks them too."""
    project = copy_built(built_project.root, tmp_path / "project")
    source = project / "csrc" / "native" / "binary_ops.cpp"
    text = source.read_text()
    rewrite_in_a_later_second(source, text + '\nnamespace { [[gnu::used]] const char opgen_edit_marker[] = "one"; }\n')
    inside = ok(scons(project, target=None))
    assert inside.compiled == {"build/obj/native/binary_ops.os"} and inside.linked
    relinked = set(re.findall(r"^\S*g\+\+ -o (\S+) ", inside.result.stdout, re.M))
    assert relinked == {LIBRARY}, relinked
    rewrite_in_a_later_second(source, text + '\nnamespace op { int opgen_edit_exported() { return 1; } }\n')
    exported = ok(scons(project, target=None))
    relinked = set(re.findall(r"^\S*g\+\+ -o (\S+) ", exported.result.stdout, re.M))
    assert LIBRARY in relinked and "build/bin/opdispatch_tests" in relinked
    assert any(path.startswith("build/python/opdispatch/_C") for path in relinked), relinked
